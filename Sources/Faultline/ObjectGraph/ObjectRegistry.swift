import CFaultlineReferenceCounts
import Foundation

/// The objects registered in a context, by ID: Core Data's object map, as an open-addressing
/// table of (ID, object) entries side by side.
///
/// A context looks an ID up for every object it makes, reaches or forgets: a fetch of
/// 100,000 rows looks up 100,000 IDs and registers as many objects. The standard library's
/// dictionary did each in two walks (the look-up, then the insertion), each through an
/// occupancy bitmap, a key array and a value array; here a look-up that misses leaves where
/// the ID goes (a ``Probe``), and registering there is one store — one walk, one array.
///
/// Linear probing with IDs hashed as dictionaries hash them
/// (``ManagedObjectID/_rawHashValue(seed:)``: consecutive keys in neighbouring buckets), at
/// most half full, removals by backward shift (no tombstones), a random seed (see `seed`).
/// Reference semantics: a context owns one; ``dictionary`` copies it out.
final class ObjectRegistry {
    /// One bucket: empty when `object` is nil. The table holds a reference to each object
    /// (counted by hand: a probe reads past entries without touching their counts) — or
    /// borrows one: see ``register(_:for:at:borrowing:)``.
    struct Entry {
        var id: ManagedObjectID
        var object: Unmanaged<ManagedObject>?
    }

    /// Where a look-up stopped: the ID's bucket, or the empty bucket where it goes. Valid for
    /// ``register(_:for:at:)`` until an entry moves (a removal, a resize): registrations in
    /// between only fill empty buckets, so every bucket from the ID's home up to the probe's
    /// still holds another ID, and the ID goes at the probe's bucket or the first empty one
    /// after it.
    struct Probe {
        fileprivate let bucket: Int
        fileprivate let version: Int
        /// A probe of no look-up, stale for every table.
        static let none = Probe(bucket: 0, version: -1)
    }

    private var entries: UnsafeMutablePointer<Entry>
    /// Buckets − 1 (buckets are a power of two).
    private var mask: Int
    /// The number of objects in the table (see ``count``).
    private var tableCount = 0
    /// The number of objects registered: those in the table, and those of a fetch not in it
    /// yet (see ``beginUnindexedFetch(rows:)``).
    var count: Int { tableCount &+ unindexedCount }

    /// The objects of a fetch into an empty registry (see ``beginUnindexedFetch(rows:)``), in
    /// the fetch's order: while it runs, the array it fills; once it ended, the array of
    /// them it returned, shared with its results — registering them outside the table,
    /// one reference count for them all, until the table is needed.
    @exclusivity(unchecked) private var fetched: [ManagedObject] = []
    /// How many of ``fetched`` are registered through the array, not in the table (all of
    /// them, or none once the table was needed: ``indexUnindexed()``).
    @exclusivity(unchecked) private var unindexedCount = 0
    /// Whether a fetch begun by ``beginUnindexedFetch(rows:)`` is filling ``fetched``.
    @exclusivity(unchecked) private var isFetching = false
    /// How many entries borrow their object's reference (``register(_:for:at:borrowing:)``).
    /// While none does, an entry that goes is released without a look at its object's mark:
    /// letting go of a table of objects fetched without a batch size then touches each object
    /// once, for its count, not also the line of its mark (a cache miss per object in the
    /// table's order, most of the walk's time).
    private var borrowedCount = 0

    /// The number of entries borrowing their object's reference (for tests).
    var borrowedEntries: Int { borrowedCount }

    /// Whether every bucket of the table is empty, read bucket by bucket (for tests: a new
    /// table's memory must be all empty entries).
    var everyBucketIsEmpty: Bool { (0...mask).allSatisfy { entries[$0].object == nil } }
    /// Changes whenever entries move or go (a removal, a resize, an emptying): a ``Probe`` of
    /// another version is stale. Registrations leave it.
    private var version = 0
    /// The hash seed: the process's random one (``Hasher``'s) mixed with the table's memory,
    /// so that a store cannot choose keys that collide, and a table refilled from another's
    /// order (``filter(reservingExtra:_:)``) does not inherit its clusters.
    private var seed: Int
    /// Whether the seed was given (a test replaying a layout): kept through refills.
    private let keepsSeed: Bool

