import FaultlineModel
import FaultlineSQL
import Foundation

/// Migrates a store made by one model version to another in place, as Core Data's lightweight
/// migration does for a SQLite store (`NSMigratePersistentStoresAutomaticallyOption` with
/// `NSInferMappingModelAutomaticallyOption`): the mapping is inferred (``InferredMapping``),
/// and the store is rewritten by SQL statements alone, in one transaction.
///
/// ```swift
/// let migration = try LightweightMigration(storeURL: url, sourceModel: v1, destinationModel: v2)
/// for statement in try migration.plan().statements { print(statement.sql) }   // --dry-run
/// let result = try migration.run(log: SQLLog(level: 1) { print($0) })
/// ```
///
/// What ``run(log:)`` does, in one `BEGIN IMMEDIATE` … `COMMIT` on one connection (in the
/// store's journal mode, WAL or rollback):
///
/// 1. plans the statements from the store as it is (``plan()`` shows the same list);
/// 2. runs them (see `Documentation/Migration.md`, "How Faultline migrates in place", for
///    their order and what each kind of change becomes);
/// 3. checks the result before committing: the store's version hashes are the destination
///    model's, its schema is the one ``SchemaConformance`` expects of a store of that model,
///    and `PRAGMA integrity_check` says `ok`;
/// 4. commits. Any error in 1–3 rolls everything back: the store is the old store, byte for
///    byte as far as its tables go, and opens with the old model.
///
/// External-data files (`.<store>_SUPPORT/_EXTERNAL_DATA/`) are kept as they are: rows keep
/// their references, and no file is removed (a removed attribute leaves its files behind).
public struct LightweightMigration {
    /// One statement of a migration, with its bound values.
    public struct Statement: Sendable, Hashable, CustomStringConvertible {
        /// The SQL text; every value is a `?` parameter.
        public var sql: String
        /// The values bound to the parameters, in order.
        public var arguments: [SQLValue]

        /// Creates a statement.
        public init(_ sql: String, _ arguments: [SQLValue] = []) {
            self.sql = sql
            self.arguments = arguments
        }

        public var description: String { sql }
    }

    /// What a migration will do (or did): its statements in order, and how each table is
    /// treated.
    public struct Plan: Sendable {
        /// The inferred mapping the plan carries out.
        public var mapping: InferredMapping
        /// Every statement, in the order they run (inside the transaction; `BEGIN` and
        /// `COMMIT` are not listed).
        public var statements: [Statement]
        /// Entity tables changed in place (`ALTER TABLE … ADD COLUMN`, `UPDATE`, `DELETE`).
        public var alteredTables: [String]
        /// Entity tables built anew from the old rows (`CREATE TABLE`, `INSERT … SELECT`).
        public var rebuiltTables: [String]
        /// Tables created empty (new entities) or dropped (removed entities).
        public var createdTables: [String]
        /// Tables dropped.
        public var droppedTables: [String]
        /// Caveats: values that could not be carried over and why.
        public var notes: [String]

        /// The SQL text of every statement, in order.
        public var sql: [String] { statements.map(\.sql) }
    }

    /// What a finished migration did.
    public struct Result: Sendable {
        /// The plan that ran.
        public var plan: Plan
        /// Rows per entity table before (source table names) and after (destination names).
        public var rowsBefore: [String: Int]
        /// Rows per entity table after the migration.
        public var rowsAfter: [String: Int]
    }

    /// The store file.
    public let storeURL: URL
    /// The model that made the store.
    public let sourceModel: ManagedObjectModel
    /// The model the store is migrated to.
    public let destinationModel: ManagedObjectModel
    /// The inferred mapping from ``sourceModel`` to ``destinationModel``.
    public let mapping: InferredMapping
    /// A registered SQLite VFS to open the file through (tests inject I/O faults), or nil.
    public var vfsName: String?

    /// Prepares a migration of the store at `storeURL` from `sourceModel` to
    /// `destinationModel`. Nothing is read or written yet.
    ///
    /// - Throws: ``PersistentStoreError`` with code ``PersistentStoreError/Code/inferredMappingFailed`` (Core
    ///   Data's 134190) listing ``InferredMapping/problems`` when the mapping cannot be
    ///   inferred.
    public init(storeURL: URL, sourceModel: ManagedObjectModel, destinationModel: ManagedObjectModel, vfsName: String? = nil) throws {
        self.storeURL = storeURL
        self.sourceModel = sourceModel
        self.destinationModel = destinationModel
        self.vfsName = vfsName
        self.mapping = destinationModel.inferredMapping(from: sourceModel)
        try LightweightMigration.requireInferable(mapping, path: storeURL.path)
    }

    /// The statements ``run(log:)`` would run, worked out from the store as it is now,
    /// without changing a byte of it (the store is opened read-only).
    ///
    /// - Throws: ``PersistentStoreError`` when the store cannot be read, was not made by
    ///   ``sourceModel``, or holds data the migration cannot carry over.
    public func plan() throws -> Plan {
        let path = storeURL.path
        guard FileManager.default.fileExists(atPath: path) else { throw PersistentStoreError(.fileNotFound, "no such store file", path: path) }
        try SQLiteStore.requireRegularFiles(path: path)
        return try SQLiteStore.withReadOnlyConnection(path: path) { connection in
            try LightweightMigration.checkSource(connection, model: sourceModel, path: path)
            return try MigrationPlanner(connection: connection, mapping: mapping, source: sourceModel, destination: destinationModel, path: path).plan()
        }
    }

