import FaultlineModel
import FaultlineSQL
import Foundation

/// Rows whose version changed in the store; thrown inside the save's transaction so that it
/// rolls back.
struct ConflictsFound: Error {
    var objectIDs: [ManagedObjectID]
}


/// What a committed save leaves to do: the external data files no row names any more (the
/// keys of new objects are in the plan's inserts).
struct SaveOutcome {
    var obsoleteExternalFiles: [String]
}

extension ManagedObjectContext {
    /// Writes every change to the store in one transaction, Core Data's way:
    ///
    /// 1. `BEGIN EXCLUSIVE` (waiting up to the connection's busy timeout for other writers);
    /// 2. per inheritance root with new objects, keys reserved in `Z_PRIMARYKEY`:
    ///    `SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = ?`, then
    ///    `UPDATE OR FAIL Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_ENT = ? AND Z_MAX = ?`;
    /// 3. `INSERT INTO ZT(Z_PK, Z_ENT, Z_OPT, …) VALUES(?, …)` per new object (`Z_OPT` 1);
    /// 4. `UPDATE ZT SET <changed columns>, Z_OPT = ? WHERE Z_PK = ? AND Z_OPT = ?` per
    ///    changed row (foreign keys, `Z<n>_` entity columns, `Z_FOK_` positions and hidden
    ///    foreign keys included);
    /// 5. `DELETE FROM ZT WHERE Z_PK = ? AND Z_OPT = ?` per deleted object;
    /// 6. many-to-many join rows deleted, inserted, re-positioned;
    /// 7. in a store with persistent history, the transaction and its changes
    ///    (`ATRANSACTIONSTRING`, `ATRANSACTION`, `ACHANGE`);
    /// 8. `COMMIT`.
    ///
    /// Binary values bigger than the store's external-data threshold are written to their
    /// files before the statements (and removed again if the save fails); files that rows no
    /// longer name are removed after `COMMIT`.
    ///
    /// Before the transaction: delete rules are applied (``processPendingChanges()``) and
    /// everything is validated; afterwards temporary IDs become permanent
    /// (`x-coredata://<UUID>/Asset/p6`), the undo stack is cleared and ``didSave`` is called.
    /// Every value is bound. On any failure nothing is written and the context keeps all
    /// its changes, so the save can be retried.
    ///
    /// - Throws: ``PersistentStoreError`` (`readOnly`) for a read-only store; ``ObjectValidationError``
    ///   with every failure; ``MergeConflictError`` when rows changed in the store since they
    ///   were read and ``mergePolicy`` is `.error`; a SQLite error (e.g. busy after the
    ///   timeout).
    /// A child context's save writes nothing: it pushes its changes into its parent (see
    /// "Child contexts" in Architecture.md). ``didSave`` is called after the store is unlocked, so it may hand
    /// the notification to another context's queue.
    ///
    /// Observers are told as in Core Data (`Context+Observation.swift`): a save with changes
    /// posts ``willSaveNotification`` first (changes an observer makes are saved too), then
    /// ``processPendingChanges()`` posts ``objectsDidChangeNotification``; after the commit
    /// come ``didSaveNotification`` (objects) and ``didSaveObjectIDsNotification`` (IDs), a
    /// `.didSave` event on the ``changes`` streams, and ``didSave``. A save with nothing to
    /// save posts nothing.
    public func save() throws {
        checkAccess()
        try throwAccessorError()
        guard hasChanges || !touched.isEmpty else { return }
        announce(.willSave, ChangedObjects())
        // The save's own objects-did-change is kept for its did-save, which often lists the
        // same objects (see `announceSave`); only for this call.
        keepsAnnouncedObjects = true
        defer {
            keepsAnnouncedObjects = false
            announcedObjects = nil
            announcedLists = nil
        }
        try processPendingChanges()
        if !classBindings.isEmpty {
            // Each changed object's willSave; changes made there (deletions too) are saved.
            let before = changeCount
            touchedInSaveOrder().forEachBorrowed { object in
                if object.isInserted != object.isDeleted || object.isUpdated, callsLifecycleHooks(of: object) { object.willSave() }
            }
            if changeCount != before { try processPendingChanges() }
            try throwAccessorError()
        }
        let saved: (SaveNotification, SavedObjects)?
        if parent != nil {
            saved = try saveToParent()
        } else {
            saved = try saveToStore()
        }
        guard let (notification, objects) = saved else { return }
        if !classBindings.isEmpty {
            // List by list: one array of them all retained every object again.
            for list in [objects.inserted, objects.updated, objects.deleted] {
                list.forEachBorrowed { object in
                    if callsLifecycleHooks(of: object) { object.didSave() }
                }
            }
        }
        announceSave(notification, objects)
    }

