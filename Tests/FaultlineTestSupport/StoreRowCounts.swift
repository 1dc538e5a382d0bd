import FaultlineSQL
import Foundation

/// Rows per entity counted straight from a store's SQLite tables, without the model, the
/// schema mapping or the object graph: an independent check of what a save or a migration
/// wrote.
///
/// Entities and their parents come from `Z_PRIMARYKEY` (`Z_ENT`, `Z_NAME`, `Z_SUPER`); each
/// inheritance root's table is Core Data's `Z` + the root's name in ASCII capitals; rows are
/// counted with `SELECT Z_ENT, count(*) … GROUP BY Z_ENT`.
///
/// Open only stores a test made: the count opens the file read-only, but never point it at a
/// corpus original (copy it first, see ``Corpus/copyStore(_:from:)``).
public enum StoreRowCounts {
    /// A store whose tables do not look like Core Data's.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        /// What is wrong, naming the table or entity.
        public var description: String
    }

    /// Rows per entity name (the entity's own rows, not its sub-entities'), entities with
    /// no rows included as 0.
    public static func read(storeAt url: URL) throws -> [String: Int] {
        let connection = try Connection(path: url.path, mode: .readOnly)
        var names: [Int64: String] = [:]
        var parents: [Int64: Int64] = [:]
        for row in try connection.query("SELECT Z_ENT, Z_NAME, Z_SUPER FROM Z_PRIMARYKEY") {
            guard let number = row[0].int64, let name = row[1].string else { continue }
            // Persistent history's own entities (16001…) have no table of the usual name.
            guard number < 16000 else { continue }
            names[number] = name
            parents[number] = row[2].int64 ?? 0
        }
        var roots: Set<Int64> = []
        for number in names.keys {
            var current = number
            var depth = 0
            while let parent = parents[current], parent != 0 {
                current = parent
                depth += 1
                guard depth <= 64 else { throw Failure(description: "Z_PRIMARYKEY: entity \(number)'s parents form a loop") }
            }
            roots.insert(current)
        }
        let tables = try connection.tableNames()
        var counts: [String: Int] = [:]
        for name in names.values { counts[name] = 0 }
        for root in roots.sorted() {
            guard let rootName = names[root] else { continue }
            var table = "Z"
            for scalar in rootName.unicodeScalars {
                table.unicodeScalars.append((0x61...0x7A).contains(scalar.value) ? Unicode.Scalar(UInt8(scalar.value - 0x20)) : scalar)
            }
            guard tables.contains(table) else { throw Failure(description: "entity \(rootName) has no table \(table)") }
            let quoted = "\"" + table.replacingOccurrences(of: "\"", with: "\"\"") + "\""
            for row in try connection.query("SELECT Z_ENT, count(*) FROM \(quoted) GROUP BY Z_ENT") {
                guard let number = row[0].int64, let count = row[1].int64 else { continue }
                guard let name = names[number] else {
                    throw Failure(description: "\(table) has \(count) rows of entity number \(number), which Z_PRIMARYKEY does not list")
                }
                counts[name] = Int(count)
            }
        }
        return counts
    }
}
