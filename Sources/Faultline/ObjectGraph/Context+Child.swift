import FaultlineModel
import Foundation

// Child contexts: a scratch pad on top of another context.
//
// A child fetches through its parent (so it sees the parent's unsaved changes), fires its
// faults from the parent's objects, and its `save()` pushes its inserts, updates and deletes
// into the parent as one undoable change: nothing reaches the store until the parent saves.
// Everything the child asks of the parent runs in `parent.performAndWait`, so the two may
// live on different queues. An object inserted in a child keeps its temporary ID in the
// parent; when the parent's save makes it permanent, the child adopts the permanent ID the
// next time it asks its parent for anything.

/// An object's stored values as a parent context holds them, handed to a child.
struct ParentSnapshot {
    /// Attributes and to-one relationships (IDs), by name.
    var values: [String: Any]
    var version: Int64
}

/// One change a child's save pushes into its parent.
enum ChildChange {
    case insert(ManagedObjectID, entityName: String, values: [String: Any])
    case update(ManagedObjectID, values: [String: Any?], pending: [String: PendingToMany])
    case delete(ManagedObjectID)
}

extension ManagedObjectContext {
    /// Creates a child context of `parent`, confined to the calling thread (like
    /// ``init(coordinator:)``).
    public convenience init(parent: ManagedObjectContext) {
        self.init(parent: parent, concurrencyType: .confinement)
    }

    /// Creates a child context of `parent`: a scratch pad whose fetches go through the parent
    /// (seeing its unsaved changes) and whose ``save()`` pushes inserts, updates and deletes
    /// into the parent (not the store); the parent's save then writes them.
    ///
    /// ```swift
    /// let editor = ManagedObjectContext(parent: viewContext, concurrencyType: .privateQueue)
    /// try editor.performAndWait {
    ///     let asset = try editor.insertObject(entityName: "Asset")
    ///     try asset.setValue("Drone", forKey: "label")
    ///     try editor.save()             // now an inserted object of viewContext
    /// }
    /// try viewContext.save()            // INSERT INTO ZASSET …
    /// ```
    ///
    /// The child calls the parent with `performAndWait`; a child of a confinement parent
    /// must be used on that parent's thread.
    public convenience init(parent: ManagedObjectContext, concurrencyType: ConcurrencyType) {
        parent.concurrency.addChild()
        self.init(coordinator: parent.coordinator, parent: parent, concurrencyType: concurrencyType)
        mergePolicy = parent.mergePolicy
    }

    // MARK: Child side

    /// A child's fetch: the parent fetches (with its pending changes), the child registers
    /// the objects, filled from the parent's values where the parent had them loaded.
    func fetchFromParent(_ request: FetchRequest) throws -> [ManagedObject] {
        guard let parent else { return [] }
        adoptPermanentIDsFromParent()
        var parentRequest = request
        parentRequest.includesPendingChanges = true
        let rows: [(ManagedObjectID, ParentSnapshot?)] = try parent.performAndWait {
            try parent.fetchObjects(parentRequest).map { ($0.objectID, $0.isFault ? nil : parent.snapshot(of: $0)) }
        }
        return rows.map { id, snapshot in
            let object = self.object(with: id)
            if object.isFault, let snapshot { fill(object, fromParent: snapshot) }
            return object
        }
    }

    /// A child's fault fires from the parent's object (whose own fault fires if need be).
    /// False (the object left a fault) when the parent has no row for it: the parent's object
    /// is a fault whose row is gone, or was deleted as one.
    func fireFaultFromParent(_ object: ManagedObject) throws -> Bool {
        guard let parent else { return true }
        adoptPermanentIDsFromParent()
        let id = object.objectID
        guard let snapshot = try parent.performAndWait({ try parent.snapshotForChild(id) }) else { return false }
        fill(object, fromParent: snapshot)
        return true
    }

    /// A child's to-many fault fires with the IDs the parent's object holds now; the child's
    /// own pending changes go on top.
    func relationshipFromParent(_ relationship: RelationshipDescription, of object: ManagedObject) throws -> [ManagedObject] {
        guard let parent else { return [] }
        adoptPermanentIDsFromParent()
        let id = object.objectID
        let name = relationship.name
        var ids = try parent.performAndWait { () throws -> [ManagedObjectID] in
            let source = try parent.objectForChild(id)
            // Its row gone (found so now, or before): no destinations, as a root context reads.
            if source.isInaccessible { return [] }
            if source.isFault, !(try parent.fireFaultIfRowExists(source)) { return [] }
            guard let relationship = source.entity.relationship(named: name) else { return [] }
            return try parent.relatedIDs(of: source, relationship)
        }
        object.committed[name] = ids
        if let pending = object.pendingToMany.removeValue(forKey: name) { ids = pending.applied(to: ids) }
        object.storage[name] = ids
        return ids.map { self.object(with: $0) }
    }

