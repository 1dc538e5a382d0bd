import CFaultlineIntArray
import CFaultlineSQLite
import Foundation

/// One connection to a SQLite database: opens it, prepares and caches statements, runs
/// transactions, registers functions and collations, and reports every statement it runs to
/// its trace observers.
///
/// A connection is not thread-safe; it belongs to one owner (a store or a test) at a time.
///
/// ```swift
/// let db = try Connection(path: "Inventory.sqlite", mode: .readOnly)
/// for row in try db.query("SELECT Z_PK, ZLABEL FROM ZLOCATION") { print(row[1]) }
/// ```
public final class Connection {
    /// How a database is opened.
    public enum Mode: Sendable, Equatable {
        /// `SQLITE_OPEN_READONLY`: nothing is written, WAL contents are still seen.
        case readOnly
        /// Read and write; the file must exist.
        case readWrite
        /// Read and write; the file is created when missing.
        case readWriteCreate
        /// A private in-memory database.
        case inMemory
    }

    /// The database path (`":memory:"` for in-memory databases).
    public let path: String
    /// How the database was opened.
    public let mode: Mode
    /// The SQLite handle. Not API.
    package let handle: OpaquePointer
    private var statementCache: [String: Statement] = [:]
    @exclusivity(unchecked) private var observers: [(id: Int, observe: (TraceEvent) -> Void)] = []
    private var nextObserverID = 0
    private var functionBoxes: [AnyObject] = []
    /// The integer-array tables registered on this connection, by name (``withIntArray(_:named:_:)``).
    private var intArrays: [String: OpaquePointer] = [:]
    /// The keys each of them reads now, restored when a nested binding ends.
    private var intArrayBindings: [String: UnsafeBufferPointer<Int64>] = [:]

