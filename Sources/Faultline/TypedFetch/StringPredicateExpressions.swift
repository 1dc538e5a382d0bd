import Foundation

// `localizedStandardContains`, `caseInsensitiveCompare` and `localizedCompare` in a `#Predicate`:
// on Apple platforms Foundation builds them (`PredicateExpressions.StringLocalizedStandardContains`,
// …), but swift-foundation compiles those only into Apple's Foundation, so on Linux the macro's
// expansion (`PredicateExpressions.build_localizedStandardContains(…)`) finds no such member.
// Faultline supplies the three builders there, with expression types of its own that evaluate
// as Foundation's do and translate to the same predicates (`CONTAINS[cdl]`, `==[c]`, …).

/// Predicate expressions for the string methods Foundation's `#Predicate` supports on Apple
/// platforms only. On Linux `import Faultline` makes `#Predicate` build these for
/// `localizedStandardContains(_:)`, `caseInsensitiveCompare(_:)` and `localizedCompare(_:)`;
/// they evaluate in memory like the string methods and translate for fetches.
///
/// ```swift
/// let search = "maui"
/// let books = try context.fetch(FetchDescriptor<Book>(predicate: #Predicate { $0.title.localizedStandardContains(search) }))
/// // WHERE  NSCoreDataStringSearch( t0.ZTITLE, ?, 417, 1)
/// ```
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
public enum FLStringPredicateExpressions {
    /// `root.localizedStandardContains(other)`: case- and diacritic-insensitive, locale-aware
    /// containment (`CONTAINS[cdl]`).
    public struct LocalizedStandardContains<Root: PredicateExpression, Other: PredicateExpression>: PredicateExpression
    where Root.Output: StringProtocol, Other.Output: StringProtocol {
        public typealias Output = Bool
        /// The string searched.
        public let root: Root
        /// The string searched for.
        public let other: Other

        /// The expression for `root.localizedStandardContains(other)`.
        public init(root: Root, other: Other) {
            self.root = root
            self.other = other
        }

        /// Whether `root` contains `other`, as `String.localizedStandardContains(_:)` says.
        public func evaluate(_ bindings: PredicateBindings) throws -> Bool {
            try root.evaluate(bindings).localizedStandardContains(try other.evaluate(bindings))
        }
    }

    /// `root.caseInsensitiveCompare(other)`: the order of two strings ignoring case.
    public struct CaseInsensitiveCompare<Root: PredicateExpression, Other: PredicateExpression>: PredicateExpression
    where Root.Output: StringProtocol, Other.Output: StringProtocol {
        public typealias Output = ComparisonResult
        /// The string compared.
        public let root: Root
        /// The string it is compared with.
        public let other: Other

        /// The expression for `root.caseInsensitiveCompare(other)`.
        public init(root: Root, other: Other) {
            self.root = root
            self.other = other
        }

        /// The order, as `String.caseInsensitiveCompare(_:)` gives it.
        public func evaluate(_ bindings: PredicateBindings) throws -> ComparisonResult {
            try root.evaluate(bindings).caseInsensitiveCompare(try other.evaluate(bindings))
        }
    }

    /// `root.localizedCompare(other)`: the order of two strings in the current locale.
    public struct LocalizedCompare<Root: PredicateExpression, Other: PredicateExpression>: PredicateExpression
    where Root.Output: StringProtocol, Other.Output: StringProtocol {
        public typealias Output = ComparisonResult
        /// The string compared.
        public let root: Root
        /// The string it is compared with.
        public let other: Other

        /// The expression for `root.localizedCompare(other)`.
        public init(root: Root, other: Other) {
            self.root = root
            self.other = other
        }

        /// The order, as `String.localizedCompare(_:)` gives it.
        public func evaluate(_ bindings: PredicateBindings) throws -> ComparisonResult {
            try root.evaluate(bindings).localizedCompare(try other.evaluate(bindings))
        }
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension FLStringPredicateExpressions.LocalizedStandardContains: Sendable where Root: Sendable, Other: Sendable {}
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension FLStringPredicateExpressions.CaseInsensitiveCompare: Sendable where Root: Sendable, Other: Sendable {}
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension FLStringPredicateExpressions.LocalizedCompare: Sendable where Root: Sendable, Other: Sendable {}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension FLStringPredicateExpressions.LocalizedStandardContains: Codable where Root: Codable, Other: Codable {
    /// Encodes the two operands, as Foundation's expressions do.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        try container.encode(root)
        try container.encode(other)
    }

    /// Decodes the two operands.
    public init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        root = try container.decode(Root.self)
        other = try container.decode(Other.self)
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension FLStringPredicateExpressions.CaseInsensitiveCompare: Codable where Root: Codable, Other: Codable {
    /// Encodes the two operands, as Foundation's expressions do.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        try container.encode(root)
        try container.encode(other)
    }

    /// Decodes the two operands.
    public init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        root = try container.decode(Root.self)
        other = try container.decode(Other.self)
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension FLStringPredicateExpressions.LocalizedCompare: Codable where Root: Codable, Other: Codable {
    /// Encodes the two operands, as Foundation's expressions do.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        try container.encode(root)
        try container.encode(other)
    }

    /// Decodes the two operands.
    public init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        root = try container.decode(Root.self)
        other = try container.decode(Other.self)
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension FLStringPredicateExpressions.LocalizedStandardContains: StandardPredicateExpression
where Root: StandardPredicateExpression, Other: StandardPredicateExpression {}
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension FLStringPredicateExpressions.CaseInsensitiveCompare: StandardPredicateExpression
where Root: StandardPredicateExpression, Other: StandardPredicateExpression {}
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension FLStringPredicateExpressions.LocalizedCompare: StandardPredicateExpression
where Root: StandardPredicateExpression, Other: StandardPredicateExpression {}

#if !canImport(Darwin)
    // The builders' names are the ones the macro's expansion calls, hence not lowerCamelCase.
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    extension PredicateExpressions {
        /// What `#Predicate` calls for `root.localizedStandardContains(other)` (Apple's Foundation
        /// has its own; Linux's does not).
        // swift-format-ignore: AlwaysUseLowerCamelCase
        public static func build_localizedStandardContains<Root, Other>(
            _ root: Root, _ other: Other
        ) -> FLStringPredicateExpressions.LocalizedStandardContains<Root, Other> {
            FLStringPredicateExpressions.LocalizedStandardContains(root: root, other: other)
        }

        /// What `#Predicate` calls for `root.caseInsensitiveCompare(other)`.
        // swift-format-ignore: AlwaysUseLowerCamelCase
        public static func build_caseInsensitiveCompare<Root, Other>(
            _ root: Root, _ other: Other
        ) -> FLStringPredicateExpressions.CaseInsensitiveCompare<Root, Other> {
            FLStringPredicateExpressions.CaseInsensitiveCompare(root: root, other: other)
        }

        /// What `#Predicate` calls for `root.localizedCompare(other)`.
        // swift-format-ignore: AlwaysUseLowerCamelCase
        public static func build_localizedCompare<Root, Other>(
            _ root: Root, _ other: Other
        ) -> FLStringPredicateExpressions.LocalizedCompare<Root, Other> {
            FLStringPredicateExpressions.LocalizedCompare(root: root, other: other)
        }
    }
#endif