    /// Throws the first error kept by a setter or a read that could not throw (and forgets
    /// them all): at the start of a save, after its `willSave()` pass and after its validation,
    /// so that one kept during the save is this save's.
    func throwAccessorError() throws {
        guard let error = accessorErrors.first else { return }
        accessorErrors.removeAll()
        throw error
    }

    /// The objects a save wrote (its notification has their IDs), handed on so that the
    /// announcements and `didSave` need no registry lookup per object (a cache miss each in a
    /// big context). Inserted and updated objects are registered; deleted ones no longer are.
    struct SavedObjects {
        var inserted: [ManagedObject] = []
        var updated: [ManagedObject] = []
        var deleted: [ManagedObject] = []
    }

    /// The save's work, with the coordinator's store lock held; nil when there was nothing to
    /// save. Returns what it wrote: the notification's IDs and the objects (``SavedObjects``).
    private func saveToStore() throws -> (SaveNotification, SavedObjects)? {
        guard hasChanges || !touched.isEmpty else { return nil }
        coordinator.storeLock.lock(); defer { coordinator.storeLock.unlock() }
        // A guessed or unchecked model could write wrong types, lose external-storage
        // markers and the like: Core Data never writes without the store's real model.
        if store.isReadOnly {
            throw PersistentStoreError(.readOnly, store.readOnlyReason ?? "the store is read-only: save refused, nothing was written", path: store.path)
        }
        try processPendingChanges()
        try validatePendingChanges()
        try throwAccessorError()
        // A fault found gone (deleted as inaccessible) that other changes of this save still
        // point at: writing them would leave a foreign key naming a row that is gone, so the
        // save fails with the conflict, whatever the policy — as when the save itself finds
        // the row gone (`resolveConflicts`).
        let dangling = touchedInSaveOrder().filter { $0.isInaccessible && $0.isDeleted && isReferencedByPendingChanges($0) }
        if !dangling.isEmpty {
            throw MergeConflictError(conflicts: dangling.map { MergeConflict(objectID: $0.objectID, objectVersion: $0.rowVersion, storeVersion: nil) })
        }
        var overwrite: Set<ObjectIdentifier> = []
        var attempts = 0
        var constraintMerges = 0
        while true {
            attempts += 1
            var plan: SavePlan
            let outcome: SaveOutcome
            do {
                plan = try makeSavePlan(overwrite: overwrite)
            } catch let found as ConflictsFound {
                try resolveConflicts(found.objectIDs.compactMap { registry[$0] }, overwrite: &overwrite, lastAttempt: attempts >= 5)
                continue
            }
            _ = store.triggerReports.drain()
            do {
                outcome = try store.withWriteTransaction { try execute(&plan) }
            } catch {
                // Nothing was committed: the files written for it name no row.
                store.removeExternalFiles(plan.externalWrites.map(\.name))
                if let conflict = error as? ConstraintConflictError, mergePolicy != .error, constraintMerges < touched.count + 1,
                    try resolveConstraintConflict(conflict)
                {
                    constraintMerges += 1
                    continue
                }
                guard let found = error as? ConflictsFound else { throw error }
                try resolveConflicts(found.objectIDs.compactMap { registry[$0] }, overwrite: &overwrite, lastAttempt: attempts >= 5)
                continue
            }
            store.removeExternalFiles(outcome.obsoleteExternalFiles)
            let notification = finishSave(plan)
            plan.recycleBuffers()
            applyTriggerReports(store.triggerReports.drain())
            return notification
        }
    }

    func entityNumber(_ name: String) -> Int { store.entityNumber(of: name) }

    // MARK: Writing

