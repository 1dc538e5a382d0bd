import FaultlineModel
import FaultlinePredicate
import Foundation

// Foundation's `Predicate` (what `#Predicate` builds) translated into the predicate tree of the
// format language, so a typed fetch goes through the same SQL generation and the same in-memory
// matching of pending changes as `FLPredicate(format:)`. The mapping follows Apple's own
// `Predicate` → `NSPredicate` conversion (swift-foundation `NSPredicateConversion.swift`) where
// that exists; Documentation/TypedPredicates.md lists every form, the folding rule and what
// throws.
//
// The walk: every `PredicateExpressions` type Faultline knows conforms to
// `FLTranslatablePredicateExpression` (PredicateTranslation+Expressions.swift). Before a node is
// translated it is evaluated with no input: when that succeeds the node uses no input (captured
// values, arithmetic on them, key paths of captured objects) and becomes one constant, computed
// in Swift, so the SQL binds the result (SwiftData folds captured values the same way). A node
// of another type that needs the input is an error naming it: nothing is filtered in memory in
// its place.

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension FLPredicate {
    /// Translates a Foundation `Predicate` over a registered class into the format language's
    /// tree, as a typed fetch does: the same SQL and in-memory matching as the equivalent format
    /// string.
    ///
    /// ```swift
    /// let limit = 3
    /// let predicate = try FLPredicate(#Predicate<Recipe> { $0.name.starts(with: "G") && $0.ingredients.count > limit })
    /// print(predicate)  // name BEGINSWITH "G" AND ingredients.@count > 3
    /// ```
    ///
    /// Key paths become model property names through
    /// ``ManagedObjectSubclass/propertyName(for:)``; captured values and every part of the
    /// predicate that does not use its input are computed first, in Swift.
    ///
    /// - Throws: ``PredicateTranslationError`` naming the expression that has no Core Data
    ///   form (a subscript, a cast, a key path that is no model property, …).
    public init<T: ManagedObjectSubclass>(_ predicate: Predicate<T>) throws {
        var translator = FLPredicateTranslator(rootType: T.self, rootVariable: predicate.variable.key)
        self = try translator.translatePredicate(predicate.expression)
    }
}

/// Why a Foundation `Predicate` (or a sort descriptor) has no Core Data form: the expression
/// and what to do instead. Nothing was fetched.
public struct PredicateTranslationError: Error, Sendable, Hashable, CustomStringConvertible, LocalizedError {
    /// The expression's type without its generic arguments (`CollectionIndexSubscript`,
    /// `KeyPath`, …), or the key path (`\Recipe.summary`).
    public var expression: String
    /// A sentence saying what cannot be translated and what to write instead.
    public var message: String

    /// Creates an error.
    public init(expression: String, message: String) {
        self.expression = expression
        self.message = message
    }

    /// `cannot translate <expression> in #Predicate<Root>: <message>`, as ``message`` says it.
    public var description: String { message }
    /// The message, for `localizedDescription`.
    public var errorDescription: String? { message }
}

// MARK: - The translator

/// A `PredicateExpressions` type Faultline can translate: each conforms in
/// PredicateTranslation+Expressions.swift.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
protocol FLTranslatablePredicateExpression: PredicateExpression {
    /// The node's translation; its children go through ``FLPredicateTranslator/translate(_:)``.
    func flTranslate(_ translator: inout FLPredicateTranslator) throws -> FLTranslated
}

/// What a translated node stands for.
indirect enum FLTranslated {
    /// A Swift value: the node used no input and was evaluated (nil for `nil`).
    case constant(Any?)
    /// A value from the object: a key path, a count, arithmetic, `SELF`.
    case expression(FLExpression)
    /// A condition.
    case predicate(FLPredicate)
    /// A value that depends on conditions (`?:`, `??`, optional chaining into a condition):
    /// the value of the first branch whose condition holds; the conditions exclude each other.
    case choice([FLBranch])
    /// `a.caseInsensitiveCompare(b)` / `a.localizedCompare(b)`: an order, compared with a
    /// `ComparisonResult` to make `a ==[c] b`, `a <[c] b`, ….
    case stringOrder(FLExpression, FLExpression, FLComparison.Options)

    var isChoice: Bool { if case .choice = self { return true } else { return false } }
    var isPredicate: Bool { if case .predicate = self { return true } else { return false } }
    var isConstant: Bool { if case .constant = self { return true } else { return false } }
    /// Whether this is the constant `nil`.
    var isNil: Bool {
        if case .constant(let value) = self { return flUnwrapOptional(value) == nil }
        return false
    }
}

