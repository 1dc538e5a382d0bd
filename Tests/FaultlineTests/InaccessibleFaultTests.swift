import Faultline
import FaultlineModel
import FaultlineSQL
import FaultlineTestSupport
import Foundation
import Testing

/// Faults whose row another writer deleted (Core Data's inaccessible faults): with
/// `shouldDeleteInaccessibleFaults` (the default) a read turns them into deleted objects the
/// next save discards; without it the read leaves them faults and the next save reports them.
@Suite struct InaccessibleFaultTests {
    /// The object of `entity`'s row `key` in the context (a fault unless registered loaded).
    static func object(_ context: ManagedObjectContext, _ entity: String, _ key: Int64) -> ManagedObject {
        context.object(with: ManagedObjectID(entityName: entity, storeIdentifier: context.coordinator.store.identifier, primaryKey: key))
    }

    /// A context on a copy of the Inventory sample, a fault of Location `key`, and that
    /// location's row deleted behind the context's back (its inventories left pointing at it).
    static func faultWithRowGone(_ key: Int64 = 2) throws -> (URL, ManagedObjectContext, ManagedObject, Recorder) {
        let url = try SaveTests.copyOfInventory()
        let (context, sql) = try SaveTests.open(url)
        let fault = InaccessibleFaultTests.object(context, "Location", key)
        #expect(fault.isFault)
        let raw = try Connection(path: url.path, mode: .readWrite)
        try raw.execute("DELETE FROM ZLOCATION WHERE Z_PK = ?", [.integer(key)])
        return (url, context, fault, sql)
    }

    @Test func aReadOfAFaultWhoseRowIsGoneDeletesIt() throws {
        let (_, context, fault, _) = try Self.faultWithRowGone()
        #expect(!context.hasChanges)
        #expect(fault.value(forKey: "label") == nil)
        #expect(fault.isDeleted && !fault.isFault)
        #expect((fault.value(forKey: "inventories") as? [ManagedObject])?.isEmpty == true, "no relationship fault to fire: empty")
        #expect(context.deletedObjects == [fault] && context.hasChanges)
        #expect(context.registeredObjects[fault.objectID] === fault)
        // Exempt from validation (the model's rules would refuse a location without a label
        // only if it had one; Deny rules are not checked either).
        try context.validatePendingChanges()
    }

    @Test func theSaveDiscardsItWithoutADeleteAndListsItAsDeleted() throws {
        let (url, context, fault, sql) = try Self.faultWithRowGone()
        _ = fault.value(forKey: "label")
        var saved: SaveNotification?
        context.didSave = { saved = $0 }
        sql.clear()
        try context.save()
        #expect(!sql.sql.contains { $0.hasPrefix("DELETE") }, "the row is gone: nothing to delete")
        #expect(saved?.deletedObjectIDs == [fault.objectID])
        #expect(context.registeredObjects[fault.objectID] == nil && fault.managedObjectContext == nil)
        #expect(!context.hasChanges)
        // The other rows are as they were: the rule of the location's inventories did not run.
        let raw = try Connection(path: url.path, mode: .readOnly)
        #expect(try raw.scalar("SELECT COUNT(*) FROM ZINVENTORY WHERE ZLOCATION = 2") == .integer(2))
    }

