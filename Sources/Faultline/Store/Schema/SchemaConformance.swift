import FaultlineModel
import FaultlineSQL
import Foundation

/// Checks that a store's schema is what Core Data expects of a store of a model: the check a
/// migration runs before it commits, and that tests run on migrated stores.
///
/// Columns are found by name (a migrated store may have them in another order than a new
/// one), and everything else is compared with what ``SchemaMapping/createStatements()``
/// makes for the model:
///
/// - the metadata's version hashes are the model's (Core Data's 134100 check passes);
/// - `Z_PRIMARYKEY` has one row per entity with the computed `Z_ENT` and `Z_SUPER`, and each
///   root's `Z_MAX` is at least its table's highest `Z_PK`;
/// - every entity table and join table exists with every column and its declared type, and
///   no other column; every row's `Z_ENT` is an entity of its table;
/// - every index and trigger of the model exists with its text, and entity and join tables
///   have no other index;
/// - with `integrity`, `PRAGMA integrity_check` says `ok`.
///
/// ```swift
/// let problems = try SchemaConformance.problems(storeAt: url, model: model)
/// assert(problems.isEmpty, problems.joined(separator: "\n"))
/// ```
public enum SchemaConformance {
    /// The differences between the store at `url` and a store of `model`, one sentence each;
    /// empty when it conforms. Opens the file read-only and changes no byte of it.
    ///
    /// - Throws: ``PersistentStoreError`` when the store cannot be read.
    public static func problems(storeAt url: URL, model: ManagedObjectModel, integrity: Bool = true) throws -> [String] {
        let path = url.path
        try SQLiteStore.requireRegularFiles(path: path)
        return try SQLiteStore.withReadOnlyConnection(path: path) { try problems(connection: $0, model: model, integrity: integrity) }
    }

    /// The differences between the database of `connection` and a store of `model` (see
    /// ``problems(storeAt:model:integrity:)``).
    public static func problems(connection: Connection, model: ManagedObjectModel, integrity: Bool = true) throws -> [String] {
        do {
            return try check(connection, model: model, integrity: integrity)
        } catch let error as SQLiteError {
            throw PersistentStoreError(.notAStore, "cannot read the store's schema: \(error.message)", path: connection.path)
        }
    }

