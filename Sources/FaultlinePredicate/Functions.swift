import Foundation

/// In-memory implementations of the predefined `NSExpression` functions.
enum FLFunctions {
    static func fail(_ name: String, _ why: String) -> PredicateEvaluationError {
        PredicateEvaluationError("\(name) \(why)")
    }

    /// The values an aggregate function works on: one collection argument, or all arguments.
    static func elements(_ args: [Any?]) -> [Any?] {
        if args.count == 1, let v = FLCompare.normalize(args[0]), let items = flCollection(v) { return items }
        return args
    }

    static func numbers(_ name: String, _ values: [Any?]) throws -> [FLNumber] {
        try values.compactMap { v -> FLNumber? in
            guard let n = FLCompare.normalize(v) else { return nil }
            guard let number = FLNumber(n) else { throw fail(name, "needs numbers, not \(type(of: n))") }
            return number
        }
    }

    static func sum(_ values: [Any?]) throws -> Any? {
        let ns = try numbers("sum", values)
        var total = FLNumber.int(0)
        for n in ns { total = add(total, n) }
        return total.any
    }

    static func average(_ values: [Any?]) throws -> Any? {
        let ns = try numbers("average", values)
        if ns.isEmpty { return nil }
        if ns.contains(where: { if case .decimal = $0 { return true } else { return false } }), ns.allSatisfy(\.hasDecimal) {
            return ns.reduce(Decimal(0)) { $0 + $1.decimal } / Decimal(ns.count)
        }
        return ns.reduce(0.0) { $0 + $1.double } / Double(ns.count)
    }

    static func extreme(_ values: [Any?], max: Bool) throws -> Any? {
        var best: Any?
        for v in values {
            guard let n = FLCompare.normalize(v) else { continue }
            guard let b = best else { best = n; continue }
            guard let order = FLCompare.order(n, b) else { throw fail(max ? "max" : "min", "needs comparable values") }
            if (max && order == .orderedDescending) || (!max && order == .orderedAscending) { best = n }
        }
        return best
    }

    static func distinct(_ values: [Any?]) -> [Any?] {
        var out: [Any?] = []
        for v in values where !out.contains(where: { FLCompare.equal($0, v) }) { out.append(v) }
        return out
    }

    static func add(_ a: FLNumber, _ b: FLNumber) -> FLNumber {
        switch (a, b) {
        case (.int(let x), .int(let y)):
            let (r, o) = x.addingReportingOverflow(y)
            return o ? .double(Double(x) + Double(y)) : .int(r)
        case _ where FLNumber.decimalMath(a, b): return .decimal(a.decimal + b.decimal)
        default: return .double(a.double + b.double)
        }
    }

    static func arithmetic(_ name: String, _ args: [Any?]) throws -> Any? {
        let a = FLCompare.normalize(args[0]), b = FLCompare.normalize(args[1])
        if a == nil || b == nil { return nil }
        // Date arithmetic: date ± seconds, date - date.
        if let d = a as? Date {
            if let n = FLNumber(b) {
                if name == "add:to:" { return d.addingTimeInterval(n.double) }
                if name == "from:subtract:" { return d.addingTimeInterval(-n.double) }
            }
            if let e = b as? Date, name == "from:subtract:" { return d.timeIntervalSince(e) }
        }
        if let d = b as? Date, let n = FLNumber(a), name == "add:to:" { return d.addingTimeInterval(n.double) }
        guard let x = FLNumber(a), let y = FLNumber(b) else { throw fail(name, "needs numbers") }
        switch name {
        case "add:to:": return add(x, y).any
        case "from:subtract:":
            if case .int(let i) = x, case .int(let j) = y {
                let (r, o) = i.subtractingReportingOverflow(j)
                return o ? Double(i) - Double(j) : r
            }
            if FLNumber.decimalMath(x, y) { return x.decimal - y.decimal }
            return x.double - y.double
        case "multiply:by:":
            if case .int(let i) = x, case .int(let j) = y {
                let (r, o) = i.multipliedReportingOverflow(by: j)
                return o ? Double(i) * Double(j) : r
            }
            if FLNumber.decimalMath(x, y) { return x.decimal * y.decimal }
            return x.double * y.double
        case "divide:by:":
            if FLNumber.decimalMath(x, y) { return x.decimal / y.decimal }
            return x.double / y.double
        case "modulus:by:":
            if case .int(let i) = x, case .int(let j) = y, j != 0 {
                // Int.min % -1 overflows (the process would stop): its remainder is 0.
                let (r, overflow) = i.remainderReportingOverflow(dividingBy: j)
                return overflow ? 0 : r
            }
            return fmod(x.double, y.double)
        case "raise:toPower:": return pow(x.double, y.double)
        default: break
        }
        guard case .int(let i) = x, case .int(let j) = y else { throw fail(name, "needs integers") }
        switch name {
        case "bitwiseAnd:with:": return i & j
        case "bitwiseOr:with:": return i | j
        case "bitwiseXor:with:": return i ^ j
        case "leftshift:by:": return i << j
        case "rightshift:by:": return i >> j
        default: throw fail(name, "is not a known function")
        }
    }

