import Foundation

/// A relationship from one entity to another (or to itself).
public struct RelationshipDescription: Sendable, Hashable {
    /// The stored values, shared by all copies (see ``SharedFields``).
    struct Fields: Sendable, Hashable {
        var name: String = ""
        var destinationEntityName: String = ""
        var inverseName: String? = nil
        var inverseEntityName: String? = nil
        var minCount: Int = 0
        var maxCount: Int = 0
        var isToMany: Bool = false
        var isOrdered: Bool = false
        var deleteRule: DeleteRule = .nullify
        var isOptional: Bool = false
        var isTransient: Bool = false
        var renamingIdentifier: String? = nil
        var versionHashModifier: String? = nil
        var userInfo: [String: String] = [:]
        var isReadOnly: Bool = false
        var isIndexedBySpotlight: Bool = false
        var versionHash: Data = Data()
    }

    private var box = SharedFields(Fields())

    private mutating func update(_ change: (inout Fields) -> Void) { box = box.updated(change) }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.box.holdsSameFields(as: rhs.box) }

    public func hash(into hasher: inout Hasher) { hasher.combine(box.fields) }

    /// The property name (`inventories`).
    public var name: String {
        get { box.fields.name }
        set { update { $0.name = newValue } }
    }
    /// The name of the destination entity.
    public var destinationEntityName: String {
        get { box.fields.destinationEntityName }
        set { update { $0.destinationEntityName = newValue } }
    }
    /// The name of the inverse relationship on the destination entity, if any.
    public var inverseName: String? {
        get { box.fields.inverseName }
        set { update { $0.inverseName = newValue } }
    }
    /// The entity that declares the inverse, as written in the model (usually the destination).
    public var inverseEntityName: String? {
        get { box.fields.inverseEntityName }
        set { update { $0.inverseEntityName = newValue } }
    }
    /// The minimum number of destination objects (0 = no minimum).
    public var minCount: Int {
        get { box.fields.minCount }
        set { update { $0.minCount = newValue } }
    }
    /// The maximum number of destination objects (0 = unbounded; 1 = to-one).
    public var maxCount: Int {
        get { box.fields.maxCount }
        set { update { $0.maxCount = newValue } }
    }
    /// Whether this is a to-many relationship.
    public var isToMany: Bool {
        get { box.fields.isToMany }
        set { update { $0.isToMany = newValue } }
    }
    /// Whether the to-many relationship keeps its objects in order.
    public var isOrdered: Bool {
        get { box.fields.isOrdered }
        set { update { $0.isOrdered = newValue } }
    }
    /// The rule applied to the destination objects when the source is deleted.
    public var deleteRule: DeleteRule {
        get { box.fields.deleteRule }
        set { update { $0.deleteRule = newValue } }
    }
    /// Whether the relationship may be empty / nil when saved.
    public var isOptional: Bool {
        get { box.fields.isOptional }
        set { update { $0.isOptional = newValue } }
    }
    /// Whether the relationship is kept in memory only.
    public var isTransient: Bool {
        get { box.fields.isTransient }
        set { update { $0.isTransient = newValue } }
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
    /// Whether the relationship cannot be set.
    public var isReadOnly: Bool {
        get { box.fields.isReadOnly }
        set { update { $0.isReadOnly = newValue } }
    }
    /// Whether Spotlight indexes the relationship.
    public var isIndexedBySpotlight: Bool {
        get { box.fields.isIndexedBySpotlight }
        set { update { $0.isIndexedBySpotlight = newValue } }
    }
    /// Core Data's version hash of the relationship; filled in by the model (empty until then).
    public internal(set) var versionHash: Data {
        get { box.fields.versionHash }
        set { update { $0.versionHash = newValue } }
    }

    /// Whether the relationship is to-one.
    public var isToOne: Bool { !isToMany }

    /// Creates a relationship with Core Data's defaults (optional, Nullify, to-one unless `toMany`).
    public init(
        name: String,
        destination: String,
        inverse: String? = nil,
        inverseEntityName: String? = nil,
        toMany: Bool = false,
        ordered: Bool = false,
        deleteRule: DeleteRule = .nullify,
        isOptional: Bool = true,
        isTransient: Bool = false,
        minCount: Int = 0,
        maxCount: Int? = nil,
        renamingIdentifier: String? = nil,
        versionHashModifier: String? = nil,
        userInfo: [String: String] = [:]
    ) {
        self.name = name
        self.destinationEntityName = destination
        self.inverseName = inverse
        self.inverseEntityName = inverseEntityName ?? (inverse == nil ? nil : destination)
        self.isToMany = toMany
        self.isOrdered = ordered
        self.deleteRule = deleteRule
        self.isOptional = isOptional
        self.isTransient = isTransient
        self.minCount = minCount
        self.maxCount = maxCount ?? (toMany ? 0 : 1)
        self.renamingIdentifier = renamingIdentifier
        self.versionHashModifier = versionHashModifier
        self.userInfo = userInfo
    }
}