    /// An empty table; `seed` fixes the hash seed (for tests that replay a layout).
    init(seed: Int? = nil) {
        mask = Self.minimumBuckets - 1
        entries = Self.allocate(Self.minimumBuckets)
        self.seed = seed ?? Self.seed(for: entries)
        keepsSeed = seed != nil
    }

    /// A seed for a table at `entries`.
    private static func seed(for entries: UnsafeMutablePointer<Entry>) -> Int {
        var hasher = Hasher()
        hasher.combine(UInt(bitPattern: entries))
        return hasher.finalize()
    }

    deinit {
        Self.releaseAndEmpty(entries, buckets: mask &+ 1, holding: tableCount, borrowing: borrowedCount > 0)
        Self.deallocateEmptied(entries, buckets: mask &+ 1)
        // `fetched` goes with the registry: its objects are let go of in the array's order,
        // the order they were made in (and lie in memory in), once the results are gone too.
    }

    private static let minimumBuckets = 8

    /// The size of a huge page on x86-64 and (with 4 KiB base pages) arm64 Linux.
    private static let hugePageBytes = 1 << 21

    /// `buckets` empty entries: a spare table when one has that many buckets (see
    /// ``spareTables``), else zeroed memory, which is an empty entry (a zero ID and no object).
    /// A table below 2 MiB comes zeroed from the system (`calloc`), page by page as it is
    /// reached, instead of being written over once before use.
    ///
    /// A table of 2 MiB or more (a context of some 44,000 objects) is aligned on 2 MiB and
    /// asked to be backed by huge pages (`madvise(MADV_HUGEPAGE)`, a hint the system may
    /// ignore), then zeroed by hand, every page written at once (`posix_memalign` may hand back
    /// used memory): its look-ups land anywhere in megabytes, and with 4 KiB pages each new
    /// group of a fetch's keys missed the processor's page cache (TLB) as well as the data
    /// cache — a table of 100,000 objects spans 1,536 such pages, 3 huge ones. Such tables are
    /// kept for reuse (``spareTables``), so this is paid once.
    private static func allocate(_ buckets: Int) -> UnsafeMutablePointer<Entry> {
        if keepsSpare(buckets), let spare = spareTables.take(count: buckets) { return spare }
        let bytes = buckets * MemoryLayout<Entry>.stride
        if bytes >= hugePageBytes {
            var aligned: UnsafeMutableRawPointer?
            if posix_memalign(&aligned, hugePageBytes, bytes) == 0, let aligned {
                _ = madvise(aligned, bytes, MADV_HUGEPAGE)
                memset(aligned, 0, bytes)
                return aligned.bindMemory(to: Entry.self, capacity: buckets)
            }
        }
        guard let memory = calloc(buckets, MemoryLayout<Entry>.stride) else {
            fatalError("out of memory for a registry of \(buckets) entries")
        }
        return memory.bindMemory(to: Entry.self, capacity: buckets)
    }

    /// Lets go of the objects of a table of `buckets` holding `count` of them: the table is
    /// then all empty entries, as ``allocate(_:)`` makes them. Entries already empty are not
    /// written (a large table's untouched pages stay untouched). `borrowing`: whether some
    /// entry may borrow its reference (else no object is looked at for it).
    ///
    /// Two passes: every entry emptied and every borrow ended first, then the table's
    /// references released. A release runs deinits, which may reach the context (an object
    /// holding the last reference to a batched fetch's results, whose deinit ends its batch's
    /// borrows): none may find an entry of this table still marked, or the borrowed count
    /// would be taken down twice for it.
    ///
    /// The objects are released in about the order of their addresses when there are many
    /// (``releasedInAddressOrder``, see ``releaseInAddressOrder(_:)``): objects this table
    /// holds the last reference to are freed, and freeing them in the table's order touched
    /// every object and the allocator's memory at random. Fewer are released in the table's
    /// order, each object's line asked for a few ahead.
    private static func releaseAndEmpty(_ entries: UnsafeMutablePointer<Entry>, buckets: Int, holding count: Int, borrowing: Bool) {
        guard count > 0 else { return }
        let held = UnsafeMutableBufferPointer<UInt>.allocate(capacity: count)
        defer { held.deallocate() }
        var taken = 0
        for index in 0..<buckets {
            guard let object = entries[index].object else { continue }
            entries[index] = Entry(id: ManagedObjectID(names: 0, primaryKey: 0), object: nil)
            if borrowing, endsBorrow(object) { continue }
            guard taken < count else { preconditionFailure("a registry holds more objects than its count, \(count)") }
            held[taken] = UInt(bitPattern: object.toOpaque())
            taken += 1
        }
        let references = UnsafeMutableBufferPointer(rebasing: held[..<taken])
        if taken >= releasedInAddressOrder {
            releaseInAddressOrder(references)
            return
        }
        for index in references.indices {
            if index &+ prefetchDistance < taken, let ahead = UnsafeRawPointer(bitPattern: references[index &+ prefetchDistance]) {
                faultline_prefetch_for_writing(ahead)
            }
            if let pointer = UnsafeRawPointer(bitPattern: references[index]) { Unmanaged<ManagedObject>.fromOpaque(pointer).release() }
        }
    }

