import Foundation

/// An expression of the NSPredicate format language: the operands of a comparison.
///
/// `FLExpression` mirrors `NSExpression`: a thin `Sendable`, `Hashable` struct over the
/// public ``Node`` enum. Other modules (the SQL store) switch over ``node`` to generate SQL
/// and to check key paths against a model.
///
/// ```swift
/// let e = try FLExpression(format: "employees.@count * 2")
/// if case .function(let name, let args) = e.node { print(name, args) } // multiply:by: [...]
/// print(e) // employees.@count * 2
/// ```
public struct FLExpression: Sendable, Hashable, CustomStringConvertible {
    /// The expression tree.
    public var node: Node

    /// Wraps a node.
    public init(_ node: Node) { self.node = node }

    /// The kinds of expressions (the `NSExpression.ExpressionType` list, plus index,
    /// cast and assignment forms that Apple models as functions).
    public indirect enum Node: Sendable, Hashable {
        /// A constant: literal, `%@`/`%d` argument or substituted variable.
        /// `YES` is `.constant(.bool(true))`, `nil` is `.constant(.null)`.
        case constant(FLValue)
        /// `SELF`: the object being evaluated.
        case evaluatedObject
        /// `$name`: a variable, bound by `substituting(variables:)`, by the `variables:`
        /// argument of evaluation, or by an enclosing `SUBQUERY`.
        case variable(String)
        /// A key path from the evaluated object, components joined by `.`:
        /// `"name"`, `"department.name"`, `"employees.@count"`, `"@sum.items.price"`.
        /// `SELF.name` parses to `.keyPath("name")`.
        case keyPath(String)
        /// A key path applied to the value of another expression: `$t.done` (inside a
        /// subquery), `SUBQUERY(…).@count`, `(a + b).stringValue`.
        case member(FLExpression, keyPath: String)
        /// A predefined function by selector name (`"sum:"`, `"add:to:"`, `"lowercase:"`,
        /// `"now"`) with its arguments.
        ///
        /// Arithmetic is stored the way `NSExpression` stores it: `a + b` is
        /// `add:to:`, `a - b` `from:subtract:`, `a * b` `multiply:by:`, `a / b` `divide:by:`,
        /// `a ** b` `raise:toPower:`, and unary `-x` is `multiply:by:(x, -1)`. The printer
        /// writes those back as infix operators.
        case function(String, [FLExpression])
        /// `FUNCTION(receiver, 'selector:', args…)`: a custom selector on a receiver.
        /// In-memory evaluation calls receivers that conform to ``FLCustomFunctionReceiver``;
        /// the SQL store rejects it.
        case customFunction(receiver: FLExpression, selector: String, arguments: [FLExpression])
        /// `{a, b, …}`: an aggregate (array) expression.
        case aggregate([FLExpression])
        /// `SUBQUERY(collection, $variable, predicate)`: the elements of `collection` for
        /// which `predicate` is true, with `$variable` bound to each element.
        case subquery(collection: FLExpression, variable: String, predicate: FLPredicate)
        /// `TERNARY(predicate, then, else)`: a conditional expression.
        case conditional(FLPredicate, then: FLExpression, else: FLExpression)
        /// `CAST(value, "Type")`, e.g. `CAST(x, "NSNumber")`. A constant number cast to
        /// `"NSDate"` is folded into `.constant(.date(…))` by the parser.
        case cast(FLExpression, type: String)
        /// `collection[index]`: `[FIRST]`, `[LAST]`, `[SIZE]`, `[n]`, `dict["key"]`.
        case index(FLExpression, IndexKind)
        /// `$variable := value`: an assignment expression (rare; evaluates to `value`).
        case assignment(variable: String, value: FLExpression)
        /// `FETCH(request, context, countOnly)`: a Core Data fetch-request expression.
        /// Parsed and printed; not evaluated in memory.
        case fetch(FLExpression, FLExpression, FLExpression)
        /// `ANYKEY`: Spotlight's "any attribute"; parsed and printed, not evaluated.
        case anyKey
    }

    /// The subscript forms of an index expression.
    public enum IndexKind: Sendable, Hashable {
        /// `[FIRST]`
        case first
        /// `[LAST]`
        case last
        /// `[SIZE]`: the number of elements.
        case size
        /// `[expr]`: an integer position (arrays) or a key (dictionaries).
        case expression(FLExpression)
    }

    // MARK: Convenience constructors

    /// A constant expression.
    public static func constant(_ value: FLValue) -> FLExpression { FLExpression(.constant(value)) }
    /// A key-path expression from the evaluated object.
    public static func keyPath(_ path: String) -> FLExpression { FLExpression(.keyPath(path)) }
    /// A variable expression (`$name`).
    public static func variable(_ name: String) -> FLExpression { FLExpression(.variable(name)) }
    /// `SELF`.
    public static var evaluatedObject: FLExpression { FLExpression(.evaluatedObject) }
    /// A predefined-function expression.
    public static func function(_ name: String, _ arguments: [FLExpression]) -> FLExpression {
        FLExpression(.function(name, arguments))
    }

    /// The constant value when this is a constant expression.
    public var constantValue: FLValue? {
        if case .constant(let v) = node { return v }
        return nil
    }

    /// The canonical `NSExpression.description` text, e.g. `lowercase:(name)`.
    public var description: String {
        FLNestingDepth.depth(of: self) > FLNestingDepth.maximum ? FLNestingDepth.unprintable : FLPrinter.expression(self)
    }
}