    /// Runs a plan inside the save's transaction (the keys given to new objects are set in
    /// its inserts); returns the external data files that rows will no longer name once it
    /// commits.
    private func execute(_ plan: inout SavePlan) throws -> SaveOutcome {
        var obsolete: [String] = []
        for row in plan.externalReplaced where store.url != nil {
            obsolete += try store.externalReferences(table: row.table, primaryKey: row.primaryKey, columns: row.columns)
        }
        try store.writeExternalFiles(plan.externalWrites)
        // The inserts by inheritance root, in order; they come in runs of one entity, each
        // run added to its root's list at once (not a hashed name per insert).
        var byRoot: [String: [Int]] = [:]
        var run: (entity: String, root: String, inserts: [Int])?
        for index in plan.inserts.indices {  // by index: a RowChange copied costs its arrays' retains
            let name = plan.inserts[index].object.entity.name
            if run?.entity != name {
                if let run { byRoot[run.root, default: []] += run.inserts }
                run = (name, model.rootEntity(of: plan.inserts[index].object.entity).name, [])
            }
            run?.inserts.append(index)
        }
        if let run { byRoot[run.root, default: []] += run.inserts }
        for root in byRoot.keys.sorted(by: { entityNumber($0) < entityNumber($1) }) {
            let inserts = byRoot[root] ?? []
            let first = try store.reservePrimaryKeys(root: root, count: inserts.count)
            for (offset, index) in inserts.enumerated() { plan.inserts[index].setReservedKey(first + Int64(offset)) }
        }
        // The new objects' keys by temporary ID, for the values that name another new object
        // (to-ones, join rows, history) and errors: made only when something needs them (a
        // hashed insertion and two look-ups per new object otherwise).
        let namesNewObjects = plan.inserts.contains { !$0.unresolved.isEmpty } || plan.updates.contains { !$0.unresolved.isEmpty }
            || !plan.joinDeletes.isEmpty || !plan.joinInserts.isEmpty || !plan.joinOrderUpdates.isEmpty || !plan.history.isEmpty
        let keys = namesNewObjects ? Self.reservedKeys(of: plan) : [:]
        func key(_ id: ManagedObjectID) -> Int64 { id.isTemporaryID ? keys[id] ?? 0 : id.primaryKey }
        if !keys.isEmpty { plan.resolveKeys(keys) }
        do {
            try store.insertRows(plan.inserts)
        } catch let violation as SQLiteStore.UniqueViolation {
            let insert = plan.inserts[violation.index]
            throw constraintConflict(violation.error, object: insert.object, table: insert.table, keys: Self.reservedKeys(of: plan))
        }
        var conflicts: [ManagedObject] = []
        do {
            let stale = try store.updateRows(plan.updateBatch)
            conflicts += stale.map { plan.updates[$0].object }
        } catch let violation as SQLiteStore.UniqueViolation {
            let update = plan.updates[violation.index]
            let table = plan.updateBatch.table(ofRow: violation.index)
            throw constraintConflict(violation.error, object: update.object, table: table, keys: Self.reservedKeys(of: plan))
        }
        for object in plan.deletes {
            guard let table = store.mapping.entity(object.entity.name)?.table else { continue }
            if !(try store.deleteRow(table: table, primaryKey: object.objectID.primaryKey, version: object.rowVersion)) {
                conflicts.append(object)
            }
        }
        for id in plan.referencedRows {
            guard let table = store.mapping.entity(id.entityName)?.table else { continue }
            if !(try store.rowExists(table: table, primaryKey: id.primaryKey)) { conflicts.append(self.object(with: id)) }
        }
        if !conflicts.isEmpty { throw ConflictsFound(objectIDs: conflicts.map(\.objectID)) }
        for (join, row) in plan.joinDeletes {
            try store.deleteJoinRow(join, source: key(row.source), destination: key(row.destination))
        }
        for insert in plan.joinInserts {
            do {
                try store.insertJoinRow(
                    insert.join, source: key(insert.row.source), destination: key(insert.row.destination),
                    sourceOrder: insert.sourceOrder, destinationOrder: insert.destinationOrder)
            } catch let error as SQLiteError where error.code == 1555 || error.code == 2067 {  // the key (a, b), or UNIQUE
                // Another writer related the same two objects since they were read: a conflict on
                // both, which the merge policy resolves (the retry sees the stored row), never a
                // raw constraint error.
                let stored = [insert.row.source, insert.row.destination].filter { !$0.isTemporaryID }
                if stored.isEmpty { throw error }
                throw ConflictsFound(objectIDs: stored)
            }
        }
        for update in plan.joinOrderUpdates {
            try store.updateJoinOrder(update.join, column: update.column, order: update.order, source: key(update.row.source), destination: key(update.row.destination))
        }
        if !plan.history.isEmpty {
            let process = ProcessInfo.processInfo.processName
            try store.recordHistory(
                plan.history,
                by: HistoryAuthor(author: transactionAuthor, bundleID: Bundle.main.bundleIdentifier ?? process, contextName: name, processID: process),
                key: key)
        }
        return SaveOutcome(obsoleteExternalFiles: obsolete.filter { !plan.externalKept.contains($0) })
    }

