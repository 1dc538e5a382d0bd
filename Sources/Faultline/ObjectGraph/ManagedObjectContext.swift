import FaultlineModel
import FaultlineSQL
import Foundation

/// A scratch pad of managed objects: fetches them from the store, keeps one object per row,
/// and fires their faults.
///
/// ```swift
/// let context = ManagedObjectContext(coordinator: coordinator)
/// let locations = try context.fetch(FetchRequest(entityName: "Location"))
/// print(locations[0].value(forKey: "label") ?? "")
/// ```
public final class ManagedObjectContext {
    /// The coordinator the context fetches through.
    public let coordinator: PersistentStoreCoordinator
    /// Objects registered in the context, by ID.
    public private(set) var registeredObjects: [ManagedObjectID: ManagedObject] = [:]

    /// Called each time a fault is fired from the database (not when its row was already
    /// cached): the shell counts these per command and warns of fault storms.
    public var faultObserver: ((FaultEvent) -> Void)?

    /// Creates a context on a coordinator.
    public init(coordinator: PersistentStoreCoordinator) {
        self.coordinator = coordinator
    }

    var store: SQLiteStore { coordinator.store }
    var model: ManagedObjectModel { coordinator.model }

    /// Fetches the objects a request describes.
    ///
    /// - Throws: ``FetchError`` when the entity or a key path is unknown; ``StoreError`` or a
    ///   SQLite error when the store fails.
    public func fetch(_ request: FetchRequest) throws -> [ManagedObject] {
        let rows = try store.fetchRows(request)
        return rows.map { register(row: $0) }
    }

    /// Counts the objects a request would fetch.
    public func count(for request: FetchRequest) throws -> Int {
        try store.count(request)
    }

    /// The object for an ID: the registered one, or a new fault registered now.
    public func object(with id: ManagedObjectID) -> ManagedObject {
        object(with: id, reachedThrough: nil)
    }

    func object(with id: ManagedObjectID, reachedThrough origin: String?) -> ManagedObject {
        if let object = registeredObjects[id] { return object }
        let entity = model.entity(named: id.entityName) ?? EntityDescription(name: id.entityName)
        let object = ManagedObject(entity: entity, objectID: id, context: self, isFault: true)
        object.faultOrigin = origin
        registeredObjects[id] = object
        return object
    }

    func register(row: StoreRow) -> ManagedObject {
        let object = self.object(with: row.objectID)
        if object.isFault { fill(object, from: row) }
        return object
    }

    /// Loads a fault's values: from the coordinator's row cache when a relationship fault
    /// already brought its row (no SQL), else from the store.
    func fireFault(_ object: ManagedObject) throws {
        guard object.isFault else { return }
        if let row = store.rowCache[object.objectID] {
            fill(object, from: row)
            return
        }
        guard let row = try store.fetchRow(for: object.objectID) else {
            throw FetchError("object \(object.objectID.uriRepresentation) no longer exists in the store")
        }
        fill(object, from: row)
        store.connection.emit(.message(category: "annotation", text: "fault fulfilled from database for : \(object.objectID.uriRepresentation)"))
        faultObserver?(FaultEvent(kind: .object, objectID: object.objectID, origin: object.faultOrigin))
    }

    private func fill(_ object: ManagedObject, from row: StoreRow) {
        // To-many relationships already fired stay as they are.
        for (key, value) in row.values { object.storage[key] = value }
        object.version = row.version
        object.isFault = false
    }

    /// The destination objects of a to-many relationship, firing its fault the first time: one
    /// SELECT of the destination rows, which go to the row cache; the objects stay faults until
    /// touched, and touching them then runs no SQL.
    func fireRelationshipFault(_ relationship: RelationshipDescription, of object: ManagedObject) throws -> [ManagedObject] {
        if let ids = object.storage[relationship.name] as? [ManagedObjectID] {
            return ids.map { self.object(with: $0) }
        }
        if object.objectID.isTemporaryID {
            object.storage[relationship.name] = [ManagedObjectID]()
            return []
        }
        let rows = try store.fetchToMany(relationship, of: object.objectID)
        var ids: [ManagedObjectID] = []
        ids.reserveCapacity(rows.count)
        for row in rows {
            store.rowCache[row.objectID] = row
            ids.append(row.objectID)
        }
        object.storage[relationship.name] = ids
        let origin = "\(object.entity.name).\(relationship.name)"
        faultObserver?(FaultEvent(kind: .toMany, objectID: object.objectID, origin: origin))
        return ids.map { self.object(with: $0, reachedThrough: origin) }
    }
}

/// A fault fired from the database.
public struct FaultEvent: Sendable, Hashable {
    /// What kind of fault.
    public enum Kind: Sendable, Hashable {
        /// An object's values were loaded.
        case object
        /// A to-many relationship's destinations were loaded.
        case toMany
    }

    /// What kind of fault.
    public var kind: Kind
    /// The object whose fault fired (for a to-many, the source object).
    public var objectID: ManagedObjectID
    /// The relationship involved, as `Entity.relationship`: for an object fault, the one it
    /// was reached through (nil when it was not reached through one); for a to-many, itself.
    public var origin: String?
}

/// An error in a fetch request: unknown entity, key path or option.
public struct FetchError: Error, Sendable, CustomStringConvertible, Equatable {
    /// A sentence saying what is wrong.
    public var message: String

    /// Creates an error.
    public init(_ message: String) { self.message = message }

    public var description: String { message }
}
