import Faultline
import FaultlineModel
import FaultlineSQL
import FaultlineTestSupport
import Foundation
import Testing

/// Opening a store file: read-only sessions change no byte, a missing store is not created.
@Suite struct StoreOpeningTests {
    @Test func aReadOnlySessionLeavesTheFolderAsItWas() throws {
        let folder = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let copy = folder.appendingPathComponent("Inventory.sqlite")
        try FileManager.default.copyItem(at: InventoryStoreTests.storeURL, to: copy)
        let before = try TestSupport.snapshot(of: folder)
        do {
            let model = try ManagedObjectModel(contentsOf: InventoryStoreTests.modelURL)
            let coordinator = try PersistentStoreCoordinator(model: model, storeURL: copy)
            let context = ManagedObjectContext(coordinator: coordinator)
            var request = FetchRequest(entityName: "Inventory")
            request.relationshipKeyPathsForPrefetching = ["asset"]  // fills a temporary id table
            _ = try context.fetch(request)
            #expect(coordinator.store.isReadOnly)
        }
        #expect(try TestSupport.snapshot(of: folder) == before)
    }

    @Test func aMissingStoreIsNotCreatedWithoutWriteAccess() throws {
        let folder = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let model = try ManagedObjectModel(contentsOf: InventoryStoreTests.modelURL)
        let missing = folder.appendingPathComponent("New.sqlite")
        let error = #expect(throws: PersistentStoreError.self) { try PersistentStoreCoordinator(model: model, storeURL: missing) }
        #expect(error?.code == .fileNotFound)
        #expect(!FileManager.default.fileExists(atPath: missing.path))
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
        } catch let error as PersistentStoreError {
            #expect(error.code == .readOnly)
            #expect(error.message.contains("could not be checked"))
        }
        #expect(context.hasChanges)
        #expect(try TestSupport.snapshot(of: url.deletingLastPathComponent()) == before, "\(label)")
    }
}
