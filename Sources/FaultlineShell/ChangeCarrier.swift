import Faultline
import FaultlineModel
import Foundation

/// Makes one context's unsaved changes again in another context on the same store (`.write on`
/// reopens the store with a new connection, and must not lose what was typed): new objects
/// with their values, changed attributes and relationships, deletions. Undo history is not
/// carried.
struct ChangeCarrier {
    let from: ManagedObjectContext
    let to: ManagedObjectContext

    /// Carries the changes; returns each old object's counterpart by identity.
    func carry() throws -> [ObjectIdentifier: ManagedObject] {
        var map: [ObjectIdentifier: ManagedObject] = [:]
        let inserted = from.insertedObjects.sorted { $0.objectID.uriRepresentation < $1.objectID.uriRepresentation }
        let updated = from.updatedObjects.sorted { $0.objectID.uriRepresentation < $1.objectID.uriRepresentation }
        for object in inserted { map[ObjectIdentifier(object)] = try to.insertObject(entityName: object.entity.name) }
        func counterpart(_ object: ManagedObject) -> ManagedObject {
            map[ObjectIdentifier(object)] ?? to.object(with: object.objectID)
        }
        for object in inserted + updated {
            let target = counterpart(object)
            let changed = object.isInserted ? nil : Set(object.changedValues().keys)
            for attribute in object.entity.attributes where !attribute.isTransient && !attribute.isDerived {
                guard changed?.contains(attribute.name) ?? true else { continue }
                try target.setValue(object.value(forKey: attribute.name), forKey: attribute.name)
            }
            for relationship in object.entity.relationships where !relationship.isTransient {
                guard changed?.contains(relationship.name) ?? true else { continue }
                let inverse = from.coordinator.model.inverse(of: relationship)
                if relationship.isToOne {
                    try target.setValue((object.value(forKey: relationship.name) as? ManagedObject).map(counterpart), forKey: relationship.name)
                    continue
                }
                // A to-many with a to-one inverse follows from the other side, except for
                // its order; a many-to-many is carried from one side only.
                if let inverse, inverse.isToMany, relationship.name > inverse.name || (relationship.name == inverse.name && object.entity.name > relationship.destinationEntityName) { continue }
                let wanted = (object.value(forKey: relationship.name) as? [ManagedObject] ?? []).map(counterpart)
                let present = Set((target.value(forKey: relationship.name) as? [ManagedObject] ?? []).map(ObjectIdentifier.init))
                let wantedSet = Set(wanted.map(ObjectIdentifier.init))
                if inverse == nil || inverse?.isToMany == true {
                    for member in target.value(forKey: relationship.name) as? [ManagedObject] ?? [] where !wantedSet.contains(ObjectIdentifier(member)) {
                        try target.removeObject(member, fromRelationship: relationship.name)
                    }
                    for member in wanted where !present.contains(ObjectIdentifier(member)) {
                        try target.addObject(member, toRelationship: relationship.name)
                    }
                }
                if relationship.isOrdered {
                    for (index, member) in wanted.enumerated() { try target.insertObject(member, at: index, inRelationship: relationship.name) }
                }
            }
        }
        // An object deleted because its row was gone is no change to carry: the new context
        // finds the row gone itself when the object is read.
        for object in from.deletedObjects where !object.isInserted && !object.isInaccessible {
            to.delete(to.object(with: object.objectID))
        }
        return map
    }
}
