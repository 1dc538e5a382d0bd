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
    /// instead of growing and moving one).
    let chunks: [ContiguousArray<StoredValue>]
    let rowsPerChunk: Int
    let rowCount: Int

    /// How many rows a chunk of values holds for `keyCount` keys: about 4,096 values.
    static func rowsPerChunk(keyCount: Int) -> Int { Swift.max(1, 4096 / Swift.max(1, keyCount)) }

    init(keys: FetchedRowKeys, chunks: [ContiguousArray<StoredValue>]) {
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
        return FetchedRow(keys: keys, values: chunks[position / rowsPerChunk], start: (position % rowsPerChunk) * keys.names.count)
    }

    /// The rows as dictionaries, as ``ManagedObjectContext/fetchDictionaries(_:)`` returns them.
    public var dictionaries: [[String: Any]] { map(\.dictionary) }
}

/// One row of ``FetchedRows``: values by key or by position, a NULL value nil.
public struct FetchedRow {
    @usableFromInline let keys: FetchedRowKeys
    @usableFromInline let values: ContiguousArray<StoredValue>
    @usableFromInline let start: Int

    /// The keys, in the order of the request's `propertiesToFetch`.
    public var keyNames: [String] { keys.names }

    /// The value of a key as the `[String: Any]` of a dictionary fetch holds it (`Int64`,
    /// `String`, `Date`, ``ManagedObjectID``, …); nil when it is NULL or the key is not one
    /// of the row's.
    public subscript(key: String) -> Any? {
        guard let position = keys.position(of: key) else { return nil }
        return values[start + position].any
    }

    /// The value at a position of ``keyNames``.
    public subscript(position: Int) -> Any? {
        precondition(position >= 0 && position < keys.names.count, "value \(position) out of range 0..<\(keys.names.count)")
        return values[start + position].any
    }

    /// The value of a key as a `T`, or nil when it is NULL, the key is not one of the row's,
    /// or the value is not a `T` (the same test as `row[key] as? T`, without boxing the value
    /// when it is of the attribute's own type).
    @inlinable
    public subscript<T>(key: String, as type: T.Type) -> T? {
        guard let position = keys.position(of: key) else { return nil }
        return values[start + position].value(as: type)
    }

    /// The value at a position of ``keyNames`` as a `T`, or nil when it is NULL or not a `T`.
    @inlinable
    public subscript<T>(position: Int, as type: T.Type) -> T? {
        precondition(position >= 0 && position < keys.names.count, "value \(position) out of range 0..<\(keys.names.count)")
        return values[start + position].value(as: type)
    }

    /// The row as a dictionary (a NULL value's key left out).
    public var dictionary: [String: Any] {
        var dictionary: [String: Any] = [:]
        dictionary.reserveCapacity(keys.names.count)
        for (i, key) in keys.names.enumerated() {
            if let value = values[start + i].any { dictionary[key] = value }
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
    private var next = 0

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
    @usableFromInline
    func position(of key: String) -> Int? {
        let guess = next
        if guess < names.count, names[guess] == key {
            next = guess + 1 == names.count ? 0 : guess + 1
            return guess
        }
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
