import FaultlineModel
import FaultlineSQL
import Foundation

/// A piece of SQL with its bound values, as the planner builds expressions: the text refers
/// to the source row as `t0`.
struct SQLFragment: Hashable {
    var sql: String
    var arguments: [SQLValue] = []
    /// Whether it reads only the row itself (no subquery): such an expression may run as an
    /// in-place `UPDATE`.
    var selfContained = true

    static let null = SQLFragment(sql: "NULL")
    static func column(_ name: String) -> SQLFragment { SQLFragment(sql: "t0." + SQLName.quoted(name)) }
    static func value(_ value: SQLValue) -> SQLFragment {
        if case .null = value { return .null }
        return SQLFragment(sql: "?", arguments: [value])
    }

    var isNull: Bool { sql == "NULL" }

    /// The column name when the fragment is just `t0.<column>`.
    var bareColumn: String? {
        guard sql.hasPrefix("t0."), arguments.isEmpty else { return nil }
        let rest = String(sql.dropFirst(3))
        return rest.contains(where: { " ()+-*,".contains($0) }) ? nil : rest
    }

    /// `CASE <subject> WHEN ? THEN ? … END` mapping numbers (others become NULL); the subject
    /// itself when every number maps to itself and `force` is false.
    static func renumbering(_ subject: SQLFragment, _ pairs: [(Int, Int)], force: Bool = false) -> SQLFragment {
        if !force && pairs.allSatisfy({ $0.0 == $0.1 }) { return subject }
        var out = SQLFragment(sql: "CASE \(subject.sql)", arguments: subject.arguments, selfContained: subject.selfContained)
        for (from, to) in pairs {
            out.sql += " WHEN ? THEN ?"
            out.arguments += [.integer(Int64(from)), .integer(Int64(to))]
        }
        out.sql += " END"
        return out
    }

    static func inList(_ numbers: [Int]) -> SQLFragment {
        SQLFragment(sql: "(" + numbers.map { _ in "?" }.joined(separator: ", ") + ")", arguments: numbers.map { .integer(Int64($0)) })
    }

    static func + (lhs: SQLFragment, rhs: SQLFragment) -> SQLFragment {
        SQLFragment(sql: lhs.sql + rhs.sql, arguments: lhs.arguments + rhs.arguments, selfContained: lhs.selfContained && rhs.selfContained)
    }

    static func + (lhs: SQLFragment, rhs: String) -> SQLFragment {
        SQLFragment(sql: lhs.sql + rhs, arguments: lhs.arguments, selfContained: lhs.selfContained)
    }

    static func + (lhs: String, rhs: SQLFragment) -> SQLFragment {
        SQLFragment(sql: lhs + rhs.sql, arguments: rhs.arguments, selfContained: rhs.selfContained)
    }
}

/// Works out the statements of one migration from the store's schema (the source model's
/// mapping reconciled with the store), the destination model's computed mapping, and the
/// inferred mapping between them. Reads the store (schema, `Z_PRIMARYKEY`, metadata) and
/// writes nothing.
final class MigrationPlanner {
    let connection: Connection
    let mapping: InferredMapping
    let source: ManagedObjectModel
    let destination: ManagedObjectModel
    let path: String
    /// The store's mapping of the source model.
    let src: SchemaMapping
    /// The mapping a new store of the destination model has (Core Data renumbers entities
    /// during migration: the destination's numbers are the computed ones).
    let dst: SchemaMapping
    /// Tables in the store now.
    let existingTables: Set<String>

    /// One source entity whose rows feed a destination entity.
    struct Feed: Hashable {
        var sourceName: String
        var sourceNumber: Int
        var destinationName: String
        var destinationNumber: Int
    }

    /// Source entity number → destination entity number, for every kept entity.
    var numberMap: [Int: Int] = [:]
    /// Source table → the name it has while the statements run (renamed out of the way when
    /// a new table takes its name).
    var currentName: [String: String] = [:]
    var statements: [LightweightMigration.Statement] = []
    var notes: [String] = []

    init(connection: Connection, mapping: InferredMapping, source: ManagedObjectModel, destination: ManagedObjectModel, path: String) throws {
        self.connection = connection
        self.mapping = mapping
        self.source = source
        self.destination = destination
        self.path = path
        self.src = try SchemaMapping(model: source, reconciledWith: connection)
        self.dst = SchemaMapping(model: destination)
        do {
            self.existingTables = try connection.tableNames()
        } catch let error as SQLiteError {
            throw PersistentStoreError(.notAStore, "cannot read the store's schema: \(error.message)", path: path)
        }
        for em in mapping.entityMappings {
            guard let s = em.source, let sn = src.entities[s.name]?.entityNumber, let dn = dst.entities[em.destination.name]?.entityNumber else { continue }
            numberMap[sn] = dn
        }
    }

