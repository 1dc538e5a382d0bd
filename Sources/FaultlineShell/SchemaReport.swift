import Faultline
import FaultlineModel
import FaultlineSQL
import Foundation

/// How a model maps onto a store's tables — entity ↔ table and `Z_ENT`, attribute ↔ column
/// and type, relationship ↔ foreign key or join table, indexes — and where the store's
/// actual tables differ from what the model maps to (`faultline schema`, `.schema`).
public enum SchemaReport {
    /// The report for every entity, or one.
    ///
    /// - Throws: a SQLite error when the store's tables cannot be read.
    public static func text(store: SQLiteStore, entity only: String? = nil) throws -> String {
        let model = store.model
        let mapping = store.mapping
        let connection = store.connection
        return try connection.untraced {
            var out: [String] = []
            let storeNumbers = try storeEntityNumbers(connection)
            // sqlite_master has no index: read it once, not once per table.
            let tableNames = try connection.tableNames()
            var indexesByTable: [String: [(name: String, sql: String?)]] = [:]
            var triggersByTable: [String: [String]] = [:]
            for row in try connection.query("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE type IN ('index', 'trigger') ORDER BY name") {
                guard let table = row[2].string, let name = row[1].string else { continue }
                if row[0].string == "index" {
                    indexesByTable[table, default: []].append((name, row[3].string))
                } else {
                    triggersByTable[table, default: []].append(name)
                }
            }
            var differences: [String] = []
            for entity in model.entities where only == nil || entity.name == only {
                guard let em = mapping.entity(entity.name) else { continue }
                var heading = "\(entity.name)  Z_ENT \(em.entityNumber)  table \(em.table)"
                if let parent = entity.superentityName { heading += "  parent \(parent)" }
                if entity.isAbstract { heading += "  (abstract)" }
                out.append(heading)
                if let actual = storeNumbers[entity.name], actual != em.entityNumber {
                    differences.append("\(entity.name): Z_PRIMARYKEY numbers it \(actual), the model maps it to \(em.entityNumber)")
                }
                let columns = try connection.columns(ofTable: em.table)
                let typeByColumn = Dictionary(columns.map { ($0.name, $0.declaredType) }, uniquingKeysWith: { a, _ in a })
                var rows: [[String]] = []
                for attribute in entity.attributes {
                    guard !attribute.isTransient, let column = em.attributeColumns[attribute.name] else {
                        rows.append(["attribute", attribute.name, attribute.attributeType.xmlName, "(transient: no column)", ""])
                        continue
                    }
                    let expected = SchemaMapping.sqlType(for: attribute.attributeType)
                    let actual = typeByColumn[column]
                    rows.append(["attribute", attribute.name, attribute.attributeType.xmlName, column, actual ?? "MISSING"])
                    if actual == nil {
                        differences.append("\(entity.name).\(attribute.name): column \(em.table).\(column) is missing")
                    } else if let actual, actual != expected {
                        differences.append("\(entity.name).\(attribute.name): column \(column) is \(actual), the model maps it to \(expected)")
                    }
                }
                for relationship in entity.relationships {
                    let kind = relationship.isToMany ? (relationship.isOrdered ? "to-many (ordered)" : "to-many") : "to-one"
                    let destination = "→ \(relationship.destinationEntityName)"
                    if relationship.isToOne, let fk = em.toOneColumns[relationship.name] {
                        var text = fk.foreignKey
                        if let c = fk.entityColumn { text += ", \(c)" }
                        if let c = fk.orderColumn { text += ", \(c)" }
                        rows.append([kind, relationship.name, destination, text, typeByColumn[fk.foreignKey] ?? "MISSING"])
                        if typeByColumn[fk.foreignKey] == nil {
                            differences.append("\(entity.name).\(relationship.name): column \(em.table).\(fk.foreignKey) is missing")
                        }
                    } else if let join = em.manyToMany[relationship.name] {
                        rows.append([kind, relationship.name, destination, "join table \(join)", tableNames.contains(join) ? "" : "MISSING"])
                    } else if let hidden = em.hiddenForeignKeys[relationship.name] {
                        rows.append([kind, relationship.name, destination, "\(hidden.table).\(hidden.column) (no inverse)", ""])
                    } else if let inverse = model.inverse(of: relationship), let dm = mapping.entity(relationship.destinationEntityName),
                        let fk = dm.toOneColumns[inverse.name]
                    {
                        rows.append([kind, relationship.name, destination, "\(dm.table).\(fk.foreignKey) (inverse \(inverse.name))", ""])
                    } else {
                        rows.append([kind, relationship.name, destination, "(transient: no column)", ""])
                    }
                }
                out += grid(rows)
                let mapped = Set(mapping.table(named: em.table)?.columns.map(\.name) ?? [])
                if entity.superentityName == nil {
                    for column in columns where !mapped.contains(column.name) {
                        differences.append("\(em.table).\(column.name) (\(column.declaredType)) is in the store but not in the model")
                    }
                    for index in indexesByTable[em.table] ?? [] {
                        out.append("  index \(index.name)" + (index.sql.map { ": \($0)" } ?? " (automatic)"))
                    }
                    // Derived attributes (Z_DA_), counters (ZT_), R-tree upkeep (Z_RT_): by name,
                    // the text is in sqlite_master.
                    for trigger in triggersByTable[em.table] ?? [] { out.append("  trigger \(trigger)") }
                }
                out.append("")
            }
            if only == nil {
                for join in mapping.joinTables {
                    out.append("join table \(join.name): \(join.sourceEntity).\(join.relationship) ↔ \(join.destinationEntity).\(join.inverseRelationship)"
                        + " (\([join.sourceColumn, join.destinationColumn, join.sourceOrderColumn, join.destinationOrderColumn].compactMap { $0 }.joined(separator: ", ")))")
                }
                if !mapping.joinTables.isEmpty { out.append("") }
                let rtrees = try connection.query("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name LIKE 'Z\\_RT\\_%' ESCAPE '\\' AND sql LIKE 'CREATE VIRTUAL TABLE%' ORDER BY name")
                for rtree in rtrees {
                    out.append("R-tree \(rtree[0].string ?? ""): \(rtree[1].string ?? "")")
                }
                if !rtrees.isEmpty { out.append("") }
                if store.tracksPersistentHistory {
                    let transactions = try connection.scalar("SELECT count(*) FROM ATRANSACTION")?.int64 ?? 0
                    let changes = try connection.scalar("SELECT count(*) FROM ACHANGE")?.int64 ?? 0
                    out.append("persistent history: ATRANSACTION (\(transactions) transactions), ACHANGE (\(changes) changes), ATRANSACTIONSTRING")
                    out.append("")
                }
            }
            out.append(differences.isEmpty ? "The store matches the model's mapping." : "Differences between the store and the model:")
            out += differences.map { "  " + $0 }
            return out.joined(separator: "\n")
        }
    }

    private static func storeEntityNumbers(_ connection: Connection) throws -> [String: Int] {
        guard try connection.tableExists("Z_PRIMARYKEY") else { return [:] }
        var numbers: [String: Int] = [:]
        for row in try connection.query("SELECT Z_ENT, Z_NAME FROM Z_PRIMARYKEY") {
            if let name = row[1].string, let n = row[0].int64 { numbers[name] = Int(n) }
        }
        return numbers
    }

    private static func grid(_ rows: [[String]]) -> [String] {
        guard let first = rows.first else { return [] }
        var widths = Array(repeating: 0, count: first.count)
        for row in rows { for (i, cell) in row.enumerated() { widths[i] = max(widths[i], cell.count) } }
        return rows.map { row in
            "  " + row.enumerated().map { i, cell in cell + String(repeating: " ", count: widths[i] - cell.count) }
                .joined(separator: "  ").trimmingCharacters(in: .whitespaces)
        }
    }
}
