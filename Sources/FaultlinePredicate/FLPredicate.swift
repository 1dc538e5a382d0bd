import Foundation

/// A predicate of the NSPredicate format language, parsed from a format string or built in code.
///
/// `FLPredicate` stands in for `NSPredicate`, which cannot parse format strings on Linux.
/// It is a `Sendable`, `Hashable` struct over the public ``Node`` enum, so the SQL store can
/// switch over it; ``description`` prints Apple's canonical `predicateFormat`.
///
/// ```swift
/// let p = try FLPredicate(format: "name BEGINSWITH[c] %@ AND ANY tags.name == 'x'", "ca")
/// print(p)                                    // name BEGINSWITH[c] "ca" AND ANY tags.name == "x"
/// try p.evaluate(with: ["name": "Cake", "tags": [["name": "x"]]])   // true
/// ```
public struct FLPredicate: Sendable, Hashable, CustomStringConvertible {
    /// The predicate tree.
    public var node: Node

    /// Wraps a node.
    public init(_ node: Node) { self.node = node }

    /// The kinds of predicates (`NSPredicate` subclasses).
    public indirect enum Node: Sendable, Hashable {
        /// `TRUEPREDICATE` (`true`) or `FALSEPREDICATE` (`false`).
        case constant(Bool)
        /// A comparison (`NSComparisonPredicate`).
        case comparison(FLComparison)
        /// `a AND b AND …` (two or more subpredicates; a chain is kept flat).
        case and([FLPredicate])
        /// `a OR b OR …` (two or more subpredicates; a chain is kept flat).
        case or([FLPredicate])
        /// `NOT p`. `NONE x == y` parses to `.not(ANY x == y)`, as in Foundation.
        case not(FLPredicate)
    }

    /// `TRUEPREDICATE`.
    public static let truePredicate = FLPredicate(.constant(true))
    /// `FALSEPREDICATE`.
    public static let falsePredicate = FLPredicate(.constant(false))

    /// A comparison predicate.
    public static func comparison(
        _ left: FLExpression, _ op: FLComparison.Operator, _ right: FLExpression,
        modifier: FLComparison.Modifier = .direct, options: FLComparison.Options = []
    ) -> FLPredicate {
        FLPredicate(.comparison(FLComparison(left, op, right, modifier: modifier, options: options)))
    }

    /// Joins predicates with `AND` (one predicate is returned as is; none gives `TRUEPREDICATE`).
    public static func and(_ predicates: [FLPredicate]) -> FLPredicate {
        predicates.count == 1 ? predicates[0] : (predicates.isEmpty ? .truePredicate : FLPredicate(.and(predicates)))
    }

    /// Joins predicates with `OR` (one predicate is returned as is; none gives `FALSEPREDICATE`).
    public static func or(_ predicates: [FLPredicate]) -> FLPredicate {
        predicates.count == 1 ? predicates[0] : (predicates.isEmpty ? .falsePredicate : FLPredicate(.or(predicates)))
    }

    /// Negates a predicate.
    public static func not(_ predicate: FLPredicate) -> FLPredicate { FLPredicate(.not(predicate)) }

    /// The canonical format text (Apple's `predicateFormat`), e.g. `name BEGINSWITH[cd] "a"`.
    public var predicateFormat: String {
        FLNestingDepth.depth(of: self) > FLNestingDepth.maximum ? FLNestingDepth.unprintable : FLPrinter.predicate(self)
    }

    /// Same as ``predicateFormat``.
    public var description: String { predicateFormat }
}

/// A comparison between two expressions (`NSComparisonPredicate`).
///
/// ```swift
/// // ANY tags.name ==[c] "x"
/// FLComparison(.keyPath("tags.name"), .equalTo, .constant(.string("x")),
///              modifier: .any, options: .caseInsensitive)
/// ```
public struct FLComparison: Sendable, Hashable {
    /// The left operand.
    public var left: FLExpression
    /// The operator.
    public var op: Operator
    /// The right operand.
    public var right: FLExpression
    /// `ANY`/`SOME`/`ALL` or none.
    public var modifier: Modifier
    /// The string options `[c]`, `[d]`, `[n]`, `[l]`.
    public var options: Options

