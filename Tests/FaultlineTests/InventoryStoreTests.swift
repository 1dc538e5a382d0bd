import Faultline
import FaultlineModel
import FaultlineSQL
import FaultlineTestSupport
import Foundation
import Testing

/// The walking skeleton end to end on the Inventory sample: model file → mapping → SQL → rows.
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

    @Test func mappingNumbersEntitiesAndNamesColumnsAsCoreDataDoes() throws {
        let mapping = SchemaMapping(model: try ManagedObjectModel(contentsOf: Self.modelURL))
        #expect(mapping.entity("Asset")?.entityNumber == 1)
        #expect(mapping.entity("Inventory")?.entityNumber == 2)
        #expect(mapping.entity("Location")?.entityNumber == 3)
        #expect(mapping.entity("Location")?.table == "ZLOCATION")
        #expect(mapping.entity("Inventory")?.attributeColumns["date"] == "ZDATE")
        #expect(mapping.entity("Inventory")?.toOneColumns["asset"]?.foreignKey == "ZASSET")
    }

    @Test func createStatementsAreCoreDatasDDL() throws {
        let mapping = SchemaMapping(model: try ManagedObjectModel(contentsOf: Self.modelURL))
        #expect(mapping.createStatements() == [
            "CREATE TABLE ZASSET ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZLABEL VARCHAR )",
            "CREATE TABLE ZINVENTORY ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZCOUNT INTEGER, ZASSET INTEGER, ZLOCATION INTEGER, ZDATE TIMESTAMP )",
            "CREATE TABLE ZLOCATION ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZLABEL VARCHAR )",
            "CREATE INDEX ZINVENTORY_ZASSET_INDEX ON ZINVENTORY (ZASSET)",
            "CREATE INDEX ZINVENTORY_ZLOCATION_INDEX ON ZINVENTORY (ZLOCATION)",
            "CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)",
            "CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB)",
            "CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB)",
        ])
    }

    @Test func fetchRunsCoreDatasSelectAndReturnsTheRows() throws {
        let (context, statements) = try openInventory()
        let locations = try context.fetch(FetchRequest(entityName: "Location"))
        #expect(statements.sql == ["SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZLABEL FROM ZLOCATION t0"])
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
        #expect(statements.sql == ["SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZLABEL FROM ZASSET t0 ORDER BY t0.ZLABEL DESC  LIMIT 2 OFFSET 1"])
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
        let error = #expect(throws: FetchError.self) { try context.fetch(FetchRequest(entityName: "Widget")) }
        #expect(error?.message == "entity Widget not found in the model; entities: Asset, Inventory, Location")
    }

    @Test func aReadOnlySessionLeavesTheFolderAsItWas() throws {
        let folder = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let copy = folder.appendingPathComponent("Inventory.sqlite")
        try FileManager.default.copyItem(at: Self.storeURL, to: copy)
        let before = try TestSupport.snapshot(of: folder)
        do {
            let model = try ManagedObjectModel(contentsOf: Self.modelURL)
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
        let model = try ManagedObjectModel(contentsOf: Self.modelURL)
        let missing = folder.appendingPathComponent("New.sqlite")
        let error = #expect(throws: StoreError.self) { try PersistentStoreCoordinator(model: model, storeURL: missing) }
        #expect(error?.code == .fileNotFound)
        #expect(!FileManager.default.fileExists(atPath: missing.path))
    }
}

/// Collects the statements a connection runs (the golden-SQL harness).
final class SQLStatements: @unchecked Sendable {
    private(set) var sql: [String] = []
    private(set) var arguments: [[SQLValue]] = []

    func append(_ sql: String, _ arguments: [SQLValue]) {
        self.sql.append(sql)
        self.arguments.append(arguments)
    }
}

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

