import Foundation

/// Large array buffers a save or a fetch fills and drops, kept for the next: a save's list of
/// row changes, the buffer of their values, the sort keys of the rows (`planUpdates`); a
/// fetch's list of decoded rows (``DecodedPage``).
///
/// A save of 100,000 changed objects builds some 25 MB of such arrays and frees them when it
/// is done. glibc serves a block that large with a fresh mapping from the system, and — its
/// threshold set to the size of the last such block freed — the next save's blocks of the same
/// size again: 6,000 pages, each a page fault when first written (about 8% of the update's
/// time, measured against an allocator told to keep its memory). Here one emptied buffer per
/// element type, of at least ``smallest`` bytes, is kept while all kept together stay within
/// ``budget``: the memory a process keeps for this, with no values in it.
///
/// Thread-safe; a buffer is used by one save at a time (taken out, then given back).
enum ScratchArrays {
    /// The smallest buffer kept: glibc reuses smaller blocks itself.
    static let smallest = 128 * 1024
    /// The most bytes kept, all buffers together.
    static let budget = 32 * 1024 * 1024

    private static let lock = NSLock()
    // Read and written only under `lock`: per element type, one empty array with its capacity.
    nonisolated(unsafe) private static var kept: [ObjectIdentifier: (array: Any, bytes: Int)] = [:]
    nonisolated(unsafe) private static var keptBytes = 0
    nonisolated(unsafe) private static var taken = 0

    /// How many times a kept buffer was taken (for tests).
    static var reuses: Int { lock.withLock { taken } }

    /// The capacity of the buffer kept for `T`; 0 when none is (for tests).
    static func keptCapacity<T>(_: T.Type) -> Int {
        lock.withLock { (kept[ObjectIdentifier(T.self)]?.array as? [T])?.capacity ?? 0 }
    }

    /// An empty array with room for at least `capacity` elements: the one kept for `T` when it
    /// is big enough (it is no longer kept), else a new one. `growing` takes the one kept
    /// whatever its size, for an array whose size is not known beforehand (it grows from there).
    static func take<T>(_: T.Type, capacity: Int, growing: Bool = false) -> [T] {
        if growing || capacity * MemoryLayout<T>.stride >= smallest {
            var found: [T]? = lock.withLock {
                guard let entry = kept[ObjectIdentifier(T.self)], let array = entry.array as? [T], growing || array.capacity >= capacity else { return nil }
                kept[ObjectIdentifier(T.self)] = nil
                keptBytes -= entry.bytes
                taken += 1
                return array
            }
            // Moved out of the optional (a copy beside it would make the buffer shared, and
            // growing it copy it).
            if var array = found.take() {
                array.reserveCapacity(capacity)
                return array
            }
        }
        var array: [T] = []
        array.reserveCapacity(capacity)
        return array
    }

    /// Makes room in `array` for `count` more elements: an empty array takes the buffer kept
    /// for `T` (see ``take(_:capacity:growing:)``), one with elements grows as usual.
    static func reserve<T>(_ array: inout [T], adding count: Int) {
        if array.isEmpty {
            array = take(T.self, capacity: count)
        } else {
            array.reserveCapacity(array.count + count)
        }
    }

    /// Empties `array` (its elements are destroyed here) and keeps its buffer for the next
    /// ``take(_:capacity:)`` of `T`, when it is big enough and fits the budget (replacing a
    /// smaller one kept); `array` is left empty, without a buffer.
    static func give<T>(_ array: inout [T]) {
        var buffer: [T] = []
        swap(&buffer, &array)
        let bytes = buffer.capacity * MemoryLayout<T>.stride
        guard bytes >= smallest, bytes <= budget else { return }
        buffer.removeAll(keepingCapacity: true)
        let dropped: Any? = lock.withLock {
            let key = ObjectIdentifier(T.self)
            let previous = kept[key]
            if let previous, previous.bytes >= bytes { return nil as Any? }
            guard keptBytes - (previous?.bytes ?? 0) + bytes <= budget else { return nil as Any? }
            kept[key] = (buffer, bytes)
            keptBytes += bytes - (previous?.bytes ?? 0)
            return previous?.array
        }
        // A buffer let go of is freed here, outside the lock.
        _ = dropped
    }
}
