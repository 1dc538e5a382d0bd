import Foundation

/// A number taken from any numeric Swift or Foundation value, for cross-type comparison
/// and arithmetic (`1 == 1.0 == true`, as with `NSNumber`).
enum FLNumber {
    case int(Int)
    case double(Double)
    case decimal(Decimal)

    init?(_ any: Any?) {
        guard let any = flUnwrap(any) else { return nil }
        switch any {
        case let v as Bool: self = .int(v ? 1 : 0)
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
        case let v as NSNumber:
            if let n = FLNumber(v) { self = n } else { return nil }
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

/// String folding for the `[c]`, `[d]`, `[n]` options.
enum FLStrings {
    static func fold(_ s: String, _ options: FLComparison.Options) -> String {
        var fo: String.CompareOptions = []
        if options.contains(.caseInsensitive) { fo.insert(.caseInsensitive) }
        if options.contains(.diacriticInsensitive) { fo.insert(.diacriticInsensitive) }
        if fo.isEmpty { return s }
        fo.insert(.widthInsensitive)
        return s.folding(options: fo, locale: nil)
    }

    static func string(_ any: Any?) -> String? {
        switch flUnwrap(any) {
        case let s as String: return s
        case let s as Substring: return String(s)
        case let s as Character: return String(s)
        case let s as NSString: return String(describing: s)
        default: return nil
        }
    }

    /// `LIKE` matching: `*` is any run of characters, `?` exactly one, `\` escapes.
    static func like(_ text: String, _ pattern: String) -> Bool {
        let t = Array(text)
        var p: [(Character, Bool)] = [] // (char, isLiteral)
        var it = pattern.makeIterator()
        while let c = it.next() {
            if c == "\\", let n = it.next() { p.append((n, true)) } else { p.append((c, false)) }
        }
        var ti = 0, pi = 0
        var starP = -1, starT = 0
        while ti < t.count {
            if pi < p.count, !p[pi].1, p[pi].0 == "*" {
                starP = pi; starT = ti; pi += 1
            } else if pi < p.count, (!p[pi].1 && p[pi].0 == "?") || p[pi].0 == t[ti] {
                ti += 1; pi += 1
            } else if starP >= 0 {
                pi = starP + 1; starT += 1; ti = starT
            } else {
                return false
            }
        }
        while pi < p.count, !p[pi].1, p[pi].0 == "*" { pi += 1 }
        return pi == p.count
    }
}

/// Comparison helpers shared by predicates and sort descriptors.
enum FLCompare {
    /// Unwraps optionals, `NSNull`, object references and ``FLPredicateArgumentConvertible`` values.
    static func normalize(_ any: Any?) -> Any? {
        guard let v = flUnwrap(any) else { return nil }
        if v is NSNull { return nil }
        if let r = v as? FLObjectReference { return r.base }
        if let c = v as? any FLPredicateArgumentConvertible {
            let pv = c.predicateValue
            if case .object(let r) = pv { return r.base }
            return pv.anyValue
        }
        if let f = v as? FLValue { return f.anyValue.map { normalize($0) } ?? nil }
        return v
    }

    static func equal(_ a: Any?, _ b: Any?, _ options: FLComparison.Options = []) -> Bool {
        let a = normalize(a), b = normalize(b)
        guard let a, let b else { return a == nil && b == nil }
        if let x = FLNumber(a), let y = FLNumber(b) { return FLNumber.compare(x, y) == .orderedSame }
        if let s = FLStrings.string(a), let t = FLStrings.string(b) {
            return FLStrings.fold(s, options) == FLStrings.fold(t, options)
        }
        if let x = a as? Date, let y = b as? Date { return x == y }
        if let x = a as? Data, let y = b as? Data { return x == y }
        if let x = a as? UUID, let y = b as? UUID { return x == y }
        if let x = a as? URL, let y = b as? URL { return x == y }
        if flDictionary(a) == nil, flDictionary(b) == nil, let xs = flCollection(a), let ys = flCollection(b) {
            return xs.count == ys.count && zip(xs, ys).allSatisfy { equal($0, $1, options) }
        }
        if let x = a as? AnyHashable, let y = b as? AnyHashable { return x == y }
        if type(of: a) is AnyClass, type(of: b) is AnyClass { return (a as AnyObject) === (b as AnyObject) }
        return false
    }

    /// Orders numbers, strings (with options) and dates; `nil` when not comparable.
    static func order(_ a: Any?, _ b: Any?, _ options: FLComparison.Options = []) -> ComparisonResult? {
        let a = normalize(a), b = normalize(b)
        guard let a, let b else { return nil }
        if let x = FLNumber(a), let y = FLNumber(b) { return FLNumber.compare(x, y) }
        if let s = FLStrings.string(a), let t = FLStrings.string(b) {
            let x = FLStrings.fold(s, options), y = FLStrings.fold(t, options)
            return x < y ? .orderedAscending : (x == y ? .orderedSame : .orderedDescending)
        }
        if let x = a as? Date, let y = b as? Date { return x < y ? .orderedAscending : (x == y ? .orderedSame : .orderedDescending) }
        if let x = a as? UUID, let y = b as? UUID {
            return x.uuidString < y.uuidString ? .orderedAscending : (x == y ? .orderedSame : .orderedDescending)
        }
        if let x = a as? URL, let y = b as? URL {
            let s = x.absoluteString, t = y.absoluteString
            return s < t ? .orderedAscending : (s == t ? .orderedSame : .orderedDescending)
        }
        return nil
    }
}
