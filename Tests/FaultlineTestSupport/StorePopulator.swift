import Faultline
import FaultlinePredicate
import Foundation

/// Creates a new SQLite store for any model and fills it with deterministic data: objects of
/// every non-abstract entity, a non-nil value for every stored attribute, every relationship
/// filled. The fixture for migration tests ("a store made by each older version with data in
/// every entity").
///
/// The store is made with the library's ordinary API (`SQLiteStore(url:model:options:)` with
/// `createIfMissing`, a coordinator, a context, `insertObject`, `setValue`, one `save()`), so
/// what it writes is what an application using Faultline would write.
///
/// ```swift
/// let model = try ManagedObjectModel(contentsOf: bundle, version: "Bookmark 2")
/// let result = try StorePopulator(model: model).populate(storeAt: folder.appendingPathComponent("Old.sqlite"))
/// let read = try StoreSnapshot(storeAt: result.storeURL, model: model)
/// #expect(read.differences(from: result.expected).isEmpty)
/// ```
///
/// Values (all from ``SeededRandom``, seeded per entity and property by ``Options/seed``, so the
/// same model and seed give the same store on every run):
///
/// - Strings: unique per table (`"<Entity>.<attribute> <n> <suffix>"`, some with non-ASCII
///   text), cut or padded to the model's minimum and maximum length; with a pattern, the first
///   of several shapes (the text, digits, letters, an e-mail address, a URL) that matches it.
/// - Integers of every width, Double, Float, Decimal, Date: distinct per table, within the
///   model's minimum and maximum (Float and Double values are exact binary fractions, so they
///   compare equal after a round trip; Decimals have at most 15 significant digits, all a
///   `DECIMAL` column keeps).
/// - Boolean alternating, Binary (1–48 bytes, or ``Options/externalBinaryDataSize`` where
///   external storage is allowed), UUID, URI, Transformable (a keyed archive of a string,
///   which is what the default `NSSecureUnarchiveFromData` transformer reads).
/// - Not set, and listed in ``Result/skipped``: transient and derived attributes (never
///   stored, or computed by the store), and types the library cannot store (Object ID,
///   Undefined, Composite); a non-optional one of those makes ``populate(storeAt:)`` throw.
///
/// Relationships: each pair (a relationship and its inverse) is filled once, from the to-one
/// side when there is one (a to-many without inverse gives each destination one source: Core
/// Data keeps it as a hidden foreign key in the destination's row), with round-robin targets (`source i → destinations i·k + j + offset`),
/// searching the number of targets per object, the offset and, for optional relationships, the
/// number of sources until both sides' minimum and maximum counts hold. Self-relationships
/// avoid pointing an object at itself; a relationship that is its own inverse (`friends`) is a
/// ring (to-many) or pairs (to-one). Ordered to-manys are given their targets in reverse order,
/// so their order is not the order of the primary keys.
public struct StorePopulator {
    /// What to generate.
    public struct Options: Sendable {
        /// Objects inserted into each non-abstract entity (sub-entities get their own).
        public var objectsPerEntity: Int
        /// The seed of every value.
        public var seed: UInt64
        /// Targets a to-many relationship is given when its counts allow it.
        public var preferredToManyCount: Int
        /// When above 0, Binary attributes that allow external storage get this many bytes on
        /// every other object (above the store's threshold, 128 KiB by default, they go to
        /// files in `.<store>_SUPPORT/_EXTERNAL_DATA/`); 0, the default, keeps them small.
        public var externalBinaryDataSize: Int

        /// Options with small defaults: 5 objects per entity, 3 targets per to-many.
        public init(objectsPerEntity: Int = 5, seed: UInt64 = 0x5EED, preferredToManyCount: Int = 3, externalBinaryDataSize: Int = 0) {
            self.objectsPerEntity = objectsPerEntity
            self.seed = seed
            self.preferredToManyCount = preferredToManyCount
            self.externalBinaryDataSize = externalBinaryDataSize
        }
    }

    /// A property the populator left unset, and why.
    public struct SkippedProperty: Sendable, Hashable, CustomStringConvertible {
        /// The entity declaring or inheriting it.
        public var entity: String
        /// The property.
        public var property: String
        /// Why it was not set.
        public var reason: String

