import FaultlineModel
import FaultlineSQL
import Foundation

/// A scratch pad of managed objects: fetches them from the store, keeps one object per row,
/// fires their faults, tracks changes (insert, edit, delete, with inverse relationships kept
/// on both sides), validates them and saves them in one transaction.
///
/// ```swift
/// let context = ManagedObjectContext(coordinator: coordinator)
/// let locations = try context.fetch(FetchRequest(entityName: "Location"))
/// print(locations[0].value(forKey: "label") ?? "")
///
/// let asset = try context.insertObject(entityName: "Asset")
/// try asset.setValue("Drone", forKey: "label")
/// try context.save()   // BEGIN EXCLUSIVE … INSERT INTO ZASSET(Z_PK, Z_ENT, Z_OPT, ZLABEL) VALUES(?, ?, ?, ?) … COMMIT
/// ```
public final class ManagedObjectContext {
    /// The coordinator the context fetches through (a child context's is its parent's).
    public let coordinator: PersistentStoreCoordinator
    /// The context a child context fetches through and saves into; nil for a context on the
    /// coordinator. See `Context+Child.swift`.
    public let parent: ManagedObjectContext?
    /// The queue discipline, owner thread and debug checks. See `Context+Concurrency.swift`.
    let concurrency: ContextConcurrency
    /// Temporary IDs of objects this context saved, with the permanent IDs they got, kept
    /// while it has child contexts (which may still hold the temporary ones).
    var permanentIDs: [ManagedObjectID: ManagedObjectID] = [:]
    /// Objects registered in the context, by ID.
    @exclusivity(unchecked) public internal(set) var registeredObjects: [ManagedObjectID: ManagedObject] = [:]

    /// Called each time a fault is fired from the database (not when its row was already
    /// cached): the shell counts these per command and warns of fault storms.
    public var faultObserver: ((FaultEvent) -> Void)?

    /// How a save resolves rows changed in the store since they were read (default: fail).
    public var mergePolicy: MergePolicy = .error
    /// Called after each successful save with the permanent IDs of what it wrote.
    public var didSave: ((SaveNotification) -> Void)?
    /// Everything the last batch request run by this context changed in the store (its
    /// own rows and those its delete rules reached), whatever its result type: ready for
    /// ``mergeChanges(fromContextDidSave:)-(SaveNotification)``.
    public internal(set) var lastBatchChanges: SaveNotification?
    /// Whether user-level changes are recorded for ``undo()`` (default true).
    public var isUndoEnabled = true
    /// The context's name (`NSManagedObjectContext.name`): recorded as the context of each
    /// transaction it saves into a store with persistent history.
    public var name: String?
    /// Who saves (`NSManagedObjectContext.transactionAuthor`): recorded as the author of each
    /// transaction it saves into a store with persistent history.
    public var transactionAuthor: String?

    /// Changes recorded since the last objects-did-change (`Context+Observation.swift`).
    var pendingEvent = PendingEvent()
    /// The continuations of the ``changes`` streams.
    let streams = ContextStreams()
    /// Fetched-results controllers following the context.
    var internalObservers: [WeakContextObserver] = []
    /// The `NotificationCenter` observer of ``automaticallyMergesChangesFromParent``.
    var automaticMergeObserver: (any NSObjectProtocol)?

    /// Objects with unsaved changes (inserted, deleted, or changed at some point), by identity.
    var touched: [ObjectIdentifier: ManagedObject] = [:]
    var nextInsertionSequence = 0
    /// Deleted objects whose delete rules were applied already.
    var propagatedDeletions: Set<ObjectIdentifier> = []
    var undoStack: [[ObjectState]] = []
    var redoStack: [[ObjectState]] = []
    /// The undo group being recorded: each object's state before its first change in it.
    var openGroup: [ObjectState]?
    var openGroupMembers: Set<ObjectIdentifier> = []
    /// How many times an object was about to change (``willChange(_:)``), to tell whether a
    /// step changed anything.
    var changeCount = 0

    /// The one designated initializer; the public ones are in `Context+Concurrency.swift`
    /// and `Context+Child.swift`.
    init(coordinator: PersistentStoreCoordinator, parent: ManagedObjectContext?, concurrencyType: ConcurrencyType) {
        self.coordinator = coordinator
        self.parent = parent
        self.concurrency = ContextConcurrency(type: concurrencyType)
    }

