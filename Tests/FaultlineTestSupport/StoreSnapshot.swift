import Faultline
import Foundation

/// The contents of a store as a comparable value: per entity name, its objects by primary
/// key, each with its attribute values and its relationships' targets.
///
/// Objects are keyed by entity name and `Z_PK` (``ObjectKey``), which lightweight migration
/// keeps, so a snapshot taken before a migration with the old model can be compared with one
/// taken after it with the new model (``compare(with:renames:)``). Values are normalized so
/// that `==` means "the same stored value" (``Value``); to-many targets are sorted, except for
/// ordered relationships, whose order is kept.
///
/// ```swift
/// let before = try StoreSnapshot(storeAt: url, model: oldModel)
/// // … migrate …
/// let after = try StoreSnapshot(storeAt: url, model: newModel)
/// let comparison = after.compare(with: before, renames: .init(properties: ["Note": ["text": "body"]]))
/// #expect(comparison.mismatches.isEmpty, "\(comparison)")
/// ```
public struct StoreSnapshot: Equatable, Sendable, CustomStringConvertible {
    /// An object's identity: its entity's name and its primary key.
    public struct ObjectKey: Hashable, Comparable, Sendable, CustomStringConvertible {
        /// The object's own entity (not a parent's).
        public var entity: String
        /// `Z_PK`.
        public var primaryKey: Int64

        /// A key.
        public init(entity: String, primaryKey: Int64) {
            self.entity = entity
            self.primaryKey = primaryKey
        }

        public static func < (lhs: Self, rhs: Self) -> Bool { (lhs.entity, lhs.primaryKey) < (rhs.entity, rhs.primaryKey) }

        public var description: String { "\(entity)#\(primaryKey)" }
    }

    /// A stored attribute value, normalized so that equal stored values compare equal.
    public enum Value: Hashable, Sendable, CustomStringConvertible {
        /// No value.
        case null
        /// Boolean.
        case bool(Bool)
        /// Any integer width.
        case integer(Int64)
        /// Double and Float (a Float as the Double it widens to).
        case double(Double)
        /// Decimal, kept as a `Decimal` (compared by value).
        case decimal(Decimal)
        /// String.
        case string(String)
        /// Date, as seconds since 2001-01-01.
        case date(Double)
        /// Binary and Transformable bytes (external storage read in).
        case data(Data)
        /// UUID.
        case uuid(UUID)
        /// URI, as its absolute string.
        case uri(String)
        /// A value of a type not listed above, by its description.
        case other(String)

        /// Normalizes a value read with `value(forKey:)`.
        public init(_ value: Any?) {
            switch value {
            case nil: self = .null
            case let v as Bool: self = .bool(v)
            case let v as Int16: self = .integer(Int64(v))
            case let v as Int32: self = .integer(Int64(v))
            case let v as Int64: self = .integer(v)
            case let v as Int: self = .integer(Int64(v))
            case let v as Double: self = .double(v)
            case let v as Float: self = .double(Double(v))
            case let v as Decimal: self = .decimal(v)
            case let v as String: self = .string(v)
            case let v as Date: self = .date(v.timeIntervalSinceReferenceDate)
            case let v as Data: self = .data(v)
            case let v as UUID: self = .uuid(v)
            case let v as URL: self = .uri(v.absoluteString)
            case let v?: self = .other(String(describing: v))
            }
        }

        public var description: String {
            switch self {
            case .null: "nil"
            case .bool(let v): v ? "YES" : "NO"
            case .integer(let v): "\(v)"
            case .double(let v): "\(v)"
            case .decimal(let v): "\(v) (decimal)"
            case .string(let v): "\"\(v)\""
            case .date(let v): "\(Date(timeIntervalSinceReferenceDate: v)) (\(v))"
            case .data(let v): v.count <= 16 ? "<\(v.map { String(format: "%02x", $0) }.joined())>" : "<\(v.count) bytes>"
            case .uuid(let v): v.uuidString
            case .uri(let v): v
            case .other(let v): v
            }
        }
    }

    /// One object: attribute values and relationship targets, by property name.
    public struct Object: Equatable, Sendable {
        /// Stored attributes (transient ones left out).
        public var attributes: [String: Value] = [:]
        /// Stored relationships: the targets (none or one for a to-one), sorted unless the
        /// relationship is ordered.
        public var relationships: [String: [ObjectKey]] = [:]

        /// An empty object.
        public init() {}
    }

    /// One entity: its stored properties and its objects (not its sub-entities').
    public struct Entity: Equatable, Sendable {
        /// Stored attribute names.
        public var attributeNames: [String]
        /// Stored relationship names.
        public var relationshipNames: [String]
        /// The ordered to-many relationships among them.
        public var orderedRelationships: Set<String>
        /// Objects by primary key.
        public var objects: [Int64: Object]

