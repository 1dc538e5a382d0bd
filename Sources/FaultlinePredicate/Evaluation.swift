import Foundation

// MARK: - Public API

extension FLPredicate {
    /// Evaluates the predicate against an object in memory, with Foundation's semantics.
    ///
    /// Key paths are read through ``KeyValueCoding`` (or dictionaries, collections and
    /// reflection, see ``KeyValueCoding``). Numbers compare across types (`1 == 1.0 == YES`),
    /// `nil == nil` is true, ordering comparisons with `nil` are false, `[c]`/`[d]` fold
    /// case/diacritics (and width), `LIKE` understands `*` and `?`, `MATCHES` is a
    /// whole-string regular expression, `ANY`/`ALL` range over the left collection (`ALL` is
    /// true on an empty one), and `SUBQUERY` and `@count`/`@sum`/`@avg`/`@min`/`@max` work
    /// on any collection.
    ///
    /// ```swift
    /// let p = try FLPredicate(format: "name BEGINSWITH[c] 'ca' AND ANY tags == 'x'")
    /// try p.evaluate(with: ["name": "Cake", "tags": ["x", "y"]])  // true
    /// ```
    /// - Parameters:
    ///   - object: the object `SELF` refers to.
    ///   - variables: values for `$NAME` variables.
    /// - Throws: ``PredicateEvaluationError`` for unbound variables, unknown functions,
    ///   invalid regular expressions and impossible operations; errors thrown by
    ///   ``KeyValueCoding/value(forKey:)`` are rethrown unchanged.
    public func evaluate(with object: Any?, variables: [String: Any?] = [:]) throws -> Bool {
        try FLNestingDepth.check(self)
        var evaluator = FLEvaluator(variables: variables)
        return try evaluator.predicate(self, object)
    }

    /// Replaces `$NAME` variables with constants (`NSPredicate.withSubstitutionVariables`).
    ///
    /// Variables missing from `variables` are left in place; the variable bound by a
    /// `SUBQUERY` is never replaced inside that subquery.
    ///
    /// ```swift
    /// let template = try FLPredicate(format: "name == $NAME")
    /// try template.substituting(["NAME": "Ann"]).predicateFormat  // name == "Ann"
    /// ```
    /// - Throws: ``PredicateEvaluationError`` when a value cannot be a predicate constant.
    public func substituting(_ variables: [String: Any?]) throws -> FLPredicate {
        try FLNestingDepth.check(self)
        var converted: [String: FLValue] = [:]
        for (k, v) in variables {
            guard let c = FLValue(converting: v) else {
                throw PredicateEvaluationError("the value for $\(k) cannot appear in a predicate")
            }
            converted[k] = c
        }
        return FLSubstitution.predicate(self, converted)
    }
}

extension FLExpression {
    /// Evaluates the expression against an object (`NSExpression.expressionValue(with:context:)`).
    ///
    /// ```swift
    /// try FLExpression(format: "items.@sum.price * 2").value(with: order)
    /// ```
    /// - Throws: ``PredicateEvaluationError``, or an error from ``KeyValueCoding``.
    public func value(with object: Any?, variables: [String: Any?] = [:]) throws -> Any? {
        try FLNestingDepth.check(self)
        var evaluator = FLEvaluator(variables: variables)
        return try evaluator.expression(self, object)
    }

    /// Replaces `$NAME` variables with constants; see ``FLPredicate/substituting(_:)``.
    /// - Throws: ``PredicateEvaluationError`` when a value cannot be a predicate constant.
    public func substituting(_ variables: [String: Any?]) throws -> FLExpression {
        try FLNestingDepth.check(self)
        var converted: [String: FLValue] = [:]
        for (k, v) in variables {
            guard let c = FLValue(converting: v) else {
                throw PredicateEvaluationError("the value for $\(k) cannot appear in a predicate")
            }
            converted[k] = c
        }
        return FLSubstitution.expression(self, converted)
    }
}