    @Test func objectsDidChangeAnnouncesItAsDeleted() throws {
        let (_, context, fault, _) = try Self.faultWithRowGone()
        let deleted = Recorded<Set<ManagedObjectID>>()
        let observer = NotificationCenter.default.addObserver(forName: ManagedObjectContext.objectsDidChangeNotification, object: context, queue: nil) { note in
            let objects = note.userInfo?[ManagedObjectContext.NotificationKey.deletedObjects.rawValue] as? Set<ManagedObject> ?? []
            deleted.value = Set(objects.map(\.objectID))
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        _ = fault.value(forKey: "label")
        try context.processPendingChanges()
        #expect(deleted.value == [fault.objectID])
    }

    @Test func aTypedGetterReadsTheDefault() throws {
        let url = try SaveTests.copyOfInventory()
        let coordinator = try PersistentStoreCoordinator(model: try ManagedObjectModel(contentsOf: SaveTests.modelURL), storeURL: url, options: .init(readOnly: false))
        try coordinator.registerClasses([InventoryItem.self, InventoryLocation.self, InventoryAsset.self])
        let context = ManagedObjectContext(coordinator: coordinator)
        let item = InaccessibleFaultTests.object(context, "Inventory", 4)
        let raw = try Connection(path: url.path, mode: .readWrite)
        try raw.execute("DELETE FROM ZINVENTORY WHERE Z_PK = 4")
        let typed = try #require(item as? InventoryItem)
        #expect(typed.count == 0 && typed.date == nil && typed.location == nil)
        #expect(typed.isDeleted && context.deletedObjects == [typed])
        try context.save()
    }

    @Test func withoutItTheReadLeavesAFaultAndTheNextSaveReportsIt() throws {
        let (_, context, fault, _) = try Self.faultWithRowGone()
        context.shouldDeleteInaccessibleFaults = false
        #expect(fault.value(forKey: "label") == nil)
        #expect(fault.isFault && !fault.isDeleted && !context.hasChanges)
        do {
            try context.save()
            Issue.record("the fault that could not be fulfilled went unreported")
        } catch let error as FetchRequestError {
            #expect(error.message.contains("no longer exists in the store"))
            #expect(error.message.contains(fault.objectID.uriRepresentation))
        }
        // Reported once: the error is not kept past the save that threw it.
        try context.save()
    }

    @Test func rollbackTurnsItBackIntoAFault() throws {
        let (_, context, fault, _) = try Self.faultWithRowGone()
        _ = fault.value(forKey: "label")
        #expect(fault.isDeleted)
        context.rollback()
        #expect(fault.isFault && !fault.isDeleted && !context.hasChanges)
        #expect(context.deletedObjects.isEmpty)
        // Read again: the row is still gone.
        #expect(fault.value(forKey: "label") == nil)
        #expect(fault.isDeleted)
    }

    @Test func deletingAFaultWhoseRowIsGoneSavesWithoutItsRules() throws {
        let (_, context, fault, sql) = try Self.faultWithRowGone()
        context.delete(fault)
        sql.clear()
        try context.save()
        #expect(!sql.sql.contains { $0.hasPrefix("DELETE") })
        #expect(fault.managedObjectContext == nil)
    }

    @Test func withoutItDeletingAFaultWhoseRowIsGoneFailsTheSave() throws {
        let (_, context, fault, _) = try Self.faultWithRowGone()
        context.shouldDeleteInaccessibleFaults = false
        context.delete(fault)
        #expect(throws: FetchRequestError.self) { try context.save() }
        #expect(context.hasChanges && fault.isDeleted)
    }

    @Test func aChildDeletesItAndItsSaveReachesTheParentAndTheStore() throws {
        let (_, parent, _, sql) = try Self.faultWithRowGone()
        let child = ManagedObjectContext(parent: parent)
        let fault = InaccessibleFaultTests.object(child, "Location", 2)
        #expect(fault.value(forKey: "label") == nil)
        #expect(fault.isDeleted && child.deletedObjects == [fault])
        try child.save()
        #expect(parent.deletedObjects.map(\.objectID) == [fault.objectID])
        sql.clear()
        try parent.save()
        #expect(!sql.sql.contains { $0.hasPrefix("DELETE") })
        #expect(!parent.hasChanges)
    }
}

/// A second review: lists that held the object before are no dangling reference; a child's
/// to-many read of a row gone.
@Suite struct InaccessibleFaultSecondReviewTests {
    /// Location 1's inventories are loaded [1, 2, 3]; another writer deletes item 3; a read
    /// finds it gone. Item 1 then moves to location 2: the save writes item 1's foreign key
    /// only, nothing names item 3: location 1's list held item 3 when last saved, so it is no
    /// dangling reference (it was taken for one, and every save failed).
    @Test func aListThatHeldItBeforeIsNotADanglingReference() throws {
        let url = try SaveTests.copyOfInventory()
        let (context, _) = try SaveTests.open(url)
        let one = InaccessibleFaultTests.object(context, "Location", 1)
        let two = InaccessibleFaultTests.object(context, "Location", 2)
        let items = try #require(one.value(forKey: "inventories") as? [ManagedObject])
        #expect(items.count == 3)
        let raw = try Connection(path: url.path, mode: .readWrite)
        try raw.execute("DELETE FROM ZINVENTORY WHERE Z_PK = 3")
        let gone = InaccessibleFaultTests.object(context, "Inventory", 3)
        _ = gone.value(forKey: "count")
        #expect(gone.isDeleted)
        let item1 = InaccessibleFaultTests.object(context, "Inventory", 1)
        try item1.setValue(two, forKey: "location")
        do {
            try context.save()
        } catch {
            Issue.record("save failed: \(error)")
        }
    }