    /// The keys reserved for a plan's new objects, by temporary ID.
    private static func reservedKeys(of plan: SavePlan) -> [ManagedObjectID: Int64] {
        var keys: [ManagedObjectID: Int64] = [:]
        keys.reserveCapacity(plan.inserts.count)
        for index in plan.inserts.indices {
            if let key = plan.inserts[index].reservedKey { keys[plan.inserts[index].object.objectID] = key }
        }
        return keys
    }

    /// Core Data's constraint conflict for a row SQLite refused on a unique index: the
    /// model's constraint whose columns SQLite names, the values written, and the rows that
    /// already hold them (looked up inside the save's transaction, before it rolls back).
    private func constraintConflict(_ error: SQLiteError, object: ManagedObject, table: String, keys: [ManagedObjectID: Int64]) -> Error {
        guard let mapping = store.mapping.entity(object.entity.name) else { return error }
        // "UNIQUE constraint failed: ZRECIPE.ZNAME, ZRECIPE.ZTYPE"
        let named = Set(error.message.components(separatedBy: "failed:").last?.split(separator: ",").compactMap {
            $0.split(separator: ".").last.map { String($0).trimmingCharacters(in: .whitespaces) }
        } ?? [])
        func column(_ property: String) -> String? { mapping.attributeColumns[property] ?? mapping.toOneColumns[property]?.foreignKey }
        let constraints = model.inheritanceChain(of: object.entity).flatMap(\.uniquenessConstraints)
        guard let constraint = constraints.first(where: { Set($0.compactMap(column)) == named }) else { return error }
        var values: [String: String] = [:]
        var columns: [String] = []
        var arguments: [SQLValue] = []
        for property in constraint {
            guard let name = column(property) else { return error }
            let value: SQLValue
            if let attribute = object.entity.attribute(named: property) {
                value = ValueCoding.encode(object.storage[property], as: attribute.attributeType)
                values[property] = (object.storage[property] ?? nil).map { "\($0)" } ?? "nil"
            } else if let id = object.storage.objectID(forKey: property) {
                value = .integer(id.isTemporaryID ? keys[id] ?? 0 : id.primaryKey)
                values[property] = id.uriRepresentation
            } else {
                value = .null
                values[property] = "nil"
            }
            columns.append(name)
            arguments.append(value)
        }
        let ownKey = object.objectID.isTemporaryID ? keys[object.objectID] ?? 0 : object.objectID.primaryKey
        var others: [ManagedObjectID] = []
        for (key, number) in store.rowsHolding(table: table, columns: columns, values: arguments, except: ownKey) {
            guard let entityName = store.mapping.entityNames[Int(number)] else { continue }
            // A row inserted earlier in this same save is named by its new object's ID.
            let newObject = keys.first { $0.value == key && $0.key.entityName == entityName }?.key
            others.append(newObject ?? ManagedObjectID(entityName: entityName, storeIdentifier: store.identifier, primaryKey: key))
        }
        return ConstraintConflictError(entityName: object.entity.name, constraint: constraint, objectID: object.objectID, conflictingObjectIDs: others, values: values)
    }

    // MARK: After the commit

