extension Array where Element: AnyObject {
    /// Calls `body` with each element in order, borrowed from the array: no retain and
    /// release of each. A retain is an atomic operation on an object's first cache line, and
    /// in a pass over the 100,000 objects of a save that line is most often out of the cache
    /// (each of a save's passes retained and released every object: a miss, then a write).
    ///
    /// The array holds the elements for the whole call (it is a value the caller holds, and
    /// this copy keeps its buffer alive even if the caller's variable changes meanwhile), so
    /// each is alive while `body` runs; `body` gets an ordinary reference, and what it keeps
    /// it retains as usual.
    @inline(__always)
    func forEachBorrowed(_ body: (Element) throws -> Void) rethrows {
        try withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            let references = UnsafeRawPointer(base)
            for index in 0..<buffer.count {
                try references.load(fromByteOffset: index &* MemoryLayout<Element>.stride, as: Unmanaged<Element>.self)
                    ._withUnsafeGuaranteedRef(body)
            }
        }
    }
}
