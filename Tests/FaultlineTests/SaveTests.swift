import Faultline
import FaultlineModel
import FaultlinePredicate
import FaultlineSQL
import FaultlineTestSupport
import Foundation
import Testing

/// Changes and saving on the Inventory sample (a temporary copy): exact SQL, the file
/// afterwards read back with raw SQL, conflicts between two coordinators.
@Suite struct SaveTests {
    static let modelURL = TestSupport.inventoryFolder.appendingPathComponent("Inventory.xcdatamodeld")

    /// A writable copy of the Inventory store.
    static func copyOfInventory() throws -> URL {
        let folder = try TestSupport.temporaryDirectory("faultline-save")
        let url = folder.appendingPathComponent("Inventory.sqlite")
        try FileManager.default.copyItem(at: TestSupport.inventoryFolder.appendingPathComponent("Inventory.sqlite"), to: url)
        return url
    }

    static func open(_ url: URL, readOnly: Bool = false) throws -> (ManagedObjectContext, Recorder) {
        let model = try ManagedObjectModel(contentsOf: modelURL)
        let coordinator = try PersistentStoreCoordinator(model: model, storeURL: url, options: .init(readOnly: readOnly))
        let recorder = Recorder()
        coordinator.store.connection.addTraceObserver { event in
            if case .statement(let sql, let arguments) = event { recorder.append(sql, arguments) }
        }
        return (ManagedObjectContext(coordinator: coordinator), recorder)
    }

