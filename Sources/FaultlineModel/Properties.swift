import Foundation

/// An attribute of an entity: a named, typed value stored in one column.
public struct AttributeDescription: Sendable, Hashable {
    /// The stored values, shared by all copies (see ``SharedFields``).
    struct Fields: Sendable, Hashable {
        var name: String = ""
        var attributeType: AttributeType = .undefined
        var isOptional: Bool = false
        var isTransient: Bool = false
        var defaultValueString: String? = nil
        var defaultDateTimeInterval: Double? = nil
        var allowsExternalBinaryDataStorage: Bool = false
        var valueTransformerName: String? = nil
        var valueClassName: String? = nil
        var preservesValueInHistoryOnDeletion: Bool = false
        var renamingIdentifier: String? = nil
        var versionHashModifier: String? = nil
        var userInfo: [String: String] = [:]
        var isReadOnly: Bool = false
        var minValueString: String? = nil
        var maxValueString: String? = nil
        var regularExpressionString: String? = nil
        var derivationExpression: String? = nil
        var filteringPredicateFormat: String? = nil
        var validationPredicates: [ValidationRule] = []
        var isIndexed: Bool = false
        var isIndexedBySpotlight: Bool = false
        var isStoredInExternalRecord: Bool = false
        var allowsCloudEncryption: Bool = false
        var versionHash: Data = Data()
        var compositeName: String? = nil
        var compositeElements: [AttributeDescription] = []
    }

    private var box = SharedFields(Fields())

