import Faultline
import Foundation

/// The model every workload uses, built in Swift: `Item` (five attributes of mixed types and
/// a to-one `owner`, with an index on `quantity`) and `Owner` (a name, a rank, to-many `items`).
enum BenchModel {
    static func make() throws -> ManagedObjectModel {
        let item = EntityDescription(
            name: "Item",
            attributes: [
                AttributeDescription(name: "quantity", type: .integer64),
                AttributeDescription(name: "score", type: .double),
                AttributeDescription(name: "name", type: .string),
                AttributeDescription(name: "created", type: .date),
                AttributeDescription(name: "flag", type: .boolean),
            ],
            relationships: [RelationshipDescription(name: "owner", destination: "Owner", inverse: "items")],
            fetchIndexes: [FetchIndexDescription(name: "byQuantity", elements: [.init(property: "quantity")])]
        )
        let owner = EntityDescription(
            name: "Owner",
            attributes: [
                AttributeDescription(name: "name", type: .string),
                AttributeDescription(name: "rank", type: .integer64),
            ],
            relationships: [RelationshipDescription(name: "items", destination: "Item", inverse: "owner", toMany: true)]
        )
        return try ManagedObjectModel(entities: [item, owner])
    }
}

/// The Faultline variants: a coordinator per store, reused across rounds (as an app keeps its
/// stack), a new context per round.
final class FaultlineBench {
    let model: ManagedObjectModel

    init() throws { model = try BenchModel.make() }

    /// Creates an empty store with Core Data's layout at `url`.
    func createStore(at url: URL) throws {
        _ = try SQLiteStore(url: url, model: model, options: .init(readOnly: false, createIfMissing: true))
    }

    func open(_ path: String) throws -> PersistentStoreCoordinator {
        try PersistentStoreCoordinator(model: model, storeURL: URL(fileURLWithPath: path), options: .init(readOnly: false))
    }

    /// Reads the five attributes of an item.
    @inline(__always) static func check(_ object: ManagedObject) throws -> Int64 {
        guard let quantity = object.value(forKey: "quantity") as? Int64,
            let score = object.value(forKey: "score") as? Double,
            let name = object.value(forKey: "name") as? String,
            let created = object.value(forKey: "created") as? Date,
            let flag = object.value(forKey: "flag") as? Bool
        else { throw BenchmarkError("item \(object.objectID) has a missing or mistyped value") }
        return ItemValues(quantity: quantity, score: score, name: name, created: created, flag: flag).check
    }

    static func ownerCheck(_ object: ManagedObject?) throws -> Int64 {
        guard let object, let name = object.value(forKey: "name") as? String, let rank = object.value(forKey: "rank") as? Int64 else {
            throw BenchmarkError("owner missing")
        }
        return Int64(name.utf8.count) &+ rank
    }

    func fetch(_ coordinator: PersistentStoreCoordinator) throws -> Sample {
        try time {
            let context = ManagedObjectContext(coordinator: coordinator)
            var check: Int64 = 0
            for object in try context.fetch(FetchRequest(entityName: "Item")) { check &+= try Self.check(object) }
            return check
        }
    }

    /// Dictionary results (`resultType` `.dictionary`, the five attributes), every value read
    /// by key.
    func fetchDictionaries(_ coordinator: PersistentStoreCoordinator) throws -> Sample {
        try time {
            let context = ManagedObjectContext(coordinator: coordinator)
            var request = FetchRequest(entityName: "Item")
            request.resultType = .dictionary
            request.propertiesToFetch = ["quantity", "score", "name", "created", "flag"]
            guard case .dictionaries(let rows) = try context.execute(request) else { throw BenchmarkError("not dictionaries") }
            var check: Int64 = 0
            for row in rows {
                guard let quantity = row["quantity"] as? Int64, let score = row["score"] as? Double, let name = row["name"] as? String,
                    let created = row["created"] as? Date, let flag = row["flag"] as? Bool
                else { throw BenchmarkError("a dictionary has a missing or mistyped value: \(row)") }
                check &+= ItemValues(quantity: quantity, score: score, name: name, created: created, flag: flag).check
            }
            return check
        }
    }

    /// The same request through ``FetchedRows`` (the keys once, values by position), every
    /// value read by key as its type.
    func fetchRows(_ coordinator: PersistentStoreCoordinator, byPosition: Bool) throws -> Sample {
        try time {
            let context = ManagedObjectContext(coordinator: coordinator)
            var request = FetchRequest(entityName: "Item")
            request.resultType = .dictionary
            request.propertiesToFetch = ["quantity", "score", "name", "created", "flag"]
            var check: Int64 = 0
            for row in try context.fetchRows(request) {
                let values: ItemValues?
                if byPosition {
                    if let quantity = row[0, as: Int64.self], let score = row[1, as: Double.self], let name = row[2, as: String.self],
                        let created = row[3, as: Date.self], let flag = row[4, as: Bool.self]
                    {
                        values = ItemValues(quantity: quantity, score: score, name: name, created: created, flag: flag)
                    } else {
                        values = nil
                    }
                } else if let quantity = row["quantity", as: Int64.self], let score = row["score", as: Double.self],
                    let name = row["name", as: String.self], let created = row["created", as: Date.self], let flag = row["flag", as: Bool.self]
                {
                    values = ItemValues(quantity: quantity, score: score, name: name, created: created, flag: flag)
                } else {
                    values = nil
                }
                guard let values else { throw BenchmarkError("a row has a missing or mistyped value: \(row.dictionary)") }
                check &+= values.check
            }
            return check
        }
    }

