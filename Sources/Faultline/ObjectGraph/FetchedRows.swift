import Foundation

/// The rows of a dictionary fetch held as Core Data holds them (its `NSKnownKeysDictionary`):
/// the keys once for the whole fetch, each row's values by position, in buffers of about
/// 4,096 values. Making a row hashes no key and allocates nothing; reading a value by key compares
/// the key with the fetch's few keys; typed reads (`row["count", as: Int64.self]`) unbox
/// nothing.
///
/// ```swift
/// var request = FetchRequest(entityName: "Item")
/// request.resultType = .dictionary
/// request.propertiesToFetch = ["name", "quantity"]
/// for row in try context.fetchRows(request) {
///     total += row["quantity", as: Int64.self] ?? 0
///     names.append(row["name"] as? String ?? "")
/// }
/// ```
///
/// A row reads like the `[String: Any]` ``ManagedObjectContext/fetchDictionaries(_:)``
/// returns for it (``FetchedRow/dictionary``): the same keys, the same values, a NULL value
/// absent. Like a context's objects, the rows are read on one thread (they are not `Sendable`).
public struct FetchedRows: RandomAccessCollection {
    let keys: FetchedRowKeys
    /// The values in chunks of ``rowsPerChunk`` rows (a big fetch fills fixed-size buffers
    /// instead of growing and moving one); every chunk but the last is full.
    let chunks: [ValueChunk]
    let rowsPerChunk: Int
    let rowCount: Int

    /// How many rows a chunk of values holds for `keyCount` keys: about 4,096 values.
    static func rowsPerChunk(keyCount: Int) -> Int { Swift.max(1, 4096 / Swift.max(1, keyCount)) }

    init(keys: FetchedRowKeys, chunks: [ValueChunk]) {
        self.keys = keys
        self.chunks = chunks
        self.rowsPerChunk = Self.rowsPerChunk(keyCount: keys.names.count)
        self.rowCount = keys.names.isEmpty ? 0 : chunks.reduce(0) { $0 + $1.count } / keys.names.count
    }

    /// The keys of every row, in the order of the request's `propertiesToFetch`.
    public var keyNames: [String] { keys.names }

    /// The first index, 0.
    public var startIndex: Int { 0 }

    /// The number of rows.
    public var endIndex: Int { rowCount }

    /// The row at a position.
    public subscript(position: Int) -> FetchedRow {
        precondition(position >= 0 && position < rowCount, "row \(position) out of range 0..<\(rowCount)")
        return FetchedRow(keys: keys, chunk: chunks[position / rowsPerChunk], start: (position % rowsPerChunk) * keys.names.count)
    }

    /// An iterator over the rows, in order, chunk by chunk (no division per row, as the
    /// subscript needs).
    public struct Iterator: IteratorProtocol {
        private let rows: FetchedRows
        private var chunk = 0
        private var start = 0

        init(_ rows: FetchedRows) { self.rows = rows }

        /// The next row, or nil after the last.
        public mutating func next() -> FetchedRow? {
            let width = rows.keys.names.count
            guard width > 0 else { return nil }
            while chunk < rows.chunks.count {
                let values = rows.chunks[chunk]
                if start < values.count {
                    defer { start += width }
                    return FetchedRow(keys: rows.keys, chunk: values, start: start)
                }
                chunk += 1
                start = 0
            }
            return nil
        }
    }

    /// An iterator from the first row.
    public func makeIterator() -> Iterator { Iterator(self) }

    /// The rows as dictionaries, as ``ManagedObjectContext/fetchDictionaries(_:)`` returns them.
    public var dictionaries: [[String: Any]] { map(\.dictionary) }
}

/// One row of ``FetchedRows``: values by key or by position, a NULL value nil.
public struct FetchedRow {
    @usableFromInline let keys: FetchedRowKeys
    @usableFromInline let chunk: ValueChunk
    /// Where the row's first value is in `chunk`.
    @usableFromInline let start: Int

    /// The keys, in the order of the request's `propertiesToFetch`.
    public var keyNames: [String] { keys.names }

    /// The value of a key as the `[String: Any]` of a dictionary fetch holds it (`Int64`,
    /// `String`, `Date`, ``ManagedObjectID``, …); nil when it is NULL or the key is not one
    /// of the row's.
    public subscript(key: String) -> Any? {
        guard let position = keys.position(of: key) else { return nil }
        return chunk.values[start + position].any
    }

    /// The value at a position of ``keyNames``.
    public subscript(position: Int) -> Any? {
        precondition(position >= 0 && position < keys.names.count, "value \(position) out of range 0..<\(keys.names.count)")
        return chunk.values[start + position].any
    }

