import CFaultlineSQLite
import Foundation

/// A prepared SQL statement: bind values by index, step through rows, read columns.
///
/// Values are always bound, never pasted into the SQL text. Stepping reports a
/// ``TraceEvent/statement(sql:arguments:)`` event when the statement starts and a
/// ``TraceEvent/finished(sql:seconds:rows:)`` event when it is done or reset.
public final class Statement {
    /// The SQL text as written.
    public let sql: String
    /// The names of the result columns.
    public let columnNames: [String]
    @usableFromInline let handle: OpaquePointer
    private unowned let connection: Connection
    private var arguments: ArraySlice<SQLValue> = []
    /// The value bound by ``bind(only:)``, reported as the statement's one argument.
    private var onlyInteger: Int64?
    private var started = false
    private var rowsStepped = 0
    private var elapsed: UInt64 = 0
    private var finishedReported = false
    /// Whether this run of the statement is timed: only when someone traces the connection
    /// at its start (reading the clock twice per row costs more than stepping a small row).
    private var timed = false
    /// The distance between two columns' values in a row (``currentColumns()``): 0 until
    /// worked out, -1 when they are not evenly spaced. Read once a row by code inlined into
    /// other modules, where a class's variable is otherwise checked for exclusive access at
    /// run time (`swift_beginAccess`, a thread-local look-up: 4 % of a fetch's time); written
    /// only by ``firstColumns(_:count:)``, on the statement's one thread.
    @exclusivity(unchecked) @usableFromInline var columnSpacing = 0

