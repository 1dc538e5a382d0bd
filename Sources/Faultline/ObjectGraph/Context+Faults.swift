import FaultlineModel
import FaultlineSQL
import Foundation

// Faults: objects by ID, firing object and relationship faults, turning objects back into faults.

extension ManagedObjectContext {
    /// Turns an object back into a fault: its values are dropped and load again, from the
    /// store, when next touched.
    ///
    /// With unsaved changes: `mergeChanges: false` drops them (the object becomes a clean
    /// fault); `mergeChanges: true` reloads the row now and puts the changed values back on
    /// top of it (the object stays changed, at the store's current version). Inserted and
    /// deleted objects are left alone.
    public func refresh(_ object: ManagedObject, mergeChanges: Bool) {
        checkAccess()
        guard object.belongs(to: self), !object.objectID.isTemporaryID, !object.isInserted, !object.isDeleted else { return }
        noteRefresh(object)
        if parent != nil { return refreshFromParent(object, mergeChanges: mergeChanges) }
        coordinator.storeLock.lock(); defer { coordinator.storeLock.unlock() }
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
        let hooks = callsLifecycleHooks(of: object)
        if hooks { object.willTurnIntoFault() }
        defer { if hooks { object.didTurnIntoFault() } }
        object.partialKeys = nil
        object.fetchedPropertyValues.removeAll()
        object.storage.removeAll()
        object.committed.removeAll()
        object.pendingToMany.removeAll()
        object.batchPosition = nil
        object.isFault = true
        touched.remove(object)
    }

    /// The object for an ID: the registered one, or a new fault registered now.
    public func object(with id: ManagedObjectID) -> ManagedObject {
        return object(with: id, reachedThrough: nil)
    }

    /// The object for an ID; a new fault remembers `origin` (evaluated only then).
    func object(with id: ManagedObjectID, reachedThrough origin: @autoclosure () -> String?) -> ManagedObject {
        registeredOrNewFault(for: id, entity: nil, reachedThrough: origin())
    }

    /// The registered object for an ID, or a new fault of `entity` (or the ID's entity in the
    /// model) registered now: the fault is made only when the ID is new, where the look-up
    /// stopped.
    private func registeredOrNewFault(
        for id: ManagedObjectID, entity: EntityDescription?, reachedThrough origin: @autoclosure () -> String?
    ) -> ManagedObject {
        let (registered, probe) = registry.lookUp(id)
        if let registered { return registered }
        let object = newFault(for: id, entity: entity, reachedThrough: origin())
        registry.register(object, for: id, at: probe)
        return object
    }

    private func newFault(for id: ManagedObjectID, entity: EntityDescription?, reachedThrough origin: String?) -> ManagedObject {
        let entity = entity ?? faultEntity(for: id)
        let object = makeObject(entity: entity, objectID: id, isFault: true)
        object.faultOrigin = origin
        return object
    }

    /// The entity of a new fault: the model's entity of the ID's name. The last one is kept by
    /// the ID's ``ObjectIDNames`` number, as a batch or a relationship makes many faults of one
    /// entity in a row (no name read and hashed for those).
    private func faultEntity(for id: ManagedObjectID) -> EntityDescription {
        if let last = lastFaultEntity, last.names == id.names { return last.entity }
        let entity = model.entity(named: id.entityName) ?? EntityDescription(name: id.entityName)
        lastFaultEntity = (id.names, entity)
        return entity
    }

    /// The objects of a fetched page, in order: for each row the registered object (filled
    /// when it is a fault), or a new object made with the row's values and registered.
    /// One loop with the page's parts held once: per row, no reference count moves but the
    /// object's own. `origin` (a prefetch's relationship) is recorded on the objects made, as
    /// on a fault reached through it, for the fault statistics should one become a fault again.
    /// `unindexed`: the objects may be registered through their array when the registry is
    /// empty (see ObjectRegistry.beginUnindexedFetch(rows:)) — for a caller that does not
    /// look them up right after (a prefetch from them would put them all in the table at once).
    func registerObjects(of decoded: DecodedPage, into objects: inout [ManagedObject], reachedThrough origin: String? = nil, unindexed: Bool = false) {
        registerObjects(of: decoded, into: &objects, collecting: true, unindexed: unindexed, reachedThrough: origin)
    }