    /// From how many objects ``releaseAndEmpty(_:buckets:holding:borrowing:)`` lets go of them
    /// in the order of their addresses (below, grouping them costs more than it saves).
    static let releasedInAddressOrder = 4096

    /// Releases the objects at `addresses` (one reference each), in about the order of their
    /// addresses: grouped by where they lie between the lowest and the highest address, in
    /// 2,048 groups (one counting pass and one scatter, not a sort), each group in the table's
    /// order. Objects made one after the other lie one after the other, so the memory they
    /// and the allocator touch as they go is reached in order too — the processor's
    /// prefetcher follows it — where the table's order jumped around megabytes for every
    /// object. `addresses` is left in an unspecified order.
    private static func releaseInAddressOrder(_ addresses: UnsafeMutableBufferPointer<UInt>) {
        guard let lowest = addresses.min(), let highest = addresses.max() else { return }
        let groups = 2048
        // The group of an address: its offset from the lowest, scaled to 0..<groups.
        let span = highest - lowest
        let shift = span < UInt(groups) ? 0 : (UInt.bitWidth - span.leadingZeroBitCount) - groups.trailingZeroBitCount
        let starts = UnsafeMutableBufferPointer<Int>.allocate(capacity: groups + 1)
        defer { starts.deallocate() }
        starts.initialize(repeating: 0)
        for address in addresses { starts[Int((address - lowest) >> UInt(shift)) + 1] += 1 }
        for group in 1...groups { starts[group] += starts[group - 1] }
        let ordered = UnsafeMutableBufferPointer<UInt>.allocate(capacity: addresses.count)
        defer { ordered.deallocate() }
        for address in addresses {
            let group = Int((address - lowest) >> UInt(shift))
            ordered[starts[group]] = address
            starts[group] += 1
        }
        for address in ordered {
            if let pointer = UnsafeRawPointer(bitPattern: address) { Unmanaged<ManagedObject>.fromOpaque(pointer).release() }
        }
    }

    /// How many objects ahead ``releaseAndEmpty(_:buckets:holding:borrowing:)``, releasing
    /// fewer than ``releasedInAddressOrder`` in the table's order, asks for an object's line.
    static let prefetchDistance = 16

    /// Whether an entry that goes borrowed its object's reference (``register(_:for:at:borrowing:)``);
    /// the object's mark is cleared.
    @inline(__always)
    private static func endsBorrow(_ object: Unmanaged<ManagedObject>) -> Bool {
        object._withUnsafeGuaranteedRef { object in
            guard object.isBorrowedByRegistry else { return false }
            object.isBorrowedByRegistry = false
            return true
        }
    }

    /// ``endsBorrow(_:)`` for an entry of this table that goes, counted; no look at the
    /// object while no entry borrows.
    @inline(__always)
    private func endsCountedBorrow(_ object: Unmanaged<ManagedObject>) -> Bool {
        guard borrowedCount > 0, Self.endsBorrow(object) else { return false }
        borrowedCount -= 1
        return true
    }

    /// Lets go of the object of an entry that goes: releases the table's reference, or for
    /// a borrowed one only clears the object's mark.
    @inline(__always)
    private func letGo(_ object: Unmanaged<ManagedObject>) {
        if !endsCountedBorrow(object) { object.release() }
    }

    /// The object of an entry that goes, as a reference for the caller: the table's, or for a
    /// borrowed one a new one (and its mark cleared).
    @inline(__always)
    private func takeOut(_ object: Unmanaged<ManagedObject>) -> ManagedObject {
        endsCountedBorrow(object) ? object.takeUnretainedValue() : object.takeRetainedValue()
    }