        /// An entity of the model with `objects`.
        public init(model entity: EntityDescription, objects: [Int64: Object]) {
            attributeNames = entity.attributes.filter { !$0.isTransient }.map(\.name).sorted()
            let relationships = entity.relationships.filter { !$0.isTransient }
            relationshipNames = relationships.map(\.name).sorted()
            orderedRelationships = Set(relationships.filter(\.isOrdered).map(\.name))
            self.objects = objects
        }
    }

    /// Entities by name.
    public var entities: [String: Entity]

    /// A snapshot of the given entities.
    public init(entities: [String: Entity]) { self.entities = entities }

    /// Reads the store at `url` with `model` (read-only: no byte of the store changes).
    ///
    /// - Throws: ``PersistentStoreError`` when the store cannot be opened with the model (a model
    ///   whose version hashes differ from the store's, for one); fetch errors.
    public init(storeAt url: URL, model: ManagedObjectModel) throws {
        let store = try SQLiteStore(url: url, model: model)
        try self.init(store: store)
    }

    /// Reads every object of `store` with a new context.
    public init(store: SQLiteStore) throws {
        let context = ManagedObjectContext(coordinator: PersistentStoreCoordinator(store: store))
        var entities: [String: Entity] = [:]
        for entity in store.model.entities {
            var objects: [Int64: Object] = [:]
            if !entity.isAbstract {
                var request = FetchRequest(entityName: entity.name)
                request.includesSubentities = false
                for managed in try context.fetch(request) {
                    var object = Object()
                    for attribute in entity.attributes where !attribute.isTransient {
                        object.attributes[attribute.name] = Value(managed.value(forKey: attribute.name))
                    }
                    for relationship in entity.relationships where !relationship.isTransient {
                        var keys = managed.objectIDs(forRelationshipNamed: relationship.name).map {
                            ObjectKey(entity: $0.entityName, primaryKey: $0.primaryKey)
                        }
                        if !relationship.isOrdered { keys.sort() }
                        object.relationships[relationship.name] = keys
                    }
                    objects[managed.objectID.primaryKey] = object
                }
            }
            entities[entity.name] = Entity(model: entity, objects: objects)
        }
        self.entities = entities
    }

    /// Objects per entity name (only entities with objects).
    public var counts: [String: Int] {
        entities.compactMapValues { $0.objects.isEmpty ? nil : $0.objects.count }
    }

    /// Every object's key, sorted.
    public var keys: [ObjectKey] {
        entities.flatMap { name, entity in entity.objects.keys.map { ObjectKey(entity: name, primaryKey: $0) } }.sorted()
    }

    /// The object with `key`, if any.
    public subscript(key: ObjectKey) -> Object? { entities[key.entity]?.objects[key.primaryKey] }

    public var description: String {
        counts.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ")
    }

    // MARK: Comparing

    /// Old names mapped to new ones, for comparing snapshots across a model change.
    public struct Renames: Sendable {
        /// Old entity name → new entity name.
        public var entities: [String: String]
        /// Old entity name → (old property name → new property name).
        public var properties: [String: [String: String]]

        /// Renames; none by default.
        public init(entities: [String: String] = [:], properties: [String: [String: String]] = [:]) {
            self.entities = entities
            self.properties = properties
        }

        /// The new name of an old entity.
        public func entity(_ old: String) -> String { entities[old] ?? old }
        /// The new name of an old entity's property.
        public func property(_ old: String, of entity: String) -> String { properties[entity]?[old] ?? old }
        /// An old key with its entity renamed.
        public func key(_ key: ObjectKey) -> ObjectKey { ObjectKey(entity: entity(key.entity), primaryKey: key.primaryKey) }
    }

    /// One difference between two snapshots' data.
    public enum Mismatch: Hashable, Sendable, CustomStringConvertible {
        /// An object of the old snapshot is not in the new one.
        case missingObject(ObjectKey)
        /// An object of the new snapshot was not in the old one.
        case unexpectedObject(ObjectKey)
        /// An attribute present in both models has another value (new key, new property name).
        case valueChanged(ObjectKey, property: String, old: Value, new: Value)
        /// A relationship present in both models has other targets (old targets renamed).
        case relationshipChanged(ObjectKey, property: String, old: [ObjectKey], new: [ObjectKey])

        public var description: String {
            switch self {
            case .missingObject(let key): "missing object \(key)"
            case .unexpectedObject(let key): "unexpected object \(key)"
            case .valueChanged(let key, let property, let old, let new): "\(key).\(property): \(old) became \(new)"
            case .relationshipChanged(let key, let property, let old, let new):
                "\(key).\(property): \(old.map(\.description)) became \(new.map(\.description))"
            }
        }
    }

