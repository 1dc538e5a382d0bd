import Foundation

/// A format string parsed once with its `%` arguments left as slots, so that making its
/// predicate again with other arguments converts them and fills the slots, without lexing or
/// parsing: most predicates are made again and again from a few format strings.
///
/// A format gets a template only when its tree cannot depend on its arguments: no `%K` (a key
/// path shapes the tree), no folding of an argument (`-%@`, `CAST(%@, "NSDate")`), and the
/// template filled with the first arguments must equal what parsing them gave. Arguments are
/// converted by the same code in the same order as for a parse, so errors are the same.
struct ParseTemplate: Sendable {
    /// Whether a format has a template.
    enum State: Sendable {
        /// Not worked out yet (no parse of the format has succeeded yet).
        case unknown
        /// The format is parsed every time.
        case unusable
        case ready(ParseTemplate)
    }

    /// The place of the `index`th `%` argument in the template's tree.
    struct Slot: Hashable, Sendable {
        let index: Int
    }

    /// The tree, each argument a `.constant(.object(Slot))`.
    let predicate: FLPredicate
    /// The format's `%` specifiers, in order.
    let specifiers: [FormatSpecifier]

    /// Whether an expression is an argument's slot.
    static func isSlot(_ e: FLExpression) -> Bool {
        if case .constant(.object(let reference)) = e.node { return slotIndex(reference.base) != nil }
        return false
    }

    /// The index of a slot, with the existential opened (`T` is the dynamic type): a type
    /// comparison instead of a dynamic cast, on every argument of every predicate made.
    private static func slotIndex<T>(_ value: T) -> Int? {
        T.self == Slot.self ? unsafeBitCast(value, to: Slot.self).index : nil
    }

    /// The template of a lexed format, checked against the predicate `arguments` gave
    /// (`parsed`); `.unusable` when there is none.
    static func state(for entry: LexedFormats.Entry, checkedAgainst parsed: FLPredicate, arguments: [Any?]) -> State {
        var tokens = entry.tokens
        var specifiers: [FormatSpecifier] = []
        for i in tokens.indices {
            switch tokens[i].kind {
            case .formatSpecifier(let specifier):
                guard specifier.conversion != "K" else { return .unusable }
                tokens[i].kind = .argument(.object(FLObjectReference(Slot(index: specifiers.count))))
                specifiers.append(specifier)
            case .lexError: return .unusable
            default: continue
            }
        }
        var parser = Parser(source: entry.source, tokens: tokens, matchingParen: entry.matchingParen)
        guard let tree = try? parser.parsePredicateToEnd(), !parser.inspectedArgumentSlot else { return .unusable }
        let template = ParseTemplate(predicate: tree, specifiers: specifiers)
        guard let filled = try? template.predicate(format: entry.source, arguments: arguments), filled == parsed else { return .unusable }
        return .ready(template)
    }

    /// The predicate of the format with these arguments, or nil if an argument converts to
    /// something other than a value (then the format is parsed).
    ///
    /// - Throws: ``PredicateSyntaxError`` for a missing or unconvertible argument, as a parse does.
    func predicate(format: String, arguments: [Any?]) throws -> FLPredicate? {
        var lexer = Lexer(format, arguments: arguments)
        var values: [FLValue] = []
        values.reserveCapacity(specifiers.count)
        for specifier in specifiers {
            // `%@` with the next argument, which converts: what `substitute` does, directly.
            if specifier.conversion == "@", specifier.explicitIndex == nil, lexer.nextArgument < arguments.count,
                let value = FLValue(converting: arguments[lexer.nextArgument])
            {
                lexer.nextArgument += 1
                values.append(value)
                continue
            }
            guard case .argument(let value) = try lexer.substitute(specifier).kind else { return nil }
            values.append(value)
        }
        return Self.fill(predicate, values)
    }

    // MARK: Filling the slots (the template's depth was checked when it was parsed)

    private static func fill(_ p: FLPredicate, _ values: [FLValue]) -> FLPredicate {
        switch p.node {
        case .constant: return p
        case .comparison(var c):
            c.left = fill(c.left, values)
            c.right = fill(c.right, values)
            return FLPredicate(.comparison(c))
        case .and(let items): return FLPredicate(.and(items.map { fill($0, values) }))
        case .or(let items): return FLPredicate(.or(items.map { fill($0, values) }))
        case .not(let inner): return FLPredicate(.not(fill(inner, values)))
        }
    }

    private static func fill(_ e: FLExpression, _ values: [FLValue]) -> FLExpression {
        switch e.node {
        case .constant(let value):
            guard let filled = fill(value, values) else { return e }
            return .constant(filled)
        case .evaluatedObject, .variable, .keyPath, .anyKey:
            return e
        case .member(let base, let keyPath):
            return FLExpression(.member(fill(base, values), keyPath: keyPath))
        case .function(let name, let arguments):
            return .function(name, arguments.map { fill($0, values) })
        case .customFunction(let receiver, let selector, let arguments):
            return FLExpression(.customFunction(receiver: fill(receiver, values), selector: selector, arguments: arguments.map { fill($0, values) }))
        case .aggregate(let items):
            return FLExpression(.aggregate(items.map { fill($0, values) }))
        case .subquery(let collection, let variable, let predicate):
            return FLExpression(.subquery(collection: fill(collection, values), variable: variable, predicate: fill(predicate, values)))
        case .conditional(let predicate, let then, let otherwise):
            return FLExpression(.conditional(fill(predicate, values), then: fill(then, values), else: fill(otherwise, values)))
        case .cast(let value, let type):
            return FLExpression(.cast(fill(value, values), type: type))
        case .index(let base, let kind):
            if case .expression(let index) = kind { return FLExpression(.index(fill(base, values), .expression(fill(index, values)))) }
            return FLExpression(.index(fill(base, values), kind))
        case .assignment(let variable, let value):
            return FLExpression(.assignment(variable: variable, value: fill(value, values)))
        case .fetch(let a, let b, let c):
            return FLExpression(.fetch(fill(a, values), fill(b, values), fill(c, values)))
        }
    }

    /// The value of a slot, or a `{…}` of constants with slots filled; nil when `value` holds no slot.
    private static func fill(_ value: FLValue, _ values: [FLValue]) -> FLValue? {
        switch value {
        case .object(let reference):
            guard let index = slotIndex(reference.base), index < values.count else { return nil }
            return values[index]
        case .array(let items):
            var changed = false
            let filled = items.map { item -> FLValue in
                guard let new = fill(item, values) else { return item }
                changed = true
                return new
            }
            return changed ? .array(filled) : nil
        default:
            return nil
        }
    }
}
