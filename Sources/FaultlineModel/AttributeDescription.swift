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

    /// Xcode's "Use Scalar Type" (`usesScalarValueType` in the model's XML): whether generated
    /// code gives a number or Boolean attribute a plain Swift type (`Int16`) rather than an
    /// optional one; nil when the model does not say (compiled models, older XML files).
    ///
    /// Code generation only: Core Data's runtime ignores it, so it takes no part in equality,
    /// hashing or the version hash.
    public var usesScalarValueType: Bool?

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
