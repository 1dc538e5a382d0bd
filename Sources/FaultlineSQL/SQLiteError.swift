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
        var text = "SQLite error \(code)"
        if let (name, meaning) = Self.fileErrors[code] ?? Self.fileErrors[primaryCode] {
            text += " (\(name)): \(message): \(meaning)"
        } else {
            text += ": \(message)"
        }
        if let path { text += " (database \(path))" }
        if let sql { text += " while executing: \(sql)" }
        return text
    }

    /// The file-system errors, whose SQLite messages ("disk I/O error") do not say which
    /// operation failed: the code's name and what failed, by (extended) code.
    static let fileErrors: [Int32: (String, String)] = [
        SQLITE_FULL: ("SQLITE_FULL", "the disk is full"),
        SQLITE_CANTOPEN: ("SQLITE_CANTOPEN", "a file could not be opened or created (the database, its journal or its -wal)"),
        SQLITE_PROTOCOL: ("SQLITE_PROTOCOL", "the WAL index locks stayed busy"),
        SQLITE_IOERR: ("SQLITE_IOERR", "a file operation failed"),
        SQLITE_IOERR | (1 << 8): ("SQLITE_IOERR_READ", "reading a file failed"),
        SQLITE_IOERR | (2 << 8): ("SQLITE_IOERR_SHORT_READ", "a file was shorter than expected"),
        SQLITE_IOERR | (3 << 8): ("SQLITE_IOERR_WRITE", "writing a file failed"),
        SQLITE_IOERR | (4 << 8): ("SQLITE_IOERR_FSYNC", "flushing a file to disk failed"),
        SQLITE_IOERR | (5 << 8): ("SQLITE_IOERR_DIR_FSYNC", "flushing a directory to disk failed"),
        SQLITE_IOERR | (6 << 8): ("SQLITE_IOERR_TRUNCATE", "truncating a file failed"),
        SQLITE_IOERR | (7 << 8): ("SQLITE_IOERR_FSTAT", "reading a file's size failed"),
        SQLITE_IOERR | (8 << 8): ("SQLITE_IOERR_UNLOCK", "releasing a file lock failed"),
        SQLITE_IOERR | (9 << 8): ("SQLITE_IOERR_RDLOCK", "taking a read lock failed"),
        SQLITE_IOERR | (10 << 8): ("SQLITE_IOERR_DELETE", "deleting the journal failed"),
        SQLITE_IOERR | (13 << 8): ("SQLITE_IOERR_ACCESS", "checking for a journal or -wal file failed"),
        SQLITE_IOERR | (14 << 8): ("SQLITE_IOERR_CHECKRESERVEDLOCK", "checking a file lock failed"),
        SQLITE_IOERR | (15 << 8): ("SQLITE_IOERR_LOCK", "taking a file lock failed"),
        SQLITE_IOERR | (16 << 8): ("SQLITE_IOERR_CLOSE", "closing a file failed"),
        SQLITE_IOERR | (18 << 8): ("SQLITE_IOERR_SHMOPEN", "opening the -shm file failed"),
        SQLITE_IOERR | (19 << 8): ("SQLITE_IOERR_SHMSIZE", "growing the -shm file failed"),
        SQLITE_IOERR | (20 << 8): ("SQLITE_IOERR_SHMLOCK", "locking the -shm file failed"),
        SQLITE_IOERR | (21 << 8): ("SQLITE_IOERR_SHMMAP", "mapping the -shm file failed"),
        SQLITE_IOERR | (22 << 8): ("SQLITE_IOERR_SEEK", "seeking in a file failed"),
        SQLITE_IOERR | (24 << 8): ("SQLITE_IOERR_MMAP", "memory-mapping a file failed"),
    ]
}
