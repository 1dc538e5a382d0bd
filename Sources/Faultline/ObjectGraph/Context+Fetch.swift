import FaultlineModel
import FaultlineSQL
import Foundation

// Fetching: objects, batches, prefetching, counts.

extension ManagedObjectContext {
    /// Fetches the objects a request describes, as Core Data's batch-faulting array.
    ///
    /// - Throws: ``FetchRequestError`` when the entity or a key path is unknown; ``PersistentStoreError`` or a
    ///   SQLite error when the store fails.
    ///
    /// With a ``FetchRequest/fetchBatchSize`` the store reads only the objects' keys (`SELECT
    /// 0, t0.Z_PK FROM …`), and the returned ``FetchedResults`` makes the objects a batch at a
    /// time as it is read, letting go of the batch read before: one call does not make a
    /// million objects. Reaching an index reads its whole batch's values in one statement, as
    /// Core Data's batch-faulting array does. Without a batch size every object is made at
    /// once, its values loaded.
    ///
    /// With ``FetchRequest/includesPendingChanges`` (the default) the result also reflects
    /// unsaved changes: deleted objects are left out, inserted objects of the entity that
    /// match the predicate are added, and changed objects are matched again in memory. Such a
    /// merged result, and any fetch of a child context (through its parent), is built whole
    /// even with a batch size (its objects are still faults loaded a batch at a time).
    ///
    /// A request for object IDs returns the objects of the IDs (see ``fetchObjectIDs(_:)``);
    /// dictionary and count requests run through ``execute(_:)->FetchResult``.
    public func fetch(_ request: FetchRequest) throws -> FetchedResults<ManagedObject> {
        checkAccess()
        guard request.resultType == .managedObject, request.fetchBatchSize > 0, parent == nil,
            !(request.includesPendingChanges && hasPendingChanges(affecting: request.entityName))
        else {
            return FetchedResults(objects: try allObjects(request))
        }
        try checkGrouping(request)
        try checkPrefetchKeyPaths(request)
        coordinator.storeLock.lock(); defer { coordinator.storeLock.unlock() }
        return FetchedResults(context: self, batch: try fetchBatch(request))
    }

    /// Throws for a key path to prefetch that names no relationship, as the prefetch of an
    /// unbatched fetch does while the fetch runs: a batched fetch prefetches only as each
    /// batch is read, from a subscript that cannot throw. At each step the relationship may
    /// be the entity's or one of its sub-entities' (whose objects may be among the rows).
    func checkPrefetchKeyPaths(_ request: FetchRequest) throws {
        guard !request.relationshipKeyPathsForPrefetching.isEmpty, let root = model.entity(named: request.entityName) else { return }
        for keyPath in request.relationshipKeyPathsForPrefetching {
            var entities = model.entityAndDescendants(of: root)
            for name in keyPath.split(separator: ".").map(String.init) {
                guard let relationship = entities.lazy.compactMap({ $0.relationship(named: name) }).first else {
                    throw FetchRequestError("keypath \(name) not found in entity \(entities.first?.name ?? request.entityName)")
                }
                guard let destination = model.entity(named: relationship.destinationEntityName) else {
                    throw FetchRequestError("keypath \(name): destination entity \(relationship.destinationEntityName) not found in the model")
                }
                entities = model.entityAndDescendants(of: destination)
            }
        }
    }

    /// The objects a request describes, all made at once: ``fetch(_:)-(FetchRequest)``'s result as an array,
    /// for the context's own uses (counts, fetched properties, a child's fetch, controllers).
    func fetchObjects(_ request: FetchRequest) throws -> [ManagedObject] {
        checkAccess("fetch(_:)")
        return try allObjects(request)
    }

