import Faultline
import FaultlineModel
import FaultlineSQL
import FaultlineTestSupport
import Foundation
import Testing

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
        #expect(throws: StoreError.self) {
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
}

@Suite struct StoreCreationTests {
    /// Creates `New.sqlite` in `folder` from the Inventory model, runs `prepare` on it, and
    /// closes it.
    static func createInventoryStore(in folder: URL, _ prepare: (SQLiteStore) throws -> Void) throws -> (url: URL, model: ManagedObjectModel) {
        let url = folder.appendingPathComponent("New.sqlite")
        let model = try ManagedObjectModel(contentsOf: TestSupport.inventoryFolder.appendingPathComponent("Inventory.xcdatamodeld"))
        try prepare(try SQLiteStore(url: url, model: model, options: .init(readOnly: false, createIfMissing: true)))
        return (url, model)
    }

    @Test func aModelCacheThatDoesNotDecodeFallsBackToInference() throws {
        let folder = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (url, _) = try Self.createInventoryStore(in: folder) { store in
            try store.connection.execute("UPDATE Z_MODELCACHE SET Z_CONTENT = ?", [.blob(Data("not deflate".utf8))])
        }
        let store = try SQLiteStore(url: url)
        #expect(store.modelSource == .inferred)
        #expect(store.warnings.first?.contains("the model in Z_MODELCACHE cannot be read") == true)
        #expect(store.warnings.first?.contains("the model was inferred from its tables") == true)
        #expect(store.model.entity(named: "Asset") != nil)

        // A guessed model never writes.
        let writable = try SQLiteStore(url: url, options: .init(readOnly: false))
        let context = ManagedObjectContext(coordinator: PersistentStoreCoordinator(store: writable))
        _ = try context.insertObject(entityName: "Asset")
        #expect(throws: StoreError.self) { try context.save() }
        #expect(try writable.connection.scalar("SELECT count(*) FROM ZASSET") == .integer(0))
    }

    @Test func aNewStoreHasCoreDatasMetadataAndReopensWithItsModel() throws {
        let folder = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (url, model) = try Self.createInventoryStore(in: folder) { (store: SQLiteStore) throws in
            #expect(try store.connection.scalar("PRAGMA journal_mode")?.string == "wal")
            #expect(try store.connection.scalar("PRAGMA auto_vacuum")?.int64 == 2)
        }
        let reopened = try SQLiteStore(url: url, model: model)
        #expect(reopened.warnings.isEmpty)
        let metadata = reopened.metadata
        #expect(metadata["NSStoreType"] as? String == "SQLite")
        #expect(metadata["NSStoreModelVersionHashesVersion"] as? Int == 3)
        #expect(metadata["_NSAutoVacuumLevel"] as? String == "2")
        #expect(metadata["NSStoreModelVersionHashesDigest"] as? String == model.versionHashesDigest.base64EncodedString())
        #expect(metadata["NSStoreModelVersionChecksumKey"] as? String == model.versionChecksum)
        #expect(metadata["NSStoreUUID"] == nil)
        #expect(reopened.identifier.count == 36)
    }

    @Test(.enabled(if: Corpus.shouldRun, Corpus.skipMessage))
    func aStoreCreatedFromTavantsModelHasApplesSchemaText() throws {
        let corpus = try Corpus.required()
        let model = try ManagedObjectModel(contentsOf: corpus.appendingPathComponent("stores/tavant-ios7/Model.xcdatamodeld"))
        let folder = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("Model.sqlite")
        _ = try SQLiteStore(url: url, model: model, options: .init(readOnly: false, createIfMissing: true))
        let ours = try CorpusStoreCopies.schemaSQL(of: url).map(\.sql)
        let apples = try CorpusStoreCopies.schemaSQL(of: corpus.appendingPathComponent("stores/tavant-ios7/Model.sqlite")).map(\.sql)
        // Apple's framework 479 had no Z_MODELCACHE; the rest is the same text in the same order.
        #expect(ours.filter { $0 != "CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB)" } == apples)
        // And Faultline's store opens with the model, version hashes matching.
        let reopened = try SQLiteStore(url: url, model: model)
        #expect(reopened.warnings.isEmpty)
    }
}
