import FaultlineModel
import FaultlinePredicate
import Foundation

extension SchemaMapping {
    /// The `WHERE` of a partial fetch index, as Core Data writes it into the DDL: column names
    /// without an alias, constants inline (DDL takes no bound values), `=` and `<>`,
    /// `IS NULL` / `IS NOT NULL` for nil, and `(a AND b)` / `(a OR b)` for compounds
    /// (`WHERE (ZTHUMBNAILINDEX = -1 AND ZCLOUDLOCALSTATE = 1)`).
    ///
    /// Returns nil for a predicate it cannot write (the index is then created without it).
    static func partialIndexWhere(_ format: String, in mapping: EntityMapping) -> String? {
        guard let predicate = try? FLPredicate(format: format) else { return nil }
        return partialIndexSQL(predicate, mapping)
    }

    private static func partialIndexSQL(_ predicate: FLPredicate, _ mapping: EntityMapping) -> String? {
        switch predicate.node {
        case .constant(let value):
            return value ? "1" : "0"
        case .and(let parts), .or(let parts):
            let joiner: String
            if case .and = predicate.node { joiner = " AND " } else { joiner = " OR " }
            let pieces = parts.compactMap { partialIndexSQL($0, mapping) }
            guard pieces.count == parts.count else { return nil }
            return "(" + pieces.joined(separator: joiner) + ")"
        case .not(let inner):
            return partialIndexSQL(inner, mapping).map { "NOT " + $0 }
        case .comparison(let comparison):
            guard comparison.modifier == .direct, comparison.options.isEmpty,
                case .keyPath(let key) = comparison.left.node,
                let column = mapping.attributeColumns[key] ?? mapping.toOneColumns[key]?.foreignKey,
                case .constant(let value) = comparison.right.node
            else { return nil }
            if case .null = value {
                switch comparison.op {
                case .equalTo: return "\(column) IS NULL"
                case .notEqualTo: return "\(column) IS NOT NULL"
                default: return nil
                }
            }
            let symbol: String
            switch comparison.op {
            case .equalTo: symbol = "="
            case .notEqualTo: symbol = "<>"
            case .lessThan: symbol = "<"
            case .lessThanOrEqualTo: symbol = "<="
            case .greaterThan: symbol = ">"
            case .greaterThanOrEqualTo: symbol = ">="
            default: return nil
            }
            guard let literal = sqlLiteral(value) else { return nil }
            return "\(column) \(symbol) \(literal)"
        }
    }

    private static func sqlLiteral(_ value: FLValue) -> String? {
        switch value {
        case .bool(let b): return b ? "1" : "0"
        case .int(let i): return String(i)
        case .double(let d): return d == d.rounded() && abs(d) < 1e15 ? String(Int64(d)) : String(d)
        case .string(let s): return "'" + s.replacingOccurrences(of: "'", with: "''") + "'"
        default: return nil
        }
    }
}