    private func allObjects(_ request: FetchRequest) throws -> [ManagedObject] {
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

    /// Whether the context has unsaved changes to objects of an entity or its sub-entities:
    /// then a fetch of it merges them into what the store returns.
    func hasPendingChanges(affecting entityName: String) -> Bool {
        guard !touched.isEmpty else { return false }
        guard let entity = model.entity(named: entityName) else { return true }
        let family = Set(model.entityAndDescendants(of: entity).map(\.name))
        return touched.contains { family.contains($0.entity.name) }
    }

    private func fetchFromStore(_ request: FetchRequest) throws -> [ManagedObject] {
        if parent != nil { return try fetchFromParent(request) }
        coordinator.storeLock.lock(); defer { coordinator.storeLock.unlock() }
        if !request.includesPropertyValues {
            // Only the keys (`SELECT 0, t0.Z_PK …`): the objects are faults.
            let keys = try store.fetchObjectKeys(request)
            registry.reserveCapacity(registry.count + keys.count)
            return (0..<keys.count).map { object(with: keys.id(at: $0)) }
        }
        if let properties = request.propertiesToFetch, request.fetchBatchSize <= 0 {
            return try fetchPartialObjects(request, properties: properties)
        }
        guard request.fetchBatchSize > 0 else {
            // All rows first, so the registry grows once (growing it row by row rehashes it
            // again and again).
            var objects: [ManagedObject] = []
            var page = try store.fetchPage(request)
            defer { page.recycle() }
            reserveForPrefetching(request, rows: page.count)
            registerObjects(of: page, into: &objects, unindexed: request.relationshipKeyPathsForPrefetching.isEmpty)
            for keyPath in request.relationshipKeyPathsForPrefetching {
                try prefetch(keyPath, from: objects)
            }
            return objects
        }
        let batch = try fetchBatch(request)
        registry.reserveCapacity(registry.count + batch.keys.count)
        return (0..<batch.keys.count).map { batch.object(at: $0, in: self) }
    }

    /// Makes room in the registry, before a fetch registers its rows, for the destinations of
    /// the to-one relationships it prefetches: one a row each, up to 65,536 a relationship.
    /// Reserved by the prefetch, once the rows are in, the registry grew a second time and
    /// moved every entry (about 5 % of a fetch of 10,000 items prefetching their owners). The
    /// cap bounds what is reserved for nothing when many rows share few destinations (a
    /// dictionary never gives capacity back): about 3 MB a relationship at most.
    private func reserveForPrefetching(_ request: FetchRequest, rows: Int) {
        guard !request.relationshipKeyPathsForPrefetching.isEmpty, let entity = model.entity(named: request.entityName) else { return }
        var extra = 0
        for path in request.relationshipKeyPathsForPrefetching {
            let first = path.split(separator: ".", maxSplits: 1).first.map(String.init) ?? path
            if entity.relationship(named: first)?.isToOne == true { extra += min(rows, 65_536) }
        }
        if extra > 0 { registry.reserveCapacity(registry.count + rows + extra) }
    }

    /// The keys of a batched fetch's objects, from the store (the first statement of it).
    func fetchBatch(_ request: FetchRequest) throws -> FaultBatch {
        FaultBatch(entityName: request.entityName, keys: try store.fetchObjectKeys(request), size: request.fetchBatchSize,
                   prefetching: request.relationshipKeyPathsForPrefetching,
                   properties: request.resultType == .managedObject ? request.propertiesToFetch : nil,
                   loadsBatches: request.includesPropertyValues)
    }

    /// Loads the rows of a relationship key path's destinations for `sources`, one statement
    /// per relationship on the path: the destinations are registered with their values (a
    /// fault among them is filled from its row, an object already loaded keeps its values),
    /// and to-many relationships are filled.
    func prefetch(_ keyPath: String, from sources: [ManagedObject]) throws {
        // New objects have no rows to prefetch from (copied only when there is one: a copy
        // retains every object).
        var level = sources.contains { $0.objectID.isTemporaryID } ? sources.filter { !$0.objectID.isTemporaryID } : sources
        let names = keyPath.split(separator: ".").map(String.init)
        for (step, name) in names.enumerated() {
            guard let first = level.first else { return }
            // The destinations are the next step's sources; after the last step no one reads
            // them (a look-up in the registry per destination for nothing).
            let isLast = step == names.count - 1
            guard let relationship = first.entity.relationship(named: name) else {
                throw FetchRequestError("keypath \(name) not found in entity \(first.entity.name)")
            }
            let origin = "\(first.entity.name).\(name)"
            var next: [ManagedObject] = []
            var seen: Set<ManagedObjectID> = []
            seen.reserveCapacity(level.count)
            if relationship.isToOne {
                for source in level where source.isFault { try fireFault(source) }
                // The relationship's slot, found by name once for the sources that share the
                // first one's layout (a sub-entity's objects have their own), and each key
                // read in place (a call on a copy of the values retained and released them).
                let firstLayout = first.storage.layoutReference.toOpaque()
                let firstSlot = first.storage.layout.slot(of: name)
                // Each destination once (the next step's sources, unless this is the last step),
                // and the keys of those not loaded yet.
                var ids: [ManagedObjectID] = []
                var missing: [Int64] = []
                if !isLast { ids.reserveCapacity(level.count) }
                missing.reserveCapacity(level.count)
                for source in level {
                    let id: ManagedObjectID?
                    if let firstSlot, source.storage.layoutReference.toOpaque() == firstLayout {
                        id = source.storage.objectID(at: firstSlot)
                    } else {
                        id = source.storage.objectID(forKey: name)
                    }
                    guard let id, seen.insert(id).inserted else { continue }
                    if !isLast { ids.append(id) }
                    if registry[id]?.isFault ?? true { missing.append(id.primaryKey) }
                }
                // Room for every destination before any is registered: reserved again after the
                // rows' objects, it would be grown (and rehashed) a second time.
                registry.reserveCapacity(registry.count + seen.count)
                if !missing.isEmpty {
                    let rows = try store.prefetchRows(relationship, sourceEntity: first.entity, keys: missing)
                    registerObjects(of: rows.page, reachedThrough: origin)
                }
                if !isLast { next = ids.map { object(with: $0, reachedThrough: origin) } }
            } else {
                let pending = level.filter { $0.storage[name] == nil }
                if !pending.isEmpty {
                    let rows = try store.prefetchRows(relationship, sourceEntity: first.entity, keys: pending.map(\.objectID.primaryKey))
                    var owned: [Int64: [ManagedObjectID]] = [:]
                    for (index, owner) in rows.owners.enumerated() {
                        guard let owner else { continue }
                        owned[owner, default: []].append(rows.page.objectID(at: index))
                    }
                    // The sources' to-manys first (a destination's awakeFromFetch then finds them
                    // set), as firing each one's fault sets it: the store's IDs are its committed
                    // value, and edits made while it was a fault are applied on top.
                    for source in pending {
                        var ids = owned[source.objectID.primaryKey] ?? []
                        source.committed[name] = ids
                        if let edits = source.pendingToMany.removeValue(forKey: name) { ids = edits.applied(to: ids) }
                        source.storage[name] = ids
                    }
                    registerObjects(of: rows.page, reachedThrough: origin)
                }
                for source in level where !isLast {
                    for id in source.storage.objectIDs(forKey: name) ?? [] where seen.insert(id).inserted {
                        next.append(object(with: id, reachedThrough: origin))
                    }
                }
            }
            level = next
        }
    }

    /// Loads the batch that holds a fault of a batched fetch (one made before its batch was
    /// read: a merged result's, or one handed out when reading the batch failed): its rows
    /// in one statement, as ``batchObjects(_:range:reaching:)`` reads them, then the
    /// request's prefetching for those objects, whose errors are thrown here.
    func loadBatch(_ batch: FaultBatch, containing index: Int) throws {
        let objects = try loadedBatchObjects(batch, range: batch.range(containing: index), reaching: index).compactMap { $0 }
        for keyPath in batch.prefetching {
            try prefetch(keyPath, from: objects)
        }
    }

    /// The objects of one batch of a batched fetch as ``FetchedResults`` reaches it, their
    /// values loaded: Core Data's batch-faulting array fetches a batch's rows when one of its
    /// objects is reached (`objectAtIndex:`), in one statement, and hands out objects, not
    /// faults. The batch's objects already registered are kept (a loaded or changed one as it
    /// is; a fault is filled), the others are made from their rows; then the request's
    /// prefetching runs for the batch.
    ///
    /// The subscript that asks cannot throw: when the rows cannot be read, the batch's
    /// objects are made as faults that load their batch when touched (``loadBatch(_:containing:)``),
    /// which then reports the error where a fault's error is reported. So does a fetch
    /// without property values (its faults load one by one).
    ///
    /// The array's elements are optional but every one is set (``FetchedResults`` keeps the
    /// array as it is made).
    func batchObjects(_ batch: FaultBatch, range: Range<Int>, reaching index: Int) -> [ManagedObject?] {
        if batch.loadsBatches, parent == nil {
            coordinator.storeLock.lock(); defer { coordinator.storeLock.unlock() }
            if let objects = try? loadedBatchObjects(batch, range: range, reaching: index, lending: true) {
                // The key paths were checked by the fetch; a prefetch that fails here (the
                // store's error) leaves the relationships to fire their own faults, which
                // report it when touched.
                if !batch.prefetching.isEmpty {
                    let sources = objects.compactMap { $0 }
                    for keyPath in batch.prefetching { try? prefetch(keyPath, from: sources) }
                }
                return objects
            }
        }
        return range.map { batch.object(at: $0, in: self) }
    }

    /// A batch's load (``batchObjects(_:range:reaching:)``, ``loadBatch(_:containing:)``): each key looked up once, the rows of those
    /// not loaded read in one statement and matched to their places in key order (the order
    /// `Z_PK IN (…)` returns them in for a fetch in key order; a dictionary otherwise), and no
    /// `awakeFromFetch()` runs before every object of the batch is registered — one run
    /// earlier could register another object for a key of the batch.
    ///
    /// `lending`: the registry borrows the returned array's references to the objects the
    /// batch makes (``ObjectRegistry/register(_:for:at:borrowing:)``), for a caller that keeps
    /// the array and ends each borrow before letting go of it (``FetchedResults``).
    private func loadedBatchObjects(_ batch: FaultBatch, range: Range<Int>, reaching index: Int, lending: Bool = false) throws -> [ManagedObject?] {
        // Every element nil, written in place (`Array(repeating:count:)` copied the nil in
        // through a call into the runtime per element).
        var objects = [ManagedObject?](unsafeUninitializedCapacity: range.count) { buffer, count in
            buffer.initialize(repeating: nil)
            count = range.count
        }
        // The keys to load (bound as the statement's id list), and for each where it goes in
        // `objects`, the ID's entity it was read with, and where its look-up stopped: a new
        // object goes there (see ObjectRegistry.Probe), the table made big enough first so
        // that it does not grow in between.
        var keys: [Int64] = []
        var pendings: [PendingKey] = []
        keys.reserveCapacity(range.count)
        pendings.reserveCapacity(range.count)
        registry.reserveCapacity(registry.count + range.count)
        for (place, position) in range.enumerated() {
            let id = batch.keys.id(at: position)
            let (registered, probe) = registry.lookUp(id)
            if let registered {
                objects[place] = registered
                guard registered.isFault else { continue }
                registered.batchPosition = nil
            }
            keys.append(id.primaryKey)
            pendings.append(PendingKey(place: place, names: id.names, probe: probe))
        }
        guard !keys.isEmpty else { return objects }
        let page = try store.fetchPage(entityName: batch.entityName, primaryKeys: keys, limit: batch.size, properties: batch.properties)
        let partialKeys = batch.properties.map { Set($0.map(\.name)) }
        let pages = page.pages
        let plans = page.plans
        let hooks = !classBindings.isEmpty
        let bindings = hooks ? plans.map { classBinding(for: $0.rowEntity.name) } : []
        var next = 0
        var placeOfKey: [Int64: Int]?
        // The places whose objects this batch loaded (made, or filled from a fault), awoken
        // once every object is registered.
        var loaded: [Int] = []
        if hooks { loaded.reserveCapacity(keys.count) }
        // The references the new objects hold, counted in bulk (as in registerObjects, and
        // written out as there: shared, they cost each new object a retain and a release).
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
        let rows = page.rows.count
        for (rowIndex, row) in page.rows.enumerated() {
            // The row's place: the next key's, as `Z_PK IN (…)` returns rows in key order.
            let pending: Int
            if next < keys.count, keys[next] == row.primaryKey {
                pending = next
                next += 1
            } else {
                if placeOfKey == nil { placeOfKey = Dictionary(zip(keys, keys.indices), uniquingKeysWith: { first, _ in first }) }
                guard let found = placeOfKey?[row.primaryKey] else { continue }
                pending = found
            }
            let place = pendings[pending].place
            if let registered = objects[place] {
                guard registered.isFault else { continue }
                fill(registered, from: page, at: rowIndex, awakes: false)
                if let partialKeys { registered.partialKeys = partialKeys }
                if hooks { loaded.append(place) }
                continue
            }
            // Borrowed from `plans`, which holds it for the loop (as in registerObjects).
            var loadedHere = true
            let object: ManagedObject = Unmanaged.passUnretained(plans[row.plan])._withUnsafeGuaranteedRef { plan in
                let id = ManagedObjectID(names: plan.rowNames, primaryKey: row.primaryKey)
                // Not the entity the key was read with (the row changed since): the registry
                // decides, as for any row; an object loaded before is kept as it is.
                if id.names != pendings[pending].names, let registered = registry[id] {
                    if registered.isFault { fill(registered, from: page, at: rowIndex, awakes: false) } else { loadedHere = false }
                    return registered
                }
                let left = rows &- rowIndex
                let storage = entities[row.plan].take(plan.rowEntity.storageReference, upTo: left)
                let object = hooks
                    ? bindings.withUnsafeBufferPointer {
                        makeObject(countedEntity: EntityDescription(takingCountedStorage: storage), objectID: id, binding: $0[row.plan], links: &links, upTo: left)
                    }
                    : makeObject(countedEntity: EntityDescription(takingCountedStorage: storage), objectID: id, binding: nil, links: &links, upTo: left)
                let pageReference = Unmanaged.passUnretained(pages[row.page]).toOpaque()
                object.setLoadedRow(
                    layout: plan.layout,
                    countedPage: Unmanaged<RowPage>.fromOpaque(pageCounts[row.plan].take(pageReference, upTo: 2 &* left)),
                    Unmanaged<RowPage>.fromOpaque(pageCounts[row.plan].take(pageReference, upTo: 2 &* left)),
                    base: row.base, version: row.version)
                if id.names == pendings[pending].names {
                    registry.register(object, for: id, at: pendings[pending].probe, borrowing: lending)
                } else {
                    registry[id] = object
                }
                return object
            }
            if loadedHere {
                if let partialKeys { object.partialKeys = partialKeys }
                if hooks { loaded.append(place) }
            }
            objects[place] = object  // its last use: moved into the array, not retained again
        }
        faultObserver?(FaultEvent(kind: .batch, objectID: batch.keys.id(at: index), origin: nil))
        // Borrowed from `objects`, which holds them throughout (a copy of each was retained
        // and released around its awakeFromFetch()).
        objects.withUnsafeBufferPointer { objects in
            for place in loaded {
                guard let object = objects[place].map(Unmanaged.passUnretained) else { continue }
                object._withUnsafeGuaranteedRef { if callsLifecycleHooks(of: $0) { awakeFromFetch($0) } }
            }
        }
        // A key without a row (deleted since the keys were read): a fault, which says so
        // when touched.
        for place in objects.indices where objects[place] == nil {
            objects[place] = object(with: batch.keys.id(at: range.lowerBound + place))
        }
        return objects
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
            return try fetchObjects(fetch).count
        }
        if request.includesPendingChanges, hasChanges, model.entity(named: request.entityName) != nil,
            hasPendingChanges(affecting: request.entityName)
        {
            var fetch = request
            fetch.fetchBatchSize = 0
            fetch.relationshipKeyPathsForPrefetching = []
            return try fetchObjects(fetch).count
        }
        coordinator.storeLock.lock(); defer { coordinator.storeLock.unlock() }
        return try store.count(request)
    }
}

/// A key of a batch to load (see `loadedBatchObjects`): where its object goes in the batch,
/// the entity its ID was read with, and where the registry's look-up for it stopped.
private struct PendingKey {
    var place: Int
    var names: UInt32
    var probe: ObjectRegistry.Probe
}
