import FaultlineModel
import FaultlineSQL
import Foundation

/// A Core Data SQLite store: the file, its metadata, the model it holds and how that model
/// maps onto its tables.
///
/// Opening is read-only unless ``Options/readOnly`` is false: a read-only store is opened
/// with `SQLITE_OPEN_READONLY`, sees rows that live only in the `-wal`, and changes no byte of
/// the store, its `-wal` or its `-shm`.
public final class SQLiteStore {
    /// How a store is opened.
    public struct Options: Sendable {
        /// Open without any write access (the default).
        public var readOnly: Bool
        /// Create the store from the model when the file does not exist (needs `readOnly == false`).
        public var createIfMissing: Bool
        /// The size above which the bytes of a Binary attribute that allows external storage
        /// go to a file in `.<store>_SUPPORT/_EXTERNAL_DATA/` instead of the row. Core Data
        /// decides this by a heuristic it does not document; 128 KiB is what is reported for
        /// recent systems (1 MB on Mac OS X 10.7). Either way Core Data reads both forms.
        public var externalBinaryDataThreshold: Int
        /// Core Data's `NSPersistentHistoryTrackingKey`: a store created or opened for writing
        /// gets the persistent history tables if it lacks them. A store that has them records
        /// every save in them whatever this says (Core Data refuses to write such a store
        /// without the key; Faultline keeps its history instead).
        public var persistentHistoryTracking: Bool
        /// The name of a registered SQLite VFS to open the file through, or nil (the default)
        /// for SQLite's own. For special file systems (`unix-dotfile` where POSIX locks do not
        /// work) and for tests that inject I/O faults; the files are the same either way.
        public var vfsName: String?
        /// Core Data's `NSMigratePersistentStoresAutomaticallyOption`: with
        /// ``inferMappingModelAutomatically`` and a writable open, a store made by another
        /// version of the model is migrated in place when it opens (see
        /// ``LightweightMigration``). False by default: such a store fails to open with
        /// ``PersistentStoreError/Code/incompatibleModel`` (134100).
        public var migratePersistentStoresAutomatically: Bool
        /// Core Data's `NSInferMappingModelAutomaticallyOption`: the mapping from the store's
        /// model to the new one is inferred (``InferredMapping``). Needed with
        /// ``migratePersistentStoresAutomatically``; Faultline has no mapping model files.
        public var inferMappingModelAutomatically: Bool
        /// Models that may have made the store, tried (before the store's own `Z_MODELCACHE`)
        /// when it needs migrating: the one whose version hashes are the store's is the source
        /// model. Stores written before about 2019 have no model cache and need this.
        public var migrationSourceModels: [ManagedObjectModel]

        /// Creates options; the default is read-only.
        public init(
            readOnly: Bool = true, createIfMissing: Bool = false, externalBinaryDataThreshold: Int = 128 * 1024,
            persistentHistoryTracking: Bool = false, vfsName: String? = nil,
            migratePersistentStoresAutomatically: Bool = false, inferMappingModelAutomatically: Bool = false,
            migrationSourceModels: [ManagedObjectModel] = []
        ) {
            self.readOnly = readOnly
            self.createIfMissing = createIfMissing
            self.externalBinaryDataThreshold = externalBinaryDataThreshold
            self.persistentHistoryTracking = persistentHistoryTracking
            self.vfsName = vfsName
            self.migratePersistentStoresAutomatically = migratePersistentStoresAutomatically
            self.inferMappingModelAutomatically = inferMappingModelAutomatically
            self.migrationSourceModels = migrationSourceModels
        }
    }

