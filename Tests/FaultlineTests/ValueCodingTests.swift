import Faultline
import FaultlineModel
import FaultlineSQL
import FaultlineTestSupport
import Foundation
import Testing

/// Values to and from SQLite as Core Data stores them: dates, UUIDs, URIs, decimals, external
/// storage markers, transformables, and a value stored with another storage class.
@Suite struct ValueCodingTests {
    @Test func datesAreSecondsSince2001AndWholeSecondsComeBackFromIntegers() {
        let date = Date(timeIntervalSinceReferenceDate: 12.5)
        #expect(ValueCoding.encode(date, as: .date) == .real(12.5))
        #expect(ValueCoding.decode(.integer(-978_307_200), as: .date) as? Date == Date(timeIntervalSince1970: 0))
        #expect(ValueCoding.decode(.real(12.5), as: .date) as? Date == date)
    }

    @Test func uuidsAreSixteenByteBlobs() throws {
        let uuid = try #require(UUID(uuidString: "00112233-4455-6677-8899-AABBCCDDEEFF"))
        let encoded = ValueCoding.encode(uuid, as: .uuid)
        #expect(encoded == .blob(Data([0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0xFF])))
        #expect(ValueCoding.decode(encoded, as: .uuid) as? UUID == uuid)
    }

    @Test func urisAreTextAndDecimalsRoundTrip() throws {
        let url = try #require(URL(string: "https://example.com/a?b=1"))
        #expect(ValueCoding.encode(url, as: .uri) == .text("https://example.com/a?b=1"))
        #expect(ValueCoding.decode(.text("https://example.com/a?b=1"), as: .uri) as? URL == url)
        let decimal = try #require(Decimal(string: "12.345"))
        #expect(ValueCoding.decode(ValueCoding.encode(decimal, as: .decimal), as: .decimal) as? Decimal == decimal)
    }

    @Test func decimalsSQLiteKeptAsRealReadBackAsTheirDigits() throws {
        // A DECIMAL column has NUMERIC affinity: SQLite stores the text "3.258" as a REAL.
        let connection = try Connection(path: ":memory:", mode: .inMemory)
        try connection.execute("CREATE TABLE T (ZD DECIMAL)")
        let written = try #require(Decimal(string: "-2.349"))
        try connection.execute("INSERT INTO T VALUES (?)", [ValueCoding.encode(written, as: .decimal)])
        let stored = try #require(try connection.scalar("SELECT ZD FROM T"))
        #expect(stored == .real(-2.349))
        #expect(ValueCoding.decode(stored, as: .decimal) as? Decimal == written)
        #expect(ValueCoding.decode(.real(3.258), as: .decimal) as? Decimal == Decimal(string: "3.258"))
        #expect(ValueCoding.decode(.real(1e-7), as: .decimal) as? Decimal == Decimal(string: "0.0000001"))
        #expect(ValueCoding.decode(.real(.infinity), as: .decimal) == nil)
        #expect(ValueCoding.decode(.real(1e300), as: .decimal) == nil)
    }

    @Test func externalStorageInlineAndExternalMarkers() throws {
        let bytes = Data("hello".utf8)
        let inline = ValueCoding.encodeExternalBinaryInline(bytes)
        #expect(inline == .blob(Data([0x01]) + bytes))
        #expect(try ValueCoding.decodeExternalBinary(inline, storeURL: nil) == bytes)

        let folder = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = folder.appendingPathComponent("Notes.sqlite")
        let external = ValueCoding.externalDataFolder(forStoreAt: store)
        #expect(external.path.hasSuffix("/.Notes_SUPPORT/_EXTERNAL_DATA"))
        try FileManager.default.createDirectory(at: external, withIntermediateDirectories: true)
        let name = "7C9E6679-7425-40DE-944B-E07FC1F90AE7"
        try Data("big payload".utf8).write(to: external.appendingPathComponent(name))
        let column = SQLValue.blob(Data([0x02]) + Data(name.utf8))
        #expect(try ValueCoding.decodeExternalBinary(column, storeURL: store) == Data("big payload".utf8))
        #expect(throws: PersistentStoreError.self) {
            _ = try ValueCoding.decodeExternalBinary(.blob(Data([0x02]) + Data("missing".utf8)), storeURL: store)
        }
    }

    @Test func transformableDescriptions() throws {
        let plist = try PropertyListSerialization.data(fromPropertyList: ["a", "b"], format: .binary, options: 0)
        #expect(ValueCoding.describeTransformable(plist) == "[\"a\", \"b\"]")
        let archived = try NSKeyedArchiver.archivedData(withRootObject: ["k": "v"] as NSDictionary, requiringSecureCoding: false)
        #expect(ValueCoding.describeTransformable(archived) == "{\"k\": \"v\"}")
        #expect(ValueCoding.describeTransformable(Data([1, 2, 3])) == nil)
    }

    @Test func aValueStoredWithAnotherStorageClassDecodesAsValueCodingSaysAndBatchesSurviveARollback() throws {
        let url = try SaveTests.copyOfInventory()
        let raw = try Connection(path: url.path, mode: .readWrite)
        try raw.execute("UPDATE ZINVENTORY SET ZCOUNT = 'twelve' WHERE Z_PK = 1")
        try raw.execute("UPDATE ZINVENTORY SET ZCOUNT = 7.0 WHERE Z_PK = 2")
        let (context, _) = try SaveTests.open(url)
        var request = FetchRequest(entityName: "Inventory")
        request.sortDescriptors = [FLSortDescriptor(key: "date")]
        let byKey = Dictionary(uniqueKeysWithValues: try context.fetch(request).map { ($0.objectID.primaryKey, $0) })
        #expect(byKey[1]?.value(forKey: "count") == nil)  // TEXT in an integer column: no value
        #expect(byKey[2]?.value(forKey: "count") as? Int16 == 7)  // REAL 7.0: converted
        // Batches loaded inside a transaction that rolls back leave later batches working.
        let store = context.coordinator.store
        struct Abort: Error {}
        request.fetchBatchSize = 2
        let other = ManagedObjectContext(coordinator: context.coordinator)
        _ = try? store.connection.transaction {
            _ = try other.fetch(request).first?.value(forKey: "count")
            throw Abort()
        }
        let again = ManagedObjectContext(coordinator: context.coordinator)
        #expect(try again.fetch(request).last?.value(forKey: "date") != nil)
    }
}
