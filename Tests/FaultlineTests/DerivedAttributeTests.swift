import Faultline
import FaultlineModel
import FaultlineSQL
import FaultlineTestSupport
import Foundation
import Testing

/// Derived attributes through a to-one relationship: the store keeps them with Core Data's
/// `Z_DA_` triggers, and a save gives the objects in memory the values the triggers wrote.
@Suite struct DerivedAttributeTests {
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(name: "Item", attributes: [
                AttributeDescription(name: "name", type: .string),
                AttributeDescription(name: "ownerName", type: .string, derivationExpression: "owner.name"),
            ], relationships: [RelationshipDescription(name: "owner", destination: "Owner", inverse: "items")]),
            EntityDescription(name: "Owner", attributes: [AttributeDescription(name: "name", type: .string)], relationships: [
                RelationshipDescription(name: "items", destination: "Item", inverse: "owner", toMany: true)
            ]),
        ])
    }

    @Test func theDDLHasCoreDatasFourTriggers() throws {
        let triggers = SchemaMapping(model: try Self.model()).createStatements().filter { $0.hasPrefix("CREATE TRIGGER") }
        expectSQL(triggers, [
            "CREATE TRIGGER Z_DA_ZITEM_Item_ownerName_SOURCE_INSERT AFTER INSERT ON ZITEM FOR EACH ROW BEGIN UPDATE ZITEM SET ZOWNERNAME = (SELECT ZNAME FROM ZOWNER WHERE Z_PK = NEW.ZOWNER) WHERE Z_PK = NEW.Z_PK; SELECT NSCoreDataDATriggerInsertUpdatedAffectedObjectValue('ZITEM', Z_ENT, Z_PK, 'ownerName', ZOWNERNAME) FROM ZITEM WHERE Z_PK = NEW.Z_PK; END",
            "CREATE TRIGGER Z_DA_ZITEM_Item_ownerName_SOURCE_UPDATE AFTER UPDATE OF ZOWNER ON ZITEM FOR EACH ROW BEGIN UPDATE ZITEM SET ZOWNERNAME = (SELECT ZNAME FROM ZOWNER WHERE Z_PK = NEW.ZOWNER) WHERE Z_PK = NEW.Z_PK; SELECT NSCoreDataDATriggerUpdatedAffectedObjectValue('ZITEM', Z_ENT, Z_PK, 'ownerName', ZOWNERNAME) FROM ZITEM WHERE Z_PK = NEW.Z_PK; END",
            "CREATE TRIGGER Z_DA_ZOWNER_Item_ownerName_PARAMETER_INSERT AFTER INSERT ON ZOWNER FOR EACH ROW BEGIN UPDATE ZITEM SET ZOWNERNAME = NEW.ZNAME WHERE ZOWNER = NEW.Z_PK; SELECT NSCoreDataDATriggerInsertUpdatedAffectedObjectValue('ZITEM', Z_ENT, Z_PK, 'ownerName', ZOWNERNAME) FROM ZITEM WHERE ZOWNER = NEW.Z_PK; END",
            "CREATE TRIGGER Z_DA_ZOWNER_Item_ownerName_PARAMETER_UPDATE AFTER UPDATE OF ZNAME ON ZOWNER FOR EACH ROW BEGIN UPDATE ZITEM SET ZOWNERNAME = NEW.ZNAME WHERE ZOWNER = NEW.Z_PK; SELECT NSCoreDataDATriggerUpdatedAffectedObjectValue('ZITEM', Z_ENT, Z_PK, 'ownerName', ZOWNERNAME) FROM ZITEM WHERE ZOWNER = NEW.Z_PK; END",
        ])
    }

    @Test func savesKeepTheDerivedValueInTheStoreAndInMemory() throws {
        let store = try SQLiteStore(inMemoryWith: try Self.model())
        let context = ManagedObjectContext(coordinator: PersistentStoreCoordinator(store: store))
        func stored(_ object: ManagedObject) throws -> SQLValue? {
            try store.connection.scalar("SELECT ZOWNERNAME FROM ZITEM WHERE Z_PK = ?", [.integer(object.objectID.primaryKey)])
        }
        let ada = try context.insertObject(entityName: "Owner")
        try ada.setValue("Ada", forKey: "name")
        let item = try context.insertObject(entityName: "Item")
        try item.setValue("lamp", forKey: "name")
        try item.setValue(ada, forKey: "owner")
        // A derived attribute is read-only for the app.
        #expect(throws: (any Error).self) { try item.setValue("Eve", forKey: "ownerName") }
        try context.save()
        #expect(try stored(item) == .text("Ada"))
        #expect(item.value(forKey: "ownerName") as? String == "Ada")
        #expect(!item.hasChanges)

        // The destination's attribute changes: PARAMETER_UPDATE copies it to every item.
        try ada.setValue("Ada L.", forKey: "name")
        try context.save()
        #expect(try stored(item) == .text("Ada L."))
        #expect(item.value(forKey: "ownerName") as? String == "Ada L.")

        // The relationship changes: SOURCE_UPDATE.
        let bob = try context.insertObject(entityName: "Owner")
        try bob.setValue("Bob", forKey: "name")
        try item.setValue(bob, forKey: "owner")
        try context.save()
        #expect(try stored(item) == .text("Bob"))
        #expect(item.value(forKey: "ownerName") as? String == "Bob")

        // Another context reads the stored value.
        let other = ManagedObjectContext(coordinator: PersistentStoreCoordinator(store: store))
        let fetched = try other.fetch(FetchRequest(entityName: "Item"))
        #expect(fetched.first?.value(forKey: "ownerName") as? String == "Bob")
    }

    /// A copy of the macOS 16 Photos store, written through its cached model: inserting a
    /// GraphNode fires Apple's own `Z_DA_` triggers, which call Core Data's trigger functions.
    @Test(.enabled(if: Corpus.shouldRun, Corpus.skipMessage))
    func applesTriggersRunWhenFaultlineWritesAPhotosStore() throws {
        let corpus = try Corpus.required()
        let copy = try CorpusStoreCopies.copy("photos-16.0.0-beta/Photos.sqlite", corpus: corpus)
        defer { try? FileManager.default.removeItem(at: copy.deletingLastPathComponent()) }
        let coordinator = try PersistentStoreCoordinator(storeURL: copy, options: .init(readOnly: false))
        let context = ManagedObjectContext(coordinator: coordinator)
        let label = try context.insertObject(entityName: "GraphLabel")
        try label.setValue(Int32(7), forKey: "code")
        let node = try context.insertObject(entityName: "GraphNode")
        try node.setValue(label, forKey: "primaryLabel")
        try context.save()
        #expect(node.value(forKey: "primaryLabelCode") as? Int32 == 7)
        let stored = try coordinator.store.connection.scalar(
            "SELECT ZPRIMARYLABELCODE FROM ZGRAPHNODE WHERE Z_PK = ?", [.integer(node.objectID.primaryKey)])
        #expect(stored == .integer(7))
        try label.setValue(Int32(9), forKey: "code")
        try context.save()
        #expect(node.value(forKey: "primaryLabelCode") as? Int32 == 9)
    }
}