    /// The store file, or nil for an in-memory store.
    public let url: URL?
    /// See ``Options/externalBinaryDataThreshold``; an in-memory store keeps every value inline.
    public let externalBinaryDataThreshold: Int
    /// Whether the store has Core Data's persistent history tables, so that every save
    /// records a transaction in them (see ``PersistentHistory``).
    public private(set) var tracksPersistentHistory = false
    /// The store's `ACHANGE` tombstone columns, read (and the history entities'
    /// `Z_PRIMARYKEY` rows checked) by the first save that records history.
    var historyTombstoneColumnsCache: [String]?
    /// The connection all statements go through.
    package let connection: Connection
    /// The model of the store's objects.
    public let model: ManagedObjectModel
    /// How the model maps onto the tables.
    public let mapping: SchemaMapping
    /// The store UUID (`Z_UUID`), the host part of object URIs.
    @exclusivity(unchecked) public private(set) var identifier: String {
        didSet {
            faultPlans.removeAll()
            lastFaultPlan = nil
            idNamesByEntityName.removeAll()
            idNamesByEntityNumber.removeAll()
            decodePlanCache.removeAll()
        }
    }
    /// The numbers of (entity, this store) pairs in ``ObjectIDNames``, by entity name and by
    /// entity number (`Z_ENT`): IDs made while decoding rows look their pair up here.
    @exclusivity(unchecked) var idNamesByEntityName: [String: UInt32] = [:]
    @exclusivity(unchecked) var idNamesByEntityNumber: [Int: UInt32] = [:]
    /// The metadata property list (`Z_PLIST`).
    public private(set) var metadata: [String: Any]
    /// Values the store's own triggers changed (derived attributes, counters), reported while
    /// a save runs, so the saving context can update its objects.
    let triggerReports = TriggerReports()
    /// ``selectedColumns(for:)`` by entity name: the model and mapping never change, so each
    /// entity's list is worked out once, not on every fetch and fault.
    @exclusivity(unchecked) var selectedColumnsCache: [String: [SelectedColumn]] = [:]
    /// How faults are fired, by the ``ObjectIDNames`` number of their entity in this store.
    @exclusivity(unchecked) var faultPlans: [UInt32: FaultPlan] = [:]
    /// The last fault plan used (faults come in runs of one entity).
    @exclusivity(unchecked) var lastFaultPlan: (names: UInt32, plan: FaultPlan)?
    /// The SQL that fires one fault, by entity name (`SELECT … WHERE  t0.Z_PK = ?`).
    @exclusivity(unchecked) var faultSQLCache: [String: String] = [:]
    /// Row decoding plans (see ``decodePlan(for:rowEntity:columns:)``).
    @exclusivity(unchecked) var decodePlanCache: [DecodePlanKey: DecodePlan] = [:]
    /// ``externalBinaryColumns(for:)`` by entity name.
    var externalColumnsCache: [String: [String: String]] = [:]
    /// ``rowColumns(for:)`` by entity name.
    var rowColumnsCache: [String: [ColumnMapping]] = [:]
    /// ``rowLayout(for:)`` by entity name, and the last one asked for (a save asks for the
    /// objects of one entity in a run: comparing a name with itself is cheaper than hashing it).
    var rowLayoutCache: [String: EntityRowLayout] = [:]
    @exclusivity(unchecked) var lastRowLayout: (entity: String, layout: EntityRowLayout)?
    /// ``entityNumber(of:)`` by entity name, and the last one asked for (as ``lastRowLayout``).
    @exclusivity(unchecked) var entityNumberCache: [String: Int] = [:]
    @exclusivity(unchecked) var lastEntityNumber: (entity: String, number: Int)?
    /// ``columnList(for:)`` by entity name.
    var columnListCache: [String: String] = [:]
    /// Compiled `WHERE` clauses by predicate shape (see ``WhereClauseCache``).
    var whereClauseCache = WhereClauseCache()
    /// ``entityForFetch(_:)`` by entity name: one look-up instead of two.
    var fetchEntityCache: [String: (EntityDescription, EntityMapping)] = [:]
    /// A fresh ``PredicateSQL`` by entity name, copied for each compile.
    var predicateSQLCache: [String: PredicateSQL] = [:]

