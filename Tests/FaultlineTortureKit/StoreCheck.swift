import Faultline
import FaultlineSQL
import Foundation

/// What a store holds, in a canonical text, and what is wrong with it: the checks the
/// crash-consistency and concurrent-writer tests make after every run.
public struct StoreCheck {
    /// Every table's every row (schema included), one line each, ordered by table and primary
    /// key: two stores with the same rows give the same text. External-data references
    /// (`0x02` + UUID) are written as the length and hash of the file they name (file names
    /// are fresh UUIDs in every run); `ATRANSACTION.ZTIMESTAMP` is masked (the clock).
    public var dump: String
    /// `PRAGMA integrity_check`'s answer (`ok`).
    public var integrity: String
    /// External references whose file is missing (`TABLE.COLUMN pk: NAME`).
    public var missingFiles: [String]
    /// Files in the external-data folder that no row names (allowed: a crash between writing
    /// a file and `COMMIT`, or between `COMMIT` and removing a replaced file, leaves them).
    public var orphanFiles: [String]
    /// Foreign keys naming no row of the destination entity (see ``danglingKeys(_:mapping:)``).
    public var danglingKeys: [String]
    /// Entities whose `Z_PRIMARYKEY.Z_MAX` is below the largest `Z_PK` of their rows.
    public var maxKeyErrors: [String]

    /// Every problem found (empty when the store is sound).
    public var problems: [String] {
        (integrity == "ok" ? [] : ["integrity_check: \(integrity)"])
            + missingFiles.map { "missing external file: \($0)" }
            + danglingKeys.map { "dangling key: \($0)" }
            + maxKeyErrors.map { "Z_MAX: \($0)" }
    }