/// Prefetching and batch faulting: fewer statements, the same objects.
@Suite struct InventoryPrefetchAndBatchTests {
    @Test func prefetchingAToOneLoadsEveryDestinationInOneStatement() throws {
        let (context, statements, messages) = try InventoryFaultingTests().open()
        var request = FetchRequest(entityName: "Inventory")
        request.relationshipKeyPathsForPrefetching = ["asset"]
        let inventories = try context.fetch(request)
        #expect(statements.sql == [
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
        #expect(statements.sql.dropFirst() == [
            "SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZCOUNT, t0.ZDATE, t0.ZASSET, t0.ZLOCATION FROM ZINVENTORY t0 WHERE  t0.ZLOCATION IN (SELECT * FROM _Z_intarray0)",
            "SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZLABEL FROM ZASSET t0 WHERE  t0.Z_PK IN (SELECT * FROM _Z_intarray0)",
        ])
        #expect(locations.allSatisfy { !$0.hasFault(forRelationshipNamed: "inventories") })
        let office = try #require(locations.last)
        let assets = (office.value(forKeyPath: "inventories.asset.label") as? [Any?])?.compactMap { $0 as? String }
        #expect(Set(assets ?? []) == ["Coffee Mug", "Laptop", "T-shirt"])
        #expect(statements.sql.count == 3)
    }

    @Test func batchedFetchesLoadRowsABatchAtATime() throws {
        let (context, statements, _) = try InventoryFaultingTests().open()
        var request = FetchRequest(entityName: "Inventory")
        request.fetchBatchSize = 3
        let inventories = try context.fetch(request)
        #expect(statements.sql == ["SELECT 0, t0.Z_PK FROM ZINVENTORY t0"])
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
        let results = try context.fetchResults(request)
        #expect(statements.sql == ["SELECT 0, t0.Z_PK FROM ZINVENTORY t0"])
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
        let results = try context.fetchResults(request)
        #expect(Array(results) == (try context.fetch(request)))
        #expect(results.allSatisfy { !$0.isFault })
    }
}

/// Collects trace messages (annotations).
final class Messages: @unchecked Sendable {
    private(set) var lines: [String] = []
    func append(_ line: String) { lines.append(line) }
}

/// Predicates and sort descriptors reach the SQL; counts use Core Data's shapes.
@Suite struct InventoryPredicateFetchTests {
    @Test func aPredicateThroughAToOneJoinsAndBindsItsValues() throws {
        let (context, statements, _) = try InventoryFaultingTests().open()
        var request = FetchRequest(entityName: "Inventory")
        request.predicate = try FLPredicate(format: "count > %d AND asset.label BEGINSWITH[c] %@", 2, "c")
        request.sortDescriptors = [FLSortDescriptor(key: "date", ascending: false)]
        let rows = try context.fetch(request)
        #expect(statements.sql == [
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
        #expect(statements.sql == ["SELECT COUNT(DISTINCT t0.Z_PK) FROM ZINVENTORY t0 JOIN ZLOCATION t1 ON t0.ZLOCATION = t1.Z_PK WHERE  t1.ZLABEL = ?"])
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
        #expect(statements.sql == [
            "SELECT DISTINCT 0, t0.Z_PK, t0.Z_OPT, t0.ZLABEL FROM ZLOCATION t0 JOIN ZINVENTORY t1 ON t0.Z_PK = t1.ZLOCATION WHERE  t1.ZCOUNT > ?",
            "SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZLABEL FROM ZASSET t0 WHERE (SELECT COUNT(t1.Z_PK) FROM ZINVENTORY t1 WHERE (t0.Z_PK = t1.ZASSET) ) >= ? ORDER BY t0.ZLABEL COLLATE NSCollateNoCase ",
        ])
    }

    @Test func unknownKeyPathsAreRejectedInCoreDatasWords() throws {
        let (context, _, _) = try InventoryFaultingTests().open()
        var request = FetchRequest(entityName: "Location")
        request.predicate = try FLPredicate(format: "colour == 1")
        let error = #expect(throws: FetchError.self) { try context.fetch(request) }
        #expect(error?.message == "keypath colour not found in entity Location")
    }
}

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