    func fill(_ object: ManagedObject, fromParent snapshot: ParentSnapshot) {
        for (key, value) in snapshot.values {
            object.storage[key] = value
            object.committed[key] = value
        }
        object.rowVersion = snapshot.version
        object.isFault = false
        if callsLifecycleHooks(of: object) { awakeFromFetch(object) }
    }

    /// A child's refresh: the object becomes a fault that fires from the parent again, or,
    /// merging, takes the parent's values with its own changes on top.
    func refreshFromParent(_ object: ManagedObject, mergeChanges: Bool) {
        if mergeChanges, object.hasPersistentChangedValues, let parent {
            let id = object.objectID
            if let snapshot = try? parent.performAndWait({ try parent.snapshotForChild(id) }) {
                let changes = object.changedValueIDs()
                object.storage.removeAll()
                object.committed.removeAll()
                fill(object, fromParent: snapshot)
                for (key, value) in changes { object.storage[key] = value }
                return
            }
        }
        turnIntoFault(object)
    }

    /// ``mergeChanges(fromContextDidSave:)-(SaveNotification)`` in a child: updated objects refresh from the
    /// parent (merge the notification into the parent first), deleted ones are forgotten.
    func mergeChangesIntoChild(_ notification: SaveNotification) {
        adoptPermanentIDsFromParent()
        refreshAndForget(notification)
    }

    /// The merge of a save into this context's objects: updated ones refresh (keeping their
    /// own changes on top), deleted ones are forgotten.
    func refreshAndForget(_ notification: SaveNotification) {
        for id in notification.updatedObjectIDs {
            guard let object = registry[id] else { continue }
            if object.hasPersistentChangedValues {
                refresh(object, mergeChanges: true)
            } else if !object.isFault {
                refresh(object, mergeChanges: false)
            } else {
                noteRefresh(object)
            }
        }
        for id in notification.deletedObjectIDs {
            guard let object = registry[id] else { continue }
            forget(object)
        }
    }

    /// A child's save: delete rules and validation run here, then every change is pushed into
    /// the parent in one `performAndWait` (one undo step there). Nothing is written to the
    /// store. Afterwards the child has no changes; objects it inserted keep their temporary
    /// IDs until the parent saves them. Returns the IDs pushed (for ``didSave``) and the
    /// objects deleted.
    ///
    /// - Throws: ``ObjectValidationError``; ``ManagedObjectError`` (`notInContext`) when an object
    ///   changed here no longer exists in the parent. On failure the parent is unchanged and
    ///   the child keeps its changes.
    func saveToParent() throws -> (SaveNotification, SavedObjects)? {
        guard let parent, hasChanges || !touched.isEmpty else { return nil }
        try processPendingChanges()
        try validatePendingChanges()
        try throwAccessorError()  // kept by a read during the validation: this save's
        adoptPermanentIDsFromParent()
        var changes: [ChildChange] = []
        var inserted: [ManagedObjectID] = []
        var updated: [ManagedObjectID] = []
        var deleted: [ManagedObjectID] = []
        for object in ManagedObjectContext.inSaveOrder(touched.objects) {
            if object.isInserted && object.isDeleted { continue }
            if object.isInserted {
                changes.append(.insert(object.objectID, entityName: object.entity.name, values: object.storage.dictionary))
                inserted.append(object.objectID)
            } else if object.isDeleted {
                changes.append(.delete(object.objectID))
                deleted.append(object.objectID)
            } else if object.hasPersistentChangedValues {
                changes.append(.update(object.objectID, values: object.changedValueIDs(), pending: object.pendingToMany))
                updated.append(object.objectID)
            }
        }
        try parent.performAndWait { try parent.applyChildChanges(changes) }
        var deletedObjects: [ManagedObject] = []
        for object in touched.objects {
            if object.isDeleted {
                if !object.isInserted { deletedObjects.append(object) }
                forget(object)
                continue
            }
            object.isInserted = false
            object.pendingToMany.removeAll()
            if !object.isFault { object.committed = object.storage }
        }
        touched.removeAll()
        propagatedDeletions.removeAll()
        undoStack.removeAll()
        redoStack.removeAll()
        return (
            SaveNotification(insertedObjectIDs: inserted, updatedObjectIDs: updated, deletedObjectIDs: deleted),
            SavedObjects(inserted: inserted.compactMap { registry[$0] }, updated: updated.compactMap { registry[$0] }, deleted: deletedObjects)
        )
    }

    /// Takes the permanent IDs the parent's saves gave to temporary IDs this child holds
    /// (objects it pushed, or saw inserted in the parent). Asks the parent only after it
    /// saved new objects.
    func adoptPermanentIDsFromParent() {
        guard let parent else { return }
        let generation = parent.concurrency.permanentIDGeneration
        guard generation != concurrency.adoptedGeneration else { return }
        concurrency.adoptedGeneration = generation
        let temporary = registry.keys.filter(\.isTemporaryID)
        guard !temporary.isEmpty else { return }
        let map: [ManagedObjectID: ManagedObjectID] = parent.performAndWait {
            var map: [ManagedObjectID: ManagedObjectID] = [:]
            for id in temporary {
                let current = parent.currentID(for: id)
                if current != id { map[id] = current }
            }
            return map
        }
        guard !map.isEmpty else { return }
        var adopted: [ManagedObjectID: ManagedObjectID] = [:]
        for (old, new) in map where registry[new] == nil {
            guard let object = registry.removeValue(forKey: old) else { continue }
            object.objectID = new
            registry[new] = object
            adopted[old] = new
        }
        replaceObjectIDs(map)
        recordPermanentIDs(adopted)
    }

