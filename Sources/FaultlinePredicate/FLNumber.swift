import Foundation

/// A number taken from any numeric Swift or Foundation value, for cross-type comparison
/// and arithmetic (`1 == 1.0 == true`, as with `NSNumber`).
enum FLNumber {
    case int(Int)
    case double(Double)
    case decimal(Decimal)

    init?(_ any: Any?) {
        guard let any = flUnwrap(any) else { return nil }
        if let v = any as? Bool {
            self = .int(v ? 1 : 0)
        } else if let n = FLNumber(swiftNumber: any) {
            self = n
        } else if let v = any as? NSNumber, let n = FLNumber(v) {
            self = n
        } else {
            return nil
        }
    }

    /// A value of one of Swift's own numeric types — every integer width, `Double`, `Float`,
    /// `Decimal` — as a number (an unsigned integer beyond `Int` as a double); nil for any
    /// other value, `Bool` and `NSNumber` included. The one conversion of integers from `Any`
    /// that predicates, values and aggregates share.
    init?(swiftNumber any: Any) {
        switch any {
        case let v as Int: self = .int(v)
        case let v as Int8: self = .int(Int(v))
        case let v as Int16: self = .int(Int(v))
        case let v as Int32: self = .int(Int(v))
        case let v as Int64: self = .int(Int(v))
        case let v as UInt8: self = .int(Int(v))
        case let v as UInt16: self = .int(Int(v))
        case let v as UInt32: self = .int(Int(v))
        case let v as UInt: self = Int(exactly: v).map { .int($0) } ?? .double(Double(v))
        case let v as UInt64: self = Int(exactly: v).map { .int($0) } ?? .double(Double(v))
        case let v as Double: self = .double(v)
        case let v as Float: self = .double(Double(v))
        case let v as Decimal: self = .decimal(v)
        default: return nil
        }
    }

    init?(_ n: NSNumber) {
        let type = String(cString: n.objCType)
        switch type {
        case "f", "d": self = .double(n.doubleValue)
        case "Q", "L":
            let u = n.uint64Value
            self = Int(exactly: u).map { .int($0) } ?? .double(n.doubleValue)
        default: self = .int(n.intValue)
        }
    }

    var value: FLValue {
        switch self {
        case .int(let i): return .int(i)
        case .double(let d): return .double(d)
        case .decimal(let d): return .decimal(d)
        }
    }

    var any: Any {
        switch self {
        case .int(let i): return i
        case .double(let d): return d
        case .decimal(let d): return d
        }
    }

    var double: Double {
        switch self {
        case .int(let i): return Double(i)
        case .double(let d): return d
        case .decimal(let d): return NSDecimalNumber(decimal: d).doubleValue
        }
    }

    /// The number as a decimal; NaN for a double no decimal can hold (see ``hasDecimal``).
    var decimal: Decimal {
        switch self {
        case .int(let i): return Decimal(i)
        case .double(let d): return Decimal(checking: d) ?? .nan
        case .decimal(let d): return d
        }
    }

    /// Whether arithmetic on two numbers is decimal arithmetic: one of them is a decimal
    /// and both fit in one (else doubles, which hold any number).
    static func decimalMath(_ x: FLNumber, _ y: FLNumber) -> Bool {
        let either: Bool
        switch (x, y) {
        case (.decimal, _), (_, .decimal): either = true
        default: either = false
        }
        return either && x.hasDecimal && y.hasDecimal
    }

    /// Whether ``decimal`` is the number (a double beyond Decimal's range is not).
    var hasDecimal: Bool {
        if case .double(let d) = self { return Decimal(checking: d) != nil }
        return true
    }

    static func compare(_ a: FLNumber, _ b: FLNumber) -> ComparisonResult {
        switch (a, b) {
        case (.int(let x), .int(let y)): return x < y ? .orderedAscending : (x > y ? .orderedDescending : .orderedSame)
        case _ where decimalMath(a, b):
            let x = a.decimal, y = b.decimal
            return x < y ? .orderedAscending : (x > y ? .orderedDescending : .orderedSame)
        default:
            let x = a.double, y = b.double
            return x < y ? .orderedAscending : (x > y ? .orderedDescending : .orderedSame)
        }
    }
}