extension Sequence {
    /// The elements for which `predicate` evaluates to true (`filtered(using:)`).
    /// - Throws: the first evaluation error.
    public func filtered(by predicate: FLPredicate, variables: [String: Any?] = [:]) throws -> [Element] {
        try FLNestingDepth.check(predicate)
        return try filter {
            var evaluator = FLEvaluator(variables: variables)
            return try evaluator.predicate(predicate, $0)
        }
    }
}

// MARK: - Key-value access

/// Reads one key of a value, KVC style.
///
/// - Conforming ``KeyValueCoding`` values answer themselves.
/// - Dictionaries look the key up (missing → nil).
/// - Collections map the key over their elements (`NSArray.value(forKey:)`), except the
///   collection operators, which ``flValue(forKeyPath:of:)`` handles.
/// - Strings answer `length` (UTF-16 count, like `NSString.length`).
/// - Other values are searched by `Mirror` for a stored property.
func flValue(forKey key: String, of object: Any?) throws -> Any? {
    // Key-value coding first: an object that is also a predicate constant (a managed object)
    // must answer its properties, not turn into its object ID.
    if let kvc = flUnwrap(object) as? any KeyValueCoding { return try kvc.value(forKey: key) }
    guard let object = FLCompare.normalize(object) else { return nil }
    if let dict = flDictionary(object) {
        return dict.first { ($0.0.base as? String) == key || String(describing: $0.0.base) == key }?.1 ?? nil
    }
    if let items = flCollection(object) {
        return try items.map { try flValue(forKey: key, of: $0) } as [Any?]
    }
    if let s = FLStrings.string(object) {
        if key == "length" { return s.utf16.count }
        if key == "uppercaseString" { return s.uppercased() }
        if key == "lowercaseString" { return s.lowercased() }
        return nil
    }
    if key == "self" { return object }
    var mirror: Mirror? = Mirror(reflecting: object)
    while let m = mirror {
        for child in m.children where child.label == key || child.label == "_" + key {
            return child.value
        }
        mirror = m.superclassMirror
    }
    return nil
}

/// Reads a dotted key path, applying the collection operators (`@count`, `@sum`, `@avg`,
/// `@min`, `@max`, `@distinctUnionOfObjects`, `@unionOfObjects`, `@distinctUnionOfArrays`,
/// `@unionOfArrays`, `@distinctUnionOfSets`, `@unionOfSets`) to the value reached so far.
func flValue(forKeyPath path: String, of object: Any?) throws -> Any? {
    let components = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    // The walk recurses once per component: a key path given as a `%K` argument or built in
    // code is not limited by the parser.
    guard components.count <= FLNestingDepth.maximum else {
        throw PredicateEvaluationError("the key path has \(components.count) components, more than \(FLNestingDepth.maximum)")
    }
    return try flValue(forComponents: components[...], of: object)
}

private func flValue(forComponents components: ArraySlice<String>, of object: Any?) throws -> Any? {
    guard let first = components.first else { return object }
    let rest = components.dropFirst()
    if first.hasPrefix("@") {
        let items = FLCompare.normalize(object).flatMap { flCollection($0) ?? flDictionary($0)?.map(\.1) }
        guard let items else {
            if object == nil || FLCompare.normalize(object) == nil { return first == "@count" ? 0 : nil }
            throw PredicateEvaluationError("the collection operator \(first) needs a collection")
        }
        func values() throws -> [Any?] {
            rest.isEmpty ? items : try items.map { try flValue(forComponents: rest, of: $0) }
        }
        switch first {
        case "@count": return rest.isEmpty ? items.count : try flValue(forComponents: rest, of: items.count)
        case "@sum": return try FLFunctions.sum(values())
        case "@avg": return try FLFunctions.average(values())
        case "@min": return try FLFunctions.extreme(values(), max: false)
        case "@max": return try FLFunctions.extreme(values(), max: true)
        case "@unionOfObjects": return try values().filter { FLCompare.normalize($0) != nil }
        case "@distinctUnionOfObjects": return FLFunctions.distinct(try values().filter { FLCompare.normalize($0) != nil })
        case "@unionOfArrays", "@unionOfSets":
            return try values().flatMap { v -> [Any?] in FLCompare.normalize(v).flatMap(flCollection) ?? [] }
        case "@distinctUnionOfArrays", "@distinctUnionOfSets":
            return FLFunctions.distinct(try values().flatMap { v -> [Any?] in FLCompare.normalize(v).flatMap(flCollection) ?? [] })
        default:
            throw PredicateEvaluationError("unknown collection operator \(first)")
        }
    }
    let value = try flValue(forKey: first, of: object)
    return try flValue(forComponents: rest, of: value)
}