    /// Frees a table whose entries are all empty (``releaseAndEmpty(_:buckets:holding:borrowing:)``),
    /// or keeps it as a spare table.
    private static func deallocateEmptied(_ entries: UnsafeMutablePointer<Entry>, buckets: Int) {
        if keepsSpare(buckets) {
            spareTables.keep(entries, count: buckets)
        } else {
            deallocate(entries)
        }
    }

    /// One emptied large table kept for the next registry that needs one of its size: a new
    /// table of 262,144 buckets (100,000 objects) came from the system as 1,536 fresh pages,
    /// each a page fault when first written (more time than registering the objects). Every
    /// entry of a kept table is empty. Tables of 32,768 to 524,288 buckets (768 KiB to 12 MiB,
    /// the memory a process keeps for this); a smaller one the allocator reuses itself.
    static let spareTables = SpareBuffers<Entry>(limit: 1, free: deallocate)

    /// Whether a table of `buckets` is kept when emptied (see ``spareTables``).
    private static func keepsSpare(_ buckets: Int) -> Bool { buckets >= 1 << 15 && buckets <= 1 << 19 }

    /// Frees what ``allocate(_:)`` made (its entries hold no references any more).
    private static func deallocate(_ entries: UnsafeMutablePointer<Entry>) {
        free(entries)
    }

    /// Whether no object is registered.
    var isEmpty: Bool { count == 0 }

    @inline(__always)
    private func home(_ id: ManagedObjectID) -> Int { id._rawHashValue(seed: seed) & mask }

    /// The bucket of `id`, or of the empty bucket where it goes, and whether it is there.
    @inline(__always)
    private func find(_ id: ManagedObjectID) -> (bucket: Int, found: Bool) {
        indexIfNeeded()
        return probe(id)
    }

    /// ``find(_:)`` in the table as it is (no objects put in it first).
    @inline(__always)
    private func probe(_ id: ManagedObjectID) -> (bucket: Int, found: Bool) {
        var bucket = home(id)
        while true {
            let entry = entries + bucket
            if entry.pointee.object == nil { return (bucket, false) }
            if entry.pointee.id == id { return (bucket, true) }
            bucket = (bucket &+ 1) & mask
        }
    }

    /// Starts bringing in the line of `id`'s home bucket, for a look-up a few rows later: a
    /// hint to the processor (no effect on the table). A fetch registering its rows in key
    /// order reaches a new group of buckets every eight keys, in a table too big for the
    /// cache, and waited for each group's line; asked for ahead, it is there when reached.
    @inline(__always)
    func prefetch(_ id: ManagedObjectID) {
        faultline_prefetch_for_writing(entries + home(id))
    }

    /// The object registered for `id`, or where `id` would go (for ``register(_:for:at:)``).
    @inline(__always)
    func lookUp(_ id: ManagedObjectID) -> (object: ManagedObject?, probe: Probe) {
        let (bucket, found) = find(id)
        return (found ? entries[bucket].object?.takeUnretainedValue() : nil, Probe(bucket: bucket, version: version))
    }

    /// The object registered for `id`; nil when none is. Setting nil removes it.
    subscript(id: ManagedObjectID) -> ManagedObject? {
        @inline(__always) get { lookUp(id).object }
        set {
            if let newValue { updateValue(newValue, forKey: id) } else { removeValue(forKey: id) }
        }
    }

    /// Registers `object` for `id`, which a ``lookUp(_:)`` found unregistered at `probe`:
    /// from there, at the first empty bucket — or over `id`'s entry, should it have been
    /// registered since. Looked up afresh when entries moved since, or the table must grow.
    ///
    /// `borrowing`: the new entry takes no reference of its own, it borrows the caller's —
    /// the objects a batch of a batched fetch makes, which its ``FetchedResults`` holds until
    /// it moves to another batch, when most of them leave the context again. The entry then
    /// costs no reference count, taken and given back (two atomic operations on the object,
    /// of the ten or so its making and freeing take). The object is marked
    /// (``ManagedObject/isBorrowedByRegistry``) until the borrow ends: the holder calls
    /// ``endBorrow(of:removing:)`` before it lets go of the object, and an entry that goes
    /// before (a removal, ``removeAll()``) only clears the mark. (An entry registered over
    /// another, or after the table moved, takes a reference as any.)
    @inline(__always)
    func register(_ object: ManagedObject, for id: ManagedObjectID, at probe: Probe, borrowing: Bool = false) {
        guard unindexedCount == 0, probe.version == version, (tableCount &+ 1) &* 2 <= mask &+ 1 else {
            updateValue(object, forKey: id)
            return
        }
        var bucket = probe.bucket
        while true {
            let entry = entries + bucket
            guard let old = entry.pointee.object else { break }
            if entry.pointee.id == id {
                entry.pointee.object = Unmanaged.passRetained(object)
                letGo(old)
                return
            }
            bucket = (bucket &+ 1) & mask
        }
        if borrowing {
            object.isBorrowedByRegistry = true
            borrowedCount += 1
            (entries + bucket).pointee = Entry(id: id, object: Unmanaged.passUnretained(object))
        } else {
            (entries + bucket).pointee = Entry(id: id, object: Unmanaged.passRetained(object))
        }
        tableCount &+= 1
    }

