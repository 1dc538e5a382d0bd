import FaultlineModel
import FaultlineSQL
import Foundation

extension ManagedObjectContext {
    /// Runs a batch delete in the store (Core Data's `execute(_:)` with an
    /// `NSBatchDeleteRequest`): one `BEGIN EXCLUSIVE` … `COMMIT`, delete rules applied in SQL,
    /// persistent history recorded when the store keeps it. This context's objects are not
    /// changed: merge the deleted IDs with ``mergeChanges(fromRemoteContextSave:into:)``.
    ///
    /// - Throws: ``PersistentStoreError`` (`readOnly`) for a read-only store; ``BatchRequestError`` for
    ///   objects of another entity, a Deny rule with destinations, a Nullify rule on a
    ///   required inverse, or Cascade rules deeper than 100 levels; ``FetchRequestError`` for a bad
    ///   predicate. Nothing is written then.
    public func execute(_ request: BatchDeleteRequest) throws -> BatchResult {
        try runBatch(request.resultType) { store in try store.executeBatchDelete(request) }
    }

    /// Runs a batch update in the store (`NSBatchUpdateRequest`): the rows the predicate
    /// selects get the new values and `Z_OPT = Z_OPT+1`, in one transaction. Validation does
    /// not run; this context's objects are not changed (merge the updated IDs).
    ///
    /// - Throws: ``PersistentStoreError`` (`readOnly`); ``BatchRequestError`` for an unknown,
    ///   relationship, transient or derived key, a value of the wrong type, or an expression
    ///   with no SQL form; ``FetchRequestError`` for a bad predicate.
    public func execute(_ request: BatchUpdateRequest) throws -> BatchResult {
        try runBatch(request.resultType) { store in try store.executeBatchUpdate(request) }
    }

    /// Runs a batch insert in the store (`NSBatchInsertRequest`): keys reserved in
    /// `Z_PRIMARYKEY` for every row, one prepared `INSERT` run per row, duplicates of a
    /// uniqueness constraint ignored or upserted as ``mergePolicy`` decides (see
    /// ``BatchInsertRequest``), all in one transaction.
    ///
    /// - Throws: ``PersistentStoreError`` (`readOnly`); ``BatchRequestError`` naming the row and key for
    ///   an unknown key, a relationship, a value of the wrong type, or (with `.fail`) a
    ///   duplicate. Nothing is written then.
    public func execute(_ request: BatchInsertRequest) throws -> BatchResult {
        var rows = request.objects ?? []
        if let handler = request.dictionaryHandler {
            while true {
                var row: [String: Any] = [:]
                if handler(&row) { break }
                rows.append(row)
            }
        }
        let resolution = request.conflictResolution ?? Self.batchInsertResolution(for: mergePolicy)
        let needsIDs = request.resultType == .objectIDs
        return try runBatch(request.resultType) { store in
            try store.executeBatchInsert(entityName: request.entityName, rows: rows, resolution: resolution, needsIDs: needsIDs)
        }
    }

    /// What a merge policy makes of a batch insert's duplicates, as Core Data's log shows:
    /// the error policy writes `INSERT OR IGNORE`, the property-object-trump policy an upsert.
    /// The overwrite policy (the object wins) upserts too, and the store-trump and rollback
    /// policies (the store wins) ignore: inferred, not seen.
    public static func batchInsertResolution(for policy: MergePolicy) -> BatchInsertRequest.ConflictResolution {
        switch policy {
        case .mergeByPropertyObjectTrump, .overwrite: return .upsert
        case .error, .mergeByPropertyStoreTrump, .rollback: return .ignore
        }
    }

    /// The transaction around a batch request and the history it records.
    private func runBatch(_ resultType: BatchResultType, _ body: (SQLiteStore) throws -> BatchOutcome) throws -> BatchResult {
        checkAccess()
        let store = self.store
        coordinator.storeLock.lock(); defer { coordinator.storeLock.unlock() }
        if store.isReadOnly {
            throw PersistentStoreError(.readOnly, store.readOnlyReason ?? "the store is read-only: batch request refused, nothing was written", path: store.path)
        }
        _ = store.triggerReports.drain()
        let process = ProcessInfo.processInfo.processName
        let author = HistoryAuthor(author: transactionAuthor, bundleID: Bundle.main.bundleIdentifier ?? process, contextName: name, processID: process)
        let outcome: BatchOutcome
        do {
            outcome = try store.withWriteTransaction {
                let outcome = try body(store)
                if store.tracksPersistentHistory, !outcome.history.isEmpty {
                    try store.recordHistory(outcome.history, by: author, key: \.primaryKey)
                }
                return outcome
            }
        } catch {
            _ = store.triggerReports.drain()
            throw error
        }
        // What the triggers wrote reaches objects when they are merged (refreshed).
        _ = store.triggerReports.drain()
        store.removeExternalFiles(outcome.obsoleteExternalFiles)
        lastBatchChanges = SaveNotification(insertedObjectIDs: outcome.inserted, updatedObjectIDs: outcome.updated, deletedObjectIDs: outcome.deleted)
        switch resultType {
        case .statusOnly: return .status(true)
        case .count: return .count(outcome.count)
        case .objectIDs: return .objectIDs(outcome.resultIDs)
        }
    }

    /// Brings changes made elsewhere into contexts (Core Data's static
    /// `mergeChanges(fromRemoteContextSave:into:)`): a batch request's result IDs, or another
    /// coordinator's save. In each context, registered objects that were updated are
    /// refreshed (keeping their unsaved changes on top), deleted ones are removed; inserted
    /// objects need nothing (fetches find them). Each context is merged on its own queue.
    ///
    /// ```swift
    /// let ids = try context.execute(delete).objectIDs ?? []
    /// ManagedObjectContext.mergeChanges(fromRemoteContextSave: [.deleted: ids], into: [viewContext])
    /// ```
    public static func mergeChanges(fromRemoteContextSave changes: [RemoteChangeKey: [ManagedObjectID]], into contexts: [ManagedObjectContext]) {
        let notification = SaveNotification(
            insertedObjectIDs: changes[.inserted] ?? [], updatedObjectIDs: changes[.updated] ?? [], deletedObjectIDs: changes[.deleted] ?? [])
        for context in contexts {
            context.performAndWait { context.mergeChanges(fromContextDidSave: notification) }
        }
    }
}

extension SaveNotification {
    /// Creates a notification from lists of object IDs (to merge changes made elsewhere).
    public init(inserted: [ManagedObjectID] = [], updated: [ManagedObjectID] = [], deleted: [ManagedObjectID] = []) {
        self.init(insertedObjectIDs: inserted, updatedObjectIDs: updated, deletedObjectIDs: deleted)
    }

    /// The notification as the dictionary ``ManagedObjectContext/mergeChanges(fromRemoteContextSave:into:)`` takes.
    public var changes: [RemoteChangeKey: [ManagedObjectID]] {
        [.inserted: insertedObjectIDs, .updated: updatedObjectIDs, .deleted: deletedObjectIDs]
    }
}