    static func call(_ name: String, _ args: [Any?]) throws -> Any? {
        // Trees built in code skip the parser's arity check.
        if let entry = FunctionTable.arity[name], let n = entry, args.count != n {
            throw fail(name, "takes \(n) argument\(n == 1 ? "" : "s"), not \(args.count)")
        }
        switch name {
        case "sum:": return try sum(elements(args))
        case "count:": return elements(args).count
        case "min:": return try extreme(elements(args), max: false)
        case "max:": return try extreme(elements(args), max: true)
        case "average:": return try average(elements(args))
        case "median:":
            let ns = try numbers("median", elements(args)).map(\.double).sorted()
            if ns.isEmpty { return nil }
            return ns.count % 2 == 1 ? ns[ns.count / 2] : (ns[ns.count / 2 - 1] + ns[ns.count / 2]) / 2
        case "mode:":
            let items = elements(args)
            var counts: [(Any?, Int)] = []
            for v in items {
                if let i = counts.firstIndex(where: { FLCompare.equal($0.0, v) }) { counts[i].1 += 1 } else { counts.append((v, 1)) }
            }
            let top = counts.map(\.1).max() ?? 0
            return counts.filter { $0.1 == top }.map(\.0) as [Any?]
        case "stddev:":
            let ns = try numbers("stddev", elements(args)).map(\.double)
            if ns.isEmpty { return nil }
            let mean = ns.reduce(0, +) / Double(ns.count)
            return (ns.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(ns.count)).squareRoot()
        case "add:to:", "from:subtract:", "multiply:by:", "divide:by:", "modulus:by:", "raise:toPower:",
             "bitwiseAnd:with:", "bitwiseOr:with:", "bitwiseXor:with:", "leftshift:by:", "rightshift:by:":
            return try arithmetic(name, args)
        case "sqrt:", "log:", "ln:", "exp:", "floor:", "ceiling:", "abs:", "trunc:", "onesComplement:":
            guard let v = FLCompare.normalize(args.first ?? nil) else { return nil }
            guard let n = FLNumber(v) else { throw fail(name, "needs a number") }
            switch name {
            case "abs:":
                if case .int(let i) = n, i != .min { return abs(i) }
                if case .decimal(let d) = n { return abs(d) }
                return abs(n.double)
            case "onesComplement:":
                guard case .int(let i) = n else { throw fail(name, "needs an integer") }
                return ~i
            case "sqrt:": return n.double.squareRoot()
            case "log:": return log10(n.double)
            case "ln:": return Foundation.log(n.double)
            case "exp:": return Foundation.exp(n.double)
            case "floor:": return n.double.rounded(.down)
            case "ceiling:": return n.double.rounded(.up)
            default: return n.double.rounded(.towardZero)
            }
        case "uppercase:", "lowercase:", "canonical:", "length:":
            guard let v = FLCompare.normalize(args.first ?? nil) else { return nil }
            guard let s = FLStrings.string(v) else { throw fail(name, "needs a string") }
            switch name {
            case "uppercase:": return s.uppercased()
            case "lowercase:": return s.lowercased()
            case "length:": return s.utf16.count
            default: return FLStrings.fold(s, [.caseInsensitive, .diacriticInsensitive])
            }
        case "random": return Double.random(in: 0..<1)
        case "randomn:":
            guard let n = FLNumber(FLCompare.normalize(args.first ?? nil)), case .int(let i) = n, i > 0 else {
                throw fail(name, "needs a positive integer")
            }
            return Int.random(in: 0..<i)
        case "now": return Date()
        case "noindex:": return args.first ?? nil
        case "objectFrom:withIndex:":
            guard let c = FLCompare.normalize(args[0]).flatMap(flCollection), let n = FLNumber(FLCompare.normalize(args[1])) else {
                throw fail(name, "needs a collection and an index")
            }
            let i = Int(n.double)
            guard c.indices.contains(i) else { throw fail(name, "index \(i) out of bounds") }
            return c[i]
        default:
            throw PredicateEvaluationError("unsupported function \(name)")
        }
    }