    deinit {
        if let automaticMergeObserver { NotificationCenter.default.removeObserver(automaticMergeObserver) }
        streams.finish()
    }

    var store: SQLiteStore { coordinator.store }
    var model: ManagedObjectModel { coordinator.model }

    /// Fetches the objects a request describes.
    ///
    /// - Throws: ``FetchRequestError`` when the entity or a key path is unknown; ``PersistentStoreError`` or a
    ///   SQLite error when the store fails.
    ///
    /// With ``FetchRequest/includesPendingChanges`` (the default) the result also reflects
    /// unsaved changes: deleted objects are left out, inserted objects of the entity that
    /// match the predicate are added, and changed objects are matched again in memory.
    ///
    /// A request for object IDs returns the objects of the IDs (see ``fetchObjectIDs(_:)``);
    /// dictionary and count requests run through ``execute(_:)->FetchResult``.
    public func fetch(_ request: FetchRequest) throws -> [ManagedObject] {
        checkAccess()
        switch request.resultType {
        case .managedObject: break
        case .managedObjectID: return try fetchObjectIDs(request).map { object(with: $0) }
        case .dictionary, .count:
            throw FetchRequestError("fetch(_:) returns managed objects; run a \(request.resultType) request with execute(_:)")
        }
        try checkGrouping(request)
        let objects = try fetchFromStore(request)
        guard request.includesPendingChanges, !touched.isEmpty else { return objects }
        return try mergePendingChanges(into: objects, for: request)
    }

    private func fetchFromStore(_ request: FetchRequest) throws -> [ManagedObject] {
        if parent != nil { return try fetchFromParent(request) }
        coordinator.storeLock.lock(); defer { coordinator.storeLock.unlock() }
        if !request.includesPropertyValues {
            // Only the keys (`SELECT 0, t0.Z_PK …`): the objects are faults.
            let keys = try store.fetchObjectKeys(request)
            registeredObjects.reserveCapacity(registeredObjects.count + keys.count)
            return (0..<keys.count).map { object(with: keys.id(at: $0)) }
        }
        if let properties = request.propertiesToFetch, request.fetchBatchSize <= 0 {
            return try fetchPartialObjects(request, properties: properties)
        }
        guard request.fetchBatchSize > 0 else {
            // All rows first, so the registry grows once (growing it row by row rehashes it
            // again and again).
            let rows = try store.fetchRows(request)
            registeredObjects.reserveCapacity(registeredObjects.count + rows.count)
            var objects: [ManagedObject] = []
            objects.reserveCapacity(rows.count)
            for i in rows.indices { objects.append(register(row: rows[i])) }
            for keyPath in request.relationshipKeyPathsForPrefetching {
                try prefetch(keyPath, from: objects)
            }
            return objects
        }
        let batch = try fetchBatch(request)
        registeredObjects.reserveCapacity(registeredObjects.count + batch.keys.count)
        return (0..<batch.keys.count).map { batch.object(at: $0, in: self) }
    }

    /// The keys of a batched fetch's objects, from the store (the first statement of it).
    func fetchBatch(_ request: FetchRequest) throws -> FaultBatch {
        FaultBatch(entityName: request.entityName, keys: try store.fetchObjectKeys(request), size: request.fetchBatchSize,
                   prefetching: request.relationshipKeyPathsForPrefetching,
                   properties: request.resultType == .managedObject ? request.propertiesToFetch : nil)
    }