    func add(_ sql: String, _ arguments: [SQLValue] = []) {
        statements.append(LightweightMigration.Statement(sql, arguments))
    }

    func add(_ fragment: SQLFragment) {
        statements.append(LightweightMigration.Statement(fragment.sql, fragment.arguments))
    }

    func q(_ name: String) -> String { SQLName.quoted(name) }

    func current(_ table: String) -> String { currentName[table] ?? table }

    func failure(_ message: String) -> PersistentStoreError { PersistentStoreError(.migrationFailed, message + "; nothing was changed", path: path) }

    // MARK: The plan

    func plan() throws -> LightweightMigration.Plan {
        do {
            return try makePlan()
        } catch let error as SQLiteError {
            throw PersistentStoreError(.notAStore, "cannot read the store: \(error.message)", path: path)
        }
    }

    /// How one destination entity table is made.
    enum TableTreatment {
        /// A new table, empty.
        case create
        /// The source table of the same name, changed in place.
        case alter(source: String)
        /// Built from the rows of a source table.
        case rebuild(source: String)
    }

    private func makePlan() throws -> LightweightMigration.Plan {
        let destinationStatements = dst.createStatements()
        let createTableText: [String: String] = Dictionary(
            destinationStatements.compactMap { sql -> (String, String)? in
                guard sql.hasPrefix("CREATE TABLE "), let name = sql.dropFirst(13).split(separator: " ").first else { return nil }
                return (String(name), sql)
            }, uniquingKeysWith: { a, _ in a })
        let sourceEntityTables = Set(src.tables.map(\.name)).intersection(existingTables)
        let sourceJoinTables = Set(src.joinTables.map(\.name)).intersection(existingTables)

        // 1. Decide, table by table, and work out every column's value.
        var treatments: [(table: TableMapping, treatment: TableTreatment, feeds: [Feed], values: [SQLFragment])] = []
        for table in dst.tables {
            let feeds = feeds(of: table)
            let sourceTables = Set(feeds.compactMap { src.entities[$0.sourceName]?.table }).filter { sourceEntityTables.contains($0) }
            if sourceTables.count > 1 {
                throw failure("the rows of tables \(sourceTables.sorted().joined(separator: ", ")) would share table \(table.name) (entity \(table.rootEntity)); their primary keys would collide, and Faultline does not renumber primary keys")
            }
            guard let sourceTable = sourceTables.first else {
                treatments.append((table, .create, [], []))
                continue
            }
            let liveFeeds = feeds.filter { src.entities[$0.sourceName]?.table == sourceTable }
            let values = try table.columns.map { try value(of: $0, in: table, feeds: liveFeeds, sourceTable: sourceTable) }
            let inPlace = try canAlterInPlace(table, sourceTable: sourceTable, values: values)
            treatments.append((table, inPlace ? .alter(source: sourceTable) : .rebuild(source: sourceTable), liveFeeds, values))
        }
        let alteredSources = Set(treatments.compactMap { t -> String? in if case .alter(let s) = t.treatment { return s } else { return nil } })
        let destinationNames = Set(dst.tables.map(\.name) + dst.joinTables.map(\.name))

        // 2. Triggers and indexes of the old tables go first (new ones are made at the end).
        let schema = try connection.query("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY rowid")
        let oldTables = sourceEntityTables.union(sourceJoinTables)
        let keptIndexes = Set(destinationStatements)
        var presentAtEnd: Set<String> = []
        for row in schema {
            guard let type = row[0].string, let name = row[1].string, let table = row[2].string, let sql = row[3].string, oldTables.contains(table) else { continue }
            if type == "trigger" {
                add("DROP TRIGGER IF EXISTS \(q(name))")
            } else if type == "index" {
                if alteredSources.contains(table) && keptIndexes.contains(sql) {
                    presentAtEnd.insert(name)
                } else {
                    add("DROP INDEX IF EXISTS \(q(name))")
                }
            }
        }

        // 3. Old tables whose names new tables take are moved aside.
        let dropLater = oldTables.subtracting(alteredSources).sorted()
        var taken = existingTables.union(destinationNames)
        for table in dropLater where destinationNames.contains(table) {
            var aside = "ZFLMIGRATION_" + table
            var n = 1
            while taken.contains(aside) {
                n += 1
                aside = "ZFLMIGRATION\(n)_" + table
            }
            taken.insert(aside)
            currentName[table] = aside
            add("ALTER TABLE \(q(table)) RENAME TO \(q(aside))")
        }

        // 4. New tables: entity tables built anew or new, then join tables, in Core Data's text.
        var rebuilt: [String] = [], created: [String] = [], altered: [String] = []
        for t in treatments {
            switch t.treatment {
            case .alter: continue
            case .create: created.append(t.table.name)
            case .rebuild: rebuilt.append(t.table.name)
            }
            guard let ddl = createTableText[t.table.name] else { throw failure("no CREATE TABLE statement for \(t.table.name)") }
            add(ddl)
        }
        for join in dst.joinTables {
            guard let ddl = createTableText[join.name] else { throw failure("no CREATE TABLE statement for \(join.name)") }
            add(ddl)
        }

        // 5. Rows into rebuilt tables.
        for t in treatments {
            guard case .rebuild(let sourceTable) = t.treatment else { continue }
            let columns = t.table.columns.map { q($0.name) }.joined(separator: ", ")
            var select = SQLFragment(sql: "INSERT INTO \(q(t.table.name)) (\(columns)) SELECT ")
            for (i, value) in t.values.enumerated() { select = select + (i == 0 ? "" : ", ") + value }
            select = select + " FROM \(q(current(sourceTable))) t0 WHERE t0.Z_ENT IN " + .inList(t.feeds.map(\.sourceNumber))
            add(select)
        }
        // 6. Join tables, from the pairs each relationship had.
        for join in dst.joinTables { try fillJoinTable(join) }

        // 7. Tables changed in place (after every INSERT above read them as they were).
        for t in treatments {
            guard case .alter(let sourceTable) = t.treatment else { continue }
            let statementsBefore = statements.count
            try alterInPlace(t.table, sourceTable: sourceTable, feeds: t.feeds, values: t.values)
            if statements.count > statementsBefore { altered.append(t.table.name) }
        }

        // 8. Old tables go.
        var dropped: [String] = []
        for table in dropLater {
            add("DROP TABLE \(q(current(table)))")
            if !destinationNames.contains(table) { dropped.append(table) }
        }

        // 9. Z_PRIMARYKEY: a row per destination entity, the key counters carried over.
        try primaryKeyRows(treatments.map { ($0.table, $0.treatment) })

        // 10. Persistent history.
        try history()

        // 11. Indexes, triggers and location indexes the destination model has.
        let existingNames = Set(schema.compactMap { $0[1].string })
        for sql in destinationStatements {
            guard let (kind, name) = Self.objectName(sql), kind != "TABLE" else { continue }
            if presentAtEnd.contains(name) { continue }
            if kind == "VIRTUAL TABLE", existingNames.contains(name) { continue }
            add(sql)
        }

        // 12. Metadata and model cache.
        try metadata()

        return LightweightMigration.Plan(
            mapping: mapping, statements: statements, alteredTables: altered, rebuiltTables: rebuilt,
            createdTables: created, droppedTables: dropped, notes: notes)
    }

