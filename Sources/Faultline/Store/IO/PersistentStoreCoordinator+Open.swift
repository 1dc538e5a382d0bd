import FaultlineModel
import Foundation

extension PersistentStoreCoordinator {
    /// Opens the store at `storeURL` with the model it carries: its `Z_MODELCACHE`, or a model
    /// inferred from its tables when it has none (see ``SQLiteStore/warnings``).
    ///
    /// ```swift
    /// let coordinator = try PersistentStoreCoordinator(storeURL: URL(fileURLWithPath: "Photos.sqlite"))
    /// coordinator.store.modelSource  // .modelCache
    /// ```
    ///
    /// - Throws: ``PersistentStoreError`` when the store cannot be opened or has no readable model.
    public convenience init(storeURL: URL, options: SQLiteStore.Options = .init()) throws {
        self.init(store: try SQLiteStore(url: storeURL, options: options))
    }
}
