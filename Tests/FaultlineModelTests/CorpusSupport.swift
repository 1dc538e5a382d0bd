import FaultlineModel
import FaultlineSQL
import FaultlineTestSupport
import Foundation
import Testing

/// Reads what the model tests need from the corpus stores, without touching the originals:
/// each store is copied (with `-wal`/`-shm`) into a temporary folder and the copy is opened.
enum CorpusStores {
    struct StoreData {
        var path: String
        var modelCache: Data?
        var metadata: [String: PropertyListValue]
    }

    /// Every `*.sqlite` under `corpus/stores`, sorted by relative path.
    static func storePaths(corpus: URL) throws -> [String] { try Corpus.storePaths(corpus) }

    static func read(corpus: URL, relativePath: String) throws -> StoreData {
        let copy = try Corpus.copyStore(relativePath, from: corpus)
        defer { try? FileManager.default.removeItem(at: copy.deletingLastPathComponent()) }
        let connection = try Connection(path: copy.path, mode: .readOnly)
        var cache: Data?
        if try connection.tableExists("Z_MODELCACHE"), case .blob(let d)? = try connection.scalar("SELECT Z_CONTENT FROM Z_MODELCACHE") {
            cache = d
        }
        guard case .blob(let plistData)? = try connection.scalar("SELECT Z_PLIST FROM Z_METADATA") else {
            throw Failure(message: "\(relativePath): no Z_METADATA.Z_PLIST")
        }
        let metadata = try BinaryPropertyList.parse(plistData).dictionaryValue ?? [:]
        return StoreData(path: relativePath, modelCache: cache, metadata: metadata)
    }

    struct Failure: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }

    /// A store's `NSStoreModelVersionHashes`.
    static func hashes(_ metadata: [String: PropertyListValue]) -> [String: Data] {
        var out: [String: Data] = [:]
        for (k, v) in metadata["NSStoreModelVersionHashes"]?.dictionaryValue ?? [:] {
            if let d = v.dataValue { out[k] = d }
        }
        return out
    }
}

/// Entities whose hash differs between a model and the expected table, for messages.
func hashMismatches(_ model: ManagedObjectModel, _ expected: [String: Data]) -> [String] {
    var bad: [String] = []
    for (name, hash) in expected.sorted(by: { $0.key < $1.key }) where model.entityVersionHashesByName[name] != hash {
        bad.append(name)
    }
    for name in model.entityVersionHashesByName.keys.sorted() where expected[name] == nil {
        bad.append("\(name) (not expected)")
    }
    return bad
}