/// One branch of ``FLTranslated/choice(_:)``.
struct FLBranch {
    var condition: FLPredicate
    var value: FLTranslated

    init(_ condition: FLPredicate, _ value: FLTranslated) {
        self.condition = condition
        self.value = value
    }
}

/// Walks a `Predicate`'s expression tree, keeping what each variable stands for.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
struct FLPredicateTranslator {
    /// What a variable stands for, and the subquery level it was bound at.
    struct Binding {
        var value: FLTranslated
        var level: Int
    }

    /// The most branches one `?:`/`??`/optional-chaining expansion may make.
    static let maximumBranches = 64

    /// The class the predicate is over, for messages (`#Predicate<Recipe>`).
    let rootName: String
    /// Variables by ID: the predicate's input is `SELF`, a subquery's element `$_local_N`, a
    /// `flatMap`'s argument the expression it unwraps.
    var bindings: [PredicateExpressions.VariableID: Binding] = [:]
    /// Values of variables bound to constants (a `flatMap` over a captured optional), for
    /// folding the nodes that use them.
    var constantBindings = PredicateBindings()
    /// How many subqueries (`contains(where:)`, `allSatisfy`, `filter`) enclose the node.
    var level = 0
    /// How deep the walk is (bounded by `FLNestingDepth.maximum`).
    var depth = 0
    /// The number of the next subquery variable (`$_local_1`, as Apple's conversion names them).
    var nextLocal = 1

    init(rootType: any ManagedObjectSubclass.Type, rootVariable: PredicateExpressions.VariableID) {
        rootName = "\(rootType)"
        bindings[rootVariable] = Binding(value: .expression(.evaluatedObject), level: 0)
    }

    /// The whole predicate.
    mutating func translatePredicate(_ expression: any PredicateExpression) throws -> FLPredicate {
        try predicate(translate(expression), expression)
    }

    /// Translates one node: folded to a constant when it uses no input, else by its type.
    mutating func translate(_ expression: any PredicateExpression) throws -> FLTranslated {
        depth += 1
        defer { depth -= 1 }
        guard depth <= FLNestingDepth.maximum else {
            throw error(expression, "the predicate nests more than \(FLNestingDepth.maximum) expressions deep; split it into smaller predicates")
        }
        if let constant = try fold(expression) { return .constant(constant.value) }
        guard let node = expression as? any FLTranslatablePredicateExpression else {
            throw error(expression, "\(Self.baseName(of: expression)) has no Core Data form. \(Self.advice(for: Self.baseName(of: expression)))")
        }
        return try node.flTranslate(&self)
    }

    /// A value that boxes `nil` too.
    struct Folded { var value: Any? }

    /// The node's value when it needs no input (its only variables are bound to constants);
    /// nil when it needs the input.
    func fold(_ expression: any PredicateExpression) throws -> Folded? {
        do {
            return Folded(value: try expression.evaluate(constantBindings))
        } catch let failure as PredicateError where Self.isUndefinedVariable(failure) {
            return nil
        } catch {
            throw self.error(expression, "evaluating the captured part \(Self.baseName(of: expression)) failed: \(error)")
        }
    }

    /// Whether an evaluation failed for want of a variable. (Not with `==`: in this toolchain's
    /// Foundation `PredicateError.==` calls itself forever when both sides are
    /// `.undefinedVariable`.)
    static func isUndefinedVariable(_ failure: PredicateError) -> Bool {
        failure.debugDescription == PredicateError.undefinedVariable.debugDescription
    }