    /// Opens (or creates) a database.
    ///
    /// - Parameters:
    ///   - readOnlyOptions: with ``Mode/readOnly``, how far SQLite may touch the files beside
    ///     the database; see ``ReadOnlyOptions``.
    ///   - vfs: the name of a registered SQLite VFS to open the database through (`unix-dotfile`
    ///     for a file system without POSIX locks, a test's fault-injecting VFS); nil for
    ///     SQLite's default.
    /// - Throws: ``SQLiteError`` naming the path when it cannot be opened.
    public init(path: String, mode: Mode = .readOnly, readOnlyOptions: ReadOnlyOptions = [], vfs: String? = nil) throws {
        self.path = mode == .inMemory ? ":memory:" : path
        self.mode = mode
        var flags: Int32 = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI
        switch mode {
        case .readOnly: flags |= SQLITE_OPEN_READONLY
        case .readWrite: flags |= SQLITE_OPEN_READWRITE
        case .readWriteCreate, .inMemory: flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
        }
        // A plain path, never a URI: escape it so `?` or `#` in a file name stay part of the name.
        let target: String
        if mode == .inMemory {
            target = ":memory:"
        } else {
            target = "file:" + (path.addingPercentEncoding(withAllowedCharacters: Self.uriPathCharacters) ?? path)
                + (mode == .readOnly ? readOnlyOptions.uriQuery : "")
        }
        var db: OpaquePointer?
        let rc = sqlite3_open_v2(target, &db, flags, vfs)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            if let db { sqlite3_close_v2(db) }
            throw SQLiteError(code: rc, message: message, path: path)
        }
        self.handle = db
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, 5000)
    }

    /// How a read-only open treats the files beside the database.
    public struct ReadOnlyOptions: OptionSet, Sendable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// SQLite's `immutable=1`: no locks, and no `-wal` or `-shm` is read or created. Only
        /// right when nothing else writes the file while it is open and there is no `-wal`.
        public static let immutable = ReadOnlyOptions(rawValue: 1)
        /// SQLite's `readonly_shm=1`: the `-shm` is opened read-only, so even a wal-index that
        /// needs rebuilding is rebuilt in private memory, not written back (a read-only open
        /// by root would otherwise rewrite it).
        public static let readOnlySharedMemory = ReadOnlyOptions(rawValue: 2)

        var uriQuery: String {
            var parameters: [String] = []
            if contains(.immutable) { parameters.append("immutable=1") }
            if contains(.readOnlySharedMemory) { parameters.append("readonly_shm=1") }
            return parameters.isEmpty ? "" : "?" + parameters.joined(separator: "&")
        }
    }

    private static let uriPathCharacters: CharacterSet = {
        var set = CharacterSet.urlPathAllowed
        set.remove(charactersIn: "?#%")
        return set
    }()

    deinit {
        statementCache.removeAll()
        sqlite3_close_v2(handle)
    }

    /// Whether the connection refuses writes.
    public var isReadOnly: Bool { sqlite3_db_readonly(handle, "main") == 1 }

    /// SQLite's library version (`3.40.1`).
    public static var sqliteVersion: String { String(cString: sqlite3_libversion()) }

    /// How long a statement waits for a lock held by another connection before failing with `SQLITE_BUSY`.
    public func setBusyTimeout(milliseconds: Int32) {
        sqlite3_busy_timeout(handle, milliseconds)
    }

    // MARK: Statements

    /// Prepares a statement (not cached).
    public func prepare(_ sql: String) throws -> Statement {
        try Statement(connection: self, sql: sql)
    }

    /// Prepares every statement of a text of several (`SELECT 1; SELECT 2`), in order; text
    /// that is only white space or comments gives none. Nothing runs: a syntax error anywhere
    /// throws before any statement has had an effect.
    public func prepareAll(_ sql: String) throws -> [Statement] {
        let bytes = Array(sql.utf8)
        var statements: [Statement] = []
        var offset = 0
        try bytes.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            try base.withMemoryRebound(to: CChar.self, capacity: buffer.count) { text in
                while offset < buffer.count {
                    var statement: OpaquePointer?
                    var tail: UnsafePointer<CChar>?
                    let rc = sqlite3_prepare_v3(handle, text + offset, Int32(buffer.count - offset), 0, &statement, &tail)
                    let end = tail.map { $0 - text } ?? buffer.count
                    let piece = String(decoding: buffer[offset..<end], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
                    guard rc == SQLITE_OK else {
                        throw SQLiteError(code: rc, message: String(cString: sqlite3_errmsg(handle)), sql: piece, path: path)
                    }
                    if let statement { statements.append(Statement(connection: self, handle: statement, sql: piece)) }
                    guard end > offset else { break }
                    offset = end
                }
            }
        }
        return statements
    }

    /// Runs `body` with `ATTACH` and `DETACH` refused at prepare time (`SQLITE_AUTH`): an
    /// attached database would not be opened with the main database's read-only plan.
    package func refusingAttach<T>(_ body: () throws -> T) rethrows -> T {
        sqlite3_set_authorizer(handle, { _, action, _, _, _, _ in
            action == SQLITE_ATTACH || action == SQLITE_DETACH ? SQLITE_DENY : SQLITE_OK
        }, nil)
        defer { sqlite3_set_authorizer(handle, nil, nil) }
        return try body()
    }

    /// A prepared statement from the connection's cache, reset and with bindings cleared.
    public func cachedStatement(_ sql: String) throws -> Statement {
        if let statement = statementCache[sql] {
            statement.reset()
            return statement
        }
        let statement = try prepare(sql)
        statementCache[sql] = statement
        return statement
    }

    /// Runs a statement that returns no rows (or whose rows are ignored).
    public func execute(_ sql: String, _ arguments: [SQLValue] = []) throws {
        let statement = try cachedStatement(sql)
        try statement.bind(arguments)
        try statement.run()
    }

    /// Runs SQL text holding any number of statements, with no arguments and no trace events.
    ///
    /// For schema scripts and pragmas; user values never go through this.
    public func executeScript(_ sql: String) throws {
        var error: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &error)
        if rc != SQLITE_OK {
            let message = error.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(handle))
            sqlite3_free(error)
            throw SQLiteError(code: rc, message: message, sql: sql, path: path)
        }
    }

    /// Runs a query and returns all its rows.
    public func query(_ sql: String, _ arguments: [SQLValue] = []) throws -> [Row] {
        let statement = try cachedStatement(sql)
        try statement.bind(arguments)
        return try statement.fetchAll()
    }

    /// The first column of the first row of a query, or nil when it returns no row.
    public func scalar(_ sql: String, _ arguments: [SQLValue] = []) throws -> SQLValue? {
        try query(sql, arguments).first?[0]
    }

    /// The rowid of the last inserted row.
    public var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// The number of rows changed by the last INSERT, UPDATE or DELETE.
    public var changes: Int { Int(sqlite3_changes(handle)) }

    /// Whether a transaction is open.
    public var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    // MARK: Transactions

    /// The kinds of `BEGIN`.
    public enum TransactionKind: String, Sendable {
        /// `BEGIN DEFERRED`: locks are taken on first use.
        case deferred = "DEFERRED"
        /// `BEGIN IMMEDIATE`: the write lock is taken at once.
        case immediate = "IMMEDIATE"
        /// `BEGIN EXCLUSIVE`: what Core Data uses for saves.
        case exclusive = "EXCLUSIVE"
    }

    /// Runs `body` in a transaction; commits when it returns, rolls back when it throws.
    ///
    /// A `COMMIT` that fails with `SQLITE_IOERR_UNLOCK` counts as committed: in a
    /// rollback-journal database that error comes from releasing the write lock after the
    /// journal was finalized, so the changes are on disk and a caller that retried would
    /// write them twice.
    public func transaction<T>(_ kind: TransactionKind = .deferred, _ body: () throws -> T) throws -> T {
        try execute("BEGIN \(kind.rawValue)")
        do {
            let result = try body()
            do {
                try execute("COMMIT")
            } catch let error as SQLiteError where error.code == Self.ioerrUnlock && !isInTransaction {
                return result
            }
            return result
        } catch {
            if isInTransaction { try? execute("ROLLBACK") }
            throw error
        }
    }

    /// `SQLITE_IOERR_UNLOCK` (a macro Swift does not import).
    private static let ioerrUnlock = SQLITE_IOERR | (8 << 8)

    // MARK: Tracing

    /// Adds an observer of every statement run and every annotation emitted; returns a token for ``removeTraceObserver(_:)``.
    @discardableResult
    public func addTraceObserver(_ observe: @escaping (TraceEvent) -> Void) -> Int {
        nextObserverID += 1
        observers.append((nextObserverID, observe))
        return nextObserverID
    }

    /// Removes an observer added with ``addTraceObserver(_:)``.
    public func removeTraceObserver(_ token: Int) {
        observers.removeAll { $0.id == token }
    }

    /// Whether anyone is listening (lets callers skip building expensive messages).
    public var isTraced: Bool { !observers.isEmpty && !traceSuspended }

    @exclusivity(unchecked) private var traceSuspended = false

    /// Runs `body` without reporting its statements to the trace observers: for bookkeeping
    /// statements that are not part of what the log shows (the shell's own schema queries).
    public func untraced<T>(_ body: () throws -> T) rethrows -> T {
        let saved = traceSuspended
        traceSuspended = true
        defer { traceSuspended = saved }
        return try body()
    }

    /// Runs `body` with `keys` as the rows of the in-memory table `name`: statements it runs
    /// read them with `SELECT value FROM name` (or `SELECT * FROM name`).
    ///
    /// The table is an eponymous virtual table of one INTEGER column, registered on the
    /// connection the first time a name is used: nothing is created, written or logged, the
    /// database (even one opened read-only) is not touched, and no transaction is needed —
    /// a rolled-back transaction cannot drop it. Core Data binds id lists the same way (its
    /// `_Z_intarray0`). Binding copies nothing; each scan copies the keys bound when it starts,
    /// so a statement stepped again after `body` returns reads those keys safely. Rows come in
    /// the array's order, duplicates included. A binding inside `body` replaces the keys until
    /// it ends; then the outer keys are back. Outside any binding the table is empty.
    ///
    /// - Throws: ``SQLiteError`` when the table cannot be registered, when the database has a
    ///   table or view of that name (whose rows SQLite would read instead), or what `body` throws.
    public func withIntArray<T>(_ keys: [Int64], named name: String, _ body: () throws -> T) throws -> T {
        let array: OpaquePointer
        if let registered = intArrays[name] {
            array = registered
        } else {
            guard let registered = faultline_intarray_register(handle, name) else {
                throw SQLiteError(code: sqlite3_errcode(handle), message: "cannot register the in-memory table \(name): \(String(cString: sqlite3_errmsg(handle)))", path: path)
            }
            intArrays[name] = registered
            array = registered
        }
        // A real table or view of that name (in any attached database, temp included) would
        // be read instead of the bound keys: refuse rather than give another table's rows.
        if sqlite3_table_column_metadata(handle, nil, name, nil, nil, nil, nil, nil, nil) == SQLITE_OK {
            throw SQLiteError(
                code: SQLITE_ERROR,
                message: "the database has a table or view named \(name), the name under which id lists are bound (Core Data's int-array table): its rows would be read instead",
                path: path)
        }
        return try keys.withUnsafeBufferPointer { buffer in
            let outer = intArrayBindings[name]
            faultline_intarray_bind(array, buffer.baseAddress, Int64(buffer.count))
            intArrayBindings[name] = buffer
            defer {
                faultline_intarray_bind(array, outer?.baseAddress, Int64(outer?.count ?? 0))
                intArrayBindings[name] = outer
            }
            return try body()
        }
    }

    /// Sends an event to every observer. Higher layers use it for their annotations, so that
    /// one hook carries the whole log.
    public func emit(_ event: TraceEvent) {
        for observer in observers { observer.observe(event) }
    }

    // MARK: Functions and collations

    /// Registers a SQL function implemented in Swift.
    ///
    /// - Parameters:
    ///   - name: the SQL name.
    ///   - argumentCount: the number of arguments, or -1 for any.
    ///   - deterministic: whether the same arguments always give the same result.
    ///   - body: computes the result; a thrown error becomes a SQL error.
    ///   - fastPath: tried first on the arguments as SQLite holds them (no copy); its non-nil
    ///     result is the function's, nil falls back to `body`.
    public func createFunction(
        _ name: String, argumentCount: Int32, deterministic: Bool = true,
        fastPath: ((FunctionArguments) -> SQLValue?)? = nil,
        _ body: @escaping ([SQLValue]) throws -> SQLValue
    ) throws {
        let box = FunctionBox(body, fastPath: fastPath)
        functionBoxes.append(box)
        var flags = SQLITE_UTF8
        if deterministic { flags |= SQLITE_DETERMINISTIC }
        let rc = sqlite3_create_function_v2(
            handle, name, argumentCount, flags, Unmanaged.passUnretained(box).toOpaque(),
            { context, argc, argv in
                guard let context, let userData = sqlite3_user_data(context) else { return }
                let box = Unmanaged<FunctionBox>.fromOpaque(userData).takeUnretainedValue()
                if let fastPath = box.fastPath, let result = fastPath(FunctionArguments(count: Int(argc), values: argv)) {
                    result.setResult(context)
                    return
                }
                var arguments: [SQLValue] = []
                arguments.reserveCapacity(Int(argc))
                for i in 0..<Int(argc) {
                    arguments.append(SQLValue(sqliteValue: argv?[i]))
                }
                do {
                    let result = try box.body(arguments)
                    result.setResult(context)
                } catch {
                    sqlite3_result_error(context, "\(error)", -1)
                }
            }, nil, nil, nil)
        guard rc == SQLITE_OK else {
            throw SQLiteError(code: rc, message: String(cString: sqlite3_errmsg(handle)), path: path)
        }
    }

    /// Registers a collation implemented in Swift.
    public func createCollation(_ name: String, _ compare: @escaping (String, String) -> ComparisonResult) throws {
        let box = CollationBox(compare)
        functionBoxes.append(box)
        let rc = sqlite3_create_collation_v2(
            handle, name, SQLITE_UTF8, Unmanaged.passUnretained(box).toOpaque(),
            { userData, length1, bytes1, length2, bytes2 in
                guard let userData else { return 0 }
                let box = Unmanaged<CollationBox>.fromOpaque(userData).takeUnretainedValue()
                let a = bytes1.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: Int(length1)), as: UTF8.self) } ?? ""
                let b = bytes2.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: Int(length2)), as: UTF8.self) } ?? ""
                return Int32(box.compare(a, b).rawValue)
            }, nil)
        guard rc == SQLITE_OK else {
            throw SQLiteError(code: rc, message: String(cString: sqlite3_errmsg(handle)), path: path)
        }
    }

    // MARK: Schema helpers

    /// The columns of a table, from `PRAGMA table_info` (never by position in the DDL).
    public func columns(ofTable table: String) throws -> [ColumnInfo] {
        let statement = try prepare("SELECT name, type, pk FROM pragma_table_info(?)")
        try statement.bind([.text(table)])
        return try statement.fetchAll().map {
            ColumnInfo(name: $0[0].string ?? "", declaredType: $0[1].string ?? "", isPrimaryKey: ($0[2].int64 ?? 0) != 0)
        }
    }

    /// The names of every table (as `sqlite_master` spells them), read in one scan:
    /// `sqlite_master` has no index, so for many tables this beats ``tableExists(_:)`` per
    /// table, which scans it each time.
    public func tableNames() throws -> Set<String> {
        var names: Set<String> = []
        for row in try query("SELECT name FROM sqlite_master WHERE type = 'table'") {
            if let name = row[0].string { names.insert(name) }
        }
        return names
    }

    /// Whether a table exists.
    public func tableExists(_ table: String) throws -> Bool {
        let statement = try prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?")
        try statement.bind([.text(table)])
        return try statement.fetchAll().isEmpty == false
    }
}