    private func finishSave(_ plan: SavePlan) -> (SaveNotification, SavedObjects) {
        // Temporary IDs become permanent, everywhere they are held. The pairs are kept in a
        // list; the map from one to the other is made only when something holds a temporary
        // ID (a value of a changed object, a child context): a save of new objects that name
        // no other new object hashes no temporary ID.
        var renamed: [(temporary: ManagedObjectID, permanent: ManagedObjectID)] = []
        renamed.reserveCapacity(plan.inserts.count)
        var map: [ManagedObjectID: ManagedObjectID]?
        func permanentMap() -> [ManagedObjectID: ManagedObjectID] {
            if let map { return map }
            var made: [ManagedObjectID: ManagedObjectID] = [:]
            made.reserveCapacity(renamed.count)
            for pair in renamed { made[pair.temporary] = pair.permanent }
            map = made
            return made
        }
        let bulk = withoutTemporaryIDs(plan)
        var names: (entity: String, names: UInt32)?  // inserts come in runs of one entity
        // By index (a RowChange copied costs its arrays' retains), last first: the registry's
        // temporary IDs are removed from the end of their hash groups (see
        // `forgetUnreferencedObjects(_:)`).
        for index in plan.inserts.indices.reversed() {
            let object = plan.inserts[index].object
            guard let key = plan.inserts[index].reservedKey else { continue }
            if names?.entity != object.entity.name { names = (object.entity.name, store.idNames(entityName: object.entity.name)) }
            let id = ManagedObjectID(names: names?.names ?? store.idNames(entityName: object.entity.name), primaryKey: key)
            renamed.append((object.objectID, id))
            if !bulk { registry[object.objectID] = nil }
            registry[id] = object
            object.objectID = id
            object.isInserted = false
            object.rowVersion = 1
        }
        if concurrency.hasChildren, !renamed.isEmpty { recordPermanentIDs(permanentMap()) }
        for index in plan.updates.indices { plan.updates[index].object.rowVersion += 1 }
        var deletedIDs: [ManagedObjectID] = []
        var deletedObjects: [ManagedObject] = []
        for object in plan.deletes + plan.forgotten {
            if !object.isInserted {
                deletedIDs.append(object.objectID)
                deletedObjects.append(object)
            }
            if registry[object.objectID] === object { registry[object.objectID] = nil }
            object.managedObjectContext = nil
        }
        // Temporary IDs become permanent in the values that hold them: only objects changed in
        // this save can (relating an object to a new one changes both sides). One pass over
        // the changed objects, which also commits their values: a loaded object's committed
        // values become its values, IDs replaced, and its pending to-many edits are dropped,
        // so only its values need replacing; a deleted object or a fault is replaced whole.
        // In save order (the plan's sort, kept while the changed objects do not change): new
        // objects in the order they were made, stored ones by key — through memory in order,
        // where the table's order jumped about.
        // Asked once: `renamed` is captured by `permanentMap()`, and each read of it in the
        // loop was checked for exclusive access at run time (`swift_beginAccess`).
        let anyRenamed = !renamed.isEmpty
        touchedInSaveOrder().forEachBorrowed { object in
            if anyRenamed, object.isDeleted || object.isFault { replaceObjectIDs(permanentMap(), in: CollectionOfOne(object)) }
            guard !object.isDeleted else { return }
            if object.extras != nil { object.pendingToMany.removeAll() }
            if !object.isFault {
                if anyRenamed, object.storage.holdsTemporaryIDs { object.storage.replaceObjectIDs(permanentMap()) }
                object.committed = object.storage
            }
        }
        var updatedObjects = plan.changed
        if !plan.updatedBeyondChanged.isEmpty {
            // In the order of the plan's updates, as their IDs are.
            let beyond = Set(plan.updatedBeyondChanged)
            for index in plan.updates.indices where beyond.contains(plan.updates[index].object.objectID) {
                updatedObjects.append(plan.updates[index].object)
            }
        }
        let updatedIDs = plan.changed.map(\.objectID) + plan.updatedBeyondChanged
        touched.removeAll()
        propagatedDeletions.removeAll()
        undoStack.removeAll()
        redoStack.removeAll()
        let insertedObjects = plan.inserts.indices.map { plan.inserts[$0].object }
        return (
            SaveNotification(insertedObjectIDs: insertedObjects.map(\.objectID), updatedObjectIDs: updatedIDs, deletedObjectIDs: deletedIDs),
            SavedObjects(inserted: insertedObjects, updated: updatedObjects, deleted: deletedObjects)
        )
    }

