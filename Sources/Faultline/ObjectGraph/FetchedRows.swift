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
    let chunks: [ContiguousArray<FetchedValue>]
    let rowsPerChunk: Int
    let rowCount: Int

    /// How many rows a chunk of values holds for `keyCount` keys: about 4,096 values.
    static func rowsPerChunk(keyCount: Int) -> Int { Swift.max(1, 4096 / Swift.max(1, keyCount)) }

    init(keys: FetchedRowKeys, chunks: [ContiguousArray<FetchedValue>]) {
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
    @usableFromInline let values: ContiguousArray<FetchedValue>
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

/// A value of a fetched row: the common attribute types unboxed, anything else as `Any`.
@usableFromInline
enum FetchedValue {
    case null
    case int64(Int64)
    case int32(Int32)
    case int16(Int16)
    case bool(Bool)
    case double(Double)
    case float(Float)
    case date(Date)
    case string(String)
    indirect case other(Any)

    /// The value as `Any` (nil for NULL), as a dictionary fetch holds it.
    @usableFromInline
    var any: Any? {
        switch self {
        case .null: return nil
        case .int64(let v): return v
        case .int32(let v): return v
        case .int16(let v): return v
        case .bool(let v): return v
        case .double(let v): return v
        case .float(let v): return v
        case .date(let v): return v
        case .string(let v): return v
        case .other(let v): return v
        }
    }

    /// The value as a `T` when it is one (`any as? T`), by a type comparison for the
    /// common types.
    @inlinable
    func value<T>(as type: T.Type) -> T? {
        switch self {
        case .null: return nil
        case .int64(let v) where T.self == Int64.self: return unsafeBitCast(v, to: T.self)
        case .double(let v) where T.self == Double.self: return unsafeBitCast(v, to: T.self)
        case .string(let v) where T.self == String.self: return unsafeBitCast(v, to: T.self)
        case .bool(let v) where T.self == Bool.self: return unsafeBitCast(v, to: T.self)
        case .date(let v) where T.self == Date.self: return unsafeBitCast(v, to: T.self)
        case .int32(let v) where T.self == Int32.self: return unsafeBitCast(v, to: T.self)
        case .int16(let v) where T.self == Int16.self: return unsafeBitCast(v, to: T.self)
        case .float(let v) where T.self == Float.self: return unsafeBitCast(v, to: T.self)
        default: return any as? T
        }
    }
}