    /// Opens the store at `url` with `model`.
    ///
    /// An existing store is checked against the model first: when the version hashes in its
    /// metadata (`NSStoreModelVersionHashes`) differ from the model's, opening fails with
    /// ``PersistentStoreError/Code/incompatibleModel`` (Core Data's 134100) naming each entity that was
    /// added, removed or changed. A store without hashes opens with a warning. The mapping is
    /// then read from the store itself (see ``SchemaMapping/init(model:reconciledWith:)``).
    ///
    /// - Throws: ``PersistentStoreError`` when the file is missing (and may not be created), is not a
    ///   Core Data store, cannot be read, or does not match the model.
    public convenience init(url: URL, model: ManagedObjectModel, options: Options = Options()) throws {
        try self.init(url: url, resolving: .given(model), options: options)
    }

    /// Opens an existing store without a model: the model is the one the store caches in
    /// `Z_MODELCACHE`, or, for stores without one, a model inferred from `Z_PRIMARYKEY` and
    /// the tables, whose property names and types are guesses (see ``warnings``).
    ///
    /// ```swift
    /// let store = try SQLiteStore(url: URL(fileURLWithPath: "Photos.sqlite"))
    /// store.modelSource   // .modelCache
    /// ```
    ///
    /// - Throws: ``PersistentStoreError`` when the file is missing, is not a Core Data store, or its
    ///   model cache cannot be decoded.
    public convenience init(url: URL, options: Options = Options()) throws {
        try self.init(url: url, resolving: .fromStore, options: options)
    }

    /// Where the model of an opened store came from.
    public enum ModelSource: Sendable, Equatable {
        /// The caller gave it.
        case given
        /// The store's `Z_MODELCACHE`.
        case modelCache
        /// Inferred from the store's tables: names and types are guesses.
        case inferred
    }

    enum ModelResolution {
        case given(ManagedObjectModel)
        case fromStore
    }

