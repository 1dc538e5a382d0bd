import FaultlineModel
import FaultlinePredicate
import Foundation

/// What a fetch returns (`NSFetchRequestResultType`).
public enum FetchResultType: Int, Sendable, Hashable, CaseIterable {
    /// Managed objects (`managedObjectResultType`, 0).
    case managedObject = 0
    /// Object IDs (`managedObjectIDResultType`, 1).
    case managedObjectID = 1
    /// Dictionaries of values (`dictionaryResultType`, 2).
    case dictionary = 2
    /// The number of objects (`countResultType`, 4).
    case count = 4
}

/// A computed value of a dictionary fetch (`NSExpressionDescription`): a name (the key in
/// each dictionary), an expression (`sum:(amount)`, `count:(name)`, `max:(date)`, arithmetic
/// over key paths) and the type its values are decoded as.
///
/// ```swift
/// let total = ExpressionDescription(name: "total", expression: .function("sum:", [.keyPath("count")]), expressionResultType: .integer64)
/// request.propertiesToFetch = ["location.label", .expression(total)]
/// request.propertiesToGroupBy = ["location.label"]
/// ```
public struct ExpressionDescription: Sendable, Hashable {
    /// The key of the value in each dictionary.
    public var name: String
    /// The expression computed by the store.
    public var expression: FLExpression
    /// The type of the value (`.undefined` keeps SQLite's own: integer, real, text or bytes).
    public var expressionResultType: AttributeType

    /// Creates a description.
    public init(name: String, expression: FLExpression, expressionResultType: AttributeType = .undefined) {
        self.name = name
        self.expression = expression
        self.expressionResultType = expressionResultType
    }
}

/// One entry of ``FetchRequest/propertiesToFetch`` or ``FetchRequest/propertiesToGroupBy``:
/// a property name or key path (`name`, `type`, `type.name`, `objectID`), or an expression.
/// A string literal is a key path.
public enum FetchProperty: Sendable, Hashable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// An attribute, a to-one relationship, `objectID`, or a key path through to-ones.
    case keyPath(String)
    /// A computed value.
    case expression(ExpressionDescription)

    /// A key path.
    public init(stringLiteral value: String) { self = .keyPath(value) }

    /// The key of the property in a result dictionary: the key path, or the expression's name.
    public var name: String {
        switch self {
        case .keyPath(let path): return path
        case .expression(let description): return description.name
        }
    }

    /// The key path, or `name = expression`.
    public var description: String {
        switch self {
        case .keyPath(let path): return path
        case .expression(let e): return "\(e.name) = \(e.expression)"
        }
    }
}

/// What ``ManagedObjectContext/execute(_:)->FetchResult`` returns, by ``FetchRequest/resultType``.
public enum FetchResult {
    /// Managed objects.
    case objects(FetchedResults<ManagedObject>)
    /// Object IDs.
    case objectIDs([ManagedObjectID])
    /// Dictionaries, one per row; a nil value leaves its key out, as in Core Data.
    case dictionaries([[String: Any]])
    /// A count.
    case count(Int)
}