    /// The value of a key as a `T`, or nil when it is NULL, the key is not one of the row's,
    /// or the value is not a `T` (the same test as `row[key] as? T`, without boxing the value
    /// when it is of the attribute's own type).
    @inlinable
    public subscript<T>(key: String, as type: T.Type) -> T? {
        guard let position = keys.position(of: key) else { return nil }
        return chunk.value(at: start + position, as: type)
    }

    /// The value at a position of ``keyNames`` as a `T`, or nil when it is NULL or not a `T`.
    @inlinable
    public subscript<T>(position: Int, as type: T.Type) -> T? {
        precondition(position >= 0 && position < keys.names.count, "value \(position) out of range 0..<\(keys.names.count)")
        return chunk.value(at: start + position, as: type)
    }

    /// The row as a dictionary (a NULL value's key left out).
    public var dictionary: [String: Any] {
        var dictionary: [String: Any] = [:]
        dictionary.reserveCapacity(keys.names.count)
        for (i, key) in keys.names.enumerated() {
            if let value = chunk.values[start + i].any { dictionary[key] = value }
        }
        return dictionary
    }
}

/// The keys of the rows of one fetch, and where each one's value is.
@usableFromInline
final class FetchedRowKeys {
    @usableFromInline let names: [String]
    private let lengths: [Int]
    private let positions: [String: Int]
    /// Where the next key asked for probably is: after the last one found (values are
    /// mostly read in the order they were fetched). Only a guess: it is checked.
    @usableFromInline @exclusivity(unchecked) var next = 0

    init(_ names: [String]) {
        self.names = names
        lengths = names.map(\.utf8.count)
        var positions: [String: Int] = [:]
        for (i, name) in names.enumerated() where positions[name] == nil { positions[name] = i }
        self.positions = positions
    }

    /// The position of a key: compared with each key when there are few (cheaper than
    /// hashing it; the lengths first, which tell most keys apart), else looked up, as a
    /// dictionary would (which also finds a key spelled in another Unicode normal form).
    @inlinable
    func position(of key: String) -> Int? {
        // The guess, checked in the caller (where the key is usually a literal); the rest
        // out of line.
        let guess = next
        if guess < names.count, names[guess] == key {
            next = guess + 1 == names.count ? 0 : guess + 1
            return guess
        }
        return searchedPosition(of: key)
    }

    /// ``position(of:)`` when the guess is not the key.
    @usableFromInline
    func searchedPosition(of key: String) -> Int? {
        if names.count <= 8 {
            let length = key.utf8.count
            for i in names.indices where lengths[i] == length && names[i] == key {
                next = i + 1 == names.count ? 0 : i + 1
                return i
            }
        }
        return positions[key]
    }
}

/// A buffer of values filled once, in order, by a fetch (then never changed): a row's values
/// are read in place. Appending writes a value in place (a `ContiguousArray` checked its
/// buffer's uniqueness and capacity for each one).
@usableFromInline
final class ValueChunk {
    /// The values; the first ``count`` are initialized.
    @usableFromInline let values: UnsafeMutablePointer<StoredValue>
    /// How many values are initialized.
    @exclusivity(unchecked) private(set) var count = 0
    /// How many values fit.
    let capacity: Int

    init(capacity: Int) {
        self.capacity = Swift.max(capacity, 0)
        values = .allocate(capacity: Swift.max(capacity, 1))
    }

    deinit {
        StoredValue.deinitialize(values, count: count)
        values.deallocate()
    }

    /// The value at `index` as a `T` when it is one (``StoredValue/value(at:as:)``), read in
    /// place.
    @inlinable
    func value<T>(at index: Int, as type: T.Type) -> T? { StoredValue.value(at: values + index, as: type) }

    /// A chunk of `capacity` values holding this one's, which is left empty.
    func moved(toCapacity capacity: Int) -> ValueChunk {
        precondition(capacity >= count, "a chunk of \(count) values cannot move into one of \(capacity)")
        let chunk = ValueChunk(capacity: capacity)
        chunk.values.moveInitialize(from: values, count: count)
        chunk.count = count
        count = 0
        return chunk
    }

    /// Whether `n` more values fit.
    @inline(__always)
    func hasRoom(for n: Int) -> Bool { capacity - count >= n }

    /// Appends `n` values, written by `write` at the pointer it is given in order, `n` of them
    /// exactly: the caller checked ``hasRoom(for:)``.
    @inline(__always)
    func append(_ n: Int, _ write: (UnsafeMutablePointer<StoredValue>) -> Void) {
        precondition(hasRoom(for: n), "a chunk of \(capacity) values holds \(count); \(n) more do not fit")
        write(values + count)
        count += n
    }
}