/// One column of a table, as `PRAGMA table_info` reports it.
public struct ColumnInfo: Sendable, Hashable {
    /// The column name.
    public var name: String
    /// The declared type (`INTEGER`, `VARCHAR`, …).
    public var declaredType: String
    /// Whether the column is (part of) the primary key.
    public var isPrimaryKey: Bool
}

/// Something that happened on a connection, for the SQL log and statistics.
public enum TraceEvent {
    /// A statement is about to run, with its bound values.
    case statement(sql: String, arguments: [SQLValue])
    /// A statement finished: how long its steps took and how many rows it returned.
    case finished(sql: String, seconds: Double, rows: Int)
    /// A message from a higher layer, already worded (`category` is `annotation`, `details`, …),
    /// shown from SQL log level 1 (`details` from level 2).
    case message(category: String, text: String)
    /// A message shown only at the SQL log levels in `levels` (Core Data prints some lines at
    /// level 2 only and a longer form from level 3); `text` is built only when it is shown.
    case detail(levels: ClosedRange<Int>, category: String, text: @Sendable () -> String)
}

private final class FunctionBox {
    let body: ([SQLValue]) throws -> SQLValue
    let fastPath: ((FunctionArguments) -> SQLValue?)?
    init(_ body: @escaping ([SQLValue]) throws -> SQLValue, fastPath: ((FunctionArguments) -> SQLValue?)?) {
        self.body = body
        self.fastPath = fastPath
    }
}

