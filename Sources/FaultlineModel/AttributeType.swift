import Foundation

/// The type of an attribute, with Core Data's `NSAttributeType` raw values.
///
/// The raw value is the code Apple writes into compiled models and hashes into version
/// hashes (`700` for String, …); ``xmlName`` is the spelling in an `.xcdatamodel` file.
public enum AttributeType: Int, Sendable, CaseIterable, Hashable {
    case undefined = 0
    case integer16 = 100
    case integer32 = 200
    case integer64 = 300
    case decimal = 400
    case double = 500
    case float = 600
    case string = 700
    case boolean = 800
    case date = 900
    case binaryData = 1000
    case uuid = 1100
    case uri = 1200
    case transformable = 1800
    case objectID = 2000
    case composite = 2100

    /// The `attributeType` spelling used by Xcode's `contents` XML.
    public var xmlName: String {
        switch self {
        case .undefined: "Undefined"
        case .integer16: "Integer 16"
        case .integer32: "Integer 32"
        case .integer64: "Integer 64"
        case .decimal: "Decimal"
        case .double: "Double"
        case .float: "Float"
        case .string: "String"
        case .boolean: "Boolean"
        case .date: "Date"
        case .binaryData: "Binary"
        case .uuid: "UUID"
        case .uri: "URI"
        case .transformable: "Transformable"
        case .objectID: "Object ID"
        case .composite: "Composite"
        }
    }

    /// Creates a type from its Xcode XML spelling (`"Integer 16"`, `"Binary"`, …).
    public init?(xmlName: String) {
        guard let match = AttributeType.allCases.first(where: { $0.xmlName == xmlName }) else { return nil }
        self = match
    }

    /// Whether values of this type are integers (including Boolean).
    public var isInteger: Bool {
        switch self {
        case .integer16, .integer32, .integer64, .boolean: true
        default: false
        }
    }
}

extension AttributeType {
    /// The Swift type typed accessors use for the attribute type, as `faultline generate`
    /// writes it (`Int16`, `String`, `Data`, …); nil for Undefined and Composite, which have
    /// no typed accessor.
    public var swiftTypeName: String? {
        switch self {
        case .integer16: "Int16"
        case .integer32: "Int32"
        case .integer64: "Int64"
        case .decimal: "Decimal"
        case .double: "Double"
        case .float: "Float"
        case .string, .objectID: "String"
        case .boolean: "Bool"
        case .date: "Date"
        case .binaryData, .transformable: "Data"
        case .uuid: "UUID"
        case .uri: "URL"
        case .undefined, .composite: nil
        }
    }
}

/// What happens to the destination objects when the source object of a relationship is deleted.
///
/// Raw values are Core Data's `NSDeleteRule` codes.
public enum DeleteRule: Int, Sendable, Hashable, CaseIterable {
    case noAction = 0
    case nullify = 1
    case cascade = 2
    case deny = 3

    /// The `deletionRule` spelling used by Xcode's `contents` XML.
    public var xmlName: String {
        switch self {
        case .noAction: "No Action"
        case .nullify: "Nullify"
        case .cascade: "Cascade"
        case .deny: "Deny"
        }
    }

    /// Creates a rule from its Xcode XML spelling (`"Nullify"`, `"No Action"`, …).
    public init?(xmlName: String) {
        guard let match = DeleteRule.allCases.first(where: { $0.xmlName == xmlName }) else { return nil }
        self = match
    }
}
