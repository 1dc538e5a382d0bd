import Faultline
import Foundation

/// The model, the seeded store and the deterministic changes that the crash-consistency and
/// concurrent-writer tests drive through the `faultline-torture` child program.
///
/// It has every shape a save writes: an ordered to-many with a cascade delete rule
/// (`Group.members`, `Z_FOK_GROUP` positions), an unordered to-many with cascade
/// (`Group.notes`), an ordered many-to-many (`Member.tags` ↔ `Tag.members`, a join table with
/// an order column), a plain many-to-many (`Group.tags` ↔ `Tag.groups`), Binary data that
/// allows external storage (`Member.payload`), an attribute preserved in the persistent
/// history after deletion (`Member.name`, a tombstone column), and counters to increment.
public enum TortureModel {
    /// External-storage threshold used by every open: values over 2 KiB go to files.
    public static let externalThreshold = 2048

    /// The model (entity numbers by name: Counter 1, Group 2, Member 3, Note 4, Tag 5).
    public static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(name: "Counter", attributes: [
                AttributeDescription(name: "name", type: .string),
                AttributeDescription(name: "value", type: .integer64),
            ]),
            EntityDescription(name: "Group", attributes: [
                AttributeDescription(name: "name", type: .string),
                AttributeDescription(name: "counter", type: .integer64),
            ], relationships: [
                RelationshipDescription(name: "members", destination: "Member", inverse: "group", toMany: true, ordered: true, deleteRule: .cascade),
                RelationshipDescription(name: "notes", destination: "Note", inverse: "group", toMany: true, deleteRule: .cascade),
                RelationshipDescription(name: "tags", destination: "Tag", inverse: "groups", toMany: true),
            ]),
            EntityDescription(name: "Member", attributes: [
                AttributeDescription(name: "name", type: .string, preservesValueInHistoryOnDeletion: true),
                AttributeDescription(name: "score", type: .integer64),
                AttributeDescription(name: "payload", type: .binaryData, allowsExternalBinaryDataStorage: true),
            ], relationships: [
                RelationshipDescription(name: "group", destination: "Group", inverse: "members"),
                RelationshipDescription(name: "tags", destination: "Tag", inverse: "members", toMany: true, ordered: true),
            ]),
            EntityDescription(name: "Note", attributes: [
                AttributeDescription(name: "text", type: .string),
            ], relationships: [
                RelationshipDescription(name: "group", destination: "Group", inverse: "notes"),
            ]),
            EntityDescription(name: "Tag", attributes: [
                AttributeDescription(name: "name", type: .string),
            ], relationships: [
                RelationshipDescription(name: "members", destination: "Member", inverse: "tags", toMany: true),
                RelationshipDescription(name: "groups", destination: "Group", inverse: "tags", toMany: true),
            ]),
        ])
    }

    /// The next version of ``model()`` for the migration kill test: a new entity `Archive`
    /// that sorts first (every entity number moves up by one, join tables and `Z<n>` columns
    /// are renamed), `Member.rank` added with a default (in place), `Note.text` dropped and
    /// `Note.title` added (the table is rebuilt).
    public static func migratedModel() throws -> ManagedObjectModel {
        let old = try model()
        var entities = old.entities.map { entity -> EntityDescription in
            EntityDescription(
                name: entity.name, attributes: entity.declaredAttributes, relationships: entity.declaredRelationships)
        }
        for i in entities.indices {
            if entities[i].name == "Member" {
                entities[i] = EntityDescription(
                    name: "Member", attributes: entities[i].declaredAttributes + [AttributeDescription(name: "rank", type: .integer64, isOptional: false, defaultValueString: "7")],
                    relationships: entities[i].declaredRelationships)
            } else if entities[i].name == "Note" {
                entities[i] = EntityDescription(name: "Note", attributes: [AttributeDescription(name: "title", type: .string)], relationships: entities[i].declaredRelationships)
            }
        }
        entities.insert(EntityDescription(name: "Archive", attributes: [AttributeDescription(name: "name", type: .string)]), at: 0)
        return try ManagedObjectModel(entities: entities)
    }

    /// Opens (creating when missing) a store for writing, with persistent history.
    public static func open(_ url: URL) throws -> ManagedObjectContext {
        let store = try SQLiteStore(
            url: url, model: try model(),
            options: .init(readOnly: false, createIfMissing: true, externalBinaryDataThreshold: externalThreshold, persistentHistoryTracking: true))
        return ManagedObjectContext(coordinator: PersistentStoreCoordinator(store: store))
    }

    /// Deterministic bytes: `count` of them from `seed`; over the threshold they go to a file.
    public static func payload(_ seed: UInt64, count: Int) -> Data {
        var rng = SplitMix64(seed: seed)
        var data = Data(count: count)
        for i in 0..<count { data[i] = UInt8(truncatingIfNeeded: rng.next()) }
        return data
    }

    /// Every object of an entity, in primary-key order.
    public static func all(_ context: ManagedObjectContext, _ entity: String, where format: String? = nil) throws -> [ManagedObject] {
        var request = FetchRequest(entityName: entity)
        if let format { request.predicate = try FLPredicate(format: format) }
        request.sortDescriptors = [FLSortDescriptor(key: "self")]
        return Array(try context.fetch(request))
    }

    /// Fills a new store: `groups` groups of `membersPerGroup` members (every third with a
    /// payload over the threshold, so in a file), 12 tags, notes, a shared counter and one
    /// counter per worker (`worker0` …), all in one save.
    public static func seed(_ url: URL, groups: Int = 8, membersPerGroup: Int = 25, workers: Int = 0) throws {
        let context = try open(url)
        var rng = SplitMix64(seed: 0x5EED)
        var tags: [ManagedObject] = []
        for t in 0..<12 {
            let tag = try context.insertObject(entityName: "Tag")
            try tag.setValue("tag\(t)", forKey: "name")
            tags.append(tag)
        }
        for g in 0..<groups {
            let group = try context.insertObject(entityName: "Group")
            try group.setValue("group\(g)", forKey: "name")
            try group.setValue(Int64(0), forKey: "counter")
            try group.addObject(tags[g % tags.count], toRelationship: "tags")
            for m in 0..<membersPerGroup {
                let member = try context.insertObject(entityName: "Member")
                let n = g * membersPerGroup + m
                try member.setValue("member\(n)", forKey: "name")
                try member.setValue(Int64(n), forKey: "score")
                try member.setValue(payload(UInt64(n), count: n % 3 == 0 ? 3000 + n : 40 + n % 50), forKey: "payload")
                try group.addObject(member, toRelationship: "members")
                for _ in 0..<rng.below(3) { try member.addObject(tags[rng.below(tags.count)], toRelationship: "tags") }
            }
            for k in 0..<3 {
                let note = try context.insertObject(entityName: "Note")
                try note.setValue("note\(g).\(k)", forKey: "text")
                try note.setValue(group, forKey: "group")
            }
        }
        for name in ["shared"] + (0..<workers).map({ "worker\($0)" }) {
            let counter = try context.insertObject(entityName: "Counter")
            try counter.setValue(name, forKey: "name")
            try counter.setValue(Int64(0), forKey: "value")
        }
        context.transactionAuthor = "seed"
        try context.save()
    }

    /// Makes one large deterministic change (not saved): inserts (with external payloads),
    /// updates (scores, replaced payloads, moves between groups, a reordered ordered
    /// to-many), cascading deletes of groups, direct deletes, many-to-many edits, a counter
    /// increment.
    public static func makeLargeChange(_ context: ManagedObjectContext, seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        context.transactionAuthor = "large-change"
        context.name = "torture"
        let groups = try all(context, "Group")
        let members = try all(context, "Member")
        let tags = try all(context, "Tag")
        guard groups.count > 4, members.count > 40, !tags.isEmpty else { throw TortureError("the store is not seeded") }
        // Groups deleted with everything they cascade to; the rest stay.
        let doomed = Set([1, 1 + rng.below(groups.count - 2) + 1].map { groups[$0 % groups.count].objectID })
        let living = groups.filter { !doomed.contains($0.objectID) }
        // Updates of existing members (some in doomed groups: deleted anyway by the cascade).
        for member in members where rng.below(3) == 0 {
            let score = member.value(forKey: "score") as? Int64 ?? 0
            try member.setValue(score + Int64(rng.below(1000)) + 1, forKey: "score")
            switch rng.below(4) {
            case 0: try member.setValue(payload(rng.next(), count: 2500 + rng.below(3000)), forKey: "payload")  // a new file
            case 1: try member.setValue(payload(rng.next(), count: 10 + rng.below(100)), forKey: "payload")  // inline now
            default: break
            }
        }
        // Moves between living groups, and one ordered to-many reversed.
        for member in members where rng.below(8) == 0 {
            try member.setValue(living[rng.below(living.count)], forKey: "group")
        }
        let reversed = living[rng.below(living.count)]
        let order = (reversed.value(forKey: "members") as? [ManagedObject]) ?? []
        try reversed.setValue(Array(order.reversed()), forKey: "members")
        // Many-to-many edits.
        for member in members where rng.below(6) == 0 {
            let current = (member.value(forKey: "tags") as? [ManagedObject]) ?? []
            if let first = current.first, rng.below(2) == 0 {
                try member.removeObject(first, fromRelationship: "tags")
            } else {
                try member.insertObject(tags[rng.below(tags.count)], at: 0, inRelationship: "tags")
            }
        }
        try groups[0].addObject(tags[rng.below(tags.count)], toRelationship: "tags")
        // Inserts into living groups, a third with payloads in files.
        for i in 0..<150 {
            let member = try context.insertObject(entityName: "Member")
            try member.setValue("new\(seed).\(i)", forKey: "name")
            try member.setValue(Int64(rng.below(10_000)), forKey: "score")
            try member.setValue(payload(rng.next(), count: i % 3 == 0 ? 2100 + rng.below(4000) : 1 + rng.below(500)), forKey: "payload")
            let group = living[rng.below(living.count)]
            if rng.below(2) == 0 {
                try group.insertObject(member, at: rng.below(5), inRelationship: "members")
            } else {
                try member.setValue(group, forKey: "group")
            }
            for _ in 0..<rng.below(3) { try member.addObject(tags[rng.below(tags.count)], toRelationship: "tags") }
        }
        for i in 0..<20 {
            let note = try context.insertObject(entityName: "Note")
            try note.setValue("new note \(i)", forKey: "text")
            try note.setValue(living[rng.below(living.count)], forKey: "group")
        }
        // Deletes: a few members directly, whole groups by cascade.
        for member in members where rng.below(20) == 0 && !member.isDeleted {
            context.delete(member)
        }
        for group in groups where doomed.contains(group.objectID) { context.delete(group) }
        for group in living {
            let value = group.value(forKey: "counter") as? Int64 ?? 0
            try group.setValue(value + 1, forKey: "counter")
        }
        if let counter = try all(context, "Counter", where: "name == 'shared'").first {
            try counter.setValue((counter.value(forKey: "value") as? Int64 ?? 0) + 1, forKey: "value")
        }
    }
}

/// A failure of the torture program or its checks, with a message.
public struct TortureError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// A small seeded generator (SplitMix64): the same seed gives the same run everywhere.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator starting from `seed`.
    public init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in `0..<bound` (0 when `bound` is not positive).
    public mutating func below(_ bound: Int) -> Int {
        bound > 0 ? Int(next() % UInt64(bound)) : 0
    }
}
