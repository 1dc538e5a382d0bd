import Foundation

/// An entity of a managed object model: a kind of object with attributes and relationships.
///
/// Build one with its *declared* properties; ``ManagedObjectModel`` resolves inheritance, so an
/// entity taken from a model also lists the properties it inherits (``attributes``,
/// ``relationships``) and its ``subentityNames``.
///
/// ```swift
/// let asset = EntityDescription(name: "Asset", attributes: [.init(name: "label", type: .string)],
///     relationships: [.init(name: "inventories", destination: "Inventory", inverse: "asset",
///                           toMany: true, deleteRule: .cascade)])
/// ```
public struct EntityDescription: Sendable, Hashable {
    /// The stored values; copies of the description share one immutable box, so passing
    /// a description around (every managed object refers to its entity) costs one retain.
    struct Fields: Sendable, Hashable {
        var name: String = ""
        var managedObjectClassName: String? = nil
        var isAbstract: Bool = false
        var superentityName: String? = nil
        var declaredAttributes: [AttributeDescription] = []
        var declaredRelationships: [RelationshipDescription] = []
        var declaredFetchedProperties: [FetchedPropertyDescription] = []
        var renamingIdentifier: String? = nil
        var versionHashModifier: String? = nil
        var userInfo: [String: String] = [:]
        var uniquenessConstraints: [[String]] = []
        var compoundIndexes: [[String]] = []
        var fetchIndexes: [FetchIndexDescription] = []
        var subentityNames: [String] = []
        var attributes: [AttributeDescription] = []
        var relationships: [RelationshipDescription] = []
        var fetchedProperties: [FetchedPropertyDescription] = []
        var versionHash: Data = Data()
    }

    @usableFromInline
    final class Box: Sendable {
        let fields: Fields
        /// The name and the layout again, readable from other modules' inlined code: they are
        /// read per object made, set or saved.
        @usableFromInline let name: String
        @usableFromInline let layout: PropertyLayout
        init(_ fields: Fields) {
            self.fields = fields
            self.name = fields.name
            self.layout = PropertyLayout(attributes: fields.attributes, relationships: fields.relationships)
        }
    }

    // No initial value: an initializer that sets it (``init(takingCountedStorage:)``, once per
    // object fetched) would make and drop a box first.
    @usableFromInline private(set) var box: Box

    /// The description's storage, one shared object: for code that takes the reference
    /// counts of many copies of a description at once (Faultline's fetches, for the objects
    /// they make; see ``init(takingCountedStorage:)``).
    package var storageReference: UnsafeMutableRawPointer { Unmanaged.passUnretained(box).toOpaque() }

    /// A copy of the description whose storage is ``storageReference``, holding one of the
    /// reference counts the caller took on it in bulk instead of taking one of its own.
    package init(takingCountedStorage storage: UnsafeMutableRawPointer) {
        box = Unmanaged<Box>.fromOpaque(storage).takeRetainedValue()
    }

