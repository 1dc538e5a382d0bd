import FaultlinePredicate
import Foundation

// How each of Foundation's `PredicateExpressions` types translates (see PredicateTranslation.swift
// for the walk and Documentation/TypedPredicates.md for the table). A node reaches these methods
// only when it needs the predicate's input: nodes that do not were folded to constants first.

// MARK: Variables and key paths

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.Variable: FLTranslatablePredicateExpression {
    /// `SELF` for the input, `$_local_N` in a subquery, the unwrapped value in a `flatMap`.
    func flTranslate(_ translator: inout FLPredicateTranslator) throws -> FLTranslated {
        try translator.lookUp(key, self)
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.KeyPath: FLTranslatablePredicateExpression {
    /// A model property (`name`, `asset.label`, `$_local_1.count`) through the class's
    /// ``ManagedObjectSubclass/propertyName(for:)``; `count` and `isEmpty` of a relationship or
    /// a filter (`@count`), of a string (`length`); `objectID` is the object itself.
    func flTranslate(_ translator: inout FLPredicateTranslator) throws -> FLTranslated {
        let base = try translator.translate(root)
        return try translator.distribute([base], self) { translator, values in
            switch values[0] {
            case .constant(let value):
                // A captured object reached through a variable bound to a constant.
                guard let object = flUnwrapOptional(value) as? Root.Output else { return .constant(nil) }
                return .constant(object[keyPath: keyPath])
            case .expression(let e):
                return try translatedKeyPath(from: e, &translator)
            default:
                throw translator.error(self, "the key path \(FLPredicateTranslator.describe(keyPath)) is applied to a value that is not an object")
            }
        }
    }

    private func translatedKeyPath(from base: FLExpression, _ translator: inout FLPredicateTranslator) throws -> FLTranslated {
        if let kind {
            let isString = Root.Output.self is any StringProtocol.Type
            let counted = FLPredicateTranslator.member(base, isString ? "length" : "@count")
            switch kind {
            case .collectionCount:
                return .expression(counted)
            case .collectionIsEmpty:
                return .predicate(.comparison(counted, .equalTo, .constant(.int(0))))
            case .collectionFirst, .bidirectionalCollectionLast:
                throw translator.error(
                    keyPath: keyPath,
                    "first and last have no Core Data form (relationships are sets); use contains(where:) or a fetch sorted with fetchLimit 1")
            }
        }
        guard let type = Root.Output.self as? any ManagedObjectSubclass.Type else {
            throw translator.error(
                keyPath: keyPath,
                "\(Root.Output.self) is not a ManagedObjectSubclass, so its key paths name no model property; only properties of registered classes, and count/isEmpty of strings and relationships, translate"
            )
        }
        if let name = type.propertyName(for: keyPath) {
            return .expression(FLPredicateTranslator.member(base, name))
        }
        if Output.self == ManagedObjectID.self {
            return .expression(base)  // `objectID`: the object itself (`SELF`, `asset`) compares by ID
        }
        throw translator.error(
            keyPath: keyPath,
            "it is not a model property: \(type).propertyName(for:) does not know it (only the entity's attributes and relationships can be fetched on, not computed or transient Swift properties)"
        )
    }
}

// MARK: Logic

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.Conjunction: FLTranslatablePredicateExpression {
    /// `a AND b` (chains flattened).
    func flTranslate(_ translator: inout FLPredicateTranslator) throws -> FLTranslated {
        let l = try translator.predicate(translator.translate(lhs), lhs)
        let r = try translator.predicate(translator.translate(rhs), rhs)
        return .predicate(FLPredicateTranslator.and([l, r]))
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.Disjunction: FLTranslatablePredicateExpression {
    /// `a OR b` (chains flattened).
    func flTranslate(_ translator: inout FLPredicateTranslator) throws -> FLTranslated {
        let l = try translator.predicate(translator.translate(lhs), lhs)
        let r = try translator.predicate(translator.translate(rhs), rhs)
        return .predicate(FLPredicateTranslator.or([l, r]))
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.Negation: FLTranslatablePredicateExpression {
    /// `NOT p`.
    func flTranslate(_ translator: inout FLPredicateTranslator) throws -> FLTranslated {
        .predicate(FLPredicateTranslator.not(try translator.predicate(translator.translate(wrapped), wrapped)))
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.Conditional: FLTranslatablePredicateExpression {
    /// `test ? a : b`: a choice, split into `(test AND …) OR (NOT test AND …)` where it is
    /// compared or used as a condition.
    func flTranslate(_ translator: inout FLPredicateTranslator) throws -> FLTranslated {
        let condition = try translator.predicate(translator.translate(test), test)
        switch condition.node {
        case .constant(true): return try translator.translate(trueBranch)
        case .constant(false): return try translator.translate(falseBranch)
        default:
            return .choice([
                FLBranch(condition, try translator.translate(trueBranch)),
                FLBranch(FLPredicateTranslator.not(condition), try translator.translate(falseBranch)),
            ])
        }
    }
}

// MARK: Comparisons

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.Equal: FLTranslatablePredicateExpression {
    /// `a == b` (`a == nil` for nil; between conditions, both true or both false).
    func flTranslate(_ translator: inout FLPredicateTranslator) throws -> FLTranslated {
        .predicate(try translator.comparison(translator.translate(lhs), .equalTo, translator.translate(rhs), self))
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.NotEqual: FLTranslatablePredicateExpression {
    /// `a != b`.
    func flTranslate(_ translator: inout FLPredicateTranslator) throws -> FLTranslated {
        .predicate(try translator.comparison(translator.translate(lhs), .notEqualTo, translator.translate(rhs), self))
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.Comparison: FLTranslatablePredicateExpression {
    /// `<`, `<=`, `>`, `>=`.
    func flTranslate(_ translator: inout FLPredicateTranslator) throws -> FLTranslated {
        let mapped: FLComparison.Operator
        switch op {
        case .lessThan: mapped = .lessThan
        case .lessThanOrEqual: mapped = .lessThanOrEqualTo
        case .greaterThan: mapped = .greaterThan
        case .greaterThanOrEqual: mapped = .greaterThanOrEqualTo
        }
        return .predicate(try translator.comparison(translator.translate(lhs), mapped, translator.translate(rhs), self))
    }
}

// MARK: Arithmetic

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.Arithmetic: FLTranslatablePredicateExpression {
    /// `a + b` (`add:to:`), `a - b` (`from:subtract:`), `a * b` (`multiply:by:`).
    func flTranslate(_ translator: inout FLPredicateTranslator) throws -> FLTranslated {
        let name: String
        switch op {
        case .add: name = "add:to:"
        case .subtract: name = "from:subtract:"
        case .multiply: name = "multiply:by:"
        }
        return try translator.function(name, [translator.translate(lhs), translator.translate(rhs)], self)
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.FloatDivision: FLTranslatablePredicateExpression {
    /// `a / b` (`divide:by:`).
    func flTranslate(_ translator: inout FLPredicateTranslator) throws -> FLTranslated {
        try translator.function("divide:by:", [translator.translate(lhs), translator.translate(rhs)], self)
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.IntDivision: FLTranslatablePredicateExpression {
    /// Integer `a / b` as `(a - modulus:by:(a, b)) / b`: exact in SQL and in memory, where
    /// `divide:by:` alone would divide as a floating-point number.
    func flTranslate(_ translator: inout FLPredicateTranslator) throws -> FLTranslated {
        let a = try translator.translate(lhs), b = try translator.translate(rhs)
        let remainder = try translator.function("modulus:by:", [a, b], self)
        let whole = try translator.function("from:subtract:", [a, remainder], self)
        return try translator.function("divide:by:", [whole, b], self)
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.IntRemainder: FLTranslatablePredicateExpression {
    /// `a % b` (`modulus:by:`).
    func flTranslate(_ translator: inout FLPredicateTranslator) throws -> FLTranslated {
        try translator.function("modulus:by:", [translator.translate(lhs), translator.translate(rhs)], self)
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.UnaryMinus: FLTranslatablePredicateExpression {
    /// `-a` as `a * -1`, as the format parser reads `-a`.
    func flTranslate(_ translator: inout FLPredicateTranslator) throws -> FLTranslated {
        try translator.function("multiply:by:", [translator.translate(wrapped), .constant(-1)], self)
    }
}

// MARK: Optionals

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.OptionalFlatMap: FLTranslatablePredicateExpression {
    /// `a?.b` and `a.flatMap { … }`: a key path through a to-one is just longer (`asset.label`:
    /// nil when `asset` is); anything else tests the wrapped value (`asset != nil AND …`).
    func flTranslate(_ translator: inout FLPredicateTranslator) throws -> FLTranslated {
        try translator.flatMap(translator.translate(wrapped), variable: variable, transform: transform, self)
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.NilCoalesce: FLTranslatablePredicateExpression {
    /// `a ?? b`: a choice between `a` (when `a != nil`) and `b` (when `a == nil`).
    func flTranslate(_ translator: inout FLPredicateTranslator) throws -> FLTranslated {
        translator.coalesce(try translator.translate(lhs), try translator.translate(rhs))
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.ForcedUnwrap: FLTranslatablePredicateExpression {
    /// `a!`: `a` (a nil in the store does not trap: it compares as nil does in SQL).
    func flTranslate(_ translator: inout FLPredicateTranslator) throws -> FLTranslated {
        let value = try translator.translate(inner)
        guard case .choice(let branches) = value else { return value }
        let present = branches.filter { !$0.value.isNil }
        guard !present.isEmpty else { throw translator.error(self, "the unwrapped value is always nil") }
        return .choice(present)
    }
}

// MARK: Strings

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.CollectionContainsCollection: FLTranslatablePredicateExpression {
    /// `a.contains(b)` on strings: `a CONTAINS b`.
    func flTranslate(_ translator: inout FLPredicateTranslator) throws -> FLTranslated {
        guard Base.Output.self is any StringProtocol.Type else {
            throw translator.error(self, "contains(_:) of one collection in another translates only for strings; test each element with contains(where:)")
        }
        return .predicate(try translator.comparison(translator.translate(base), .contains, translator.translate(other), self))
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.SequenceStartsWith: FLTranslatablePredicateExpression {
    /// `a.starts(with: b)` on strings: `a BEGINSWITH b`.
    func flTranslate(_ translator: inout FLPredicateTranslator) throws -> FLTranslated {
        guard Base.Output.self is any StringProtocol.Type else {
            throw translator.error(self, "starts(with:) translates only for strings")
        }
        return .predicate(try translator.comparison(translator.translate(base), .beginsWith, translator.translate(prefix), self))
    }
}

@available(macOS 15, iOS 18, tvOS 18, watchOS 11, *)
extension PredicateExpressions.StringContainsRegex: FLTranslatablePredicateExpression {
    /// `a.contains(/re/)`: `a MATCHES ".*(?:re).*"` (Apple's conversion writes `.*re.*`; the
    /// group keeps an alternation whole). The pattern must be a captured value.
    func flTranslate(_ translator: inout FLPredicateTranslator) throws -> FLTranslated {
        guard case .constant(let value) = try translator.translate(regex),
            case .string(let pattern) = try translator.constantValue(value, self)
        else {
            throw translator.error(self, "the regular expression must be a captured value or a literal")
        }
        let subject = try translator.translate(subject)
        return .predicate(try translator.comparison(subject, .matches, .constant(".*(?:" + pattern + ").*"), self))
    }
}

// MARK: Collections

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.SequenceContains: FLTranslatablePredicateExpression {
    /// `captured.contains(a)`: `a IN {…}`; `relationship.contains(object)`: `object IN
    /// relationship` (Apple's conversion writes `IN` for both); on a string, `CONTAINS`.
    func flTranslate(_ translator: inout FLPredicateTranslator) throws -> FLTranslated {
        let collection = try translator.translate(sequence), item = try translator.translate(element)
        if LHS.Output.self is any StringProtocol.Type {
            return .predicate(try translator.comparison(collection, .contains, item, self))
        }
        return .predicate(try translator.comparison(item, .in, collection, self))
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.SequenceContainsWhere: FLTranslatablePredicateExpression {
    /// `relationship.contains { test }`: `SUBQUERY(relationship, $_local_N, test).@count != 0`.
    func flTranslate(_ translator: inout FLPredicateTranslator) throws -> FLTranslated {
        let subquery = try translator.subquery(sequence, elementType: Element.self, variable: variable.key, test: test, negated: false, self)
        return .predicate(.comparison(FLExpression(.member(subquery, keyPath: "@count")), .notEqualTo, .constant(.int(0))))
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.SequenceAllSatisfy: FLTranslatablePredicateExpression {
    /// `relationship.allSatisfy { test }`: `SUBQUERY(relationship, $_local_N, NOT test).@count == 0`.
    func flTranslate(_ translator: inout FLPredicateTranslator) throws -> FLTranslated {
        let subquery = try translator.subquery(sequence, elementType: Element.self, variable: variable.key, test: test, negated: true, self)
        return .predicate(.comparison(FLExpression(.member(subquery, keyPath: "@count")), .equalTo, .constant(.int(0))))
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.Filter: FLTranslatablePredicateExpression {
    /// `relationship.filter { test }`: `SUBQUERY(relationship, $_local_N, test)`, for its
    /// `count` (`.@count`) and `isEmpty` (`.@count == 0`).
    func flTranslate(_ translator: inout FLPredicateTranslator) throws -> FLTranslated {
        .expression(try translator.subquery(sequence, elementType: Element.self, variable: variable.key, test: filter, negated: false, self))
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension FLPredicateTranslator {
    /// `SUBQUERY(collection, $_local_N, test)` over a to-many relationship.
    mutating func subquery(
        _ sequence: any PredicateExpression, elementType: Any.Type, variable: PredicateExpressions.VariableID,
        test: any PredicateExpression, negated: Bool, _ origin: any PredicateExpression
    ) throws -> FLExpression {
        guard elementType is any ManagedObjectSubclass.Type else {
            throw error(
                origin,
                "a closure over elements of type \(elementType) cannot be fetched on; closures translate over relationships (the elements are managed objects). For a captured collection, test membership with captured.contains($0.property)"
            )
        }
        guard case .expression(let collection) = try translate(sequence) else {
            throw error(origin, "the collection is not a relationship of the fetched object")
        }
        let name = "_local_\(nextLocal)"
        nextLocal += 1
        level += 1
        defer { level -= 1 }
        var condition = try with(variable, boundTo: .expression(.variable(name))) { translator in
            try translator.predicate(translator.translate(test), test)
        }
        if negated { condition = Self.not(condition) }
        return FLExpression(.subquery(collection: collection, variable: name, predicate: condition))
    }
}

// MARK: Ranges

/// A range made in the predicate (`a...b`, `a..<b`) whose bounds use the input.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
protocol FLRangeNode {
    var flBounds: (lower: any PredicateExpression, upper: any PredicateExpression, closed: Bool) { get }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.ClosedRange: FLRangeNode {
    var flBounds: (lower: any PredicateExpression, upper: any PredicateExpression, closed: Bool) { (lower, upper, true) }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.Range: FLRangeNode {
    var flBounds: (lower: any PredicateExpression, upper: any PredicateExpression, closed: Bool) { (lower, upper, false) }
}

/// A captured range's bounds (nil for an open end).
protocol FLRangeValue {
    var flBounds: (lower: Any?, upper: Any?, closed: Bool) { get }
}

extension ClosedRange: FLRangeValue {
    var flBounds: (lower: Any?, upper: Any?, closed: Bool) { (lowerBound, upperBound, true) }
}

extension Range: FLRangeValue {
    var flBounds: (lower: Any?, upper: Any?, closed: Bool) { (lowerBound, upperBound, false) }
}

extension PartialRangeFrom: FLRangeValue {
    var flBounds: (lower: Any?, upper: Any?, closed: Bool) { (lowerBound, nil, false) }
}

extension PartialRangeThrough: FLRangeValue {
    var flBounds: (lower: Any?, upper: Any?, closed: Bool) { (nil, upperBound, true) }
}

extension PartialRangeUpTo: FLRangeValue {
    var flBounds: (lower: Any?, upper: Any?, closed: Bool) { (nil, upperBound, false) }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PredicateExpressions.RangeExpressionContains: FLTranslatablePredicateExpression {
    /// `(a...b).contains(x)`: `x BETWEEN {a, b}`; `(a..<b).contains(x)`: `x >= a AND x < b`;
    /// partial ranges one comparison (Apple's conversion does the same).
    func flTranslate(_ translator: inout FLPredicateTranslator) throws -> FLTranslated {
        let item = try translator.translate(element)
        let bounds: (lower: FLTranslated?, upper: FLTranslated?, closed: Bool)
        if let folded = try translator.fold(range) {
            guard let captured = flUnwrapOptional(folded.value) as? any FLRangeValue else {
                throw translator.error(self, "the range is a \(type(of: folded.value as Any)), which has no bounds to compare with")
            }
            let b = captured.flBounds
            bounds = (b.lower.map { .constant($0) }, b.upper.map { .constant($0) }, b.closed)
        } else if let node = range as? any FLRangeNode {
            let b = node.flBounds
            bounds = (try translator.translate(b.lower), try translator.translate(b.upper), b.closed)
        } else {
            throw translator.error(self, "the range is neither a captured range nor made with ... or ..<")
        }
        if let lower = bounds.lower, let upper = bounds.upper, bounds.closed, case .expression(let x) = item {
            let low = try translator.expression(lower, self), high = try translator.expression(upper, self)
            if let l = low.constantValue, let h = high.constantValue {
                return .predicate(.comparison(x, .between, .constant(.array([l, h]))))
            }
            return .predicate(.comparison(x, .between, FLExpression(.aggregate([low, high]))))
        }
        var parts: [FLPredicate] = []
        if let lower = bounds.lower { parts.append(try translator.comparison(item, .greaterThanOrEqualTo, lower, self)) }
        if let upper = bounds.upper {
            parts.append(try translator.comparison(item, bounds.closed ? .lessThanOrEqualTo : .lessThan, upper, self))
        }
        return .predicate(FLPredicateTranslator.and(parts))
    }
}

// MARK: Strings Foundation has on Apple platforms only (StringPredicateExpressions.swift)

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension FLStringPredicateExpressions.LocalizedStandardContains: FLTranslatablePredicateExpression {
    /// `a.localizedStandardContains(b)`: `a CONTAINS[cdl] b`, which Core Data runs as
    /// `NSCoreDataStringSearch(a, ?, 417, 1)` (as SwiftData's SQL logs show).
    func flTranslate(_ translator: inout FLPredicateTranslator) throws -> FLTranslated {
        .predicate(
            try translator.comparison(
                translator.translate(root), .contains, translator.translate(other),
                options: [.caseInsensitive, .diacriticInsensitive, .localeSensitive], self))
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension FLStringPredicateExpressions.CaseInsensitiveCompare: FLTranslatablePredicateExpression {
    /// `a.caseInsensitiveCompare(b) == .orderedSame` → `a ==[c] b` (see `stringOrder`).
    func flTranslate(_ translator: inout FLPredicateTranslator) throws -> FLTranslated {
        .stringOrder(try translator.expression(translator.translate(root), root), try translator.expression(translator.translate(other), other), .caseInsensitive)
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension FLStringPredicateExpressions.LocalizedCompare: FLTranslatablePredicateExpression {
    /// `a.localizedCompare(b) == .orderedAscending` → `a <[l] b`.
    func flTranslate(_ translator: inout FLPredicateTranslator) throws -> FLTranslated {
        .stringOrder(try translator.expression(translator.translate(root), root), try translator.expression(translator.translate(other), other), .localeSensitive)
    }
}

#if canImport(Darwin)
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    extension PredicateExpressions.StringLocalizedStandardContains: FLTranslatablePredicateExpression {
        /// `a CONTAINS[cdl] b`, as on Linux.
        func flTranslate(_ translator: inout FLPredicateTranslator) throws -> FLTranslated {
            .predicate(
                try translator.comparison(
                    translator.translate(root), .contains, translator.translate(other),
                    options: [.caseInsensitive, .diacriticInsensitive, .localeSensitive], self))
        }
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    extension PredicateExpressions.StringCaseInsensitiveCompare: FLTranslatablePredicateExpression {
        /// An order compared with `[c]`, as on Linux.
        func flTranslate(_ translator: inout FLPredicateTranslator) throws -> FLTranslated {
            .stringOrder(try translator.expression(translator.translate(root), root), try translator.expression(translator.translate(other), other), .caseInsensitive)
        }
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    extension PredicateExpressions.StringLocalizedCompare: FLTranslatablePredicateExpression {
        /// An order compared with `[l]`, as on Linux.
        func flTranslate(_ translator: inout FLPredicateTranslator) throws -> FLTranslated {
            .stringOrder(try translator.expression(translator.translate(root), root), try translator.expression(translator.translate(other), other), .localeSensitive)
        }
    }
#endif
