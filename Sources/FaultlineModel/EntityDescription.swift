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
    /// The entity name (`Asset`).
    public var name: String
    /// The class name of its objects (`representedClassName`); nil means `NSManagedObject`.
    public var managedObjectClassName: String?
    /// Whether the entity is abstract (only its sub-entities have instances).
    public var isAbstract: Bool
    /// The name of the parent entity, if any.
    public var superentityName: String?
    /// The attributes declared by this entity itself.
    public var declaredAttributes: [AttributeDescription]
    /// The relationships declared by this entity itself.
    public var declaredRelationships: [RelationshipDescription]
    /// The fetched properties declared by this entity itself.
    public var declaredFetchedProperties: [FetchedPropertyDescription]
    /// The renaming identifier (`elementID` in XML).
    public var renamingIdentifier: String?
    /// The version hash modifier.
    public var versionHashModifier: String?
    /// User info entries.
    public var userInfo: [String: String]
    /// Uniqueness constraints: each one a list of property names.
    public var uniquenessConstraints: [[String]]
    /// Legacy compound indexes: each one a list of property names.
    public var compoundIndexes: [[String]]
    /// Fetch indexes.
    public var fetchIndexes: [FetchIndexDescription]

    /// Names of the direct sub-entities, sorted; filled in by the model.
    public internal(set) var subentityNames: [String] = []
    /// All attributes, inherited ones included, sorted by name; filled in by the model.
    public internal(set) var attributes: [AttributeDescription] = []
    /// All relationships, inherited ones included, sorted by name; filled in by the model.
    public internal(set) var relationships: [RelationshipDescription] = []
    /// All fetched properties, inherited ones included, sorted by name; filled in by the model.
    public internal(set) var fetchedProperties: [FetchedPropertyDescription] = []
    /// Core Data's 32-byte version hash of the entity (what a store's metadata records in
    /// `NSStoreModelVersionHashes`); filled in by the model (empty until then).
    public internal(set) var versionHash: Data = Data()

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
        attributes.first { $0.name == name }
    }

    /// The relationship with this name (inherited ones included), if any.
    public func relationship(named name: String) -> RelationshipDescription? {
        relationships.first { $0.name == name }
    }

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
