import Foundation

/// An attribute of an entity: a named, typed value stored in one column.
public struct AttributeDescription: Sendable, Hashable {
    /// The property name (`label`).
    public var name: String
    /// The attribute type.
    public var attributeType: AttributeType
    /// Whether the attribute may be nil when saved.
    public var isOptional: Bool
    /// Whether the attribute is kept in memory only and never stored.
    public var isTransient: Bool
    /// The default value as written in the model (`defaultValueString`), if any.
    public var defaultValueString: String?
    /// For Date attributes: the default as seconds since 2001-01-01, if any.
    public var defaultDateTimeInterval: Double?
    /// Whether large binary values may be stored outside the database file.
    public var allowsExternalBinaryDataStorage: Bool
    /// The value transformer name of a Transformable attribute (`""` = default).
    public var valueTransformerName: String?
    /// The value class name (`customClassName` in XML, `attributeValueClassName` in the API).
    public var valueClassName: String?
    /// Whether the value is kept in persistent history tombstones after deletion.
    public var preservesValueInHistoryOnDeletion: Bool
    /// The renaming identifier (`elementID` in XML).
    public var renamingIdentifier: String?
    /// The version hash modifier.
    public var versionHashModifier: String?
    /// User info entries.
    public var userInfo: [String: String]
    /// Whether the value cannot be set (derived attributes are read-only).
    public var isReadOnly: Bool
    /// The minimum (numbers: value; strings: length; dates: seconds since 2001), as text.
    public var minValueString: String?
    /// The maximum (numbers: value; strings: length; dates: seconds since 2001), as text.
    public var maxValueString: String?
    /// The pattern a String value must match (`regularExpressionString`), if any.
    public var regularExpressionString: String?
    /// For a derived attribute: the derivation expression in NSExpression format
    /// (`primaryLabel.code`, `friends.@count`, `now()`); nil for an ordinary attribute.
    public var derivationExpression: String?
    /// For a derived attribute: the filtering predicate in NSPredicate format, if any.
    public var filteringPredicateFormat: String?
    /// Validation predicates in NSPredicate format (from a compiled model), with their
    /// warning texts or codes.
    public var validationPredicates: [ValidationRule]
    /// Whether the attribute has a (legacy, single-property) index.
    public var isIndexed: Bool
    /// Whether Spotlight indexes the attribute.
    public var isIndexedBySpotlight: Bool
    /// Whether the value is stored in an external record ("truth file", deprecated).
    public var isStoredInExternalRecord: Bool
    /// Whether CloudKit encrypts the value.
    public var allowsCloudEncryption: Bool
    /// Core Data's version hash of the attribute; filled in by the model (empty until then).
    public internal(set) var versionHash: Data = Data()

    /// For a Composite attribute (iOS 17), the name of its composite type in the model.
    public var compositeName: String?
    /// For a Composite attribute, the elements of its composite type.
    public var compositeElements: [AttributeDescription] = []

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
    /// The property name (`inventories`).
    public var name: String
    /// The name of the destination entity.
    public var destinationEntityName: String
    /// The name of the inverse relationship on the destination entity, if any.
    public var inverseName: String?
    /// The entity that declares the inverse, as written in the model (usually the destination).
    public var inverseEntityName: String?
    /// The minimum number of destination objects (0 = no minimum).
    public var minCount: Int
    /// The maximum number of destination objects (0 = unbounded; 1 = to-one).
    public var maxCount: Int
    /// Whether this is a to-many relationship.
    public var isToMany: Bool
    /// Whether the to-many relationship keeps its objects in order.
    public var isOrdered: Bool
    /// The rule applied to the destination objects when the source is deleted.
    public var deleteRule: DeleteRule
    /// Whether the relationship may be empty / nil when saved.
    public var isOptional: Bool
    /// Whether the relationship is kept in memory only.
    public var isTransient: Bool
    /// The renaming identifier (`elementID` in XML).
    public var renamingIdentifier: String?
    /// The version hash modifier.
    public var versionHashModifier: String?
    /// User info entries.
    public var userInfo: [String: String]
    /// Whether the relationship cannot be set.
    public var isReadOnly: Bool = false
    /// Whether Spotlight indexes the relationship.
    public var isIndexedBySpotlight: Bool = false
    /// Core Data's version hash of the relationship; filled in by the model (empty until then).
    public internal(set) var versionHash: Data = Data()

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
