import Foundation

/// The dictionaries of a dictionary fetch, either all read at once or read a batch at a time
/// as they are reached (``ManagedObjectContext/fetchDictionaryBatches(_:)``); only the two
/// batches reached last are kept, so walking a million rows holds a few batches of them.
///
/// ```swift
/// var request = FetchRequest(entityName: "Item")
/// request.resultType = .dictionary
/// request.propertiesToFetch = ["name", "quantity"]
/// request.fetchBatchSize = 500
/// for row in try context.fetchDictionaryBatches(request) { total += row["quantity"] as? Int64 ?? 0 }
/// ```
public struct FetchedDictionaries: RandomAccessCollection {
    /// Loaded batches, shared by copies of the collection.
    final class Batches {
        let keys: [Int64]
        let size: Int
        let load: ([Int64]) -> [[String: Any]]
        var loaded: [(index: Int, rows: [[String: Any]])] = []

        init(keys: [Int64], size: Int, load: @escaping ([Int64]) -> [[String: Any]]) {
            self.keys = keys
            self.size = size
            self.load = load
        }

        func row(at position: Int) -> [String: Any] {
            let batch = position / size
            if let hit = loaded.first(where: { $0.index == batch }) { return hit.rows[position - batch * size] }
            let start = batch * size
            let rows = load(Array(keys[start..<Swift.min(start + size, keys.count)]))
            loaded.append((batch, rows))
            if loaded.count > 2 { loaded.removeFirst() }
            let offset = position - start
            return offset < rows.count ? rows[offset] : [:]
        }
    }

    private enum Storage {
        case all([[String: Any]])
        case batched(Batches)
    }

    private let storage: Storage

    /// All the dictionaries, already read.
    public init(_ rows: [[String: Any]]) {
        storage = .all(rows)
    }

    init(keys: [Int64], batchSize: Int, load: @escaping ([Int64]) -> [[String: Any]]) {
        storage = .batched(Batches(keys: keys, size: Swift.max(1, batchSize), load: load))
    }

    public var startIndex: Int { 0 }

    public var endIndex: Int {
        switch storage {
        case .all(let rows): rows.count
        case .batched(let batches): batches.keys.count
        }
    }

    /// The dictionary of one row; reaching a row of a batch not loaded reads that batch.
    public subscript(position: Int) -> [String: Any] {
        switch storage {
        case .all(let rows): rows[position]
        case .batched(let batches): batches.row(at: position)
        }
    }
}
