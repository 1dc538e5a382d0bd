import Faultline
import FaultlineModel
import FaultlineSQL
import FaultlineTestSupport
import Foundation
import Testing

/// Counter attributes (`NSTriggerKey`) and R-tree location indexes
/// (`_NSLocationAttributeDerivedComponents`): Core Data keeps both with SQL in the store, and
/// Faultline creates the same SQL (checked word for word against Photos' stores in
/// ``CorpusDDLTests``). Here they run.
@Suite struct StoreTriggerTests {
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(name: "Face", attributes: [
                AttributeDescription(name: "hidden", type: .boolean, defaultValueString: "NO"),
                AttributeDescription(name: "latitude", type: .double),
                AttributeDescription(name: "longitude", type: .double),
                AttributeDescription(name: "boundedByRect", type: .undefined, isTransient: true,
                                     userInfo: ["_NSLocationAttributeDerivedComponents": "latitude, longitude"]),
                // 1 while the photo is visible: a counter through a to-one.
                AttributeDescription(name: "photoVisible", type: .boolean, userInfo: ["NSTriggerKey": "(photo.trashed == NO)"]),
            ], relationships: [
                RelationshipDescription(name: "person", destination: "Person", inverse: "faces"),
                RelationshipDescription(name: "photo", destination: "Photo", inverse: "faces"),
            ]),
            EntityDescription(name: "Person", attributes: [
                // The faces not hidden: a counter through a to-many.
                AttributeDescription(name: "faceCount", type: .integer32, userInfo: ["NSTriggerKey": "(faces.hidden == NO)"]),
            ], relationships: [RelationshipDescription(name: "faces", destination: "Face", inverse: "person", toMany: true)]),
            EntityDescription(name: "Photo", attributes: [AttributeDescription(name: "trashed", type: .boolean, defaultValueString: "NO")],
                              relationships: [RelationshipDescription(name: "faces", destination: "Face", inverse: "photo", toMany: true)]),
        ])
    }

    @Test func theDDLHasTheRTreeAndSevenTriggersPerCounter() throws {
        let statements = SchemaMapping(model: try Self.model()).createStatements()
        #expect(statements.contains(
            "CREATE VIRTUAL TABLE Z_RT_Face_boundedByRect USING RTREE (Z_PK INTEGER PRIMARY KEY, ZLATITUDE_MIN FLOAT, ZLATITUDE_MAX FLOAT, ZLONGITUDE_MIN FLOAT, ZLONGITUDE_MAX FLOAT)"))
        #expect(statements.contains(
            "CREATE TRIGGER Z_RT_Face_boundedByRect_INSERT AFTER INSERT ON ZFACE FOR EACH ROW BEGIN INSERT OR REPLACE INTO Z_RT_Face_boundedByRect (Z_PK, ZLATITUDE_MIN, ZLATITUDE_MAX, ZLONGITUDE_MIN, ZLONGITUDE_MAX) VALUES (NEW.Z_PK, NEW.ZLATITUDE ,NEW.ZLATITUDE, NEW.ZLONGITUDE, NEW.ZLONGITUDE) ; END"))
        #expect(statements.filter { $0.hasPrefix("CREATE TRIGGER ZT_ZPERSON_ZFACECOUNT_ZFACE_") }.count == 7)
        #expect(statements.filter { $0.hasPrefix("CREATE TRIGGER ZT_ZFACE_ZPHOTOVISIBLE_ZPHOTO_") }.count == 7)
        #expect(statements.contains(
            "CREATE TRIGGER ZT_ZPERSON_ZFACECOUNT_ZFACE_INSERT_INCREMENT AFTER INSERT ON ZFACE FOR EACH ROW WHEN NEW.ZHIDDEN == 0 BEGIN UPDATE ZPERSON SET ZFACECOUNT = IFNULL(ZFACECOUNT,0) + 1 WHERE NEW.ZPERSON = Z_PK; SELECT NSCoreDataTriggerUpdateAffectedObjectValue('ZPERSON', Z_ENT, Z_PK, 'ZFACECOUNT', ZFACECOUNT) FROM ZPERSON WHERE Z_PK = NEW.ZPERSON; END"))
    }

    @Test func countersFollowInsertsChangesMovesAndDeletesInTheStoreAndInMemory() throws {
        let store = try SQLiteStore(inMemoryWith: try Self.model())
        let context = ManagedObjectContext(coordinator: PersistentStoreCoordinator(store: store))
        func stored(_ object: ManagedObject, _ column: String) throws -> SQLValue? {
            try store.connection.scalar("SELECT \(column) FROM \(object.entity.name == "Person" ? "ZPERSON" : "ZFACE") WHERE Z_PK = ?", [.integer(object.objectID.primaryKey)])
        }
        let ada = try context.insertObject(entityName: "Person")
        let photo = try context.insertObject(entityName: "Photo")
        var faces: [ManagedObject] = []
        for hidden in [false, false, true] {
            let face = try context.insertObject(entityName: "Face")
            try face.setValue(hidden, forKey: "hidden")
            try face.setValue(ada, forKey: "person")
            try face.setValue(photo, forKey: "photo")
            faces.append(face)
        }
        try context.save()
        #expect(try stored(ada, "ZFACECOUNT") == .integer(2))
        #expect(ada.value(forKey: "faceCount") as? Int32 == 2, "the trigger's report reaches the object")
        #expect(try stored(faces[0], "ZPHOTOVISIBLE") == .integer(1))

        // A hidden face shown, a shown one hidden, one moved to another person, one deleted.
        try faces[2].setValue(false, forKey: "hidden")
        try context.save()
        #expect(try stored(ada, "ZFACECOUNT") == .integer(3))
        let bob = try context.insertObject(entityName: "Person")
        try context.save()
        try faces[1].setValue(bob, forKey: "person")
        try context.save()
        #expect(try stored(ada, "ZFACECOUNT") == .integer(2))
        #expect(try stored(bob, "ZFACECOUNT") == .integer(1))
        #expect(bob.value(forKey: "faceCount") as? Int32 == 1)
        context.delete(faces[0])
        try context.save()
        #expect(try stored(ada, "ZFACECOUNT") == .integer(1))
        #expect(ada.value(forKey: "faceCount") as? Int32 == 1)

        // Through the to-one: the photo trashed, every face of it no longer visible.
        try photo.setValue(true, forKey: "trashed")
        try context.save()
        #expect(try stored(faces[1], "ZPHOTOVISIBLE") == .integer(0))
        #expect(faces[2].value(forKey: "photoVisible") as? Bool == false)
    }

    @Test func theRTreeFollowsTheLocationColumns() throws {
        let store = try SQLiteStore(inMemoryWith: try Self.model())
        let context = ManagedObjectContext(coordinator: PersistentStoreCoordinator(store: store))
        let face = try context.insertObject(entityName: "Face")
        try face.setValue(48.85, forKey: "latitude")
        try face.setValue(2.35, forKey: "longitude")
        try context.save()
        let inParis = "SELECT Z_PK FROM Z_RT_Face_boundedByRect WHERE ZLATITUDE_MIN >= 48 AND ZLATITUDE_MAX <= 49 AND ZLONGITUDE_MIN >= 2 AND ZLONGITUDE_MAX <= 3"
        #expect(try store.connection.scalar(inParis) == .integer(face.objectID.primaryKey))
        try face.setValue(40.7, forKey: "latitude")
        try context.save()
        #expect(try store.connection.scalar(inParis) == nil)
        context.delete(face)
        try context.save()
        #expect(try store.connection.scalar("SELECT count(*) FROM Z_RT_Face_boundedByRect") == .integer(0))
    }
}