    /// ``registerObjects(of:into:reachedThrough:)`` for rows whose objects only need to be
    /// registered (a prefetch's destinations: the registry holds them), with no array of
    /// them made — a retain, a release and a store per row fewer.
    func registerObjects(of decoded: DecodedPage, reachedThrough origin: String?) {
        var none: [ManagedObject] = []
        registerObjects(of: decoded, into: &none, collecting: false, unindexed: false, reachedThrough: origin)
    }

    /// How many rows ahead ``registerObjects(of:into:reachedThrough:)`` asks for a row's
    /// registry bucket: far enough for the line to come from memory while the rows between
    /// are registered (about 100 ns), near enough that it is still in the cache when reached.
    static let registryLookAhead = 12

    @inline(__always)
    private func registerObjects(
        of decoded: DecodedPage, into objects: inout [ManagedObject], collecting: Bool, unindexed allowsUnindexed: Bool, reachedThrough origin: String?
    ) {
        let pages = decoded.pages
        let plans = decoded.plans
        let hooks = !classBindings.isEmpty
        // Each plan's class binding, looked up once for the page.
        let bindings = hooks ? plans.map { classBinding(for: $0.rowEntity.name) } : []
        // Whether each plan's objects have lifecycle methods to call (callsLifecycleHooks(of:)
        // for an instance of the plan's class), told once for the page.
        let awakens = bindings.map { $0?.callsLifecycleHooks ?? false }
        let originNumber = FaultOrigins.number(origin)  // numbered once for the page
        // Into an empty registry, the rows' objects are all new: registered through the
        // array of them, which the registry fills, not one by one (see
        // ObjectRegistry.beginUnindexedFetch(rows:)).
        let intoRegistry = allowsUnindexed && collecting && objects.isEmpty && registry.beginUnindexedFetch(rows: decoded.count)
        var unindexed = intoRegistry
        if !unindexed { registry.reserveCapacity(registry.count + decoded.count) }
        if collecting, !intoRegistry { objects.reserveCapacity(objects.count + decoded.count) }
        // The counts of the references the new objects hold, taken in bulk (each plan's
        // entity, the context's link, the pages); those not used given back after the loop.
        // Written out here and in loadedBatchObjects: in a struct or a function of their own,
        // the optimizer kept a retain and a release of each new object (callgrind).
        var entities = [BulkReferences](repeating: BulkReferences(), count: plans.count)
        var links = BulkReferences()
        // The pages' counts per plan: each plan's rows fill pages of their own, in order (one
        // reserve for all, rows of two plans in turn gave back and took counts every row).
        var pageCounts = [BulkReferences](repeating: BulkReferences(), count: plans.count)
        defer {
            for plan in entities.indices { entities[plan].finish() }
            links.finish()
            for plan in pageCounts.indices { pageCounts[plan].finish() }
        }
        let rows = decoded.rows.count
        for (index, row) in decoded.rows.enumerated() {
            // Code the fetch ran (an `awakeFromFetch()`) needed the table, and the objects
            // noted so far went in: the rest one by one, each looked up first.
            if unindexed, !registry.isFetchingUnindexed {
                unindexed = false
                registry.reserveCapacity(registry.count + rows - index)
            }
            // The registry's bucket of a row a few ahead asked for now: keys hash to groups of
            // eight neighbouring buckets, each group somewhere else in a table of megabytes,
            // and looked up when reached, the group's first key waited for its line (nearly
            // half the time of this loop; see ObjectRegistry.prefetch).
            if !unindexed, index &+ Self.registryLookAhead < rows {
                let ahead = decoded.rows[index &+ Self.registryLookAhead]
                registry.prefetch(ManagedObjectID(names: plans[ahead.plan].rowNames, primaryKey: ahead.primaryKey))
            }
            // The plan is borrowed from `plans`, which holds it for the whole loop: loading it
            // (and its entity) from the array for each row retained and released both.
            var awakes = false
            var noted = false
            let registered: ManagedObject = Unmanaged.passUnretained(plans[row.plan])._withUnsafeGuaranteedRef { plan in
                let id = ManagedObjectID(names: plan.rowNames, primaryKey: row.primaryKey)
                // One walk of the table: the look-up that misses says where the new object goes.
                let (registered, probe) = unindexed ? (nil, ObjectRegistry.Probe.none) : registry.lookUp(id)
                if let existing = registered {
                    if existing.isFault { fillRegisteredFault(existing, from: decoded, at: index) }
                    return existing
                }
                let left = rows &- index
                let storage = entities[row.plan].take(plan.rowEntity.storageReference, upTo: left)
                let object = makeObject(
                    countedEntity: EntityDescription(takingCountedStorage: storage), objectID: id, binding: hooks ? bindings[row.plan] : nil, links: &links, upTo: left)
                let page = Unmanaged.passUnretained(pages[row.page]).toOpaque()
                object.setLoadedRow(
                    layout: plan.layout,
                    countedPage: Unmanaged<RowPage>.fromOpaque(pageCounts[row.plan].take(page, upTo: 2 &* left)),
                    Unmanaged<RowPage>.fromOpaque(pageCounts[row.plan].take(page, upTo: 2 &* left)),
                    base: row.base, version: row.version)
                if originNumber != 0 { object.faultOriginNumber = originNumber }
                // Registered by the registry's array (appended below) while the fetch goes
                // unindexed; else put in the table.
                if unindexed, registry.isFetchingUnindexed {
                    noted = true
                } else {
                    registry.register(object, for: id, at: probe)
                }
                awakes = hooks && awakens[row.plan]
                return object
            }
            // Moved into the array (appended as a copy, it was retained and the local released),
            // borrowed from it for awakeFromFetch(): in the array before the hook runs, which
            // may need the table (and the registry then finds it there).
            let made = Unmanaged.passUnretained(registered)
            if intoRegistry {
                registry.appendFetched(consume registered, unindexed: noted)
            } else if collecting {
                objects.append(consume registered)
            } else {
                // Held by the table alone, which the hook could empty (a reset): held here.
                if awakes { awakeFromFetch(registered) }
                continue
            }
            if awakes { made._withUnsafeGuaranteedRef { awakeFromFetch($0) } }
        }
        if intoRegistry { objects = registry.endFetch() }
    }

