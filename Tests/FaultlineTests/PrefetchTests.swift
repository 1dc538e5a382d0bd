import Faultline
import FaultlineModel
import FaultlineSQL
import FaultlineTestSupport
import Foundation
import Testing

/// Prefetching and batch faulting: fewer statements, the same objects.
@Suite struct InventoryPrefetchAndBatchTests {
    @Test func prefetchingAToOneLoadsEveryDestinationInOneStatement() throws {
        let (context, statements, messages) = try InventoryFaultingTests().open()
        var request = FetchRequest(entityName: "Inventory")
        request.relationshipKeyPathsForPrefetching = ["asset"]
        let inventories = try context.fetch(request)
        expectSQL(statements.sql, [
            "SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZCOUNT, t0.ZDATE, t0.ZASSET, t0.ZLOCATION FROM ZINVENTORY t0",
            "SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZLABEL FROM ZASSET t0 WHERE  t0.Z_PK IN (SELECT * FROM _Z_intarray0)",
        ])
        #expect(messages.lines.contains("annotation: Bound intarray _Z_intarray0"))
        #expect(messages.lines.last == "annotation: Prefetching with key 'asset'.  Got 5 rows.")
        let labels = inventories.map { $0.value(forKeyPath: "asset.label") as? String }
        #expect(labels == ["Coffee Mug", "T-shirt", "Camping Stove", "Bicycle", "Camping Stove", "Coffee Mug", "Laptop", "T-shirt"])
        #expect(statements.sql.count == 2)
    }

    @Test func prefetchingAToManyPathFillsEachLevel() throws {
        let (context, statements, _) = try InventoryFaultingTests().open()
        var request = FetchRequest(entityName: "Location")
        request.sortDescriptors = [FLSortDescriptor(key: "label")]
        request.relationshipKeyPathsForPrefetching = ["inventories.asset"]
        let locations = try context.fetch(request)
        expectSQL(statements.sql.dropFirst(), [
            "SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZCOUNT, t0.ZDATE, t0.ZASSET, t0.ZLOCATION FROM ZINVENTORY t0 WHERE  t0.ZLOCATION IN (SELECT * FROM _Z_intarray0)",
            "SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZLABEL FROM ZASSET t0 WHERE  t0.Z_PK IN (SELECT * FROM _Z_intarray0)",
        ])
        #expect(locations.allSatisfy { !$0.hasFault(forRelationshipNamed: "inventories") })
        let office = try #require(locations.last)
        let assets = (office.value(forKeyPath: "inventories.asset.label") as? [Any?])?.compactMap { $0 as? String }
        #expect(Set(assets ?? []) == ["Coffee Mug", "Laptop", "T-shirt"])
        #expect(statements.sql.count == 3)
    }

    @Test func prefetchedDestinationsArriveLoadedAndChangedOnesKeepTheirValues() throws {
        let (context, statements, _) = try InventoryFaultingTests().open()
        // An inventory changed (unsaved) before a prefetch reads its row again.
        var thirty = FetchRequest(entityName: "Inventory")
        thirty.predicate = try FLPredicate(format: "count == %@", 30)
        let changed = try #require(try context.fetch(thirty).first)
        try changed.setValue(Int16(31), forKey: "count")
        var request = FetchRequest(entityName: "Location")
        request.sortDescriptors = [FLSortDescriptor(key: "label")]
        request.relationshipKeyPathsForPrefetching = ["inventories", "inventories.asset"]
        let locations = Array(try context.fetch(request))
        let afterFetch = statements.sql.count
        // Every destination is registered with its values, not a fault (each looked at before
        // any of its values is read): reading them runs no statement.
        let inventories = locations.flatMap { ($0.value(forKey: "inventories") as? [ManagedObject]) ?? [] }
        #expect(inventories.count == 8 && inventories.allSatisfy { !$0.isFault })
        let assets = inventories.compactMap { $0.value(forKey: "asset") as? ManagedObject }
        #expect(assets.count == 8 && assets.allSatisfy { !$0.isFault })
        #expect(inventories.contains { $0 === changed })
        let counts = Set(inventories.compactMap { $0.value(forKey: "count") as? Int16 })
        #expect(counts == [12, 31, 1, 2, 4, 6])
        #expect(Set(assets.compactMap { $0.value(forKey: "label") as? String }) == ["Coffee Mug", "T-shirt", "Bicycle", "Laptop", "Camping Stove"])
        #expect(statements.sql.count == afterFetch)
        // The changed object kept its unsaved value, and is still changed.
        #expect(changed.value(forKey: "count") as? Int16 == 31)
        #expect(changed.isUpdated)
    }