    /// Opens the store at `url` for writing (as an app would: a hot journal or a `-wal` left
    /// by a killed writer is recovered) and checks it against `model`'s mapping.
    public init(storeAt url: URL, model: ManagedObjectModel) throws {
        let db = try Connection(path: url.path, mode: .readWrite)
        integrity = try db.query("PRAGMA integrity_check").map { $0[0].string ?? "?" }.joined(separator: "; ")
        let folder = ValueCoding.externalDataFolder(forStoreAt: url)
        var named: Set<String> = []
        var missing: [String] = []
        var lines: [String] = []
        let tables = try db.query("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
        for schema in try db.query("SELECT type, name, sql FROM sqlite_master ORDER BY type, name") {
            lines.append("schema \(schema[0].string ?? "") \(schema[1].string ?? ""): \(schema[2].string ?? "")")
        }
        for table in tables {
            guard let name = table[0].string else { continue }
            let columns = try db.columns(ofTable: name).map(\.name)
            let order = columns.contains("Z_PK") ? "Z_PK" : columns.map { "\"\($0)\"" }.joined(separator: ", ")
            for row in try db.query("SELECT * FROM \"\(name)\" ORDER BY \(order)") {
                var fields: [String] = []
                for (column, value) in zip(columns, row.values) {
                    if name == "ATRANSACTION" && column == "ZTIMESTAMP" && !value.isNull {
                        fields.append("\(column)=<time>")
                    } else if let file = ValueCoding.externalReferenceName(value) {
                        named.insert(file)
                        if let data = FileManager.default.contents(atPath: folder.appendingPathComponent(file).path) {
                            fields.append("\(column)=<file \(data.count) bytes \(Self.hash(data))>")
                        } else {
                            missing.append("\(name).\(column) \(row["Z_PK"]): \(file)")
                            fields.append("\(column)=<missing file>")
                        }
                    } else {
                        fields.append("\(column)=\(Self.render(value))")
                    }
                }
                lines.append("\(name) " + fields.joined(separator: " "))
            }
        }
        dump = lines.joined(separator: "\n")
        missingFiles = missing
        let present = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted()
        orphanFiles = present.filter { !named.contains($0) }
        let mapping = SchemaMapping(model: model)
        danglingKeys = try Self.danglingKeys(db, mapping: mapping)
        maxKeyErrors = try Self.maxKeyErrors(db, mapping: mapping)
    }

    /// Core Data's foreign keys that name no row, `PRAGMA foreign_key_check`-style (Core
    /// Data declares no SQLite foreign keys, so SQLite cannot check them): every to-one
    /// column (`Z<REL>`, and its `Z<n><REL>` entity column when it has one), every
    /// many-to-many join-table column and every hidden foreign key must name a row of the
    /// destination's table whose `Z_ENT` is the destination entity or one of its
    /// sub-entities. Returns one line per offending column with the count and a few keys.
    public static func danglingKeys(_ db: Connection, mapping: SchemaMapping) throws -> [String] {
        var problems: [String] = []
        func check(table: String, column: String, entityColumn: String?, destination: String) throws {
            guard let target = mapping.entity(destination) else { return }
            let range = target.subtreeNumbers
            let sql = "SELECT \(column) FROM \(table) WHERE \(column) IS NOT NULL AND \(column) NOT IN "
                + "(SELECT Z_PK FROM \(target.table) WHERE Z_ENT BETWEEN ? AND ?) ORDER BY 1"
            let bad = try db.query(sql, [.integer(Int64(range.lowerBound)), .integer(Int64(range.upperBound))]).map { $0[0].description }
            if !bad.isEmpty {
                problems.append("\(table).\(column) → \(destination): \(bad.count) key(s) with no row: \(bad.prefix(8).joined(separator: ", "))")
            }
            if let entityColumn {
                let wrong = try db.query(
                    "SELECT count(*) FROM \(table) WHERE \(column) IS NOT NULL AND (\(entityColumn) IS NULL OR \(entityColumn) NOT BETWEEN ? AND ?)",
                    [.integer(Int64(range.lowerBound)), .integer(Int64(range.upperBound))])
                if let n = wrong.first?[0].int64, n > 0 { problems.append("\(table).\(entityColumn): \(n) wrong entity number(s)") }
            }
        }
        for name in mapping.entities.keys.sorted() {
            guard let entity = mapping.entity(name), let description = mapping.model.entity(named: name) else { continue }
            for relationship in description.relationships where relationship.isToOne && !relationship.isTransient {
                // Inherited relationships are checked on the entity that declares them.
                guard let columns = entity.toOneColumns[relationship.name] else { continue }
                try check(table: entity.table, column: columns.foreignKey, entityColumn: columns.entityColumn, destination: relationship.destinationEntityName)
            }
            for (relationship, hidden) in entity.hiddenForeignKeys.sorted(by: { $0.key < $1.key }) {
                try check(table: hidden.table, column: hidden.column, entityColumn: nil, destination: name)
                _ = relationship
            }
        }
        for join in mapping.joinTables.sorted(by: { $0.name < $1.name }) {
            try check(table: join.name, column: join.sourceColumn, entityColumn: nil, destination: join.sourceEntity)
            try check(table: join.name, column: join.destinationColumn, entityColumn: nil, destination: join.destinationEntity)
        }
        return problems
    }

    /// Entities (inheritance roots) whose `Z_MAX` is below the largest key in their table: the
    /// next insert would reuse a key.
    public static func maxKeyErrors(_ db: Connection, mapping: SchemaMapping) throws -> [String] {
        var problems: [String] = []
        for table in mapping.tables {
            guard let root = mapping.entity(table.rootEntity) else { continue }
            let max = try db.scalar("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = ?", [.integer(Int64(root.entityNumber))])?.int64 ?? 0
            let largest = try db.scalar("SELECT max(Z_PK) FROM \(table.name)")?.int64 ?? 0
            if largest > max { problems.append("\(table.rootEntity): Z_MAX \(max) < max(Z_PK) \(largest)") }
        }
        for (table, entity) in [("ACHANGE", 16001), ("ATRANSACTION", 16002), ("ATRANSACTIONSTRING", 16003)] where try db.tableExists(table) {
            let max = try db.scalar("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = ?", [.integer(Int64(entity))])?.int64 ?? 0
            let largest = try db.scalar("SELECT max(Z_PK) FROM \(table)")?.int64 ?? 0
            if largest > max { problems.append("\(table): Z_MAX \(max) < max(Z_PK) \(largest)") }
        }
        return problems
    }

    static func render(_ value: SQLValue) -> String {
        switch value {
        case .null: return "NULL"
        case .integer(let i): return String(i)
        case .real(let d): return String(d.bitPattern, radix: 16)
        case .text(let s): return s.debugDescription
        case .blob(let d): return d.count <= 64 ? "x'" + d.map { String(format: "%02x", $0) }.joined() + "'" : "<blob \(d.count) bytes \(hash(d))>"
        }
    }

    /// FNV-1a, 64 bits, in hex: enough to tell two files apart in a test.
    static func hash(_ data: Data) -> String {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in data { h = (h ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        return String(h, radix: 16)
    }
}

/// The first line where two dumps differ, for failure messages.
public func firstDifference(_ a: String, _ b: String) -> String {
    let x = a.split(separator: "\n", omittingEmptySubsequences: false)
    let y = b.split(separator: "\n", omittingEmptySubsequences: false)
    for i in 0..<max(x.count, y.count) {
        let l = i < x.count ? String(x[i]) : "<end>"
        let r = i < y.count ? String(y[i]) : "<end>"
        if l != r { return "line \(i + 1):\n  \(l.prefix(300))\n  \(r.prefix(300))" }
    }
    return "no difference"
}