    /// `("INDEX", "Z_Note_byDate")` for `CREATE INDEX Z_Note_byDate ON …`.
    static func objectName(_ sql: String) -> (String, String)? {
        for kind in ["UNIQUE INDEX", "INDEX", "TRIGGER", "VIRTUAL TABLE", "TABLE"] {
            let prefix = "CREATE \(kind) "
            if sql.hasPrefix(prefix) {
                var rest = sql.dropFirst(prefix.count)
                if rest.hasPrefix("IF NOT EXISTS ") { rest = rest.dropFirst(14) }
                guard let name = rest.split(separator: " ").first else { return nil }
                return (kind == "UNIQUE INDEX" ? "INDEX" : kind, String(name))
            }
        }
        return nil
    }

    /// The source entities whose rows go into a destination table.
    func feeds(of table: TableMapping) -> [Feed] {
        table.entityNumbers.sorted().compactMap { number -> Feed? in
            guard let name = dst.entityNames[number], let s = mapping.entityMapping(forDestination: name)?.source,
                let sn = src.entities[s.name]?.entityNumber
            else { return nil }
            return Feed(sourceName: s.name, sourceNumber: sn, destinationName: name, destinationNumber: number)
        }
    }

    // MARK: In place

    /// A table may change in place when it keeps its name and every old column keeps its
    /// name, type and meaning, each value being worked out from its own row: then only
    /// `ADD COLUMN`, `UPDATE` and `DELETE` are needed.
    func canAlterInPlace(_ table: TableMapping, sourceTable: String, values: [SQLFragment]) throws -> Bool {
        guard table.name == sourceTable, values.allSatisfy(\.selfContained) else { return false }
        let old = try connection.columns(ofTable: sourceTable)
        for info in old {
            guard let i = table.columns.firstIndex(where: { $0.name == info.name }) else { return false }
            let column = table.columns[i]
            let expected = column.sqlType.split(separator: " ").first.map(String.init) ?? column.sqlType
            if info.declaredType.uppercased() != expected.uppercased() { return false }
            // A kept column whose values change is updated in place; only Z_PK must stay.
            if column.kind == .primaryKey && values[i].bareColumn != "Z_PK" { return false }
        }
        return true
    }