    /// Ends the borrow of `object`'s entry (see ``register(_:for:at:borrowing:)``), before its
    /// holder lets go of it: the entry goes when `removing` (the holder's reference was the
    /// only one: the object goes with it), else the table takes a reference of its own.
    /// Nothing when the object is not marked (its entry went since).
    func endBorrow(of object: ManagedObject, removing: Bool) {
        guard object.isBorrowedByRegistry else { return }
        object.isBorrowedByRegistry = false
        borrowedCount -= 1
        if removing {
            let (bucket, found) = find(object.objectID)
            if found, entries[bucket].object?.toOpaque() == Unmanaged.passUnretained(object).toOpaque() {
                remove(at: bucket)
                return
            }
            // Not under its ID (which the registry keys it by, and a fetched object's does
            // not change): kept, with a reference, rather than an entry left to dangle.
            assertionFailure("a borrowed registry entry not found under its object's ID \(object.objectID)")
        }
        _ = Unmanaged.passUnretained(object).retain()
    }

    /// Registers `object` for `id`; returns the object registered for it before, if any.
    @discardableResult
    func updateValue(_ object: ManagedObject, forKey id: ManagedObjectID) -> ManagedObject? {
        var (bucket, found) = find(id)
        if found, let old = entries[bucket].object {
            entries[bucket].object = Unmanaged.passRetained(object)
            return takeOut(old)
        }
        if (tableCount + 1) * 2 > mask + 1 {
            resize(buckets: (mask + 1) * 2)
            bucket = find(id).bucket
        }
        (entries + bucket).pointee = Entry(id: id, object: Unmanaged.passRetained(object))
        tableCount += 1
        return nil
    }

    /// Removes the object registered for `id`, returning it.
    @discardableResult
    func removeValue(forKey id: ManagedObjectID) -> ManagedObject? {
        let (bucket, found) = find(id)
        guard found, let removed = entries[bucket].object else { return nil }
        remove(at: bucket)
        return takeOut(removed)
    }

    /// Removes the object registered for `id` when the table holds the only reference to it.
    /// True when removed.
    func removeIfUniquelyReferenced(_ id: ManagedObjectID) -> Bool {
        let (bucket, found) = find(id)
        guard found, let entry = entries[bucket].object else { return false }
        // A borrowed entry: its holder holds the object, and decides (``endBorrow(of:removing:)``).
        if entry._withUnsafeGuaranteedRef({ $0.isBorrowedByRegistry }) { return false }
        // The table's reference, taken over by `held` for the check.
        var held: ManagedObject? = entry.takeRetainedValue()
        guard isKnownUniquelyReferenced(&held) else {
            if let held { entries[bucket].object = Unmanaged.passRetained(held) }
            return false
        }
        remove(at: bucket)
        return true
    }

    /// Empties bucket `bucket` (whose reference the caller took), moving back the entries
    /// after it that would no longer be found (linear probing without tombstones).
    private func remove(at bucket: Int) {
        entries[bucket].object = nil
        var hole = bucket
        var next = (bucket + 1) & mask
        while entries[next].object != nil {
            let home = home(entries[next].id)
            // The entry at `next` stays when its home lies after the hole, cyclically, up to
            // `next` itself; otherwise it moves into the hole.
            let stays = hole <= next ? (home > hole && home <= next) : (home > hole || home <= next)
            if !stays {
                entries[hole] = entries[next]
                entries[next].object = nil
                hole = next
            }
            next = (next + 1) & mask
        }
        tableCount -= 1
        version &+= 1
    }

