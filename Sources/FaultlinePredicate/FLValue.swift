import Foundation

/// A constant value stored in a predicate or expression tree.
///
/// Format-string arguments (`%@`, `%d`, …), literals (`"text"`, `42`, `YES`, `nil`) and
/// substitution variables all become `FLValue`s, so the AST stays `Sendable` and
/// `Hashable` no matter what the caller passed in.
///
/// ```swift
/// let p = try FLPredicate(format: "age > %d AND name IN %@", 30, ["Ann", "Bob"])
/// // the right-hand sides are .int(30) and .array([.string("Ann"), .string("Bob")])
/// ```
public enum FLValue: Sendable, Hashable {
    /// `nil` / `NULL` (also an `Optional.none` or `NSNull` argument).
    case null
    /// A boolean (`YES`, `TRUE`, `NO`, `FALSE`, or a `Bool` argument).
    case bool(Bool)
    /// A signed integer.
    case int(Int)
    /// A floating-point number.
    case double(Double)
    /// A decimal number (a `Decimal` argument).
    case decimal(Decimal)
    /// A string.
    case string(String)
    /// A date; printed as `CAST(<seconds since 2001-01-01>, "NSDate")`.
    case date(Date)
    /// Binary data.
    case data(Data)
    /// A UUID; printed as `CAST("<uuid>", "NSUUID")`.
    case uuid(UUID)
    /// A URL; printed as `CAST("<url>", "NSURL")`.
    case url(URL)
    /// An ordered collection (an array or set argument, or a `{…}` literal made of constants).
    case array([FLValue])
    /// A dictionary argument; `IN` and `CONTAINS` look at its values.
    case dictionary([String: FLValue])
    /// An opaque object reference, such as a managed object ID.
    case object(FLObjectReference)

    /// Converts an arbitrary Swift value into a constant.
    ///
    /// Handles `nil`/`NSNull`, `FLValue`, ``FLPredicateArgumentConvertible`` values, booleans,
    /// all integer and floating-point types, `Decimal`, `NSNumber`, strings, dates, data,
    /// UUIDs, URLs, arrays, sets and dictionaries (recursively). Other types can take
    /// part by conforming to ``FLPredicateArgumentConvertible`` (e.g. returning
    /// `.object(FLObjectReference(objectID))`).
    ///
    /// - Returns: `nil` when the value cannot be represented.
    public init?(converting value: Any?) {
        // The common argument types first, by their exact type: no reflection, no protocol
        // look-up (a type made to conform to FLPredicateArgumentConvertible is not one of these).
        if let value, let exact = FLValue.ofCommonType(value) {
            self = exact
            return
        }
        guard let value = flUnwrap(value) else { self = .null; return }
        switch value {
        case let v as FLValue: self = v
        case let v as any FLPredicateArgumentConvertible: self = v.predicateValue
        case is NSNull: self = .null
        case let v as Bool: self = .bool(v)
        case let v where FLNumber(swiftNumber: v) != nil:
            guard let n = FLNumber(swiftNumber: v) else { return nil }
            self = n.value
        case let v as NSNumber:
            if let n = FLNumber(v) { self = n.value } else { return nil }
        case let v as String: self = .string(v)
        case let v as Substring: self = .string(String(v))
        case let v as Character: self = .string(String(v))
        case let v as NSString: self = .string(String(describing: v))
        case let v as Date: self = .date(v)
        case let v as Data: self = .data(v)
        case let v as UUID: self = .uuid(v)
        case let v as URL: self = .url(v)
        default:
            if let dict = flDictionary(value) {
                var out: [String: FLValue] = [:]
                for (k, v) in dict {
                    guard let c = FLValue(converting: v) else { return nil }
                    out[String(describing: k)] = c
                }
                self = .dictionary(out)
            } else if let items = flCollection(value) {
                var out: [FLValue] = []
                for item in items {
                    guard let c = FLValue(converting: item) else { return nil }
                    out.append(c)
                }
                self = .array(out)
            } else {
                return nil
            }
        }
    }

    /// A value of one of the common argument types, by its exact type: the existential is
    /// opened (`T` is the value's dynamic type), so telling the type is comparing a pointer and
    /// reading the value needs no dynamic cast.
    private static func ofCommonType<T>(_ value: T) -> FLValue? {
        if T.self == String.self { return .string(unsafeBitCast(value, to: String.self)) }
        if T.self == Int.self { return .int(unsafeBitCast(value, to: Int.self)) }
        if T.self == Double.self { return .double(unsafeBitCast(value, to: Double.self)) }
        if T.self == Int64.self { return .int(Int(unsafeBitCast(value, to: Int64.self))) }
        if T.self == Bool.self { return .bool(unsafeBitCast(value, to: Bool.self)) }
        return nil
    }

    /// The value as a plain Swift value for in-memory evaluation (`nil` for ``null``).
    ///
    /// Arrays become `[Any?]`, dictionaries `[String: Any?]`, object references their base.
    public var anyValue: Any? {
        switch self {
        case .null: return nil
        case .bool(let v): return v
        case .int(let v): return v
        case .double(let v): return v
        case .decimal(let v): return v
        case .string(let v): return v
        case .date(let v): return v
        case .data(let v): return v
        case .uuid(let v): return v
        case .url(let v): return v
        case .array(let v): return v.map { $0.anyValue } as [Any?]
        case .dictionary(let v): return v.mapValues { $0.anyValue } as [String: Any?]
        case .object(let r): return r
        }
    }

    /// `true` for ``null``.
    public var isNull: Bool { if case .null = self { return true } else { return false } }

