import Faultline
import FaultlineModel
import FaultlinePredicate
import FaultlineTestSupport
import Foundation
import Testing

/// The fetched-results controller: sections, and the changes of each objects-did-change.
@Suite struct FetchedResultsControllerTests {
    /// Inventory rows: Garage [5 (1), 4 (2)], Jaye's Basement [3 (1), 1 (12), 2 (30)],
    /// Office [7 (1), 6 (4), 8 (6)] — primary key (count).
    static func controller(_ context: ManagedObjectContext, predicate: String? = nil) throws -> (FetchedResultsController, Locked<[FetchedResultsController.Changes]>) {
        var request = FetchRequest(entityName: "Inventory")
        request.sortDescriptors = [FLSortDescriptor(key: "location.label"), FLSortDescriptor(key: "count")]
        if let predicate { request.predicate = try FLPredicate(format: predicate) }
        let controller = try FetchedResultsController(fetchRequest: request, context: context, sectionNameKeyPath: "location.label")
        let log = Locked<[FetchedResultsController.Changes]>([])
        controller.onChange = { changes in log.update { $0.append(changes) } }
        try controller.performFetch()
        return (controller, log)
    }

    static func keys(_ controller: FetchedResultsController) -> [[Int64]] {
        (controller.sections ?? []).map { $0.objects.map(\.objectID.primaryKey) }
    }

    static func inventory(_ context: ManagedObjectContext, _ pk: Int64) throws -> ManagedObject {
        try ObservationTests.object(context, "Inventory", pk)
    }

    static func changes(_ log: Locked<[FetchedResultsController.Changes]>) -> [String] {
        log.value.last.map { $0.sectionChanges.map(\.description) + $0.objectChanges.map(\.description) } ?? []
    }

    @Test func sectionsByKeyPathAndIndexPaths() throws {
        let (context, _) = try ObservationTests.open()
        let (controller, log) = try Self.controller(context)
        #expect(controller.sections?.map(\.name) == ["Garage", "Jaye's Basement", "Office"])
        #expect(controller.sections?.map(\.indexTitle) == ["G", "J", "O"])
        #expect(Self.keys(controller) == [[5, 4], [3, 1, 2], [7, 6, 8]])
        #expect(controller.fetchedObjects?.count == 8)
        let first = controller.object(at: [1, 2])
        #expect(first.objectID.primaryKey == 2)
        #expect(controller.indexPath(forObject: first) == [1, 2])
        #expect(controller.snapshot.sectionIdentifiers == ["Garage", "Jaye's Basement", "Office"])
        #expect(controller.snapshot.itemIdentifiers.map(\.primaryKey) == [5, 4, 3, 1, 2, 7, 6, 8])
        #expect(log.value.isEmpty)
        #expect(throws: FetchRequestError.self) { try FetchedResultsController(fetchRequest: FetchRequest(entityName: "Inventory"), context: context) }
    }

