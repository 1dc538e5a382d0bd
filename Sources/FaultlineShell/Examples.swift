import Faultline
import FaultlineModel
import Foundation

/// Names for the examples in help and error messages, taken from the open model so that
/// they can be typed as they are: an entity with a text attribute, that attribute, a
/// relationship and the entity's table.
struct Examples {
    var entity = "Entity"
    var key = "name"
    var relationship: String?
    var table = "ZENTITY"
    var destinationKey = "name"
    var toMany: String?
    var toManyKey = "name"
    /// A condition on ``toManyKey`` that fits its type: `BEGINSWITH "a"`, `> 1`, `> "2026-11-05"`.
    var toManyCondition = "BEGINSWITH \"a\""

    init() {}

    init(model: ManagedObjectModel, mapping: SchemaMapping?) {
        let entities = model.entities.filter { !$0.isAbstract }
        func textKey(_ entity: EntityDescription?) -> String? {
            let texts = entity?.attributes.filter { $0.attributeType == .string && !$0.isTransient }.map(\.name) ?? []
            return texts.first { ["name", "title", "label"].contains($0.lowercased()) } ?? texts.first
        }
        // Prefer an entity with a text attribute, a to-one and a to-many to entities with text.
        let scored = entities.map { entity -> (EntityDescription, Int) in
            let toOne = entity.relationships.contains { $0.isToOne && textKey(model.entity(named: $0.destinationEntityName)) != nil }
            let toMany = entity.relationships.contains { $0.isToMany && textKey(model.entity(named: $0.destinationEntityName)) != nil }
            let text = textKey(entity)
            return (entity, (text != nil ? 4 : 0) + (["name", "title", "label"].contains(text?.lowercased() ?? "") ? 2 : 0) + (toOne ? 1 : 0) + (toMany ? 1 : 0))
        }
        guard let best = scored.max(by: { ($0.1, $1.0.name) < ($1.1, $0.0.name) })?.0 else { return }
        entity = best.name
        key = textKey(best) ?? best.attributes.first?.name ?? key
        // A relationship, with a key of its destination (text if there is one).
        func pick(_ toMany: Bool) -> (String, String)? {
            let candidates = best.relationships.filter { $0.isToMany == toMany }
            let withText = candidates.first { textKey(model.entity(named: $0.destinationEntityName)) != nil }
            for r in [withText].compactMap({ $0 }) + candidates {
                let destination = model.entity(named: r.destinationEntityName)
                if let key = textKey(destination) ?? destination?.attributes.first?.name { return (r.name, key) }
            }
            return nil
        }
        if let (r, key) = pick(false) {
            relationship = r
            destinationKey = key
        }
        if let (r, key) = pick(true) {
            toMany = r
            toManyKey = key
            let relationship = best.relationship(named: r)
            switch relationship.flatMap({ model.entity(named: $0.destinationEntityName)?.attribute(named: key)?.attributeType }) {
            case .string?: toManyCondition = "BEGINSWITH \"a\""
            case .date?: toManyCondition = "> \"2026-11-05\""
            case .boolean?: toManyCondition = "== YES"
            default: toManyCondition = "> 1"
            }
        }
        table = mapping?.entity(best.name)?.table ?? table
    }
}
