import CFaultlineSQLite
import Foundation

/// A value as SQLite stores it: one of its five storage classes.
public enum SQLValue: Sendable, Hashable, CustomStringConvertible {
    /// NULL.
    case null
    /// A 64-bit signed integer.
    case integer(Int64)
    /// A double.
    case real(Double)
    /// UTF-8 text.
    case text(String)
    /// Bytes.
    case blob(Data)

    /// Whether the value is NULL.
    public var isNull: Bool { if case .null = self { true } else { false } }

    /// The value as an integer, converting reals; nil for other classes.
    /// SQLite's storage class codes, as `Statement.storageClass(at:)` returns them.
    public static let integerStorageClass = SQLITE_INTEGER
    /// SQLite's code for REAL.
    public static let floatStorageClass = SQLITE_FLOAT
    /// SQLite's code for TEXT.
    public static let textStorageClass = SQLITE_TEXT
    /// SQLite's code for NULL.
    public static let nullStorageClass = SQLITE_NULL

    public var int64: Int64? {
        switch self {
        case .integer(let i): i
        case .real(let d): Int64(exactly: d.rounded(.towardZero))
        default: nil
        }
    }

    /// The value as a double, converting integers; nil for other classes.
    public var double: Double? {
        switch self {
        case .integer(let i): Double(i)
        case .real(let d): d
        default: nil
        }
    }

    /// The value as text; nil unless it is text.
    public var string: String? { if case .text(let s) = self { s } else { nil } }

    /// The value as bytes; nil unless it is a blob.
    public var data: Data? { if case .blob(let d) = self { d } else { nil } }

    /// The value written as Core Data's SQL log writes bound values: strings quoted, numbers bare.
    public var description: String {
        switch self {
        case .null: "nil"
        case .integer(let i): String(i)
        case .real(let d): Self.format(d)
        case .text(let s): "\"\(s)\""
        case .blob(let d): "<\(d.count) bytes>"
        }
    }

    /// Formats a double the way `NSNumber.description` does (`3`, `2.5`, `1e+20`).
    public static func format(_ d: Double) -> String {
        if d.isFinite, d == d.rounded(), abs(d) < 1e15 { return String(Int64(d)) }
        return String(d)
    }
}

extension SQLValue: ExpressibleByIntegerLiteral, ExpressibleByStringLiteral, ExpressibleByFloatLiteral, ExpressibleByNilLiteral {
    /// An integer literal.
    public init(integerLiteral value: Int64) { self = .integer(value) }
    /// A string literal.
    public init(stringLiteral value: String) { self = .text(value) }
    /// A float literal.
    public init(floatLiteral value: Double) { self = .real(value) }
    /// `nil` is NULL.
    public init(nilLiteral: ()) { self = .null }
}