    init(connection: Connection, sql: String) throws {
        var statement: OpaquePointer?
        let rc = sqlite3_prepare_v3(connection.handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard rc == SQLITE_OK, let statement else {
            throw SQLiteError(code: rc, message: String(cString: sqlite3_errmsg(connection.handle)), sql: sql, path: connection.path)
        }
        self.handle = statement
        self.sql = sql
        self.connection = connection
        let count = sqlite3_column_count(statement)
        self.columnNames = (0..<count).map { String(cString: sqlite3_column_name(statement, $0)) }
    }

    /// Wraps a statement prepared elsewhere (``Connection/prepareAll(_:)``).
    init(connection: Connection, handle statement: OpaquePointer, sql: String) {
        self.handle = statement
        self.sql = sql
        self.connection = connection
        let count = sqlite3_column_count(statement)
        self.columnNames = (0..<count).map { String(cString: sqlite3_column_name(statement, $0)) }
    }

    deinit {
        sqlite3_finalize(handle)
    }

    /// The number of `?` parameters.
    public var parameterCount: Int { Int(sqlite3_bind_parameter_count(handle)) }

    /// Whether the statement only reads.
    public var isReadOnly: Bool { sqlite3_stmt_readonly(handle) != 0 }

    /// Binds values to the parameters, by index (the first value to `?1`).
    public func bind(_ values: [SQLValue]) throws {
        try bind(values[...])
    }

    /// Binds a slice of values to the parameters, by index (its first value to `?1`): the
    /// values of many rows can sit in one buffer (a save's updates), each bound from its slice
    /// without an array of its own.
    public func bind(_ values: ArraySlice<SQLValue>) throws {
        guard values.count == parameterCount else {
            throw SQLiteError(code: SQLITE_RANGE, message: "statement has \(parameterCount) parameters, \(values.count) values given", sql: sql, path: connection.path)
        }
        var parameter: Int32 = 1
        for index in values.indices {
            try bind(values[index], at: parameter)
            parameter += 1
        }
        arguments = values
        onlyInteger = nil
    }

    /// Binds one integer as the statement's only parameter (a fault's primary key): what
    /// ``bind(_:)`` does with `[.integer(value)]`, without making the array.
    public func bind(only value: Int64) throws {
        guard parameterCount == 1 else { return try bind([.integer(value)]) }
        let rc = sqlite3_bind_int64(handle, 1, value)
        guard rc == SQLITE_OK else {
            throw SQLiteError(code: rc, message: String(cString: sqlite3_errmsg(connection.handle)), sql: sql, path: connection.path)
        }
        arguments = []
        onlyInteger = value
    }

    private func bind(_ value: SQLValue, at index: Int32) throws {
        let rc: Int32
        switch value {
        case .null: rc = sqlite3_bind_null(handle, index)
        case .integer(let i): rc = sqlite3_bind_int64(handle, index, i)
        case .real(let d): rc = sqlite3_bind_double(handle, index, d)
        case .text(let s):
            // With its byte length, so that a NUL inside the text is kept (with -1 SQLite
            // would stop at it and silently store less).
            var text = s
            rc = text.withUTF8 { bytes in
                bytes.withMemoryRebound(to: CChar.self) { chars in
                    guard let base = chars.baseAddress else { return sqlite3_bind_text(handle, index, "", 0, faultline_sqlite3_transient()) }
                    return sqlite3_bind_text(handle, index, base, Int32(chars.count), faultline_sqlite3_transient())
                }
            }
        case .blob(let d):
            rc = d.withUnsafeBytes { sqlite3_bind_blob(handle, index, $0.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32($0.count), faultline_sqlite3_transient()) }
        }
        guard rc == SQLITE_OK else {
            throw SQLiteError(code: rc, message: String(cString: sqlite3_errmsg(connection.handle)), sql: sql, path: connection.path)
        }
    }

    /// Advances to the next row; returns false when there are no more.
    public func step() throws -> Bool {
        if !started {
            started = true
            rowsStepped = 0
            elapsed = 0
            finishedReported = false
            timed = connection.isTraced
            if timed { connection.emit(.statement(sql: sql, arguments: onlyInteger.map { [.integer($0)] } ?? Array(arguments))) }
        }
        let rc: Int32
        if timed {
            let start = DispatchTime.now().uptimeNanoseconds
            rc = sqlite3_step(handle)
            elapsed &+= DispatchTime.now().uptimeNanoseconds &- start
        } else {
            rc = sqlite3_step(handle)
        }
        switch rc {
        case SQLITE_ROW:
            rowsStepped += 1
            return true
        case SQLITE_DONE:
            reportFinished()
            return false
        default:
            let error = SQLiteError(code: rc, message: String(cString: sqlite3_errmsg(connection.handle)), sql: sql, path: connection.path)
            reportFinished()
            sqlite3_reset(handle)
            started = false
            throw error
        }
    }

    private func reportFinished() {
        guard started, !finishedReported else { return }
        finishedReported = true
        if connection.isTraced {
            connection.emit(.finished(sql: sql, seconds: Double(elapsed) / 1e9, rows: rowsStepped))
        }
    }

    /// Seconds spent stepping since the statement started (0 when the connection was not
    /// traced at its start: untraced runs are not timed).
    public var elapsedSeconds: Double { Double(elapsed) / 1e9 }

    /// Steps through every row, calling `body` on each, then resets the statement — also
    /// when stepping or `body` throws, so a cached statement is never left mid-query. Returns
    /// the time SQLite spent (``elapsedSeconds``, read before the reset).
    public func forEachRow(_ body: () throws -> Void) throws -> Double {
        do {
            while try step() { try body() }
        } catch {
            reset()
            throw error
        }
        let seconds = elapsedSeconds
        reset()
        return seconds
    }

    /// Steps to the first row only and calls `body` on it, then resets the statement (also
    /// when stepping or `body` throws): for a query of at most one row (by primary key),
    /// without the step that would find no second row. Returns `body`'s result (nil without a
    /// row) and the time SQLite spent, as ``forEachRow(_:)``.
    @inlinable
    public func firstRow<T>(_ body: () throws -> T) throws -> (value: T?, seconds: Double) {
        var value: T?
        do {
            if try step() { value = try body() }
        } catch {
            reset()
            throw error
        }
        let seconds = elapsedSeconds
        reset()
        return (value, seconds)
    }

    /// Resets the statement so it can run again, and clears its bindings.
    public func reset() {
        reportFinished()
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        arguments = []
        onlyInteger = nil
        started = false
    }

    /// Runs the statement to completion, ignoring any rows.
    public func run() throws {
        while try step() {}
        reset()
    }

    /// Runs the statement to completion, ignoring any rows, and makes it ready to run again
    /// with its bindings kept: for a run of rows that each bind every parameter anew (a
    /// save's inserts and updates), where clearing them after each row only to bind them
    /// again cost SQLite a pass over the parameters. ``reset()`` after the last row clears
    /// them and lets go of the values bound.
    public func runKeepingBindings() throws {
        while try step() {}
        reportFinished()
        sqlite3_reset(handle)
        started = false
    }

    /// Steps through every row and returns them.
    public func fetchAll() throws -> [Row] {
        var rows: [Row] = []
        while try step() {
            rows.append(currentRow())
        }
        reset()
        return rows
    }

    // MARK: Columns of the current row

    /// The number of result columns.
    public var columnCount: Int { columnNames.count }

    /// The current row's value in a column.
    public func value(at index: Int) -> SQLValue { column(at: index).sqlValue }

    /// A column of the current row, looked up once: its storage class and its value are then
    /// read without SQLite finding the column again (what ``storageClass(at:)`` followed by
    /// ``int64(at:)`` or ``text(at:)`` does twice or three times). Valid until the statement
    /// steps or resets.
    @inlinable
    public func column(at index: Int) -> ColumnValue {
        ColumnValue(sqlite3_column_value(handle, Int32(index)))
    }

    /// The current row's columns, for a row read whole: each column found by SQLite once per
    /// row, not once per column read.
    ///
    /// Every `sqlite3_column_*` call finds its column again and checks the call
    /// (`columnMem` and `columnMallocFailure` in SQLite's source: the connection's mutex
    /// entered and left, even a connection without one, and the error state looked at) —
    /// about a third of what reading a value costs, nine times a row for a fetch of six
    /// attributes. The values of a row are SQLite's result registers, one array (the
    /// `OP_ResultRow` opcode hands out registers `p1` to `p1 + n − 1`): the address of the first
    /// column, asked of SQLite for each row, and the spacing of the registers, checked once
    /// per statement against what `sqlite3_column_value` returns for every column, give the
    /// others. The number of columns is the row's (`sqlite3_data_count`: 0 without a row, the
    /// new count after SQLite prepared the statement again for a changed schema). Should a
    /// row's columns not be laid out so (a library that keeps them otherwise), each column is
    /// asked for, as ``column(at:)`` does.
    @inlinable
    public func currentColumns() -> RowColumns {
        let count = Int(sqlite3_data_count(handle))
        // No row (nothing to find; asking for a column would set SQLite's error), or one
        // column (no spacing needed, none learnt): each column asked for.
        if count < 2 { return RowColumns(handle: handle, first: nil, spacing: 0, count: count) }
        let first = sqlite3_column_value(handle, 0)
        if columnSpacing > 0 { return RowColumns(handle: handle, first: UnsafeRawPointer(first), spacing: columnSpacing, count: count) }
        return firstColumns(first, count: count)
    }

    /// ``currentColumns()`` before the spacing of the registers is known: worked out from
    /// this row of `count` (at least 2) columns, checked against every column (-1 when they
    /// are not evenly spaced: then every row asks for each column).
    @usableFromInline
    func firstColumns(_ first: OpaquePointer?, count: Int) -> RowColumns {
        if columnSpacing == 0 {
            columnSpacing = -1
            if let first, let second = sqlite3_column_value(handle, 1) {
                let spacing = UnsafeRawPointer(first).distance(to: UnsafeRawPointer(second))
                // A register is far bigger than a word; a spacing of less is not one.
                var evenlySpaced = spacing >= 2 * MemoryLayout<Int>.size
                for index in 2..<count where evenlySpaced {
                    evenlySpaced = sqlite3_column_value(handle, Int32(index)).map(UnsafeRawPointer.init) == UnsafeRawPointer(first) + index * spacing
                }
                if evenlySpaced { columnSpacing = spacing }
            }
        }
        return RowColumns(handle: handle, first: columnSpacing > 0 ? UnsafeRawPointer(first) : nil, spacing: max(columnSpacing, 0), count: count)
    }

    /// Whether the current row's column is NULL.
    @inlinable
    public func isNull(at index: Int) -> Bool { sqlite3_column_type(handle, Int32(index)) == SQLITE_NULL }

    /// The storage class of the current row's column: `SQLITE_INTEGER`, `SQLITE_FLOAT`,
    /// `SQLITE_TEXT`, `SQLITE_BLOB` or `SQLITE_NULL`.
    @inlinable
    public func storageClass(at index: Int) -> Int32 { sqlite3_column_type(handle, Int32(index)) }

    /// The current row's column as a string (its text; empty for NULL).
    public func text(at index: Int) -> String { column(at: index).text }

    /// The current row's column as an integer (0 for NULL).
    @inlinable
    public func int64(at index: Int) -> Int64 { sqlite3_column_int64(handle, Int32(index)) }

    /// The current row's column as a double (0 for NULL).
    @inlinable
    public func double(at index: Int) -> Double { sqlite3_column_double(handle, Int32(index)) }

    /// The current row's values.
    public func currentRow() -> Row {
        Row(values: (0..<columnCount).map { value(at: $0) }, columnNames: columnNames)
    }
}

/// One result row: values by column index or name.
public struct Row: Sendable, Hashable {
    /// The values, in column order.
    public var values: [SQLValue]
    /// The column names.
    public var columnNames: [String]