    private mutating func update(_ change: (inout Fields) -> Void) {
        var fields = box.fields
        change(&fields)
        box = Box(fields)
    }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.box === rhs.box || lhs.box.fields == rhs.box.fields }

    public func hash(into hasher: inout Hasher) { hasher.combine(box.fields) }

    /// The entity name (`Asset`).
    public var name: String {
        @inlinable get { box.name }
        set { update { $0.name = newValue } }
    }
    /// The class name of its objects (`representedClassName`); nil means `NSManagedObject`.
    public var managedObjectClassName: String? {
        get { box.fields.managedObjectClassName }
        set { update { $0.managedObjectClassName = newValue } }
    }
    /// Whether the entity is abstract (only its sub-entities have instances).
    public var isAbstract: Bool {
        get { box.fields.isAbstract }
        set { update { $0.isAbstract = newValue } }
    }
    /// The name of the parent entity, if any.
    public var superentityName: String? {
        get { box.fields.superentityName }
        set { update { $0.superentityName = newValue } }
    }
    /// The attributes declared by this entity itself.
    public var declaredAttributes: [AttributeDescription] {
        get { box.fields.declaredAttributes }
        set { update { $0.declaredAttributes = newValue } }
    }
    /// The relationships declared by this entity itself.
    public var declaredRelationships: [RelationshipDescription] {
        get { box.fields.declaredRelationships }
        set { update { $0.declaredRelationships = newValue } }
    }
    /// The fetched properties declared by this entity itself.
    public var declaredFetchedProperties: [FetchedPropertyDescription] {
        get { box.fields.declaredFetchedProperties }
        set { update { $0.declaredFetchedProperties = newValue } }
    }
    /// The renaming identifier (`elementID` in XML).
    public var renamingIdentifier: String? {
        get { box.fields.renamingIdentifier }
        set { update { $0.renamingIdentifier = newValue } }
    }
    /// The version hash modifier.
    public var versionHashModifier: String? {
        get { box.fields.versionHashModifier }
        set { update { $0.versionHashModifier = newValue } }
    }
    /// User info entries.
    public var userInfo: [String: String] {
        get { box.fields.userInfo }
        set { update { $0.userInfo = newValue } }
    }
    /// Uniqueness constraints: each one a list of property names.
    public var uniquenessConstraints: [[String]] {
        get { box.fields.uniquenessConstraints }
        set { update { $0.uniquenessConstraints = newValue } }
    }
    /// Legacy compound indexes: each one a list of property names.
    public var compoundIndexes: [[String]] {
        get { box.fields.compoundIndexes }
        set { update { $0.compoundIndexes = newValue } }
    }
    /// Fetch indexes.
    public var fetchIndexes: [FetchIndexDescription] {
        get { box.fields.fetchIndexes }
        set { update { $0.fetchIndexes = newValue } }
    }

    /// Names of the direct sub-entities, sorted; filled in by the model.
    public internal(set) var subentityNames: [String] {
        get { box.fields.subentityNames }
        set { update { $0.subentityNames = newValue } }
    }
    /// All attributes, inherited ones included, sorted by name; filled in by the model.
    public internal(set) var attributes: [AttributeDescription] {
        get { box.fields.attributes }
        set { update { $0.attributes = newValue } }
    }
    /// All relationships, inherited ones included, sorted by name; filled in by the model.
    public internal(set) var relationships: [RelationshipDescription] {
        get { box.fields.relationships }
        set { update { $0.relationships = newValue } }
    }
    /// All fetched properties, inherited ones included, sorted by name; filled in by the model.
    public internal(set) var fetchedProperties: [FetchedPropertyDescription] {
        get { box.fields.fetchedProperties }
        set { update { $0.fetchedProperties = newValue } }
    }
    /// Core Data's 32-byte version hash of the entity (what a store's metadata records in
    /// `NSStoreModelVersionHashes`); filled in by the model (empty until then).
    public internal(set) var versionHash: Data {
        get { box.fields.versionHash }
        set { update { $0.versionHash = newValue } }
    }

    /// Creates an entity from its declared properties.
    public init(
        name: String,
        managedObjectClassName: String? = nil,
        isAbstract: Bool = false,
        superentityName: String? = nil,
        attributes: [AttributeDescription] = [],
        relationships: [RelationshipDescription] = [],
        fetchedProperties: [FetchedPropertyDescription] = [],
        renamingIdentifier: String? = nil,
        versionHashModifier: String? = nil,
        userInfo: [String: String] = [:],
        uniquenessConstraints: [[String]] = [],
        compoundIndexes: [[String]] = [],
        fetchIndexes: [FetchIndexDescription] = []
    ) {
        box = Box(Fields())
        self.name = name
        self.managedObjectClassName = managedObjectClassName
        self.isAbstract = isAbstract
        self.superentityName = superentityName
        self.declaredAttributes = attributes
        self.declaredRelationships = relationships
        self.declaredFetchedProperties = fetchedProperties
        self.renamingIdentifier = renamingIdentifier
        self.versionHashModifier = versionHashModifier
        self.userInfo = userInfo
        self.uniquenessConstraints = uniquenessConstraints
        self.compoundIndexes = compoundIndexes
        self.fetchIndexes = fetchIndexes
    }

    /// The attribute with this name (inherited ones included), if any.
    public func attribute(named name: String) -> AttributeDescription? {
        // The layout numbers attributes first, in this order.
        if let slot = box.layout.slot(of: name), slot < box.fields.attributes.count { return box.fields.attributes[slot] }
        return nil
    }

    /// The relationship with this name (inherited ones included), if any.
    public func relationship(named name: String) -> RelationshipDescription? {
        // The layout numbers relationships after the attributes, in this order.
        guard let slot = box.layout.slot(of: name) else { return nil }
        let attributeCount = box.fields.attributes.count
        if slot >= attributeCount { return box.fields.relationships[slot - attributeCount] }
        return box.fields.relationships.first { $0.name == name }  // an attribute of the same name comes first in the layout
    }

    /// Where each of the entity's properties (inherited ones included) sits in an object's
    /// value slots; worked out once per entity, shared by all its copies.
    @inlinable public var propertyLayout: PropertyLayout { box.layout }

    /// Whether the entity has sub-entities.
    public var hasSubentities: Bool { !subentityNames.isEmpty }
}

