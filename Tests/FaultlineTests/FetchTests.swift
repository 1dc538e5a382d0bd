import Faultline
import FaultlineModel
import FaultlineSQL
import FaultlineTestSupport
import Foundation
import Testing

/// Fetching from the Inventory sample: Core Data's SELECT, sorting, limits, dates, counts.
@Suite struct InventoryStoreTests {
    static let modelURL = TestSupport.inventoryFolder.appendingPathComponent("Inventory.xcdatamodeld")
    static let storeURL = TestSupport.inventoryFolder.appendingPathComponent("Inventory.sqlite")

    /// Opens the checked-in store read-only and records every statement it runs.
    func openInventory() throws -> (ManagedObjectContext, SQLStatements) {
        let model = try ManagedObjectModel(contentsOf: Self.modelURL)
        let coordinator = try PersistentStoreCoordinator(model: model, storeURL: Self.storeURL)
        let statements = SQLStatements()
        coordinator.store.connection.addTraceObserver { event in
            if case .statement(let sql, let arguments) = event { statements.append(sql, arguments) }
        }
        return (ManagedObjectContext(coordinator: coordinator), statements)
    }

    @Test func fetchRunsCoreDatasSelectAndReturnsTheRows() throws {
        let (context, statements) = try openInventory()
        let locations = try context.fetch(FetchRequest(entityName: "Location"))
        expectSQL(statements.sql, ["SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZLABEL FROM ZLOCATION t0"])
        #expect(locations.map { $0.value(forKey: "label") as? String } == ["Jaye's Basement", "Garage", "Office"])
        #expect(locations.map(\.objectID.primaryKey) == [1, 2, 3])
    }

    @Test func sortLimitAndOffsetReachTheSQL() throws {
        let (context, statements) = try openInventory()
        var request = FetchRequest(entityName: "Asset")
        request.sortDescriptors = [FLSortDescriptor(key: "label", ascending: false)]
        request.fetchLimit = 2
        request.fetchOffset = 1
        let assets = try context.fetch(request)
        expectSQL(statements.sql, ["SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZLABEL FROM ZASSET t0 ORDER BY t0.ZLABEL DESC  LIMIT 2 OFFSET 1"])
        #expect(assets.map { $0.value(forKey: "label") as? String } == ["Laptop", "Coffee Mug"])
    }

    @Test func datesComeBackFromSecondsSinceTheReferenceDate() throws {
        let (context, _) = try openInventory()
        let rows = try context.fetch(FetchRequest(entityName: "Inventory"))
        let byKey = Dictionary(uniqueKeysWithValues: rows.map { ($0.objectID.primaryKey, $0) })
        // Whole seconds are stored as INTEGER, fractions as REAL: both decode to the same Date type.
        #expect(byKey[1]?.value(forKey: "date") as? Date == Date(timeIntervalSinceReferenceDate: 815_304_600))
        #expect(byKey[5]?.value(forKey: "date") as? Date == Date(timeIntervalSinceReferenceDate: 816_547_530.5))
        #expect(byKey[8]?.value(forKey: "date") == nil)
        #expect(byKey[1]?.value(forKey: "count") as? Int16 == 12)  // Integer 16 comes back as Int16
    }

    @Test func countsMatchTheRows() throws {
        let (context, _) = try openInventory()
        #expect(try context.count(for: FetchRequest(entityName: "Inventory")) == 8)
        #expect(try context.count(for: FetchRequest(entityName: "Location")) == 3)
    }

    @Test func anUnknownEntityIsAnErrorListingTheEntities() throws {
        let (context, _) = try openInventory()
        let error = #expect(throws: FetchRequestError.self) { try context.fetch(FetchRequest(entityName: "Widget")) }
        #expect(error?.message == "entity Widget not found in the model; entities: Asset, Inventory, Location")
    }
}