    /// Takes every temporary ID out of the registry at once, before a save's new objects are
    /// registered under their permanent IDs, when they are at least half of it: one pass
    /// over the table into a new one sized for what stays and what comes, instead of a
    /// removal per new object (a look-up and a shift of its neighbours in a table of, say,
    /// 100,000). Only when every new object got its key and the objects registered by a
    /// temporary ID are all new ones, as many as the save's new and forgotten objects (a new
    /// object stays registered and changed until it is saved; an undone insert leaves both):
    /// otherwise — a fault for another context's new object, say — each key is removed one
    /// by one, and the others keep their places. True when done.
    private func withoutTemporaryIDs(_ plan: SavePlan) -> Bool {
        let saved = plan.inserts.count + plan.forgotten.count
        guard plan.inserts.count * 2 >= registry.count, !plan.inserts.isEmpty,
            plan.inserts.allSatisfy({ $0.reservedKey != nil })
        else { return false }
        var temporary = 0
        // Registered by a temporary ID and not inserted (a fault for another context's new
        // object): it stays, key by key.
        let faultOfAnotherContext = registry.contains { id, object in
            guard id.isTemporaryID else { return false }
            temporary += 1
            return !object.isInserted
        }
        guard !faultOfAnotherContext, temporary == saved else { return false }
        registry.filter(reservingExtra: plan.inserts.count) { !$0.isTemporaryID }
        return true
    }

    /// Replaces object IDs held in loaded values, committed values and pending to-many edits
    /// of every registered object (temporary IDs that became permanent).
    func replaceObjectIDs(_ map: [ManagedObjectID: ManagedObjectID]) {
        replaceObjectIDs(map, in: registry.values)
    }

    /// ``replaceObjectIDs(_:)`` in some of the registered objects.
    func replaceObjectIDs<S: Sequence<ManagedObject>>(_ map: [ManagedObjectID: ManagedObjectID], in objects: S) {
        for object in objects where !object.isFault || !object.pendingToMany.isEmpty {
            object.storage.replaceObjectIDs(map)
            object.committed.replaceObjectIDs(map)
            for (key, pending) in object.pendingToMany {
                object.pendingToMany[key] = PendingToMany(
                    added: pending.added.map { map[$0] ?? $0 }, removed: Set(pending.removed.map { map[$0] ?? $0 }))
            }
        }
    }

    /// Gives registered objects the values the store's triggers wrote during the save (a
    /// derived attribute, a counter), as Core Data does: the object shows the stored value
    /// without a refetch. Faults need nothing: they will read the row.
    private func applyTriggerReports(_ reports: [TriggerReport]) {
        for report in reports {
            guard let entityName = store.mapping.entityNames[report.entityNumber], let entity = store.model.entity(named: entityName),
                let mapping = store.mapping.entity(entityName)
            else { continue }
            let id = ManagedObjectID(entityName: entityName, storeIdentifier: store.identifier, primaryKey: report.primaryKey)
            let attribute = entity.attribute(named: report.name)
                ?? entity.attributes.first { mapping.attributeColumns[$0.name] == report.name }
            guard let attribute, let object = registry[id], !object.isFault else { continue }
            let value = ValueCoding.decode(report.value, as: attribute.attributeType)
            object.storage[attribute.name] = value
            object.committed[attribute.name] = value
        }
    }

    // MARK: Conflicts

    /// Resolves a uniqueness-constraint conflict of a new object as Core Data's merge policies
    /// do (`NSMergePolicy` with `NSConstraintConflict`): the new object and the object that
    /// already holds the values become one — the existing one. Under object trump and
    /// overwrite the new object's values replace the existing one's; under store trump and
    /// rollback the existing one's are kept. Either way the new object's relationships move to
    /// the existing object (a to-one only where the existing one has none, under store trump
    /// and rollback), so what pointed at the new object points at the existing one, and the
    /// new object is not saved. Returns false for a conflict it does not resolve (a changed
    /// stored object, rather than a new one), which then fails the save.
    private func resolveConstraintConflict(_ conflict: ConstraintConflictError) throws -> Bool {
        guard let duplicate = registry[conflict.objectID], duplicate.isInserted, !duplicate.isDeleted,
            let existingID = conflict.conflictingObjectIDs.first(where: { $0 != conflict.objectID })
        else { return false }
        let existing = object(with: existingID)
        guard existing !== duplicate, !existing.isDeleted else { return false }
        if existing.isFault { try fireFault(existing) }
        let newWins = mergePolicy == .mergeByPropertyObjectTrump || mergePolicy == .overwrite
        if newWins {
            for attribute in duplicate.entity.attributes where !attribute.isTransient && existing.entity.attribute(named: attribute.name) != nil {
                guard let value = duplicate.value(forKey: attribute.name) else { continue }
                try existing.setValue(value, forKey: attribute.name)
            }
        }
        for relationship in duplicate.entity.relationships where existing.entity.relationship(named: relationship.name) != nil {
            if relationship.isToMany {
                let moving = duplicate.value(forKey: relationship.name) as? [ManagedObject] ?? []
                let held = Set((existing.value(forKey: relationship.name) as? [ManagedObject] ?? []).map(ObjectIdentifier.init))
                for destination in moving {
                    try duplicate.removeObject(destination, fromRelationship: relationship.name)
                    if !held.contains(ObjectIdentifier(destination)) { try existing.addObject(destination, toRelationship: relationship.name) }
                }
            } else if let destination = duplicate.value(forKey: relationship.name) as? ManagedObject {
                try duplicate.setValue(nil, forKey: relationship.name)
                if newWins || existing.value(forKey: relationship.name) == nil { try existing.setValue(destination, forKey: relationship.name) }
            }
        }
        delete(duplicate)
        try processPendingChanges()
        try validatePendingChanges()
        return true
    }