    // MARK: A fetch into an empty registry

    /// Starts a fetch of `rows` rows whose objects are registered without being put in the
    /// table, when nothing is registered yet; false (register them one by one) otherwise.
    ///
    /// A fetch into an empty context — the most common one, a context made for a request —
    /// makes a new object for every row, with distinct IDs (a row's key is unique in its
    /// table): no look-up can find one, and no two collide. The fetch fills the registry's
    /// array of them (``appendFetched(_:unindexed:)``), and when it ends returns that array
    /// (``endFetch()``), which the registry keeps: one array holding a reference to each
    /// object, shared with the fetch's results — one reference count for them all, where the
    /// table took one per object, and gave each back one by one when the context went.
    ///
    /// Whatever needs the table first — a look-up, a registration, a removal, a walk —
    /// puts them in it then (``indexUnindexed()``), each with a reference of its own: the
    /// table then holds exactly what it would have held, so every answer is the same. A
    /// fetch under way whose objects are so put in the table (an `awakeFromFetch()` that
    /// looked an object up) registers its remaining rows one by one.
    func beginUnindexedFetch(rows: Int) -> Bool {
        guard count == 0, !isFetching, rows > 0 else { return false }
        fetched = []
        fetched.reserveCapacity(rows)
        isFetching = true
        return true
    }

    /// Whether the fetch begun by ``beginUnindexedFetch(rows:)`` still registers its objects
    /// outside the table (false once something needed them in it).
    var isFetchingUnindexed: Bool { isFetching && unindexedCount == fetched.count }

    /// Appends an object to the fetch begun by ``beginUnindexedFetch(rows:)``: registered by
    /// the array when `unindexed` (while ``isFetchingUnindexed``), or already in the table.
    @inline(__always)
    func appendFetched(_ object: consuming ManagedObject, unindexed: Bool) {
        precondition(isFetching, "an object appended outside a fetch into the registry")
        // Moved in: borrowed, it was retained for the array and released by the caller.
        fetched.append(consume object)
        if unindexed { unindexedCount &+= 1 }
    }

    /// Ends the fetch begun by ``beginUnindexedFetch(rows:)``: its objects, in order. Those
    /// still outside the table stay registered through the array, which the registry keeps.
    func endFetch() -> [ManagedObject] {
        precondition(isFetching, "a fetch into the registry ended without beginning")
        isFetching = false
        let objects = fetched
        if unindexedCount == 0 { fetched = [] }
        return objects
    }

    /// Puts the objects registered outside the table in it (``indexUnindexed()``) when there
    /// are any: first thing in every method that reads or changes the table.
    @inline(__always)
    private func indexIfNeeded() {
        if _slowPath(unindexedCount != 0) { indexUnindexed() }
    }

    /// Puts the objects registered outside the table in it, each with a reference of its
    /// own (their IDs are not in the table: it was empty when they came, and nothing was put
    /// in it since), and lets go of the array — unless a fetch is still filling it.
    @inline(never)
    private func indexUnindexed() {
        let moving = unindexedCount
        unindexedCount = 0
        reserveCapacity(tableCount + moving)
        version &+= 1
        for object in fetched {
            // The IDs are distinct (a page's rows are distinct rows of one table); a repeated
            // one would be a second entry for its ID, found or not depending on removals.
            assert(!probe(object.objectID).found, "a fetch registered two objects for \(object.objectID)")
            insertMoved(Entry(id: object.objectID, object: Unmanaged.passRetained(object)))
        }
        tableCount += moving
        if !isFetching { fetched = [] }
    }

    /// Makes room for `capacity` objects in all without growing again.
    func reserveCapacity(_ capacity: Int) {
        guard capacity * 2 > mask + 1 else { return }
        resize(buckets: Self.buckets(for: capacity))
    }

    /// The buckets a table of `capacity` objects takes: a power of two, at least twice as
    /// many (the table is at most half full).
    private static func buckets(for capacity: Int) -> Int {
        var buckets = minimumBuckets
        while buckets < capacity * 2 { buckets *= 2 }
        return buckets
    }

