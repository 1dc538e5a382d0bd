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
}
