import Faultline
import FaultlineModel
import FaultlineSQL
import FaultlineTestSupport
import Foundation
import Testing

/// Persistent history (`NSPersistentHistoryTrackingKey`): the tables in Core Data's text
/// (checked word for word against Photos' stores in ``CorpusDDLTests``) and a transaction
/// recorded by every save.
@Suite struct PersistentHistoryTests {
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(name: "Note", attributes: [
                AttributeDescription(name: "body", type: .string),
                AttributeDescription(name: "title", type: .string),
                AttributeDescription(name: "uuid", type: .string, preservesValueInHistoryOnDeletion: true),
                AttributeDescription(name: "version", type: .integer32, preservesValueInHistoryOnDeletion: true),
                AttributeDescription(name: "draft", type: .string, isTransient: true),
            ], relationships: [RelationshipDescription(name: "folder", destination: "Folder", inverse: "notes")]),
            EntityDescription(name: "Folder", attributes: [AttributeDescription(name: "name", type: .string)], relationships: [
                RelationshipDescription(name: "notes", destination: "Note", inverse: "folder", toMany: true)
            ]),
        ])
    }

    static func open(_ url: URL, history: Bool = false) throws -> (ManagedObjectContext, SQLiteStore) {
        let store = try SQLiteStore(url: url, model: try model(), options: .init(readOnly: false, createIfMissing: true, persistentHistoryTracking: history))
        return (ManagedObjectContext(coordinator: PersistentStoreCoordinator(store: store)), store)
    }

    @Test func theTablesTheirKeysAndTombstoneColumns() throws {
        let model = try Self.model()
        #expect(PersistentHistory.tombstoneCount(for: model) == 2)
        let statements = PersistentHistory.createStatements(for: model)
        #expect(statements[0] == "CREATE TABLE ACHANGE ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZCHANGETYPE INTEGER, ZENTITY INTEGER, ZENTITYPK INTEGER, ZTRANSACTIONID INTEGER, ZCOLUMNS BLOB, ZTOMBSTONE0 BLOB, ZTOMBSTONE1 BLOB )")
        let folder = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (_, store) = try Self.open(folder.appendingPathComponent("Notes.sqlite"), history: true)
        #expect(store.tracksPersistentHistory)
        let rows = try store.connection.query("SELECT Z_ENT, Z_NAME, Z_SUPER, Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT >= 16000 ORDER BY Z_ENT").map(\.values)
        #expect(rows == [[16001, "CHANGE", 0, 0], [16002, "TRANSACTION", 0, 0], [16003, "TRANSACTIONSTRING", 0, 0]])
        let (_, plain) = try Self.open(folder.appendingPathComponent("Plain.sqlite"))
        #expect(!plain.tracksPersistentHistory)
        #expect(try plain.connection.scalar("SELECT count(*) FROM sqlite_master WHERE name LIKE 'A%'") == .integer(0))
    }

    @Test func everySaveRecordsATransactionWithItsChanges() throws {
        let folder = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (context, store) = try Self.open(folder.appendingPathComponent("Notes.sqlite"), history: true)
        context.name = "editor"
        context.transactionAuthor = "sync"
        let inbox = try context.insertObject(entityName: "Folder")
        let note = try context.insertObject(entityName: "Note")
        try note.setValue("Hello", forKey: "title")
        try note.setValue("A1B2", forKey: "uuid")
        try note.setValue(Int32(3), forKey: "version")
        try note.setValue(inbox, forKey: "folder")
        try context.save()
        let db = store.connection
        #expect(try db.scalar("SELECT count(*) FROM ATRANSACTION") == .integer(1))
        let strings = try db.query("SELECT ZNAME FROM ATRANSACTIONSTRING").compactMap { $0.values.first?.string }
        #expect(strings.contains("sync") && strings.contains("editor"))
        let transaction = try #require(try db.query(
            "SELECT t.Z_ENT, t.Z_OPT, a.ZNAME, c.ZNAME, typeof(t.ZTIMESTAMP) FROM ATRANSACTION t JOIN ATRANSACTIONSTRING a ON a.Z_PK = t.ZAUTHORTS JOIN ATRANSACTIONSTRING c ON c.Z_PK = t.ZCONTEXTNAMETS").first)
        #expect(transaction.values == [16002, .null, "sync", "editor", "real"])
        let inserts = try db.query("SELECT Z_ENT, Z_OPT, ZCHANGETYPE, ZENTITY, ZENTITYPK, ZTRANSACTIONID, ZCOLUMNS FROM ACHANGE ORDER BY Z_PK").map(\.values)
        #expect(inserts == [[16001, .null, 0, 1, 1, 1, .null], [16001, .null, 0, 2, 1, 1, .null]], "Folder is entity 1, Note 2")

        // An update records the properties that changed.
        try note.setValue("Hello, world", forKey: "title")
        try note.setValue("…", forKey: "body")
        try context.save()
        let update = try #require(try db.query("SELECT ZCHANGETYPE, ZENTITY, ZENTITYPK, ZTRANSACTIONID, ZCOLUMNS FROM ACHANGE WHERE ZCHANGETYPE = 1").first)
        #expect(Array(update.values.prefix(4)) == [1, 2, 1, 2])
        let bits = try #require(update.values[4].data)
        // body, folder, title, uuid, version: bits 0 and 2.
        #expect(bits == Data([0b0000_0101]))
        let entity = try #require(try Self.model().entity(named: "Note"))
        #expect(PersistentHistory.changedProperties(bits, of: entity) == ["body", "title"])

        // A delete keeps the preserved values, in name order.
        context.delete(note)
        try context.save()
        let delete = try #require(try db.query("SELECT ZCHANGETYPE, ZENTITY, ZENTITYPK, ZCOLUMNS, ZTOMBSTONE0, ZTOMBSTONE1 FROM ACHANGE WHERE ZCHANGETYPE = 2").first)
        #expect(delete.values == [2, 2, 1, .null, "A1B2", 3])
        // The folder's to-many changed with it: an update of Folder.notes.
        let folderUpdates = try db.query("SELECT ZCOLUMNS FROM ACHANGE WHERE ZCHANGETYPE = 1 AND ZENTITY = 1").map(\.values)
        #expect(folderUpdates == [[.blob(Data([0b10]))]], "name, notes: bit 1")
        #expect(try db.scalar("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = 16002") == .integer(3))

        // Read back.
        let history = try store.historyTransactions()
        #expect(history.map(\.number) == [1, 2, 3])
        #expect(history.allSatisfy { $0.author == "sync" && $0.contextName == "editor" && $0.processID != nil })
        #expect(history[0].changes.map { "\($0.type) \($0.objectID.entityName) p\($0.objectID.primaryKey)" } == ["insert Folder p1", "insert Note p1"])
        #expect(history[1].changes.first?.updatedProperties == ["body", "title"])
        let deleted = try #require(history[2].changes.first { $0.type == .delete })
        #expect(deleted.tombstone.map(\.name) == ["uuid", "version"])
        #expect(deleted.tombstone.map(\.value) == ["A1B2", 3])
        #expect(try store.historyTransactions(last: 1).map(\.number) == [3])
    }

    @Test func aTransientChangeRecordsNothingAndAMissingKeyRowIsAdded() throws {
        let folder = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("Notes.sqlite")
        let (context, store) = try Self.open(url, history: true)
        let note = try context.insertObject(entityName: "Note")
        try context.save()
        try note.setValue("scratch", forKey: "draft")
        try context.save()
        #expect(try store.connection.scalar("SELECT count(*) FROM ATRANSACTION") == .integer(1), "only the insert")

        // A store whose Z_PRIMARYKEY lacks the history rows gets them, from the tables' keys.
        try store.connection.execute("DELETE FROM Z_PRIMARYKEY WHERE Z_ENT >= 16000")
        let (reopened, _) = try Self.open(url)
        try reopened.object(with: note.objectID).setValue("Title", forKey: "title")
        try reopened.save()
        let rows = try store.connection.query("SELECT Z_ENT, Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT >= 16000 ORDER BY Z_ENT").map(\.values)
        #expect(rows == [[16001, 2], [16002, 2], [16003, 1]])
    }

    @Test func theStoresOwnTombstoneColumnsAreWritten() throws {
        let folder = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("Notes.sqlite")
        // A store made under a model version that preserved one attribute fewer.
        do {
            let (context, store) = try Self.open(url, history: true)
            let note = try context.insertObject(entityName: "Note")
            try note.setValue("A1B2", forKey: "uuid")
            try context.save()
            try store.connection.execute("ALTER TABLE ACHANGE DROP COLUMN ZTOMBSTONE1")
        }
        let (context, store) = try Self.open(url)
        let notes = try context.fetch(FetchRequest(entityName: "Note"))
        for note in notes { context.delete(note) }
        try context.save()
        #expect(try store.connection.query("SELECT ZTOMBSTONE0 FROM ACHANGE WHERE ZCHANGETYPE = 2").map(\.values) == [["A1B2"]])
    }

    @Test func aStoreWithHistoryKeepsRecordingAndTheOptionAddsTheTablesOnlyWhenWriting() throws {
        let folder = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("Notes.sqlite")
        do {
            let (context, _) = try Self.open(url)
            _ = try context.insertObject(entityName: "Folder")
            try context.save()
        }
        // Read-only with the option: nothing is added.
        let reader = try SQLiteStore(url: url, model: try Self.model(), options: .init(persistentHistoryTracking: true))
        #expect(!reader.tracksPersistentHistory)
        // Writable with the option: the tables are added; the next save is recorded.
        do {
            let (context, store) = try Self.open(url, history: true)
            #expect(store.tracksPersistentHistory)
            _ = try context.insertObject(entityName: "Folder")
            try context.save()
            #expect(try store.connection.scalar("SELECT count(*) FROM ACHANGE") == .integer(1))
        }
        // Reopened without the option: still recorded.
        let (context, store) = try Self.open(url)
        #expect(store.tracksPersistentHistory)
        _ = try context.insertObject(entityName: "Folder")
        try context.save()
        #expect(try store.connection.scalar("SELECT count(*) FROM ATRANSACTION") == .integer(2))
    }
}
