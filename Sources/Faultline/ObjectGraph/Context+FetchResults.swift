import FaultlineModel
import FaultlinePredicate
import Foundation

/// Fetches of object IDs, dictionaries and counts, and of partial objects
/// (`NSFetchRequest.resultType`, `propertiesToFetch`, `propertiesToGroupBy`, `havingPredicate`).
///
/// ```swift
/// var request = FetchRequest(entityName: "Recipe")
/// request.resultType = .dictionary
/// request.propertiesToFetch = ["type.name", .expression(ExpressionDescription(
///     name: "recipes", expression: .function("count:", [.keyPath("name")]), expressionResultType: .integer64))]
/// request.propertiesToGroupBy = ["type.name"]
/// let rows = try context.fetchDictionaries(request)
/// // SELECT t1.ZNAME, COUNT( t0.ZNAME) FROM ZRECIPE t0 LEFT OUTER JOIN ZRECIPETYPE t1 ON t0.ZTYPE = t1.Z_PK GROUP BY  t1.ZNAME
/// ```
///
/// Pending changes: ID fetches include the context's unsaved changes when
/// ``FetchRequest/includesPendingChanges`` is true (inserted objects with temporary IDs,
/// deleted ones left out); dictionary fetches never do — Apple's documentation of
/// `includesPendingChanges`: "For dictionaries, the array returned from the fetch reflects
/// the current state in the persistent store, and does not take into account any pending
/// changes, insertions, or deletions in the context."
extension ManagedObjectContext {
    /// Runs a request of any ``FetchRequest/resultType``.
    ///
    /// - Throws: as ``fetch(_:)-(FetchRequest)``; ``FetchRequestError`` for an invalid combination (grouping without
    ///   dictionaries, `HAVING` without grouping, unknown keys, unsupported functions).
    public func execute(_ request: FetchRequest) throws -> FetchResult {
        switch request.resultType {
        case .managedObject: return .objects(try fetch(request))
        case .managedObjectID: return .objectIDs(try fetchObjectIDs(request))
        case .dictionary: return .dictionaries(try fetchDictionaries(request))
        case .count: return .count(try count(for: request))
        }
    }

    /// The IDs of the objects a request finds (`managedObjectIDResultType`), whatever its
    /// result type. With ``FetchRequest/includesPropertyValues`` false the store runs
    /// `SELECT 0, t0.Z_PK FROM …` (`t0.Z_ENT` first for an entity sharing its table); with
    /// true (the default) it reads the whole rows, as Core Data does, and the objects they
    /// describe are registered as faults filled from them.
    ///
    /// - Throws: as ``fetch(_:)-(FetchRequest)``.
    public func fetchObjectIDs(_ request: FetchRequest) throws -> [ManagedObjectID] {
        checkAccess()
        try checkGrouping(request)
        var objectsRequest = request
        objectsRequest.resultType = .managedObject
        objectsRequest.relationshipKeyPathsForPrefetching = []
        objectsRequest.fetchBatchSize = 0
        if parent != nil || (request.includesPendingChanges && !touched.isEmpty) {
            return try fetchObjects(objectsRequest).map(\.objectID)
        }
        coordinator.storeLock.lock(); defer { coordinator.storeLock.unlock() }
        if request.includesPropertyValues {
            return try store.fetchRows(objectsRequest).map(\.objectID)
        }
        let keys = try store.fetchObjectKeys(objectsRequest)
        return (0..<keys.count).map { keys.id(at: $0) }
    }

    /// The values a dictionary request selects (`dictionaryResultType`), one dictionary per
    /// row, keyed by ``FetchProperty/name``; a nil value leaves its key out. Attributes come
    /// back as their Swift types, to-one relationships and `objectID` as ``ManagedObjectID``s,
    /// expressions as their ``ExpressionDescription/expressionResultType``.
    ///
    /// The values are the store's: unsaved changes of the context are not included (see the
    /// type's discussion). A child context reads the store too.
    ///
    /// - Throws: as ``execute(_:)->FetchResult``.
    public func fetchDictionaries(_ request: FetchRequest) throws -> [[String: Any]] {
        checkAccess()
        coordinator.storeLock.lock(); defer { coordinator.storeLock.unlock() }
        return try store.fetchDictionaries(request)
    }

    /// The rows of a dictionary request as ``FetchedRows``: the same keys and values as
    /// ``fetchDictionaries(_:)`` gives, held as Core Data holds them (the keys once, the values
    /// by position), so that no key is hashed per row and typed reads unbox nothing. For large
    /// results, several times faster than dictionaries to make and to read.
    ///
    /// - Throws: as ``fetchDictionaries(_:)``.
    public func fetchRows(_ request: FetchRequest) throws -> FetchedRows {
        checkAccess()
        coordinator.storeLock.lock(); defer { coordinator.storeLock.unlock() }
        return try store.fetchValueRows(request)
    }

