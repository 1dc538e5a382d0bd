/// The objects a fetch found, as a collection that makes them a batch at a time: Core Data's
/// batch-faulting array.
///
/// With a ``FetchRequest/fetchBatchSize``, the fetch reads only the objects' keys; reaching an
/// index makes the objects of its batch (faults, whose values load in one statement when one
/// of them is touched), and moving to another batch lets go of the previous one's: an object
/// nobody else holds and that has no unsaved changes leaves the context, so iterating a
/// million objects keeps one batch in memory. Without a batch size (or when unsaved changes
/// must be merged into the result) it holds the objects ``ManagedObjectContext/fetch(_:)-(FetchRequest)``
/// returns.
///
/// ```swift
/// var request = FetchRequest(entityName: "Item")
/// request.fetchBatchSize = 500
/// for item in try context.fetchResults(request) { total += item.value(forKey: "quantity") as? Int64 ?? 0 }
/// ```
///
/// Like its objects, the collection belongs to its context's queue.
public final class FetchedResults: RandomAccessCollection {
    private enum Storage {
        case objects([ManagedObject])
        case batched(FaultBatch)
    }

    private let context: ManagedObjectContext
    private let storage: Storage
    /// The batch whose objects are held: its first index and its objects.
    private var current: (start: Int, objects: [ManagedObject])?

    init(context: ManagedObjectContext, objects: [ManagedObject]) {
        self.context = context
        self.storage = .objects(objects)
    }

    init(context: ManagedObjectContext, batch: FaultBatch) {
        self.context = context
        self.storage = .batched(batch)
    }

    /// The first index, 0.
    public var startIndex: Int { 0 }

    /// The number of objects.
    public var endIndex: Int {
        switch storage {
        case .objects(let objects): return objects.count
        case .batched(let batch): return batch.keys.count
        }
    }

    /// The object at an index; with a batch size, the objects of its batch are made (as
    /// faults) and those of the batch held before are let go.
    public subscript(position: Int) -> ManagedObject {
        switch storage {
        case .objects(let objects):
            return objects[position]
        case .batched(let batch):
            precondition(position >= 0 && position < batch.keys.count, "index \(position) out of range 0..<\(batch.keys.count)")
            let range = batch.range(containing: position)
            if let current, current.start == range.lowerBound { return current.objects[position - range.lowerBound] }
            releaseCurrentBatch()
            let objects = range.map { batch.object(at: $0, in: context) }
            current = (range.lowerBound, objects)
            return objects[position - range.lowerBound]
        }
    }

    /// Lets go of the batch held: its objects that nobody else holds leave the context.
    private func releaseCurrentBatch() {
        // No local copy of the batch's objects may outlive `current`: it would hold them.
        guard let ids = heldIDs() else { return }
        current = nil
        context.forgetUnreferencedObjects(ids)
    }

    private func heldIDs() -> [ManagedObjectID]? { current?.objects.map(\.objectID) }
}

extension ManagedObjectContext {
    /// Fetches the objects of a request as a ``FetchedResults`` collection: with a
    /// ``FetchRequest/fetchBatchSize``, objects are made a batch at a time and let go of when
    /// iteration moves on, as in Core Data's batched fetch; otherwise the same objects as
    /// ``fetch(_:)-(FetchRequest)``.
    ///
    /// - Throws: as ``fetch(_:)-(FetchRequest)``.
    public func fetchResults(_ request: FetchRequest) throws -> FetchedResults {
        checkAccess()
        if request.fetchBatchSize <= 0 || parent != nil || (request.includesPendingChanges && !touched.isEmpty) {
            return FetchedResults(context: self, objects: try fetch(request))
        }
        coordinator.storeLock.lock(); defer { coordinator.storeLock.unlock() }
        return FetchedResults(context: self, batch: try fetchBatch(request))
    }

    /// Removes from the context the objects with these IDs that nothing but the context holds
    /// (no changes, no undo step, no reference from the user): they are made again, as
    /// faults, when next asked for.
    func forgetUnreferencedObjects(_ ids: [ManagedObjectID]) {
        for id in ids {
            guard let index = registeredObjects.index(forKey: id) else { continue }
            if isKnownUniquelyReferenced(&registeredObjects.values[index]) {
                registeredObjects.remove(at: index)
            }
        }
    }
}
