import FaultlineModel
import FaultlineSQL
import FaultlineTestSupport
import Foundation
import Testing

@testable import Faultline

/// Prefetching and batch faulting: fewer statements, the same objects.
@Suite struct InventoryPrefetchAndBatchTests {
    @Test func prefetchingAToOneLoadsEveryDestinationInOneStatement() throws {
        let (context, statements, messages) = try InventoryFaultingTests().open()
        var request = FetchRequest(entityName: "Inventory")
        request.relationshipKeyPathsForPrefetching = ["asset"]
        let inventories = try context.fetch(request)
        expectSQL(
            statements.sql,
            [
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
        expectSQL(
            statements.sql.dropFirst(),
            [
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

    /// A to-one prefetched from a parent entity's fetch whose rows are also a sub-entity's:
    /// the sub-entity's layout has the relationship in another slot (its own attribute comes
    /// first), and its objects' destinations are prefetched all the same.
    @Test func prefetchingAToOneReadsEachSubEntitysOwnSlot() throws {
        let model = try ManagedObjectModel(entities: [
            EntityDescription(name: "Keeper", attributes: [AttributeDescription(name: "name", type: .string)]),
            EntityDescription(
                name: "Animal", attributes: [AttributeDescription(name: "name", type: .string)],
                relationships: [
                    RelationshipDescription(name: "keeper", destination: "Keeper")
                ]),
            EntityDescription(name: "Dog", superentityName: "Animal", attributes: [AttributeDescription(name: "barks", type: .boolean)]),
        ])
        let store = try SQLiteStore(inMemoryWith: model)
        let statements = SQLStatements()
        store.connection.addTraceObserver { event in
            if case .statement(let sql, let arguments) = event { statements.append(sql, arguments) }
        }
        let coordinator = PersistentStoreCoordinator(store: store)
        let writer = ManagedObjectContext(coordinator: coordinator)
        for (name, entity) in [("a", "Animal"), ("b", "Dog"), ("c", "Dog")] {
            let animal = try writer.insertObject(entityName: entity)
            try animal.setValue(name, forKey: "name")
            let keeper = try writer.insertObject(entityName: "Keeper")
            try keeper.setValue("keeper of \(name)", forKey: "name")
            try animal.setValue(keeper, forKey: "keeper")
        }
        try writer.save()
        let context = ManagedObjectContext(coordinator: coordinator)
        var request = FetchRequest(entityName: "Animal")
        request.sortDescriptors = [FLSortDescriptor(key: "name")]
        request.relationshipKeyPathsForPrefetching = ["keeper"]
        statements.removeAll()
        let animals = Array(try context.fetch(request))
        #expect(animals.map(\.entity.name) == ["Animal", "Dog", "Dog"])
        #expect(statements.sql.count == 2)
        let keepers = animals.compactMap { $0.value(forKey: "keeper") as? ManagedObject }
        #expect(keepers.count == 3 && keepers.allSatisfy { !$0.isFault })
        #expect(keepers.map { $0.value(forKey: "name") as? String } == ["keeper of a", "keeper of b", "keeper of c"])
        #expect(statements.sql.count == 2)
    }

    /// A fetch takes the reference counts its new objects hold to their entity, their
    /// context's link and their row page in bulk (`BulkReferences`), and gives back those it
    /// did not use: with rows of two entities, destinations prefetched, a row whose object
    /// was registered before (no object made for it) and batches, every entity's count is
    /// back where it was once the objects go, and the link goes with the context.
    @Test(arguments: [0, 2]) func theCountsAFetchTakesInBulkAreAllGivenBack(batchSize: Int) throws {
        let model = try ManagedObjectModel(entities: [
            EntityDescription(name: "Keeper", attributes: [AttributeDescription(name: "name", type: .string)]),
            EntityDescription(
                name: "Animal", attributes: [AttributeDescription(name: "name", type: .string)],
                relationships: [RelationshipDescription(name: "keeper", destination: "Keeper")]),
            EntityDescription(name: "Dog", superentityName: "Animal", attributes: [AttributeDescription(name: "barks", type: .boolean)]),
        ])
        let coordinator = PersistentStoreCoordinator(store: try SQLiteStore(inMemoryWith: model))
        let writer = ManagedObjectContext(coordinator: coordinator)
        for (index, entity) in ["Animal", "Dog", "Dog", "Animal", "Dog", "Animal", "Dog"].enumerated() {
            let animal = try writer.insertObject(entityName: entity)
            try animal.setValue("animal \(index)", forKey: "name")
            let keeper = try writer.insertObject(entityName: "Keeper")
            try keeper.setValue("keeper \(index)", forKey: "name")
            try animal.setValue(keeper, forKey: "keeper")
        }
        try writer.save()
        let storages = try ["Animal", "Dog", "Keeper"].map { name in
            try #require(coordinator.model.entity(named: name)).storageReference
        }
        func counts() -> [UInt] { storages.map { _getRetainCount(Unmanaged<AnyObject>.fromOpaque($0).takeUnretainedValue()) } }
        var before: [UInt] = []
        func fetchEverything() throws {
            weak var link: ContextLink?
            do {
                let context = ManagedObjectContext(coordinator: coordinator)
                link = context.link
                var request = FetchRequest(entityName: "Animal")
                request.sortDescriptors = [FLSortDescriptor(key: "name")]
                request.relationshipKeyPathsForPrefetching = ["keeper"]
                request.fetchBatchSize = batchSize
                let third = try #require(context.fetchObjectIDs(request).dropFirst(2).first)
                let registered = context.object(with: third)
                let animals = try context.fetch(request)
                var names: [String] = []
                for animal in animals {
                    names.append(animal.value(forKey: "name") as? String ?? "")
                    names.append((animal.value(forKey: "keeper") as? ManagedObject)?.value(forKey: "name") as? String ?? "")
                }
                #expect(names.count == 14 && !names.contains(""))
                #expect(animals[2] === registered && counts() != before)
            }
            #expect(link == nil, "the context's link goes with it and its objects")
        }
        // Measured the second time: the first fills the store's caches (decode plans hold
        // entities).
        for _ in 0..<2 {
            before = counts()
            try fetchEverything()
        }
        #expect(counts() == before, "each entity's count back where it was")
    }

    /// A key path to prefetch that names no relationship is an error of the fetch, batched or
    /// not (a batched fetch prefetches only as it reads each batch, where it cannot throw).
    @Test(arguments: [0, 3]) func aKeyPathToPrefetchThatIsNoRelationshipFailsTheFetch(batchSize: Int) throws {
        let (context, _, _) = try InventoryFaultingTests().open()
        var request = FetchRequest(entityName: "Inventory")
        request.fetchBatchSize = batchSize
        request.relationshipKeyPathsForPrefetching = ["asset.nosuchkey"]
        let error = #expect(throws: FetchRequestError.self) { _ = try context.fetch(request) }
        #expect(error?.message == "keypath nosuchkey not found in entity Asset")
        request.relationshipKeyPathsForPrefetching = ["asset", "location.inventories.asset"]
        #expect(try context.fetch(request).count == 8)
    }

    /// A writable copy of the Inventory store in a folder of its own: a context on it, its
    /// coordinator, and the statements it runs.
    private static func openCopy() throws -> (ManagedObjectContext, PersistentStoreCoordinator, SQLStatements, URL) {
        let folder = try TestSupport.temporaryDirectory()
        let url = folder.appendingPathComponent("Inventory.sqlite")
        try FileManager.default.copyItem(at: InventoryStoreTests.storeURL, to: url)
        let model = try ManagedObjectModel(contentsOf: InventoryStoreTests.modelURL)
        let coordinator = try PersistentStoreCoordinator(model: model, storeURL: url, options: .init(readOnly: false))
        let statements = SQLStatements()
        coordinator.store.connection.addTraceObserver { event in
            if case .statement(let sql, let arguments) = event { statements.append(sql, arguments) }
        }
        return (ManagedObjectContext(coordinator: coordinator), coordinator, statements, folder)
    }

    /// A batch whose rows cannot be read hands out faults that remember their batch: touching
    /// one, once the rows can be read, loads the whole batch in one statement (the faults'
    /// batch position, kept with the few objects that have one).
    @Test func faultsOfABatchThatCouldNotBeReadLoadTheirBatchWhenTouched() throws {
        let (context, coordinator, statements, folder) = try Self.openCopy()
        defer { try? FileManager.default.removeItem(at: folder) }
        var request = FetchRequest(entityName: "Inventory")
        request.fetchBatchSize = 3
        let results = try context.fetch(request)
        try coordinator.store.connection.execute("ALTER TABLE ZINVENTORY RENAME TO ZINVENTORY_AWAY")
        let fifth = results[4]
        #expect(fifth.isFault, "the batch could not be read")
        let batch = [results[3], fifth, results[5]]
        #expect(batch.allSatisfy { $0.isFault })
        try coordinator.store.connection.execute("ALTER TABLE ZINVENTORY_AWAY RENAME TO ZINVENTORY")
        let before = statements.sql.count
        #expect(fifth.value(forKey: "count") as? Int16 == 1)
        #expect(batch.allSatisfy { !$0.isFault }, "touching one fault loaded its whole batch")
        #expect(statements.sql.count == before + 1 && statements.sql.last?.contains("_Z_intarray0") == true)
    }

    @Test func batchedFetchesLoadRowsABatchAtATime() throws {
        let (context, statements, _) = try InventoryFaultingTests().open()
        var request = FetchRequest(entityName: "Inventory")
        request.fetchBatchSize = 3
        let results = try context.fetch(request)
        expectSQL(statements.sql, ["SELECT 0, t0.Z_PK FROM ZINVENTORY t0"])
        #expect(results.count == 8 && context.registeredObjects.isEmpty)
        // Reaching an object reads its batch's rows in one statement (Core Data's
        // `objectAtIndex:`): the batch's objects come loaded, not as faults.
        let fifth = results[4]
        let batchSQL = "SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZCOUNT, t0.ZDATE, t0.ZASSET, t0.ZLOCATION FROM ZINVENTORY t0 WHERE  t0.Z_PK IN (SELECT * FROM _Z_intarray0)  LIMIT 3"
        #expect(statements.sql.count == 2 && statements.sql.last == batchSQL)
        #expect(!fifth.isFault && context.registeredObjects.count == 3)
        #expect(context.registeredObjects.values.allSatisfy { !$0.isFault })
        #expect(fifth.value(forKey: "count") as? Int16 == 1)
        #expect(statements.sql.count == 2)
        // Copied into an array, every batch is read (and every object kept); the object held
        // here is not read again: the second batch's statement reads the other two.
        let inventories = Array(results)
        #expect(inventories[4] === fifth && inventories.allSatisfy { !$0.isFault })
        #expect(statements.sql.count == 5 && statements.sql.allSatisfy { $0 == batchSQL || $0 == "SELECT 0, t0.Z_PK FROM ZINVENTORY t0" })
        let counts = inventories.map { $0.value(forKey: "count") as? Int16 }
        #expect(counts == [12, 30, 1, 2, 1, 4, 1, 6])
        #expect(statements.sql.count == 5)
    }

    @Test func aBatchKeepsItsRegisteredObjectsFillsItsFaultsAndLeavesAGoneRowAFault() throws {
        let (context, coordinator, statements, folder) = try Self.openCopy()
        defer { try? FileManager.default.removeItem(at: folder) }
        var request = FetchRequest(entityName: "Inventory")
        request.fetchBatchSize = 3
        request.sortDescriptors = [FLSortDescriptor(key: "count", ascending: false)]
        let ids = try context.fetchObjectIDs(request)
        let results = try context.fetch(request)
        #expect(results.count == 8 && ids.count == 8)
        // Before the first batch is reached: its first object loaded and changed, its second a
        // fault, and its third's row deleted by another context.
        let changed = context.object(with: ids[0])
        try changed.setValue(Int16(99), forKey: "count")
        let fault = context.object(with: ids[1])
        #expect(fault.isFault)
        let other = ManagedObjectContext(coordinator: coordinator)
        other.delete(other.object(with: ids[2]))
        try other.save()
        statements.removeAll()
        // The keys are in the sort's order, not the keys' (30, 12, 6 …): rows are matched by key.
        #expect(results[0] === changed && results[1] === fault)
        #expect(statements.sql.count == 1)
        #expect(statements.arguments.last == [], "the keys go in an int-array table, not as arguments")
        #expect(changed.value(forKey: "count") as? Int16 == 99 && changed.isUpdated)
        #expect(!fault.isFault && fault.value(forKey: "count") as? Int16 == 12)
        let gone = results[2]
        #expect(gone.objectID == ids[2] && gone.isFault)
        #expect(context.registeredObjects[ids[2]] === gone)
        #expect(statements.sql.count == 1)
        // The second batch: nothing registered before, every row made into an object, in the
        // sort's order though its keys descend and its rows come back ascending.
        let second = (3..<6).map { results[$0] }
        #expect(second.map(\.objectID) == Array(ids[3..<6]))
        #expect(second.allSatisfy { !$0.isFault })
        #expect(second.map { $0.value(forKey: "count") as? Int16 } == [4, 2, 1])
        #expect(statements.sql.count == 2)
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
        // Going back to a batch makes its objects again; the held one is the same object, and
        // only the others' rows are read.
        #expect(results[1] === kept)
        #expect(!results[0].isFault)
        #expect(statements.sql.count == 5)
    }

    /// The registry borrows the held batch's references to the objects the batch made
    /// (`ObjectRegistry.register(_:for:at:borrowing:)`): whatever happens to the registry
    /// meanwhile — a reset, an object deleted and saved, the results dropped mid-batch — no
    /// object is freed while registered, and none is kept that nobody holds.
    @Test func aHeldBatchsObjectsSurviveAResetADeletionAndTheirResultsGoing() throws {
        let (context, _, _, folder) = try Self.openCopy()
        defer { try? FileManager.default.removeItem(at: folder) }
        var request = FetchRequest(entityName: "Inventory")
        request.fetchBatchSize = 3
        request.sortDescriptors = [FLSortDescriptor(key: "count", ascending: false)]
        let counts: [Int16?] = [30, 12, 6, 4, 2, 1, 1, 1]
        // A reset while a batch is held: its objects leave the registry and stay usable here,
        // and the next batches are made afresh.
        do {
            let results = try context.fetch(request)
            let fourth = results[3]
            #expect(context.registeredObjects.count == 3 && fourth.isBorrowedByRegistry)
            context.reset()
            #expect(context.registeredObjects.isEmpty && !fourth.isBorrowedByRegistry)
            #expect(results[3] === fourth, "the held batch is kept")
            #expect(results.map { $0.value(forKey: "count") as? Int16 } == counts)
            #expect(results[3] !== fourth, "made again after the reset")
        }
        context.reset()
        // An object of the held batch deleted and saved: it leaves the registry; moving on
        // frees it, and the others.
        do {
            weak var deleted: ManagedObject?
            weak var neighbour: ManagedObject?
            let results = try context.fetch(request)
            let batchIDs = (3..<6).map { results[$0].objectID }
            do {
                let fifth = results[4]
                deleted = fifth
                neighbour = results[5]
                context.delete(fifth)
                try context.save()
                #expect(fifth.managedObjectContext == nil && !fifth.isBorrowedByRegistry)
            }
            #expect(deleted != nil && neighbour != nil, "held by the batch")
            #expect(results[6].value(forKey: "count") as? Int16 == 1)
            #expect(deleted == nil && neighbour == nil, "let go of with their batch")
            #expect(batchIDs.allSatisfy { context.registeredObjects[$0] == nil })
        }
        context.reset()
        // Results that go while holding a batch: its objects stay registered, the registry's
        // own references now, and are the same objects a later look-up finds.
        weak var first: ManagedObject?
        do {
            let results = try context.fetch(request)
            first = results[0]
            #expect(first?.isBorrowedByRegistry == true)
        }
        #expect(context.registeredObjects.count == 3)
        let kept = try #require(first)
        #expect(!kept.isBorrowedByRegistry && !kept.isFault)
        #expect(context.registeredObjects[kept.objectID] === kept)
        #expect(kept.value(forKey: "count") as? Int16 == 30)
    }

    @Test func fetchedResultsWithoutABatchSizeAreTheFetchedObjects() throws {
        let (context, _, _) = try InventoryFaultingTests().open()
        let request = FetchRequest(entityName: "Inventory")
        let results = try context.fetch(request)
        #expect(Array(results) == Array(try context.fetch(request)))
        #expect(results.allSatisfy { !$0.isFault })
        // Iterated straight from the array (its iterator's own path), the objects the
        // subscript gives, in order, each once; a batched fetch's iterator agrees.
        var iterated: [ManagedObject] = []
        for object in results { iterated.append(object) }
        #expect(iterated.count == results.count && iterated.indices.allSatisfy { iterated[$0] === results[$0] })
        var batched = request
        batched.fetchBatchSize = 2
        let batches = try context.fetch(batched)
        var iteratedInBatches: [ManagedObject] = []
        for object in batches { iteratedInBatches.append(object) }
        #expect(iteratedInBatches.map(\.objectID) == iterated.map(\.objectID))
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

    /// A batched result merged with unsaved changes is made whole, of faults: touching one
    /// loads its whole batch in one statement, then the batch's prefetching.
    @Test func aMergedBatchedResultsFaultLoadsItsBatchAndItsPrefetching() throws {
        let (context, statements, _) = try InventoryFaultingTests().open()
        var request = FetchRequest(entityName: "Inventory")
        request.fetchBatchSize = 3
        request.relationshipKeyPathsForPrefetching = ["asset"]
        _ = try context.insertObject(entityName: "Inventory")
        statements.removeAll()
        let merged = try context.fetch(request)
        #expect(merged.count == 9 && merged[3].isFault && merged[4].isFault && merged[5].isFault)
        #expect(merged[4].value(forKey: "count") as? Int16 == 1)
        expectSQL(
            statements.sql,
            [
                "SELECT 0, t0.Z_PK FROM ZINVENTORY t0",
                "SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZCOUNT, t0.ZDATE, t0.ZASSET, t0.ZLOCATION FROM ZINVENTORY t0 WHERE  t0.Z_PK IN (SELECT * FROM _Z_intarray0)  LIMIT 3",
                "SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZLABEL FROM ZASSET t0 WHERE  t0.Z_PK IN (SELECT * FROM _Z_intarray0)",
            ])
        #expect(!merged[3].isFault && !merged[5].isFault && merged[0].isFault && merged[6].isFault)
        let asset = try #require(merged[5].value(forKey: "asset") as? ManagedObject)
        #expect(!asset.isFault)
        #expect(statements.sql.count == 3)
    }

    @Test func aBatchedFetchWithoutPropertyValuesFiresItsFaultsOneByOne() throws {
        let (context, statements, _) = try InventoryFaultingTests().open()
        var request = FetchRequest(entityName: "Inventory")
        request.fetchBatchSize = 3
        request.includesPropertyValues = false
        let inventories = try context.fetch(request)
        #expect(context.registeredObjects.isEmpty)
        #expect(inventories[4].value(forKey: "count") as? Int16 == 1)
        expectSQL(
            statements.sql,
            [
                "SELECT 0, t0.Z_PK FROM ZINVENTORY t0",
                "SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZCOUNT, t0.ZDATE, t0.ZASSET, t0.ZLOCATION FROM ZINVENTORY t0 WHERE  t0.Z_PK = ?",
            ])
        #expect(inventories[3].isFault && inventories[5].isFault)
    }
}

/// A class whose `awakeFromFetch()` reads results it is given, once, at a given index.
final class ReentrantNode: ManagedObject, ManagedObjectSubclass {
    class var entityName: String { "Node" }
    class var managedProperties: [ManagedPropertyDeclaration] { [.attribute("name", .string)] }
    nonisolated(unsafe) static var results: FetchedResults<ManagedObject>?
    nonisolated(unsafe) static var reach: Int?
    override func awakeFromFetch() {
        guard let results = Self.results, let index = Self.reach else { return }
        Self.reach = nil
        _ = results[index]  // another batch, while the outer batch is being loaded
    }
}

/// A class whose `deinit` reads results it is given, once, at a given index.
final class DeinitReadingNode: ManagedObject, ManagedObjectSubclass {
    class var entityName: String { "Node" }
    class var managedProperties: [ManagedPropertyDeclaration] { [.attribute("name", .string)] }
    nonisolated(unsafe) static var results: FetchedResults<ManagedObject>?
    nonisolated(unsafe) static var reach: Int?
    deinit {
        guard let results = Self.results, let index = Self.reach else { return }
        Self.reach = nil
        _ = results[index]
    }
}

/// Results read again while they load a batch — by an `awakeFromFetch()` of the batch, or by
/// the `deinit` of an object the last batch let go of — hold the batch that read made; the
/// outer load keeps its objects registered before holding its own (the registry borrows a held
/// batch's references: an array dropped without ending them left entries to freed objects).
@Suite(.serialized) struct BatchReentrancyTests {
    /// Six `Node` rows made by `nodeClass`, fetched two to a batch in name order.
    private static func batchedNodes(_ nodeClass: any ManagedObjectSubclass.Type) throws -> (ManagedObjectContext, FetchedResults<ManagedObject>) {
        let model = try ManagedObjectModel(entities: [
            EntityDescription(name: "Node", attributes: [AttributeDescription(name: "name", type: .string)])
        ])
        let coordinator = PersistentStoreCoordinator(store: try SQLiteStore(inMemoryWith: model))
        try coordinator.registerClasses([nodeClass])
        let writer = ManagedObjectContext(coordinator: coordinator)
        for index in 0..<6 { try writer.insertObject(entityName: "Node").setValue("n\(index)", forKey: "name") }
        try writer.save()
        let context = ManagedObjectContext(coordinator: coordinator)
        var request = FetchRequest(entityName: "Node")
        request.sortDescriptors = [FLSortDescriptor(key: "name", ascending: true)]
        request.fetchBatchSize = 2
        return (context, try context.fetch(request))
    }

    /// Every registered object alive and readable (a freed one trips ManagedObject's assertion
    /// in a debug build, AddressSanitizer in CI).
    private static func expectRegisteredObjectsReadable(_ context: ManagedObjectContext) {
        for (_, object) in context.registeredObjects { #expect(object.value(forKey: "name") as? String != nil) }
    }

    /// An `awakeFromFetch()` reading the same results at another batch while the first loads.
    @Test func anAwakeFromFetchReadingAnotherBatchLeavesNoEntryDangling() throws {
        let (context, results) = try Self.batchedNodes(ReentrantNode.self)
        ReentrantNode.results = results
        ReentrantNode.reach = 4
        defer { ReentrantNode.results = nil }
        _ = results[0]
        Self.expectRegisteredObjectsReadable(context)
    }

    /// An object's `deinit` reading the results at another batch while they let go of its own.
    @Test func aDeinitReadingAnotherBatchWhileTheResultsMoveOnLeavesNoEntryDangling() throws {
        let (context, results) = try Self.batchedNodes(DeinitReadingNode.self)
        DeinitReadingNode.results = results
        defer { DeinitReadingNode.results = nil }
        _ = results[0]
        DeinitReadingNode.reach = 4
        _ = results[2]  // batch 0's objects go: one's deinit reaches batch 2
        Self.expectRegisteredObjectsReadable(context)
    }
}