    private mutating func update(_ change: (inout Fields) -> Void) { box = box.updated(change) }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.box.holdsSameFields(as: rhs.box) }

    public func hash(into hasher: inout Hasher) { hasher.combine(box.fields) }

    /// The property name (`label`).
    public var name: String {
        get { box.fields.name }
        set { update { $0.name = newValue } }
    }
    /// The attribute type.
    public var attributeType: AttributeType {
        get { box.fields.attributeType }
        set { update { $0.attributeType = newValue } }
    }
    /// Whether the attribute may be nil when saved.
    public var isOptional: Bool {
        get { box.fields.isOptional }
        set { update { $0.isOptional = newValue } }
    }
    /// Whether the attribute is kept in memory only and never stored.
    public var isTransient: Bool {
        get { box.fields.isTransient }
        set { update { $0.isTransient = newValue } }
    }
    /// The default value as written in the model (`defaultValueString`), if any.
    public var defaultValueString: String? {
        get { box.fields.defaultValueString }
        set { update { $0.defaultValueString = newValue } }
    }
    /// For Date attributes: the default as seconds since 2001-01-01, if any.
    public var defaultDateTimeInterval: Double? {
        get { box.fields.defaultDateTimeInterval }
        set { update { $0.defaultDateTimeInterval = newValue } }
    }
    /// Whether large binary values may be stored outside the database file.
    public var allowsExternalBinaryDataStorage: Bool {
        get { box.fields.allowsExternalBinaryDataStorage }
        set { update { $0.allowsExternalBinaryDataStorage = newValue } }
    }
    /// Whether the store may keep the value in a file of its own: a Binary attribute that
    /// allows external storage (the flag means nothing on other types).
    public var usesExternalBinaryStorage: Bool { attributeType == .binaryData && allowsExternalBinaryDataStorage }
    /// The value transformer name of a Transformable attribute (`""` = default).
    public var valueTransformerName: String? {
        get { box.fields.valueTransformerName }
        set { update { $0.valueTransformerName = newValue } }
    }
    /// The value class name (`customClassName` in XML, `attributeValueClassName` in the API).
    public var valueClassName: String? {
        get { box.fields.valueClassName }
        set { update { $0.valueClassName = newValue } }
    }
    /// Whether the value is kept in persistent history tombstones after deletion.
    public var preservesValueInHistoryOnDeletion: Bool {
        get { box.fields.preservesValueInHistoryOnDeletion }
        set { update { $0.preservesValueInHistoryOnDeletion = newValue } }
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
    /// Whether the value cannot be set (derived attributes are read-only).
    public var isReadOnly: Bool {
        get { box.fields.isReadOnly }
        set { update { $0.isReadOnly = newValue } }
    }
    /// The minimum (numbers: value; strings: length; dates: seconds since 2001), as text.
    public var minValueString: String? {
        get { box.fields.minValueString }
        set { update { $0.minValueString = newValue } }
    }
    /// The maximum (numbers: value; strings: length; dates: seconds since 2001), as text.
    public var maxValueString: String? {
        get { box.fields.maxValueString }
        set { update { $0.maxValueString = newValue } }
    }
    /// The pattern a String value must match (`regularExpressionString`), if any.
    public var regularExpressionString: String? {
        get { box.fields.regularExpressionString }
        set { update { $0.regularExpressionString = newValue } }
    }
    /// For a derived attribute: the derivation expression in NSExpression format
    /// (`primaryLabel.code`, `friends.@count`, `now()`); nil for an ordinary attribute.
    public var derivationExpression: String? {
        get { box.fields.derivationExpression }
        set { update { $0.derivationExpression = newValue } }
    }
    /// For a derived attribute: the filtering predicate in NSPredicate format, if any.
    public var filteringPredicateFormat: String? {
        get { box.fields.filteringPredicateFormat }
        set { update { $0.filteringPredicateFormat = newValue } }
    }
    /// Validation predicates in NSPredicate format (from a compiled model), with their
    /// warning texts or codes.
    public var validationPredicates: [ValidationRule] {
        get { box.fields.validationPredicates }
        set { update { $0.validationPredicates = newValue } }
    }
    /// Whether the attribute has a (legacy, single-property) index.
    public var isIndexed: Bool {
        get { box.fields.isIndexed }
        set { update { $0.isIndexed = newValue } }
    }
    /// Whether Spotlight indexes the attribute.
    public var isIndexedBySpotlight: Bool {
        get { box.fields.isIndexedBySpotlight }
        set { update { $0.isIndexedBySpotlight = newValue } }
    }
    /// Whether the value is stored in an external record ("truth file", deprecated).
    public var isStoredInExternalRecord: Bool {
        get { box.fields.isStoredInExternalRecord }
        set { update { $0.isStoredInExternalRecord = newValue } }
    }
    /// Whether CloudKit encrypts the value.
    public var allowsCloudEncryption: Bool {
        get { box.fields.allowsCloudEncryption }
        set { update { $0.allowsCloudEncryption = newValue } }
    }
    /// Core Data's version hash of the attribute; filled in by the model (empty until then).
    public internal(set) var versionHash: Data {
        get { box.fields.versionHash }
        set { update { $0.versionHash = newValue } }
    }

    /// For a Composite attribute (iOS 17), the name of its composite type in the model.
    public var compositeName: String? {
        get { box.fields.compositeName }
        set { update { $0.compositeName = newValue } }
    }
    /// For a Composite attribute, the elements of its composite type.
    public var compositeElements: [AttributeDescription] {
        get { box.fields.compositeElements }
        set { update { $0.compositeElements = newValue } }
    }

    /// Whether this is a derived attribute (its value computed from ``derivationExpression``).
    public var isDerived: Bool { derivationExpression != nil }

    /// Creates an attribute. Only `name` and `type` are needed; the rest have Core Data's defaults.
    public init(
        name: String,
        type: AttributeType,
        isOptional: Bool = true,
        isTransient: Bool = false,
        defaultValueString: String? = nil,
        defaultDateTimeInterval: Double? = nil,
        allowsExternalBinaryDataStorage: Bool = false,
        valueTransformerName: String? = nil,
        valueClassName: String? = nil,
        preservesValueInHistoryOnDeletion: Bool = false,
        renamingIdentifier: String? = nil,
        versionHashModifier: String? = nil,
        userInfo: [String: String] = [:],
        isReadOnly: Bool = false,
        minValueString: String? = nil,
        maxValueString: String? = nil,
        regularExpressionString: String? = nil,
        derivationExpression: String? = nil,
        filteringPredicateFormat: String? = nil,
        validationPredicates: [ValidationRule] = [],
        isIndexed: Bool = false,
        isIndexedBySpotlight: Bool = false,
        isStoredInExternalRecord: Bool = false,
        allowsCloudEncryption: Bool = false
    ) {
        self.isReadOnly = isReadOnly
        self.minValueString = minValueString
        self.maxValueString = maxValueString
        self.regularExpressionString = regularExpressionString
        self.derivationExpression = derivationExpression
        self.filteringPredicateFormat = filteringPredicateFormat
        self.validationPredicates = validationPredicates
        self.isIndexed = isIndexed
        self.isIndexedBySpotlight = isIndexedBySpotlight
        self.isStoredInExternalRecord = isStoredInExternalRecord
        self.allowsCloudEncryption = allowsCloudEncryption
        self.name = name
        self.attributeType = type
        self.isOptional = isOptional
        self.isTransient = isTransient
        self.defaultValueString = defaultValueString
        self.defaultDateTimeInterval = defaultDateTimeInterval
        self.allowsExternalBinaryDataStorage = allowsExternalBinaryDataStorage
        self.valueTransformerName = valueTransformerName
        self.valueClassName = valueClassName
        self.preservesValueInHistoryOnDeletion = preservesValueInHistoryOnDeletion
        self.renamingIdentifier = renamingIdentifier
        self.versionHashModifier = versionHashModifier
        self.userInfo = userInfo
    }
}

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