    /// Creates a comparison.
    public init(_ left: FLExpression, _ op: Operator, _ right: FLExpression,
                modifier: Modifier = .direct, options: Options = []) {
        self.left = left
        self.op = op
        self.right = right
        self.modifier = modifier
        self.options = options
    }

    /// Comparison operators; raw values are Darwin's `NSComparisonPredicate.Operator` numbers.
    public enum Operator: Int, Sendable, Hashable, CaseIterable {
        /// `<`
        case lessThan = 0
        /// `<=` or `=<`
        case lessThanOrEqualTo = 1
        /// `>`
        case greaterThan = 2
        /// `>=` or `=>`
        case greaterThanOrEqualTo = 3
        /// `==` or `=`
        case equalTo = 4
        /// `!=` or `<>`
        case notEqualTo = 5
        /// `MATCHES`: whole-string regular expression match.
        case matches = 6
        /// `LIKE`: `*` matches zero or more characters, `?` exactly one.
        case like = 7
        /// `BEGINSWITH`
        case beginsWith = 8
        /// `ENDSWITH`
        case endsWith = 9
        /// `IN`: left is an element of the right collection, or a substring of the right string.
        case `in` = 10
        /// `CONTAINS`: right is an element of the left collection, or a substring of the left string.
        case contains = 99
        /// `BETWEEN`: the right side is `{low, high}` (inclusive).
        case between = 100
        /// `UTI-CONFORMS-TO` (parsed and printed; not evaluated).
        case utiConformsTo = 1001
        /// `UTI-EQUALS` (parsed and printed; not evaluated).
        case utiEquals = 1002

        /// The canonical spelling used by the printer.
        public var symbol: String {
            switch self {
            case .lessThan: return "<"
            case .lessThanOrEqualTo: return "<="
            case .greaterThan: return ">"
            case .greaterThanOrEqualTo: return ">="
            case .equalTo: return "=="
            case .notEqualTo: return "!="
            case .matches: return "MATCHES"
            case .like: return "LIKE"
            case .beginsWith: return "BEGINSWITH"
            case .endsWith: return "ENDSWITH"
            case .in: return "IN"
            case .contains: return "CONTAINS"
            case .between: return "BETWEEN"
            case .utiConformsTo: return "UTI-CONFORMS-TO"
            case .utiEquals: return "UTI-EQUALS"
            }
        }
    }

    /// Aggregate qualifiers; raw values are Darwin's `NSComparisonPredicate.Modifier`.
    /// `NONE` is represented as `NOT` around an `ANY` comparison.
    public enum Modifier: Int, Sendable, Hashable {
        /// No qualifier.
        case direct = 0
        /// `ALL`: every element of the left collection satisfies the comparison.
        case all = 1
        /// `ANY` / `SOME`: at least one element satisfies the comparison.
        case any = 2
    }

    /// String comparison options; raw values are Darwin's `NSComparisonPredicate.Options`.
    public struct Options: OptionSet, Sendable, Hashable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// `[c]`
        public static let caseInsensitive = Options(rawValue: 1)
        /// `[d]`
        public static let diacriticInsensitive = Options(rawValue: 2)
        /// `[n]`: strings are already normalized (compared literally).
        public static let normalized = Options(rawValue: 4)
        /// `[l]`: locale-sensitive.
        public static let localeSensitive = Options(rawValue: 8)

        /// The bracketed suffix, e.g. `[cd]`, or an empty string.
        public var suffix: String {
            var s = ""
            if contains(.caseInsensitive) { s += "c" }
            if contains(.diacriticInsensitive) { s += "d" }
            if contains(.normalized) { s += "n" }
            if contains(.localeSensitive) { s += "l" }
            return s.isEmpty ? "" : "[\(s)]"
        }
    }
}