    private func resolveConflicts(_ objects: [ManagedObject], overwrite: inout Set<ObjectIdentifier>, lastAttempt: Bool) throws {
        var rows: [(ManagedObject, StoreRow?)] = []
        for object in objects {
            rows.append((object, try store.fetchRow(for: object.objectID)))
        }
        if mergePolicy == .error || lastAttempt {
            throw MergeConflictError(conflicts: rows.map { MergeConflict(objectID: $0.0.objectID, objectVersion: $0.0.rowVersion, storeVersion: $0.1?.version) })
        }
        // A row deleted by another writer cannot be written whatever the policy; its object
        // is dropped, unless other changes of this save point at it (a new object related to
        // it): writing those would leave a foreign key naming a row that is gone, so the save
        // fails with the conflict instead.
        let referenced = rows.filter { $0.1 == nil && isReferencedByPendingChanges($0.0) }
        if !referenced.isEmpty {
            throw MergeConflictError(conflicts: referenced.map { MergeConflict(objectID: $0.0.objectID, objectVersion: $0.0.rowVersion, storeVersion: nil) })
        }
        for (object, row) in rows {
            guard let row else {
                forget(object)
                continue
            }
            let changes = object.changedValueIDs()
            let keys = object.entity.attributes.filter { !$0.isTransient }.map(\.name) + object.entity.relationships.filter(\.isToOne).map(\.name)
            switch mergePolicy {
            case .error:
                break
            case .rollback:
                object.isDeleted = false
                propagatedDeletions.remove(ObjectKey(object))
                object.storage.removeAll()
                object.committed.removeAll()
                object.pendingToMany.removeAll()
                object.isFault = true
                fill(object, from: row)
                touched.remove(object)
            case .overwrite:
                object.rowVersion = row.version
                overwrite.insert(ObjectIdentifier(object))
                try rebaseToManyRelationships(of: object, keepingWholeList: true)
            case .mergeByPropertyObjectTrump, .mergeByPropertyStoreTrump:
                try rebaseToManyRelationships(of: object, keepingWholeList: false)
                for key in keys {
                    let stored = row.values[key]
                    let mine = changes[key]
                    let storeChanged = !ManagedObject.valuesEqual(stored, object.committed[key])
                    if let mine, mergePolicy == .mergeByPropertyObjectTrump || !storeChanged {
                        object.storage[key] = mine
                    } else {
                        object.storage[key] = stored
                    }
                    object.committed[key] = stored
                }
                object.rowVersion = row.version
            }
        }
    }

