import FaultlineModel
import Foundation

/// Connects a model to the store that holds its objects; contexts fetch and save through it.
public final class PersistentStoreCoordinator {
    /// The model.
    public let model: ManagedObjectModel
    /// The store.
    public let store: SQLiteStore
    /// Serializes every use of the store's one connection and its caches by contexts on
    /// different threads (recursive: a fetch may fire faults). See ``performAndWait(_:)``.
    let storeLock = NSRecursiveLock()
    /// The registered ``ManagedObjectSubclass`` classes (guarded by `storeLock`).
    var classRegistry = ClassRegistry()

    /// Opens the store at `url` for `model`.
    public init(model: ManagedObjectModel, storeURL: URL, options: SQLiteStore.Options = .init()) throws {
        self.model = model
        self.store = try SQLiteStore(url: storeURL, model: model, options: options)
    }

    /// Uses an already opened store.
    public init(store: SQLiteStore) {
        self.model = store.model
        self.store = store
    }
}
