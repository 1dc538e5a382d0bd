import CFaultlineSQLite
import Foundation

/// An error reported by SQLite, with the statement that caused it.
public struct SQLiteError: Error, Sendable, CustomStringConvertible, Equatable {
    /// The SQLite result code (`SQLITE_BUSY` = 5, `SQLITE_CONSTRAINT` = 19, …).
    public var code: Int32
    /// SQLite's message.
    public var message: String
    /// The SQL text involved, if any.
    public var sql: String?
    /// The database file involved, if any.
    public var path: String?

    /// Creates an error.
    public init(code: Int32, message: String, sql: String? = nil, path: String? = nil) {
        self.code = code
        self.message = message
        self.sql = sql
        self.path = path
    }

    /// The primary result code (the low 8 bits of an extended code).
    public var primaryCode: Int32 { code & 0xFF }

    /// Whether an authorizer refused the statement (`SQLITE_AUTH`).
    public var isDeniedByAuthorizer: Bool { primaryCode == SQLITE_AUTH }

    /// Whether the database was busy or locked.
    public var isBusy: Bool { primaryCode == SQLITE_BUSY || primaryCode == SQLITE_LOCKED }

    public var description: String {
        var text = "SQLite error \(code): \(message)"
        if let path { text += " (database \(path))" }
        if let sql { text += " while executing: \(sql)" }
        return text
    }
}
