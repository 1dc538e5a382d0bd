import Faultline
import FaultlineModel
import FaultlinePredicate
import FaultlineSQL
import FaultlineTestSupport
import Foundation
import Testing

/// Child contexts: fetching through the parent, saving into it, temporary IDs across both.
@Suite struct ChildContextTests {
    static func open() throws -> (URL, ManagedObjectContext, Recorder) {
        let url = try SaveTests.copyOfInventory()
        let (context, recorder) = try SaveTests.open(url)
        return (url, context, recorder)
    }

    static func labels(_ objects: some Sequence<ManagedObject>) -> [String] {
        objects.map { $0.value(forKey: "label") as? String ?? "" }
    }

    @Test func aChildSeesItsParentsUnsavedChanges() throws {
        let (_, parent, sql) = try Self.open()
        let locations = try parent.fetch(FetchRequest(entityName: "Location"))
        try locations[0].setValue("Cellar", forKey: "label")
        try parent.insertObject(entityName: "Location").setValue("Attic", forKey: "label")
        parent.delete(locations[2])

        let child = ManagedObjectContext(parent: parent)
        #expect(child.parent === parent)
        sql.clear()
        var request = FetchRequest(entityName: "Location")
        request.sortDescriptors = [FLSortDescriptor(key: "label")]
        let seen = try child.fetch(request)
        #expect(Self.labels(seen) == ["Attic", "Cellar", "Garage"])
        #expect(seen.allSatisfy { $0.managedObjectContext === child && !$0.hasChanges })
        #expect(seen[1].objectID == locations[0].objectID)
        expectSQL(sql.sql, ["SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZLABEL FROM ZLOCATION t0 ORDER BY t0.ZLABEL"])
        #expect(try child.count(for: FetchRequest(entityName: "Location")) == 3)
        // A fault fires from the parent's object, unsaved values included.
        let cellar = child.object(with: locations[0].objectID)
        #expect(cellar.value(forKey: "label") as? String == "Cellar")
    }

    @Test func aChildSavePushesIntoTheParentAndTheParentWritesIt() throws {
        let (url, parent, sql) = try Self.open()
        let child = ManagedObjectContext(parent: parent)
        let garage = try child.existingObject(with: ManagedObjectID(entityName: "Location", storeIdentifier: parent.coordinator.store.identifier, primaryKey: 2))
        let laptop = try #require(try child.fetch(FetchRequest(entityName: "Asset")).first { $0.value(forKey: "label") as? String == "Laptop" })
        let mug = try #require(try child.fetch(FetchRequest(entityName: "Asset")).first { $0.value(forKey: "label") as? String == "Coffee Mug" })
        try garage.setValue("Carport", forKey: "label")
        let inventory = try child.insertObject(entityName: "Inventory")
        try inventory.setValue(7, forKey: "count")
        try inventory.setValue(laptop, forKey: "asset")
        try garage.addObject(inventory, toRelationship: "inventories")
        let temporaryID = inventory.objectID
        child.delete(mug)
        var pushed: [SaveNotification] = []
        child.didSave = { pushed.append($0) }

        sql.clear()
        try child.save()
        #expect(!child.hasChanges)
        #expect(pushed.first?.insertedObjectIDs == [temporaryID])
        #expect(!sql.sql.contains { $0.hasPrefix("INSERT") || $0.hasPrefix("UPDATE") || $0.hasPrefix("DELETE") || $0.hasPrefix("BEGIN") })
        let raw = try Connection(path: url.path, mode: .readOnly)
        #expect(try raw.scalar("SELECT COUNT(*) FROM ZINVENTORY") == 8)

        // The parent has the changes, the inserted object under the child's temporary ID.
        #expect(parent.hasChanges)
        let parentInventory = try #require(parent.insertedObjects.first)
        #expect(parentInventory.objectID == temporaryID)
        #expect(parentInventory.value(forKey: "count") as? Int16 == 7)
        #expect((parentInventory.value(forKey: "location") as? ManagedObject)?.value(forKey: "label") as? String == "Carport")
        #expect((parentInventory.value(forKey: "asset") as? ManagedObject)?.value(forKey: "label") as? String == "Laptop")
        #expect(parent.updatedObjects.map(\.objectID).contains(garage.objectID))
        #expect(parent.deletedObjects.map(\.objectID.primaryKey).contains(1))

        // The parent's save writes them; the child's temporary ID follows to the new row.
        try parent.save()
        #expect(try raw.query("SELECT ZCOUNT, ZASSET, ZLOCATION FROM ZINVENTORY WHERE Z_PK = 9").first?.values == [7, 4, 2])
        #expect(try raw.scalar("SELECT ZLABEL FROM ZLOCATION WHERE Z_PK = 2") == "Carport")
        #expect(try raw.scalar("SELECT COUNT(*) FROM ZASSET WHERE Z_PK = 1") == 0)
        #expect(inventory.objectID == temporaryID)
        try inventory.setValue(8, forKey: "count")
        try child.save()  // resolved through the parent's permanent ID
        #expect(!inventory.objectID.isTemporaryID && inventory.objectID.primaryKey == 9)
        #expect(child.object(with: inventory.objectID) === inventory)
        try parent.save()
        #expect(try raw.scalar("SELECT ZCOUNT FROM ZINVENTORY WHERE Z_PK = 9") == 8)
    }

