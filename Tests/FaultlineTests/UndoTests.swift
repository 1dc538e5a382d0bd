import Faultline
import FaultlineModel
import FaultlineSQL
import FaultlineTestSupport
import Foundation
import Testing

/// Undo, redo and rollback of attribute, insert and relationship changes.
@Suite struct UndoTests {
    @Test func rollbackUndoAndRedo() throws {
        let url = try SaveTests.copyOfInventory()
        let (context, _) = try SaveTests.open(url)
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

    @Test func undoingTheDeleteRulesMakesTheSaveRunThemAgain() throws {
        // Found by StateMachineTests (delete, processPendingChanges, undo, save): the save
        // deleted the asset and left the inventories its Cascade rule deletes, naming it.
        let url = try SaveTests.copyOfInventory()
        let (context, _) = try SaveTests.open(url)
        let store = context.coordinator.store.identifier
        let mug = context.object(with: ManagedObjectID(entityName: "Asset", storeIdentifier: store, primaryKey: 1))
        context.delete(mug)
        try context.processPendingChanges()
        #expect(context.deletedObjects.count == 3)
        context.undo()  // the rules' step: the inventories come back; the mug stays deleted
        #expect(mug.isDeleted && context.deletedObjects.count == 1)
        try context.save()
        let raw = try Connection(path: url.path, mode: .readOnly)
        #expect(try raw.scalar("SELECT COUNT(*) FROM ZASSET WHERE Z_PK = 1") == 0)
        #expect(try raw.scalar("SELECT COUNT(*) FROM ZINVENTORY WHERE ZASSET IS NOT NULL AND ZASSET NOT IN (SELECT Z_PK FROM ZASSET)") == 0)
        #expect(try raw.scalar("SELECT COUNT(*) FROM ZINVENTORY") == 6)
    }

    @Test func undoingTheDeleteRulesRestoresEveryRuleThatRanInTheStep() throws {
        // The stove holds inventories 3 and 5. Deleting inventory 3 and the garage (which
        // cascades to 5) runs both Nullify rules on the stove in one step; undoing it and
        // running the rules again must take both out of the stove's inventories.
        let url = try SaveTests.copyOfInventory()
        let (context, _) = try SaveTests.open(url)
        let store = context.coordinator.store.identifier
        let stove = context.object(with: ManagedObjectID(entityName: "Asset", storeIdentifier: store, primaryKey: 5))
        #expect((stove.value(forKey: "inventories") as? [ManagedObject])?.map(\.objectID.primaryKey).sorted() == [3, 5])
        context.delete(context.object(with: ManagedObjectID(entityName: "Location", storeIdentifier: store, primaryKey: 2)))
        context.delete(context.object(with: ManagedObjectID(entityName: "Inventory", storeIdentifier: store, primaryKey: 3)))
        try context.processPendingChanges()
        #expect((stove.value(forKey: "inventories") as? [ManagedObject])?.isEmpty == true)
        context.undo()
        try context.processPendingChanges()
        #expect((stove.value(forKey: "inventories") as? [ManagedObject])?.isEmpty == true)
        try context.save()
        let raw = try Connection(path: url.path, mode: .readOnly)
        #expect(try raw.scalar("SELECT COUNT(*) FROM ZINVENTORY WHERE ZASSET = 5") == 0)
    }

    @Test func runningTheDeleteRulesAgainForAChildsDeletionMakesNoEmptyUndoStep() throws {
        // A child's save pushes its deletions with their rules' effects; the parent runs the
        // rules again, which change nothing for objects whose to-many is loaded, and must not
        // leave a step that undoes nothing.
        let url = try SaveTests.copyOfInventory()
        let (parent, _) = try SaveTests.open(url)
        let store = parent.coordinator.store.identifier
        let mug = parent.object(with: ManagedObjectID(entityName: "Asset", storeIdentifier: store, primaryKey: 1))
        let basement = parent.object(with: ManagedObjectID(entityName: "Location", storeIdentifier: store, primaryKey: 1))
        _ = (mug.value(forKey: "inventories"), basement.value(forKey: "inventories"))
        let child = ManagedObjectContext(parent: parent)
        child.delete(try child.existingObject(with: ManagedObjectID(entityName: "Inventory", storeIdentifier: store, primaryKey: 1)))
        try child.save()
        #expect((mug.value(forKey: "inventories") as? [ManagedObject])?.map(\.objectID.primaryKey) == [6])
        try parent.processPendingChanges()
        parent.undo()  // the child's save, not an empty step
        #expect((mug.value(forKey: "inventories") as? [ManagedObject])?.map(\.objectID.primaryKey).sorted() == [1, 6])
        #expect(!parent.hasChanges)
    }
}