    /// The variable's translation. A subquery's condition cannot reach out to the fetched
    /// object: there a key path without a variable (`name`) means the element's, so only its
    /// own element, an enclosing subquery's element (`$_local_1`) and constants can be used.
    func lookUp(_ key: PredicateExpressions.VariableID, _ expression: any PredicateExpression) throws -> FLTranslated {
        guard let binding = bindings[key] else {
            throw error(expression, "the predicate uses a variable that is not its input nor a closure argument")
        }
        if binding.level < level, Self.usesFetchedObject(binding.value) {
            throw error(
                expression,
                "the closure of contains(where:), allSatisfy or filter uses the fetched object; a Core Data SUBQUERY condition can use only elements (its own and enclosing closures') and captured values (compare the fetched object's value outside the closure)"
            )
        }
        return binding.value
    }

    /// Whether a value reads the fetched object (`SELF`, a key path without a variable);
    /// conditions and choices are taken to.
    static func usesFetchedObject(_ value: FLTranslated) -> Bool {
        func uses(_ e: FLExpression) -> Bool {
            switch e.node {
            case .constant, .variable: return false
            case .member(let base, _): return uses(base)
            case .function(_, let arguments), .aggregate(let arguments): return arguments.contains(where: uses)
            default: return true
            }
        }
        switch value {
        case .constant: return false
        case .expression(let e): return uses(e)
        case .stringOrder(let a, let b, _): return uses(a) || uses(b)
        case .predicate, .choice: return true
        }
    }

    /// Binds a closure's variable for the body's translation (then unbinds it).
    mutating func with<Result>(
        _ variable: PredicateExpressions.VariableID, boundTo value: FLTranslated, _ body: (inout Self) throws -> Result
    ) rethrows -> Result {
        let previous = bindings[variable]
        bindings[variable] = Binding(value: value, level: level)
        defer { bindings[variable] = previous }
        return try body(&self)
    }

    // MARK: Errors

    func error(_ expression: any PredicateExpression, _ message: String) -> PredicateTranslationError {
        let name = Self.baseName(of: expression)
        return PredicateTranslationError(expression: name, message: "cannot translate \(name) in #Predicate<\(rootName)>: \(message)")
    }

    func error(keyPath: AnyKeyPath, _ message: String) -> PredicateTranslationError {
        let name = Self.describe(keyPath)
        return PredicateTranslationError(expression: name, message: "cannot translate \(name) in #Predicate<\(rootName)>: \(message)")
    }

    /// A key path as Swift writes it (`\Recipe.name`); a computed property, whose name the
    /// run time does not keep, as `\Recipe.<computed String>` (Swift's own description adds
    /// an address that changes from run to run).
    static func describe(_ keyPath: AnyKeyPath) -> String {
        var text = keyPath.debugDescription
        while let start = text.range(of: "<computed 0x"), let space = text[start.upperBound...].firstIndex(of: " "),
            let open = text[space...].firstIndex(of: "("), let close = text[open...].firstIndex(of: ")"),
            text.index(after: close) < text.endIndex, text[text.index(after: close)] == ">"
        {
            let valueType = text[text.index(after: open)..<close]
            text.replaceSubrange(start.lowerBound...text.index(after: close), with: "<computed \(valueType)>")
        }
        return text
    }

    /// `CollectionIndexSubscript` for `CollectionIndexSubscript<KeyPath<…>, Value<Int>>`.
    static func baseName(of expression: any PredicateExpression) -> String {
        let full = String(describing: type(of: expression))
        return String(full.prefix { $0 != "<" })
    }

