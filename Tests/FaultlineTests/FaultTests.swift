import Faultline
import FaultlineModel
import FaultlineSQL
import FaultlineTestSupport
import Foundation
import Testing

/// Faults: objects reached through relationships load when touched, with Core Data's SQL.
@Suite struct InventoryFaultingTests {
    func open() throws -> (ManagedObjectContext, SQLStatements, Messages) {
        let model = try ManagedObjectModel(contentsOf: InventoryStoreTests.modelURL)
        let coordinator = try PersistentStoreCoordinator(model: model, storeURL: InventoryStoreTests.storeURL)
        let statements = SQLStatements()
        let messages = Messages()
        coordinator.store.connection.addTraceObserver { event in
            switch event {
            case .statement(let sql, let arguments): statements.append(sql, arguments)
            case .message(let category, let text): messages.append("\(category): \(text)")
            case .detail(let levels, let category, let text) where levels.contains(1): messages.append("\(category): \(text())")
            default: break
            }
        }
        return (ManagedObjectContext(coordinator: coordinator), statements, messages)
    }

    @Test func aToOneIsAFaultUntilTouched() throws {
        let (context, statements, messages) = try open()
        let inventory = try #require(try context.fetch(FetchRequest(entityName: "Inventory")).first)
        let asset = try #require(inventory.value(forKey: "asset") as? ManagedObject)
        #expect(asset.isFault)
        #expect(statements.sql.count == 1)
        #expect(asset.value(forKey: "label") as? String == "Coffee Mug")
        #expect(!asset.isFault)
        #expect(statements.sql.last == "SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZLABEL FROM ZASSET t0 WHERE  t0.Z_PK = ?")
        #expect(statements.arguments.last == [.integer(1)])
        #expect(messages.lines.last == "annotation: fault fulfilled from database for : \(asset.objectID.uriRepresentation)")
    }

    /// A to-one read of a loaded object: an unregistered destination is made and registered
    /// once, the same object every read; once the context is gone, an object kept reads nil
    /// and keeps no other object alive.
    @Test func toOneReadsRegisterOnceAndAnObjectKeptAfterItsContextKeepsNoOther() throws {
        weak var other: ManagedObject?
        weak var destination: ManagedObject?
        var kept: ManagedObject?
        do {
            let (context, statements, _) = try open()
            let inventories = Array(try context.fetch(FetchRequest(entityName: "Inventory")))
            kept = inventories[0]
            other = inventories[1]
            #expect(context.registeredObjects.count == 8)
            let asset = try #require(inventories[0].value(forKey: "asset") as? ManagedObject)
            #expect(asset.isFault && context.registeredObjects[asset.objectID] === asset)
            #expect(context.registeredObjects.count == 9)
            #expect(context.registeredObject(for: asset.objectID) === asset && context.registeredObject(for: inventories[7].objectID) === inventories[7])
            let unreached = ManagedObjectID(entityName: asset.objectID.entityName, storeIdentifier: asset.objectID.storeIdentifier, primaryKey: 999)
            #expect(context.registeredObject(for: unreached) == nil && context.registeredObjects.count == 9, "a look-up makes no fault")
            #expect(inventories[0].value(forKey: "asset") as? ManagedObject === asset)
            #expect(inventories[5].value(forKey: "asset") as? ManagedObject === asset, "inventories 1 and 6 share their asset")
            #expect(statements.sql.count == 1)
            destination = asset
        }
        #expect(other == nil && destination == nil)
        #expect(kept?.managedObjectContext == nil)
        #expect(kept?.value(forKey: "asset") == nil)
        #expect(kept?.value(forKey: "count") as? Int16 == 12)
    }

