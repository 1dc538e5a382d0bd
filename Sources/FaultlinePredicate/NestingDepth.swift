/// How deep predicate and expression trees may nest.
///
/// Every walk over a tree (SQL generation, in-memory evaluation, substitution, printing,
/// equality) is recursive, and a tree parsed from user input can be as deep as the input is
/// long: `1+1+1+…` with 1,450 operands, or 2,500 `[0]` subscripts, overflowed the stack. So the
/// parser refuses a format string whose tree is deeper than ``maximum``, and every entry point
/// that walks a tree built in code checks it first (iteratively) and throws instead of crashing.
/// The limit leaves each walk inside a secondary thread's 512 KiB stack even in a debug
/// build (a `perform` block of a private-queue context runs on one).
public enum FLNestingDepth {
    /// The deepest nesting accepted: predicates and expressions each count one level
    /// (`a + b + c` is three levels below its comparison; `NOT (x == 1)` is three in all).
    public static let maximum = 100

    /// The depth of a predicate tree, counting only up to `limit + 1` (so a huge tree costs
    /// no more than its first levels).
    public static func depth(of predicate: FLPredicate, limit: Int = maximum) -> Int {
        measure(.predicate(predicate), limit: limit)
    }

    /// The depth of an expression tree, counting only up to `limit + 1`.
    public static func depth(of expression: FLExpression, limit: Int = maximum) -> Int {
        measure(.expression(expression), limit: limit)
    }

    /// Throws ``PredicateEvaluationError`` when `predicate` nests deeper than ``maximum``.
    public static func check(_ predicate: FLPredicate) throws {
        let depth = depth(of: predicate)
        if depth > maximum { throw tooDeep() }
    }

    /// Throws ``PredicateEvaluationError`` when `expression` nests deeper than ``maximum``.
    public static func check(_ expression: FLExpression) throws {
        let depth = depth(of: expression)
        if depth > maximum { throw tooDeep() }
    }

    /// What a tree deeper than ``maximum`` prints as (printing it would overflow the stack).
    static let unprintable = "<a predicate nested more than \(maximum) levels deep>"

    static func tooDeep() -> PredicateEvaluationError {
        PredicateEvaluationError("the predicate is nested too deeply (more than \(maximum) levels of predicates and expressions)")
    }

    enum Item {
        case predicate(FLPredicate)
        case expression(FLExpression)
    }

    /// An explicit-stack walk: no recursion, whatever the depth.
    static func measure(_ root: Item, limit: Int) -> Int {
        var stack: [(Item, Int)] = [(root, 1)]
        var deepest = 0
        while let (item, depth) = stack.popLast() {
            deepest = max(deepest, depth)
            if deepest > limit { return deepest }
            let next = depth + 1
            switch item {
            case .predicate(let p):
                switch p.node {
                case .constant: break
                case .comparison(let c):
                    stack.append((.expression(c.left), next))
                    stack.append((.expression(c.right), next))
                case .and(let items), .or(let items):
                    for item in items { stack.append((.predicate(item), next)) }
                case .not(let inner):
                    stack.append((.predicate(inner), next))
                }
            case .expression(let e):
                switch e.node {
                case .constant, .evaluatedObject, .variable, .keyPath, .anyKey: break
                case .member(let base, _), .cast(let base, _), .assignment(_, let base):
                    stack.append((.expression(base), next))
                case .function(_, let arguments), .aggregate(let arguments):
                    for argument in arguments { stack.append((.expression(argument), next)) }
                case .customFunction(let receiver, _, let arguments):
                    stack.append((.expression(receiver), next))
                    for argument in arguments { stack.append((.expression(argument), next)) }
                case .subquery(let collection, _, let predicate):
                    stack.append((.expression(collection), next))
                    stack.append((.predicate(predicate), next))
                case .conditional(let predicate, let then, let otherwise):
                    stack.append((.predicate(predicate), next))
                    stack.append((.expression(then), next))
                    stack.append((.expression(otherwise), next))
                case .index(let base, let index):
                    stack.append((.expression(base), next))
                    if case .expression(let i) = index { stack.append((.expression(i), next)) }
                case .fetch(let a, let b, let c):
                    stack.append((.expression(a), next))
                    stack.append((.expression(b), next))
                    stack.append((.expression(c), next))
                }
            }
        }
        return deepest
    }
}