    /// Gives a conflicting object's to-many relationships the store's current lists as their
    /// committed values, so the retried save writes the difference from what the store holds
    /// now (not a join row another writer already added). The object's own list is kept
    /// whole under the overwrite policy; under the merge policies its additions and removals
    /// are applied to the store's list (for a set the two policies agree: the same item
    /// cannot be added on one side and removed on the other from one starting list).
    private func rebaseToManyRelationships(of object: ManagedObject, keepingWholeList: Bool) throws {
        for relationship in object.entity.relationships where relationship.isToMany && !relationship.isTransient {
            if object.storage[relationship.name] == nil {
                // Unfired, with pending edits: firing applies them to the store's list.
                if object.pendingToMany[relationship.name] != nil { _ = try fireRelationshipFault(relationship, of: object) }
                continue
            }
            guard let mine = object.storage.objectIDs(forKey: relationship.name) else { continue }
            let old = object.committed.objectIDs(forKey: relationship.name) ?? []
            let stored = try store.fetchToManyIDs(relationship, of: object.objectID)
            object.committed[relationship.name] = stored
            guard !keepingWholeList else { continue }
            let oldSet = Set(old), mineSet = Set(mine)
            let edits = PendingToMany(added: mine.filter { !oldSet.contains($0) }, removed: oldSet.subtracting(mineSet))
            object.storage[relationship.name] = edits.applied(to: stored)
        }
    }

    /// Whether a changed object other than `target` relates to it in a value the save writes
    /// (a to-one, a to-many, or a pending to-many addition).
    private func isReferencedByPendingChanges(_ target: ManagedObject) -> Bool {
        let id = target.objectID
        for object in touched.objects where object !== target && !object.isDeleted {
            for relationship in object.entity.relationships where !relationship.isTransient {
                if object.pendingToMany[relationship.name]?.added.contains(id) == true { return true }
                guard !object.isFault, object.valueDiffers(forKey: relationship.name) || object.isInserted else { continue }
                switch object.storage[relationship.name] {
                case let value as ManagedObjectID where value == id: return true
                case let values as [ManagedObjectID] where values.contains(id):
                    // A list that held it when last saved writes no join row or key for it.
                    if object.isInserted || object.committed.objectIDs(forKey: relationship.name)?.contains(id) != true { return true }
                default: continue
                }
            }
        }
        return false
    }

    /// Drops an object whose row no longer exists (announced as deleted with the next
    /// objects-did-change, if it was in the object graph).
    func forget(_ object: ManagedObject) {
        noteChange(object)
        touched.remove(object)
        propagatedDeletions.remove(ObjectKey(object))
        if registry[object.objectID] === object { registry[object.objectID] = nil }
        object.managedObjectContext = nil
    }
}

extension JoinRow {
    /// A stable order for join-table statements: table, then source and destination keys.
    static func order(_ a: JoinRow, _ b: JoinRow) -> Bool {
        (a.table, a.source.primaryKey, a.source.uriRepresentation, a.destination.primaryKey, a.destination.uriRepresentation)
            < (b.table, b.source.primaryKey, b.source.uriRepresentation, b.destination.primaryKey, b.destination.uriRepresentation)
    }
}

extension ManagedObjectContext {
    /// Brings another context's save into this one (both on the same store): objects it
    /// updated are reloaded (keeping this context's own unsaved changes on top), objects it
    /// deleted are forgotten, objects it inserted are registered (as faults).
    ///
    /// ```swift
    /// writer.didSave = { reader.mergeChanges(fromContextDidSave: $0) }
    /// ```
    ///
    /// Then announces it, as Core Data does: ``objectsDidChangeNotification`` with the
    /// inserted objects as inserted, the registered updated ones as refreshed and the deleted
    /// ones as deleted (and an `.objectsDidChange` event on the ``changes`` streams), then
    /// ``didMergeChangesObjectIDsNotification``. A fetched-results controller on the context
    /// follows.
    public func mergeChanges(fromContextDidSave notification: SaveNotification) {
        checkAccess()
        if parent != nil {
            mergeChangesIntoChild(notification)
        } else {
            coordinator.storeLock.lock()
            refreshAndForget(notification)
            coordinator.storeLock.unlock()
        }
        registerMergedInserts(notification.insertedObjectIDs)
        announcePendingChanges()
        let merged = ContextChange(
            kind: .objectsDidChange, inserted: Set(notification.insertedObjectIDs), updated: Set(notification.updatedObjectIDs),
            deleted: Set(notification.deletedObjectIDs))
        NotificationCenter.default.post(name: Self.didMergeChangesObjectIDsNotification, object: self, userInfo: merged.objectIDsUserInfo)
    }

    /// Registers the objects another context inserted (faults), to be announced as inserted.
    func registerMergedInserts(_ ids: [ManagedObjectID]) {
        for id in ids where !id.isTemporaryID && registry[id] == nil {
            let object = self.object(with: id)
            noteFirstChange(object, wasVisible: false)
        }
    }
}