    /// What to do instead of an expression type with no translation.
    static func advice(for name: String) -> String {
        switch name {
        case "CollectionIndexSubscript", "CollectionRangeSubscript", "DictionaryKeySubscript", "DictionaryKeyDefaultValueSubscript":
            return "Subscripts cannot be fetched on: compare a model property, or subscript a captured value before the predicate."
        case "SequenceMaximum", "SequenceMinimum":
            return "max()/min() of a relationship cannot be fetched on: compare each element with contains(where:) or allSatisfy, or sort by the property with fetchLimit 1."
        case "ConditionalCast", "ForceCast", "TypeCheck":
            return "Casts and `is` tests cannot be fetched on: fetch with the sub-entity's class (FetchDescriptor<SubClass>) instead."
        case "PredicateEvaluate", "ExpressionEvaluate":
            return "Evaluating another predicate inside a predicate is not translated: write its condition inline."
        default:
            return
                "Comparisons, &&, ||, !, optional chaining, ??, ?:, arithmetic, the string methods contains, starts(with:), localizedStandardContains, caseInsensitiveCompare, localizedCompare, and contains, contains(where:), allSatisfy, filter, count and isEmpty on relationships translate (Documentation/TypedPredicates.md)."
        }
    }

    // MARK: Shapes

    /// A condition from a translation: a Boolean value `x` is `x == YES` (as Apple's conversion
    /// writes it), a branch is `condition AND value`.
    mutating func predicate(_ translated: FLTranslated, _ origin: any PredicateExpression) throws -> FLPredicate {
        switch translated {
        case .predicate(let p):
            return p
        case .expression(let e):
            return .comparison(e, .equalTo, .constant(.bool(true)))
        case .constant(let value):
            switch try constantValue(value, origin) {
            case .bool(let b): return b ? .truePredicate : .falsePredicate
            default: throw error(origin, "the constant \(String(describing: value)) is not a Boolean")
            }
        case .choice(let branches):
            var alternatives: [FLPredicate] = []
            for branch in branches where !branch.value.isNil {
                alternatives.append(Self.and([branch.condition, try predicate(branch.value, origin)]))
            }
            return Self.or(alternatives)
        case .stringOrder:
            throw error(origin, "a ComparisonResult is used as a condition; compare it with .orderedSame, .orderedAscending or .orderedDescending")
        }
    }

    /// An operand from a translation.
    mutating func expression(_ translated: FLTranslated, _ origin: any PredicateExpression) throws -> FLExpression {
        switch translated {
        case .expression(let e): return e
        case .constant(let value): return .constant(try constantValue(value, origin))
        case .predicate:
            throw error(origin, "a condition is used as a value; use it as a condition (with &&, ||, !) or compare it with == true / == false")
        case .choice:
            throw error(
                origin,
                "a value chosen by ?:, ?? or optional chaining is used where it cannot be split into conditions (a function argument, a collection); compare it directly instead")
        case .stringOrder:
            throw error(origin, "a ComparisonResult can only be compared with == or != against .orderedSame, .orderedAscending or .orderedDescending")
        }
    }