    /// The outcome of ``compare(with:renames:)``: data mismatches, and the entities and
    /// properties only one of the two models has (not mismatches: a migration adds and removes
    /// them on purpose).
    public struct Comparison: Sendable, CustomStringConvertible {
        /// Differences in the data both models hold, sorted.
        public var mismatches: [Mismatch] = []
        /// Entities of the new snapshot that no old entity maps to.
        public var addedEntities: [String] = []
        /// Entities of the old snapshot whose new name is not in the new snapshot, with their
        /// object counts.
        public var removedEntities: [String: Int] = [:]
        /// New entity name → properties no old property maps to.
        public var addedProperties: [String: [String]] = [:]
        /// Old entity name → properties whose new name the new entity lacks.
        public var removedProperties: [String: [String]] = [:]

        /// Whether the data both models hold is the same.
        public var isMatch: Bool { mismatches.isEmpty }

        public var description: String {
            var lines = mismatches.map(\.description)
            if !addedEntities.isEmpty { lines.append("added entities: \(addedEntities.joined(separator: ", "))") }
            for (name, count) in removedEntities.sorted(by: { $0.key < $1.key }) { lines.append("removed entity \(name) (\(count) objects)") }
            for (name, properties) in addedProperties.sorted(by: { $0.key < $1.key }) {
                lines.append("added to \(name): \(properties.joined(separator: ", "))")
            }
            for (name, properties) in removedProperties.sorted(by: { $0.key < $1.key }) {
                lines.append("removed from \(name): \(properties.joined(separator: ", "))")
            }
            return lines.isEmpty ? "no differences" : lines.joined(separator: "\n")
        }
    }

    /// Compares this (new) snapshot with an `old` one, mapping old entity and property names
    /// through `renames`. Only properties present in both entities are compared; the others
    /// are listed as added or removed. A relationship that became ordered (or unordered) is
    /// compared as sorted sets.
    public func compare(with old: StoreSnapshot, renames: Renames = Renames()) -> Comparison {
        var result = Comparison()
        var mappedNew: Set<String> = []
        for (oldName, oldEntity) in old.entities.sorted(by: { $0.key < $1.key }) {
            let newName = renames.entity(oldName)
            guard let newEntity = entities[newName] else {
                result.removedEntities[oldName] = oldEntity.objects.count
                continue
            }
            mappedNew.insert(newName)
            let rename = { (property: String) in renames.property(property, of: oldName) }
            let newAttributes = Set(newEntity.attributeNames)
            let newRelationships = Set(newEntity.relationshipNames)
            let attributes = oldEntity.attributeNames.filter { newAttributes.contains(rename($0)) }
            let relationships = oldEntity.relationshipNames.filter { newRelationships.contains(rename($0)) }
            let removed = oldEntity.attributeNames.filter { !newAttributes.contains(rename($0)) }
                + oldEntity.relationshipNames.filter { !newRelationships.contains(rename($0)) }
            if !removed.isEmpty { result.removedProperties[oldName] = removed.sorted() }
            let mappedProperties = Set((oldEntity.attributeNames + oldEntity.relationshipNames).map(rename))
            let added = (newEntity.attributeNames + newEntity.relationshipNames).filter { !mappedProperties.contains($0) }
            if !added.isEmpty { result.addedProperties[newName] = added.sorted() }

            for (primaryKey, oldObject) in oldEntity.objects {
                let key = ObjectKey(entity: newName, primaryKey: primaryKey)
                guard let newObject = newEntity.objects[primaryKey] else {
                    result.mismatches.append(.missingObject(key))
                    continue
                }
                for name in attributes {
                    let newProperty = rename(name)
                    let before = oldObject.attributes[name] ?? .null
                    let after = newObject.attributes[newProperty] ?? .null
                    if before != after { result.mismatches.append(.valueChanged(key, property: newProperty, old: before, new: after)) }
                }
                for name in relationships {
                    let newProperty = rename(name)
                    var before = (oldObject.relationships[name] ?? []).map(renames.key)
                    var after = newObject.relationships[newProperty] ?? []
                    if oldEntity.orderedRelationships.contains(name) != newEntity.orderedRelationships.contains(newProperty) {
                        before.sort()
                        after.sort()
                    }
                    if before != after { result.mismatches.append(.relationshipChanged(key, property: newProperty, old: before, new: after)) }
                }
            }
            for primaryKey in newEntity.objects.keys where oldEntity.objects[primaryKey] == nil {
                result.mismatches.append(.unexpectedObject(ObjectKey(entity: newName, primaryKey: primaryKey)))
            }
        }
        result.addedEntities = entities.keys.filter { !mappedNew.contains($0) }.sorted()
        result.mismatches.sort { $0.description < $1.description }
        return result
    }

    /// ``compare(with:renames:)``'s mismatches as readable lines (empty when the data match).
    public func differences(from old: StoreSnapshot, renames: Renames = Renames()) -> [String] {
        compare(with: old, renames: renames).mismatches.map(\.description)
    }
}