        public var description: String { "\(entity).\(property): \(reason)" }
    }

    /// A relationship some objects were left without (it is optional and the counts on the two
    /// sides did not allow filling all of them).
    public struct PartlyFilledRelationship: Sendable, Hashable, CustomStringConvertible {
        /// The entity of the objects left empty.
        public var entity: String
        /// The relationship.
        public var relationship: String
        /// How many of the objects have no target.
        public var emptyObjects: Int
        /// How many objects of the entity (with sub-entities) have the relationship.
        public var objects: Int

        public var description: String { "\(entity).\(relationship): \(emptyObjects) of \(objects) objects empty" }
    }

    /// What ``populate(storeAt:)`` made.
    public struct Result {
        /// The new store.
        public var storeURL: URL
        /// The store's contents as inserted (built from the generated values, not read back):
        /// compare it with a ``StoreSnapshot`` read from the store.
        public var expected: StoreSnapshot
        /// Objects inserted per entity name (entities without objects are absent).
        public var insertedCounts: [String: Int]
        /// Properties left unset.
        public var skipped: [SkippedProperty]
        /// Optional relationships that could not be given a target on every object.
        public var partlyFilled: [PartlyFilledRelationship]
    }

    /// An entity or property the populator cannot fill: names the entity and property.
    public struct PopulationError: Error, Sendable, CustomStringConvertible {
        /// The entity.
        public var entity: String
        /// The property, when one is at fault.
        public var property: String?
        /// What is wrong.
        public var message: String

        /// An error about `entity` (and `property`).
        public init(entity: String, property: String? = nil, _ message: String) {
            self.entity = entity
            self.property = property
            self.message = message
        }

        public var description: String {
            "cannot populate \(entity)\(property.map { ".\($0)" } ?? ""): \(message)"
        }
    }

    /// The model.
    public let model: ManagedObjectModel
    /// The options.
    public let options: Options

    /// A populator for `model`.
    public init(model: ManagedObjectModel, options: Options = Options()) {
        self.model = model
        self.options = options
    }

    /// Creates a new store at `url` (which must not exist), fills it, saves and closes it.
    ///
    /// - Throws: ``PopulationError`` naming the entity and property that cannot be filled
    ///   (a required property of a type the library cannot store, bounds no value fits, a
    ///   pattern no generated shape matches, relationship counts no assignment satisfies);
    ///   the library's own errors when creating or saving fails.
    public func populate(storeAt url: URL) throws -> Result {
        guard !FileManager.default.fileExists(atPath: url.path) else {
            throw PopulationError(entity: "-", "\(url.path) already exists: the populator makes new stores only")
        }
        guard options.objectsPerEntity > 0 else {
            throw PopulationError(entity: "-", "objectsPerEntity must be at least 1")
        }
        var builder = Builder(model: model, options: options)
        let store = try SQLiteStore(url: url, model: model, options: .init(readOnly: false, createIfMissing: true))
        let context = ManagedObjectContext(coordinator: PersistentStoreCoordinator(store: store))
        context.isUndoEnabled = false
        try builder.insertObjects(into: context)
        try builder.fillRelationships()
        try context.save()
        let expected = try builder.expectedSnapshot()
        return Result(
            storeURL: url, expected: expected, insertedCounts: builder.insertedCounts,
            skipped: builder.skipped.sorted { ($0.entity, $0.property) < ($1.entity, $1.property) },
            partlyFilled: builder.partlyFilled)
    }
}

extension StorePopulator {
    /// An `NSKeyedArchiver` archive of a string, written with sorted keys so that the same
    /// string always gives the same bytes (Foundation's archiver orders its dictionaries by
    /// hash, which changes from one run to the next).
    public static func keyedArchive(of text: String) -> Data {
        BinaryPropertyList.data(.dictionary([
            "$archiver": .string("NSKeyedArchiver"),
            "$version": .integer(100_000),
            "$top": .dictionary(["root": .uid(1)]),
            "$objects": .array([.string("$null"), .string(text)]),
        ]))
    }
}

// MARK: - Building