    @Test func aToManyPrefetchIsWhatFiringTheFaultGivesChangesIncluded() throws {
        let (context, statements, _) = try InventoryFaultingTests().open()
        var byLabel = FetchRequest(entityName: "Location")
        byLabel.sortDescriptors = [FLSortDescriptor(key: "label")]
        // The locations loaded, their inventories not fired; one inventory moved from the
        // garage to the office meanwhile (each location records the edit, unfired).
        let locations = Array(try context.fetch(byLabel))
        let (garage, office) = (locations[0], locations[2])
        #expect(garage.value(forKey: "label") as? String == "Garage" && office.value(forKey: "label") as? String == "Office")
        var four = FetchRequest(entityName: "Inventory")
        four.predicate = try FLPredicate(format: "count == %@", 2)
        let moved = try #require(try context.fetch(four).first)
        try moved.setValue(office, forKey: "location")
        #expect(garage.hasFault(forRelationshipNamed: "inventories") && office.hasFault(forRelationshipNamed: "inventories"))
        var request = byLabel
        request.relationshipKeyPathsForPrefetching = ["inventories"]
        let before = statements.sql.count
        _ = try context.fetch(request)
        #expect(statements.sql.count == before + 2)  // the locations, then their inventories
        // The edits are applied on top of the store's rows, as firing the faults applies them.
        let garageItems = (garage.value(forKey: "inventories") as? [ManagedObject]) ?? []
        let officeItems = (office.value(forKey: "inventories") as? [ManagedObject]) ?? []
        #expect(!garageItems.contains { $0 === moved } && garageItems.count == 1)
        #expect(officeItems.contains { $0 === moved } && officeItems.count == 4)
        #expect(statements.sql.count == before + 2)
        // A prefetched to-many is the committed value: only the moved inventory's ends changed.
        #expect(locations[1].changedValues().isEmpty && !locations[1].isUpdated)
        #expect(Set(context.updatedObjects.map(\.objectID)) == [garage.objectID, office.objectID, moved.objectID])
    }

    @Test func batchedFetchesLoadRowsABatchAtATime() throws {
        let (context, statements, _) = try InventoryFaultingTests().open()
        var request = FetchRequest(entityName: "Inventory")
        request.fetchBatchSize = 3
        // Held in an array, the objects stay made; `FetchedResults` alone lets go of a batch
        // when it moves on (next test).
        let inventories = Array(try context.fetch(request))
        expectSQL(statements.sql, ["SELECT 0, t0.Z_PK FROM ZINVENTORY t0"])
        #expect(inventories.count == 8 && inventories.allSatisfy(\.isFault))
        #expect(inventories[4].value(forKey: "count") as? Int16 == 1)
        let batchSQL = "SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZCOUNT, t0.ZDATE, t0.ZASSET, t0.ZLOCATION FROM ZINVENTORY t0 WHERE  t0.Z_PK IN (SELECT * FROM _Z_intarray0)  LIMIT 3"
        #expect(statements.sql.last == batchSQL)
        #expect(inventories[3...5].allSatisfy { !$0.isFault })
        #expect(inventories[0...2].allSatisfy(\.isFault) && inventories[6...].allSatisfy(\.isFault))
        let counts = inventories.map { $0.value(forKey: "count") as? Int16 }
        #expect(counts == [12, 30, 1, 2, 1, 4, 1, 6])
        #expect(statements.sql.count == 4)
    }

