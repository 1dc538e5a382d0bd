// Which model names can be Swift names in generated code, and how to write them.

enum SwiftNames {
    /// Keywords a declaration may use only between backticks (`default`, `class`, …).
    static let keywords: Set<String> = [
        "associatedtype", "class", "deinit", "enum", "extension", "fileprivate", "func", "import", "init", "inout",
        "internal", "let", "open", "operator", "private", "precedencegroup", "protocol", "public", "rethrows", "static",
        "struct", "subscript", "typealias", "var", "break", "case", "catch", "continue", "default", "defer", "do", "else",
        "fallthrough", "for", "guard", "if", "in", "repeat", "return", "throw", "switch", "where", "while", "Any", "as",
        "await", "false", "is", "nil", "self", "Self", "super", "throws", "true", "try", "consume", "copy", "discard",
        "each", "borrowing", "consuming", "macro", "package", "some", "any",
    ]

    /// Names a member cannot have even between backticks, because `object.name` means
    /// something else (`.self`, `.Type`, `.init`).
    static let impossibleMemberNames: Set<String> = ["self", "Self", "Type", "Protocol", "init", "deinit", "subscript", "super"]

    /// Members every generated class has from `ManagedObject` and `ManagedObjectSubclass`: a
    /// property with one of these names would clash (methods that take arguments, such as
    /// `value(forKey:)`, do not clash with a property of the same base name).
    static let inheritedMembers: Set<String> = [
        // ManagedObject's properties
        "entity", "objectID", "managedObjectContext", "isFault", "rowVersion", "faultOrigin", "isInserted", "isDeleted",
        "hasChanges", "isUpdated", "description", "hashValue", "predicateValue", "maximumKeyPathComponents",
        // its methods without arguments
        "awakeFromInsert", "awakeFromFetch", "willSave", "didSave", "prepareForDeletion", "willTurnIntoFault",
        "didTurnIntoFault", "validateForInsert", "validateForUpdate", "validateForDelete", "changedValues",
        // what the generated code declares
        "entityName", "managedProperties", "propertyNamesByKeyPath",
    ]

    /// Type names the generated code uses: a class of the same name would hide them.
    static let typesUsed: Set<String> = [
        "String", "Int16", "Int32", "Int64", "Bool", "Double", "Float", "Decimal", "Date", "Data", "UUID", "URL", "Set",
        "Array", "Optional", "AnyKeyPath", "ManagedObject", "ManagedObjectSubclass", "ManagedPropertyDeclaration",
        "Swift", "Foundation", "Faultline", "KeyPathRoot",
    ]

    /// Whether a name is a Swift identifier: an ASCII letter or `_`, then letters, digits
    /// and `_` (model names in Xcode are of that form).
    static func isIdentifier(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, first.isASCIILetterOrUnderscore else { return false }
        return name.unicodeScalars.allSatisfy { $0.isASCIILetterOrUnderscore || ("0"..."9").contains($0) }
    }

    /// A member name as written in a declaration or key path: between backticks when it is a
    /// keyword.
    static func member(_ name: String) -> String { keywords.contains(name) ? "`\(name)`" : name }

    /// `ingredients` → `Ingredients`, for `addToIngredients`.
    static func capitalized(_ name: String) -> String { name.prefix(1).uppercased() + name.dropFirst() }

    /// A type name made of a file name: letters, digits and `_` kept, the rest dropped, the
    /// letter after a dropped character upper-cased (`CoreData 9` → `CoreData9`,
    /// `my-model` → `myModel`); `_` first when it would start with a digit.
    static func typeName(fromFileName name: String) -> String {
        var result = ""
        var upperNext = false
        for scalar in name.unicodeScalars {
            if scalar.isASCIILetterOrUnderscore || ("0"..."9").contains(scalar) {
                result += upperNext ? String(scalar).uppercased() : String(scalar)
                upperNext = false
            } else {
                upperNext = !result.isEmpty
            }
        }
        if let first = result.unicodeScalars.first, ("0"..."9").contains(first) { result = "_" + result }
        return result
    }
}

extension Unicode.Scalar {
    fileprivate var isASCIILetterOrUnderscore: Bool { ("a"..."z").contains(self) || ("A"..."Z").contains(self) || self == "_" }
}
