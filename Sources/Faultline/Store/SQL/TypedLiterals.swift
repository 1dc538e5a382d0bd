import FaultlineModel
import FaultlinePredicate
import Foundation

extension FLPredicate {
    /// Reads string constants compared with Date, UUID and URI attributes as values of those
    /// types, as the shell does with what people type: `date > "2026-11-05T00:00:00Z"`,
    /// `date BETWEEN {"2026-11-01", "2026-11-30"}`, `ANY inventories.date < "2026-01-01"`,
    /// `id == "F00DF00D-…"`. `NSPredicate` itself compares such a string as text (a Date
    /// column holds seconds since 2001, so the answer would silently be wrong); this is the
    /// opt-in conversion, and the SQL store refuses the unconverted comparison.
    ///
    /// - Parameters:
    ///   - entity: the entity key paths start from.
    ///   - model: the model the entity belongs to (for the destinations of relationships).
    /// - Throws: ``PredicateSQLError`` naming the key path and the expected form when a
    ///   string does not read as its attribute's type.
    public func convertingStringLiterals(for entity: EntityDescription, in model: ManagedObjectModel) throws -> FLPredicate {
        try FLNestingDepth.check(self)
        return try TypedLiterals(model: model).predicate(self, entity)
    }
}

/// The walk behind ``FLPredicate/convertingStringLiterals(for:in:)``.
struct TypedLiterals {
    let model: ManagedObjectModel

    func predicate(_ p: FLPredicate, _ entity: EntityDescription) throws -> FLPredicate {
        switch p.node {
        case .constant: return p
        case .and(let items): return FLPredicate(.and(try items.map { try predicate($0, entity) }))
        case .or(let items): return FLPredicate(.or(try items.map { try predicate($0, entity) }))
        case .not(let inner): return FLPredicate(.not(try predicate(inner, entity)))
        case .comparison(var c):
            if let (type, path) = attributeType(c.left, entity) {
                c.right = try convert(c.right, to: type, keyPath: path)
            } else if let (type, path) = attributeType(c.right, entity) {
                c.left = try convert(c.left, to: type, keyPath: path)
            }
            return FLPredicate(.comparison(c))
        }
    }

    /// The type of the attribute a key path ends at, when it is one that strings convert to.
    func attributeType(_ e: FLExpression, _ entity: EntityDescription) -> (AttributeType, String)? {
        guard case .keyPath(let path) = e.node else { return nil }
        var current = entity
        var last: AttributeType?
        for component in path.split(separator: ".").map(String.init) {
            if component.hasPrefix("@") {
                guard ["@min", "@max"].contains(component) else { return nil }
                continue
            }
            if let relationship = current.relationship(named: component), let destination = model.entity(named: relationship.destinationEntityName) {
                current = destination
                last = nil
            } else if let attribute = current.attribute(named: component) {
                last = attribute.attributeType
            } else {
                return nil
            }
        }
        guard let last, [.date, .uuid, .uri].contains(last) else { return nil }
        return (last, path)
    }

    func convert(_ e: FLExpression, to type: AttributeType, keyPath: String) throws -> FLExpression {
        switch e.node {
        case .constant(let value): return .constant(try convert(value, to: type, keyPath: keyPath))
        case .aggregate(let items): return FLExpression(.aggregate(try items.map { try convert($0, to: type, keyPath: keyPath) }))
        default: return e
        }
    }

    func convert(_ value: FLValue, to type: AttributeType, keyPath: String) throws -> FLValue {
        switch value {
        case .array(let items): return .array(try items.map { try convert($0, to: type, keyPath: keyPath) })
        case .string(let text):
            switch type {
            case .date:
                guard let date = FLDateLiteral.parse(text) else {
                    throw PredicateSQLError("\(keyPath) is a Date: \"\(text)\" is not \(FLDateLiteral.expectedForm)")
                }
                return .date(date)
            case .uuid:
                guard let uuid = UUID(uuidString: text) else {
                    throw PredicateSQLError("\(keyPath) is a UUID: \"\(text)\" is not a UUID such as F00DF00D-0000-4000-8000-000000000001")
                }
                return .uuid(uuid)
            case .uri:
                guard let url = URL(string: text), url.scheme != nil else {
                    throw PredicateSQLError("\(keyPath) is a URI: \"\(text)\" is not an absolute URL such as https://example.com/a")
                }
                return .url(url)
            default:
                return value
            }
        default:
            return value
        }
    }
}
