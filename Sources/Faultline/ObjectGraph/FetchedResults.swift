/// The objects a fetch found, as a collection that makes them a batch at a time: Core Data's
/// batch-faulting array (`_PFBatchFaultingArray`), what ``ManagedObjectContext/fetch(_:)-(FetchRequest)``
/// returns.
///
/// With a ``FetchRequest/fetchBatchSize``, the fetch reads only the objects' keys; reaching an
/// index reads its batch's rows in one statement and makes the batch's objects, loaded (as
/// Core Data's array does on `objectAtIndex:`), and moving to another batch lets go of the
/// previous one's: an object
/// nobody else holds and that has no unsaved changes leaves the context, so iterating a
/// million objects keeps one batch in memory. Without a batch size it holds every object the
/// fetch made, like an array; so does it when the result is not read from the store alone: in
/// a child context (which fetches through its parent), or when unsaved changes to objects of
/// the fetched entity must be merged into the result (see ``ManagedObjectContext/fetch(_:)-(FetchRequest)``).
///
/// ```swift
/// var request = FetchRequest(entityName: "Item")
/// request.fetchBatchSize = 500
/// for item in try context.fetch(request) { total += item.value(forKey: "quantity") as? Int64 ?? 0 }
/// let first = try context.fetch(request).first          // one batch read and made, not all of them
/// let all = Array(try context.fetch(request))           // every batch read, every object made (and kept)
/// ```
///
/// `Element` is the class of the objects: ``ManagedObject`` for a fetch by entity name.
/// Like its objects, the collection belongs to its context's queue.
public final class FetchedResults<Element: ManagedObject>: RandomAccessCollection {
    /// Every object, when the fetch was not batched (empty when it was).
    private let objects: [ManagedObject]
    /// The keys and batch size of a batched fetch.
    private let batch: FaultBatch?
    /// The context a batched fetch's objects are made in.
    private let context: ManagedObjectContext?
    /// The batch whose objects are held: its first index and its objects (none held while
    /// `currentObjects` is empty). Two fields, not an optional tuple: reading an object of the
    /// batch then copies nothing (a tuple read out of `self` retained and released its array,
    /// and the batch and context read with it — the context on the runtime's slow path, as it
    /// is weakly referenced — for every object).
    ///
    /// Both skip the run-time exclusivity checks (one to three per object read: 1.5 % of the
    /// instructions of iterating a batched fetch or a fetch of 100,000 objects): like the
    /// collection, they are used on the context's queue only, and no access to them overlaps
    /// another.
    @exclusivity(unchecked) private var currentStart = 0
    /// Optional elements, every one set: the batch is made into this array, not copied out of
    /// one (a copy retained and released every object of the batch once more).
    @exclusivity(unchecked) private var currentObjects: [ManagedObject?] = []

    /// All the objects of a fetch, already made.
    init(objects: [ManagedObject]) {
        self.objects = objects
        self.batch = nil
        self.context = nil
    }

    /// The objects of a batched fetch, made a batch at a time in `context`.
    init(context: ManagedObjectContext, batch: FaultBatch) {
        self.objects = []
        self.batch = batch
        self.context = context
    }

    /// The batch held lent its references to the context's registry (see
    /// ``ObjectRegistry/register(_:for:at:borrowing:)``): the registry takes its own, and the
    /// objects stay registered, as those of any batch still held when its results go. On the
    /// context's queue: results may go on another thread (returned out of a `performAndWait`),
    /// and letting go of them there changed nothing of the context's before the registry
    /// borrowed.
    deinit {
        guard let context, !currentObjects.isEmpty else { return }
        context.performAndWait { context.endBorrows(of: currentObjects) }
    }

    /// The first index, 0.
    public var startIndex: Int { 0 }

    /// The number of objects.
    public var endIndex: Int { batch?.keys.count ?? objects.count }

    /// The number of objects (without making any).
    public var count: Int { endIndex }

    /// Whether the fetch found no object.
    public var isEmpty: Bool { endIndex == 0 }

    /// The object at an index; with a batch size, the rows of its batch are read and its
    /// objects made (those already registered are kept), and those of the batch held before
    /// are let go.
    public subscript(position: Int) -> Element {
        let object = self.object(at: position)
        assert(object is Element, "\(object.entity.name) object is not a \(Element.self)")
        return unsafeDowncast(object, to: Element.self)
    }

