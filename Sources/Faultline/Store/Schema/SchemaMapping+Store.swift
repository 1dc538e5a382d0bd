import FaultlineModel
import FaultlineSQL
import Foundation

extension SchemaMapping {
    /// The mapping of an existing store: Core Data's rules for `model`, corrected by what the
    /// store itself says.
    ///
    /// - entity numbers come from `Z_PRIMARYKEY` (so names that embed them, `Z34_ASSET`,
    ///   `Z_26ASSETS`, `Z3ASSETS`, use the store's numbers);
    /// - columns are looked up by name with `PRAGMA table_info`, never by position; a computed
    ///   column the table lacks is matched to the one unclaimed column with the same name up
    ///   to a collision suffix (`ZTEXT1` for `ZTEXT`), else dropped from the mapping;
    /// - ``TableMapping/columns`` lists the store's columns in the store's order, with the
    ///   store's declared types (migrated stores append columns at the end);
    /// - a join table missing under its computed name is looked for under the name the other
    ///   side of the relationship would give it.
    ///
    /// Every correction is recorded in ``reconciliationNotes``.
    ///
    /// - Throws: ``PersistentStoreError`` when `Z_PRIMARYKEY` or a table cannot be read.
    public init(model: ManagedObjectModel, reconciledWith connection: Connection) throws {
        var numbers: [String: Int] = [:]
        do {
            if try connection.tableExists("Z_PRIMARYKEY") {
                for row in try connection.query("SELECT Z_ENT, Z_NAME FROM Z_PRIMARYKEY") {
                    // Numbers from 16000 on are the framework's ancillary entities (history
                    // `CHANGE`, CloudKit metadata…), whatever their names.
                    if let number = row[0].int64, number < 16000, let name = row[1].string, model.entity(named: name) != nil {
                        numbers[name] = Int(number)
                    }
                }
            }
        } catch let error as SQLiteError {
            throw PersistentStoreError(.notAStore, "cannot read Z_PRIMARYKEY: \(error.message)", path: connection.path)
        }
        self.init(model: model, entityNumbers: numbers)
        let computed = SchemaMapping(model: model)
        for (name, e) in entities where computed.entities[name]?.entityNumber != e.entityNumber {
            reconciliationNotes.append("entity \(name) is Z_ENT \(e.entityNumber) in Z_PRIMARYKEY (computed: \(computed.entities[name]?.entityNumber ?? 0))")
        }
        reconciliationNotes.sort()
        do {
            let existing = try connection.tableNames()
            var affected = AffectedEntities()
            for (name, e) in entities {
                affected.byTable[e.table, default: []].append(name)
                for hidden in e.hiddenForeignKeys.values { affected.byHiddenForeignKeyTable[hidden.table, default: []].append(name) }
            }
            try reconcileTables(connection, existing: existing, affected: affected)
            try reconcileJoinTables(connection, existing: existing)
            indexTables()
        } catch let error as SQLiteError {
            throw PersistentStoreError(.notAStore, "cannot read the store's schema: \(error.message)", path: connection.path)
        }
    }

    /// Strips a collision suffix: `ZTEXT12` → `ZTEXT`.
    static func baseName(_ column: String) -> String {
        var s = Substring(column)
        while let last = s.last, last.isASCII, last.isNumber { s = s.dropLast() }
        return String(s)
    }

    /// The entity mappings that name a table: whose rows it holds, and whose hidden foreign
    /// keys it holds (so a change to one table's columns touches only those mappings).
    private struct AffectedEntities {
        var byTable: [String: [String]] = [:]
        var byHiddenForeignKeyTable: [String: [String]] = [:]

        func names(for table: String) -> [String] {
            (byTable[table] ?? []) + (byHiddenForeignKeyTable[table] ?? [])
        }
    }

    private mutating func reconcileTables(_ connection: Connection, existing: Set<String>, affected: AffectedEntities) throws {
        for index in tables.indices {
            let table = tables[index]
            guard existing.contains(table.name) else {
                reconciliationNotes.append("table \(table.name) (entity \(table.rootEntity)) is not in the store")
                dropColumns(table.columns.filter { !isFixed($0) }, ofTable: table.name, entityNames: affected.names(for: table.name))
                tables[index].columns = []
                continue
            }
            let storeColumns = try connection.columns(ofTable: table.name)
            let storeNames = Set(storeColumns.map(\.name))
            var claimed = Set(table.columns.map(\.name)).intersection(storeNames)
            var renamed: [String: String] = [:]
            var dropped: [ColumnMapping] = []
            for column in table.columns where !storeNames.contains(column.name) {
                let base = SchemaMapping.baseName(column.name)
                let candidates = storeColumns.map(\.name).filter { !claimed.contains($0) && SchemaMapping.baseName($0) == base }
                if candidates.count == 1, let found = candidates.first {
                    claimed.insert(found)
                    renamed[column.name] = found
                    reconciliationNotes.append("\(table.name).\(found) holds \(describe(column.kind)) (computed name \(column.name))")
                } else {
                    dropped.append(column)
                    reconciliationNotes.append("\(table.name) has no column for \(describe(column.kind)) (computed name \(column.name))")
                }
            }
            renameColumns(renamed, inTable: table.name, entityNames: affected.names(for: table.name))
            dropColumns(dropped, ofTable: table.name, entityNames: affected.names(for: table.name))
            var byName: [String: ColumnMapping] = [:]
            for var column in table.columns {
                column.name = renamed[column.name] ?? column.name
                byName[column.name] = column
            }
            var columns: [ColumnMapping] = []
            for info in storeColumns {
                if var column = byName[info.name] {
                    column.sqlType = info.declaredType
                    columns.append(column)
                } else {
                    reconciliationNotes.append("\(table.name).\(info.name) is not in the model")
                }
            }
            tables[index].columns = columns
        }
    }