    /// The same with a plain delete of a sibling (the inverse list changes by nullify).
    @Test func deletingASiblingIsNotADanglingReference() throws {
        let url = try SaveTests.copyOfInventory()
        let (context, _) = try SaveTests.open(url)
        let one = InaccessibleFaultTests.object(context, "Location", 1)
        _ = one.value(forKey: "inventories")
        let raw = try Connection(path: url.path, mode: .readWrite)
        try raw.execute("DELETE FROM ZINVENTORY WHERE Z_PK = 3")
        let gone = InaccessibleFaultTests.object(context, "Inventory", 3)
        _ = gone.value(forKey: "count")
        context.delete(InaccessibleFaultTests.object(context, "Inventory", 1))
        do { try context.save() } catch { Issue.record("save failed: \(error)") }
    }

    /// A child reads the fault gone and points a new object at it: the child's save passes;
    /// the parent's save must not write the dangling key.
    @Test func aChildsDanglingReferenceIsCaughtByTheParent() throws {
        let (url, parent, _, _) = try InaccessibleFaultTests.faultWithRowGone(2)
        let child = ManagedObjectContext(parent: parent)
        let fault = InaccessibleFaultTests.object(child, "Location", 2)
        _ = fault.value(forKey: "label")
        #expect(fault.isDeleted)
        let item = InaccessibleFaultTests.object(child, "Inventory", 1)
        try item.setValue(fault, forKey: "location")
        try child.save()
        #expect(throws: MergeConflictError.self) { try parent.save() }
        let raw = try Connection(path: url.path, mode: .readOnly)
        #expect(try raw.scalar("SELECT ZLOCATION FROM ZINVENTORY WHERE Z_PK = 1") == .integer(1))
    }

