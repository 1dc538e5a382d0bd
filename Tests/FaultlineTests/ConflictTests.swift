import Faultline
import FaultlineModel
import FaultlineSQL
import FaultlineTestSupport
import Foundation
import Testing

/// Two coordinators on one file: optimistic locking and merge policies.
@Suite struct ConflictTests {
    static func twoContexts() throws -> (URL, ManagedObjectContext, ManagedObjectContext, Recorder) {
        let url = try SaveTests.copyOfInventory()
        let (a, recorder) = try SaveTests.open(url)
        let (b, _) = try SaveTests.open(url)
        return (url, a, b, recorder)
    }

    static func location(_ context: ManagedObjectContext, _ pk: Int64 = 1) throws -> ManagedObject {
        let object = context.object(with: ManagedObjectID(entityName: "Location", storeIdentifier: context.coordinator.store.identifier, primaryKey: pk))
        _ = object.value(forKey: "label")
        return object
    }

    @Test func aRowChangedElsewhereFailsTheSaveAndWritesNothing() throws {
        let (url, a, b, sql) = try Self.twoContexts()
        let mine = try Self.location(a)
        let theirs = try Self.location(b)
        try theirs.setValue("Theirs", forKey: "label")
        try b.save()
        try mine.setValue("Mine", forKey: "label")
        let kite = try a.insertObject(entityName: "Asset")
        try kite.setValue("Kite", forKey: "label")
        sql.clear()
        do {
            try a.save()
            Issue.record("the conflict was not detected")
        } catch let error as MergeConflictError {
            #expect(error.conflicts == [MergeConflict(objectID: mine.objectID, objectVersion: 1, storeVersion: 2)])
            #expect(error.description.contains("read at version 1, store has version 2"))
        }
        expectSQL(Array(sql.sql.prefix(6)), [
            "BEGIN EXCLUSIVE",
            "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = ?",
            "UPDATE OR FAIL Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_ENT = ? AND Z_MAX = ?",
            "INSERT INTO ZASSET(Z_PK, Z_ENT, Z_OPT, ZLABEL) VALUES(?, ?, ?, ?)",
            "UPDATE ZLOCATION SET ZLABEL = ?, Z_OPT = ? WHERE Z_PK = ? AND Z_OPT = ?",
            "ROLLBACK",
        ])
        let raw = try Connection(path: url.path, mode: .readWrite)
        #expect(try raw.query("SELECT Z_OPT, ZLABEL FROM ZLOCATION WHERE Z_PK = 1").first?.values == [2, "Theirs"])
        #expect(try raw.scalar("SELECT COUNT(*) FROM ZASSET") == 5)
        #expect(try raw.scalar("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = 1") == 5)
        #expect(a.hasChanges && kite.objectID.isTemporaryID)

        // Object wins: the save goes through over the store's version.
        a.mergePolicy = .overwrite
        try a.save()
        #expect(try raw.query("SELECT Z_OPT, ZLABEL FROM ZLOCATION WHERE Z_PK = 1").first?.values == [3, "Mine"])
        #expect(try raw.scalar("SELECT COUNT(*) FROM ZASSET") == 6)
    }

    @Test func storeWinsDropsTheConflictingChanges() throws {
        let (url, a, b, _) = try Self.twoContexts()
        let mine = try Self.location(a)
        let theirs = try Self.location(b)
        try theirs.setValue("Theirs", forKey: "label")
        try b.save()
        try mine.setValue("Mine", forKey: "label")
        a.mergePolicy = .rollback
        try a.save()
        #expect(mine.value(forKey: "label") as? String == "Theirs")
        #expect(!a.hasChanges)
        let raw = try Connection(path: url.path, mode: .readWrite)
        #expect(try raw.query("SELECT Z_OPT, ZLABEL FROM ZLOCATION WHERE Z_PK = 1").first?.values == [2, "Theirs"])
    }

    @Test func deletingARowChangedElsewhereConflicts() throws {
        let (_, a, b, _) = try Self.twoContexts()
        let mine = try Self.location(a, 2)
        try Self.location(b, 2).setValue("Shed", forKey: "label")
        try b.save()
        a.delete(mine)
        #expect(throws: MergeConflictError.self) { try a.save() }
    }

    @Test(arguments: [MergePolicy.error, .rollback, .overwrite, .mergeByPropertyObjectTrump, .mergeByPropertyStoreTrump])
    func anInsertRelatedToARowDeletedElsewhereConflictsUnderEveryPolicy(policy: MergePolicy) throws {
        // A relates a new Inventory to Garage; B deletes Garage (cascading to its inventories)
        // and saves. A's save version-checks Garage (its to-many changed) and must not leave a
        // row whose ZLOCATION names a location that is gone.
        let (url, a, b, sql) = try Self.twoContexts()
        a.mergePolicy = policy
        let garage = try Self.location(a)
        let inventory = try a.insertObject(entityName: "Inventory")
        try inventory.setValue(1, forKey: "count")
        try inventory.setValue(garage, forKey: "location")
        b.delete(try Self.location(b))
        try b.save()
        sql.clear()
        do {
            try a.save()
            Issue.record("the deleted location was not noticed")
        } catch let error as MergeConflictError {
            #expect(error.conflicts == [MergeConflict(objectID: garage.objectID, objectVersion: 1, storeVersion: nil)])
        }
        #expect(sql.sql.contains("UPDATE ZLOCATION SET Z_OPT = ? WHERE Z_PK = ? AND Z_OPT = ?"))
        let raw = try Connection(path: url.path, mode: .readWrite)
        #expect(try raw.scalar("SELECT COUNT(*) FROM ZINVENTORY WHERE ZLOCATION IS NOT NULL AND ZLOCATION NOT IN (SELECT Z_PK FROM ZLOCATION)") == 0)
        #expect(a.hasChanges && inventory.objectID.isTemporaryID)
    }