    func alterInPlace(_ table: TableMapping, sourceTable: String, feeds: [Feed], values: [SQLFragment]) throws {
        let oldNames = Set(try connection.columns(ofTable: sourceTable).map(\.name))
        let kept = Set(feeds.map(\.sourceNumber))
        let sourceNumbers = (src.table(named: sourceTable)?.entityNumbers ?? []).filter { !kept.contains($0) }.sorted()
        if !sourceNumbers.isEmpty {
            add(SQLFragment(sql: "DELETE FROM \(q(table.name)) WHERE Z_ENT IN ") + .inList(sourceNumbers))
        }
        for column in table.columns where !oldNames.contains(column.name) {
            add("ALTER TABLE \(q(table.name)) ADD COLUMN \(q(column.name)) \(column.sqlType)")
        }
        var sets: [SQLFragment] = []
        for (column, value) in zip(table.columns, values) {
            if value.bareColumn == column.name { continue }
            if value.isNull && !oldNames.contains(column.name) { continue }
            sets.append("\(q(column.name)) = " + value)
        }
        guard !sets.isEmpty else { return }
        var update = SQLFragment(sql: "UPDATE \(q(table.name)) AS t0 SET ")
        for (i, set) in sets.enumerated() { update = update + (i == 0 ? "" : ", ") + set }
        add(update)
    }

    // MARK: Column values

    /// The value of a destination column for a row of the source table (`t0`).
    func value(of column: ColumnMapping, in table: TableMapping, feeds: [Feed], sourceTable: String) throws -> SQLFragment {
        switch column.kind {
        case .primaryKey:
            return .column("Z_PK")
        case .optimisticLock:
            return .column("Z_OPT")
        case .entityKey:
            return .renumbering(.column("Z_ENT"), feeds.map { ($0.sourceNumber, $0.destinationNumber) })
        case .attribute(_, let name):
            let per = feeds.filter { dst.entities[$0.destinationName]?.attributeColumns[name] == column.name }
                .map { ($0, attributeValue($0, name, sourceTable: sourceTable)) }
            return combine(per, all: feeds, sourceTable: sourceTable)
        case .foreignKey(_, let name):
            let per = feeds.filter { dst.entities[$0.destinationName]?.toOneColumns[name]?.foreignKey == column.name }
                .map { ($0, toOneValue($0, name, sourceTable: sourceTable).foreignKey) }
            return combine(per, all: feeds, sourceTable: sourceTable)
        case .foreignEntityKey(_, let name):
            let per = feeds.filter { dst.entities[$0.destinationName]?.toOneColumns[name]?.entityColumn == column.name }
                .map { ($0, toOneValue($0, name, sourceTable: sourceTable).entity) }
            return combine(per, all: feeds, sourceTable: sourceTable)
        case .orderKey(_, let name):
            let per = feeds.filter { dst.entities[$0.destinationName]?.toOneColumns[name]?.orderColumn == column.name }
                .map { ($0, toOneValue($0, name, sourceTable: sourceTable).order) }
            return combine(per, all: feeds, sourceTable: sourceTable)
        case .hiddenForeignKey(let owner, let name):
            guard let relationship = destination.entity(named: owner)?.relationship(named: name),
                let target = destination.entity(named: relationship.destinationEntityName)
            else { return .null }
            let targets = Set(destination.entityAndDescendants(of: target).map(\.name))
            let per = feeds.filter { targets.contains($0.destinationName) }.map { ($0, hiddenValue(owner: owner, relationship, sourceTable: sourceTable)) }
            return combine(per, all: feeds, sourceTable: sourceTable)
        }
    }

    /// One expression for a column from the value each fed entity gives it: the common one
    /// when they agree (and the other rows have nothing in that column), else a `CASE` on the
    /// row's entity.
    func combine(_ per: [(Feed, SQLFragment)], all: [Feed], sourceTable: String) -> SQLFragment {
        let withValue = per.filter { !$0.1.isNull }
        guard !withValue.isEmpty else { return .null }
        let distinct = withValue.reduce(into: [SQLFragment]()) { if !$0.contains($1.1) { $0.append($1.1) } }
        let covered = Set(withValue.map(\.0.sourceNumber))
        let others = all.filter { !covered.contains($0.sourceNumber) }
        if distinct.count == 1, let only = distinct.first {
            if others.isEmpty { return only }
            if let column = only.bareColumn, !others.contains(where: { usesColumn(column, entity: $0.sourceName, table: sourceTable) }) { return only }
        }
        var out = SQLFragment(sql: "CASE")
        for fragment in distinct {
            let numbers = withValue.filter { $0.1 == fragment }.map(\.0.sourceNumber)
            out = out + " WHEN t0.Z_ENT IN " + .inList(numbers) + " THEN " + fragment
        }
        return out + " ELSE NULL END"
    }