    /// A child's loaded object whose parent's object is a fault with its row gone: its to-many
    /// reads empty, as in a root context, and the child's next save does not fail on it (it
    /// kept the parent's "no longer exists").
    @Test func aChildsToManyReadOfAGoneRowIsEmpty() throws {
        let url = try SaveTests.copyOfInventory()
        let (parent, _) = try SaveTests.open(url)
        let store = parent.coordinator.store.identifier
        let id = ManagedObjectID(entityName: "Location", storeIdentifier: store, primaryKey: 2)
        let child = ManagedObjectContext(parent: parent)
        let location = child.object(with: id)
        #expect(location.value(forKey: "label") as? String == "Garage")
        parent.refresh(parent.object(with: id), mergeChanges: false)
        let raw = try Connection(path: url.path, mode: .readWrite)
        try raw.execute("DELETE FROM ZLOCATION WHERE Z_PK = 2")
        #expect((location.value(forKey: "inventories") as? [ManagedObject])?.isEmpty == true)
        let other = InaccessibleFaultTests.object(child, "Location", 1)
        try other.setValue("Renamed", forKey: "label")
        do { try child.save() } catch { Issue.record("child save failed: \(error)") }
    }
}

/// A value set from a notification handler, read after it ran (on the same thread).
final class Recorded<Value>: @unchecked Sendable {
    var value: Value?
}

/// What a review found: other changes pointing at an inaccessible object, and undo.
@Suite struct InaccessibleFaultReviewTests {
    @Test func aReferenceToAFaultWhoseRowIsGoneFailsTheSaveReadOrNot() throws {
        for reads in [false, true] {
            let (url, context, fault, _) = try InaccessibleFaultTests.faultWithRowGone(2)
            let item = InaccessibleFaultTests.object(context, "Inventory", 1)
            try item.setValue(fault, forKey: "location")
            if reads {
                _ = fault.value(forKey: "label")
                #expect(fault.isDeleted)
            }
            do {
                try context.save()
                Issue.record("a change pointing at a row that is gone was saved (read first: \(reads))")
            } catch let error as MergeConflictError {
                #expect(error.conflicts.map(\.objectID) == [fault.objectID] && error.conflicts.first?.storeVersion == nil)
            }
            let raw = try Connection(path: url.path, mode: .readOnly)
            #expect(try raw.scalar("SELECT ZLOCATION FROM ZINVENTORY WHERE Z_PK = 1") == .integer(1), "no dangling foreign key written")
        }
    }

    @Test func undoRestoresTheObjectAsItWasBeforeItsFaultFoundTheRowGone() throws {
        let url = try SaveTests.copyOfInventory()
        let (context, _) = try SaveTests.open(url)
        let location = InaccessibleFaultTests.object(context, "Location", 3)
        #expect(location.value(forKey: "label") as? String == "Office")
        try location.setValue("Changed", forKey: "label")
        context.refresh(location, mergeChanges: false)
        let raw = try Connection(path: url.path, mode: .readWrite)
        try raw.execute("DELETE FROM ZLOCATION WHERE Z_PK = 3")
        _ = location.value(forKey: "label")
        #expect(location.isDeleted)
        context.undo()
        #expect(!location.isDeleted && !location.isFault)
        try location.setValue("Again", forKey: "label")
        #expect(context.updatedObjects == [location])
        var saved: SaveNotification?
        context.didSave = { saved = $0 }
        #expect(throws: MergeConflictError.self, "an update of a row that is gone conflicts") { try context.save() }
        #expect(saved == nil && location.managedObjectContext === context)
    }

    @Test func aPartialObjectWhoseRowIsGoneSaysSoAtTheNextSave() throws {
        let url = try SaveTests.copyOfInventory()
        let (context, _) = try SaveTests.open(url)
        var request = FetchRequest(entityName: "Inventory")
        request.propertiesToFetch = ["count"]
        request.sortDescriptors = [FLSortDescriptor(key: "count", ascending: true)]
        let partial = try #require(try context.fetch(request).first)
        let key = partial.objectID.primaryKey
        let raw = try Connection(path: url.path, mode: .readWrite)
        try raw.execute("DELETE FROM ZINVENTORY WHERE Z_PK = ?", [.integer(key)])
        #expect(partial.value(forKey: "count") != nil, "fetched: still there")
        #expect(partial.value(forKey: "location") == nil, "not fetched, and the row is gone")
        do {
            try context.save()
            Issue.record("the properties that could not be loaded went unreported")
        } catch let error as FetchRequestError {
            #expect(error.message.contains("no longer exists in the store"))
        }
    }

    @Test func rollbackAndResetForgetTheErrorsKeptForTheNextSave() throws {
        let (_, context, fault, _) = try InaccessibleFaultTests.faultWithRowGone()
        context.shouldDeleteInaccessibleFaults = false
        for _ in 0..<100 { _ = fault.value(forKey: "label") }
        context.rollback()
        try context.save()
        _ = fault.value(forKey: "label")
        context.reset()
        try context.save()
    }
}
