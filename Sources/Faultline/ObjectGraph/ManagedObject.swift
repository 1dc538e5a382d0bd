import FaultlineModel
import Foundation

/// An object of the graph: one row of an entity, with values by key.
///
/// Objects belong to one ``ManagedObjectContext`` and are unique in it: one object per row.
/// An object fetched or reached through a relationship may be a *fault*: a placeholder whose
/// values load from the store the first time one is read.
open class ManagedObject: CustomStringConvertible {
    /// The entity of the object.
    public let entity: EntityDescription
    /// The object's identity.
    public internal(set) var objectID: ManagedObjectID
    /// The context the object belongs to (nil once it is removed from it).
    public internal(set) weak var managedObjectContext: ManagedObjectContext?
    /// Whether the object's values are not loaded yet.
    public internal(set) var isFault: Bool
    /// The row version (`Z_OPT`) the values were read at.
    public internal(set) var version: Int64 = 0

    /// Loaded values by property name; to-one relationships hold ``ManagedObjectID``s.
    var storage: [String: Any] = [:]

    /// Creates an object; contexts call this, users call ``ManagedObjectContext/insert(entityName:)``.
    public required init(entity: EntityDescription, objectID: ManagedObjectID, context: ManagedObjectContext?, isFault: Bool) {
        self.entity = entity
        self.objectID = objectID
        self.managedObjectContext = context
        self.isFault = isFault
    }

    /// The value of a property; reading fires the fault when the object is one.
    ///
    /// Attributes give Swift values (`String`, `Int16`, `Date`, …); a to-one relationship gives
    /// the destination ``ManagedObject`` (possibly a fault) or nil.
    public func value(forKey key: String) -> Any? {
        if isFault, let context = managedObjectContext {
            try? context.fireFault(self)
        }
        if entity.relationship(named: key) != nil {
            guard let id = storage[key] as? ManagedObjectID, let context = managedObjectContext else { return nil }
            return context.object(with: id)
        }
        return storage[key]
    }

    /// The value at a dotted key path (`asset.label`), following to-one relationships.
    public func value(forKeyPath keyPath: String) -> Any? {
        var current: Any? = self
        for key in keyPath.split(separator: ".") {
            guard let object = current as? ManagedObject else { return nil }
            current = object.value(forKey: String(key))
        }
        return current
    }

    /// `<Entity: x-coredata://…/p1>` plus `<fault>` or the values, like Core Data's description.
    open var description: String {
        if isFault { return "<\(entity.name): \(objectID.uriRepresentation); data: <fault>>" }
        let values = entity.attributes.map { "\($0.name) = \(storage[$0.name].map { "\($0)" } ?? "nil")" }
        return "<\(entity.name): \(objectID.uriRepresentation); data: {\(values.joined(separator: "; "))}>"
    }
}
