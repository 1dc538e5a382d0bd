import FaultlineModel
import FaultlinePredicate
import FaultlineSQL
import Foundation

extension PredicateSQL {
    /// The SQL of a batch update's value: an expression over the row being updated, its
    /// columns named by the table (`(ZRECIPE.ZPREPTIME * ?)`), constants bound for the
    /// attribute's type.
    ///
    /// - Throws: ``PredicateSQLError`` for key paths through relationships (a batch update
    ///   cannot join, as in Core Data), `SELF`, and expressions with no SQL form.
    mutating func batchUpdateValue(_ expression: FLExpression, attribute: AttributeDescription) throws -> (String, [SQLValue]) {
        if case .evaluatedObject = expression.node {
            throw PredicateSQLError("SELF is not a value a batch update can store")
        }
        scopes[0] = Scope(entity: entity, alias: entityMapping.table, variable: nil)
        var context = Context()
        context.display = expression.description
        let operand = try self.operand(expression, context, anyJoin: false, allowToMany: false)
        guard scopes[0].joins.isEmpty else {
            throw PredicateSQLError("a batch update value cannot follow a relationship (\(expression.description)): key path joins are not allowed in a batch update")
        }
        if case .sql(_, .object) = operand {
            throw PredicateSQLError("\(expression.description) is an object, not a value of attribute type \(attribute.attributeType.xmlName)")
        }
        let piece = try sqlPiece(operand, otherKind: .attribute(attribute.attributeType), context)
        return (piece.text.trimmingCharacters(in: .whitespaces), piece.arguments)
    }
}
