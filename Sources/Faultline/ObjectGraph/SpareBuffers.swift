import Foundation

/// Raw buffers let go of, kept for the next user that needs one of the same size: the
/// registry's emptied tables and the row pages' blocks (``ObjectRegistry``, ``RowPage``).
///
/// glibc serves a block of 128 KiB or more with a fresh mapping, and after freeing one maps
/// the next of that size afresh: each page a page fault when first written. A context made,
/// filled and let go of again and again (a request each, a round of a benchmark) paid that
/// for its registry table and its row pages every time. At most ``limit`` buffers are kept;
/// keeping one more frees the oldest. A kept buffer holds no values (what it must hold to be
/// taken again — all entries empty, say — is its user's rule).
///
/// Thread-safe: buffers are kept and taken from any thread (a registry or a page goes with
/// its last reference).
final class SpareBuffers<Element>: @unchecked Sendable {
    /// The most buffers kept.
    let limit: Int
    private let free: (UnsafeMutablePointer<Element>) -> Void
    private let lock = NSLock()
    // Read and written only under `lock`, oldest first.
    private var kept: [(buffer: UnsafeMutablePointer<Element>, count: Int)] = []
    private var taken = 0

    /// Keeps at most `limit` buffers; `free` frees one let go of (as it was allocated).
    init(limit: Int, free: @escaping (UnsafeMutablePointer<Element>) -> Void) {
        self.limit = limit
        self.free = free
    }

    /// How many buffers are kept (for tests).
    var count: Int { lock.withLock { kept.count } }

    /// How many times a kept buffer was taken (for tests).
    var reuses: Int { lock.withLock { taken } }

    /// A kept buffer of exactly `count` elements, no longer kept; nil when none is.
    func take(count: Int) -> UnsafeMutablePointer<Element>? {
        lock.withLock {
            guard let index = kept.lastIndex(where: { $0.count == count }) else { return nil }
            taken += 1
            return kept.remove(at: index).buffer
        }
    }

    /// Keeps a buffer of `count` elements, freeing the oldest kept when there are more than
    /// ``limit`` (outside the lock).
    func keep(_ buffer: UnsafeMutablePointer<Element>, count: Int) {
        let dropped: UnsafeMutablePointer<Element>? = lock.withLock {
            if kept.capacity == 0 { kept.reserveCapacity(limit + 1) }
            kept.append((buffer, count))
            return kept.count > limit ? kept.removeFirst().buffer : nil
        }
        if let dropped { free(dropped) }
    }
}