// MARK: - Evaluator

struct FLEvaluator {
    var variables: [String: Any?]

    mutating func predicate(_ p: FLPredicate, _ object: Any?) throws -> Bool {
        switch p.node {
        case .constant(let b): return b
        case .not(let inner): return try !predicate(inner, object)
        case .and(let items):
            for item in items where try !predicate(item, object) { return false }
            return true
        case .or(let items):
            for item in items where try predicate(item, object) { return true }
            return false
        case .comparison(let c): return try comparison(c, object)
        }
    }

    mutating func comparison(_ c: FLComparison, _ object: Any?) throws -> Bool {
        let left = try expression(c.left, object)
        let right = try expression(c.right, object)
        switch c.modifier {
        case .direct:
            return try FLEvaluator.compare(left, c.op, right, c.options)
        case .any, .all:
            guard let l = FLCompare.normalize(left) else { return c.modifier == .all }
            guard let items = flCollection(l) ?? flDictionary(l)?.map(\.1) else {
                throw PredicateEvaluationError(
                    "the left hand side for an ALL or ANY operator must be a collection",
                    context: FLPrinter.comparison(c))
            }
            for item in items {
                let r = try FLEvaluator.compare(item, c.op, right, c.options)
                if c.modifier == .any && r { return true }
                if c.modifier == .all && !r { return false }
            }
            return c.modifier == .all
        }
    }

    /// One comparison between two evaluated operands.
    static func compare(_ left: Any?, _ op: FLComparison.Operator, _ right: Any?, _ options: FLComparison.Options) throws -> Bool {
        switch op {
        case .equalTo: return FLCompare.equal(left, right, options)
        case .notEqualTo: return !FLCompare.equal(left, right, options)
        case .lessThan, .lessThanOrEqualTo, .greaterThan, .greaterThanOrEqualTo:
            guard let order = FLCompare.order(left, right, options) else { return false }
            switch op {
            case .lessThan: return order == .orderedAscending
            case .lessThanOrEqualTo: return order != .orderedDescending
            case .greaterThan: return order == .orderedDescending
            default: return order != .orderedAscending
            }
        case .like, .matches, .beginsWith, .endsWith:
            guard let s = FLStrings.string(FLCompare.normalize(left)),
                  let t = FLStrings.string(FLCompare.normalize(right)) else { return false }
            return try stringOperator(op, s, t, options)
        case .contains:
            guard let l = FLCompare.normalize(left) else { return false }
            if let s = FLStrings.string(l) {
                guard let t = FLStrings.string(FLCompare.normalize(right)) else { return false }
                return try stringOperator(.contains, s, t, options)
            }
            if let items = flCollection(l) ?? flDictionary(l)?.map(\.1) {
                return items.contains { FLCompare.equal($0, right, options) }
            }
            return false
        case .in:
            guard let r = FLCompare.normalize(right) else { return false }
            if let t = FLStrings.string(r) {
                guard let s = FLStrings.string(FLCompare.normalize(left)) else { return false }
                return try stringOperator(.contains, t, s, options)
            }
            if let items = flCollection(r) ?? flDictionary(r)?.map(\.1) {
                return items.contains { FLCompare.equal(left, $0, options) }
            }
            return false
        case .between:
            guard let r = FLCompare.normalize(right), let bounds = flCollection(r), bounds.count == 2 else {
                throw PredicateEvaluationError("BETWEEN needs a collection of two values on the right")
            }
            guard let low = FLCompare.order(left, bounds[0], options), let high = FLCompare.order(left, bounds[1], options) else {
                return false
            }
            return low != .orderedAscending && high != .orderedDescending
        case .utiConformsTo, .utiEquals:
            throw PredicateEvaluationError("\(op.symbol) is not supported on this platform")
        }
    }

