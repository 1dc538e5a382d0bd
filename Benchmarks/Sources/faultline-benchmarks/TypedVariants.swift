import Faultline
import Foundation

/// A hand-written class for the benchmark's `Item`, in the shape `faultline generate` writes:
/// the Faultline variants "typed" read and write through these accessors (a slot by index,
/// no key hashed), the others through `value(forKey:)`.
final class BenchItem: ManagedObject, ManagedObjectSubclass {
    class var entityName: String { "Item" }
    class var managedProperties: [ManagedPropertyDeclaration] {
        [
            .attribute("quantity", .integer64), .attribute("score", .double), .attribute("name", .string),
            .attribute("created", .date), .attribute("flag", .boolean), .toOne("owner", BenchOwner.self),
        ]
    }
    var quantity: Int64 {
        get { attributeValue(at: 0, named: "quantity") ?? 0 }
        set { setAttributeValue(newValue, at: 0, named: "quantity") }
    }
    var score: Double {
        get { attributeValue(at: 1, named: "score") ?? 0 }
        set { setAttributeValue(newValue, at: 1, named: "score") }
    }
    var name: String? {
        get { attributeValue(at: 2, named: "name") }
        set { setAttributeValue(newValue, at: 2, named: "name") }
    }
    var created: Date? {
        get { attributeValue(at: 3, named: "created") }
        set { setAttributeValue(newValue, at: 3, named: "created") }
    }
    var flag: Bool {
        get { attributeValue(at: 4, named: "flag") ?? false }
        set { setAttributeValue(newValue, at: 4, named: "flag") }
    }
    var owner: BenchOwner? {
        get { toOneValue(at: 5, named: "owner") }
        set { setToOneValue(newValue, at: 5, named: "owner") }
    }
}

/// The benchmark's `Owner`.
final class BenchOwner: ManagedObject, ManagedObjectSubclass {
    class var entityName: String { "Owner" }
    class var managedProperties: [ManagedPropertyDeclaration] {
        [.attribute("name", .string), .attribute("rank", .integer64), .toMany("items", BenchItem.self)]
    }
    var name: String? {
        get { attributeValue(at: 0, named: "name") }
        set { setAttributeValue(newValue, at: 0, named: "name") }
    }
    var rank: Int64 {
        get { attributeValue(at: 1, named: "rank") ?? 0 }
        set { setAttributeValue(newValue, at: 1, named: "rank") }
    }
}

extension FaultlineBench {
    /// A coordinator with the benchmark classes registered.
    func openTyped(_ path: String) throws -> PersistentStoreCoordinator {
        let coordinator = try open(path)
        try coordinator.registerClasses([BenchItem.self, BenchOwner.self])
        return coordinator
    }

    /// Reads the five attributes of an item through its typed properties.
    @inline(__always) static func check(_ item: BenchItem) throws -> Int64 {
        guard let name = item.name, let created = item.created else {
            throw BenchmarkError("item \(item.objectID) has a missing value")
        }
        return ItemValues(quantity: item.quantity, score: item.score, name: name, created: created, flag: item.flag).check
    }

    func fetchTyped(_ coordinator: PersistentStoreCoordinator) throws -> Sample {
        try time {
            let context = ManagedObjectContext(coordinator: coordinator)
            var check: Int64 = 0
            for object in try context.fetch(FetchRequest(entityName: "Item")) {
                guard let item = object as? BenchItem else { throw BenchmarkError("not a BenchItem") }
                check &+= try Self.check(item)
            }
            return check
        }
    }

    func insertTyped(path: String, count: Int) throws -> Sample {
        let coordinator = try openTyped(path)
        let values = (1...count).map(ItemValues.init)
        return try time {
            let context = ManagedObjectContext(coordinator: coordinator)
            context.isUndoEnabled = false
            var check: Int64 = 0
            for v in values {
                let item = try BenchItem(context: context)
                item.quantity = v.quantity
                item.score = v.score
                item.name = v.name
                item.created = v.created
                item.flag = v.flag
                check &+= v.check
            }
            try context.save()
            return check
        }
    }

    /// An owner's two values, read through its typed properties.
    @inline(__always) static func ownerCheck(_ owner: BenchOwner?) throws -> Int64 {
        guard let owner, let name = owner.name else { throw BenchmarkError("owner missing") }
        return Int64(name.utf8.count) &+ owner.rank
    }

    /// An item's owner through the typed classes.
    static func typedOwner(_ item: ManagedObject) -> ManagedObject? { (item as? BenchItem)?.owner }

    /// An owner's values through the typed classes.
    static func typedOwnerCheck(_ owner: ManagedObject?) throws -> Int64 { try ownerCheck(owner as? BenchOwner) }

    func updateTyped(_ coordinator: PersistentStoreCoordinator) throws -> Sample {
        try time {
            let context = ManagedObjectContext(coordinator: coordinator)
            context.isUndoEnabled = false
            var count: Int64 = 0
            for object in try context.fetch(FetchRequest(entityName: "Item")) {
                guard let item = object as? BenchItem else { throw BenchmarkError("not a BenchItem") }
                item.score += 1
                count += 1
            }
            try context.save()
            return count
        }
    }
}