    /// Loads a fault's values from the store (with its batch, for a fault of a batched
    /// fetch; through the parent, in a child context).
    func fireFault(_ object: ManagedObject) throws {
        guard try fireFaultIfRowExists(object) else {
            throw FetchRequestError("object \(object.objectID.uriRepresentation) no longer exists in the store")
        }
    }

    /// Fires a fault from the store; false (the object left a fault) when its row is gone.
    func fireFaultIfRowExists(_ object: ManagedObject) throws -> Bool {
        guard object.isFault else { return true }
        checkAccess()
        if parent != nil { return try fireFaultFromParent(object) }
        coordinator.storeLock.lock(); defer { coordinator.storeLock.unlock() }
        if let (batch, index) = object.batchPosition {
            try loadBatch(batch, containing: index)
            if !object.isFault { return true }
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

    /// Fires a fault for a read that cannot throw (``ManagedObject/value(forKey:)``, a typed
    /// property's getter): an inaccessible fault (its row is gone) is deleted, or with
    /// ``shouldDeleteInaccessibleFaults`` false left a fault, its error kept for the next
    /// ``save()``, as is any other error (the store could not be read).
    func fireFaultForRead(_ object: ManagedObject) {
        do {
            if try fireFaultIfRowExists(object) { return }
            if shouldDeleteInaccessibleFaults {
                deleteInaccessibleFault(object)
            } else {
                keepAccessorError(FetchRequestError("object \(object.objectID.uriRepresentation) no longer exists in the store: its fault cannot be fulfilled"))
            }
        } catch {
            keepAccessorError(error)
        }
    }

    /// ``fireRelationshipFault(_:of:)`` for a read that cannot throw: no destinations when the
    /// store cannot be read, the error kept for the next ``save()``.
    func relationshipFaultForRead(_ relationship: RelationshipDescription, of object: ManagedObject) -> [ManagedObject] {
        do {
            return try fireRelationshipFault(relationship, of: object)
        } catch {
            keepAccessorError(error)
            return []
        }
    }

    /// Keeps an error of a read or a setter for the next ``save()``, which throws the first:
    /// a few are kept, not one per read (a loop over faults that cannot fire, in a session
    /// that never saves).
    func keepAccessorError(_ error: Error) {
        if accessorErrors.count < 16 { accessorErrors.append(error) }
    }

    /// Turns an inaccessible fault into a deleted object (see ``shouldDeleteInaccessibleFaults``):
    /// no values (to-many relationships empty, not faults to fire), deleted, among the changed
    /// objects, its delete rules counted as applied. Not an undoable change.
    func deleteInaccessibleFault(_ object: ManagedObject) {
        guard object.isFault, object.belongs(to: self) else { return }
        noteChange(object)
        var values = ObjectValues(layout: object.entity.propertyLayout)
        for (slot, kind) in values.layout.kinds.enumerated() where kind == .toMany { values[stored: slot] = .objectIDs([]) }
        object.batchPosition = nil
        object.pendingToMany.removeAll()
        object.storage = values
        object.committed = values
        object.isFault = false
        object.isDeleted = true
        object.isInaccessible = true
        propagatedDeletions.insert(ObjectKey(object))
        changeCount &+= 1
        touched.insert(object)
    }

    func fill(_ object: ManagedObject, from row: StoreRow) {
        fillValues(object, from: row)
        if callsLifecycleHooks(of: object) { awakeFromFetch(object) }
    }

    /// A registered fault a fetch's row fills (out of line: rare in a fetch, and inlined it
    /// made the fetch's loop over its rows too big for the optimizer to inline its body).
    @inline(never)
    private func fillRegisteredFault(_ object: ManagedObject, from page: DecodedPage, at index: Int) {
        object.batchPosition = nil
        fill(object, from: page, at: index)
    }

    /// ``fill(_:from:)`` with row `index` of a decoded page (no ``StoreRow`` made).
    /// `awakes` false leaves ``awakeFromFetch(_:)`` to the caller (a batch calls it once all
    /// its rows' objects are registered).
    func fill(_ object: ManagedObject, from page: DecodedPage, at index: Int, awakes: Bool = true) {
        let row = page.rows[index]
        let layout = page.plans[row.plan].layout
        if object.storage.isEmpty && object.committed.isEmpty {
            // A fresh fault (as in fillValues), its value sets made in place.
            object.setLoadedRow(layout: layout, page: page.pages[row.page], base: row.base, version: row.version)
            object.isFault = false
        } else {
            fillValues(object, values: page.values(at: index), version: row.version)
        }
        // As fillValues(_:from:) for a StoreRow: a sub-entity's row keeps its layout's owner.
        if !object.isFault, layout !== object.entity.propertyLayout { object.keepLayout(of: page.rowEntity(at: index)) }
        if awakes, callsLifecycleHooks(of: object) { awakeFromFetch(object) }
    }

    /// Whether an object is an instance of a registered subclass, whose lifecycle methods
    /// are called (a plain ``ManagedObject``'s do nothing).
    @inline(__always)
    func callsLifecycleHooks(of object: ManagedObject) -> Bool {
        !classBindings.isEmpty && type(of: object) != ManagedObject.self
    }

    /// Runs an object's ``ManagedObject/awakeFromFetch()`` with change processing off.
    func awakeFromFetch(_ object: ManagedObject) {
        awakeningFromFetch += 1
        defer { awakeningFromFetch -= 1 }
        object.awakeFromFetch()
    }

    private func fillValues(_ object: ManagedObject, from row: StoreRow) {
        fillValues(object, values: row.values, version: row.version)
        // A fault of a parent entity whose row is a sub-entity's now holds values of the
        // sub-entity's layout, which only that entity keeps alive.
        if !object.isFault, row.values.layout !== object.entity.propertyLayout { object.keepLayout(of: row.entity) }
    }

    /// Loads a row's values into an object: the row's values as they are for a fresh fault
    /// (shared, no copying), else attribute by attribute and to-one by to-one.
    private func fillValues(_ object: ManagedObject, values: ObjectValues, version: Int64) {
        if object.storage.isEmpty && object.committed.isEmpty {
            // A fresh fault: the row holds exactly its attributes and to-ones, so both
            // value sets share the row's storage (no per-key copying).
            object.setLoadedValues(values, version: version)
            object.isFault = false
            return
        }
        // To-many relationships already fired stay as they are.
        for attribute in object.entity.attributes where !attribute.isTransient {
            object.storage[attribute.name] = values[attribute.name]
            object.committed[attribute.name] = values[attribute.name]
        }
        for relationship in object.entity.relationships where relationship.isToOne {
            object.storage[relationship.name] = values[relationship.name]
            object.committed[relationship.name] = values[relationship.name]
        }
        object.rowVersion = version
        object.isFault = false
    }

    /// The destination objects of a to-many relationship, firing its fault the first time: one
    /// SELECT of the destination IDs; the destinations are faults until touched.
    func fireRelationshipFault(_ relationship: RelationshipDescription, of object: ManagedObject) throws -> [ManagedObject] {
        if let ids = object.storage.objectIDs(forKey: relationship.name) {
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