    /// String operators on two strings; an empty pattern never matches BEGINSWITH,
    /// ENDSWITH or CONTAINS (as with `NSString`).
    static func stringOperator(_ op: FLComparison.Operator, _ text: String, _ pattern: String, _ options: FLComparison.Options) throws -> Bool {
        switch op {
        case .matches:
            let t = options.contains(.diacriticInsensitive) ? FLStrings.fold(text, .diacriticInsensitive) : text
            let p = options.contains(.diacriticInsensitive) ? FLStrings.fold(pattern, .diacriticInsensitive) : pattern
            return try FLRegex.cached(p, caseInsensitive: options.contains(.caseInsensitive)).matches(t)
        case .like:
            return FLStrings.like(FLStrings.fold(text, options), FLStrings.fold(pattern, options))
        default:
            if pattern.isEmpty { return false }
            let t = FLStrings.fold(text, options), p = FLStrings.fold(pattern, options)
            let tu = Array(t.unicodeScalars), pu = Array(p.unicodeScalars)
            switch op {
            case .beginsWith: return tu.starts(with: pu)
            case .endsWith: return tu.count >= pu.count && Array(tu[(tu.count - pu.count)...]) == pu
            default: return t.range(of: p, options: .literal) != nil
            }
        }
    }

    // MARK: Expressions

    mutating func expression(_ e: FLExpression, _ object: Any?) throws -> Any? {
        switch e.node {
        case .constant(let v): return v.anyValue
        case .evaluatedObject: return object
        case .variable(let name):
            guard let v = variables[name] else {
                throw PredicateEvaluationError("Can't get value for '\(name)' in bindings \(variables.keys.sorted())")
            }
            return v
        case .keyPath(let path): return try flValue(forKeyPath: path, of: object)
        case .member(let base, let path): return try flValue(forKeyPath: path, of: try expression(base, object))
        case .function(let name, let args):
            var values: [Any?] = []
            for a in args { values.append(try expression(a, object)) }
            return try FLFunctions.call(name, values)
        case .customFunction(let receiver, let selector, let args):
            let r = try expression(receiver, object)
            guard let target = FLCompare.normalize(r) as? any FLCustomFunctionReceiver else {
                throw PredicateEvaluationError("FUNCTION receiver does not implement \(selector)", context: FLPrinter.expression(e))
            }
            var values: [Any?] = []
            for a in args { values.append(try expression(a, object)) }
            return try target.perform(selector: selector, arguments: values)
        case .aggregate(let items):
            var out: [Any?] = []
            for item in items { out.append(try expression(item, object)) }
            return out
        case .subquery(let collection, let variable, let p):
            let c = try expression(collection, object)
            guard let n = FLCompare.normalize(c) else { return [Any?]() }
            guard let items = flCollection(n) else {
                throw PredicateEvaluationError("SUBQUERY needs a collection", context: FLPrinter.expression(e))
            }
            let saved = variables[variable]
            defer { variables[variable] = saved }
            var out: [Any?] = []
            for item in items {
                variables[variable] = .some(item)
                if try predicate(p, object) { out.append(item) }
            }
            return out
        case .conditional(let p, let a, let b):
            return try predicate(p, object) ? try expression(a, object) : try expression(b, object)
        case .cast(let value, let type):
            return try FLFunctions.cast(try expression(value, object), type)
        case .index(let base, let kind):
            let b = FLCompare.normalize(try expression(base, object))
            guard let b else { return nil }
            switch kind {
            case .first: return flCollection(b)?.first ?? nil
            case .last: return flCollection(b)?.last ?? nil
            case .size: return flCollection(b)?.count ?? flDictionary(b)?.count
            case .expression(let x):
                let key = try expression(x, object)
                if flDictionary(b) != nil, let k = FLStrings.string(key) { return try flValue(forKey: k, of: b) }
                guard let items = flCollection(b), let n = FLNumber(FLCompare.normalize(key)) else {
                    throw PredicateEvaluationError("invalid index", context: FLPrinter.expression(e))
                }
                let i = Int(n.double)
                guard i >= 0, i < items.count else {
                    throw PredicateEvaluationError("index \(i) beyond bounds [0 .. \(items.count - 1)]", context: FLPrinter.expression(e))
                }
                return items[i]
            }
        case .assignment(let variable, let value):
            let v = try expression(value, object)
            variables[variable] = .some(v)
            return v
        case .fetch, .anyKey:
            throw PredicateEvaluationError("\(FLPrinter.expression(e)) cannot be evaluated in memory")
        }
    }
}