/// Predicates and sort descriptors reach the SQL; counts use Core Data's shapes.
@Suite struct InventoryPredicateFetchTests {
    @Test func aPredicateThroughAToOneJoinsAndBindsItsValues() throws {
        let (context, statements, _) = try InventoryFaultingTests().open()
        var request = FetchRequest(entityName: "Inventory")
        request.predicate = try FLPredicate(format: "count > %d AND asset.label BEGINSWITH[c] %@", 2, "c")
        request.sortDescriptors = [FLSortDescriptor(key: "date", ascending: false)]
        let rows = try context.fetch(request)
        expectSQL(statements.sql, [
            "SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZCOUNT, t0.ZDATE, t0.ZASSET, t0.ZLOCATION FROM ZINVENTORY t0 JOIN ZASSET t1 ON t0.ZASSET = t1.Z_PK WHERE ( t0.ZCOUNT > ? AND  NSCoreDataStringSearch( t1.ZLABEL, ?, 265, 0)) ORDER BY t0.ZDATE DESC",
        ])
        #expect(statements.arguments == [[.integer(2), .text("c")]])
        #expect(rows.map(\.objectID.primaryKey) == [6, 1])
    }

    @Test func countsThroughAJoinCountDistinctKeys() throws {
        let (context, statements, _) = try InventoryFaultingTests().open()
        var request = FetchRequest(entityName: "Inventory")
        request.predicate = try FLPredicate(format: "location.label == %@", "Garage")
        #expect(try context.count(for: request) == 2)
        expectSQL(statements.sql, ["SELECT COUNT(DISTINCT t0.Z_PK) FROM ZINVENTORY t0 JOIN ZLOCATION t1 ON t0.ZLOCATION = t1.Z_PK WHERE  t1.ZLABEL = ?"])
    }

    @Test func anyOverAToManyIsDistinctAndCountIsACorrelatedSubquery() throws {
        let (context, statements, _) = try InventoryFaultingTests().open()
        var any = FetchRequest(entityName: "Location")
        any.predicate = try FLPredicate(format: "ANY inventories.count > 10")
        #expect(try context.fetch(any).map { $0.value(forKey: "label") as? String } == ["Jaye's Basement"])
        var many = FetchRequest(entityName: "Asset")
        many.predicate = try FLPredicate(format: "inventories.@count >= 2")
        many.sortDescriptors = [FLSortDescriptor(key: "label", comparator: .caseInsensitiveCompare)]
        #expect(try context.fetch(many).map { $0.value(forKey: "label") as? String } == ["Camping Stove", "Coffee Mug", "T-shirt"])
        expectSQL(statements.sql, [
            "SELECT DISTINCT 0, t0.Z_PK, t0.Z_OPT, t0.ZLABEL FROM ZLOCATION t0 JOIN ZINVENTORY t1 ON t0.Z_PK = t1.ZLOCATION WHERE  t1.ZCOUNT > ?",
            "SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZLABEL FROM ZASSET t0 WHERE (SELECT COUNT(t1.Z_PK) FROM ZINVENTORY t1 WHERE (t0.Z_PK = t1.ZASSET) ) >= ? ORDER BY t0.ZLABEL COLLATE NSCollateNoCase ",
        ])
    }

    @Test func unknownKeyPathsAreRejectedInCoreDatasWords() throws {
        let (context, _, _) = try InventoryFaultingTests().open()
        var request = FetchRequest(entityName: "Location")
        request.predicate = try FLPredicate(format: "colour == 1")
        let error = #expect(throws: FetchRequestError.self) { try context.fetch(request) }
        #expect(error?.message == "keypath colour not found in entity Location")
    }
}

/// Fetches see the context's unsaved inserts and deletes unless asked not to.
@Suite struct PendingChangesFetchTests {
    @Test func fetchesSeePendingChanges() throws {
        let url = try SaveTests.copyOfInventory()
        let (context, sql) = try SaveTests.open(url)
        let drone = try context.insertObject(entityName: "Asset")
        try drone.setValue("Drone", forKey: "label")
        let mug = context.object(with: ManagedObjectID(entityName: "Asset", storeIdentifier: context.coordinator.store.identifier, primaryKey: 1))
        context.delete(mug)
        var request = FetchRequest(entityName: "Asset")
        request.sortDescriptors = [FLSortDescriptor(key: "label")]
        let labels = try context.fetch(request).map { $0.value(forKey: "label") as? String ?? "" }
        #expect(labels == ["Bicycle", "Camping Stove", "Drone", "Laptop", "T-shirt"])
        request.predicate = try FLPredicate(format: "label BEGINSWITH 'D'")
        #expect(try context.fetch(request).contains(drone))
        request.includesPendingChanges = false
        request.predicate = nil
        #expect(try context.fetch(request).count == 5)
        _ = sql
    }
}
