import Faultline
import FaultlineModel
import FaultlineSQL
import FaultlineTestSupport
import Foundation
import Testing

/// The Inventory model mapped to tables and columns as Core Data does, and its DDL.
@Suite struct SchemaMappingTests {
    @Test func mappingNumbersEntitiesAndNamesColumnsAsCoreDataDoes() throws {
        let mapping = SchemaMapping(model: try ManagedObjectModel(contentsOf: InventoryStoreTests.modelURL))
        #expect(mapping.entity("Asset")?.entityNumber == 1)
        #expect(mapping.entity("Inventory")?.entityNumber == 2)
        #expect(mapping.entity("Location")?.entityNumber == 3)
        #expect(mapping.entity("Location")?.table == "ZLOCATION")
        #expect(mapping.entity("Inventory")?.attributeColumns["date"] == "ZDATE")
        #expect(mapping.entity("Inventory")?.toOneColumns["asset"]?.foreignKey == "ZASSET")
    }

    @Test func createStatementsAreCoreDatasDDL() throws {
        let mapping = SchemaMapping(model: try ManagedObjectModel(contentsOf: InventoryStoreTests.modelURL))
        expectSQL(mapping.createStatements(), [
            "CREATE TABLE ZASSET ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZLABEL VARCHAR )",
            "CREATE TABLE ZINVENTORY ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZCOUNT INTEGER, ZASSET INTEGER, ZLOCATION INTEGER, ZDATE TIMESTAMP )",
            "CREATE TABLE ZLOCATION ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZLABEL VARCHAR )",
            "CREATE INDEX ZINVENTORY_ZASSET_INDEX ON ZINVENTORY (ZASSET)",
            "CREATE INDEX ZINVENTORY_ZLOCATION_INDEX ON ZINVENTORY (ZLOCATION)",
            "CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)",
            "CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB)",
            "CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB)",
        ])
    }
}

/// New stores: Core Data's schema, metadata and model cache.
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
        #expect(throws: PersistentStoreError.self) { try context.save() }
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
