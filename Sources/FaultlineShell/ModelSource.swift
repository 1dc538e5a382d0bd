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

    /// Loads one side of `faultline diff`: a model file or bundle, a store (its cached model),
    /// or `BUNDLE@VERSION` for one version of an `.xcdatamodeld` / `.momd` (`version`, when
    /// given, wins). Returns the model and a name for it: the path, with `@version` for a
    /// bundle (its current version when none is named).
    ///
    /// - Throws: `ModelError` or ``ShellError`` naming the path.
    public static func loadVersioned(_ specifier: String, version: String? = nil) throws -> (model: ManagedObjectModel, name: String) {
        var path = specifier
        var wanted = version
        if !FileManager.default.fileExists(atPath: path), let at = specifier.lastIndex(of: "@") {
            let candidate = String(specifier[..<at])
            if FileManager.default.fileExists(atPath: candidate) {
                path = candidate
                if wanted == nil { wanted = String(specifier[specifier.index(after: at)...]) }
            }
        }
        let model = try load(path: path, version: wanted)
        guard isVersionedBundle(path) else { return (model, path) }
        return (model, "\(path)@\(wanted ?? versionName(of: model) ?? "?")")
    }

    /// Whether a path is an `.xcdatamodeld` or `.momd` folder (a model with versions).
    public static func isVersionedBundle(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else { return false }
        return ["xcdatamodeld", "momd"].contains((path as NSString).pathExtension.lowercased())
    }

    /// The version a model loaded from a bundle is: `Name` of `…/Name.xcdatamodel/contents`
    /// or `…/Name.mom`.
    static func versionName(of model: ManagedObjectModel) -> String? {
        guard let source = model.sourceDescription else { return nil }
        var url = URL(fileURLWithPath: source)
        if url.lastPathComponent == "contents" { url.deleteLastPathComponent() }
        return url.deletingPathExtension().lastPathComponent
    }

    /// Which version of a versioned model made a store, or the nearest one; nil when the
    /// store records no version hashes.
    ///
    /// - Throws: `ModelError` for the model, `PersistentStoreError` for the store.
    public static func matchVersion(model path: String, store: String) throws -> ModelVersionMatch? {
        guard let hashes = try SQLiteStore.versionHashes(at: URL(fileURLWithPath: store)) else { return nil }
        return ManagedObjectModel.matchVersion(storeVersionHashes: hashes, in: try ManagedObjectModel.versions(at: URL(fileURLWithPath: path)))
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