    static func cast(_ value: Any?, _ type: String) throws -> Any? {
        guard let v = FLCompare.normalize(value) else { return nil }
        switch type {
        case "NSString", "String":
            if let s = FLStrings.string(v) { return s }
            if let n = FLNumber(v) {
                switch n {
                case .int(let i): return String(i)
                case .double(let d): return FLPrinter.number(d)
                case .decimal(let d): return d.description
                }
            }
            return String(describing: v)
        case "NSNumber", "Int", "Double":
            if let n = FLNumber(v) { return n.any }
            if let s = FLStrings.string(v) {
                let t = s.trimmingCharacters(in: .whitespaces)
                if let i = Int(t) { return i }
                if let d = Double(t) { return d }
                return 0
            }
            if let d = v as? Date { return d.timeIntervalSinceReferenceDate }
            throw PredicateEvaluationError("cannot cast \(Swift.type(of: v)) to \(type)")
        case "NSDate", "Date":
            if let d = v as? Date { return d }
            if let n = FLNumber(v) { return Date(timeIntervalSinceReferenceDate: n.double) }
            throw PredicateEvaluationError("cannot cast \(Swift.type(of: v)) to NSDate")
        default:
            return v
        }
    }
}

/// Key-value coding's collection operators, for key paths walked outside a predicate
/// (`ManagedObject.value(forKeyPath: "items.@sum.price")`): the same arithmetic as in
/// predicates, so `show items.@avg.price` and `where items.@avg.price > 3` agree.
public enum FLCollectionOperator: String, CaseIterable, Sendable {
    case count = "@count"
    case sum = "@sum"
    case avg = "@avg"
    case min = "@min"
    case max = "@max"
    case distinctUnionOfObjects = "@distinctUnionOfObjects"
    case unionOfObjects = "@unionOfObjects"

    /// Whether the operator takes the key path after it (`@sum.price`); `@count` ends a path.
    public var takesKeyPath: Bool { self != .count }

    /// The operator applied to the values of a collection (already read at the key path after
    /// the operator, for those that take one). nil values are skipped as KVC skips them;
    /// `@sum` of nothing is 0, `@avg`, `@min` and `@max` of nothing are nil.
    ///
    /// - Throws: ``PredicateEvaluationError`` when the values are not numbers (`@sum`, `@avg`)
    ///   or cannot be ordered against each other (`@min`, `@max`).
    public func apply(to values: [Any?]) throws -> Any? {
        switch self {
        case .count: return values.count
        case .sum: return try FLFunctions.sum(values)
        case .avg: return try FLFunctions.average(values)
        case .min: return try FLFunctions.extreme(values, max: false)
        case .max: return try FLFunctions.extreme(values, max: true)
        case .unionOfObjects: return values.filter { FLCompare.normalize($0) != nil }
        case .distinctUnionOfObjects: return FLFunctions.distinct(values.filter { FLCompare.normalize($0) != nil })
        }
    }
}