    private func isFixed(_ column: ColumnMapping) -> Bool {
        switch column.kind {
        case .primaryKey, .entityKey, .optimisticLock: true
        default: false
        }
    }

    private func describe(_ kind: ColumnMapping.Kind) -> String {
        switch kind {
        case .primaryKey: "Z_PK"
        case .entityKey: "Z_ENT"
        case .optimisticLock: "Z_OPT"
        case .attribute(let e, let n): "attribute \(e).\(n)"
        case .foreignKey(let e, let r): "relationship \(e).\(r)"
        case .foreignEntityKey(let e, let r): "the entity of relationship \(e).\(r)"
        case .orderKey(let e, let r): "the order of relationship \(e).\(r)"
        case .hiddenForeignKey(let e, let r): "to-many relationship \(e).\(r) without inverse"
        }
    }

    /// Points every entity mapping at the store's name for renamed columns of `table`.
    private mutating func renameColumns(_ renamed: [String: String], inTable table: String, entityNames: [String]) {
        guard !renamed.isEmpty else { return }
        for name in Set(entityNames) {
            guard var e = entities[name] else { continue }
            if e.table == table {
                for (k, v) in e.attributeColumns { e.attributeColumns[k] = renamed[v] ?? v }
                for (k, v) in e.toOneColumns {
                    e.toOneColumns[k] = ForeignKeyColumns(
                        foreignKey: renamed[v.foreignKey] ?? v.foreignKey,
                        entityColumn: v.entityColumn.map { renamed[$0] ?? $0 },
                        orderColumn: v.orderColumn.map { renamed[$0] ?? $0 })
                }
            }
            for (k, v) in e.hiddenForeignKeys where v.table == table {
                e.hiddenForeignKeys[k] = HiddenForeignKey(table: table, column: renamed[v.column] ?? v.column)
            }
            entities[name] = e
        }
    }

    /// Removes columns the store does not have from every entity mapping.
    private mutating func dropColumns(_ dropped: [ColumnMapping], ofTable table: String, entityNames: [String]) {
        guard !dropped.isEmpty else { return }
        let names = Set(entityNames)
        for column in dropped {
            for name in names {
                guard var e = entities[name] else { continue }
                switch column.kind {
                case .attribute(_, let attribute) where e.table == table:
                    e.attributeColumns[attribute] = nil
                case .foreignKey(_, let relationship) where e.table == table:
                    e.toOneColumns[relationship] = nil
                case .foreignEntityKey(_, let relationship) where e.table == table:
                    e.toOneColumns[relationship]?.entityColumn = nil
                case .orderKey(_, let relationship) where e.table == table:
                    e.toOneColumns[relationship]?.orderColumn = nil
                case .hiddenForeignKey(_, let relationship):
                    if e.hiddenForeignKeys[relationship]?.table == table { e.hiddenForeignKeys[relationship] = nil }
                default:
                    break
                }
                entities[name] = e
            }
        }
    }

    private mutating func reconcileJoinTables(_ connection: Connection, existing: Set<String>) throws {
        var renamedJoins: [String: String] = [:]
        defer { renameJoinTables(renamedJoins) }
        for index in joinTables.indices {
            var join = joinTables[index]
            var columns: Set<String> = []
            if existing.contains(join.name) {
                columns = Set(try connection.columns(ofTable: join.name).map(\.name))
            } else if let d = entities[join.destinationEntity]?.entityNumber {
                // Named from the other side: Z_<d><INVERSE>, columns swapped.
                let other = "Z_\(d)" + SchemaMapping.asciiUppercase(join.inverseRelationship)
                if existing.contains(other) {
                    reconciliationNotes.append("join table for \(join.sourceEntity).\(join.relationship) is \(other) (computed name \(join.name))")
                    columns = Set(try connection.columns(ofTable: other).map(\.name))
                    renamedJoins[join.name] = other
                    join.name = other
                } else {
                    reconciliationNotes.append("join table \(join.name) for \(join.sourceEntity).\(join.relationship) is not in the store")
                    continue
                }
            }
            func resolve(_ name: String, other: String) -> String {
                if columns.contains(name) { return name }
                let base = SchemaMapping.baseName(name)
                let candidates = columns.filter { $0 != other && SchemaMapping.baseName($0) == base }
                if candidates.count == 1, let found = candidates.first {
                    reconciliationNotes.append("\(join.name).\(found) is used for computed column \(name)")
                    return found
                }
                return name
            }
            join.sourceColumn = resolve(join.sourceColumn, other: join.destinationColumn)
            join.destinationColumn = resolve(join.destinationColumn, other: join.sourceColumn)
            if let c = join.sourceOrderColumn, !columns.contains(c) { join.sourceOrderColumn = nil }
            if let c = join.destinationOrderColumn, !columns.contains(c) { join.destinationOrderColumn = nil }
            joinTables[index] = join
        }
    }

    /// Points every entity mapping at the store's names for join tables (old → new), in one
    /// pass over the entities.
    private mutating func renameJoinTables(_ renamed: [String: String]) {
        guard !renamed.isEmpty else { return }
        for name in entities.keys {
            guard var e = entities[name], e.manyToMany.values.contains(where: { renamed[$0] != nil }) else { continue }
            for (k, v) in e.manyToMany { if let new = renamed[v] { e.manyToMany[k] = new } }
            entities[name] = e
        }
    }
}
