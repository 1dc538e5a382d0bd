import Testing

@testable import Faultline

/// The keys of a batch or prefetch, written as the JSON array the `_Z_intarray0` table is
/// filled from.
@Suite struct IntArrayKeyTests {
    @Test func keysAreWrittenAsAJSONArrayOfIntegers() {
        #expect(SQLiteStore.jsonArray([]) == "[]")
        #expect(SQLiteStore.jsonArray([0]) == "[0]")
        #expect(SQLiteStore.jsonArray([1, 22, 333, -4, 10]) == "[1,22,333,-4,10]")
        #expect(SQLiteStore.jsonArray([.max, .min]) == "[9223372036854775807,-9223372036854775808]")
        let keys = (0..<1000).map { Int64($0) * 7_919 - 3_000 }
        #expect(SQLiteStore.jsonArray(keys) == "[" + keys.map(String.init).joined(separator: ",") + "]")
    }
}
