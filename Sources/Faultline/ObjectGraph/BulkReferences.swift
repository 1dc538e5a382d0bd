import CFaultlineReferenceCounts

/// Strong reference counts to one object taken in bulk, handed out one at a time.
///
/// Every object a fetch makes holds references to the same few objects: its entity's
/// storage, its context's link and its row page (twice: its values and its committed values).
/// Counted one by one, that is three atomic operations per object made, each worth about
/// 1.5 % of a fetch's time on the benchmark's machine (an atomic operation drains the
/// processor's store buffer). A fetch takes them here instead: one `swift_retain_n` for as
/// many counts as the rows left could use, references handed out from them
/// (`takeRetainedValue()` of an unretained reference: a count taken, none added), and the
/// counts not used given back at the end (``finish()``). The counts stay exact.
struct BulkReferences {
    private var object: UnsafeMutableRawPointer?
    private var remaining: UInt32 = 0

    /// An empty reserve.
    init() {}

    /// A reference to `target` holding one of the counts taken in bulk, for the caller to
    /// turn into an owned reference (`takeRetainedValue()`). When the reserve holds no count
    /// of `target`, the counts of another object are given back and `upTo` are taken (at
    /// most `UInt32.max`): the most the caller may still ask for.
    @inline(__always)
    mutating func take(_ target: UnsafeMutableRawPointer, upTo: Int) -> UnsafeMutableRawPointer {
        if remaining == 0 || object != target { refill(target, upTo) }
        remaining &-= 1
        return target
    }

    @inline(never)
    private mutating func refill(_ target: UnsafeMutableRawPointer, _ upTo: Int) {
        finish()
        let count = UInt32(clamping: max(upTo, 1))
        faultline_retain_n(target, count)
        object = target
        remaining = count
    }

    /// Gives back the counts not handed out.
    mutating func finish() {
        if let object, remaining > 0 { faultline_release_n(object, remaining) }
        object = nil
        remaining = 0
    }
}