    @Test func insertReservesAKeyAndInsertsTheRow() throws {
        let url = try Self.copyOfInventory()
        let (context, sql) = try Self.open(url)
        let asset = try context.insertObject(entityName: "Asset")
        #expect(asset.objectID.isTemporaryID)
        #expect(asset.objectID.uriRepresentation.hasPrefix("x-coredata:///Asset/t"))
        try asset.setValue("Drone", forKey: "label")
        #expect(context.hasChanges && context.insertedObjects == [asset])
        try context.save()
        #expect(sql.sql == [
            "BEGIN EXCLUSIVE",
            "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = ?",
            "UPDATE OR FAIL Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_ENT = ? AND Z_MAX = ?",
            "INSERT INTO ZASSET(Z_PK, Z_ENT, Z_OPT, ZLABEL) VALUES(?, ?, ?, ?)",
            "COMMIT",
        ])
        #expect(sql.arguments[1] == [1])
        #expect(sql.arguments[2] == [6, 1, 5])
        #expect(sql.arguments[3] == [6, 1, 1, "Drone"])
        #expect(!context.hasChanges)
        #expect(asset.objectID.uriRepresentation == "x-coredata://\(context.coordinator.store.identifier)/Asset/p6")
        #expect(context.object(with: asset.objectID) === asset)
        let raw = try Connection(path: url.path, mode: .readWrite)
        #expect(try raw.query("SELECT Z_PK, Z_ENT, Z_OPT, ZLABEL FROM ZASSET WHERE Z_PK = 6").first?.values == [6, 1, 1, "Drone"])
        #expect(try raw.scalar("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = 1") == 6)
    }

    @Test func changeDetectionFollowsEveryWayValuesMove() throws {
        // isUpdated compares only the slots written since the values were loaded; every path
        // that moves values must keep that true.
        let url = try Self.copyOfInventory()
        let (context, _) = try Self.open(url)
        let locations = try context.fetch(FetchRequest(entityName: "Location"))
        let garage = try #require(locations.first { $0.value(forKey: "label") as? String == "Garage" })
        let other = try #require(locations.first { $0 !== garage })
        #expect(!garage.isUpdated && !context.hasChanges)
        try garage.setValue("Shed", forKey: "label")
        #expect(garage.isUpdated && garage.changedValues().keys.sorted() == ["label"])
        try garage.setValue("Garage", forKey: "label")
        #expect(!garage.isUpdated && !context.hasChanges)  // set back: no change
        try garage.setValue("Shed", forKey: "label")
        context.undo()
        #expect(!garage.isUpdated && garage.value(forKey: "label") as? String == "Garage")
        context.redo()
        #expect(garage.isUpdated)
        context.rollback()
        #expect(!garage.isUpdated && garage.value(forKey: "label") as? String == "Garage")
        try garage.setValue("Shed", forKey: "label")
        try context.save()
        #expect(!garage.isUpdated && !context.hasChanges)
        try garage.setValue("Garage", forKey: "label")
        #expect(garage.isUpdated)  // differs from the saved "Shed"
        context.refresh(garage, mergeChanges: true)
        #expect(garage.isUpdated && garage.value(forKey: "label") as? String == "Garage")
        context.refresh(garage, mergeChanges: false)
        #expect(!garage.isUpdated && garage.value(forKey: "label") as? String == "Shed")
        #expect(!other.isUpdated)
    }

    @Test func aValueStoredWithAnotherStorageClassDecodesAsValueCodingSaysAndBatchesSurviveARollback() throws {
        let url = try Self.copyOfInventory()
        let raw = try Connection(path: url.path, mode: .readWrite)
        try raw.execute("UPDATE ZINVENTORY SET ZCOUNT = 'twelve' WHERE Z_PK = 1")
        try raw.execute("UPDATE ZINVENTORY SET ZCOUNT = 7.0 WHERE Z_PK = 2")
        let (context, _) = try Self.open(url)
        var request = FetchRequest(entityName: "Inventory")
        request.sortDescriptors = [FLSortDescriptor(key: "date")]
        let byKey = Dictionary(uniqueKeysWithValues: try context.fetch(request).map { ($0.objectID.primaryKey, $0) })
        #expect(byKey[1]?.value(forKey: "count") == nil)  // TEXT in an integer column: no value
        #expect(byKey[2]?.value(forKey: "count") as? Int16 == 7)  // REAL 7.0: converted
        // The temporary _Z_intarray0 made inside a transaction that rolls back is made again.
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

    @Test func insertWithRelationshipsKeepsInversesAndWritesForeignKeys() throws {
        let url = try Self.copyOfInventory()
        let (context, sql) = try Self.open(url)
        let assets = try context.fetch(FetchRequest(entityName: "Asset"))
        let laptop = try #require(assets.first { $0.value(forKey: "label") as? String == "Laptop" })
        let garage = context.object(with: ManagedObjectID(entityName: "Location", storeIdentifier: context.coordinator.store.identifier, primaryKey: 2))
        let inventory = try context.insertObject(entityName: "Inventory")
        #expect(inventory.value(forKey: "count") as? Int16 == 0)  // the model's default
        try inventory.setValue(3, forKey: "count")
        try inventory.setValue(Date(timeIntervalSinceReferenceDate: 820_000_000), forKey: "date")
        try inventory.setValue(laptop, forKey: "asset")
        try garage.addObject(inventory, toRelationship: "inventories")
        #expect(inventory.value(forKey: "location") as? ManagedObject === garage)
        #expect((laptop.value(forKey: "inventories") as? [ManagedObject])?.contains(inventory) == true)
        sql.clear()
        try context.save()
        #expect(sql.sql == [
            // The garage is still a fault: the save reads its version.
            "SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZLABEL FROM ZLOCATION t0 WHERE  t0.Z_PK = ?",
            "BEGIN EXCLUSIVE",
            "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = ?",
            "UPDATE OR FAIL Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_ENT = ? AND Z_MAX = ?",
            "INSERT INTO ZINVENTORY(Z_PK, Z_ENT, Z_OPT, ZCOUNT, ZASSET, ZLOCATION, ZDATE) VALUES(?, ?, ?, ?, ?, ?, ?)",
            // Both sides of each new relationship changed, so both rows are version-checked.
            "UPDATE ZASSET SET Z_OPT = ? WHERE Z_PK = ? AND Z_OPT = ?",
            "UPDATE ZLOCATION SET Z_OPT = ? WHERE Z_PK = ? AND Z_OPT = ?",
            "COMMIT",
        ])
        #expect(sql.arguments[4] == [9, 2, 1, 3, 4, 2, .real(820_000_000)])
        #expect(sql.arguments[5] == [2, 4, 1] && sql.arguments[6] == [2, 2, 1])
        #expect(inventory.objectID.primaryKey == 9)
        // The garage's to-many, never fired, now loads from the store with the new row.
        #expect((garage.value(forKey: "inventories") as? [ManagedObject])?.map(\.objectID.primaryKey) == [4, 5, 9])
    }

    @Test func updateWritesChangedColumnsWithTheVersionChecked() throws {
        let url = try Self.copyOfInventory()
        let (context, sql) = try Self.open(url)
        let location = try #require(try context.fetch(FetchRequest(entityName: "Location")).first)
        try location.setValue("Cellar", forKey: "label")
        #expect(context.updatedObjects == [location])
        #expect(location.changedValues()["label"] as? String == "Cellar")
        #expect(location.committedValues(forKeys: ["label"])["label"] as? String == "Jaye's Basement")
        sql.clear()
        try context.save()
        #expect(sql.sql == ["BEGIN EXCLUSIVE", "UPDATE ZLOCATION SET ZLABEL = ?, Z_OPT = ? WHERE Z_PK = ? AND Z_OPT = ?", "COMMIT"])
        #expect(sql.arguments[1] == ["Cellar", 2, 1, 1])
        #expect(location.version == 2)
        #expect(location.changedValues().isEmpty)
        let raw = try Connection(path: url.path, mode: .readWrite)
        #expect(try raw.query("SELECT Z_OPT, ZLABEL FROM ZLOCATION WHERE Z_PK = 1").first?.values == [2, "Cellar"])
        // Moving an inventory to another asset updates its foreign key only.
        let inventory = context.object(with: ManagedObjectID(entityName: "Inventory", storeIdentifier: context.coordinator.store.identifier, primaryKey: 1))
        let bicycle = context.object(with: ManagedObjectID(entityName: "Asset", storeIdentifier: context.coordinator.store.identifier, primaryKey: 3))
        try inventory.setValue(bicycle, forKey: "asset")
        sql.clear()
        try context.save()
        // Both assets' to-manys changed: their rows are version-checked too.
        #expect(sql.sql == [
            "SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZLABEL FROM ZASSET t0 WHERE  t0.Z_PK = ?",
            "SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZLABEL FROM ZASSET t0 WHERE  t0.Z_PK = ?",
            "BEGIN EXCLUSIVE",
            "UPDATE ZASSET SET Z_OPT = ? WHERE Z_PK = ? AND Z_OPT = ?",
            "UPDATE ZASSET SET Z_OPT = ? WHERE Z_PK = ? AND Z_OPT = ?",
            "UPDATE ZINVENTORY SET ZASSET = ?, Z_OPT = ? WHERE Z_PK = ? AND Z_OPT = ?",
            "COMMIT",
        ])
        #expect(sql.arguments[3] == [2, 1, 1] && sql.arguments[4] == [2, 3, 1])
        #expect(sql.arguments[5] == [3, 2, 1, 1])
    }

    @Test func deleteCascadesAndNullifies() throws {
        let url = try Self.copyOfInventory()
        let (context, sql) = try Self.open(url)
        let mug = context.object(with: ManagedObjectID(entityName: "Asset", storeIdentifier: context.coordinator.store.identifier, primaryKey: 1))
        let basement = context.object(with: ManagedObjectID(entityName: "Location", storeIdentifier: context.coordinator.store.identifier, primaryKey: 1))
        context.delete(mug)
        try context.processPendingChanges()
        #expect(context.deletedObjects.map(\.objectID.primaryKey).sorted() == [1, 1, 6])  // the mug and inventories 1 and 6
        sql.clear()
        try context.save()
        // The locations lose an inventory each (nullified inverse): version-checked.
        #expect(sql.sql == [
            "SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZLABEL FROM ZLOCATION t0 WHERE  t0.Z_PK = ?",
            "SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZLABEL FROM ZLOCATION t0 WHERE  t0.Z_PK = ?",
            "BEGIN EXCLUSIVE",
            "UPDATE ZLOCATION SET Z_OPT = ? WHERE Z_PK = ? AND Z_OPT = ?",
            "UPDATE ZLOCATION SET Z_OPT = ? WHERE Z_PK = ? AND Z_OPT = ?",
            "DELETE FROM ZASSET WHERE Z_PK = ? AND Z_OPT = ?",
            "DELETE FROM ZINVENTORY WHERE Z_PK = ? AND Z_OPT = ?",
            "DELETE FROM ZINVENTORY WHERE Z_PK = ? AND Z_OPT = ?",
            "COMMIT",
        ])
        #expect(sql.arguments[5] == [1, 1] && sql.arguments[6] == [1, 1] && sql.arguments[7] == [6, 1])
        #expect((basement.value(forKey: "inventories") as? [ManagedObject])?.map(\.objectID.primaryKey) == [2, 3])
        let raw = try Connection(path: url.path, mode: .readWrite)
        #expect(try raw.scalar("SELECT COUNT(*) FROM ZINVENTORY") == 6)
        #expect(try raw.scalar("SELECT COUNT(*) FROM ZASSET WHERE Z_PK = 1") == 0)
    }

    @Test func typeErrorsNameEntityAndKey() throws {
        let url = try Self.copyOfInventory()
        let (context, _) = try Self.open(url)
        let inventory = try context.insertObject(entityName: "Inventory")
        #expect(throws: ManagedObjectError.self) { try inventory.setValue("many", forKey: "count") }
        do {
            try inventory.setValue(70_000, forKey: "count")
            Issue.record("an Int16 out of range was accepted")
        } catch let error as ManagedObjectError {
            #expect(error.code == .typeMismatch && error.entityName == "Inventory" && error.key == "count")
            #expect(error.description.contains("Inventory.count"))
        }
        do {
            try inventory.setValue(1, forKey: "colour")
            Issue.record("an unknown key was accepted")
        } catch let error as ManagedObjectError {
            #expect(error.code == .unknownKey && error.key == "colour")
        }
        let location = try context.insertObject(entityName: "Location")
        #expect(throws: ManagedObjectError.self) { try inventory.setValue(location, forKey: "asset") }
        #expect(throws: ManagedObjectError.self) { _ = try context.insertObject(entityName: "Nope") }
    }

    @Test func aReadOnlyStoreRefusesToSaveAndChangesNothing() throws {
        let url = try Self.copyOfInventory()
        let before = try TestSupport.snapshot(of: url.deletingLastPathComponent())
        let (context, _) = try Self.open(url, readOnly: true)
        try context.insertObject(entityName: "Asset").setValue("Kite", forKey: "label")
        do {
            try context.save()
            Issue.record("a read-only store saved")
        } catch let error as StoreError {
            #expect(error.code == .readOnly)
        }
        #expect(context.hasChanges)
        #expect(try TestSupport.snapshot(of: url.deletingLastPathComponent()) == before)
    }

    @Test func rollbackUndoAndRedo() throws {
        let url = try Self.copyOfInventory()
        let (context, _) = try Self.open(url)
        let location = try #require(try context.fetch(FetchRequest(entityName: "Location")).first)
        try location.setValue("Attic", forKey: "label")
        let asset = try context.insertObject(entityName: "Asset")
        try asset.setValue("Lamp", forKey: "label")
        context.undo()  // the label of the lamp
        #expect(asset.value(forKey: "label") == nil)
        context.undo()  // the insert
        #expect(context.insertedObjects.isEmpty)
        context.redo()
        #expect(context.insertedObjects == [asset])
        context.undo()
        context.undo()  // the location's label
        #expect(location.value(forKey: "label") as? String == "Jaye's Basement")
        #expect(!context.hasChanges)
        context.redo()
        #expect(location.value(forKey: "label") as? String == "Attic")
        context.rollback()
        #expect(location.value(forKey: "label") as? String == "Jaye's Basement")
        #expect(!context.hasChanges && !context.canUndo)
        // Undo of a relationship change restores both sides.
        let inventory = context.object(with: ManagedObjectID(entityName: "Inventory", storeIdentifier: context.coordinator.store.identifier, primaryKey: 1))
        let office = context.object(with: ManagedObjectID(entityName: "Location", storeIdentifier: context.coordinator.store.identifier, primaryKey: 3))
        try office.addObject(inventory, toRelationship: "inventories")
        #expect((location.value(forKey: "inventories") as? [ManagedObject])?.contains(inventory) == false)
        context.undo()
        #expect(inventory.value(forKey: "location") as? ManagedObject === location)
        #expect((location.value(forKey: "inventories") as? [ManagedObject])?.contains(inventory) == true)
        #expect((office.value(forKey: "inventories") as? [ManagedObject])?.contains(inventory) == false)
    }

    @Test func fetchesSeePendingChanges() throws {
        let url = try Self.copyOfInventory()
        let (context, sql) = try Self.open(url)
        let drone = try context.insertObject(entityName: "Asset")
        try drone.setValue("Drone", forKey: "label")
        let mug = context.object(with: ManagedObjectID(entityName: "Asset", storeIdentifier: context.coordinator.store.identifier, primaryKey: 1))
        context.delete(mug)
        var request = FetchRequest(entityName: "Asset")
        request.sortDescriptors = [FLSortDescriptor(key: "label")]
        let labels = try context.fetch(request).map { $0.value(forKey: "label") as? String ?? "" }
        #expect(labels == ["Bicycle", "Camping Stove", "Drone", "Laptop", "T-shirt"])
        request.predicate = try FLPredicate(format: "label BEGINSWITH 'D'")
        #expect(try context.fetch(request).contains(drone))
        request.includesPendingChanges = false
        request.predicate = nil
        #expect(try context.fetch(request).count == 5)
        _ = sql
    }

    @Test func didSaveReportsPermanentIDsAndASecondContextMerges() throws {
        let url = try Self.copyOfInventory()
        let (writer, _) = try Self.open(url)
        let reader = ManagedObjectContext(coordinator: writer.coordinator)
        let readerLocation = try #require(try reader.fetch(FetchRequest(entityName: "Location")).first)
        #expect(readerLocation.value(forKey: "label") as? String == "Jaye's Basement")
        var notifications: [SaveNotification] = []
        writer.didSave = { notifications.append($0); reader.mergeChanges(fromContextDidSave: $0) }
        let location = try #require(try writer.fetch(FetchRequest(entityName: "Location")).first)
        try location.setValue("Cellar", forKey: "label")
        let asset = try writer.insertObject(entityName: "Asset")
        try asset.setValue("Kite", forKey: "label")
        try writer.save()
        #expect(notifications.count == 1)
        #expect(notifications.first?.insertedObjectIDs == [asset.objectID])
        #expect(notifications.first?.updatedObjectIDs == [location.objectID])
        #expect(readerLocation.value(forKey: "label") as? String == "Cellar")
    }
}

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
        #expect(Array(sql.sql.prefix(6)) == [
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