    /// Migrates the store in place, in one transaction; nothing changes when it throws.
    ///
    /// - Parameter log: a SQL log to attach to the migration's connection (Core Data's
    ///   SQLDebug format), or nil.
    /// - Throws: ``PersistentStoreError`` with code ``PersistentStoreError/Code/migrationFailed`` (Core Data's
    ///   134110) naming the statement or check that failed; the store is left as it was.
    @discardableResult
    public func run(log: SQLLog? = nil) throws -> Result {
        let path = storeURL.path
        guard FileManager.default.fileExists(atPath: path) else { throw PersistentStoreError(.fileNotFound, "no such store file", path: path) }
        try SQLiteStore.requireRegularFiles(path: path)
        let connection: Connection
        do {
            connection = try Connection(path: path, mode: .readWrite, vfs: vfsName)
        } catch let error as SQLiteError {
            throw PersistentStoreError(.cannotOpen, error.message, path: path)
        }
        connection.setBusyTimeout(milliseconds: 5000)
        try CoreDataFunctions.register(on: connection)
        if let log { log.attach(to: connection) }
        return try LightweightMigration.migrate(connection: connection, mapping: mapping, source: sourceModel, destination: destinationModel, path: path)
    }

    // MARK: Shared with SQLiteStore

    static func requireInferable(_ mapping: InferredMapping, path: String) throws {
        guard mapping.isInferable else {
            throw PersistentStoreError(
                .inferredMappingFailed,
                "Can't find or automatically infer mapping model for migration: " + mapping.problems.joined(separator: "; "),
                path: path)
        }
    }

    /// Throws unless the store's version hashes are the source model's.
    static func checkSource(_ connection: Connection, model: ManagedObjectModel, path: String) throws {
        let (_, _, hashes) = try SQLiteStore.readMetadata(connection, path: path)
        guard let hashes else {
            throw PersistentStoreError(.missingSourceModel, "the store's metadata has no version hashes, so the model that made it cannot be checked: not migrated", path: path)
        }
        guard model.isCompatible(withStoreVersionHashes: hashes) else {
            let differing = model.entitiesDiffering(fromStoreVersionHashes: hashes)
            throw PersistentStoreError(.missingSourceModel, "the source model is not the one that made the store (entities \(differing.joined(separator: ", ")) differ): not migrated", path: path)
        }
    }

    /// Plans and runs a migration on `connection` in one `BEGIN IMMEDIATE` transaction,
    /// checks the result, and commits; rolls back on any error.
    static func migrate(connection: Connection, mapping: InferredMapping, source: ManagedObjectModel, destination: ManagedObjectModel, path: String) throws -> Result {
        try requireInferable(mapping, path: path)
        if connection.isReadOnly {
            throw PersistentStoreError(.readOnly, "migrating a store needs a writable open (readOnly: false) with migratePersistentStoresAutomatically and inferMappingModelAutomatically", path: path)
        }
        do {
            return try connection.transaction(.immediate) {
                try checkSource(connection, model: source, path: path)
                let planner = try MigrationPlanner(connection: connection, mapping: mapping, source: source, destination: destination, path: path)
                let plan = try planner.plan()
                let before = try rowCounts(connection)
                if connection.isTraced {
                    connection.emit(.message(category: "annotation", text: "Lightweight migration of \(path): \(plan.statements.count) statements (\(plan.alteredTables.count) tables altered, \(plan.rebuiltTables.count) rebuilt)"))
                }
                for statement in plan.statements {
                    do {
                        try connection.execute(statement.sql, statement.arguments)
                    } catch let error as SQLiteError {
                        throw PersistentStoreError(.migrationFailed, "migration failed at \(statement.sql): \(error.message); nothing was changed", path: path)
                    }
                }
                let problems = try SchemaConformance.problems(connection: connection, model: destination, integrity: true)
                if !problems.isEmpty {
                    throw PersistentStoreError(.migrationFailed, "the migrated store does not match the destination model: " + problems.joined(separator: "; ") + "; nothing was changed", path: path)
                }
                let after = try rowCounts(connection)
                return Result(plan: plan, rowsBefore: before, rowsAfter: after)
            }
        } catch let error as PersistentStoreError {
            throw error
        } catch let error as SQLiteError {
            throw PersistentStoreError(.migrationFailed, "migration failed: \(error.message); nothing was changed", path: path)
        }
    }

    /// Rows per entity table (tables named in `Z_PRIMARYKEY`'s roots are not needed: every
    /// table that has `Z_ENT` and `Z_PK` and is not ancillary).
    static func rowCounts(_ connection: Connection) throws -> [String: Int] {
        var out: [String: Int] = [:]
        for table in try connection.tableNames().sorted() where table.hasPrefix("Z") && !table.hasPrefix("Z_") {
            let columns = Set(try connection.columns(ofTable: table).map(\.name))
            guard columns.contains("Z_ENT"), columns.contains("Z_PK") else { continue }
            out[table] = Int(try connection.scalar("SELECT count(*) FROM \(SQLName.quoted(table))")?.int64 ?? 0)
        }
        return out
    }
}

/// Identifiers in generated SQL: names from the models are plain (`ZNAME`, `Z_1TAGS`) and
/// written bare, as Core Data writes them; anything else is double-quoted.
enum SQLName {
    static func quoted(_ name: String) -> String {
        let plain = !name.isEmpty && name.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x5F }
            && !(name.utf8.first.map { $0 >= 0x30 && $0 <= 0x39 } ?? true)
        if plain && !keywords.contains(name.uppercased()) { return name }
        return "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// Words that cannot be bare column or table names (Core Data's names start with `Z`, so
    /// only the odd model can hit one).
    static let keywords: Set<String> = ["ZEROBLOB", "ORDER", "GROUP", "SELECT", "TABLE", "INDEX", "WHERE", "FROM", "KEY", "PRIMARY", "DEFAULT"]
}