/// A fetch index: a named list of elements that Core Data turns into a SQLite index.
public struct FetchIndexDescription: Sendable, Hashable {
    /// One indexed property and its order.
    public struct Element: Sendable, Hashable {
        /// The property name.
        public var property: String
        /// `Binary` (ordinary) or `RTree`.
        public var type: String
        /// Whether the element is sorted ascending.
        public var isAscending: Bool
        /// For an expression element: the expression in NSExpression format (`property` is
        /// then the expression's name, such as `expression1`).
        public var expression: String?

        /// Creates an element.
        public init(property: String, type: String = "Binary", isAscending: Bool = true, expression: String? = nil) {
            self.property = property
            self.type = type
            self.isAscending = isAscending
            self.expression = expression
        }
    }

    /// The index name (`byDateAdded`).
    public var name: String
    /// The indexed elements, in order.
    public var elements: [Element]
    /// The predicate of a partial index (NSPredicate format), if any.
    public var partialIndexPredicate: String?

    /// Creates a fetch index.
    public init(name: String, elements: [Element], partialIndexPredicate: String? = nil) {
        self.name = name
        self.elements = elements
        self.partialIndexPredicate = partialIndexPredicate
    }
}

/// The properties of an entity numbered for slot storage: every attribute (inherited ones
/// included, in ``EntityDescription/attributes`` order), then every relationship. An object's
/// values are an array indexed by these slots, so reading a value hashes its key once, and
/// decoding a row hashes none.
public final class PropertyLayout: Sendable {
    /// What a slot holds.
    public enum Kind: Sendable, Hashable {
        /// An attribute value.
        case attribute
        /// A to-one relationship: the destination's object ID.
        case toOne
        /// A to-many relationship: the destinations' object IDs.
        case toMany
    }

