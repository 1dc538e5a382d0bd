import FaultlineModel
import FaultlinePredicate
import FaultlineSQL
import Foundation

/// The select list, `GROUP BY` and `HAVING` of a dictionary fetch.
///
/// Shapes (sources in `Documentation/Fetching.md`): a property is selected as `t0.ZNAME`
/// (through a to-one, `t1.ZNAME` with `LEFT OUTER JOIN ZTYPE t1 ON t0.ZTYPE = t1.Z_PK`); an
/// aggregate as `COUNT( t0.ZNAME)` (`count:`), `total( t0.ZX)` (`sum:`), `MIN( t0.ZX)`,
/// `MAX( t0.ZX)`, `AVG( t0.ZX)` (`min:`, `max:`, `average:`); `count:` of a to-many
/// relationship as `COUNT( t1.Z_PK)` with `LEFT OUTER JOIN ZDEST t1 ON t0.Z_PK = t1.ZINV`.
/// A value named by the `HAVING` predicate gets `AS __var0`, `__var1`, …; the groups are
/// written `GROUP BY  t0.ZX` (two spaces: the column keeps its leading space).
extension PredicateSQL {
    /// How the columns of a selected item become a value.
    enum SelectedValue {
        /// An attribute column, decoded as its type.
        case attribute(AttributeType)
        /// A to-one foreign key: an object ID of the destination entity (the next column holds
        /// the row's entity number when the destination has sub-entities).
        case object(destination: String, entityColumn: Bool)
        /// The fetched object's own ID (`t0.Z_ENT, t0.Z_PK` when its table holds several entities).
        case objectID(entityColumn: Bool)
        /// A computed value, decoded as the expression's result type.
        case computed(AttributeType)
    }

    /// One item of a dictionary fetch's select list.
    struct SelectItem {
        /// The key in the result dictionaries.
        var key: String
        /// The SQL with Core Data's leading space (` t0.ZNAME`, `COUNT( t0.ZNAME)`).
        var piece: Piece
        /// How many columns it selects (2 with an entity column).
        var columnCount: Int
        var value: SelectedValue
        /// Whether it is an aggregate (allowed beside `GROUP BY` without being grouped).
        var isAggregate: Bool
        /// Whether it is a plain key path (must be grouped when there is a `GROUP BY`).
        var isKeyPath: Bool
        /// The key path of a plain key-path item (also when an expression description renames it).
        var keyPath: String? = nil

        /// The text in the select list (no leading space).
        var selectText: String { piece.text.trimmingCharacters(in: .whitespaces) }
    }

    /// Core Data's SQL for its aggregate functions: `count:` → `COUNT(`, `sum:` → `total(`
    /// (seen in logs); `min:`, `max:`, `average:` → `MIN(`, `MAX(`, `AVG(` (inferred).
    static let aggregateFunctions: [String: String] = [
        "count:": "COUNT", "sum:": "total", "min:": "MIN", "max:": "MAX", "average:": "AVG",
    ]

    /// Compiles one property of a dictionary fetch (or of its `GROUP BY`).
    ///
    /// - Throws: ``PredicateSQLError`` for unknown keys, to-many keys, and functions the
    ///   store cannot compute.
    mutating func selectItem(_ property: FetchProperty) throws -> SelectItem {
        switch property {
        case .keyPath(let path):
            var item = try keyPathItem(path)
            if item.isKeyPath { item.keyPath = path }
            return item
        case .expression(let description):
            do {
                try FLNestingDepth.check(description.expression)
            } catch {
                throw PredicateSQLError("the expression of \(description.name) is nested too deeply for SQL (more than \(FLNestingDepth.maximum) levels)")
            }
            return try expressionItem(description)
        }
    }

    private mutating func keyPathItem(_ path: String) throws -> SelectItem {
        let hierarchy = entity.hasSubentities || entity.superentityName != nil
        if path == "objectID" || path == "self" || path == "SELF" {
            return SelectItem(key: path, piece: Piece(hierarchy ? " t0.Z_ENT, t0.Z_PK" : " t0.Z_PK"), columnCount: hierarchy ? 2 : 1,
                              value: .objectID(entityColumn: hierarchy), isAggregate: false, isKeyPath: true)
        }
        let components = PredicateSQL.keyPathComponents(path)
        if components.contains(where: { $0.hasPrefix("@") }) {
            // `toMany.@count` and friends: a correlated subselect, computed per row.
            var context = Context()
            context.display = path
            let resolved = try resolveKeyPath(components[...], from: scopes[0].base, context, anyJoin: false, allowToMany: false, display: path)
            if case .collection(let piece, let type) = resolved {
                return SelectItem(key: path, piece: Piece(" " + piece.text, piece.arguments), columnCount: 1,
                                  value: .computed(type ?? .undefined), isAggregate: false, isKeyPath: false)
            }
        }
        var context = Context()
        context.outerJoins = true
        context.display = path
        switch try resolveKeyPath(components[...], from: scopes[0].base, context, anyJoin: false, allowToMany: false, display: path) {
        case .column(let text, let type):
            return SelectItem(key: path, piece: Piece(text), columnCount: 1, value: .attribute(type), isAggregate: false, isKeyPath: true)
        case .object(let text, let destination):
            var piece = Piece(text)
            var entityColumn = false
            if components.count == 1, let column = entityMapping.toOneColumns[path]?.entityColumn {
                piece.text += ", t0.\(column)"
                entityColumn = true
            }
            return SelectItem(key: path, piece: piece, columnCount: entityColumn ? 2 : 1,
                              value: .object(destination: destination.name, entityColumn: entityColumn), isAggregate: false, isKeyPath: true)
        case .collection(let piece, let type):
            return SelectItem(key: path, piece: piece, columnCount: 1, value: .computed(type ?? .undefined), isAggregate: false, isKeyPath: false)
        case .toMany:
            throw PredicateSQLError("to-many key not allowed here (\(path) in propertiesToFetch)")
        }
    }