/// A fetched property: a weak, one-way relationship defined by a fetch request.
///
/// Fetched properties do not enter the entity's version hash.
public struct FetchedPropertyDescription: Sendable, Hashable {
    /// The property name.
    public var name: String
    /// The fetch request that computes the property's value.
    public var fetchRequest: FetchRequestTemplate
    /// User info entries.
    public var userInfo: [String: String]
    /// Whether the property may be empty.
    public var isOptional: Bool
    /// The renaming identifier (`elementID` in XML).
    public var renamingIdentifier: String?
    /// The version hash modifier.
    public var versionHashModifier: String?

    /// Creates a fetched property.
    public init(
        name: String,
        fetchRequest: FetchRequestTemplate,
        userInfo: [String: String] = [:],
        isOptional: Bool = true,
        renamingIdentifier: String? = nil,
        versionHashModifier: String? = nil
    ) {
        self.name = name
        self.fetchRequest = fetchRequest
        self.userInfo = userInfo
        self.isOptional = isOptional
        self.renamingIdentifier = renamingIdentifier
        self.versionHashModifier = versionHashModifier
    }
}

/// A validation rule of an attribute: a predicate the value must satisfy and the warning
/// (a message or an error code, as text) reported when it does not.
public struct ValidationRule: Sendable, Hashable {
    /// The predicate in NSPredicate format (`SELF >= 1`).
    public var predicateFormat: String
    /// The warning text or code.
    public var warning: String

    /// Creates a rule.
    public init(predicateFormat: String, warning: String = "") {
        self.predicateFormat = predicateFormat
        self.warning = warning
    }
}

/// A fetch request stored in the model: a template with a name, or a fetched property's request.
public struct FetchRequestTemplate: Sendable, Hashable {
    /// The template name.
    public var name: String
    /// The entity fetched.
    public var entityName: String
    /// The predicate in NSPredicate format, as stored in the model.
    public var predicateFormat: String?
    /// The fetch limit (0 = none).
    public var fetchLimit: Int
    /// The batch size (0 = all at once).
    public var fetchBatchSize: Int
    /// The result type code (0 objects, 1 object IDs, 2 dictionaries, 4 count).
    public var resultType: Int
    /// Flags stored in the model; absent in XML means false.
    public var includesSubentities: Bool
    /// Whether property values are fetched with the objects.
    public var includesPropertyValues: Bool
    /// Whether unsaved changes are matched.
    public var includesPendingChanges: Bool
    /// Whether objects come back as faults.
    public var returnsObjectsAsFaults: Bool
    /// Whether dictionary results are distinct.
    public var returnsDistinctResults: Bool
    /// The fetch offset (0 = none).
    public var fetchOffset: Int = 0
    /// Sort descriptors as (key path, ascending), from a compiled model.
    public var sortDescriptors: [SortKey] = []

    /// One sort key of a stored fetch request.
    public struct SortKey: Sendable, Hashable {
        /// The key path sorted on.
        public var keyPath: String
        /// Whether the order is ascending.
        public var ascending: Bool

        /// Creates a sort key.
        public init(keyPath: String, ascending: Bool = true) {
            self.keyPath = keyPath
            self.ascending = ascending
        }
    }

    /// Creates a template.
    public init(
        name: String,
        entityName: String,
        predicateFormat: String? = nil,
        fetchLimit: Int = 0,
        fetchBatchSize: Int = 0,
        resultType: Int = 0,
        includesSubentities: Bool = true,
        includesPropertyValues: Bool = true,
        includesPendingChanges: Bool = true,
        returnsObjectsAsFaults: Bool = true,
        returnsDistinctResults: Bool = false
    ) {
        self.name = name
        self.entityName = entityName
        self.predicateFormat = predicateFormat
        self.fetchLimit = fetchLimit
        self.fetchBatchSize = fetchBatchSize
        self.resultType = resultType
        self.includesSubentities = includesSubentities
        self.includesPropertyValues = includesPropertyValues
        self.includesPendingChanges = includesPendingChanges
        self.returnsObjectsAsFaults = returnsObjectsAsFaults
        self.returnsDistinctResults = returnsDistinctResults
    }
}
