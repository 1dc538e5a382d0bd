import Faultline
import FaultlineModel
import FaultlineSQL
import Foundation
import Testing

/// The rows a save writes: each UPDATE sets the object's changed columns only, rows changed in
/// the same columns share a statement, and an entity wider than 64 columns is written the
/// same way (its changed columns are listed, not a bit mask). Widths around 31 and 63 cross
/// the written-slot masks' limits (an object's values track 31 slots one by one).
@Suite struct SaveRowTests {
    static func open(attributes: Int) throws -> (ManagedObjectContext, Recorder) {
        let entity = EntityDescription(name: "Wide", attributes: (0..<attributes).map { AttributeDescription(name: "a\($0)", type: .integer64) })
        let store = try SQLiteStore(inMemoryWith: try ManagedObjectModel(entities: [entity]))
        let recorder = Recorder()
        store.connection.addTraceObserver { event in
            if case .statement(let sql, let arguments) = event { recorder.append(sql, arguments) }
        }
        return (ManagedObjectContext(coordinator: PersistentStoreCoordinator(store: store)), recorder)
    }

    @Test(arguments: [5, 30, 31, 32, 33, 63, 64, 65, 70])
    func updatesSetTheChangedColumnsOfEachRow(attributes: Int) throws {
        let (context, sql) = try Self.open(attributes: attributes)
        var objects: [ManagedObject] = []
        for _ in 0..<4 { objects.append(try context.insertObject(entityName: "Wide")) }
        try context.save()
        let last = attributes - 1
        // Objects 1 and 2 change the same two columns, 3 another one, 4 nothing.
        for object in objects[0...1] {
            try object.setValue(Int64(10), forKey: "a0")
            try object.setValue(Int64(11), forKey: "a\(last)")
        }
        try objects[2].setValue(Int64(12), forKey: "a\(last / 2)")
        sql.clear()
        try context.save()
        let updates = sql.sql.indices.filter { sql.sql[$0].hasPrefix("UPDATE ZWIDE") }
        let column = { (n: Int) in "ZA\(n)" }
        #expect(updates.map { sql.sql[$0] } == [
            "UPDATE ZWIDE SET \(column(0)) = ?, \(column(last)) = ?, Z_OPT = ? WHERE Z_PK = ? AND Z_OPT = ?",
            "UPDATE ZWIDE SET \(column(0)) = ?, \(column(last)) = ?, Z_OPT = ? WHERE Z_PK = ? AND Z_OPT = ?",
            "UPDATE ZWIDE SET \(column(last / 2)) = ?, Z_OPT = ? WHERE Z_PK = ? AND Z_OPT = ?",
        ])
        #expect(updates.map { sql.arguments[$0] } == [[10, 11, 2, 1, 1], [10, 11, 2, 2, 1], [12, 2, 3, 1]])
        // What the store holds, read back by a new context.
        let reader = ManagedObjectContext(coordinator: context.coordinator)
        let rows = try reader.fetch(FetchRequest(entityName: "Wide")).sorted { $0.objectID.primaryKey < $1.objectID.primaryKey }
        #expect(rows.map { $0.value(forKey: "a0") as? Int64 } == [10, 10, nil, nil])
        #expect(rows.map { $0.value(forKey: "a\(last)") as? Int64 } == [11, 11, nil, nil])
        #expect(rows.map { $0.value(forKey: "a\(last / 2)") as? Int64 } == [nil, nil, 12, nil])
        #expect(rows.map(\.rowVersion) == [2, 2, 2, 1])
        // A fetched object (its values a row of the fetch's page) sees a change in any column,
        // past the slots its written-slot mask has a bit of its own for too.
        try rows[3].setValue(Int64(13), forKey: "a\(last)")
        #expect(rows[3].changedValues().keys.sorted() == ["a\(last)"])
        try rows[3].setValue(nil, forKey: "a\(last)")
        #expect(rows[3].changedValues().isEmpty)
        #expect(rows[0].changedValues().isEmpty && !rows[0].hasChanges)
    }
}

/// An UPDATE's values that name new objects get their keys in place (the save's update batch:
/// each row's values a range of one buffer), through two statements, and a second save reuses
/// the buffers.
@Suite struct SaveUpdateKeysTests {
    @Test func updatesNamingNewObjectsGetTheirKeys() throws {
        let model = try ManagedObjectModel(entities: [
            EntityDescription(name: "Keeper", attributes: [AttributeDescription(name: "name", type: .string)]),
            EntityDescription(
                name: "Animal", attributes: [AttributeDescription(name: "name", type: .string), AttributeDescription(name: "age", type: .integer64)],
                relationships: [RelationshipDescription(name: "keeper", destination: "Keeper"), RelationshipDescription(name: "friend", destination: "Keeper")]),
        ])
        let coordinator = PersistentStoreCoordinator(store: try SQLiteStore(inMemoryWith: model))
        let writer = ManagedObjectContext(coordinator: coordinator)
        var animals: [ManagedObject] = []
        for index in 0..<5 {
            let animal = try writer.insertObject(entityName: "Animal")
            try animal.setValue("a\(index)", forKey: "name")
            animals.append(animal)
        }
        try writer.save()
        for (index, animal) in animals.enumerated() {
            let keeper = try writer.insertObject(entityName: "Keeper")
            try keeper.setValue("k\(index)", forKey: "name")
            if index % 2 == 0 { try animal.setValue(Int64(index), forKey: "age") }
            try animal.setValue(keeper, forKey: "keeper")
            if index == 3 { try animal.setValue(keeper, forKey: "friend") }
        }
        try writer.save()
        let reader = ManagedObjectContext(coordinator: coordinator)
        var request = FetchRequest(entityName: "Animal")
        request.sortDescriptors = [FLSortDescriptor(key: "name")]
        let fetched = try reader.fetch(request)
        let keepers = fetched.map { ($0.value(forKey: "keeper") as? ManagedObject)?.value(forKey: "name") as? String }
        #expect(keepers == ["k0", "k1", "k2", "k3", "k4"])
        #expect((fetched[3].value(forKey: "friend") as? ManagedObject)?.value(forKey: "name") as? String == "k3")
        #expect(fetched.map { $0.value(forKey: "age") as? Int64 } == [0, nil, 2, nil, 4])
        // A second save reuses the recycled buffers.
        for animal in animals { try animal.setValue("b" + ((animal.value(forKey: "name") as? String) ?? ""), forKey: "name") }
        try writer.save()
        reader.reset()
        #expect(try reader.fetch(request).map { $0.value(forKey: "name") as? String } == ["ba0", "ba1", "ba2", "ba3", "ba4"])
    }
}