    private mutating func expressionItem(_ description: ExpressionDescription) throws -> SelectItem {
        let expression = description.expression
        var context = Context()
        context.outerJoins = true
        context.display = "\(description.name) = \(expression)"
        if case .function(let name, let arguments) = expression.node, let function = PredicateSQL.aggregateFunctions[name] {
            guard arguments.count == 1 else {
                throw PredicateSQLError("\(name) takes one argument, in \(description.name) = \(expression)")
            }
            let argument: Piece
            if case .keyPath(let path) = arguments[0].node {
                // Through to-many relationships too: `count:(ingredients)` joins them
                // (`LEFT OUTER JOIN ZINGREDIENT t1 ON t0.Z_PK = t1.ZRECIPE`) and counts `t1.Z_PK`.
                let components = PredicateSQL.keyPathComponents(path)
                switch try resolveKeyPath(components[...], from: scopes[0].base, context, anyJoin: true, allowToMany: false, display: path) {
                case .column(let text, _), .object(let text, _): argument = Piece(text)
                case .collection(let piece, _): argument = Piece(" " + piece.text, piece.arguments)
                case .toMany: throw PredicateSQLError("to-many key not allowed here (\(path))")
                }
            } else if case .evaluatedObject = arguments[0].node {
                argument = Piece(" t0.Z_PK")
            } else {
                argument = try sqlPiece(try operand(arguments[0], context, anyJoin: false, allowToMany: false), otherKind: .number, context)
            }
            return SelectItem(key: description.name, piece: Piece(function + "(" + argument.text + ")", argument.arguments), columnCount: 1,
                              value: .computed(description.expressionResultType), isAggregate: true, isKeyPath: false)
        }
        if case .function(let name, _) = expression.node, !PredicateSQL.sqlFunctions.contains(name) {
            throw PredicateSQLError(
                "Unsupported function expression \(expression) in \(description.name): the SQLite store computes count:, sum:, min:, max:, average: and arithmetic (add:to:, from:subtract:, multiply:by:, divide:by:, modulus:by:)")
        }
        if case .keyPath(let path) = expression.node {
            var item = try keyPathItem(path)
            if item.isKeyPath { item.keyPath = path }
            item.key = description.name
            if case .attribute = item.value { item.value = .computed(description.expressionResultType == .undefined ? item.attributeType : description.expressionResultType) }
            return item
        }
        let piece = try sqlPiece(try operand(expression, context, anyJoin: false, allowToMany: false), otherKind: .number, context)
        return SelectItem(key: description.name, piece: piece.text.hasPrefix(" ") ? piece : Piece(" " + piece.text, piece.arguments), columnCount: 1,
                          value: .computed(description.expressionResultType), isAggregate: false, isKeyPath: false)
    }

    /// Functions whose SQL ``function(_:_:_:)`` writes.
    static let sqlFunctions: Set<String> = ["add:to:", "from:subtract:", "multiply:by:", "divide:by:", "modulus:by:"]

    /// The `HAVING` fragment (without the keyword) and its bound values. `$name` in the
    /// predicate names a selected value whose SQL alias is in ``selectAliases``.
    mutating func havingClause(_ predicate: FLPredicate) throws -> Piece {
        do {
            try FLNestingDepth.check(predicate)
        } catch {
            throw PredicateSQLError("the having predicate is nested too deeply for SQL (more than \(FLNestingDepth.maximum) levels)")
        }
        // As in WHERE, a column keeps its leading space (`HAVING  t1.ZNAME = ?`); an alias has
        // none (`HAVING __var0 > ?`, as logged).
        return try self.predicate(PredicateSQL.fold(predicate), Context())
    }
}

extension PredicateSQL.SelectItem {
    /// The attribute type of an attribute item (`.undefined` otherwise).
    var attributeType: AttributeType {
        if case .attribute(let type) = value { return type }
        return .undefined
    }
}