    /// The property names, by slot.
    public let names: [String]
    /// What each slot holds.
    public let kinds: [Kind]
    /// The slots that may hold object IDs: relationships, and attributes of type objectID.
    public let identifierSlots: [Int]
    /// Whether two properties share a name (an invalid model): ``slot(of:)`` then gives the
    /// attribute's slot, and lookups that must prefer the relationship check it.
    public let hasDuplicateNames: Bool
    /// Whether some attribute is Binary with external storage allowed: its slot may then
    /// hold a reference to a file, read when the value is asked for.
    public let hasExternalBinary: Bool
    /// Per slot: whether a setter may write it (false for read-only and derived attributes).
    public let isWritable: [Bool]
    /// The slots of attributes validation looks at, in order: those that are required (not
    /// optional) or have a minimum, a maximum or a pattern, and are not derived.
    public let validatedAttributeSlots: [Int]
    /// The relationships validation looks at, by their index among the entity's
    /// relationships, in order: those that are not transient and are required, or are to-many
    /// with a minimum or a maximum count.
    public let validatedRelationships: [Int]
    private let index: [String: Int]
    /// Per slot: its name's UTF-8 length, compared before the name (a scan then compares
    /// whole names only where the lengths agree).
    private let nameLengths: [Int]
    /// Per slot: its name's two words as they are in memory. A key with the same two words
    /// is that name — the same short string held inline, or the same string storage — so a
    /// key written as a literal (`value(forKey: "name")`) finds its slot by comparing two
    /// integers per slot, before any string comparison. Empty when names repeat: the first
    /// slot with the same words could then be the relationship's, where ``slot(of:)`` gives
    /// the attribute's.
    private let nameWords: [NameWords]
    private struct NameWords: Equatable {
        var first: UInt64
        var second: UInt64
        @inline(__always)
        init(_ name: String) { (first, second) = unsafeBitCast(name, to: (UInt64, UInt64).self) }
    }

    /// A layout of attributes, then relationships.
    public init(attributes: [AttributeDescription], relationships: [RelationshipDescription]) {
        var names = attributes.map(\.name)
        var kinds = [Kind](repeating: .attribute, count: names.count)
        var identifierSlots = attributes.indices.filter { attributes[$0].attributeType == .objectID }
        for relationship in relationships {
            identifierSlots.append(names.count)
            names.append(relationship.name)
            kinds.append(relationship.isToMany ? .toMany : .toOne)
        }
        var index: [String: Int] = [:]
        for (i, name) in names.enumerated() where index[name] == nil { index[name] = i }
        self.names = names
        self.kinds = kinds
        self.identifierSlots = identifierSlots
        self.hasDuplicateNames = index.count < names.count
        self.hasExternalBinary = attributes.contains(where: \.usesExternalBinaryStorage)
        self.isWritable = attributes.map { !$0.isReadOnly && !$0.isDerived } + Array(repeating: true, count: relationships.count)
        self.validatedAttributeSlots = attributes.indices.filter {
            let attribute = attributes[$0]
            return !attribute.isDerived
                && (!attribute.isOptional || attribute.minValueString != nil || attribute.maxValueString != nil
                    || !(attribute.regularExpressionString ?? "").isEmpty)
        }
        self.validatedRelationships = relationships.indices.filter {
            let relationship = relationships[$0]
            return !relationship.isTransient
                && (!relationship.isOptional || (relationship.isToMany && (relationship.minCount > 0 || relationship.maxCount > 0)))
        }
        self.index = index
        self.nameLengths = names.map(\.utf8.count)
        // (A string is two words on 64-bit platforms; elsewhere the scan below does it all.)
        self.nameWords = MemoryLayout<String>.size == MemoryLayout<NameWords>.size && !hasDuplicateNames ? names.map(NameWords.init) : []
    }

    /// The number of slots.
    @inlinable public var count: Int { names.count }

    /// The slot of a property, or nil when the entity has no property of that name.
    ///
    /// A small entity's names are scanned: comparing short strings is cheaper than hashing one.
    public func slot(of name: String) -> Int? {
        if !nameWords.isEmpty {
            let words = NameWords(name)
            for i in nameWords.indices where nameWords[i] == words { return i }
        }
        if names.count <= 12 {
            let length = name.utf8.count
            for i in names.indices where nameLengths[i] == length && names[i] == name { return i }
            // Strings compare by canonical equivalence, which can join names of other lengths
            // (U+212A KELVIN SIGN is "K"): a key beyond ASCII is looked up as the index does.
            return name.utf8.contains { $0 >= 0x80 } ? index[name] : nil
        }
        return index[name]
    }
}