    /// Whether rows of a source entity hold something in a column of their table.
    func usesColumn(_ column: String, entity: String, table: String) -> Bool {
        guard let e = src.entities[entity] else { return false }
        if e.attributeColumns.values.contains(column) { return true }
        for c in e.toOneColumns.values where c.foreignKey == column || c.entityColumn == column || c.orderColumn == column { return true }
        guard let sourceEntity = source.entity(named: entity) else { return false }
        let chain = Set(source.inheritanceChain(of: sourceEntity).map(\.name))
        for other in src.entities.values {
            for (name, hidden) in other.hiddenForeignKeys where hidden.table == table && hidden.column == column {
                if let r = source.entity(named: other.name)?.relationship(named: name), chain.contains(r.destinationEntityName) { return true }
            }
        }
        return false
    }

    func columnExists(_ table: String, _ column: String) -> Bool {
        guard let t = src.table(named: table) else { return src.joinTable(named: table) != nil }
        return t.columns.contains { $0.name == column }
    }

    /// An attribute's value for rows of one fed entity: the source column (converted between
    /// numeric types), the default where the attribute is new or became non-optional.
    func attributeValue(_ feed: Feed, _ name: String, sourceTable: String) -> SQLFragment {
        guard let attribute = destination.entity(named: feed.destinationName)?.attribute(named: name) else { return .null }
        let defaultValue = AttributeValues.defaultValue(of: attribute).map { ValueCoding.encode($0, as: attribute.attributeType) } ?? .null
        let am = mapping.entityMapping(forDestination: feed.destinationName)?.attribute(named: name)
        guard let old = am?.source, !old.isTransient, let column = src.entities[feed.sourceName]?.attributeColumns[old.name],
            columnExists(sourceTable, column)
        else {
            return .value(defaultValue)
        }
        var value = convert(.column(column), from: old.attributeType, to: attribute.attributeType)
        if old.isOptional && !attribute.isOptional, !defaultValue.isNull {
            value = "COALESCE(" + value + ", " + .value(defaultValue) + ")"
        }
        return value
    }

    /// Numeric conversions lightweight migration infers.
    func convert(_ value: SQLFragment, from: AttributeType, to: AttributeType) -> SQLFragment {
        guard from != to else { return value }
        let integers: Set<AttributeType> = [.integer16, .integer32, .integer64, .boolean]
        let reals: Set<AttributeType> = [.double, .float]
        if integers.contains(to) && !integers.contains(from) { return "CAST(" + value + " AS INTEGER)" }
        if reals.contains(to) && !reals.contains(from) { return "CAST(" + value + " AS REAL)" }
        return value
    }

    /// What a to-one relationship's columns hold for rows of one fed entity.
    func toOneValue(_ feed: Feed, _ name: String, sourceTable: String) -> (foreignKey: SQLFragment, entity: SQLFragment, order: SQLFragment) {
        guard let owner = destination.entity(named: feed.destinationName), let relationship = owner.relationship(named: name),
            let target = destination.entity(named: relationship.destinationEntityName)
        else { return (.null, .null, .null) }
        let targetNames = Set(destination.entityAndDescendants(of: target).map(\.name))
        let rm = mapping.entityMapping(forDestination: feed.destinationName)?.relationship(named: name)
        // Stored the same way before: the same row's foreign key.
        if let old = rm?.source, old.isToOne, !old.isTransient, let columns = src.entities[feed.sourceName]?.toOneColumns[old.name],
            columnExists(sourceTable, columns.foreignKey), let oldTarget = source.entity(named: old.destinationEntityName)
        {
            // Old destinations by source number → destination number (those that still fit).
            let oldTargets = source.entityAndDescendants(of: oldTarget).compactMap { e -> (Int, Int?)? in
                guard let n = src.entities[e.name]?.entityNumber else { return nil }
                let mapped = numberMap[n].flatMap { dn in dst.entityNames[dn].flatMap { targetNames.contains($0) ? dn : nil } }
                return (n, mapped)
            }
            let fit = oldTargets.filter { $0.1 != nil }.map { ($0.0, $0.1 ?? 0) }
            let entityColumn = columns.entityColumn.flatMap { columnExists(sourceTable, $0) ? $0 : nil }
            var foreignKey = SQLFragment.column(columns.foreignKey)
            var entity = SQLFragment.null
            if fit.isEmpty {
                notes.append("relationship \(feed.destinationName).\(name): the old destinations are no longer \(target.name) objects, so the relationship starts empty")
                return (.null, .null, .null)
            }
            if let entityColumn {
                if fit.count < oldTargets.count {
                    foreignKey = "CASE WHEN t0.\(q(entityColumn)) IN " + .inList(fit.map(\.0)) + " THEN " + foreignKey + " ELSE NULL END"
                }
                entity = .renumbering(.column(entityColumn), fit, force: fit.count < oldTargets.count)
            } else if fit.count == 1, let only = fit.first {
                if oldTargets.count > 1 { foreignKey = .null }
                entity = "CASE WHEN " + foreignKey + " IS NULL THEN NULL ELSE " + .value(.integer(Int64(only.1))) + " END"
            } else {
                foreignKey = .null
            }
            var order = SQLFragment.null
            if let o = columns.orderColumn, columnExists(sourceTable, o) {
                order = .column(o)
            } else if dst.entities[feed.destinationName]?.toOneColumns[name]?.orderColumn != nil, !foreignKey.isNull {
                // The inverse became ordered: positions follow the primary keys.
                order = SQLFragment(
                    sql: "CASE WHEN t0.\(q(columns.foreignKey)) IS NULL THEN NULL ELSE 2048 + 1024 * (SELECT count(*) FROM \(q(current(sourceTable))) x WHERE x.\(q(columns.foreignKey)) = t0.\(q(columns.foreignKey)) AND x.Z_PK < t0.Z_PK) END",
                    selfContained: false)
            }
            if dst.entities[feed.destinationName]?.toOneColumns[name]?.entityColumn == nil { entity = .null }
            return (foreignKey, entity, order)
        }
        // Stored another way before (a to-many, a join table, the other side's key).
        guard let pairs = pairs(owner: feed.destinationName, relationship) else { return (.null, .null, .null) }
        let foreignKey = SQLFragment(sql: "(SELECT p.d FROM (", selfContained: false) + pairs.select + ") p WHERE p.s = t0.Z_PK ORDER BY p.d LIMIT 1)"
        var entity = SQLFragment.null
        if dst.entities[feed.destinationName]?.toOneColumns[name]?.entityColumn != nil, let targetTable = pairs.targetTable {
            let renumber = pairs.targetNumbers.compactMap { n in numberMap[n].map { (n, $0) } }
            entity = "(SELECT " + SQLFragment.renumbering(SQLFragment(sql: "x.Z_ENT"), renumber) + " FROM \(q(current(targetTable))) x WHERE x.Z_PK = " + foreignKey + ")"
        }
        var order = SQLFragment.null
        if dst.entities[feed.destinationName]?.toOneColumns[name]?.orderColumn != nil {
            order = "(SELECT p.io FROM (" + pairs.select + ") p WHERE p.s = t0.Z_PK ORDER BY p.d LIMIT 1)"
            if !pairs.hasInverseOrder {
                notes.append("relationship \(feed.destinationName).\(name): the inverse ordered relationship had no order before; positions are left empty")
                order = .null
            }
        }
        return (foreignKey, entity, order)
    }