/// Statements a test saw, with their arguments.
final class Recorder: @unchecked Sendable {
    private(set) var sql: [String] = []
    private(set) var arguments: [[SQLValue]] = []

    func append(_ statement: String, _ values: [SQLValue]) {
        sql.append(statement)
        arguments.append(values)
    }

    func clear() {
        sql.removeAll()
        arguments.removeAll()
    }
}

/// A store whose metadata cannot be read has no version hashes to check a model against:
/// it opens for reading only, whatever was asked, and is never written with an unchecked model.
@Suite struct UncheckedModelTests {
    static let plists: [(String, String)] = [
        ("NULL", "UPDATE Z_METADATA SET Z_PLIST = NULL"),
        ("empty", "UPDATE Z_METADATA SET Z_PLIST = X''"),
        ("random", "UPDATE Z_METADATA SET Z_PLIST = X'62706C6973743030DEADBEEF0102030405060708'"),
        ("no hashes", "UPDATE Z_METADATA SET Z_PLIST = X'62706C6973743030D101025B4E5353746F7265547970655653514C697465080B17000000000000010100000000000000030000000000000000000000000000001E'"),
    ]

    @Test(arguments: 0..<4)
    func aStoreWithoutReadableHashesRefusesToSaveAndChangesNoByte(index: Int) throws {
        let (label, sql) = Self.plists[index]
        let url = try SaveTests.copyOfInventory()
        do {
            let raw = try Connection(path: url.path, mode: .readWrite)
            try raw.execute(sql)
        }
        let before = try TestSupport.snapshot(of: url.deletingLastPathComponent())
        let (context, _) = try SaveTests.open(url)
        let store = context.coordinator.store
        #expect(store.isReadOnly, "\(label)")
        #expect(store.uncheckedModelWarning?.contains("no readable NSStoreModelVersionHashes") == true, "\(label)")
        try context.insertObject(entityName: "Location").setValue("Shed", forKey: "label")
        do {
            try context.save()
            Issue.record("\(label): an unchecked model was written")
        } catch let error as StoreError {
            #expect(error.code == .readOnly)
            #expect(error.message.contains("could not be checked"))
        }
        #expect(context.hasChanges)
        #expect(try TestSupport.snapshot(of: url.deletingLastPathComponent()) == before, "\(label)")
    }
}

