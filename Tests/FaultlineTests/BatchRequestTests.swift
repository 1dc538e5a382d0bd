import Faultline
import FaultlineModel
import FaultlinePredicate
import FaultlineSQL
import FaultlineTestSupport
import Foundation
import Testing

/// Batch delete, update and insert: exact SQL, the store reopened and read with raw SQL
/// (rows, `Z_OPT`, `Z_PRIMARYKEY`, history, triggers), results merged into a live context.
///
/// The batch insert statements are those of a published Core Data SQLDebug log (the
/// Earthquakes sample's `ZQUAKE`, quoted in fatbobman's "如何在 Core Data 中进行批量操作",
/// 2022: plain `INSERT INTO`, `INSERT OR IGNORE INTO` under the error merge policy,
/// `ON CONFLICT(ZCODE) DO UPDATE SET Z_OPT = Z_OPT+1 , ZPLACE = excluded.ZPLACE , …` under
/// the property-object-trump policy); the `SET` list here is in column order (Core Data's
/// order in that log, `ZPLACE , ZMAGNITUDE , ZTIME`, follows no rule the log shows). The
/// delete and update statements are inferred (see Documentation/Batch.md).
@Suite struct BatchRequestTests {
    static func model(constrained: Bool = true) throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(name: "Quake", attributes: [
                AttributeDescription(name: "code", type: .string),
                AttributeDescription(name: "magnitude", type: .double),
                AttributeDescription(name: "place", type: .string),
                AttributeDescription(name: "time", type: .date),
            ], uniquenessConstraints: constrained ? [["code"]] : []),
            EntityDescription(name: "Folder", attributes: [AttributeDescription(name: "name", type: .string)], relationships: [
                RelationshipDescription(name: "documents", destination: "Document", inverse: "folder", toMany: true, deleteRule: .cascade),
                RelationshipDescription(name: "labels", destination: "Label", inverse: "folder", toMany: true, deleteRule: .nullify),
            ]),
            EntityDescription(name: "Document", attributes: [
                AttributeDescription(name: "title", type: .string),
                AttributeDescription(name: "folderName", type: .string, derivationExpression: "folder.name"),
            ], relationships: [
                RelationshipDescription(name: "folder", destination: "Folder", inverse: "documents"),
                RelationshipDescription(name: "tags", destination: "Tag", inverse: "documents", toMany: true),
            ]),
            EntityDescription(name: "Label", attributes: [AttributeDescription(name: "text", type: .string)], relationships: [
                RelationshipDescription(name: "folder", destination: "Folder", inverse: "labels")
            ]),
            EntityDescription(name: "Tag", attributes: [AttributeDescription(name: "name", type: .string)], relationships: [
                RelationshipDescription(name: "documents", destination: "Document", inverse: "tags", toMany: true)
            ]),
            EntityDescription(name: "Shelf", relationships: [
                RelationshipDescription(name: "books", destination: "Book", inverse: "shelf", toMany: true, deleteRule: .nullify)
            ]),
            EntityDescription(name: "Book", relationships: [
                RelationshipDescription(name: "shelf", destination: "Shelf", inverse: "books", isOptional: false)
            ]),
        ])
    }

    /// A new store file (with persistent history when asked) and a context on it, its SQL recorded.
    static func open(_ url: URL, history: Bool = false, constrained: Bool = true) throws -> (ManagedObjectContext, Recorder) {
        let coordinator = try PersistentStoreCoordinator(
            model: try model(constrained: constrained), storeURL: url,
            options: .init(readOnly: false, createIfMissing: true, persistentHistoryTracking: history))
        let recorder = Recorder()
        coordinator.store.connection.addTraceObserver { event in
            if case .statement(let sql, let arguments) = event { recorder.append(sql, arguments) }
        }
        return (ManagedObjectContext(coordinator: coordinator), recorder)
    }

    static func newStore(_ name: String = "Batch.sqlite") throws -> URL {
        try TestSupport.temporaryDirectory("faultline-batch").appendingPathComponent(name)
    }

    static func quake(_ code: String, _ magnitude: Double, _ place: String) -> [String: Any] {
        ["code": code, "magnitude": magnitude, "place": place, "time": Date(timeIntervalSinceReferenceDate: 1000)]
    }

    // MARK: Insert

    @Test func batchInsertWithoutConstraintIsAPlainInsert() throws {
        let url = try Self.newStore()
        let (context, sql) = try Self.open(url, constrained: false)
        sql.clear()
        var request = BatchInsertRequest(entityName: "Quake", objects: [Self.quake("a", 1.5, "Here"), Self.quake("b", 2.5, "There")])
        request.resultType = .count
        #expect(try context.execute(request) == .count(2))
        expectSQL(sql.sql, [
            "BEGIN EXCLUSIVE",
            "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = ?",
            "UPDATE OR FAIL Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_ENT = ? AND Z_MAX = ?",
            "INSERT INTO ZQUAKE(Z_PK, Z_ENT, Z_OPT, ZCODE, ZMAGNITUDE, ZPLACE, ZTIME) VALUES(?, ?, ?, ?, ?, ?, ?)",
            "INSERT INTO ZQUAKE(Z_PK, Z_ENT, Z_OPT, ZCODE, ZMAGNITUDE, ZPLACE, ZTIME) VALUES(?, ?, ?, ?, ?, ?, ?)",
            "COMMIT",
        ])
        #expect(sql.arguments[3] == [1, 5, 1, "a", 1.5, "Here", 1000.0])
    }

    @Test func theErrorPolicyIgnoresDuplicatesAndObjectTrumpUpserts() throws {
        let url = try Self.newStore()
        let (context, sql) = try Self.open(url)
        _ = try context.execute(BatchInsertRequest(entityName: "Quake", objects: [Self.quake("a", 1.5, "Here"), Self.quake("b", 2.5, "There")]))
        sql.clear()
        var ignore = BatchInsertRequest(entityName: "Quake", objects: [Self.quake("a", 9, "Elsewhere"), Self.quake("c", 3, "New")])
        ignore.resultType = .objectIDs
        let ignored = try context.execute(ignore)
        expectSQL(sql.sql.filter { $0.hasPrefix("INSERT") }, [
            "INSERT OR IGNORE INTO ZQUAKE(Z_PK, Z_ENT, Z_OPT, ZCODE, ZMAGNITUDE, ZPLACE, ZTIME) VALUES(?, ?, ?, ?, ?, ?, ?)",
            "INSERT OR IGNORE INTO ZQUAKE(Z_PK, Z_ENT, Z_OPT, ZCODE, ZMAGNITUDE, ZPLACE, ZTIME) VALUES(?, ?, ?, ?, ?, ?, ?)",
        ])
        #expect(ignored.objectIDs?.map(\.primaryKey) == [4])

        sql.clear()
        context.mergePolicy = .mergeByPropertyObjectTrump
        var upsert = BatchInsertRequest(entityName: "Quake", objects: [Self.quake("a", 9, "Elsewhere"), Self.quake("d", 4, "Far")])
        upsert.resultType = .objectIDs
        let upserted = try context.execute(upsert)
        expectSQL(sql.sql, [
            "BEGIN EXCLUSIVE",
            "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = ?",
            "UPDATE OR FAIL Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_ENT = ? AND Z_MAX = ?",
            "INSERT INTO ZQUAKE(Z_PK, Z_ENT, Z_OPT, ZCODE, ZMAGNITUDE, ZPLACE, ZTIME) VALUES(?, ?, ?, ?, ?, ?, ?) ON CONFLICT(ZCODE) DO UPDATE SET Z_OPT = Z_OPT+1 , ZMAGNITUDE = excluded.ZMAGNITUDE , ZPLACE = excluded.ZPLACE , ZTIME = excluded.ZTIME",
            "SELECT Z_PK, Z_ENT FROM ZQUAKE WHERE ZCODE = ?",
            "INSERT INTO ZQUAKE(Z_PK, Z_ENT, Z_OPT, ZCODE, ZMAGNITUDE, ZPLACE, ZTIME) VALUES(?, ?, ?, ?, ?, ?, ?) ON CONFLICT(ZCODE) DO UPDATE SET Z_OPT = Z_OPT+1 , ZMAGNITUDE = excluded.ZMAGNITUDE , ZPLACE = excluded.ZPLACE , ZTIME = excluded.ZTIME",
            "COMMIT",
        ])
        #expect(upserted.objectIDs?.map(\.primaryKey) == [1, 6])

        var fail = BatchInsertRequest(entityName: "Quake", objects: [Self.quake("z", 1, "Z"), Self.quake("b", 1, "B")])
        fail.conflictResolution = .fail
        let error = #expect(throws: BatchRequestError.self) { try context.execute(fail) }
        #expect(error?.row == 1)
        #expect(error?.description.hasPrefix("Quake (row 2): breaks the uniqueness constraint (code = b)") == true)

        // Reopened: rows, versions and the key counter.
        let raw = try Connection(path: url.path, mode: .readWrite)
        #expect(try raw.query("SELECT Z_PK, Z_OPT, ZCODE, ZMAGNITUDE, ZPLACE FROM ZQUAKE ORDER BY Z_PK").map(\.values) == [
            [1, 2, "a", 9.0, "Elsewhere"], [2, 1, "b", 2.5, "There"], [4, 1, "c", 3.0, "New"], [6, 1, "d", 4.0, "Far"],
        ])
        // Keys 3 and 5 went to ignored and upserted rows; the failed request reserved none.
        #expect(try raw.scalar("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'Quake'") == 6)
    }

    @Test func aHandlerFeedsRowsUntilItSaysDone() throws {
        let (context, _) = try Self.open(try Self.newStore())
        var index = 0
        var request = BatchInsertRequest(entityName: "Quake") { row in
            guard index < 3 else { return true }
            row = ["code": "q\(index)", "magnitude": Double(index)]
            index += 1
            return false
        }
        request.resultType = .count
        #expect(try context.execute(request) == .count(3))
        var bad = BatchInsertRequest(entityName: "Quake", objects: [["code": "x"], ["code": "y", "magnitude": "big"]])
        bad.resultType = .count
        let error = #expect(throws: BatchRequestError.self) { try context.execute(bad) }
        #expect(error?.description == "Quake.magnitude (row 2): expected a number for attribute type Double, got String big")
        let unknown = #expect(throws: BatchRequestError.self) { try context.execute(BatchInsertRequest(entityName: "Quake", objects: [["size": 1]])) }
        #expect(unknown?.description == "Quake.size (row 1): keypath size not found in entity Quake")
        #expect(try context.count(for: FetchRequest(entityName: "Quake")) == 3)
    }

    @Test func aLargeImportWithUpsertsReopensWithEveryRow() throws {
        let url = try Self.newStore()
        let (context, _) = try Self.open(url, history: true)
        context.mergePolicy = .mergeByPropertyObjectTrump
        let first = (0..<3000).map { Self.quake("q\($0)", Double($0 % 10), "P\($0)") }
        var request = BatchInsertRequest(entityName: "Quake", objects: first)
        request.resultType = .count
        #expect(try context.execute(request) == .count(3000))
        // Half of these repeat codes: 1500 upserts, 1500 new rows.
        let second = (1500..<4500).map { Self.quake("q\($0)", 7, "Again\($0)") }
        request = BatchInsertRequest(entityName: "Quake", objects: second)
        request.resultType = .count
        #expect(try context.execute(request) == .count(3000))
        let raw = try Connection(path: url.path, mode: .readWrite)
        #expect(try raw.scalar("SELECT COUNT(*) FROM ZQUAKE") == 4500)
        #expect(try raw.scalar("SELECT COUNT(*) FROM ZQUAKE WHERE Z_OPT = 2") == 1500)
        #expect(try raw.scalar("SELECT ZPLACE FROM ZQUAKE WHERE ZCODE = 'q2000'") == "Again2000")
        #expect(try raw.scalar("SELECT COUNT(*) FROM ACHANGE WHERE ZCHANGETYPE = 0") == 4500)
        #expect(try raw.scalar("SELECT COUNT(*) FROM ACHANGE WHERE ZCHANGETYPE = 1") == 1500)
        #expect(try raw.scalar("SELECT COUNT(*) FROM ATRANSACTION") == 2)
        #expect(try raw.scalar("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'Quake'") == 6000)
    }

    // MARK: Update

    @Test func batchUpdateSetsConstantsAndExpressionsAndBumpsTheVersion() throws {
        let url = try Self.newStore()
        let (context, sql) = try Self.open(url, history: true)
        _ = try context.execute(BatchInsertRequest(entityName: "Quake", objects: [Self.quake("a", 1.5, "Here"), Self.quake("b", 2.5, "There"), Self.quake("c", 5, "Far")]))
        let registered = context.object(with: ManagedObjectID(entityName: "Quake", storeIdentifier: context.coordinator.store.identifier, primaryKey: 1))
        #expect(registered.value(forKey: "place") as? String == "Here")
        sql.clear()
        var update = BatchUpdateRequest(entityName: "Quake")
        update.predicate = try FLPredicate(format: "magnitude < 3")
        update.propertiesToUpdate = ["magnitude": try FLExpression(format: "magnitude * 2")]
        try update.set("place", to: "Moved")
        update.resultType = .objectIDs
        let result = try context.execute(update)
        expectSQL(sql.sql.filter { !$0.contains("ATRANSACTION") && !$0.contains("ACHANGE") && !$0.contains("Z_PRIMARYKEY") }, [
            "BEGIN EXCLUSIVE",
            "SELECT 0, t0.Z_PK FROM ZQUAKE t0 WHERE  t0.ZMAGNITUDE < ?",
            "UPDATE ZQUAKE SET ZMAGNITUDE = ( ZQUAKE.ZMAGNITUDE * ?), ZPLACE = ?, Z_OPT = Z_OPT+1 WHERE Z_PK IN (SELECT * FROM _Z_intarray0)",
            "COMMIT",
        ])
        expectSQL(Array(sql.sql.prefix(3)), [
            "BEGIN EXCLUSIVE",
            "SELECT 0, t0.Z_PK FROM ZQUAKE t0 WHERE  t0.ZMAGNITUDE < ?",
            "UPDATE ZQUAKE SET ZMAGNITUDE = ( ZQUAKE.ZMAGNITUDE * ?), ZPLACE = ?, Z_OPT = Z_OPT+1 WHERE Z_PK IN (SELECT * FROM _Z_intarray0)",
        ])
        #expect(sql.arguments[2] == [2, "Moved"])
        #expect(result.objectIDs?.map(\.primaryKey) == [1, 2])
        // Merged: the registered object reads the new row.
        ManagedObjectContext.mergeChanges(fromRemoteContextSave: [.updated: result.objectIDs ?? []], into: [context])
        #expect(registered.value(forKey: "place") as? String == "Moved")
        #expect(registered.value(forKey: "magnitude") as? Double == 3.0)
        let raw = try Connection(path: url.path, mode: .readWrite)
        #expect(try raw.query("SELECT Z_PK, Z_OPT, ZMAGNITUDE, ZPLACE FROM ZQUAKE ORDER BY Z_PK").map(\.values) == [
            [1, 2, 3.0, "Moved"], [2, 2, 5.0, "Moved"], [3, 1, 5.0, "Far"],
        ])
        #expect(try raw.scalar("SELECT COUNT(*) FROM ACHANGE WHERE ZCHANGETYPE = 1") == 2)
        // Refused: relationships, unknown keys, a value of the wrong type, joins in a value.
        var bad = BatchUpdateRequest(entityName: "Document")
        bad.propertiesToUpdate = ["folder": .constant(.null)]
        #expect(throws: BatchRequestError.self) { try context.execute(bad) }
        bad.propertiesToUpdate = ["title": try FLExpression(format: "folder.name")]
        let join = #expect(throws: BatchRequestError.self) { try context.execute(bad) }
        #expect(join?.description.contains("cannot follow a relationship") == true)
        bad.propertiesToUpdate = ["title": .constant(.int(3))]
        #expect(throws: BatchRequestError.self) { try context.execute(bad) }
    }

    @Test func batchUpdateFiresTheDerivedAttributeTriggers() throws {
        let url = try Self.newStore()
        let (context, _) = try Self.open(url)
        let folder = try context.insertObject(entityName: "Folder")
        try folder.setValue("Old", forKey: "name")
        let document = try context.insertObject(entityName: "Document")
        try document.setValue(folder, forKey: "folder")
        try context.save()
        #expect(document.value(forKey: "folderName") as? String == "Old")
        var update = BatchUpdateRequest(entityName: "Folder")
        try update.set("name", to: "New")
        _ = try context.execute(update)
        let changes = try #require(context.lastBatchChanges)
        context.mergeChanges(fromContextDidSave: changes)
        ManagedObjectContext.mergeChanges(fromRemoteContextSave: [.updated: [document.objectID]], into: [context])
        #expect(document.value(forKey: "folderName") as? String == "New")
        let raw = try Connection(path: url.path, mode: .readWrite)
        #expect(try raw.scalar("SELECT ZFOLDERNAME FROM ZDOCUMENT") == "New")
    }

    // MARK: Delete

    @Test func batchDeleteCascadesNullifiesAndMerges() throws {
        let url = try Self.newStore()
        let (context, sql) = try Self.open(url, history: true)
        let folder = try context.insertObject(entityName: "Folder")
        try folder.setValue("F", forKey: "name")
        let documents = try (0..<2).map { i -> ManagedObject in
            let d = try context.insertObject(entityName: "Document")
            try d.setValue("d\(i)", forKey: "title")
            try d.setValue(folder, forKey: "folder")
            return d
        }
        let tag = try context.insertObject(entityName: "Tag")
        try tag.addObject(documents[0], toRelationship: "documents")
        let label = try context.insertObject(entityName: "Label")
        try label.setValue(folder, forKey: "folder")
        try context.save()
        _ = label.value(forKey: "text")
        sql.clear()
        var delete = BatchDeleteRequest(fetchRequest: { var f = FetchRequest(entityName: "Folder"); f.predicate = try? FLPredicate(format: "name == 'F'"); return f }())
        delete.resultType = .objectIDs
        let result = try context.execute(delete)
        #expect(result.objectIDs == [folder.objectID])
        expectSQL(sql.sql.filter { !$0.contains("ATRANSACTION") && !$0.contains("ACHANGE") && !$0.contains("Z_PRIMARYKEY") }, [
            "BEGIN EXCLUSIVE",
            "SELECT 0, t0.Z_PK FROM ZFOLDER t0 WHERE  t0.ZNAME = ?",
            // Folder.documents, Cascade: the documents go next.
            "SELECT 0, t0.Z_PK FROM ZDOCUMENT t0 WHERE  t0.ZFOLDER IN (SELECT * FROM _Z_intarray0)",
            // Folder.labels, Nullify: the labels lose their folder.
            "SELECT 0, t0.Z_PK FROM ZLABEL t0 WHERE  t0.ZFOLDER IN (SELECT * FROM _Z_intarray0)",
            "UPDATE ZLABEL SET ZFOLDER = NULL, Z_OPT = Z_OPT+1 WHERE ZFOLDER IN (SELECT * FROM _Z_intarray0)",
            // Document.folder, Nullify: the folder (deleted already) loses them.
            "SELECT 0, t0.Z_PK FROM ZFOLDER t0 WHERE  t0.Z_PK IN (SELECT t1.ZFOLDER FROM ZDOCUMENT t1 WHERE t1.Z_PK IN (SELECT * FROM _Z_intarray0))",
            // Document.tags, Nullify (many-to-many): the join rows go, the tags lose them.
            "SELECT 0, t0.Z_PK FROM ZTAG t0 WHERE  t0.Z_PK IN (SELECT t1.Z_7TAGS FROM Z_2TAGS t1 WHERE t1.Z_2DOCUMENTS IN (SELECT * FROM _Z_intarray0))",
            "DELETE FROM Z_2TAGS WHERE Z_2DOCUMENTS IN (SELECT * FROM _Z_intarray0)",
            "DELETE FROM ZFOLDER WHERE Z_PK IN (SELECT * FROM _Z_intarray0)",
            "DELETE FROM ZDOCUMENT WHERE Z_PK IN (SELECT * FROM _Z_intarray0)",
            "COMMIT",
        ])
        let changes = try #require(context.lastBatchChanges)
        #expect(Set(changes.deletedObjectIDs) == Set([folder.objectID] + documents.map(\.objectID)))
        #expect(Set(changes.updatedObjectIDs) == Set([label.objectID, tag.objectID]))
        ManagedObjectContext.mergeChanges(fromRemoteContextSave: changes.changes, into: [context])
        #expect(context.registeredObjects[folder.objectID] == nil && context.registeredObjects[documents[0].objectID] == nil)
        #expect(label.value(forKey: "folder") == nil)
        #expect((tag.value(forKey: "documents") as? [ManagedObject])?.isEmpty == true)

        let raw = try Connection(path: url.path, mode: .readWrite)
        #expect(try raw.scalar("SELECT COUNT(*) FROM ZFOLDER") == 0)
        #expect(try raw.scalar("SELECT COUNT(*) FROM ZDOCUMENT") == 0)
        #expect(try raw.scalar("SELECT COUNT(*) FROM Z_2TAGS") == 0)
        #expect(try raw.query("SELECT ZFOLDER, Z_OPT FROM ZLABEL").first?.values == [.null, 2])
        #expect(try raw.scalar("SELECT COUNT(*) FROM ACHANGE WHERE ZCHANGETYPE = 2") == 3)
    }

    @Test func batchDeleteRefusesAMandatoryInverseAndOtherEntities() throws {
        let (context, _) = try Self.open(try Self.newStore())
        let shelf = try context.insertObject(entityName: "Shelf")
        let book = try context.insertObject(entityName: "Book")
        try book.setValue(shelf, forKey: "shelf")
        try context.save()
        let error = #expect(throws: BatchRequestError.self) { try context.execute(BatchDeleteRequest(entityName: "Shelf")) }
        #expect(error?.message == "Batch delete failed due to mandatory OTO nullify inverse on Book/shelf; nothing was deleted")
        #expect(try context.count(for: FetchRequest(entityName: "Shelf")) == 1)
        #expect(throws: BatchRequestError.self) { try context.execute(BatchDeleteRequest(objectIDs: [shelf.objectID, book.objectID])) }
        var byID = BatchDeleteRequest(objectIDs: [book.objectID])
        byID.resultType = .count
        #expect(try context.execute(byID) == .count(1))
    }

    @Test func aReadOnlyStoreRefusesBatches() throws {
        let url = try Self.newStore()
        _ = try Self.open(url)
        let coordinator = try PersistentStoreCoordinator(model: try Self.model(), storeURL: url, options: .init(readOnly: true))
        let context = ManagedObjectContext(coordinator: coordinator)
        #expect(throws: PersistentStoreError.self) { try context.execute(BatchDeleteRequest(entityName: "Quake")) }
    }
}