    /// The owner's key a target row holds for a to-many relationship without inverse.
    func hiddenValue(owner: String, _ relationship: RelationshipDescription, sourceTable: String) -> SQLFragment {
        let em = mapping.entityMapping(forDestination: owner)
        if let sourceOwner = em?.source, let old = em?.relationship(named: relationship.name)?.source, old.isToMany, source.inverse(of: old) == nil,
            let hidden = src.entities[sourceOwner.name]?.hiddenForeignKeys[old.name], hidden.table == sourceTable, columnExists(sourceTable, hidden.column)
        {
            return .column(hidden.column)
        }
        guard let pairs = pairs(owner: owner, relationship) else { return .null }
        return SQLFragment(sql: "(SELECT p.s FROM (", selfContained: false) + pairs.select + ") p WHERE p.d = t0.Z_PK ORDER BY p.s LIMIT 1)"
    }

    // MARK: Relationship pairs

    /// A source relationship's links as rows `(s, d, o, io)`: the owner's key, the target's
    /// key, the target's position in the owner's ordered list, the owner's position in the
    /// target's ordered inverse (NULL where there is none).
    struct Pairs {
        var select: SQLFragment
        var hasOrder: Bool
        var hasInverseOrder: Bool
        /// The source table and entity numbers of the targets.
        var targetTable: String?
        var targetNumbers: [Int]
    }

    /// The links a destination relationship starts with: those of its source relationship,
    /// or, for a new relationship whose inverse has a source, those of the inverse turned
    /// round.
    func pairs(owner: String, _ relationship: RelationshipDescription) -> Pairs? {
        let em = mapping.entityMapping(forDestination: owner)
        if let sourceOwner = em?.source, let old = em?.relationship(named: relationship.name)?.source, !old.isTransient {
            return sourcePairs(sourceOwner, old)
        }
        guard let inverse = destination.inverse(of: relationship),
            let targetMapping = mapping.entityMapping(forDestination: relationship.destinationEntityName),
            let sourceTarget = targetMapping.source, let old = targetMapping.relationship(named: inverse.name)?.source, !old.isTransient,
            let turned = sourcePairs(sourceTarget, old)
        else { return nil }
        let s = turned.select
        let select = "SELECT r.d AS s, r.s AS d, r.io AS o, r.o AS io FROM (" + s + ") r"
        let ownerSource = em?.source
        let numbers = ownerSource.map { source.entityAndDescendants(of: $0).compactMap { src.entities[$0.name]?.entityNumber } } ?? []
        return Pairs(select: select, hasOrder: turned.hasInverseOrder, hasInverseOrder: turned.hasOrder, targetTable: ownerSource.flatMap { src.entities[$0.name]?.table }, targetNumbers: numbers)
    }