extension StorePopulator {
    /// One populated object: the managed object and what was generated for it.
    final class Slot {
        let object: ManagedObject
        let entity: EntityDescription
        var attributes: [String: StoreSnapshot.Value] = [:]
        /// Relationship targets in the order the library keeps them (appended as edges are
        /// made, as the inverse is kept by the context).
        var relationships: [String: [Slot]] = [:]
        init(object: ManagedObject, entity: EntityDescription) {
            self.object = object
            self.entity = entity
        }
    }

    struct Builder {
        let model: ManagedObjectModel
        let options: Options
        var slotsByEntity: [String: [Slot]] = [:]
        var insertedCounts: [String: Int] = [:]
        var skipped: [SkippedProperty] = []
        var partlyFilled: [PartlyFilledRelationship] = []

        init(model: ManagedObjectModel, options: Options) {
            self.model = model
            self.options = options
        }

        /// A generator for one entity and property: the same names and seed give the same
        /// values whatever else the model holds.
        func generator(_ entity: String, _ property: String) -> SeededRandom {
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325  // FNV-1a: stable across runs, unlike Hasher
            for byte in "\(entity).\(property)".utf8 {
                hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
            }
            return SeededRandom(state: options.seed ^ hash)
        }

        // MARK: Objects and attributes

        mutating func insertObjects(into context: ManagedObjectContext) throws {
            // Ordinals per inheritance root: values must be distinct within a table.
            var ordinals: [String: Int] = [:]
            for entity in model.entities where !entity.isAbstract {
                try checkAttributes(of: entity)
                let root = model.rootEntity(of: entity).name
                var slots: [Slot] = []
                var generators: [String: SeededRandom] = [:]
                let constrained = Set(model.inheritanceChain(of: entity).flatMap(\.uniquenessConstraints).joined())
                for _ in 0..<options.objectsPerEntity {
                    let object = try context.insertObject(entityName: entity.name)
                    let slot = Slot(object: object, entity: entity)
                    let ordinal = ordinals[root, default: 0]
                    ordinals[root] = ordinal + 1
                    for attribute in entity.attributes where Self.isPopulated(attribute) {
                        var random = generators[attribute.name] ?? generator(entity.name, attribute.name)
                        let (value, normalized) = try AttributeGenerator(
                            entity: entity.name, attribute: attribute, ordinal: ordinal,
                            largeBinarySize: attribute.usesExternalBinaryStorage && ordinal % 2 == 1 ? options.externalBinaryDataSize : 0,
                            isUnique: constrained.contains(attribute.name)
                        ).make(&random)
                        generators[attribute.name] = random
                        try object.setValue(value, forKey: attribute.name)
                        slot.attributes[attribute.name] = normalized
                    }
                    slots.append(slot)
                }
                slotsByEntity[entity.name] = slots
                insertedCounts[entity.name] = slots.count
            }
        }

        static func isPopulated(_ attribute: AttributeDescription) -> Bool {
            !attribute.isTransient && !attribute.isDerived && unsupportedReason(attribute.attributeType) == nil
        }

        static func unsupportedReason(_ type: AttributeType) -> String? {
            switch type {
            case .objectID: "Object ID attributes exist only in fetch results; the library stores no value of them"
            case .undefined: "Undefined attributes have no stored type"
            case .composite: "the library does not store Composite attributes (their elements' columns)"
            default: nil
            }
        }

        /// Records the attributes that will not be set, and refuses required ones.
        mutating func checkAttributes(of entity: EntityDescription) throws {
            for attribute in entity.attributes where !Self.isPopulated(attribute) {
                let reason: String
                if attribute.isTransient {
                    reason = "transient: never stored"
                } else if attribute.isDerived {
                    reason = "derived: computed by the store"
                } else {
                    reason = Self.unsupportedReason(attribute.attributeType) ?? "not stored"
                    if !attribute.isOptional {
                        throw PopulationError(entity: entity.name, property: attribute.name, "required, but \(reason)")
                    }
                }
                skipped.append(SkippedProperty(entity: entity.name, property: attribute.name, reason: reason))
            }
        }

        // MARK: Relationships

