import FaultlineSQL
import Foundation

/// Formats a connection's trace events as Core Data's `-com.apple.CoreData.SQLDebug` log.
///
/// Level 1 prints SQL and timings (`CoreData: sql: …`, `CoreData: annotation: …`); level 2
/// adds bound values (`CoreData: details: SQLite bind[0] = "Maui"`) and a line per fetch
/// naming its entity and row count; level 3 adds the fetched objects' values; level 4 adds
/// SQLite's query plan of each statement. Level 0 prints nothing.
///
/// ```swift
/// let log = SQLLog(level: 1) { print($0) }
/// log.attach(to: store.connection)
/// ```
public final class SQLLog {
    /// The SQLDebug level, 0 to 4.
    public var level: Int
    /// Whether to wrap timings in ANSI red like `-com.apple.CoreData.SyntaxColoredLogging`.
    public var colored = false
    private let write: (String) -> Void
    private weak var connection: Connection?

    /// Creates a log that hands each finished line to `write`.
    public init(level: Int, write: @escaping (String) -> Void) {
        self.level = level
        self.write = write
    }

    /// Starts logging a connection's events.
    @discardableResult
    package func attach(to connection: Connection) -> Int {
        self.connection = connection
        return connection.addTraceObserver { [weak self] event in self?.handle(event) }
    }

    /// Formats one event.
    public func handle(_ event: TraceEvent) {
        guard level > 0 else { return }
        switch event {
        case .statement(let sql, let arguments):
            write("CoreData: sql: \(sql)")
            if level >= 2 {
                for (i, value) in arguments.enumerated() {
                    write("CoreData: details: SQLite bind[\(i)] = \(value)")
                }
            }
            if level >= 4, let connection, !sql.hasPrefix("EXPLAIN") {
                writePlan(of: sql, arguments, on: connection)
            }
        case .finished:
            break
        case .message(let category, let text):
            if category == "details" && level < 2 { return }
            write("CoreData: \(category): \(colored ? colorTimings(text) : text)")
        case .detail(let levels, let category, let text):
            if levels.contains(level) { write("CoreData: \(category): \(text())") }
        }
    }

    /// `CoreData: details: SQLite: EXPLAIN QUERY PLAN <sql>` and one line per plan row.
    private func writePlan(of sql: String, _ arguments: [SQLValue], on connection: Connection) {
        write("CoreData: details: SQLite: EXPLAIN QUERY PLAN \(sql)")
        let rows: [Row]? = try? connection.untraced {
            let statement = try connection.prepare("EXPLAIN QUERY PLAN " + sql)
            try statement.bind(arguments)
            return try statement.fetchAll()
        }
        for row in rows ?? [] {
            let cells = row.values.map { value -> String in
                switch value {
                case .integer(let i): String(i)
                case .text(let s): s
                default: value.description
                }
            }
            write("CoreData: details: " + cells.joined(separator: " "))
        }
    }

    /// Wraps `0.0001s` timings in ANSI red, as Core Data's SyntaxColoredLogging does.
    private func colorTimings(_ text: String) -> String {
        guard let regex = try? NSRegularExpression(pattern: #"(\d+\.\d{4})s"#) else { return text }
        return regex.stringByReplacingMatches(in: text, range: NSRange(text.startIndex..., in: text), withTemplate: "\u{1B}[31m$1\u{1B}[0ms")
    }
}