    private static func check(_ connection: Connection, model: ManagedObjectModel, integrity: Bool) throws -> [String] {
        var problems: [String] = []
        let mapping = SchemaMapping(model: model)
        let path = connection.path

        let (_, _, hashes) = try SQLiteStore.readMetadata(connection, path: path)
        if let hashes {
            let differing = model.entitiesDiffering(fromStoreVersionHashes: hashes)
            if !differing.isEmpty { problems.append("the version hashes of entities \(differing.joined(separator: ", ")) are not the model's") }
        } else {
            problems.append("the metadata has no NSStoreModelVersionHashes")
        }

        // Z_PRIMARYKEY.
        var rows: [String: (number: Int, superNumber: Int, max: Int64)] = [:]
        for row in try connection.query("SELECT Z_ENT, Z_NAME, Z_SUPER, Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT < 16000") {
            guard let number = row[0].int64, let name = row[1].string else { continue }
            rows[name] = (Int(number), Int(row[2].int64 ?? 0), row[3].int64 ?? 0)
        }
        for (name, e) in mapping.entities.sorted(by: { $0.value.entityNumber < $1.value.entityNumber }) {
            guard let row = rows[name] else {
                problems.append("Z_PRIMARYKEY has no row for entity \(name)")
                continue
            }
            if row.number != e.entityNumber || row.superNumber != e.superNumber {
                problems.append("Z_PRIMARYKEY gives entity \(name) Z_ENT \(row.number) and Z_SUPER \(row.superNumber); the model's are \(e.entityNumber) and \(e.superNumber)")
            }
        }
        for name in rows.keys.sorted() where mapping.entities[name] == nil {
            problems.append("Z_PRIMARYKEY has a row for \(name), which the model does not have")
        }

        // Tables and columns.
        let tables = try connection.tableNames()
        for table in mapping.tables {
            guard tables.contains(table.name) else {
                problems.append("table \(table.name) (entity \(table.rootEntity)) is missing")
                continue
            }
            let columns = try connection.columns(ofTable: table.name)
            let declared = Dictionary(columns.map { ($0.name, $0.declaredType) }, uniquingKeysWith: { a, _ in a })
            for column in table.columns {
                guard let type = declared[column.name] else {
                    problems.append("\(table.name) has no column \(column.name)")
                    continue
                }
                let expected = column.sqlType.split(separator: " ").first.map(String.init) ?? column.sqlType
                if type.uppercased() != expected.uppercased() {
                    problems.append("\(table.name).\(column.name) is declared \(type), not \(expected)")
                }
            }
            let expectedNames = Set(table.columns.map(\.name))
            for column in columns where !expectedNames.contains(column.name) {
                problems.append("\(table.name) has column \(column.name), which the model does not have")
            }
            let quoted = SQLName.quoted(table.name)
            let numbers = table.entityNumbers.map(String.init).joined(separator: ", ")
            if let stray = try connection.scalar("SELECT count(*) FROM \(quoted) WHERE Z_ENT IS NULL OR Z_ENT NOT IN (\(numbers))")?.int64, stray > 0 {
                problems.append("\(table.name) has \(stray) rows whose Z_ENT is not one of its entities (\(numbers))")
            }
            if let root = mapping.entities[table.rootEntity], let row = rows[table.rootEntity],
                let highest = try connection.scalar("SELECT MAX(Z_PK) FROM \(quoted)")?.int64, highest > row.max
            {
                problems.append("Z_PRIMARYKEY.Z_MAX of \(root.name) is \(row.max), below the highest Z_PK of \(table.name) (\(highest))")
            }
        }
        for join in mapping.joinTables {
            guard tables.contains(join.name) else {
                problems.append("join table \(join.name) (\(join.sourceEntity).\(join.relationship)) is missing")
                continue
            }
            let have = Set(try connection.columns(ofTable: join.name).map(\.name))
            let want = Set([join.sourceColumn, join.destinationColumn] + [join.sourceOrderColumn, join.destinationOrderColumn].compactMap { $0 })
            if have != want {
                problems.append("join table \(join.name) has columns \(have.sorted().joined(separator: ", ")), not \(want.sorted().joined(separator: ", "))")
            }
        }
        let modelTables = Set(mapping.tables.map(\.name) + mapping.joinTables.map(\.name))
        for table in tables.sorted() where !modelTables.contains(table) && table.hasPrefix("Z") {
            let columns = Set(try connection.columns(ofTable: table).map(\.name))
            let joinLike = table.hasPrefix("Z_") && table.dropFirst(2).first?.isNumber == true
            if (columns.contains("Z_PK") && columns.contains("Z_ENT")) || joinLike {
                problems.append("table \(table) is not one of the model's")
            }
        }

        // Indexes and triggers.
        var objects: [String: (type: String, table: String, sql: String)] = [:]
        for row in try connection.query("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE sql IS NOT NULL AND type IN ('index', 'trigger')") {
            guard let type = row[0].string, let name = row[1].string, let table = row[2].string, let sql = row[3].string else { continue }
            objects[name] = (type, table, sql)
        }
        var expected: Set<String> = []
        for sql in mapping.createStatements() {
            guard let (kind, name) = MigrationPlanner.objectName(sql), kind == "INDEX" || kind == "TRIGGER" else { continue }
            expected.insert(name)
            guard let have = objects[name] else {
                problems.append("\(kind.lowercased()) \(name) is missing")
                continue
            }
            if have.sql != sql { problems.append("\(kind.lowercased()) \(name) is \(have.sql), not \(sql)") }
        }
        for (name, object) in objects.sorted(by: { $0.key < $1.key }) where object.type == "index" && modelTables.contains(object.table) && !expected.contains(name) {
            problems.append("index \(name) on \(object.table) is not one of the model's")
        }

        if integrity {
            let result = try connection.query("PRAGMA integrity_check").compactMap { $0[0].string }
            if result != ["ok"] { problems.append("PRAGMA integrity_check: " + result.prefix(5).joined(separator: "; ")) }
        }
        return problems
    }
}