    @Test func aToManyFiresOnceThroughTheInverseForeignKeyAndHandsOutFaults() throws {
        let (context, statements, messages) = try open()
        var request = FetchRequest(entityName: "Location")
        request.sortDescriptors = [FLSortDescriptor(key: "label")]
        let garage = try #require(try context.fetch(request).first)  // Garage
        #expect(garage.hasFault(forRelationshipNamed: "inventories"))
        let inventories = try #require(garage.value(forKey: "inventories") as? [ManagedObject])
        #expect(!garage.hasFault(forRelationshipNamed: "inventories"))
        #expect(statements.sql.last == "SELECT 0, t0.Z_PK FROM ZINVENTORY t0 WHERE  t0.ZLOCATION = ?")
        #expect(statements.arguments.last == [.integer(2)])
        #expect(messages.lines.last == "annotation: to-many relationship fault \"inventories\" for objectID \(garage.objectID.uriRepresentation) fulfilled from database.  Got 2 rows")
        // The destinations are faults: touching each fires it with its own SELECT; the
        // relationship itself does not fire again.
        #expect(inventories.allSatisfy { $0.isFault })
        #expect(Set(inventories.map { $0.value(forKey: "count") as? Int16 }) == [2, 1])
        #expect(statements.sql.count == 4)
        #expect(statements.sql.last == "SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZCOUNT, t0.ZDATE, t0.ZASSET, t0.ZLOCATION FROM ZINVENTORY t0 WHERE  t0.Z_PK = ?")
        _ = garage.value(forKey: "inventories")
        #expect(statements.sql.count == 4)
    }

    @Test func keyPathsThroughToManyCollectValues() throws {
        let (context, _, _) = try open()
        var request = FetchRequest(entityName: "Asset")
        request.sortDescriptors = [FLSortDescriptor(key: "label")]
        let bicycle = try #require(try context.fetch(request).first)
        #expect(bicycle.value(forKey: "label") as? String == "Bicycle")
        let labels = try #require(bicycle.value(forKeyPath: "inventories.location.label") as? [Any?])
        #expect(labels.compactMap { $0 as? String } == ["Garage"])
    }

    @Test func objectsAreUniquedPerContext() throws {
        let (context, _, _) = try open()
        let first = try context.fetch(FetchRequest(entityName: "Location"))
        let second = try context.fetch(FetchRequest(entityName: "Location"))
        #expect(zip(first, second).allSatisfy { $0 === $1 })
        let viaRelationship = try #require(first[0].value(forKeyPath: "inventories") as? [ManagedObject])
        #expect(viaRelationship.allSatisfy { ($0.value(forKey: "location") as? ManagedObject) === first[0] })
    }
}

/// Faults fired inside one read transaction share it.
@Suite struct ReadTransactionTests {
    @Test func faultsInsideOneReadTransactionShareItAndTheLogShowsOnlyTheirSQL() throws {
        let (context, statements, _) = try InventoryFaultingTests().open()
        let labels: [String?] = try context.withReadTransaction {
            #expect(context.coordinator.store.connection.isInTransaction)
            return try context.fetch(FetchRequest(entityName: "Inventory")).map { $0.value(forKeyPath: "asset.label") as? String }
        }
        #expect(!context.coordinator.store.connection.isInTransaction)
        #expect(labels.count == 8)
        #expect(!statements.sql.contains { $0.hasPrefix("BEGIN") || $0 == "COMMIT" })
        #expect(statements.sql.count == 6)  // the fetch and five asset faults
    }
}

/// A fault named by its parent entity whose row is a sub-entity's: it holds the sub-entity's
/// values, and keeps what they need alive after its context, coordinator and model are gone.
@Suite struct SubentityRowFaultTests {
    @Test func aParentFaultFilledWithASubentityRowOutlivesItsModel() throws {
        func loadedFault() throws -> ManagedObject {
            let (context, store, _) = try SaveModelTests.open()
            let dog = try context.insertObject(entityName: "Dog")
            try dog.setValue("Rex", forKey: "name")
            try dog.setValue(true, forKey: "barks")
            try context.save()
            let reader = ManagedObjectContext(coordinator: context.coordinator)
            let id = ManagedObjectID(entityName: "Animal", storeIdentifier: store.identifier, primaryKey: dog.objectID.primaryKey)
            let fault = reader.object(with: id)
            #expect(fault.isFault && fault.entity.name == "Animal")
            #expect(fault.value(forKey: "name") as? String == "Rex")
            return fault
        }
        let object = try loadedFault()
        // The context, the coordinator, the store and the model are gone; the values stay
        // readable (under AddressSanitizer, a freed layout here is a report).
        #expect(object.managedObjectContext == nil)
        #expect(object.value(forKey: "name") as? String == "Rex")
        #expect(object.value(forKey: "barks") as? Bool == true)
    }
}