// MARK: - Substitution

enum FLSubstitution {
    static func predicate(_ p: FLPredicate, _ vars: [String: FLValue]) -> FLPredicate {
        switch p.node {
        case .constant: return p
        case .not(let inner): return FLPredicate(.not(predicate(inner, vars)))
        case .and(let items): return FLPredicate(.and(items.map { predicate($0, vars) }))
        case .or(let items): return FLPredicate(.or(items.map { predicate($0, vars) }))
        case .comparison(var c):
            c.left = expression(c.left, vars)
            c.right = expression(c.right, vars)
            return FLPredicate(.comparison(c))
        }
    }

    static func expression(_ e: FLExpression, _ vars: [String: FLValue]) -> FLExpression {
        func x(_ e: FLExpression) -> FLExpression { expression(e, vars) }
        switch e.node {
        case .constant, .evaluatedObject, .keyPath, .anyKey: return e
        case .variable(let name): return vars[name].map { .constant($0) } ?? e
        case .member(let base, let path): return FLExpression(.member(x(base), keyPath: path))
        case .function(let name, let args): return .function(name, args.map(x))
        case .customFunction(let r, let s, let args):
            return FLExpression(.customFunction(receiver: x(r), selector: s, arguments: args.map(x)))
        case .aggregate(let items): return FLExpression(.aggregate(items.map(x)))
        case .subquery(let c, let v, let p):
            var inner = vars
            inner[v] = nil
            return FLExpression(.subquery(collection: x(c), variable: v, predicate: predicate(p, inner)))
        case .conditional(let p, let a, let b): return FLExpression(.conditional(predicate(p, vars), then: x(a), else: x(b)))
        case .cast(let v, let t): return FLExpression(.cast(x(v), type: t))
        case .index(let b, let k):
            if case .expression(let i) = k { return FLExpression(.index(x(b), .expression(x(i)))) }
            return FLExpression(.index(x(b), k))
        case .assignment(let v, let value): return FLExpression(.assignment(variable: v, value: x(value)))
        case .fetch(let a, let b, let c): return FLExpression(.fetch(x(a), x(b), x(c)))
        }
    }
}

extension FLComparison {
    /// Applies one comparison operator to two values with in-memory semantics, the same
    /// rules ``FLPredicate/evaluate(with:variables:)`` uses.
    ///
    /// The SQL store's custom functions (`NSCoreDataStringSearch`, `NSCoreDataLike`, …) call
    /// this, so a fetch and an in-memory filter agree.
    ///
    /// ```swift
    /// try FLComparison.compare("Crème", .beginsWith, "cre", options: [.caseInsensitive, .diacriticInsensitive]) // true
    /// ```
    /// - Throws: ``PredicateEvaluationError`` (an invalid `MATCHES` pattern, a bad `BETWEEN`).
    public static func compare(_ left: Any?, _ op: Operator, _ right: Any?, options: Options = []) throws -> Bool {
        try FLEvaluator.compare(left, op, right, options)
    }
}