/// The arguments of one call of a SQL function, read where SQLite holds them: valid only
/// during the call.
public struct FunctionArguments {
    /// The number of arguments.
    public let count: Int
    private let values: UnsafeMutablePointer<OpaquePointer?>?

    init(count: Int, values: UnsafeMutablePointer<OpaquePointer?>?) {
        self.count = count
        self.values = values
    }

    /// Whether argument `index` is TEXT.
    public func isText(_ index: Int) -> Bool { sqlite3_value_type(values?[index]) == SQLITE_TEXT }

    /// Argument `index` as an integer, when it is an INTEGER.
    public func integer(_ index: Int) -> Int64? {
        sqlite3_value_type(values?[index]) == SQLITE_INTEGER ? sqlite3_value_int64(values?[index]) : nil
    }

    /// Runs `body` on the UTF-8 bytes of argument `index` (call only when it is TEXT).
    public func withUTF8<T>(_ index: Int, _ body: (UnsafeBufferPointer<UInt8>) -> T) -> T {
        let value = values?[index]
        guard let text = sqlite3_value_text(value) else { return body(UnsafeBufferPointer(start: nil, count: 0)) }
        return body(UnsafeBufferPointer(start: text, count: Int(sqlite3_value_bytes(value))))
    }
}

private final class CollationBox {
    let compare: (String, String) -> ComparisonResult
    init(_ compare: @escaping (String, String) -> ComparisonResult) { self.compare = compare }
}

