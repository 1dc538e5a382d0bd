import Faultline
import FaultlineTestSupport
import Foundation
import Testing

/// The README's library example, run as written (on a copy of the sample store).
@Suite struct ReadmeExampleTests {
    @Test func theReadmeExampleRuns() throws {
        let folder = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let storeURL = folder.appendingPathComponent("Inventory.sqlite")
        try FileManager.default.copyItem(at: TestSupport.inventoryFolder.appendingPathComponent("Inventory.sqlite"), to: storeURL)

        let model = try ManagedObjectModel(contentsOf: TestSupport.inventoryFolder.appendingPathComponent("Inventory.xcdatamodeld"))
        let coordinator = try PersistentStoreCoordinator(model: model, storeURL: storeURL, options: SQLiteStore.Options(readOnly: false))
        let context = ManagedObjectContext(coordinator: coordinator)

        var request = FetchRequest(entityName: "Inventory")
        request.predicate = try FLPredicate(format: "count > %d AND location.label == %@", 1, "Garage")
        request.sortDescriptors = [FLSortDescriptor(key: "date", ascending: false)]
        request.relationshipKeyPathsForPrefetching = ["asset"]
        var lines: [String] = []
        for inventory in try context.fetch(request) {
            lines.append("\(inventory.value(forKeyPath: "asset.label") ?? "-") \(inventory.value(forKey: "count") ?? 0)")
        }
        #expect(lines == ["Bicycle 2"])

        let shed = try context.insertObject(entityName: "Location")
        try shed.setValue("Shed", forKey: "label")
        try context.save()
        #expect(shed.objectID.uriRepresentation == "x-coredata://F00DF00D-0000-4000-8000-000000000001/Location/p4")
    }
}
