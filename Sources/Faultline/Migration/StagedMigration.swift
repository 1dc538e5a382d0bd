import FaultlineModel
import FaultlineSQL
import Foundation

/// Core Data's staged migration (`NSStagedMigrationManager`, iOS 17 / macOS 14): an ordered
/// list of stages that takes a store from whichever model version made it to the last one,
/// one version at a time — lightweight stages (`NSLightweightMigrationStage`) over several
/// versions, and custom stages (`NSCustomMigrationStage`) that run your code before and after
/// their step.
///
/// ```swift
/// let stages = StagedMigration(stages: [
///     .lightweight([v1, v2]),
///     .custom(from: v2, to: v3, didMigrate: { context in
///         for article in try context.fetch(FetchRequest(entityName: "Article")) {
///             try article.setValue("Staff", forKey: "authorName")
///         }
///     }),
///     .lightweight([v3, v4]),
/// ])
/// try stages.migrateStore(at: url)      // then open it with v4 as usual
/// ```
///
/// Each step is one lightweight migration in one transaction (``LightweightMigration``), so a
/// failure or a kill leaves the store at the last version a step completed: openable with that
/// version, and migrated on by running the stages again. A custom stage's `willMigrate` runs on
/// the store opened with the step's source model and `didMigrate` with its destination model;
/// what they change is saved before the step goes on. (Core Data's custom stages also run
/// their handlers around a lightweight step between the two versions; inferred from Apple's
/// documentation of `NSCustomMigrationStage` and WWDC 2023 "What's new in Core Data".)
public struct StagedMigration {
    /// Code a custom stage runs with a context on the store.
    public typealias Handler = (ManagedObjectContext) throws -> Void

    /// One stage.
    public enum Stage {
        /// Lightweight migration through these model versions, in order (Core Data's
        /// `NSLightweightMigrationStage`, which names them by version checksum).
        case lightweight([ManagedObjectModel])
        /// One step from a version to the next with code around it (Core Data's
        /// `NSCustomMigrationStage` with its `willMigrateHandler` and `didMigrateHandler`).
        case custom(from: ManagedObjectModel, to: ManagedObjectModel, willMigrate: Handler? = nil, didMigrate: Handler? = nil)
    }

    /// One migration between two consecutive versions.
    struct Step {
        var from: ManagedObjectModel
        var to: ManagedObjectModel
        var stage: Int
        var willMigrate: Handler?
        var didMigrate: Handler?
    }

    /// The stages, in order.
    public let stages: [Stage]
    /// The SQL log the steps' statements go to, if any.
    public var log: SQLLog?

    /// Creates a staged migration from its stages.
    public init(stages: [Stage], log: SQLLog? = nil) {
        self.stages = stages
        self.log = log
    }

    /// Lightweight stages through every version of a versioned model (`.xcdatamodeld`,
    /// `.momd`), oldest first: a store made by any version migrates to the current one
    /// through each version between, so renaming identifiers chain as they were written.
    ///
    /// - Throws: ``ModelError`` when the bundle or one of its versions cannot be read.
    public init(versionsOf bundle: URL, log: SQLLog? = nil) throws {
        let versions = try ManagedObjectModel.versions(at: bundle)
        self.init(stages: [.lightweight(try versions.map { try $0.loadModel() })], log: log)
    }

    /// What ``migrateStore(at:)`` did: each step's result, oldest first (none when the store
    /// was already at the last version).
    public struct Result {
        /// The lightweight migration of each step that ran.
        public var steps: [LightweightMigration.Result]
    }

    /// The steps of the stages, checked to chain: each stage starts at the version the one
    /// before it ended with.
    func steps(path: String) throws -> [Step] {
        var steps: [Step] = []
        var last: ManagedObjectModel?
        for (index, stage) in stages.enumerated() {
            let models: [ManagedObjectModel]
            switch stage {
            case .lightweight(let versions): models = versions
            case .custom(let from, let to, _, _): models = [from, to]
            }
            guard let first = models.first else { continue }
            if let last, last.entityVersionHashesByName != first.entityVersionHashesByName {
                throw PersistentStoreError(.migrationFailed, "stage \(index + 1) does not start at the version stage \(index) ends with: the stages must chain", path: path)
            }
            switch stage {
            case .lightweight(let versions):
                for (a, b) in zip(versions, versions.dropFirst()) { steps.append(Step(from: a, to: b, stage: index + 1)) }
            case .custom(let from, let to, let will, let did):
                steps.append(Step(from: from, to: to, stage: index + 1, willMigrate: will, didMigrate: did))
            }
            last = models.last
        }
        return steps
    }

    /// Migrates the store at `url` from the version that made it to the last version of the
    /// stages, step by step.
    ///
    /// - Throws: ``PersistentStoreError``: ``PersistentStoreError/Code/missingSourceModel`` (134130) when no
    ///   version of the stages made the store; ``PersistentStoreError/Code/inferredMappingFailed``
    ///   (134190) for a step Core Data cannot infer; ``PersistentStoreError/Code/migrationFailed``
    ///   (134110) naming the stage whose step or code failed. Steps that completed before
    ///   stay done.
    @discardableResult
    public func migrateStore(at url: URL) throws -> Result {
        let path = url.path
        let steps = try steps(path: path)
        guard let hashes = try SQLiteStore.versionHashes(at: url) else {
            throw PersistentStoreError(.missingSourceModel, "the store's metadata has no version hashes, so the version that made it cannot be found", path: path)
        }
        if let final = steps.last?.to, final.isCompatible(withStoreVersionHashes: hashes) { return Result(steps: []) }
        guard let start = steps.firstIndex(where: { $0.from.isCompatible(withStoreVersionHashes: hashes) }) else {
            throw PersistentStoreError(.missingSourceModel, "no version of the migration stages made the store (Core Data's 134130): its entity hashes match none of them", path: path)
        }
        var results: [LightweightMigration.Result] = []
        for step in steps[start...] {
            if let willMigrate = step.willMigrate { try run(willMigrate, on: url, model: step.from, stage: step.stage, when: "before") }
            results.append(try LightweightMigration(storeURL: url, sourceModel: step.from, destinationModel: step.to).run(log: log))
            if let didMigrate = step.didMigrate { try run(didMigrate, on: url, model: step.to, stage: step.stage, when: "after") }
        }
        return Result(steps: results)
    }

    /// Runs a custom stage's code on the store opened with `model`, and saves what it changed.
    private func run(_ handler: Handler, on url: URL, model: ManagedObjectModel, stage: Int, when: String) throws {
        do {
            let store = try SQLiteStore(url: url, model: model, options: .init(readOnly: false))
            if let log { log.attach(to: store.connection) }
            let context = ManagedObjectContext(coordinator: PersistentStoreCoordinator(store: store))
            try handler(context)
            if context.hasChanges { try context.save() }
        } catch {
            throw PersistentStoreError(.migrationFailed, "stage \(stage): the custom code \(when) its migration failed: \(error)", path: url.path)
        }
    }
}