        /// The objects a relationship from or to `entityName` can hold: the entity's and its
        /// sub-entities', in model order.
        func slots(ofKind entityName: String) -> [Slot] {
            guard let entity = model.entity(named: entityName) else { return [] }
            let names = Set(model.entityAndDescendants(of: entity).map(\.name))
            return model.entities.filter { names.contains($0.name) }.flatMap { slotsByEntity[$0.name] ?? [] }
        }

        mutating func fillRelationships() throws {
            var done: Set<String> = []
            for entity in model.entities {
                for relationship in entity.declaredRelationships where !done.contains("\(entity.name).\(relationship.name)") {
                    done.insert("\(entity.name).\(relationship.name)")
                    if relationship.isTransient {
                        skipped.append(SkippedProperty(entity: entity.name, property: relationship.name, reason: "transient: never stored"))
                        continue
                    }
                    var inverse: (entity: String, relationship: RelationshipDescription)?
                    if let name = relationship.inverseName, let destination = model.entity(named: relationship.destinationEntityName),
                        let found = destination.relationship(named: name)
                    {
                        let declaring = model.inheritanceChain(of: destination).first { $0.declaredRelationships.contains { $0.name == name } }
                        inverse = (declaring?.name ?? destination.name, found)
                        done.insert("\(declaring?.name ?? destination.name).\(name)")
                    }
                    try fill(entity: entity.name, relationship, inverse: inverse)
                }
            }
        }

        /// One side of a relationship pair, with the limits its objects' counts must keep.
        struct Side {
            let entity: String
            let relationship: RelationshipDescription
            var lowest: Int { relationship.isToMany ? max(relationship.minCount, 1) : 1 }
            var highest: Int { relationship.isToMany ? (relationship.maxCount > 0 ? relationship.maxCount : .max) : 1 }
            var mayBeEmpty: Bool { relationship.isOptional }
            func allows(_ count: Int) -> Bool { count == 0 ? mayBeEmpty : (count >= lowest && count <= highest) }
        }

        mutating func fill(entity: String, _ relationship: RelationshipDescription, inverse: (entity: String, relationship: RelationshipDescription)?) throws {
            let forward = Side(entity: entity, relationship: relationship)
            let backward = inverse.map { Side(entity: $0.entity, relationship: $0.relationship) }
            // A relationship that is its own inverse (`friends`, `spouse`).
            if let backward, backward.entity == forward.entity, backward.relationship.name == relationship.name {
                return try fillReflexive(forward)
            }
            // Fill from the to-one side when there is one: every source then gets exactly one.
            var (a, b) = (forward, backward)
            if let other = backward, relationship.isToMany, other.relationship.isToOne { (a, b) = (other, forward) }
            let sources = slots(ofKind: a.entity)
            let targets = slots(ofKind: a.relationship.destinationEntityName)
            guard !sources.isEmpty else { return }
            guard let plan = assignment(a, b, sources: sources, targets: targets) else {
                let bText = b.map { ", inverse \($0.entity).\($0.relationship.name) \(Self.describe($0.relationship))" } ?? ""
                throw PopulationError(
                    entity: a.entity, property: a.relationship.name,
                    "no assignment of \(targets.count) \(a.relationship.destinationEntityName) objects to \(sources.count) \(a.entity) objects "
                        + "satisfies \(Self.describe(a.relationship))\(bText)")
            }
            // When the other side is ordered, it lists its sources in the order they are set:
            // set them last to first, so that order is not the keys' order either.
            let order = b?.relationship.isOrdered == true ? Array(sources.indices.reversed()) : Array(sources.indices)
            for index in order {
                let source = sources[index]
                let chosen = plan[index].map { targets[$0] }
                guard !chosen.isEmpty else { continue }
                let name = a.relationship.name
                if a.relationship.isToMany {
                    // Reverse for ordered relationships, so their order is not the keys' order.
                    let list = a.relationship.isOrdered ? Array(chosen.reversed()) : chosen
                    try source.object.setValue(list.map(\.object), forKey: name)
                    for target in list { record(source, name, target, inverse: b?.relationship.name) }
                } else {
                    try source.object.setValue(chosen[0].object, forKey: name)
                    record(source, name, chosen[0], inverse: b?.relationship.name)
                }
            }
            notePartlyFilled(a, sources: sources)
            if let b { notePartlyFilled(b, sources: targets) }
        }

