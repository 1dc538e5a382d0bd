@testable import Faultline
import Testing

/// Objects of registered classes hold their class's slot table as a plain pointer into tables
/// interned for the process (`ClassSlotTable`): equal tables are one table, and a table reads
/// back what it was made from.
@Suite struct ClassSlotTableTests {
    @Test func equalTablesAreOneTableAndReadBackTheirSlots() {
        let slots: ContiguousArray<Int> = [4, 0, 7, 2, 9]
        let table = ClassSlotTable.interned(slots)
        #expect(table.count == slots.count)
        #expect((0..<table.count).map { table[$0] } == Array(slots))
        let again = ClassSlotTable.interned(ContiguousArray(slots))
        #expect(withUnsafeBytes(of: table) { Array($0) } == withUnsafeBytes(of: again) { Array($0) })
        let other = ClassSlotTable.interned([4, 0, 7, 2])
        #expect(other.count == 4)
        #expect(withUnsafeBytes(of: table) { Array($0) } != withUnsafeBytes(of: other) { Array($0) })
        #expect(ClassSlotTable.interned([]).count == 0)
        #expect(ClassSlotTable.empty.count == 0)
    }
}
