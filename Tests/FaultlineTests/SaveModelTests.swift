import Faultline
import FaultlineModel
import FaultlineSQL
import FaultlineTestSupport
import Foundation
import Testing

/// Saving the shapes the Inventory model lacks, on a model built in Swift: many-to-many join
/// rows, ordered to-many positions, hidden foreign keys, `Z<n>_` entity columns, validation.
@Suite struct SaveModelTests {
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(name: "Animal", attributes: [AttributeDescription(name: "name", type: .string)]),
            EntityDescription(name: "Dog", superentityName: "Animal", attributes: [AttributeDescription(name: "barks", type: .boolean)]),
            EntityDescription(name: "Owner", relationships: [RelationshipDescription(name: "pet", destination: "Animal")]),
            EntityDescription(name: "Item", attributes: [AttributeDescription(name: "name", type: .string)], relationships: [
                RelationshipDescription(name: "tags", destination: "Tag", inverse: "items", toMany: true)
            ]),
            EntityDescription(name: "Tag", attributes: [AttributeDescription(name: "name", type: .string)], relationships: [
                RelationshipDescription(name: "items", destination: "Item", inverse: "tags", toMany: true)
            ]),
            EntityDescription(name: "Folder", relationships: [
                RelationshipDescription(name: "documents", destination: "Document", inverse: "folder", toMany: true, ordered: true, deleteRule: .deny)
            ]),
            EntityDescription(name: "Document", attributes: [AttributeDescription(name: "title", type: .string)], relationships: [
                RelationshipDescription(name: "folder", destination: "Folder", inverse: "documents")
            ]),
            EntityDescription(name: "Note", relationships: [RelationshipDescription(name: "files", destination: "File", toMany: true)]),
            EntityDescription(name: "File"),
            EntityDescription(name: "Person", attributes: [
                AttributeDescription(name: "name", type: .string, isOptional: false, minValueString: "2", maxValueString: "10", regularExpressionString: "[A-Z][a-z]+"),
                AttributeDescription(name: "age", type: .integer16, minValueString: "0", maxValueString: "150"),
            ], relationships: [
                RelationshipDescription(name: "friends", destination: "Person", inverse: "friends", toMany: true, minCount: 1, maxCount: 2),
                RelationshipDescription(name: "home", destination: "Folder", isOptional: false),
            ]),
        ])
    }

    static func open() throws -> (ManagedObjectContext, SQLiteStore, Recorder) {
        let store = try SQLiteStore(inMemoryWith: try model())
        let recorder = Recorder()
        store.connection.addTraceObserver { event in
            if case .statement(let sql, let arguments) = event { recorder.append(sql, arguments) }
        }
        return (ManagedObjectContext(coordinator: PersistentStoreCoordinator(store: store)), store, recorder)
    }

    /// A join row another writer added without changing either row's version (a writer that
    /// is not Core Data, or one that raced between the version checks and the insert) is a
    /// conflict on both objects, resolved by the merge policy, never a raw UNIQUE error.
    @Test(arguments: [MergePolicy.error, .rollback, .mergeByPropertyObjectTrump])
    func aJoinRowAlreadyInTheStoreIsAConflict(policy: MergePolicy) throws {
        let (context, store, _) = try Self.open()
        let item = try context.insertObject(entityName: "Item")
        let tag = try context.insertObject(entityName: "Tag")
        try context.save()
        context.mergePolicy = policy
        try item.addObject(tag, toRelationship: "tags")
        try store.connection.execute("INSERT INTO Z_6TAGS(Z_6ITEMS, Z_10TAGS) VALUES(?, ?)", [.integer(item.objectID.primaryKey), .integer(tag.objectID.primaryKey)])
        if policy == .error {
            let error = try #require(throws: MergeConflictError.self) { try context.save() }
            #expect(Set(error.conflicts.map(\.objectID)) == [item.objectID, tag.objectID])
        } else {
            try context.save()
            #expect(!context.hasChanges)
        }
        #expect(try store.connection.scalar("SELECT count(*) FROM Z_6TAGS") == 1)
    }

    @Test func manyToManyWritesAndDeletesJoinRows() throws {
        let (context, store, sql) = try Self.open()
        let join = try #require(store.mapping.entity("Item")?.manyToMany["tags"])
        #expect(join == "Z_6TAGS")
        let item = try context.insertObject(entityName: "Item")
        let red = try context.insertObject(entityName: "Tag")
        let blue = try context.insertObject(entityName: "Tag")
        try item.addObject(red, toRelationship: "tags")
        try blue.addObject(item, toRelationship: "items")
        #expect((red.value(forKey: "items") as? [ManagedObject]) == [item])
        #expect((item.value(forKey: "tags") as? [ManagedObject]) == [red, blue])
        try context.save()
        expectSQL(sql.sql.filter { $0.contains("Z_6TAGS") }, [
            "INSERT INTO Z_6TAGS(Z_6ITEMS, Z_10TAGS) VALUES(?, ?)",
            "INSERT INTO Z_6TAGS(Z_6ITEMS, Z_10TAGS) VALUES(?, ?)",
        ])
        #expect(try store.connection.query("SELECT Z_6ITEMS, Z_10TAGS FROM Z_6TAGS ORDER BY Z_10TAGS").map(\.values) == [[1, 1], [1, 2]])
        try item.removeObject(red, fromRelationship: "tags")
        sql.clear()
        try context.save()
        // Both sides changed: both rows are version-checked, then the join row goes.
        expectSQL(sql.sql, [
            "BEGIN EXCLUSIVE",
            "UPDATE ZITEM SET Z_OPT = ? WHERE Z_PK = ? AND Z_OPT = ?",
            "UPDATE ZTAG SET Z_OPT = ? WHERE Z_PK = ? AND Z_OPT = ?",
            "DELETE FROM Z_6TAGS WHERE Z_6ITEMS = ? AND Z_10TAGS = ?",
            "COMMIT",
        ])
        #expect(sql.arguments[1] == [2, 1, 1] && sql.arguments[2] == [2, 1, 1] && sql.arguments[3] == [1, 1])
        // Deleting an object removes its join rows.
        context.delete(blue)
        sql.clear()
        try context.save()
        expectSQL(sql.sql, [
            "BEGIN EXCLUSIVE",
            "UPDATE ZITEM SET Z_OPT = ? WHERE Z_PK = ? AND Z_OPT = ?",
            "DELETE FROM ZTAG WHERE Z_PK = ? AND Z_OPT = ?",
            "DELETE FROM Z_6TAGS WHERE Z_6ITEMS = ? AND Z_10TAGS = ?",
            "COMMIT",
        ])
        #expect(try store.connection.scalar("SELECT COUNT(*) FROM Z_6TAGS") == 0)
    }

    @Test func orderedToManyWritesPositionsAndDenyBlocksTheDelete() throws {
        let (context, store, sql) = try Self.open()
        let folder = try context.insertObject(entityName: "Folder")
        let a = try context.insertObject(entityName: "Document")
        let b = try context.insertObject(entityName: "Document")
        try folder.addObject(a, toRelationship: "documents")
        try folder.insertObject(b, at: 0, inRelationship: "documents")
        try context.save()
        #expect(sql.sql.contains("INSERT INTO ZDOCUMENT(Z_PK, Z_ENT, Z_OPT, ZFOLDER, Z_FOK_FOLDER, ZTITLE) VALUES(?, ?, ?, ?, ?, ?)"))
        // Positions as Core Data writes them: 2048, 3072, … (b first).
        #expect(try store.connection.query("SELECT Z_PK, Z_FOK_FOLDER FROM ZDOCUMENT ORDER BY Z_PK").map(\.values) == [[1, 3072], [2, 2048]])
        try folder.insertObject(a, at: 0, inRelationship: "documents")
        sql.clear()
        try context.save()
        expectSQL(sql.sql, [
            "BEGIN EXCLUSIVE",
            "UPDATE ZDOCUMENT SET Z_FOK_FOLDER = ?, Z_OPT = ? WHERE Z_PK = ? AND Z_OPT = ?",
            "UPDATE ZDOCUMENT SET Z_FOK_FOLDER = ?, Z_OPT = ? WHERE Z_PK = ? AND Z_OPT = ?",
            "UPDATE ZFOLDER SET Z_OPT = ? WHERE Z_PK = ? AND Z_OPT = ?",
            "COMMIT",
        ])
        context.delete(folder)
        do {
            try context.save()
            Issue.record("Deny did not block the delete")
        } catch let error as ObjectValidationError {
            #expect(error.failures.map(\.code) == [.relationshipDeniedDelete])
        }
    }

    @Test func hiddenForeignKeysAndEntityColumns() throws {
        let (context, store, sql) = try Self.open()
        let note = try context.insertObject(entityName: "Note")
        let file = try context.insertObject(entityName: "File")
        try note.addObject(file, toRelationship: "files")
        let owner = try context.insertObject(entityName: "Owner")
        let dog = try context.insertObject(entityName: "Dog")
        try dog.setValue(true, forKey: "barks")
        try owner.setValue(dog, forKey: "pet")
        try context.save()
        #expect(sql.sql.contains("INSERT INTO ZFILE(Z_PK, Z_ENT, Z_OPT, Z7FILES) VALUES(?, ?, ?, ?)"))
        #expect(sql.sql.contains("INSERT INTO ZOWNER(Z_PK, Z_ENT, Z_OPT, ZPET, Z1_PET) VALUES(?, ?, ?, ?, ?)"))
        #expect(sql.sql.contains("INSERT INTO ZANIMAL(Z_PK, Z_ENT, Z_OPT, ZBARKS, ZNAME) VALUES(?, ?, ?, ?, ?)"))
        #expect(try store.connection.query("SELECT Z7FILES FROM ZFILE").first?.values == [1])
        #expect(try store.connection.query("SELECT ZPET, Z1_PET FROM ZOWNER").first?.values == [1, 2])
        // Sub-entities share the root's key counter.
        #expect(try store.connection.query("SELECT Z_ENT, Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT IN (1, 2)").map(\.values) == [[1, 1], [2, 0]])
        try note.removeObject(file, fromRelationship: "files")
        sql.clear()
        try context.save()
        expectSQL(sql.sql, [
            "BEGIN EXCLUSIVE",
            "UPDATE ZFILE SET Z7FILES = ?, Z_OPT = ? WHERE Z_PK = ? AND Z_OPT = ?",
            "UPDATE ZNOTE SET Z_OPT = ? WHERE Z_PK = ? AND Z_OPT = ?",
            "COMMIT",
        ])
        #expect(sql.arguments[1] == [nil, 2, 1, 1])
    }

    @Test func aToOneWithoutInverseNeverPointsAtARowThatIsGone() throws {
        // Nothing version-checks the destination of a to-one without inverse (it does not
        // change), so the save checks that its row still exists.
        let (context, store, sql) = try Self.open()
        let dog = try context.insertObject(entityName: "Dog")
        try context.save()
        try store.connection.execute("DELETE FROM ZANIMAL")  // another writer
        let owner = try context.insertObject(entityName: "Owner")
        try owner.setValue(dog, forKey: "pet")
        sql.clear()
        do {
            try context.save()
            Issue.record("the missing row was not noticed")
        } catch let error as MergeConflictError {
            #expect(error.conflicts == [MergeConflict(objectID: dog.objectID, objectVersion: 1, storeVersion: nil)])
        }
        #expect(sql.sql.contains("SELECT Z_PK FROM ZANIMAL WHERE Z_PK = ?"))
        #expect(try store.connection.scalar("SELECT COUNT(*) FROM ZOWNER") == 0)
        #expect(context.hasChanges)
    }
}