    /// Creates a row.
    public init(values: [SQLValue], columnNames: [String]) {
        self.values = values
        self.columnNames = columnNames
    }

    /// The value at a column index.
    public subscript(index: Int) -> SQLValue { values[index] }

    /// The value of the first column with this name, or NULL.
    public subscript(name: String) -> SQLValue {
        guard let i = columnNames.firstIndex(of: name) else { return .null }
        return values[i]
    }
}

/// The columns of a statement's current row (``Statement/currentColumns()``). Valid until the
/// statement steps or resets; used on the statement's thread.
public struct RowColumns {
    @usableFromInline let handle: OpaquePointer
    /// The first column's value, when the others follow it `spacing` bytes apart; nil: each
    /// column asked of SQLite.
    @usableFromInline let first: UnsafeRawPointer?
    @usableFromInline let spacing: Int
    /// The number of columns.
    public let count: Int

    @inlinable
    init(handle: OpaquePointer, first: UnsafeRawPointer?, spacing: Int, count: Int) {
        self.handle = handle
        self.first = first
        self.spacing = spacing
        self.count = count
    }

    /// The column at `index`: NULL past the row's columns (or without a row), as
    /// `sqlite3_column_value` gives.
    @inlinable
    public subscript(index: Int) -> ColumnValue {
        if let first, UInt(bitPattern: index) < UInt(bitPattern: count) {
            let value = OpaquePointer(first + index &* spacing)
            // Every debug build's fetch checks the register found against SQLite's own answer.
            assert(value == sqlite3_column_value(handle, Int32(index)), "column \(index) is not where its row's registers put it")
            return ColumnValue(value)
        }
        return ColumnValue(sqlite3_column_value(handle, Int32(clamping: index)))
    }
}

/// One column of a statement's current row (``Statement/column(at:)``): SQLite's value for it,
/// read in place. Valid until the statement steps or resets; used on the statement's thread.
public struct ColumnValue {
    @usableFromInline let value: OpaquePointer?

    @inlinable
    init(_ value: OpaquePointer?) { self.value = value }

    /// The storage class: `SQLITE_INTEGER`, `SQLITE_FLOAT`, `SQLITE_TEXT`, `SQLITE_BLOB` or
    /// `SQLITE_NULL` (see ``SQLValue/integerStorageClass`` and the others).
    @inlinable
    public var storageClass: Int32 { sqlite3_value_type(value) }

    /// The value as an integer (0 for NULL; converted from another class as SQLite does).
    @inlinable
    public var int64: Int64 { sqlite3_value_int64(value) }

    /// The value as a double (0 for NULL; converted from another class as SQLite does).
    @inlinable
    public var double: Double { sqlite3_value_double(value) }

    /// The value as a string (its text; empty for NULL).
    public var text: String {
        guard let text = sqlite3_value_text(value) else { return "" }
        return String(decoding: UnsafeRawBufferPointer(start: text, count: Int(sqlite3_value_bytes(value))), as: UTF8.self)
    }

    /// The value as a ``SQLValue``.
    public var sqlValue: SQLValue { SQLValue(sqliteValue: value) }
}