    /// A dictionary fetch read a batch at a time (``FetchRequest/fetchBatchSize``), as Core
    /// Data's batch-faulting array does for objects: the fetch reads only the keys of the rows
    /// (`SELECT 0, t0.Z_PK FROM … WHERE … ORDER BY …`), and reaching a row reads its batch's
    /// values (`SELECT t0.Z_PK, <values> FROM … WHERE t0.Z_PK IN (SELECT * FROM
    /// _Z_intarray0)`). A request that groups, filters groups or asks for distinct values
    /// has no keys to batch by and is read whole, as ``fetchDictionaries(_:)`` does.
    ///
    /// - Throws: as ``fetchDictionaries(_:)``. A batch that fails to load later (the store
    ///   gone) gives empty dictionaries for its rows and says so in the SQL log.
    public func fetchDictionaryBatches(_ request: FetchRequest) throws -> FetchedDictionaries {
        checkAccess()
        try checkGrouping(request)
        guard SQLiteStore.canBatchDictionaries(request) else { return FetchedDictionaries(try fetchDictionaries(request)) }
        coordinator.storeLock.lock(); defer { coordinator.storeLock.unlock() }
        // Compiled once for every batch; checks the keys and functions before any SQL runs.
        let batchQuery = try store.dictionaryQuery(for: request, batchOfKeys: true)
        var keysRequest = request
        keysRequest.resultType = .managedObjectID
        keysRequest.propertiesToFetch = nil
        keysRequest.relationshipKeyPathsForPrefetching = []
        let keys = try store.fetchObjectKeys(keysRequest)
        let primaryKeys = (0..<keys.count).map { keys.id(at: $0).primaryKey }
        let store = self.store
        let lock = coordinator.storeLock
        return FetchedDictionaries(keys: primaryKeys, batchSize: request.fetchBatchSize) { batch in
            lock.lock(); defer { lock.unlock() }
            do {
                return try store.fetchDictionaryBatch(batchQuery, entityName: request.entityName, keys: batch)
            } catch {
                store.emit(.message(category: "error", text: "a batch of a dictionary fetch of \(request.entityName) failed to load: \(error)"))
                return Array(repeating: [:], count: batch.count)
            }
        }
    }

    /// Core Data's rule: grouping and `HAVING` need the dictionary result type.
    func checkGrouping(_ request: FetchRequest) throws {
        if let groups = request.propertiesToGroupBy, !groups.isEmpty, request.resultType != .dictionary {
            throw FetchRequestError("Invalid fetch request: GROUP BY requires NSDictionaryResultType (propertiesToGroupBy needs resultType .dictionary)")
        }
        if request.havingPredicate != nil, request.resultType != .dictionary {
            throw FetchRequestError("a havingPredicate needs resultType .dictionary and propertiesToGroupBy")
        }
    }

    /// Objects with only some properties loaded: `SELECT 0, t0.Z_PK, t0.Z_OPT, <columns> …`.
    /// Objects already loaded are left as they are.
    func fetchPartialObjects(_ request: FetchRequest, properties: [FetchProperty]) throws -> [ManagedObject] {
        let rows = try store.fetchPartialRows(request, properties: properties)
        let keys = Set(properties.map(\.name))
        var objects: [ManagedObject] = []
        objects.reserveCapacity(rows.count)
        for row in rows {
            let object = self.object(with: row.objectID)
            if object.isFault {
                object.batchPosition = nil
                fill(object, from: row)
                object.partialKeys = keys
            }
            objects.append(object)
        }
        for keyPath in request.relationshipKeyPathsForPrefetching {
            try prefetch(keyPath, from: objects)
        }
        return objects
    }

    /// Loads the rest of a partial object's row (a property outside its fetched ones was
    /// read): values not loaded and not changed since are filled from the store.
    func completePartialObject(_ object: ManagedObject) {
        guard let loaded = object.partialKeys else { return }
        object.partialKeys = nil
        guard !object.objectID.isTemporaryID, parent == nil else { return }
        coordinator.storeLock.lock(); defer { coordinator.storeLock.unlock() }
        let row: StoreRow
        do {
            guard let found = try store.fetchRow(for: object.objectID) else {
                // Not made a deleted object (its loaded values and changes would go with it):
                // the properties not loaded read nil, and the next save says why.
                keepAccessorError(FetchRequestError("object \(object.objectID.uriRepresentation) no longer exists in the store: the properties it was not fetched with cannot be loaded"))
                return
            }
            row = found
        } catch {
            keepAccessorError(error)
            return
        }
        for attribute in object.entity.attributes where !attribute.isTransient && !loaded.contains(attribute.name) {
            if object.storage[attribute.name] == nil && object.committed[attribute.name] == nil {
                object.storage[attribute.name] = row.values[attribute.name]
                object.committed[attribute.name] = row.values[attribute.name]
            }
        }
        for relationship in object.entity.relationships where relationship.isToOne && !loaded.contains(relationship.name) {
            if object.storage[relationship.name] == nil && object.committed[relationship.name] == nil {
                object.storage[relationship.name] = row.values[relationship.name]
                object.committed[relationship.name] = row.values[relationship.name]
            }
        }
        faultObserver?(FaultEvent(kind: .object, objectID: object.objectID, origin: nil))
    }
}