    init(url: URL, resolving resolution: ModelResolution, options: Options) throws {
        let path = url.path
        let exists = FileManager.default.fileExists(atPath: path)
        if !exists && !(options.createIfMissing && !options.readOnly) {
            throw PersistentStoreError(.fileNotFound, "no such store file", path: path)
        }
        if !exists, case .fromStore = resolution {
            throw PersistentStoreError(.noModel, "cannot create a store without a model", path: path)
        }
        if exists { try SQLiteStore.requireRegularFiles(path: path) }
        self.url = url
        self.externalBinaryDataThreshold = options.externalBinaryDataThreshold
        // Writing needs the model checked against the store: without readable version hashes
        // (Z_PLIST NULL, empty, not a property list, or without NSStoreModelVersionHashes) any
        // model would be taken, and a wrong one writes wrong types into the columns. Such a
        // store is opened for reading only (looked at first through a read-only connection, so
        // that not even a -wal or -shm file appears), and says why.
        var options = options
        if exists, !options.readOnly, try !SQLiteStore.hasVersionHashes(path: path) {
            options.readOnly = true
            readOnlyReason = "the store's metadata (Z_METADATA.Z_PLIST) has no readable NSStoreModelVersionHashes, so the model could not be checked against the store: it was opened read-only, save refused, nothing was written"
        }
        let connection: Connection
        do {
            if options.readOnly {
                let plan = try SQLiteStore.readOnlyPlan(path: path)
                self.snapshotFolder = plan.snapshot
                connection = try Connection(path: plan.path, mode: .readOnly, readOnlyOptions: plan.options, vfs: options.vfsName)
            } else {
                connection = try Connection(path: path, mode: exists ? .readWrite : .readWriteCreate, vfs: options.vfsName)
            }
        } catch let error as SQLiteError {
            throw PersistentStoreError(.cannotOpen, error.message, path: path)
        }
        self.connection = connection
        try CoreDataFunctions.register(on: connection, reports: triggerReports)
        var warnings: [String] = []
        if exists {
            var (identifier, metadata, hashes) = try SQLiteStore.readMetadata(connection, path: path)
            let model: ManagedObjectModel
            switch resolution {
            case .given(let given):
                model = given
                self.modelSource = .given
                if let storeHashes = hashes, !given.isCompatible(withStoreVersionHashes: storeHashes),
                    options.migratePersistentStoresAutomatically, options.inferMappingModelAutomatically
                {
                    guard !options.readOnly, !connection.isReadOnly else {
                        throw PersistentStoreError(
                            .incompatibleModel,
                            "the store was made by another version of the model and needs migrating, which needs a writable open (readOnly: false) with migratePersistentStoresAutomatically and inferMappingModelAutomatically; a read-only open never migrates",
                            path: path)
                    }
                    let sourceModel = try SQLiteStore.migrationSource(connection: connection, storeHashes: storeHashes, candidates: options.migrationSourceModels, path: path)
                    migrationResult = try LightweightMigration.migrate(
                        connection: connection, mapping: given.inferredMapping(from: sourceModel), source: sourceModel, destination: given, path: path)
                    (identifier, metadata, hashes) = try SQLiteStore.readMetadata(connection, path: path)
                }
                if let hashes {
                    try SQLiteStore.checkCompatibility(model: given, storeHashes: hashes, path: path)
                }
            case .fromStore:
                // A cache that does not decode (a newer archive form) falls back to inference:
                // every Core Data store opens.
                let cached: ManagedObjectModel?
                var cacheProblem: String?
                do {
                    cached = try SQLiteStore.cachedModel(connection: connection, path: path)
                } catch let error as PersistentStoreError where error.code == .noModel {
                    cacheProblem = error.message
                    cached = nil
                }
                if let cached {
                    model = cached
                    self.modelSource = .modelCache
                    if let hashes, !cached.isCompatible(withStoreVersionHashes: hashes) {
                        warnings.append("\(path): the model in Z_MODELCACHE does not match the store's version hashes (entities \(cached.entitiesDiffering(fromStoreVersionHashes: hashes).joined(separator: ", ")))")
                    }
                } else {
                    let inferred = try StoreModelInference.infer(connection: connection, path: path)
                    model = inferred.model
                    self.modelSource = .inferred
                    let why = cacheProblem ?? "the store has no model cache"
                    warnings.append("\(path): \(why); the model was inferred from its tables, so entity relationships, property names and types are guesses")
                    warnings += inferred.notes
                }
            }
            // Writing needs the model checked against the store: without readable version
            // hashes (Z_PLIST NULL, empty, not a property list, or without
            // NSStoreModelVersionHashes) any model would be taken, and a wrong one writes
            // wrong types into the columns. Such a store opens for reading only.
            if hashes == nil {
                let warning = "\(path): the store's metadata (Z_METADATA.Z_PLIST) has no readable NSStoreModelVersionHashes, so the model could not be checked against the store"
                    + (readOnlyReason == nil ? "" : "; it was opened read-only: saving is refused")
                warnings.append(warning)
                uncheckedModelWarning = warning
            } else if modelSource == .inferred, !options.readOnly {
                readOnlyReason = "the model was inferred from the store's tables, so saving could damage it: save refused, nothing was written (open the store with its model)"
            }
            self.identifier = identifier
            self.metadata = metadata
            self.model = model
            self.mapping = try SchemaMapping(model: model, reconciledWith: connection)
            warnings += mapping.reconciliationNotes.map { "\(path): \($0)" }
            self.warnings = warnings
            tracksPersistentHistory = try SQLiteStore.hasHistoryTables(connection)
            if options.persistentHistoryTracking, !tracksPersistentHistory, !options.readOnly, readOnlyReason == nil {
                try connection.transaction(.exclusive) { try createHistoryTables() }
                tracksPersistentHistory = true
            }
        } else {
            guard case .given(let model) = resolution else {
                throw PersistentStoreError(.noModel, "cannot create a store without a model", path: path)
            }
            self.model = model
            self.modelSource = .given
            self.mapping = SchemaMapping(model: model)
            self.identifier = ""
            self.metadata = [:]
            self.warnings = []
            do {
                try createSchema(persistentHistoryTracking: options.persistentHistoryTracking)
            } catch {
                // A store that could not be made whole is not left behind half made.
                for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: path + suffix) }
                throw error
            }
        }
    }

    /// The migration that ran when the store opened (see
    /// ``Options/migratePersistentStoresAutomatically``), or nil when none was needed.
    public private(set) var migrationResult: LightweightMigration.Result?

    /// The model that made a store needing migration: the first candidate, then the store's
    /// `Z_MODELCACHE`, whose version hashes are the store's.
    static func migrationSource(connection: Connection, storeHashes: [String: Data], candidates: [ManagedObjectModel], path: String) throws -> ManagedObjectModel {
        if let found = candidates.first(where: { $0.isCompatible(withStoreVersionHashes: storeHashes) }) { return found }
        var why = "it has no model cache (Z_MODELCACHE)"
        do {
            if let cached = try cachedModel(connection: connection, path: path) {
                if cached.isCompatible(withStoreVersionHashes: storeHashes) { return cached }
                why = "the model in its Z_MODELCACHE does not match its version hashes"
            }
        } catch let error as PersistentStoreError {
            why = error.message
        }
        throw PersistentStoreError(
            .missingSourceModel,
            "cannot find the model that made the store, so it cannot be migrated: \(why), and none of the \(candidates.count) models in Options.migrationSourceModels has its version hashes",
            path: path)
    }

    /// Problems found while opening that did not stop it: a store without version hashes, a
    /// model inferred from the tables (names and types guessed), schema differences between
    /// the store and the model's computed mapping.
    public private(set) var warnings: [String]

    /// Where ``model`` came from.
    public let modelSource: ModelSource

    /// The model a store caches in `Z_MODELCACHE`, or nil when it has none (stores written
    /// before about 2019 do not). Opens the file read-only and changes no byte of it.
    ///
    /// - Throws: ``PersistentStoreError`` when the file cannot be opened, or the cache does not decode.
    public static func cachedModel(at url: URL) throws -> ManagedObjectModel? {
        let path = url.path
        guard FileManager.default.fileExists(atPath: path) else {
            throw PersistentStoreError(.fileNotFound, "no such store file", path: path)
        }
        try requireRegularFiles(path: path)
        return try withReadOnlyConnection(path: path) { try cachedModel(connection: $0, path: path) }
    }

    /// The store's `NSStoreModelVersionHashes` (entity name → version hash), read without
    /// changing a byte; nil when its metadata has none.
    ///
    /// - Throws: ``PersistentStoreError`` when the file cannot be opened or is not a Core Data store.
    public static func versionHashes(at url: URL) throws -> [String: Data]? {
        let path = url.path
        guard FileManager.default.fileExists(atPath: path) else { throw PersistentStoreError(.fileNotFound, "no such store file", path: path) }
        try requireRegularFiles(path: path)
        return try withReadOnlyConnection(path: path) { try readMetadata($0, path: path).2 }
    }

    /// Runs `body` with a connection opened by the read-only plan (see ``readOnlyPlan(path:)``),
    /// which changes no byte of the store, its `-wal` or its `-shm`.
    static func withReadOnlyConnection<T>(path: String, _ body: (Connection) throws -> T) throws -> T {
        let plan = try readOnlyPlan(path: path)
        defer { if let folder = plan.snapshot { try? FileManager.default.removeItem(at: folder) } }
        let connection: Connection
        do {
            connection = try Connection(path: plan.path, mode: .readOnly, readOnlyOptions: plan.options)
        } catch let error as SQLiteError {
            throw PersistentStoreError(.cannotOpen, error.message, path: path)
        }
        return try body(connection)
    }

    /// Throws when the store, its `-wal` or its `-shm` is not a regular file: SQLite would
    /// wait forever for a writer on a FIFO, and read a device without end.
    static func requireRegularFiles(path: String) throws {
        for file in [path, path + "-wal", path + "-shm"] {
            if let problem = RegularFile.problem(atPath: file) {
                throw PersistentStoreError(.cannotOpen, file == path ? "this is \(problem), not a store file: refused" : "\(file) is \(problem), not a store's file: refused", path: path)
            }
        }
    }

    static func cachedModel(connection: Connection, path: String) throws -> ManagedObjectModel? {
        let blob: Data
        do {
            guard try connection.tableExists("Z_MODELCACHE"),
                case .blob(let data)? = try connection.scalar("SELECT Z_CONTENT FROM Z_MODELCACHE"), !data.isEmpty
            else { return nil }
            blob = data
        } catch let error as SQLiteError {
            throw PersistentStoreError(.notAStore, "cannot read Z_MODELCACHE: \(error.message)", path: path)
        }
        do {
            return try ManagedObjectModel(storeModelCacheBlob: blob, source: "\(path) (Z_MODELCACHE)")
        } catch let error as ModelError {
            throw PersistentStoreError(.noModel, "the model in Z_MODELCACHE cannot be read: \(error.message)", path: path)
        }
    }

    /// Core Data's check that a model can open a store: identical version hashes for the
    /// same set of entities; otherwise error 134100 naming each entity and how it differs.
    static func checkCompatibility(model: ManagedObjectModel, storeHashes: [String: Data], path: String) throws {
        let differing = model.entitiesDiffering(fromStoreVersionHashes: storeHashes)
        guard !differing.isEmpty else { return }
        let details = differing.map { name -> String in
            switch (model.entityVersionHashesByName[name], storeHashes[name]) {
            case (_?, nil): "entity \(name) was added (it is in the model, not in the store)"
            case (nil, _?): "entity \(name) was removed (it is in the store, not in the model)"
            default: "entity \(name) was changed (its version hash differs)"
            }
        }
        throw PersistentStoreError(
            .incompatibleModel,
            "The model used to open the store is incompatible with the one used to create the store: " + details.joined(separator: "; "),
            path: path)
    }

    /// A private copy of a store and its `-wal`, opened instead of the original (see
    /// ``readOnlyPlan(path:)``); removed when the store closes.
    private var snapshotFolder: URL?

    deinit {
        if let snapshotFolder { try? FileManager.default.removeItem(at: snapshotFolder) }
    }

    /// How a read-only session opens a store so that no byte of it, its `-wal` or its `-shm`
    /// changes, and no file appears beside it, while rows that live only in the `-wal` are seen:
    ///
    /// - a WAL-mode store without `-wal`: nothing to read there, so `immutable=1` (a plain
    ///   read-only open would create `-wal` and `-shm`);
    /// - `-wal` and `-shm` present: `readonly_shm=1` (a plain read-only open may rebuild and
    ///   write the wal-index in `-shm`, and does when run as root);
    /// - `-wal` without `-shm`: SQLite cannot read the log without creating `-shm`, so the
    ///   store and its `-wal` are copied to a private temporary folder and opened there;
    /// - a rollback-journal store: a plain read-only open.
    static func readOnlyPlan(path: String) throws -> (path: String, options: Connection.ReadOnlyOptions, snapshot: URL?) {
        let fm = FileManager.default
        let hasLog = fm.fileExists(atPath: path + "-wal")
        if !hasLog {
            return (path, isWALMode(path: path) ? .immutable : [], nil)
        }
        if fm.fileExists(atPath: path + "-shm") {
            return (path, .readOnlySharedMemory, nil)
        }
        let folder = fm.temporaryDirectory.appendingPathComponent("faultline-snapshot-\(UUID().uuidString)", isDirectory: true)
        do {
            try fm.createDirectory(at: folder, withIntermediateDirectories: true)
            let copy = folder.appendingPathComponent(URL(fileURLWithPath: path).lastPathComponent)
            try fm.copyItem(atPath: path, toPath: copy.path)
            try fm.copyItem(atPath: path + "-wal", toPath: copy.path + "-wal")
            return (copy.path, [], folder)
        } catch {
            try? fm.removeItem(at: folder)
            throw PersistentStoreError(.cannotOpen, "cannot read the store's -wal without a -shm beside it, and copying both to a temporary folder failed: \(error.localizedDescription)", path: path)
        }
    }

    /// Whether the file is a WAL-mode SQLite database (header bytes 18 and 19 are 2).
    static func isWALMode(path: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        guard let header = try? handle.read(upToCount: 20), header.count == 20 else { return false }
        // Bytes 18 and 19 of the header are the write and read format versions: 2 means WAL.
        // Either one is enough for SQLite to use a -wal and -shm (a damaged header may have
        // only one), so either one makes the read-only plan treat the store as WAL.
        return header.starts(with: Data("SQLite format 3\0".utf8)) && (header[18] == 2 || header[19] == 2)
    }

    /// Creates an in-memory store for `model`: the same engine and SQL, nothing on disk.
    public init(inMemoryWith model: ManagedObjectModel) throws {
        self.url = nil
        self.externalBinaryDataThreshold = .max
        self.model = model
        self.mapping = SchemaMapping(model: model)
        self.connection = try Connection(path: ":memory:", mode: .inMemory)
        self.identifier = ""
        self.metadata = [:]
        self.warnings = []
        self.modelSource = .given
        try CoreDataFunctions.register(on: connection, reports: triggerReports)
        try createSchema()
    }

    /// The store's path for messages (`:memory:` for in-memory stores).
    public var path: String { url?.path ?? ":memory:" }

    /// Whether the store refuses writes: opened read-only, or opened for writing but unsafe to
    /// write (see ``readOnlyReason``).
    public var isReadOnly: Bool { connection.isReadOnly || readOnlyReason != nil }

    /// Why a store asked to open for writing refuses to save, or nil: its metadata has no
    /// readable version hashes, so the model could not be checked (it is then opened
    /// read-only), or its model was inferred from its tables.
    public private(set) var readOnlyReason: String?

    /// The warning, when the model could not be checked against the store because its
    /// metadata has no readable version hashes; nil when it was checked (or the store is new).
    public private(set) var uncheckedModelWarning: String?

    /// Whether an existing store's metadata has readable version hashes, looked at through a
    /// read-only connection that changes no byte (see ``readOnlyPlan(path:)``).
    static func hasVersionHashes(path: String) throws -> Bool {
        try withReadOnlyConnection(path: path) { try readMetadata($0, path: path).2 != nil }
    }

    /// `Z_UUID`, the `Z_PLIST` dictionary, and its `NSStoreModelVersionHashes` (nil when absent).
    static func readMetadata(_ connection: Connection, path: String) throws -> (String, [String: Any], [String: Data]?) {
        var rows: [Row] = []
        // A read-only connection can meet SQLITE_READONLY (…_RECOVERY, …_CANTINIT) for a moment
        // while another process opens the store and sets up its -shm: it is retried for up to
        // a second, as for SQLITE_BUSY; a store that stays so (a WAL only a writer can
        // recover) fails as before, saying why.
        var attempts = 0
        while true {
            do {
                guard try connection.tableExists("Z_METADATA") else {
                    throw PersistentStoreError(.notAStore, "not a Core Data store: it has no Z_METADATA table", path: path)
                }
                rows = try connection.query("SELECT Z_VERSION, Z_UUID, Z_PLIST FROM Z_METADATA")
                break
            } catch let error as SQLiteError where error.primaryCode == 8 && connection.isReadOnly && attempts < 40 {
                attempts += 1
                usleep(25_000)
            } catch let error as SQLiteError {
                throw PersistentStoreError(.notAStore, "cannot read the store: \(error.message)", path: path)
            }
        }
        guard let row = rows.first else {
            throw PersistentStoreError(.notAStore, "not a Core Data store: Z_METADATA is empty", path: path)
        }
        let identifier = row[1].string ?? ""
        var metadata: [String: Any] = [:]
        var hashes: [String: Data]?
        if let data = row[2].data, !data.isEmpty {
            let plist = try? PropertyListSerialization.propertyList(from: data, format: nil)
            metadata = plist as? [String: Any] ?? [:]
            if let parsed = try? BinaryPropertyList.parse(data).dictionaryValue,
                let dict = parsed["NSStoreModelVersionHashes"]?.dictionaryValue
            {
                var out: [String: Data] = [:]
                for (name, value) in dict { if let d = value.dataValue { out[name] = d } }
                hashes = out
            }
        }
        return (identifier, metadata, hashes)
    }

    private func createSchema(persistentHistoryTracking: Bool = false) throws {
        let uuid = UUID().uuidString
        if url != nil {
            // Both must precede the first table: auto_vacuum is fixed once a table exists, and
            // the journal mode cannot change inside a transaction.
            try connection.executeScript("PRAGMA auto_vacuum = 2; PRAGMA journal_mode = WAL;")
        }
        try connection.transaction(.exclusive) {
            for statement in mapping.createStatements() {
                try connection.executeScript(statement)
            }
            if persistentHistoryTracking { try createHistoryTables() }
            for entity in mapping.entities.values.sorted(by: { $0.entityNumber < $1.entityNumber }) {
                try insertPrimaryKeyRow(entity.entityNumber, name: entity.name, superNumber: entity.superNumber, max: 0)
            }
            let plist = StoreMetadata.initialMetadata(for: model)
            let data = try PropertyListSerialization.data(fromPropertyList: plist, format: .binary, options: 0)
            try connection.execute("INSERT INTO Z_METADATA(Z_VERSION, Z_UUID, Z_PLIST) VALUES(?, ?, ?)", [1, .text(uuid), .blob(data)])
            // The model itself, as Core Data caches it, so the store opens without its model file.
            try connection.execute("INSERT INTO Z_MODELCACHE(Z_CONTENT) VALUES(?)", [.blob(try ModelArchiver.modelCacheBlob(for: model))])
        }
        identifier = uuid
        metadata = StoreMetadata.initialMetadata(for: model)
        tracksPersistentHistory = persistentHistoryTracking
    }
}