    /// Loads the rows of a relationship key path's destinations for `sources`, one statement
    /// per relationship on the path; the destinations become faults whose rows wait in the
    /// row cache, and to-many relationships are filled.
    func prefetch(_ keyPath: String, from sources: [ManagedObject]) throws {
        var level = sources.filter { !$0.objectID.isTemporaryID }
        for name in keyPath.split(separator: ".").map(String.init) {
            guard let first = level.first else { return }
            guard let relationship = first.entity.relationship(named: name) else {
                throw FetchRequestError("keypath \(name) not found in entity \(first.entity.name)")
            }
            let origin = "\(first.entity.name).\(name)"
            var next: [ManagedObject] = []
            var seen: Set<ManagedObjectID> = []
            seen.reserveCapacity(level.count)
            if relationship.isToOne {
                for source in level where source.isFault { try fireFault(source) }
                let ids = level.compactMap { $0.storage[name] as? ManagedObjectID }.filter { seen.insert($0).inserted }
                let missing = ids.filter { id in
                    (store.rowCache.isEmpty || store.rowCache[id] == nil) && (registeredObjects[id]?.isFault ?? true)
                }
                if !missing.isEmpty {
                    let rows = try store.prefetchRows(relationship, sourceEntity: first.entity, keys: missing.map(\.primaryKey))
                    store.rowCache.reserveCapacity(store.rowCache.count + rows.count)
                    for (_, row) in rows { store.rowCache[row.objectID] = row }
                }
                registeredObjects.reserveCapacity(registeredObjects.count + ids.count)
                next = ids.map { object(with: $0, reachedThrough: origin) }
            } else {
                let pending = level.filter { $0.storage[name] == nil }
                if !pending.isEmpty {
                    var owned: [Int64: [ManagedObjectID]] = [:]
                    for (owner, row) in try store.prefetchRows(relationship, sourceEntity: first.entity, keys: pending.map(\.objectID.primaryKey)) {
                        store.rowCache[row.objectID] = row
                        owned[owner, default: []].append(row.objectID)
                    }
                    for source in pending { source.storage[name] = owned[source.objectID.primaryKey] ?? [] }
                }
                for source in level {
                    for id in source.storage[name] as? [ManagedObjectID] ?? [] where seen.insert(id).inserted {
                        next.append(object(with: id, reachedThrough: origin))
                    }
                }
            }
            level = next
        }
    }

    /// Loads the batch that holds a fault of a batched fetch: its rows in one statement,
    /// then the request's prefetching for those objects.
    private func loadBatch(_ batch: FaultBatch, containing index: Int) throws {
        let objects = batch.range(containing: index).map { object(with: batch.keys.id(at: $0)) }
        // The faults to load, by primary key (unique in the fetched entity's table); rows
        // already in the row cache fill theirs now.
        var pending: [Int64: ManagedObject] = [:]
        pending.reserveCapacity(objects.count)
        for object in objects where object.isFault {
            object.batchPosition = nil
            if !store.rowCache.isEmpty, let row = store.rowCache.removeValue(forKey: object.objectID) {
                fill(object, from: row)
            } else {
                pending[object.objectID.primaryKey] = object
            }
        }
        if !pending.isEmpty {
            let rows = try store.fetchRows(entityName: batch.entityName, primaryKeys: pending.keys.sorted(), limit: batch.size, properties: batch.properties)
            let partialKeys = batch.properties.map { Set($0.map(\.name)) }
            for i in rows.indices {
                if let object = pending[rows[i].objectID.primaryKey], object.isFault {
                    fill(object, from: rows[i])
                    object.partialKeys = partialKeys
                }
            }
            faultObserver?(FaultEvent(kind: .batch, objectID: batch.keys.id(at: index), origin: nil))
        }
        for keyPath in batch.prefetching {
            try prefetch(keyPath, from: objects)
        }
    }

    /// Turns an object back into a fault: its values are dropped and load again, from the
    /// store, when next touched.
    ///
    /// With unsaved changes: `mergeChanges: false` drops them (the object becomes a clean
    /// fault); `mergeChanges: true` reloads the row now and puts the changed values back on
    /// top of it (the object stays changed, at the store's current version). Inserted and
    /// deleted objects are left alone.
    public func refresh(_ object: ManagedObject, mergeChanges: Bool) {
        checkAccess()
        guard object.managedObjectContext === self, !object.objectID.isTemporaryID, !object.isInserted, !object.isDeleted else { return }
        noteRefresh(object)
        if parent != nil { return refreshFromParent(object, mergeChanges: mergeChanges) }
        coordinator.storeLock.lock(); defer { coordinator.storeLock.unlock() }
        store.rowCache[object.objectID] = nil
        if mergeChanges, object.hasPersistentChangedValues, let row = try? store.fetchRow(for: object.objectID) {
            let changes = object.changedValueIDs()
            object.storage.removeAll()
            object.committed.removeAll()
            object.isFault = true
            fill(object, from: row)
            for (key, value) in changes { object.storage[key] = value }
            return
        }
        turnIntoFault(object)
    }