    /// Moves the entries into a table of `buckets` (their references move with them).
    private func resize(buckets: Int) {
        let old = entries
        let oldBuckets = mask + 1
        entries = Self.allocate(buckets)
        mask = buckets - 1
        version &+= 1
        for index in 0..<oldBuckets where old[index].object != nil {
            insertMoved(old[index])
        }
        Self.deallocate(old)
    }

    /// Puts an entry whose ID is not in the table into its bucket (no count change).
    @inline(__always)
    private func insertMoved(_ entry: Entry) {
        var bucket = home(entry.id)
        while entries[bucket].object != nil { bucket = (bucket &+ 1) & mask }
        entries[bucket] = entry
    }

    /// Removes every object. The objects are let go of once the table is empty (an object's
    /// `deinit` finds it so).
    func removeAll() {
        let old = entries
        let oldBuckets = mask + 1
        let held = tableCount
        mask = Self.minimumBuckets - 1
        entries = Self.allocate(Self.minimumBuckets)
        tableCount = 0
        version &+= 1
        let borrowing = borrowedCount > 0
        borrowedCount = 0
        // A fetch's objects registered through its array: the array let go of after the
        // table's references. A fetch under way, whose hook reset the context, keeps its
        // array (what it made so far is no longer registered) and registers the rest one by one.
        let fetchedObjects = isFetching ? [] : fetched
        if !isFetching { fetched = [] }
        unindexedCount = 0
        Self.releaseAndEmpty(old, buckets: oldBuckets, holding: held, borrowing: borrowing)
        Self.deallocateEmptied(old, buckets: oldBuckets)
        withExtendedLifetime(fetchedObjects) {}
    }

    /// Whether some registered object satisfies `predicate`.
    func contains(where predicate: (ManagedObjectID, ManagedObject) throws -> Bool) rethrows -> Bool {
        guard count > 0 else { return false }
        indexIfNeeded()
        for index in 0...mask {
            // Borrowed, not retained, for the call.
            if let object = entries[index].object, try object._withUnsafeGuaranteedRef({ try predicate(entries[index].id, $0) }) { return true }
        }
        return false
    }

    /// Keeps only the objects whose IDs `isIncluded` accepts (asked twice per ID: it must answer
    /// the same), in a table made for them and `extra` more: one pass, instead of a removal
    /// (and the shift of its neighbours) per object left out. The others are let go of once
    /// the table is whole.
    func filter(reservingExtra extra: Int, _ isIncluded: (ManagedObjectID) -> Bool) {
        indexIfNeeded()
        let old = entries
        let oldBuckets = mask + 1
        var kept = 0
        for index in 0..<oldBuckets {
            if old[index].object != nil, isIncluded(old[index].id) { kept += 1 }
        }
        let buckets = Self.buckets(for: kept + extra)
        entries = Self.allocate(buckets)
        mask = buckets - 1
        if !keepsSeed { seed = Self.seed(for: entries) }
        version &+= 1
        var dropped: [Unmanaged<ManagedObject>] = []
        dropped.reserveCapacity(tableCount - kept)
        for index in 0..<oldBuckets {
            guard let object = old[index].object else { continue }
            if isIncluded(old[index].id) { insertMoved(old[index]) } else { dropped.append(object) }
        }
        tableCount = kept
        Self.deallocate(old)
        for object in dropped { letGo(object) }
    }

    /// Calls `body` with each registered ID and object (unretained), in bucket order.
    private func forEachEntry(_ body: (ManagedObjectID, Unmanaged<ManagedObject>) -> Void) {
        guard count > 0 else { return }
        indexIfNeeded()
        for index in 0...mask {
            if let object = entries[index].object { body(entries[index].id, object) }
        }
    }

    /// The registered objects (a snapshot: the table may change while it is read).
    var values: [ManagedObject] {
        var result: [ManagedObject] = []
        result.reserveCapacity(count)
        forEachEntry { _, object in result.append(object.takeUnretainedValue()) }
        return result
    }

    /// The IDs registered (a snapshot).
    var keys: [ManagedObjectID] {
        var result: [ManagedObjectID] = []
        result.reserveCapacity(count)
        forEachEntry { id, _ in result.append(id) }
        return result
    }

    /// The registered objects by ID, as a dictionary.
    var dictionary: [ManagedObjectID: ManagedObject] {
        var result: [ManagedObjectID: ManagedObject] = [:]
        result.reserveCapacity(count)
        forEachEntry { id, object in result[id] = object.takeUnretainedValue() }
        return result
    }
}