/// The metadata Core Data keeps in `Z_METADATA`.
public enum StoreMetadata {
    /// The `NSPersistenceFrameworkVersion` Faultline writes.
    public static let frameworkVersion = 1345

    /// The plist written into a new store: the keys Core Data writes (`NSStoreUUID` is not
    /// among them; it lives in `Z_METADATA.Z_UUID`).
    public static func initialMetadata(for model: ManagedObjectModel) -> [String: Any] {
        [
            "NSStoreType": "SQLite",
            "NSPersistenceFrameworkVersion": frameworkVersion,
            "NSStoreModelVersionHashesVersion": 3,
            "NSStoreModelVersionIdentifiers": model.versionIdentifiers.isEmpty ? [""] : model.versionIdentifiers,
            "_NSAutoVacuumLevel": "2",
            "NSStoreModelVersionHashes": model.entityVersionHashesByName,
            "NSStoreModelVersionHashesDigest": model.versionHashesDigest.base64EncodedString(),
            "NSStoreModelVersionChecksumKey": model.versionChecksum,
        ]
    }
}

/// An error opening or using a store: what went wrong and the file involved.
public struct PersistentStoreError: Error, Sendable, CustomStringConvertible, Equatable {
    /// The kind of problem.
    public enum Code: Int, Sendable, Equatable {
        /// The file does not exist.
        case fileNotFound = 260
        /// SQLite could not open it, or a file could not be read.
        case cannotOpen = 256
        /// A file could not be written.
        case cannotWrite = 512
        /// It is not a Core Data store.
        case notAStore = 259
        /// The model does not match the store (Core Data's 134100).
        case incompatibleModel = 134100
        /// A write was attempted on a read-only store.
        case readOnly = 513
        /// No model could be found for the store.
        case noModel = 134140
        /// A migration failed; the store was left as it was (Core Data's
        /// `NSMigrationError`, 134110).
        case migrationFailed = 134110
        /// The model that made the store could not be found, so it cannot be migrated (Core
        /// Data's `NSMigrationMissingSourceModelError`, 134130).
        case missingSourceModel = 134130
        /// The mapping between the store's model and the new one cannot be inferred (Core
        /// Data's `NSInferredMappingModelError`, 134190); the message lists why.
        case inferredMappingFailed = 134190
    }

    /// The kind of problem.
    public var code: Code
    /// A sentence saying what is wrong.
    public var message: String
    /// The store path.
    public var path: String?

    /// Creates an error.
    public init(_ code: Code, _ message: String, path: String? = nil) {
        self.code = code
        self.message = message
        self.path = path
    }

    public var description: String {
        if let path { return "\(path): \(message)" }
        return message
    }
}
