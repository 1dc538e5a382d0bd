import FaultlineSQL
import Foundation

/// Formats a connection's trace events as Core Data's `-com.apple.CoreData.SQLDebug` log.
///
/// Level 1 prints SQL and timings (`CoreData: sql: …`, `CoreData: annotation: …`), level 2 adds
/// bound values (`CoreData: details: SQLite bind[0] = "Maui"`); level 0 prints nothing.
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

    /// Creates a log that hands each finished line to `write`.
    public init(level: Int, write: @escaping (String) -> Void) {
        self.level = level
        self.write = write
    }

    /// Starts logging a connection's events.
    @discardableResult
    public func attach(to connection: Connection) -> Int {
        connection.addTraceObserver { [weak self] event in self?.handle(event) }
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
        case .finished:
            break
        case .message(let category, let text):
            if category == "details" && level < 2 { return }
            write("CoreData: \(category): \(text)")
        }
    }
}