extension SQLValue {
    /// Reads a function argument.
    init(sqliteValue value: OpaquePointer?) {
        switch sqlite3_value_type(value) {
        case SQLITE_INTEGER: self = .integer(sqlite3_value_int64(value))
        case SQLITE_FLOAT: self = .real(sqlite3_value_double(value))
        case SQLITE_TEXT:
            if let text = sqlite3_value_text(value) {
                self = .text(String(decoding: UnsafeRawBufferPointer(start: text, count: Int(sqlite3_value_bytes(value))), as: UTF8.self))
            } else {
                self = .null
            }
        case SQLITE_BLOB:
            let count = Int(sqlite3_value_bytes(value))
            if let bytes = sqlite3_value_blob(value), count > 0 { self = .blob(Data(bytes: bytes, count: count)) } else { self = .blob(Data()) }
        default: self = .null
        }
    }

    /// Sets a function result.
    func setResult(_ context: OpaquePointer) {
        switch self {
        case .null: sqlite3_result_null(context)
        case .integer(let i): sqlite3_result_int64(context, i)
        case .real(let d): sqlite3_result_double(context, d)
        case .text(let s):
            var text = s
            text.withUTF8 { bytes in
                bytes.withMemoryRebound(to: CChar.self) { chars in
                    guard let base = chars.baseAddress else { return sqlite3_result_text(context, "", 0, faultline_sqlite3_transient()) }
                    sqlite3_result_text(context, base, Int32(chars.count), faultline_sqlite3_transient())
                }
            }
        case .blob(let d):
            d.withUnsafeBytes { sqlite3_result_blob(context, $0.baseAddress, Int32($0.count), faultline_sqlite3_transient()) }
        }
    }
}