    /// The value as a number when it is ``bool``, ``int``, ``double`` or ``decimal``.
    var numericValue: FLNumber? {
        switch self {
        case .bool(let b): return .int(b ? 1 : 0)
        case .int(let i): return .int(i)
        case .double(let d): return .double(d)
        case .decimal(let d): return .decimal(d)
        default: return nil
        }
    }

    /// Equality with `NSNumber` semantics: numbers of any kind are equal when numerically
    /// equal (`YES == 1 == 1.0`), so a printed and re-parsed predicate equals the original.
    public static func == (lhs: FLValue, rhs: FLValue) -> Bool {
        if let a = lhs.numericValue, let b = rhs.numericValue {
            if case .double(let x) = a, x.isNaN { if case .double(let y) = b { return y.isNaN } }
            return FLNumber.compare(a, b) == .orderedSame
        }
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.string(let a), .string(let b)): return a == b
        case (.date(let a), .date(let b)): return a == b
        case (.data(let a), .data(let b)): return a == b
        case (.uuid(let a), .uuid(let b)): return a == b
        case (.url(let a), .url(let b)): return a == b
        case (.array(let a), .array(let b)): return a == b
        case (.dictionary(let a), .dictionary(let b)): return a == b
        case (.object(let a), .object(let b)): return a == b
        default: return false
        }
    }

    /// Hashes consistently with ``==`` (numbers hash by their `Double` value).
    public func hash(into hasher: inout Hasher) {
        if let n = numericValue {
            hasher.combine(0)
            let d = n.double
            hasher.combine(d.isNaN ? Double.nan.bitPattern : (d == 0 ? 0 : d.bitPattern))
            return
        }
        switch self {
        case .null: hasher.combine(1)
        case .string(let s): hasher.combine(2); hasher.combine(s)
        case .date(let d): hasher.combine(3); hasher.combine(d)
        case .data(let d): hasher.combine(4); hasher.combine(d)
        case .uuid(let u): hasher.combine(5); hasher.combine(u)
        case .url(let u): hasher.combine(6); hasher.combine(u)
        case .array(let a): hasher.combine(7); hasher.combine(a)
        case .dictionary(let d): hasher.combine(8); hasher.combine(d)
        case .object(let o): hasher.combine(9); hasher.combine(o)
        case .bool, .int, .double, .decimal: break
        }
    }
}

/// An opaque, `Sendable` reference to an object, such as a managed object ID, stored in a
/// predicate constant.
///
/// Two references are equal when their bases are equal as `AnyHashable`s. In-memory
/// evaluation compares a reference with an object that conforms to
/// ``FLPredicateArgumentConvertible`` through that object's ``FLPredicateArgumentConvertible/predicateValue``.
public struct FLObjectReference: Sendable, Hashable, CustomStringConvertible {
    /// The referenced value (for Core Data, typically a managed object ID).
    public let base: any Hashable & Sendable

    /// Wraps a hashable, sendable value.
    public init(_ base: any Hashable & Sendable) { self.base = base }

    public static func == (lhs: FLObjectReference, rhs: FLObjectReference) -> Bool {
        AnyHashable(lhs.base) == AnyHashable(rhs.base)
    }

    public func hash(into hasher: inout Hasher) { AnyHashable(base).hash(into: &hasher) }

    public var description: String { String(describing: base) }
}

/// A type that knows how to appear as a constant in a predicate.
///
/// The Core Data layer makes managed objects conform (returning `.object(objectID)`), so
/// `FLPredicate(format: "author == %@", someAuthor)` stores the object ID and in-memory
/// evaluation can compare a fetched `author` with that constant.
public protocol FLPredicateArgumentConvertible {
    /// The constant that represents this value in a predicate.
    var predicateValue: FLValue { get }
}

// MARK: - Internal helpers over `Any`

/// Unwraps nested optionals hidden in an `Any`.
func flUnwrap(_ value: Any?) -> Any? {
    guard let value else { return nil }
    let mirror = Mirror(reflecting: value)
    if mirror.displayStyle == .optional {
        guard let child = mirror.children.first else { return nil }
        return flUnwrap(child.value)
    }
    return value
}

/// A dictionary view of `value` (Swift dictionaries of any key type, `NSDictionary`).
func flDictionary(_ value: Any) -> [(AnyHashable, Any?)]? {
    if let d = value as? [String: Any?] { return d.map { (AnyHashable($0.key), $0.value) } }
    if let d = value as? [AnyHashable: Any?] { return d.map { ($0.key, $0.value) } }
    if let d = value as? NSDictionary {
        var out: [(AnyHashable, Any?)] = []
        for (k, v) in d { out.append((k as? AnyHashable ?? AnyHashable(String(describing: k)), v)) }
        return out
    }
    return nil
}

/// A collection view of `value` (arrays, sets, `NSArray`, `NSSet`, `NSOrderedSet` and any
/// other `Sequence` except strings, data and dictionaries). Elements keep their order.
func flCollection(_ value: Any) -> [Any?]? {
    switch value {
    case is String, is Substring, is Data, is NSString, is NSData:
        return nil
    case let v as [Any?]: return v
    case let v as NSArray: return v.map { $0 }
    case let v as NSOrderedSet: return v.array.map { $0 }
    case let v as NSSet: return v.allObjects.map { $0 }
    default:
        if flDictionary(value) != nil { return nil }
        if let seq = value as? any Sequence {
            return flElements(seq)
        }
        return nil
    }
}

private func flElements<S: Sequence>(_ seq: S) -> [Any?] {
    seq.map { $0 as Any? }
}