        /// Mirrors the context's bookkeeping: the target is appended to the source's list and
        /// the source to the target's inverse list.
        func record(_ source: Slot, _ name: String, _ target: Slot, inverse: String?) {
            source.relationships[name, default: []].append(target)
            if let inverse, !(target.relationships[inverse]?.contains { $0 === source } ?? false) {
                target.relationships[inverse, default: []].append(source)
            }
        }

        mutating func notePartlyFilled(_ side: Side, sources: [Slot]) {
            let empty = sources.filter { ($0.relationships[side.relationship.name] ?? []).isEmpty }.count
            if empty > 0 {
                partlyFilled.append(PartlyFilledRelationship(entity: side.entity, relationship: side.relationship.name, emptyObjects: empty, objects: sources.count))
            }
        }

        static func describe(_ relationship: RelationshipDescription) -> String {
            var parts = [relationship.isToMany ? "to-many" : "to-one", relationship.isOptional ? "optional" : "required"]
            if relationship.minCount > 0 { parts.append("min \(relationship.minCount)") }
            if relationship.maxCount > 0 && relationship.isToMany { parts.append("max \(relationship.maxCount)") }
            return "(" + parts.joined(separator: ", ") + ")"
        }

        /// Target indexes per source, or nil when no round-robin assignment keeps both sides'
        /// counts. Tries, in order: every source filled, then fewer (only for an optional
        /// side); the preferred count per source, then the others; every offset.
        func assignment(_ a: Side, _ b: Side?, sources: [Slot], targets: [Slot]) -> [[Int]]? {
            let m = sources.count
            let n = targets.count
            guard n > 0 else { return a.mayBeEmpty ? Array(repeating: [], count: m) : nil }
            let highest = min(a.highest, n)
            guard a.lowest <= highest else { return a.mayBeEmpty ? emptyIfAllowed(b, m: m, n: n) : nil }
            let preferred = a.relationship.isToMany ? min(max(options.preferredToManyCount, a.lowest), highest) : 1
            let counts = [preferred] + Array(a.lowest...highest).filter { $0 != preferred }
            let participants = a.mayBeEmpty ? Array((1...m).reversed()) : [m]
            var random = generator(a.entity, a.relationship.name)
            let firstOffset = random.below(n)
            for active in participants {
                for k in counts {
                    for step in 0..<n {
                        let offset = (firstOffset + step) % n
                        var plan = Array(repeating: [Int](), count: m)
                        var incoming = Array(repeating: 0, count: n)
                        var ok = true
                        for i in 0..<active {
                            var chosen: [Int] = []
                            var probe = 0
                            while chosen.count < k && probe < n {
                                let t = (i * k + offset + probe) % n
                                probe += 1
                                if targets[t] === sources[i] { continue }  // no object points at itself
                                chosen.append(t)
                            }
                            if chosen.count < k { ok = false; break }
                            plan[i] = chosen
                            for t in chosen { incoming[t] += 1 }
                        }
                        guard ok else { continue }
                        if let b, !incoming.allSatisfy(b.allows) { continue }
                        if let b, b.relationship.isToOne, incoming.contains(where: { $0 > 1 }) { continue }
                        // A to-many without inverse is kept in a hidden foreign key in the
                        // destination's row (as Core Data keeps it): one source per destination.
                        if b == nil, a.relationship.isToMany, incoming.contains(where: { $0 > 1 }) { continue }
                        return plan
                    }
                }
            }
            return nil
        }

        func emptyIfAllowed(_ b: Side?, m: Int, n: Int) -> [[Int]]? {
            guard b?.mayBeEmpty ?? true else { return nil }
            return Array(repeating: [], count: m)
        }

