import Faultline
import FaultlineSQL
import FaultlineModel
import Foundation

/// Counts what one shell command made the object graph do — statements, rows, SQL time and
/// faults fired — and words the summary line and the fault-storm warning.
///
/// It reads the same trace stream as the SQL log (the connection's observers) plus the
/// context's fault events, so it sees exactly what was logged.
final class CommandStatistics {
    /// Totals for one command (or the whole session).
    struct Totals {
        var statements = 0
        var rows = 0
        var sqlSeconds = 0.0
        var seconds = 0.0
        var faults: [FaultEvent] = []

        mutating func add(_ other: Totals) {
            statements += other.statements
            rows += other.rows
            sqlSeconds += other.sqlSeconds
            seconds += other.seconds
            faults += other.faults
        }
    }

    /// The command under way.
    private(set) var current = Totals()
    /// The last finished command.
    private(set) var last = Totals()
    /// Every command of the session.
    private(set) var session = Totals()
    /// How many faults of one shape a command may fire before it is called a storm.
    var stormThreshold = 10
    private var started: UInt64 = 0

    /// Starts counting a command.
    func begin() {
        current = Totals()
        started = DispatchTime.now().uptimeNanoseconds
    }

    /// Ends the command; returns its totals.
    @discardableResult
    func end() -> Totals {
        current.seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        last = current
        session.add(current)
        return current
    }

    /// Feeds a connection trace event.
    func observe(_ event: TraceEvent) {
        switch event {
        case .statement: current.statements += 1
        case .finished(_, let seconds, let rows):
            current.rows += rows
            current.sqlSeconds += seconds
        case .message, .detail: break
        }
    }

    /// Feeds a fault event.
    func observe(_ fault: FaultEvent) { current.faults.append(fault) }

    /// `faultline: 4 statements, 1.2 ms, 12 rows, 3 faults fired`.
    static func summary(_ totals: Totals) -> String {
        var parts = [
            "\(totals.statements) \(totals.statements == 1 ? "statement" : "statements")",
            String(format: "%.1f ms", totals.seconds * 1000),
            "\(totals.rows) \(totals.rows == 1 ? "row" : "rows")",
        ]
        // Objects (one at a time or a batch's) and to-many relationships are counted apart:
        // they are different problems with different fixes.
        let toMany = totals.faults.filter { $0.kind == .toMany }.count
        let objects = totals.faults.count - toMany
        var fired: [String] = []
        if objects > 0 { fired.append("\(objects) object \(objects == 1 ? "fault" : "faults")") }
        if toMany > 0 { fired.append("\(toMany) to-many \(toMany == 1 ? "fault" : "faults")") }
        if !fired.isEmpty { parts.append(fired.joined(separator: ", ") + " fired") }
        return "faultline: " + parts.joined(separator: ", ")
    }

    /// The entity the last fetch of the session started from: prefetch advice is a key path
    /// from it.
    var fetchedEntity: EntityDescription?
    /// The model, to find and check those key paths.
    var model: ManagedObjectModel?

    /// The key path from ``fetchedEntity`` that ends with `relationship` of `entityName` (the
    /// shortest, through relationships only), checked to be one `prefetch` accepts; nil when
    /// there is none within six steps.
    func prefetchKeyPath(to relationship: String, of entityName: String) -> String? {
        guard let model, let root = fetchedEntity else { return nil }
        // Breadth-first over the model's relationships: entity name → the path that reaches it.
        var paths: [String: [String]] = [root.name: []]
        var frontier = [root.name]
        for _ in 0..<6 where paths[entityName] == nil && !frontier.isEmpty {
            var next: [String] = []
            for name in frontier {
                guard let entity = model.entity(named: name) else { continue }
                for r in entity.relationships.sorted(by: { $0.name < $1.name }) where paths[r.destinationEntityName] == nil {
                    paths[r.destinationEntityName] = (paths[name] ?? []) + [r.name]
                    next.append(r.destinationEntityName)
                }
            }
            frontier = next
        }
        guard let path = paths[entityName].map({ $0 + [relationship] }) else { return nil }
        // Each step must be a relationship of the entity before it.
        var entity: EntityDescription? = root
        for step in path {
            guard let r = entity?.relationship(named: step) else { return nil }
            entity = model.entity(named: r.destinationEntityName)
        }
        return path.joined(separator: ".")
    }

    /// One warning per relationship through which more than ``stormThreshold`` faults fired
    /// one at a time, naming it and the fix; objects fetched as faults and fired one by one
    /// are grouped by entity.
    func stormWarnings(_ totals: Totals) -> [String] {
        var counts: [String: (fault: FaultEvent, count: Int)] = [:]
        var order: [String] = []
        for fault in totals.faults where fault.kind != .batch {
            // Object faults and to-many faults through one relationship are separate storms
            // (a count of both under one name would call either a storm too early).
            let key = (fault.origin ?? fault.objectID.entityName) + (fault.kind == .toMany ? " to-many" : " object")
            if counts[key] == nil { order.append(key) }
            counts[key, default: (fault, 0)].count += 1
        }
        return order.compactMap { key in
            guard let (fault, count) = counts[key], count > stormThreshold else { return nil }
            let what = fault.kind == .toMany ? "to-many faults" : "object faults"
            guard let origin = fault.origin else {
                return "faultline: warning: fault storm: \(count) \(fault.objectID.entityName) \(what) fired one at a time, one SELECT each;"
                    + " fetch with 'batch 50' to load them 50 rows per statement"
            }
            let parts = origin.split(separator: ".").map(String.init)
            let warning = "faultline: warning: fault storm: \(count) \(what) fired one at a time through \(origin), one SELECT each"
            guard parts.count == 2, let path = prefetchKeyPath(to: parts[1], of: parts[0]), let root = fetchedEntity else {
                return warning + "; prefetching \(origin) when fetching would load them in one statement"
            }
            return warning + "; fetch \(root.name) with 'prefetch \(path)' to load them in one statement"
        }
    }
}