    @Test func objectsInsertedInTheParentAreSeenByTheChildAndFollowTheParentsSave() throws {
        let (url, parent, _) = try Self.open()
        let kite = try parent.insertObject(entityName: "Asset")
        try kite.setValue("Kite", forKey: "label")
        let child = ManagedObjectContext(parent: parent)
        let childKite = try child.existingObject(with: kite.objectID)
        #expect(childKite.value(forKey: "label") as? String == "Kite")
        try parent.save()
        // The child adopts the permanent ID when it next asks its parent.
        _ = try child.fetch(FetchRequest(entityName: "Location"))
        #expect(childKite.objectID == kite.objectID && !childKite.objectID.isTemporaryID)
        try childKite.setValue("Box kite", forKey: "label")
        try child.save()
        try parent.save()
        let raw = try Connection(path: url.path, mode: .readOnly)
        #expect(try raw.scalar("SELECT ZLABEL FROM ZASSET WHERE Z_PK = 6") == "Box kite")
    }

    @Test func aChildsRollbackAndAFailedSaveLeaveTheParentAlone() throws {
        let (_, parent, _) = try Self.open()
        let child = ManagedObjectContext(parent: parent)
        let office = try child.existingObject(with: ManagedObjectID(entityName: "Location", storeIdentifier: parent.coordinator.store.identifier, primaryKey: 3))
        try office.setValue("Study", forKey: "label")
        child.rollback()
        #expect(office.value(forKey: "label") as? String == "Office")
        #expect(!parent.hasChanges)

        // An object the parent no longer has: the save fails whole, the child keeps its changes.
        let kite = try parent.insertObject(entityName: "Asset")
        let childKite = try child.existingObject(with: kite.objectID)
        parent.rollback()
        try childKite.setValue("Kite", forKey: "label")
        try office.setValue("Study", forKey: "label")
        #expect(throws: ManagedObjectError.self) { try child.save() }
        #expect(!parent.hasChanges)
        #expect(child.hasChanges && office.value(forKey: "label") as? String == "Study")
    }

    @Test func aPrivateQueueChildOfAPrivateQueueParent() throws {
        let url = try SaveTests.copyOfInventory()
        let model = try ManagedObjectModel(contentsOf: SaveTests.modelURL)
        let coordinator = try PersistentStoreCoordinator(model: model, storeURL: url, options: .init(readOnly: false))
        let parent = ManagedObjectContext(coordinator: coordinator, concurrencyType: .privateQueue)
        let child = ManagedObjectContext(parent: parent, concurrencyType: .privateQueue)
        for context in [parent, child] {
            context.concurrencyDebug = true
            context.concurrencyViolationHandler = { Issue.record("\($0)") }
        }
        let id: ManagedObjectID = try child.performAndWait {
            let asset = try child.insertObject(entityName: "Asset")
            try asset.setValue("Drone", forKey: "label")
            try child.save()
            return asset.objectID
        }
        #expect(id.isTemporaryID)
        let inserted = parent.performAndWait { parent.insertedObjects.map(\.objectID) }
        #expect(inserted == [id])
        // Nested: the parent's block waits for the child, whose block calls back into the parent.
        let labels = try parent.performAndWait {
            try child.performAndWait {
                try child.fetch(FetchRequest(entityName: "Asset")).compactMap { $0.value(forKey: "label") as? String }.sorted()
            }
        }
        #expect(labels == ["Bicycle", "Camping Stove", "Coffee Mug", "Drone", "Laptop", "T-shirt"])
        try parent.performAndWait { try parent.save() }
        let raw = try Connection(path: url.path, mode: .readOnly)
        #expect(try raw.scalar("SELECT ZLABEL FROM ZASSET WHERE Z_PK = 6") == "Drone")
    }

    /// A private-queue child of a main-queue parent, used from the main actor: the child's
    /// block (run on the main queue's thread) calls back into the parent without deadlock.
    @MainActor
    @Test func aPrivateQueueChildOfAMainQueueParentFromTheMainActor() throws {
        let url = try SaveTests.copyOfInventory()
        let model = try ManagedObjectModel(contentsOf: SaveTests.modelURL)
        let coordinator = try PersistentStoreCoordinator(model: model, storeURL: url, options: .init(readOnly: false))
        let parent = ManagedObjectContext(coordinator: coordinator, concurrencyType: .mainQueue)
        let child = ManagedObjectContext(parent: parent, concurrencyType: .privateQueue)
        for context in [parent, child] {
            context.concurrencyDebug = true
            context.concurrencyViolationHandler = { Issue.record("\($0)") }
        }
        try child.performAndWait {
            let asset = try child.insertObject(entityName: "Asset")
            try asset.setValue("Drone", forKey: "label")
            #expect(try child.count(for: FetchRequest(entityName: "Asset")) == 6)
            try child.save()
        }
        #expect(parent.insertedObjects.count == 1)
        try parent.save()
        let raw = try Connection(path: url.path, mode: .readOnly)
        #expect(try raw.scalar("SELECT ZLABEL FROM ZASSET WHERE Z_PK = 6") == "Drone")
    }
}