        /// A relationship that is its own inverse: pairs (0,1), (2,3)… for a to-one; a ring
        /// (each object with its two neighbours) for a to-many.
        mutating func fillReflexive(_ side: Side) throws {
            let all = slots(ofKind: side.entity)
            let name = side.relationship.name
            guard all.count > 1 else {
                if !side.mayBeEmpty && !all.isEmpty { throw PopulationError(entity: side.entity, property: name, "its own inverse, required, but only one object") }
                return
            }
            if side.relationship.isToOne {
                for pair in stride(from: 0, to: all.count - 1, by: 2) {
                    try all[pair].object.setValue(all[pair + 1].object, forKey: name)
                    record(all[pair], name, all[pair + 1], inverse: name)
                }
            } else {
                let edges = all.count == 2 ? [(0, 1)] : (0..<all.count).map { ($0, ($0 + 1) % all.count) }
                for (from, to) in edges {
                    try all[from].object.addObject(all[to].object, toRelationship: name)
                    record(all[from], name, all[to], inverse: name)
                }
            }
            for slot in all where !side.allows(slot.relationships[name]?.count ?? 0) {
                throw PopulationError(
                    entity: side.entity, property: name,
                    "its own inverse \(Self.describe(side.relationship)): \(slot.relationships[name]?.count ?? 0) targets do not fit")
            }
            notePartlyFilled(side, sources: all)
        }

        // MARK: The expected snapshot

        /// The generated contents keyed by the permanent IDs the save gave.
        func expectedSnapshot() throws -> StoreSnapshot {
            var entities: [String: StoreSnapshot.Entity] = [:]
            for entity in model.entities {
                var objects: [Int64: StoreSnapshot.Object] = [:]
                for slot in slotsByEntity[entity.name] ?? [] {
                    let key = try Self.key(slot)
                    var object = StoreSnapshot.Object()
                    object.attributes = slot.attributes
                    for relationship in entity.relationships where !relationship.isTransient {
                        var keys = try (slot.relationships[relationship.name] ?? []).map(Self.key)
                        if !relationship.isOrdered { keys.sort() }
                        object.relationships[relationship.name] = keys
                    }
                    objects[key.primaryKey] = object
                }
                entities[entity.name] = StoreSnapshot.Entity(model: entity, objects: objects)
            }
            return StoreSnapshot(entities: entities)
        }

        static func key(_ slot: Slot) throws -> StoreSnapshot.ObjectKey {
            let id = slot.object.objectID
            guard !id.isTemporaryID else {
                throw PopulationError(entity: slot.entity.name, "an object still has a temporary ID after the save")
            }
            return StoreSnapshot.ObjectKey(entity: slot.object.entity.name, primaryKey: id.primaryKey)
        }
    }
}

// MARK: - Attribute values

/// Makes the value of one attribute of one object.
struct AttributeGenerator {
    let entity: String
    let attribute: AttributeDescription
    /// The object's number within its inheritance root (its table): distinct values come from it.
    let ordinal: Int

    func fail(_ message: String) -> StorePopulator.PopulationError {
        StorePopulator.PopulationError(entity: entity, property: attribute.name, message)
    }

    var minimum: Double? { attribute.minValueString.flatMap { Double($0.trimmingCharacters(in: .whitespaces)) } }
    var maximum: Double? { attribute.maxValueString.flatMap { Double($0.trimmingCharacters(in: .whitespaces)) } }