    @Test func editsAreReportedAsMovesUpdatesInsertsDeletesAndSectionChanges() throws {
        let (context, _) = try ObservationTests.open()
        let (controller, log) = try Self.controller(context)

        // A count that changes the order within a section: a move; the others stay.
        try Self.inventory(context, 1).setValue(0, forKey: "count")
        try context.processPendingChanges()
        #expect(Self.changes(log) == ["move [1, 1] → [1, 0]"])
        #expect(Self.keys(controller) == [[5, 4], [1, 3, 2], [7, 6, 8]])

        // A count that keeps the place: an update.
        try Self.inventory(context, 2).setValue(40, forKey: "count")
        try context.processPendingChanges()
        #expect(Self.changes(log) == ["update [1, 2]"])

        // A new object, and one moved to another section.
        let garage = try ObservationTests.object(context, "Location", 2)
        let office = try ObservationTests.object(context, "Location", 3)
        let box = try context.insertObject(entityName: "Inventory")
        try box.setValue(3, forKey: "count")
        try box.setValue(garage, forKey: "location")
        try Self.inventory(context, 4).setValue(office, forKey: "location")
        try context.processPendingChanges()
        #expect(Self.changes(log) == ["insert [0, 1]", "move [0, 1] → [2, 1]"])
        #expect(Self.keys(controller).map(\.count) == [2, 3, 4])
        #expect(controller.object(at: [0, 1]) === box)

        // Emptying a section deletes it; a new label makes a new one.
        context.delete(try Self.inventory(context, 5))
        context.delete(box)
        try context.processPendingChanges()
        #expect(Self.changes(log) == ["delete section 0 \"Garage\"", "delete [0, 0]", "delete [0, 1]"])
        try office.setValue("Attic", forKey: "label")  // not an Inventory: the controller is not told
        try Self.inventory(context, 4).setValue(5, forKey: "count")
        try context.processPendingChanges()
        // Office's objects move to Attic (inv 4 changed place there too); the Basement's stay.
        #expect(Self.changes(log) == [
            "delete section 1 \"Office\"", "insert section 0 \"Attic\"",
            "move [1, 0] → [0, 0]", "move [1, 2] → [0, 1]", "move [1, 1] → [0, 2]", "move [1, 3] → [0, 3]",
        ])
        #expect(controller.sections?.map(\.name) == ["Attic", "Jaye's Basement"])
        #expect(Self.keys(controller) == [[7, 6, 4, 8], [1, 3, 2]])

        // Undo is followed too.
        context.undo()
        #expect(Self.changes(log) == ["move [0, 2] → [0, 1]"])
        #expect(log.value.last?.snapshot == controller.snapshot)
    }

    @Test func thePredicateIsMatchedAgainInMemory() throws {
        let (context, _) = try ObservationTests.open()
        let (controller, log) = try Self.controller(context, predicate: "count > 1")
        #expect(Self.keys(controller) == [[4], [1, 2], [6, 8]])
        try Self.inventory(context, 3).setValue(5, forKey: "count")  // now matches
        try Self.inventory(context, 1).setValue(1, forKey: "count")  // no longer
        try context.processPendingChanges()
        #expect(Self.changes(log) == ["delete [1, 0]", "insert [1, 0]"])
        #expect(Self.keys(controller) == [[4], [3, 2], [6, 8]])
    }

    @Test func aSaveInAnotherContextMergedIn() throws {
        let (viewContext, _) = try ObservationTests.open()
        viewContext.automaticallyMergesChangesFromParent = true
        let (controller, log) = try Self.controller(viewContext)
        let background = ManagedObjectContext(coordinator: viewContext.coordinator)
        let shelf = try background.insertObject(entityName: "Inventory")
        try shelf.setValue(9, forKey: "count")
        try shelf.setValue(try ObservationTests.object(background, "Location", 2), forKey: "location")
        background.delete(try Self.inventory(background, 2))
        try Self.inventory(background, 6).setValue(10, forKey: "count")
        try background.save()

        #expect(Self.changes(log) == ["delete [1, 2]", "insert [0, 2]", "move [2, 1] → [2, 2]"])
        #expect(Self.keys(controller) == [[5, 4, shelf.objectID.primaryKey], [3, 1], [7, 8, 6]])
        #expect(controller.object(at: [0, 2]).objectID == shelf.objectID)
    }

    @Test func aSaveGivesTheSnapshotPermanentIDsAndAResetFetchesAgain() throws {
        let (context, _) = try ObservationTests.open()
        let (controller, log) = try Self.controller(context)
        let box = try context.insertObject(entityName: "Inventory")
        try box.setValue(3, forKey: "count")
        try box.setValue(try ObservationTests.object(context, "Location", 2), forKey: "location")
        try context.save()
        let updates = log.value
        #expect(updates.count == 2)
        #expect(updates[0].objectChanges.map(\.description) == ["insert [0, 2]"])
        #expect(updates[0].snapshot.sections[0].objectIDs[2].isTemporaryID)
        #expect(updates[1].objectChanges.isEmpty)
        #expect(updates[1].snapshot.sections[0].objectIDs[2] == box.objectID && !box.objectID.isTemporaryID)

        context.reset()
        #expect(Self.keys(controller) == [[5, 4, box.objectID.primaryKey], [3, 1, 2], [7, 6, 8]])
        #expect(controller.fetchedObjects?.allSatisfy { $0.managedObjectContext === context } == true)
        #expect(log.value.last?.objectChanges.count == 18)  // every object deleted and inserted again
    }
}
