/// The objects a context has unsaved changes to (inserted, deleted, or changed at some point
/// since its last save, rollback or reset), each once, in the order they were first touched.
///
/// An array, with each object marked as being in it (``ManagedObject/isTouched``, a bit in
/// the object): an object belongs to one context, so one bit tells whether it is in that
/// context's touched objects. Adding an object is a test of that bit and an append, where a
/// dictionary by identity hashed the object's address and probed a table out of the cache
/// (about 450 instructions an object, in a change of 100,000). The order is the order of
/// the changes, not of a hash table.
///
/// Removing one object (rare: a conflict rolled back, a row found gone) clears its mark and
/// leaves its entry behind, marked stale (``ManagedObject/hasStaleTouchedEntry``); the stale
/// entries are dropped when they are half of them, or before that object comes back (so no
/// object is ever listed twice). Invariant: every object whose `isTouched` is set is in
/// `entries` once; every other entry is stale.
///
/// One instance per context, only ever mutated in place: a mutated copy would clear marks of
/// objects the original still lists.
struct TouchedObjects {
    private var entries: [ManagedObject] = []
    /// The entries whose object was removed since the last compaction.
    private var staleCount = 0

    /// The number of objects.
    var count: Int { entries.count - staleCount }

    /// Whether there are none.
    var isEmpty: Bool { entries.count == staleCount }

    /// The objects, in the order they were first touched.
    var objects: [ManagedObject] {
        staleCount == 0 ? entries : entries.filter(\.isTouched)
    }

    /// The first object, in order, that satisfies `predicate`: no copy of the list made (a
    /// loop over ``objects`` copies it while a removed object's entry is still in it).
    func first(where predicate: (ManagedObject) throws -> Bool) rethrows -> ManagedObject? {
        for object in entries where object.isTouched {
            if try predicate(object) { return object }
        }
        return nil
    }

    /// Whether some object satisfies `predicate` (see ``first(where:)``).
    func contains(where predicate: (ManagedObject) throws -> Bool) rethrows -> Bool {
        try first(where: predicate) != nil
    }

    /// Whether an object of the context is among them.
    @inline(__always)
    func contains(_ object: ManagedObject) -> Bool { object.isTouched }

    /// Adds an object (nothing when it is there already).
    @inline(__always)
    mutating func insert(_ object: ManagedObject) {
        if object.isTouched { return }
        if object.hasStaleTouchedEntry { dropStaleEntries() }
        object.isTouched = true
        entries.append(object)
    }

    /// Removes an object (nothing when it is not there).
    mutating func remove(_ object: ManagedObject) {
        guard object.isTouched else { return }
        object.isTouched = false
        object.hasStaleTouchedEntry = true
        staleCount += 1
        if staleCount > entries.count / 2 { dropStaleEntries() }
    }

    /// Removes every object.
    mutating func removeAll() {
        entries.forEachBorrowed { object in
            object.isTouched = false
            object.hasStaleTouchedEntry = false
        }
        entries = []
        staleCount = 0
    }

    private mutating func dropStaleEntries() {
        entries.removeAll { object in
            if object.isTouched { return false }
            object.hasStaleTouchedEntry = false
            return true
        }
        staleCount = 0
    }
}