    /// The links of a source relationship, read from where the store keeps them.
    func sourcePairs(_ owner: EntityDescription, _ relationship: RelationshipDescription) -> Pairs? {
        guard let ownerMapping = src.entities[owner.name], let target = source.entity(named: relationship.destinationEntityName),
            let targetMapping = src.entities[target.name]
        else { return nil }
        let ownerNumbers = source.entityAndDescendants(of: owner).compactMap { src.entities[$0.name]?.entityNumber }
        let targetNumbers = source.entityAndDescendants(of: target).compactMap { src.entities[$0.name]?.entityNumber }
        if relationship.isToOne {
            guard let columns = ownerMapping.toOneColumns[relationship.name], columnExists(ownerMapping.table, columns.foreignKey) else { return nil }
            let fk = q(columns.foreignKey)
            let io = columns.orderColumn.map { "t.\(q($0))" } ?? "NULL"
            let select = SQLFragment(sql: "SELECT t.Z_PK AS s, t.\(fk) AS d, NULL AS o, \(io) AS io FROM \(q(current(ownerMapping.table))) t WHERE t.\(fk) IS NOT NULL AND t.Z_ENT IN ") + .inList(ownerNumbers)
            return Pairs(select: select, hasOrder: false, hasInverseOrder: columns.orderColumn != nil, targetTable: targetMapping.table, targetNumbers: targetNumbers)
        }
        if let inverse = source.inverse(of: relationship) {
            if inverse.isToOne {
                guard let columns = targetMapping.toOneColumns[inverse.name], columnExists(targetMapping.table, columns.foreignKey) else { return nil }
                let fk = q(columns.foreignKey)
                let o = columns.orderColumn.map { "t.\(q($0))" } ?? "NULL"
                let select = SQLFragment(sql: "SELECT t.\(fk) AS s, t.Z_PK AS d, \(o) AS o, NULL AS io FROM \(q(current(targetMapping.table))) t WHERE t.\(fk) IS NOT NULL AND t.Z_ENT IN ") + .inList(targetNumbers)
                return Pairs(select: select, hasOrder: columns.orderColumn != nil, hasInverseOrder: false, targetTable: targetMapping.table, targetNumbers: targetNumbers)
            }
            guard let joinName = ownerMapping.manyToMany[relationship.name], let join = src.joinTable(named: joinName), existingTables.contains(join.name) else { return nil }
            let fromSource = join.relationship == relationship.name && source.inheritanceChain(of: owner).contains { $0.name == join.sourceEntity }
            let own = fromSource ? join.sourceColumn : join.destinationColumn
            let other = fromSource ? join.destinationColumn : join.sourceColumn
            let order = fromSource ? join.destinationOrderColumn : join.sourceOrderColumn
            let inverseOrder = fromSource ? join.sourceOrderColumn : join.destinationOrderColumn
            let select = SQLFragment(sql: "SELECT t.\(q(own)) AS s, t.\(q(other)) AS d, \(order.map { "t.\(q($0))" } ?? "NULL") AS o, \(inverseOrder.map { "t.\(q($0))" } ?? "NULL") AS io FROM \(q(current(join.name))) t")
            return Pairs(select: select, hasOrder: order != nil, hasInverseOrder: inverseOrder != nil, targetTable: targetMapping.table, targetNumbers: targetNumbers)
        }
        guard let hidden = ownerMapping.hiddenForeignKeys[relationship.name], columnExists(hidden.table, hidden.column) else { return nil }
        let h = q(hidden.column)
        let select = SQLFragment(sql: "SELECT t.\(h) AS s, t.Z_PK AS d, NULL AS o, NULL AS io FROM \(q(current(hidden.table))) t WHERE t.\(h) IS NOT NULL AND t.Z_ENT IN ") + .inList(targetNumbers)
        return Pairs(select: select, hasOrder: false, hasInverseOrder: false, targetTable: targetMapping.table, targetNumbers: targetNumbers)
    }

    /// `INSERT INTO <join> … SELECT … FROM (<pairs>) p`.
    func fillJoinTable(_ join: JoinTableMapping) throws {
        guard let owner = destination.entity(named: join.sourceEntity), let relationship = owner.relationship(named: join.relationship) else { return }
        guard let pairs = pairs(owner: join.sourceEntity, relationship) else { return }
        var columns = [join.sourceColumn, join.destinationColumn]
        var values = ["p.s", "p.d"]
        if let c = join.sourceOrderColumn {
            columns.append(c)
            values.append(pairs.hasInverseOrder ? "p.io" : "2048 + 1024 * (ROW_NUMBER() OVER (PARTITION BY p.d ORDER BY p.s) - 1)")
        }
        if let c = join.destinationOrderColumn {
            columns.append(c)
            values.append(pairs.hasOrder ? "p.o" : "2048 + 1024 * (ROW_NUMBER() OVER (PARTITION BY p.s ORDER BY p.d) - 1)")
        }
        let insert = SQLFragment(sql: "INSERT INTO \(q(join.name)) (\(columns.map(q).joined(separator: ", "))) SELECT \(values.joined(separator: ", ")) FROM (")
            + pairs.select + ") p WHERE p.s IS NOT NULL AND p.d IS NOT NULL"
        add(insert)
    }

