import Faultline
import FaultlineModel
import FaultlineSQL
import Foundation

/// Loads a model from whatever a user hands over: a model file or bundle, or a store whose
/// `Z_MODELCACHE` holds the model Core Data saved in it.
public enum ModelSource {
    /// Loads the model at `path`; for a SQLite store, the model cached in it.
    ///
    /// - Throws: `ModelError` for model files; ``ShellError`` naming the store when it holds no
    ///   cached model.
    public static func load(path: String, version: String? = nil) throws -> ManagedObjectModel {
        guard isSQLiteFile(path) else {
            return try ManagedObjectModel(contentsOf: URL(fileURLWithPath: path), version: version)
        }
        guard let model = try SQLiteStore.cachedModel(at: URL(fileURLWithPath: path)) else {
            throw ShellError("\(path): this store has no cached model (Z_MODELCACHE is empty or absent, as in stores written before macOS 10.13/iOS 11); pass the model itself")
        }
        return model
    }

    /// ``load(path:version:)``, except that a store without a cached model gives a model
    /// inferred from its tables, with the warnings that say what was guessed (as opening
    /// such a store does).
    public static func loadOrInfer(path: String, version: String? = nil) throws -> (ManagedObjectModel, [String]) {
        guard isSQLiteFile(path), try SQLiteStore.cachedModel(at: URL(fileURLWithPath: path)) == nil else {
            return (try load(path: path, version: version), [])
        }
        let store = try SQLiteStore(url: URL(fileURLWithPath: path))
        return (store.model, store.warnings)
    }

    /// Whether a file starts with SQLite's header.
    static func isSQLiteFile(_ path: String) -> Bool {
        // Opening a FIFO waits for a writer: only regular files are looked into.
        guard RegularFile.problem(atPath: path) == nil else { return false }
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        return (try? handle.read(upToCount: 16)) == Data("SQLite format 3\0".utf8)
    }
}