    private func object(at position: Int) -> ManagedObject {
        // The batch held (a batch's objects are a non-empty range from `currentStart`).
        let offset = position &- currentStart
        if offset >= 0, offset < currentObjects.count, let object = currentObjects[offset] { return object }
        guard let batch, let context else { return objects[position] }
        precondition(position >= 0 && position < batch.keys.count, "index \(position) out of range 0..<\(batch.keys.count)")
        let range = batch.range(containing: position)
        context.checkAccess()
        releaseCurrentBatch(in: context)
        let loaded = context.batchObjects(batch, range: range, reaching: position)
        // Code these results ran meanwhile (an `awakeFromFetch()` of the batch, the `deinit` of
        // an object the last batch let go of) may have read them at another batch, which is
        // now held: its objects stay registered, the registry's own references taken before
        // its array goes (the registry borrows that array's references).
        if !currentObjects.isEmpty { context.endBorrows(of: currentObjects) }
        currentObjects = loaded
        currentStart = range.lowerBound
        return currentObjects[position - range.lowerBound] ?? context.object(with: batch.keys.id(at: position))
    }

    /// Lets go of the batch held: its objects that nobody else holds leave the context.
    private func releaseCurrentBatch(in context: ManagedObjectContext) {
        // No other copy of the batch's objects may live on: it would hold them. The array is
        // moved out first, so an object's deinit that reads these results meanwhile finds
        // no batch held (not the array being emptied).
        if currentObjects.isEmpty { return }
        var held: [ManagedObject?] = []
        swap(&held, &currentObjects)
        context.forgetUnreferencedObjects(&held)
    }

    /// An iterator over the objects, in order; with a batch size, batch by batch as the
    /// subscript makes them.
    public struct Iterator: IteratorProtocol {
        private let results: FetchedResults
        private var index = 0
        private let end: Int
        /// An unbatched fetch's objects, read straight from its array: no batch to look for
        /// at each object (the subscript's path, a third of iterating 100,000 objects' own
        /// instructions).
        private let objects: [ManagedObject]?

        init(_ results: FetchedResults) {
            self.results = results
            self.end = results.endIndex
            self.objects = results.batch == nil ? results.objects : nil
        }

        /// The next object, or nil after the last.
        public mutating func next() -> Element? {
            guard index < end else { return nil }
            defer { index += 1 }
            if let objects {
                let object = objects[index]
                assert(object is Element, "\(object.entity.name) object is not a \(Element.self)")
                return unsafeDowncast(object, to: Element.self)
            }
            return results[index]
        }
    }

    /// An iterator from the first object.
    public func makeIterator() -> Iterator { Iterator(self) }
}

extension ManagedObjectContext {
    /// Fetches the objects of a request; the same as ``fetch(_:)-(FetchRequest)``, under the
    /// name `FetchedResults` first came with.
    ///
    /// - Throws: as ``fetch(_:)-(FetchRequest)``.
    @available(*, deprecated, renamed: "fetch(_:)", message: "fetch(_:) returns the batch-faulting FetchedResults itself")
    public func fetchResults(_ request: FetchRequest) throws -> FetchedResults<ManagedObject> {
        try fetch(request)
    }

    /// Removes from the context the objects with these IDs that nothing but the context holds
    /// (no changes, no undo step, no reference from the user): they are made again, as
    /// faults, when next asked for.
    ///
    /// Last ID first: IDs hash in groups of consecutive keys (see
    /// ``ManagedObjectID/_rawHashValue(seed:)``), and removing an entry rehashes the entries
    /// after it in its run of occupied buckets — the rest of its group when the keys go
    /// first to last, none when they go last to first.
    ///
    /// Each object is taken out of `objects` and let go of just before the context looks
    /// whether anyone else holds it; `objects` is left empty. (Set to nil in place, the
    /// elements were destroyed again when the array went, through the runtime's generic
    /// destroy, one call per element.)
    ///
    /// An object whose registry entry borrows the reference held here (one the batch made,
    /// see ``ObjectRegistry/register(_:for:at:borrowing:)``) leaves when that reference is
    /// the only one; else the registry takes one of its own.
    func forgetUnreferencedObjects(_ objects: inout [ManagedObject?]) {
        while var object = objects.popLast() {
            guard let id = object?.objectID else { continue }
            if object?.isBorrowedByRegistry == true {
                let unique = isKnownUniquelyReferenced(&object)
                registry.endBorrow(of: object.unsafelyUnwrapped, removing: unique)
                object = nil  // the object goes here when it was the only reference
                continue
            }
            object = nil  // this reference goes first: the registry's may then be the last
            _ = registry.removeIfUniquelyReferenced(id)
        }
    }

    /// Ends the registry's borrows of the references `objects` holds (see
    /// ``ObjectRegistry/register(_:for:at:borrowing:)``), its objects kept registered: for a
    /// holder that goes without moving to another batch.
    func endBorrows(of objects: [ManagedObject?]) {
        checkAccess()
        for case let object? in objects where object.isBorrowedByRegistry {
            registry.endBorrow(of: object, removing: false)
        }
    }
}