    @Test func fetchedResultsHoldOneBatchAndLetGoOfTheObjectsNobodyHolds() throws {
        let (context, statements, _) = try InventoryFaultingTests().open()
        var request = FetchRequest(entityName: "Inventory")
        request.fetchBatchSize = 3
        let results = try context.fetch(request)
        expectSQL(statements.sql, ["SELECT 0, t0.Z_PK FROM ZINVENTORY t0"])
        #expect(results.count == 8 && context.registeredObjects.isEmpty)
        var counts: [Int16?] = []
        var kept: ManagedObject?
        for (i, inventory) in results.enumerated() {
            counts.append(inventory.value(forKey: "count") as? Int16)
            if i == 1 { kept = inventory }
            // The batch being read, and the object held here; nothing else stays registered.
            #expect(context.registeredObjects.count <= 3 + (i >= 3 ? 1 : 0))
        }
        #expect(counts == [12, 30, 1, 2, 1, 4, 1, 6])
        #expect(statements.sql.count == 4)  // the keys, then one statement per batch
        #expect(kept.map { context.registeredObjects[$0.objectID] === $0 } == true)
        #expect(kept?.isFault == false)
        // Going back to a batch makes its objects again; the held one is the same object.
        #expect(results[1] === kept)
        #expect(results[0].isFault)
    }

    @Test func fetchedResultsWithoutABatchSizeAreTheFetchedObjects() throws {
        let (context, _, _) = try InventoryFaultingTests().open()
        let request = FetchRequest(entityName: "Inventory")
        let results = try context.fetch(request)
        #expect(Array(results) == Array(try context.fetch(request)))
        #expect(results.allSatisfy { !$0.isFault })
    }

    @Test func aBatchedFetchMergesUnsavedChangesOfItsEntityIntoAWholeResult() throws {
        let (context, statements, _) = try InventoryFaultingTests().open()
        var request = FetchRequest(entityName: "Inventory")
        request.fetchBatchSize = 3
        // A change to another entity: the result stays batched (nothing made up front).
        let shed = try context.insertObject(entityName: "Location")
        try shed.setValue("Shed", forKey: "label")
        let batched = try context.fetch(request)
        #expect(batched.count == 8 && context.registeredObjects.count == 1)
        // A change to the entity: merged, so built whole (its objects still faults).
        let added = try context.insertObject(entityName: "Inventory")
        statements.removeAll()
        let merged = try context.fetch(request)
        #expect(merged.count == 9 && merged.last === added)
        #expect(context.registeredObjects.count == 10)
        expectSQL(statements.sql, ["SELECT 0, t0.Z_PK FROM ZINVENTORY t0"])
        #expect(merged[4].value(forKey: "count") as? Int16 == 1)
        #expect(statements.sql.count == 2)
        // `execute` returns the same collection.
        context.delete(added)
        context.delete(shed)
        guard case .objects(let objects) = try context.execute(request) else {
            Issue.record("execute(_:) of an object request returned something else")
            return
        }
        #expect(objects.count == 8)
    }

    @Test func aBatchedFetchWithoutPropertyValuesFiresItsFaultsOneByOne() throws {
        let (context, statements, _) = try InventoryFaultingTests().open()
        var request = FetchRequest(entityName: "Inventory")
        request.fetchBatchSize = 3
        request.includesPropertyValues = false
        let inventories = try context.fetch(request)
        #expect(context.registeredObjects.isEmpty)
        #expect(inventories[4].value(forKey: "count") as? Int16 == 1)
        expectSQL(statements.sql, [
            "SELECT 0, t0.Z_PK FROM ZINVENTORY t0",
            "SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZCOUNT, t0.ZDATE, t0.ZASSET, t0.ZLOCATION FROM ZINVENTORY t0 WHERE  t0.Z_PK = ?",
        ])
        #expect(inventories[3].isFault && inventories[5].isFault)
    }
}