/// Deep predicate trees (issue: stack overflows in `PredicateSQL.operand`).
@Suite struct DeepPredicateSQLTests {
    @Test func aTreeBuiltTooDeepInCodeIsAnErrorNotACrash() throws {
        let (context, _) = try SaveTests.open(try SaveTests.copyOfInventory(), readOnly: true)
        var expression = FLExpression.constant(.int(1))
        for _ in 0..<5_000 { expression = .function("add:to:", [expression, .constant(.int(1))]) }
        var request = FetchRequest(entityName: "Inventory")
        request.predicate = .comparison(.keyPath("count"), .greaterThan, expression)
        for attempt in [{ _ = try context.fetch(request) }, { _ = try context.count(for: request) }] {
            do {
                try attempt()
                Issue.record("a tree too deep was run")
            } catch {
                #expect("\(error)".contains("nested too deeply for SQL"))
            }
        }
    }

    @Test func deepPredicatesFetchOnAPrivateQueueOrFailCleanly() throws {
        // Our walks are safe up to the limit on a dispatch thread's small stack; SQLite's own
        // parser stops at about 100 nested parentheses, with a clear error.
        let (main, _) = try SaveTests.open(try SaveTests.copyOfInventory(), readOnly: true)
        var deepest = 2
        while (try? FLPredicate(format: "count > " + Array(repeating: "0", count: deepest + 1).joined(separator: "+"))) != nil { deepest += 1 }
        let context = ManagedObjectContext(coordinator: main.coordinator, concurrencyType: .privateQueue)
        var request = FetchRequest(entityName: "Inventory")
        request.predicate = try FLPredicate(format: "count > " + Array(repeating: "0", count: 60).joined(separator: "+"))
        #expect(try context.performAndWait { try context.fetch(request).count } == 8)
        request.predicate = try FLPredicate(format: "count > " + Array(repeating: "0", count: deepest).joined(separator: "+"))
        #expect(throws: SQLiteError.self) { try context.performAndWait { try context.fetch(request) } }
    }
}