    /// A captured Swift value as a predicate constant: numbers, strings, dates, data, UUIDs,
    /// URLs, managed objects and object IDs (by ID), collections of these, enums by their raw
    /// value, `ComparisonResult` by its raw value.
    func constantValue(_ value: Any?, _ origin: any PredicateExpression) throws -> FLValue {
        guard let value = flUnwrapOptional(value) else { return .null }
        if let id = value as? ManagedObjectID { return .object(FLObjectReference(id)) }
        if let order = value as? ComparisonResult { return .int(order.rawValue) }
        if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, *), let regex = value as? PredicateExpressions.PredicateRegex {
            return .string(regex.stringRepresentation)
        }
        if let converted = FLValue(converting: value) { return converted }
        if let raw = value as? any RawRepresentable, let converted = FLValue(converting: raw.rawValue) { return converted }
        if let items = value as? any Sequence {
            var out: [FLValue] = []
            for item in Self.elements(items) { out.append(try constantValue(item, origin)) }
            return .array(out)
        }
        throw error(
            origin,
            "a captured value of type \(type(of: value)) has no predicate form (numbers, strings, dates, data, UUIDs, URLs, managed objects, object IDs, enums with raw values and collections of these do)"
        )
    }

    static func elements<S: Sequence>(_ sequence: S) -> [Any?] { sequence.map { $0 as Any? } }

    // MARK: Building predicates

    /// `AND` of conditions, flattened, with `TRUEPREDICATE` left out and `FALSEPREDICATE`
    /// deciding.
    static func and(_ items: [FLPredicate]) -> FLPredicate {
        var kept: [FLPredicate] = []
        for item in items {
            switch item.node {
            case .constant(true): continue
            case .constant(false): return .falsePredicate
            case .and(let inner): kept += inner
            default: kept.append(item)
            }
        }
        return FLPredicate.and(kept)
    }

    /// `OR` of conditions, flattened, with `FALSEPREDICATE` left out and `TRUEPREDICATE` deciding.
    static func or(_ items: [FLPredicate]) -> FLPredicate {
        var kept: [FLPredicate] = []
        for item in items {
            switch item.node {
            case .constant(false): continue
            case .constant(true): return .truePredicate
            case .or(let inner): kept += inner
            default: kept.append(item)
            }
        }
        return FLPredicate.or(kept)
    }

    /// `NOT p` (a constant is negated in place).
    static func not(_ p: FLPredicate) -> FLPredicate {
        if case .constant(let b) = p.node { return FLPredicate(.constant(!b)) }
        return .not(p)
    }

    /// Applies `build` to the operands, once per combination of the branches of the operands
    /// that are choices: the result is a choice again (or the plain result when no operand is one).
    mutating func distribute(
        _ operands: [FLTranslated], _ origin: any PredicateExpression,
        _ build: (inout Self, [FLTranslated]) throws -> FLTranslated
    ) throws -> FLTranslated {
        guard let index = operands.firstIndex(where: \.isChoice), case .choice(let branches) = operands[index] else {
            return try build(&self, operands)
        }
        var out: [FLBranch] = []
        for branch in branches {
            var replaced = operands
            replaced[index] = branch.value
            let result = try distribute(replaced, origin, build)
            if case .choice(let inner) = result {
                for b in inner { out.append(FLBranch(Self.and([branch.condition, b.condition]), b.value)) }
            } else {
                out.append(FLBranch(branch.condition, result))
            }
            guard out.count <= Self.maximumBranches else {
                throw error(origin, "the ?:, ?? and optional chaining in it make more than \(Self.maximumBranches) cases; split the predicate")
            }
        }
        return .choice(out.filter { $0.condition != .falsePredicate })
    }

    /// `left op right` as a condition, split over choices, folded when both sides are constants.
    mutating func comparison(
        _ left: FLTranslated, _ op: FLComparison.Operator, _ right: FLTranslated, options: FLComparison.Options = [],
        _ origin: any PredicateExpression
    ) throws -> FLPredicate {
        let result = try distribute([left, right], origin) { translator, sides in
            .predicate(try translator.simpleComparison(sides[0], op, sides[1], options, origin))
        }
        return try predicate(result, origin)
    }

    private mutating func simpleComparison(
        _ left: FLTranslated, _ op: FLComparison.Operator, _ right: FLTranslated, _ options: FLComparison.Options,
        _ origin: any PredicateExpression
    ) throws -> FLPredicate {
        if case .constant(let l) = left, case .constant(let r) = right {
            let a = try constantValue(l, origin).anyValue, b = try constantValue(r, origin).anyValue
            do {
                return try FLComparison.compare(a, op, b, options: options) ? .truePredicate : .falsePredicate
            } catch {
                throw self.error(origin, "comparing the constants failed: \(error)")
            }
        }
        if let p = try booleanEquality(left, op, right, origin) { return p }
        if let p = try stringOrderComparison(left, op, right, origin) { return p }
        return .comparison(try expression(left, origin), op, try expression(right, origin), options: options)
    }

    /// `condition == true`, `condition != nil`, `a == b` between conditions.
    private mutating func booleanEquality(
        _ left: FLTranslated, _ op: FLComparison.Operator, _ right: FLTranslated, _ origin: any PredicateExpression
    ) throws -> FLPredicate? {
        guard op == .equalTo || op == .notEqualTo, left.isPredicate || right.isPredicate else { return nil }
        let equal = op == .equalTo
        let (condition, other) = left.isPredicate ? (left, right) : (right, left)
        let p = try predicate(condition, origin)
        if case .constant(let value) = other {
            switch try constantValue(value, origin) {
            case .null: return equal ? .falsePredicate : .truePredicate  // a condition is never nil
            case .bool(let b): return b == equal ? p : Self.not(p)
            default: throw error(origin, "a condition is compared with \(String(describing: value)), which is not a Boolean")
            }
        }
        let q = try predicate(other, origin)
        let same = Self.or([Self.and([p, q]), Self.and([Self.not(p), Self.not(q)])])
        let different = Self.or([Self.and([p, Self.not(q)]), Self.and([Self.not(p), q])])
        return equal ? same : different
    }

    /// `a.caseInsensitiveCompare(b) == .orderedSame` → `a ==[c] b`, `… == .orderedAscending` →
    /// `a <[c] b`, `!= .orderedDescending` → `a <=[c] b`, ….
    private func stringOrderComparison(
        _ left: FLTranslated, _ op: FLComparison.Operator, _ right: FLTranslated, _ origin: any PredicateExpression
    ) throws -> FLPredicate? {
        let (order, other): (FLTranslated, FLTranslated)
        if case .stringOrder = left { (order, other) = (left, right) } else if case .stringOrder = right { (order, other) = (right, left) } else { return nil }
        guard case .stringOrder(let a, let b, let options) = order, op == .equalTo || op == .notEqualTo,
            case .constant(let value) = other, let result = flUnwrapOptional(value) as? ComparisonResult
        else {
            throw error(origin, "a ComparisonResult can only be compared with == or != against .orderedSame, .orderedAscending or .orderedDescending")
        }
        let equal = op == .equalTo
        let mapped: FLComparison.Operator
        switch result {
        case .orderedSame: mapped = equal ? .equalTo : .notEqualTo
        case .orderedAscending: mapped = equal ? .lessThan : .greaterThanOrEqualTo
        case .orderedDescending: mapped = equal ? .greaterThan : .lessThanOrEqualTo
        }
        if options.contains(.localeSensitive), mapped != .equalTo, mapped != .notEqualTo {
            throw error(
                origin,
                "localizedCompare can only be compared with .orderedSame here: the store's string functions do not order strings by locale (`<[l]` would order them as compare: does, not as localizedCompare does); use caseInsensitiveCompare, or sort with a SortDescriptor"
            )
        }
        return .comparison(a, mapped, b, options: options)
    }

    /// A predefined function (`add:to:`, …) of the operands, split over choices; constant
    /// operands are computed.
    mutating func function(_ name: String, _ operands: [FLTranslated], _ origin: any PredicateExpression) throws -> FLTranslated {
        try distribute(operands, origin) { translator, values in
            var arguments: [FLExpression] = []
            for value in values { arguments.append(try translator.expression(value, origin)) }
            let call = FLExpression.function(name, arguments)
            if arguments.allSatisfy({ $0.constantValue != nil }), let value = try? call.value(with: nil) { return .constant(value) }
            return .expression(call)
        }
    }

    // MARK: Key paths

    /// `base.name`: a key path from the object (`asset.label`), or from a subquery variable
    /// (`$_local_1.label`).
    static func member(_ base: FLExpression, _ name: String) -> FLExpression {
        switch base.node {
        case .evaluatedObject: return .keyPath(name)
        case .keyPath(let path): return .keyPath(path + "." + name)
        case .member(let root, let path): return FLExpression(.member(root, keyPath: path + "." + name))
        default: return FLExpression(.member(base, keyPath: name))
        }
    }

    /// Whether `value` is a key path that continues `base` without collection operators
    /// (`asset.label` after `asset`): such a value is nil when `base` is, in SQL (the join
    /// finds no row) and in memory (key-value coding through nil gives nil), so optional
    /// chaining needs no test of its own. `base` itself (`asset?.objectID`) does not continue
    /// it: that keeps SwiftData's `( t0.ZASSET IS NOT NULL AND  t0.ZASSET = ?)`.
    static func continues(_ value: FLExpression, _ base: FLExpression) -> Bool {
        func plain(_ rest: Substring) -> Bool { !rest.isEmpty && !rest.split(separator: ".").contains { $0.hasPrefix("@") } }
        switch (value.node, base.node) {
        case (.keyPath(let path), .keyPath(let prefix)):
            return path.hasPrefix(prefix + ".") && plain(path.dropFirst(prefix.count + 1))
        case (.member(let root, let path), .member(let baseRoot, let prefix)) where root == baseRoot:
            return path.hasPrefix(prefix + ".") && plain(path.dropFirst(prefix.count + 1))
        case (.member(let root, let path), .variable) where root == base:
            return plain(path[...])
        default:
            return false
        }
    }

    // MARK: Optionals

    /// `wrapped.flatMap(transform)` and optional chaining: the transform with its argument
    /// bound to the unwrapped value; a result that is not nil with `wrapped` by itself becomes
    /// a choice (`wrapped != nil` → the result, `wrapped == nil` → nil).
    mutating func flatMap<Wrapped>(
        _ wrapped: FLTranslated, variable: PredicateExpressions.Variable<Wrapped>, transform: any PredicateExpression,
        _ origin: any PredicateExpression
    ) throws -> FLTranslated {
        switch wrapped {
        case .choice(let branches):
            var out: [FLBranch] = []
            for branch in branches {
                if branch.value.isNil {
                    out.append(branch)
                    continue
                }
                let result = try flatMap(branch.value, variable: variable, transform: transform, origin)
                if case .choice(let inner) = result {
                    for b in inner { out.append(FLBranch(Self.and([branch.condition, b.condition]), b.value)) }
                } else {
                    out.append(FLBranch(branch.condition, result))
                }
            }
            return .choice(out.filter { $0.condition != .falsePredicate })
        case .constant(let value):
            guard let unwrapped = flUnwrapOptional(value) else { return .constant(nil) }
            guard let typed = unwrapped as? Wrapped else {
                throw error(origin, "the unwrapped value is a \(type(of: unwrapped)), not a \(Wrapped.self)")
            }
            let previous = constantBindings[variable]
            constantBindings[variable] = typed
            defer { constantBindings[variable] = previous }
            return try with(variable.key, boundTo: .constant(typed)) { try $0.translate(transform) }
        case .expression(let base):
            let result = try with(variable.key, boundTo: wrapped) { try $0.translate(transform) }
            if case .expression(let value) = result, Self.continues(value, base) { return result }
            let present = FLPredicate.comparison(base, .notEqualTo, .constant(.null))
            let absent = FLPredicate.comparison(base, .equalTo, .constant(.null))
            if case .choice(let inner) = result {
                return .choice(inner.map { FLBranch(Self.and([present, $0.condition]), $0.value) } + [FLBranch(absent, .constant(nil))])
            }
            return .choice([FLBranch(present, result), FLBranch(absent, .constant(nil))])
        case .predicate, .stringOrder:
            throw error(origin, "flatMap over a value that is not optional")
        }
    }

    /// `value ?? fallback`.
    func coalesce(_ value: FLTranslated, _ fallback: FLTranslated) -> FLTranslated {
        switch value {
        case .constant(let v):
            return flUnwrapOptional(v) == nil ? fallback : value
        case .expression(let e):
            return .choice([
                FLBranch(.comparison(e, .notEqualTo, .constant(.null)), value),
                FLBranch(.comparison(e, .equalTo, .constant(.null)), fallback),
            ])
        case .choice(let branches):
            return .choice(branches.map { $0.value.isNil ? FLBranch($0.condition, fallback) : $0 })
        case .predicate, .stringOrder:
            return value
        }
    }
}

/// The value inside any number of optionals, or nil.
func flUnwrapOptional(_ value: Any?) -> Any? {
    guard let value else { return nil }
    let mirror = Mirror(reflecting: value)
    guard mirror.displayStyle == .optional else { return value }
    guard let child = mirror.children.first else { return nil }
    return flUnwrapOptional(child.value)
}
