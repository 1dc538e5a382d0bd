import Foundation

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