    @Test func aFaultWhoseToManyChangedIsFiredAndVersionChecked() throws {
        let (url, a, b, sql) = try Self.twoContexts()
        let theirs = try Self.location(b)
        let id = ManagedObjectID(entityName: "Location", storeIdentifier: a.coordinator.store.identifier, primaryKey: 1)
        let garage = a.object(with: id)
        #expect(garage.isFault)
        let inventory = try a.insertObject(entityName: "Inventory")
        try inventory.setValue(garage, forKey: "location")
        sql.clear()
        try a.save()
        #expect(sql.sql.contains("UPDATE ZLOCATION SET Z_OPT = ? WHERE Z_PK = ? AND Z_OPT = ?"))
        let raw = try Connection(path: url.path, mode: .readWrite)
        #expect(try raw.scalar("SELECT Z_OPT FROM ZLOCATION WHERE Z_PK = 1") == 2)
        // The version moved: B, which read Garage before, now conflicts on it.
        try theirs.setValue("Shed", forKey: "label")
        #expect(throws: MergeConflictError.self) { try b.save() }
    }

    @Test func aBusyDatabaseFailsAfterTheTimeoutAndTheSaveCanBeRetried() throws {
        let (url, a, _, _) = try Self.twoContexts()
        let other = try Connection(path: url.path, mode: .readWrite)
        try other.execute("BEGIN EXCLUSIVE")
        a.coordinator.store.connection.setBusyTimeout(milliseconds: 50)
        try a.insertObject(entityName: "Asset").setValue("Kite", forKey: "label")
        #expect(throws: SQLiteError.self) { try a.save() }
        #expect(a.hasChanges)
        try other.execute("COMMIT")
        try a.save()
        #expect(try other.scalar("SELECT ZLABEL FROM ZASSET WHERE Z_PK = 6") == "Kite")
    }
}

/// Uniqueness constraints broken by a save read as Core Data's constraint conflict.
@Suite struct ConstraintConflictTests {
    static func context() throws -> (ManagedObjectContext, SQLiteStore) {
        let model = try ManagedObjectModel(entities: [
            EntityDescription(name: "Tag", attributes: [AttributeDescription(name: "name", type: .string)], uniquenessConstraints: [["name"]]),
        ])
        let store = try SQLiteStore(inMemoryWith: model)
        return (ManagedObjectContext(coordinator: PersistentStoreCoordinator(store: store)), store)
    }

    @Test func aDuplicateOfAStoredRowNamesTheConstraintAndTheRow() throws {
        let (context, store) = try Self.context()
        try context.insertObject(entityName: "Tag").setValue("red", forKey: "name")
        try context.save()
        let duplicate = try context.insertObject(entityName: "Tag")
        try duplicate.setValue("red", forKey: "name")
        do {
            try context.save()
            Issue.record("the duplicate was saved")
        } catch let error as ConstraintConflictError {
            #expect(error.entityName == "Tag" && error.constraint == ["name"] && error.values == ["name": "red"])
            #expect(error.objectID == duplicate.objectID)
            #expect(error.conflictingObjectIDs == [ManagedObjectID(entityName: "Tag", storeIdentifier: store.identifier, primaryKey: 1)])
            #expect(error.description.hasPrefix("constraint conflict (uniqueness constraint of Tag on name): x-coredata:///Tag/t"))
        }
        #expect(context.hasChanges)
        #expect(try store.connection.scalar("SELECT COUNT(*) FROM ZTAG") == 1)
    }

    /// An update whose new value another row holds: the error names the updated object, the
    /// constraint and the row (the update's table found through the save's update batch).
    @Test func anUpdateToAValueAnotherRowHoldsNamesTheConstraintAndTheRow() throws {
        let (context, store) = try Self.context()
        let red = try context.insertObject(entityName: "Tag")
        try red.setValue("red", forKey: "name")
        let blue = try context.insertObject(entityName: "Tag")
        try blue.setValue("blue", forKey: "name")
        try context.save()
        try blue.setValue("red", forKey: "name")
        let error = #expect(throws: ConstraintConflictError.self) { try context.save() }
        #expect(error?.entityName == "Tag" && error?.constraint == ["name"] && error?.values["name"] as? String == "red")
        #expect(error?.objectID == blue.objectID && error?.conflictingObjectIDs == [red.objectID])
        #expect(try store.connection.scalar("SELECT COUNT(*) FROM ZTAG WHERE ZNAME = 'red'") == 1)
    }

    @Test func twoNewObjectsWithOneValueConflictWithEachOther() throws {
        let (context, _) = try Self.context()
        let first = try context.insertObject(entityName: "Tag")
        try first.setValue("blue", forKey: "name")
        try context.insertObject(entityName: "Tag").setValue("blue", forKey: "name")
        let error = #expect(throws: ConstraintConflictError.self) { try context.save() }
        #expect(error?.conflictingObjectIDs == [first.objectID])
    }
}