    /// Drops an object's values and pending changes: it loads again when next touched.
    func turnIntoFault(_ object: ManagedObject) {
        object.partialKeys = nil
        object.fetchedPropertyValues.removeAll()
        object.storage.removeAll()
        object.committed.removeAll()
        object.pendingToMany.removeAll()
        object.batchPosition = nil
        object.isFault = true
        touched[ObjectIdentifier(object)] = nil
    }

    /// Counts the objects a request would fetch.
    ///
    /// With `includesPendingChanges` (the default) and unsaved changes to objects of the
    /// entity, the count is that of a fetch merged with the changes, as Core Data's is;
    /// otherwise it is one `SELECT COUNT`.
    public func count(for request: FetchRequest) throws -> Int {
        checkAccess()
        if parent != nil {
            // A child counts what a fetch through its parent finds, with both contexts' changes.
            var fetch = request
            fetch.fetchBatchSize = 0
            fetch.relationshipKeyPathsForPrefetching = []
            return try self.fetch(fetch).count
        }
        if request.includesPendingChanges, hasChanges, let entity = model.entity(named: request.entityName) {
            let family = Set(model.entityAndDescendants(of: entity).map(\.name))
            if touched.values.contains(where: { family.contains($0.entity.name) }) {
                var fetch = request
                fetch.fetchBatchSize = 0
                fetch.relationshipKeyPathsForPrefetching = []
                return try self.fetch(fetch).count
            }
        }
        coordinator.storeLock.lock(); defer { coordinator.storeLock.unlock() }
        return try store.count(request)
    }

    /// The object for an ID: the registered one, or a new fault registered now.
    public func object(with id: ManagedObjectID) -> ManagedObject {
        return object(with: id, reachedThrough: nil)
    }

    /// The object for an ID; a new fault remembers `origin` (evaluated only then).
    func object(with id: ManagedObjectID, reachedThrough origin: @autoclosure () -> String?) -> ManagedObject {
        registeredObject(for: id, entity: nil, reachedThrough: origin())
    }

    /// The registered object for an ID, or a new fault of `entity` (or the ID's entity in the
    /// model) registered now, in one hash lookup: the fault is made only when the ID is new.
    private func registeredObject(
        for id: ManagedObjectID, entity: EntityDescription?, reachedThrough origin: @autoclosure () -> String?
    ) -> ManagedObject {
        func registered(_ object: inout ManagedObject) -> ManagedObject { object }
        return registered(&registeredObjects[id, default: newFault(for: id, entity: entity, reachedThrough: origin())])
    }

    private func newFault(for id: ManagedObjectID, entity: EntityDescription?, reachedThrough origin: String?) -> ManagedObject {
        let entity = entity ?? model.entity(named: id.entityName) ?? EntityDescription(name: id.entityName)
        let object = ManagedObject(entity: entity, objectID: id, context: self, isFault: true)
        object.faultOrigin = origin
        return object
    }

    func register(row: StoreRow) -> ManagedObject {
        let object = registeredObject(for: row.objectID, entity: row.entity, reachedThrough: nil)
        if object.isFault { fill(object, from: row) }
        return object
    }

    /// Loads a fault's values: from the coordinator's row cache when a relationship fault
    /// already brought its row (no SQL), else from the store.
    func fireFault(_ object: ManagedObject) throws {
        guard try fireFaultIfRowExists(object) else {
            throw FetchRequestError("object \(object.objectID.uriRepresentation) no longer exists in the store")
        }
    }