    // MARK: Bookkeeping tables

    func primaryKeyRows(_ treatments: [(TableMapping, TableTreatment)]) throws {
        var max: [Int: Int64] = [:]
        for row in try connection.query("SELECT Z_ENT, Z_MAX FROM Z_PRIMARYKEY") {
            if let n = row[0].int64, let m = row[1].int64 { max[Int(n)] = m }
        }
        add("DELETE FROM Z_PRIMARYKEY WHERE Z_ENT < ?", [.integer(16000)])
        var rootMax: [String: Int64] = [:]
        for (table, treatment) in treatments {
            let sourceTable: String
            switch treatment {
            case .create: continue
            case .alter(let s), .rebuild(let s): sourceTable = s
            }
            var m: Int64 = 0
            for number in src.table(named: sourceTable)?.entityNumbers ?? [] { m = Swift.max(m, max[number] ?? 0) }
            let highest = try connection.scalar("SELECT MAX(Z_PK) FROM \(q(sourceTable))")?.int64 ?? 0
            rootMax[table.rootEntity] = Swift.max(m, highest)
        }
        for (number, name) in dst.entityNames.sorted(by: { $0.key < $1.key }) {
            guard let e = dst.entities[name] else { continue }
            var value: Int64 = 0
            if e.superNumber == 0 {
                value = rootMax[name] ?? 0
            } else if let s = mapping.entityMapping(forDestination: name)?.source, let sn = src.entities[s.name]?.entityNumber {
                value = max[sn] ?? 0
            }
            add("INSERT INTO Z_PRIMARYKEY(Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES(?, ?, ?, ?)", [.integer(Int64(number)), .text(name), .integer(Int64(e.superNumber)), .integer(value)])
        }
    }

    /// Persistent history: changes of removed entities go, entity numbers follow the new
    /// numbering, and `ACHANGE` gets the tombstone columns the new model needs.
    func history() throws {
        guard existingTables.contains("ACHANGE") else { return }
        let removed = (src.entityNames.keys.filter { numberMap[$0] == nil }).sorted()
        if !removed.isEmpty {
            add(SQLFragment(sql: "DELETE FROM ACHANGE WHERE ZENTITY IN ") + .inList(removed))
        }
        let pairs = numberMap.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        if !pairs.allSatisfy({ $0.0 == $0.1 }) {
            var update = SQLFragment(sql: "UPDATE ACHANGE SET ZENTITY = CASE ZENTITY")
            for (from, to) in pairs { update = update + SQLFragment(sql: " WHEN ? THEN ?", arguments: [.integer(Int64(from)), .integer(Int64(to))]) }
            add(update + " ELSE ZENTITY END WHERE ZENTITY < ?" + SQLFragment(sql: "", arguments: [.integer(16000)]))
        }
        let columns = Set(try connection.columns(ofTable: "ACHANGE").map(\.name))
        for i in 0..<PersistentHistory.tombstoneCount(for: destination) where !columns.contains("ZTOMBSTONE\(i)") {
            add("ALTER TABLE ACHANGE ADD COLUMN ZTOMBSTONE\(i) BLOB")
        }
        if !removed.isEmpty || !pairs.allSatisfy({ $0.0 == $0.1 }) {
            notes.append("persistent history: changes of removed entities were dropped; the others name their entities by the new numbers (ZCOLUMNS bits are kept as they were)")
        }
    }

    func metadata() throws {
        let (_, old, _) = try SQLiteStore.readMetadata(connection, path: path)
        var plist = old
        for (key, value) in StoreMetadata.initialMetadata(for: destination) { plist[key] = value }
        let data: Data
        do {
            data = try PropertyListSerialization.data(fromPropertyList: plist, format: .binary, options: 0)
        } catch {
            throw failure("cannot write the new metadata: \(error.localizedDescription)")
        }
        add("UPDATE Z_METADATA SET Z_PLIST = ?", [.blob(data)])
        if !existingTables.contains("Z_MODELCACHE") { add("CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB)") }
        add("DELETE FROM Z_MODELCACHE")
        let blob: Data
        do {
            blob = try ModelArchiver.modelCacheBlob(for: destination)
        } catch {
            throw failure("cannot archive the new model for Z_MODELCACHE: \(error)")
        }
        add("INSERT INTO Z_MODELCACHE(Z_CONTENT) VALUES(?)", [.blob(blob)])
    }
}