    /// The value to set and its normalized form.
    func make(_ random: inout SeededRandom) throws -> (Any, StoreSnapshot.Value) {
        switch attribute.attributeType {
        case .integer16: return try integer(Int16.self, &random)
        case .integer32: return try integer(Int32.self, &random)
        case .integer64: return try integer(Int64.self, &random)
        case .boolean:
            let value = (ordinal + Int(random.next() & 1)) % 2 == 0
            return (value, .bool(value))
        case .double:
            let value = try fraction(&random)
            return (value, .double(value))
        case .float:
            let value = Float(try fraction(&random))
            return (value, .double(Double(value)))
        case .decimal: return try decimal(&random)
        case .string:
            let value = try string(&random)
            return (value, .string(value))
        case .date:
            let seconds = try dateSeconds(&random)
            return (Date(timeIntervalSinceReferenceDate: seconds), .date(seconds))
        case .binaryData:
            let count = largeBinarySize > 2 ? largeBinarySize - 2 : 1 + random.below(48)
            var bytes = [UInt8(truncatingIfNeeded: ordinal >> 8), UInt8(truncatingIfNeeded: ordinal)]
            for _ in 0..<count { bytes.append(UInt8(truncatingIfNeeded: random.next())) }
            return (Data(bytes), .data(Data(bytes)))
        case .uuid:
            var bytes = (0..<16).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            bytes[6] = (bytes[6] & 0x0F) | 0x40
            bytes[8] = (bytes[8] & 0x3F) | 0x80
            bytes[14] = UInt8(truncatingIfNeeded: ordinal >> 8)
            bytes[15] = UInt8(truncatingIfNeeded: ordinal)
            let uuid = UUID(uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
            return (uuid, .uuid(uuid))
        case .uri:
            guard let url = URL(string: "https://example.com/\(Self.pathSafe(entity))/\(ordinal)?r=\(random.below(100_000))") else {
                throw fail("cannot make a URL")
            }
            return (url, .uri(url.absoluteString))
        case .transformable:
            let data = StorePopulator.keyedArchive(of: "\(entity).\(attribute.name) \(ordinal) \(random.below(100_000))")
            return (data, .data(data))
        case .objectID, .undefined, .composite:
            throw fail(StorePopulator.Builder.unsupportedReason(attribute.attributeType) ?? "unsupported type")
        }
    }

    static func pathSafe(_ text: String) -> String {
        String(text.unicodeScalars.filter { CharacterSet.alphanumerics.contains($0) && $0.isASCII }.map(Character.init))
    }

    func integer<T: FixedWidthInteger & SignedInteger>(_: T.Type, _ random: inout SeededRandom) throws -> (Any, StoreSnapshot.Value) {
        var lowest = Int64(T.min)
        var highest = Int64(T.max)
        if let minimum { lowest = max(lowest, Int64(exactly: minimum.rounded(.up)) ?? (minimum < 0 ? Int64.min : Int64.max)) }
        if let maximum { highest = min(highest, Int64(exactly: maximum.rounded(.down)) ?? (maximum < 0 ? Int64.min : Int64.max)) }
        guard lowest <= highest else { throw fail("no integer lies between the minimum \(attribute.minValueString ?? "") and maximum \(attribute.maxValueString ?? "")") }
        // The number of values in range, as UInt64 (0 stands for all 2^64).
        let size = UInt64(bitPattern: highest &- lowest) &+ 1
        let value: Int64
        if size == 0 {
            // Full 64-bit range: random high bits, the ordinal in the low 16 (distinct).
            value = Int64(bitPattern: (random.next() & ~0xFFFF) | UInt64(ordinal & 0xFFFF))
        } else {
            guard UInt64(ordinal) < size || !isUnique else {
                throw fail("a uniqueness constraint needs more distinct values than \(lowest)...\(highest) holds")
            }
            // An odd stride is coprime with a power-of-two range (the full width), spreading
            // the values over it; a bounded range is walked in steps of one.
            let stride: UInt64 = size.nonzeroBitCount == 1 && size > 1024 ? 0x9E37_79B9 | 1 : 1
            let offset = random.next() % size
            let step = (offset &+ UInt64(ordinal) &* stride) % size
            value = lowest &+ Int64(bitPattern: step)
        }
        guard let typed = T(exactly: value) else { throw fail("value \(value) out of range") }
        return (typed, .integer(value))
    }

    /// Bytes of a large Binary value, or 0 for a small one.
    let largeBinarySize: Int
    /// Whether the attribute is one of a uniqueness constraint's properties.
    let isUnique: Bool

    /// A number within the bounds: an exact binary fraction (k/1024 of the range), distinct
    /// per ordinal below 1024; unbounded, the ordinal plus eighths.
    func fraction(_ random: inout SeededRandom) throws -> Double {
        switch (minimum, maximum) {
        case let (low?, high?):
            guard low <= high else { throw fail("the minimum \(low) is above the maximum \(high)") }
            let k = (ordinal * 389 + random.below(1024)) % 1024
            return low + (high - low) * Double(k) / 1024
        case let (low?, nil):
            return low + Double(ordinal) + Double(random.below(8)) / 8
        case let (nil, high?):
            return high - Double(ordinal) - Double(random.below(8)) / 8
        case (nil, nil):
            let sign: Double = random.chance(30) ? -1 : 1
            return sign * (Double(ordinal) * 1000 + Double(random.below(8000)) / 8)
        }
    }

    func decimal(_ random: inout SeededRandom) throws -> (Any, StoreSnapshot.Value) {
        let posix = Locale(identifier: "en_US_POSIX")
        let low = attribute.minValueString.flatMap { Decimal(string: $0, locale: posix) }
        let high = attribute.maxValueString.flatMap { Decimal(string: $0, locale: posix) }
        var value: Decimal
        switch (low, high) {
        case let (low?, high?):
            guard low <= high else { throw fail("the minimum \(low) is above the maximum \(high)") }
            let k = Decimal((ordinal * 389 + random.below(1000)) % 1000)
            value = low + (high - low) * k / 1000
        case let (low?, nil):
            value = low + Decimal(ordinal) + Decimal(random.below(100)) / 100
        case let (nil, high?):
            value = high - Decimal(ordinal) - Decimal(random.below(100)) / 100
        case (nil, nil):
            // Up to 15 significant digits on every other object: a DECIMAL column (NUMERIC
            // affinity) keeps Decimal text as a REAL with 15, in Core Data's stores as here.
            let digits = ordinal % 2 == 0 ? "\(ordinal).\(random.below(1000))" : "12345678\(ordinal % 10).\(100_000 + random.below(900_000))"
            guard let parsed = Decimal(string: digits, locale: posix) else { throw fail("cannot make a Decimal") }
            value = random.chance(30) ? -parsed : parsed
        }
        var rounded = Decimal()
        NSDecimalRound(&rounded, &value, 6, .plain)
        if let low, rounded < low { rounded = low }
        if let high, rounded > high { rounded = high }
        return (rounded, .decimal(rounded))
    }

    func dateSeconds(_ random: inout SeededRandom) throws -> Double {
        switch (minimum, maximum) {
        case (nil, nil):
            // Dates from 1988 to 2014 with a fraction of a second, distinct per ordinal.
            return Double(random.below(800_000) * 1000 + ordinal % 1000) - 400_000_000 + 0.25
        default:
            return try fraction(&random).rounded(.down)
        }
    }

    static let suffixes = ["", " ü", " 中文", " 🙂", " O'Brien", " \"q\""]

    func string(_ random: inout SeededRandom) throws -> String {
        let shortest = minimum.map { max(0, Int($0)) } ?? 0
        let longest = maximum.map { max(0, Int($0)) } ?? Int.max
        guard shortest <= longest else { throw fail("the minimum length \(shortest) is above the maximum \(longest)") }
        let unique = String(ordinal, radix: 36)
        var candidates: [String] = []
        let natural = "\(entity).\(attribute.name) \(ordinal)" + random.pick(Self.suffixes)
        candidates.append(natural)
        let letters = Array("abcdefghijklmnopqrstuvwxyz")
        let tail = String((0..<12).map { _ in random.pick(letters) })
        candidates.append(unique + tail)
        candidates.append(String(repeating: "0", count: max(0, 6 - String(ordinal).count)) + String(ordinal))
        candidates.append(String(unique.map { $0.isNumber ? letters[Int(String($0)) ?? 0] : $0 }) + tail)
        candidates.append("user\(ordinal)@example.com")
        candidates.append("https://example.com/\(ordinal)")
        let pattern = attribute.regularExpressionString.flatMap { $0.isEmpty ? nil : $0 }
        for candidate in candidates {
            guard let fitted = fit(candidate, shortest: shortest, longest: longest, unique: unique) else { continue }
            if let pattern {
                guard (try? FLRegex.cached(pattern).matches(fitted)) == true else { continue }
            }
            return fitted
        }
        throw fail(
            "no generated string fits\(pattern.map { " the pattern \($0)" } ?? "") with length \(shortest)...\(longest == .max ? "" : String(longest))")
    }

    /// `text` cut or padded to the length bounds, keeping the distinct part.
    func fit(_ text: String, shortest: Int, longest: Int, unique: String) -> String? {
        var result = text
        if result.utf16.count > longest {
            guard unique.utf16.count <= longest else { return nil }
            // Keep the distinct part at the end.
            let keep = longest - unique.utf16.count
            result = String(String(text.prefix(keep)).utf16.prefix(keep)) ?? ""
            result += unique
            guard result.utf16.count <= longest else { return nil }
        }
        while result.utf16.count < shortest { result += "x" }
        return result
    }
}