    func insert(path: String, count: Int) throws -> Sample {
        let coordinator = try open(path)
        let values = (1...count).map(ItemValues.init)
        return try time {
            let context = ManagedObjectContext(coordinator: coordinator)
            context.isUndoEnabled = false
            var check: Int64 = 0
            for v in values {
                let object = try context.insertObject(entityName: "Item")
                try object.setValue(v.quantity, forKey: "quantity")
                try object.setValue(v.score, forKey: "score")
                try object.setValue(v.name, forKey: "name")
                try object.setValue(v.created, forKey: "created")
                try object.setValue(v.flag, forKey: "flag")
                check &+= v.check
            }
            try context.save()
            return check
        }
    }

    func update(_ coordinator: PersistentStoreCoordinator) throws -> Sample {
        try time {
            let context = ManagedObjectContext(coordinator: coordinator)
            context.isUndoEnabled = false
            let objects = try context.fetch(FetchRequest(entityName: "Item"))
            for object in objects {
                guard let score = object.value(forKey: "score") as? Double else { throw BenchmarkError("no score") }
                try object.setValue(score + 1, forKey: "score")
            }
            try context.save()
            return Int64(objects.count)
        }
    }

    /// An item's owner read by key.
    static func ownerByKey(_ item: ManagedObject) -> ManagedObject? { item.value(forKey: "owner") as? ManagedObject }

    /// Fetches the first `count` items (untimed), then touches each one's owner: one fault each.
    /// `owner` finds an item's owner and `read` reads its values: by key, or through the
    /// typed classes (inlined into each variant, as the typed accessors are into an app).
    @inline(__always)
    func faultsOneByOne(
        _ coordinator: PersistentStoreCoordinator, count: Int, owner: (ManagedObject) -> ManagedObject? = ownerByKey,
        read: (ManagedObject?) throws -> Int64 = ownerCheck
    ) throws -> Sample {
        let context = ManagedObjectContext(coordinator: coordinator)
        var request = FetchRequest(entityName: "Item")
        request.fetchLimit = count
        let owners = try context.fetch(request).map(owner)
        return try time {
            var check: Int64 = 0
            for owner in owners { check &+= try read(owner) }
            return check
        }
    }

    /// The owners in batches of `batch`, each owner's values read.
    @inline(__always)
    func faultsBatched(_ coordinator: PersistentStoreCoordinator, batch: Int, read: (ManagedObject?) throws -> Int64 = ownerCheck) throws -> Sample {
        try time {
            let context = ManagedObjectContext(coordinator: coordinator)
            var request = FetchRequest(entityName: "Owner")
            request.fetchBatchSize = batch
            var check: Int64 = 0
            for owner in try context.fetch(request) { check &+= try read(owner) }
            return check
        }
    }

    /// The first `count` items with their owners prefetched, each owner's values read.
    @inline(__always)
    func faultsPrefetched(
        _ coordinator: PersistentStoreCoordinator, count: Int, owner: (ManagedObject) -> ManagedObject? = ownerByKey,
        read: (ManagedObject?) throws -> Int64 = ownerCheck
    ) throws -> Sample {
        try time {
            let context = ManagedObjectContext(coordinator: coordinator)
            var request = FetchRequest(entityName: "Item")
            request.fetchLimit = count
            request.relationshipKeyPathsForPrefetching = ["owner"]
            var check: Int64 = 0
            for item in try context.fetch(request) { check &+= try read(owner(item)) }
            return check
        }
    }

    func query(_ coordinator: PersistentStoreCoordinator, entity: String, format: String, argument: Any) throws -> Sample {
        try time {
            let context = ManagedObjectContext(coordinator: coordinator)
            var request = FetchRequest(entityName: entity)
            request.predicate = try FLPredicate(format: format, argument)
            var check: Int64 = 0
            for object in try context.fetch(request) {
                check &+= entity == "Owner" ? try Self.ownerCheck(object) : try Self.check(object)
            }
            return check
        }
    }

    /// Parses `count` predicates (five forms, varying constants) and compiles each to the SQL
    /// of a fetch request.
    func compilePredicates(_ coordinator: PersistentStoreCoordinator, count: Int) throws -> Sample {
        let forms: [(String, String, (Int) -> [Any?])] = [
            ("Item", "quantity == %@", { [$0] }),
            ("Item", "name BEGINSWITH[c] %@", { ["item \($0)"] }),
            ("Item", "owner.name == %@ AND score > %@", { ["Owner \($0)", 2.5] }),
            ("Owner", "ANY items.quantity == %@", { [$0] }),
            ("Owner", "items.@count == %@", { [$0 % 200] }),
        ]
        let store = coordinator.store
        return try time {
            var check: Int64 = 0
            for i in 0..<count {
                let (entity, format, arguments) = forms[i % forms.count]
                var request = FetchRequest(entityName: entity)
                request.predicate = try FLPredicate(format: format, arguments: arguments(i))
                check &+= Int64(try store.sqlForFetch(request).sql.utf8.count)
            }
            return check
        }
    }

    /// Iterates every item of a batched fetch (batches of 500), reading its values: `fetch(_:)`
    /// returns the batch-faulting ``FetchedResults``, which makes objects a batch at a time and
    /// lets go of the batch before.
    func iterate(path: String) throws -> Int64 {
        let coordinator = try open(path)
        let context = ManagedObjectContext(coordinator: coordinator)
        var request = FetchRequest(entityName: "Item")
        request.fetchBatchSize = 500
        var check: Int64 = 0
        for object in try context.fetch(request) { check &+= try Self.check(object) }
        return check
    }
}
