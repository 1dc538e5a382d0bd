import FaultlineSQL

// The statements and messages tests see through a connection's trace observer.

/// Collects the statements a connection runs (the golden-SQL harness).
final class SQLStatements: @unchecked Sendable {
    private(set) var sql: [String] = []
    private(set) var arguments: [[SQLValue]] = []

    func append(_ sql: String, _ arguments: [SQLValue]) {
        self.sql.append(sql)
        self.arguments.append(arguments)
    }

    /// Forgets what was recorded so far.
    func removeAll() {
        sql.removeAll()
        arguments.removeAll()
    }
}

/// Statements a test saw, with their arguments.
final class Recorder: @unchecked Sendable {
    private(set) var sql: [String] = []
    private(set) var arguments: [[SQLValue]] = []

    func append(_ statement: String, _ values: [SQLValue]) {
        sql.append(statement)
        arguments.append(values)
    }

    func clear() {
        sql.removeAll()
        arguments.removeAll()
    }
}

/// Collects trace messages (annotations).
final class Messages: @unchecked Sendable {
    private(set) var lines: [String] = []
    func append(_ line: String) { lines.append(line) }
}