    // MARK: Parent side (on the parent's queue)

    /// Keeps the permanent IDs a save (or an adoption) gave to temporary IDs, for children.
    func recordPermanentIDs(_ map: [ManagedObjectID: ManagedObjectID]) {
        guard !map.isEmpty, concurrency.hasChildren else { return }
        permanentIDs.merge(map) { $1 }
        concurrency.advancePermanentIDGeneration()
    }

    /// The ID an object known by `id` has here now: `id` itself, or the permanent ID a save
    /// gave it.
    func currentID(for id: ManagedObjectID) -> ManagedObjectID {
        guard id.isTemporaryID, registry[id] == nil else { return id }
        if permanentIDs[id] == nil { adoptPermanentIDsFromParent() }
        return permanentIDs[id] ?? id
    }

    /// The object a child means by `id`.
    func objectForChild(_ id: ManagedObjectID) throws -> ManagedObject {
        let current = currentID(for: id)
        if let object = registry[current] { return object }
        if current.isTemporaryID {
            throw ManagedObjectError(.notInContext, entity: id.entityName, objectID: id, "the parent context has no object \(id.uriRepresentation) (it was never pushed to it, or was rolled back)")
        }
        return object(with: current)
    }

    /// The values a child's fault fires with; nil when the object's row is gone (a fault that
    /// cannot fire, or one deleted as inaccessible).
    func snapshotForChild(_ id: ManagedObjectID) throws -> ParentSnapshot? {
        let object = try objectForChild(id)
        if object.isInaccessible { return nil }
        guard try fireFaultIfRowExists(object) else { return nil }
        return snapshot(of: object)
    }

    func snapshot(of object: ManagedObject) -> ParentSnapshot {
        var values: [String: Any] = [:]
        for attribute in object.entity.attributes {
            if let value = object.storage[attribute.name] { values[attribute.name] = value }
        }
        for relationship in object.entity.relationships where relationship.isToOne {
            if let value = object.storage[relationship.name] { values[relationship.name] = value }
        }
        return ParentSnapshot(values: values, version: object.rowVersion)
    }

    /// Applies a child's save: checks every object exists first (so a failure changes
    /// nothing), then applies all changes as one undo step.
    func applyChildChanges(_ changes: [ChildChange]) throws {
        var targets: [ManagedObjectID: ManagedObject] = [:]
        for change in changes {
            switch change {
            case .insert: continue
            case .update(let id, _, _), .delete(let id): targets[id] = try objectForChild(id)
            }
        }
        func resolved(_ value: Any?) -> Any? {
            if let id = value as? ManagedObjectID { return currentID(for: id) }
            if let ids = value as? [ManagedObjectID] { return ids.map(currentID(for:)) }
            return value
        }
        try recordingChanges {
            for change in changes {
                switch change {
                case .insert(let id, let entityName, let values):
                    guard let entity = model.entity(named: entityName) else { continue }
                    let object = makeObject(entity: entity, objectID: id, isFault: false)
                    for (key, value) in values { object.storage[key] = resolved(value) }
                    nextInsertionSequence += 1
                    object.insertionSequence = nextInsertionSequence
                    willChange(object, new: true)
                    object.isInserted = true
                    if registry[id] != nil { link.mayHoldUnregisteredObjects = true }  // the one replaced keeps the link
                    registry[id] = object
                case .update(let id, let values, let pending):
                    guard let object = targets[id] else { continue }
                    if !values.isEmpty { try fireFault(object) }
                    willChange(object)
                    for (key, value) in values { object.storage[key] = resolved(value) }
                    for (key, change) in pending {
                        let added = change.added.map(currentID(for:))
                        let removed = Set(change.removed.map(currentID(for:)))
                        if let ids = object.storage.objectIDs(forKey: key) {
                            object.storage[key] = PendingToMany(added: added, removed: removed).applied(to: ids)
                            continue
                        }
                        var merged = object.pendingToMany[key] ?? PendingToMany()
                        for id in removed {
                            merged.added.removeAll { $0 == id }
                            merged.removed.insert(id)
                        }
                        for id in added {
                            merged.removed.remove(id)
                            if !merged.added.contains(id) { merged.added.append(id) }
                        }
                        object.pendingToMany[key] = merged
                    }
                case .delete(let id):
                    guard let object = targets[id] else { continue }
                    delete(object)
                }
            }
        }
    }
}