    /// Fires a fault from the store; false (the object left a fault) when its row is gone.
    func fireFaultIfRowExists(_ object: ManagedObject) throws -> Bool {
        guard object.isFault else { return true }
        checkAccess()
        if parent != nil {
            try fireFaultFromParent(object)
            return true
        }
        coordinator.storeLock.lock(); defer { coordinator.storeLock.unlock() }
        if let (batch, index) = object.batchPosition {
            try loadBatch(batch, containing: index)
            if !object.isFault { return true }
        }
        if let row = store.rowCache.removeValue(forKey: object.objectID) {
            fill(object, from: row)
            return true
        }
        guard let row = try store.fetchRow(for: object.objectID) else { return false }
        fill(object, from: row)
        if store.isTraced {
            // Only when someone listens: describing the row costs more than fetching it.
            let uri = object.objectID.uriRepresentation
            store.emit(.detail(levels: 1...2, category: "annotation") { "fault fulfilled from database for : \(uri)" })
            let values = row.description
            store.emit(.detail(levels: 3...4, category: "annotation") { "fault fulfilled from database for : \(uri) with row values: \(values)" })
        }
        faultObserver?(FaultEvent(kind: .object, objectID: object.objectID, origin: object.faultOrigin))
        return true
    }

    func fill(_ object: ManagedObject, from row: StoreRow) {
        if object.storage.isEmpty && object.committed.isEmpty {
            // A fresh fault: the row holds exactly its attributes and to-ones, so both
            // dictionaries share the row's storage (no per-key copying).
            object.storage = row.values
            object.committed = row.values
            object.version = row.version
            object.isFault = false
            return
        }
        // To-many relationships already fired stay as they are.
        for attribute in object.entity.attributes where !attribute.isTransient {
            object.storage[attribute.name] = row.values[attribute.name]
            object.committed[attribute.name] = row.values[attribute.name]
        }
        for relationship in object.entity.relationships where relationship.isToOne {
            object.storage[relationship.name] = row.values[relationship.name]
            object.committed[relationship.name] = row.values[relationship.name]
        }
        object.version = row.version
        object.isFault = false
    }

    /// The destination objects of a to-many relationship, firing its fault the first time: one
    /// SELECT of the destination IDs; the destinations are faults until touched.
    func fireRelationshipFault(_ relationship: RelationshipDescription, of object: ManagedObject) throws -> [ManagedObject] {
        if let ids = object.storage[relationship.name] as? [ManagedObjectID] {
            return ids.map { self.object(with: $0) }
        }
        if parent != nil, !object.isInserted { return try relationshipFromParent(relationship, of: object) }
        if object.objectID.isTemporaryID {
            let ids = object.pendingToMany.removeValue(forKey: relationship.name)?.applied(to: []) ?? []
            object.storage[relationship.name] = ids
            return ids.map { self.object(with: $0) }
        }
        coordinator.storeLock.lock(); defer { coordinator.storeLock.unlock() }
        var ids = try store.fetchToManyIDs(relationship, of: object.objectID)
        object.committed[relationship.name] = ids
        if let pending = object.pendingToMany.removeValue(forKey: relationship.name) {
            ids = pending.applied(to: ids)
        }
        object.storage[relationship.name] = ids
        let origin = "\(object.entity.name).\(relationship.name)"
        faultObserver?(FaultEvent(kind: .toMany, objectID: object.objectID, origin: origin))
        return ids.map { self.object(with: $0, reachedThrough: origin) }
    }
}

/// The objects of a batched fetch, loaded a batch at a time.
final class FaultBatch {
    let entityName: String
    let keys: ObjectKeys
    let size: Int
    let prefetching: [String]
    /// The properties each batch loads (a batched fetch of partial objects); nil for all.
    let properties: [FetchProperty]?

    init(entityName: String, keys: ObjectKeys, size: Int, prefetching: [String], properties: [FetchProperty]? = nil) {
        self.entityName = entityName
        self.keys = keys
        self.size = size
        self.prefetching = prefetching
        self.properties = properties
    }

    /// The indexes of the batch that holds `index`.
    func range(containing index: Int) -> Range<Int> {
        let start = (index / size) * size
        return start..<min(start + size, keys.count)
    }

    /// The object at `index` of the fetch: the registered one, or a fault that loads its
    /// whole batch when touched.
    func object(at index: Int, in context: ManagedObjectContext) -> ManagedObject {
        let object = context.object(with: keys.id(at: index))
        if object.isFault { object.batchPosition = (self, index) }
        return object
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
        /// A batch of a batched fetch was loaded, in one statement.
        case batch
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
public struct FetchRequestError: Error, Sendable, CustomStringConvertible, Equatable {
    /// A sentence saying what is wrong.
    public var message: String

    /// Creates an error.
    public init(_ message: String) { self.message = message }

    public var description: String { message }
}
