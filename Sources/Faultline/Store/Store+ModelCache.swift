import FaultlineModel
import FaultlineSQL
import Foundation

extension SQLiteStore {
    /// The model Core Data cached in a store's `Z_MODELCACHE` (raw deflate of a keyed
    /// archive), read without changing a byte of the store; nil when the store has none.
    ///
    /// - Throws: ``StoreError`` when the file cannot be opened or is not a Core Data store;
    ///   `ModelError` when the cached model cannot be decoded.
    public static func cachedModel(at url: URL) throws -> ManagedObjectModel? {
        let path = url.path
        guard FileManager.default.fileExists(atPath: path) else { throw StoreError(.fileNotFound, "no such store file", path: path) }
        let plan = try readOnlyPlan(path: path)
        defer { if let folder = plan.snapshot { try? FileManager.default.removeItem(at: folder) } }
        let blob: Data?
        do {
            let connection = try Connection(path: plan.path, mode: .readOnly, readOnlyOptions: plan.options)
            guard try connection.tableExists("Z_METADATA") else {
                throw StoreError(.notAStore, "not a Core Data store: it has no Z_METADATA table", path: path)
            }
            guard try connection.tableExists("Z_MODELCACHE") else { return nil }
            blob = try connection.scalar("SELECT Z_CONTENT FROM Z_MODELCACHE")?.data
        } catch let error as SQLiteError {
            throw StoreError(.cannotOpen, error.message, path: path)
        }
        guard let blob, !blob.isEmpty else { return nil }
        return try ManagedObjectModel(storeModelCacheBlob: blob, source: "\(path) (Z_MODELCACHE)")
    }
}
