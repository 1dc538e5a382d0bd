import FaultlineModel
import FaultlineSQL
import Foundation

/// A column value in a save, resolved inside the save's transaction (where new objects get
/// their primary keys).
enum SaveValue {
    /// A plain value.
    case value(SQLValue)
    /// The primary key of an object (temporary IDs resolve to the key just reserved).
    case key(ManagedObjectID)
    /// The `Z_ENT` number of an object's entity.
    case entity(ManagedObjectID)
}

/// One row of a many-to-many join table, by the objects on its two sides.
struct JoinRow: Hashable {
    /// The join table.
    var table: String
    /// The object in the table's source column (the side that named the table).
    var source: ManagedObjectID
    /// The object in the destination column.
    var destination: ManagedObjectID
}

extension SQLiteStore {
    /// Reserves `count` primary keys for an inheritance root, Core Data's way:
    /// `SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = ?`, then
    /// `UPDATE OR FAIL Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_ENT = ? AND Z_MAX = ?`.
    /// Returns the first key; the keys are `first ..< first + count`.
    func reservePrimaryKeys(root: String, count: Int) throws -> Int64 {
        guard let number = mapping.entity(root)?.entityNumber else {
            throw PersistentStoreError(.incompatibleModel, "entity \(root) has no Z_PRIMARYKEY row", path: path)
        }
        return try reservePrimaryKeys(entityNumber: number, label: root, count: count)
    }

    /// `INSERT INTO Z_PRIMARYKEY(Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES(?, ?, ?, ?)`: an
    /// entity's row, as Core Data writes it when it creates a store.
    func insertPrimaryKeyRow(_ number: Int, name: String, superNumber: Int, max: Int64) throws {
        try connection.execute(
            "INSERT INTO Z_PRIMARYKEY(Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES(?, ?, ?, ?)",
            [.integer(Int64(number)), .text(name), .integer(Int64(superNumber)), .integer(max)])
    }

    /// ``reservePrimaryKeys(root:count:)`` by entity number (also for the history entities,
    /// 16001–16003); `label` names the entity in errors.
    func reservePrimaryKeys(entityNumber number: Int, label root: String, count: Int) throws -> Int64 {
        let stored = try connection.scalar("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = ?", [.integer(Int64(number))])
        let max: Int64
        switch stored {
        case nil, .null?: max = 0
        case .integer(let value)? where value >= 0: max = value
        default:
            throw PersistentStoreError(.cannotOpen, "Z_PRIMARYKEY.Z_MAX of \(root) is \(stored.map { "\($0)" } ?? "missing"), not a key counter: save refused, nothing was written", path: path)
        }
        let (next, overflow) = max.addingReportingOverflow(Int64(count))
        guard !overflow else {
            throw PersistentStoreError(.cannotWrite, "Z_PRIMARYKEY.Z_MAX of \(root) is \(max): no \(count) more primary keys fit in 64 bits; save refused, nothing was written", path: path)
        }
        try connection.execute(
            "UPDATE OR FAIL Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_ENT = ? AND Z_MAX = ?",
            [.integer(next), .integer(Int64(number)), .integer(max)])
        guard connection.changes == 1 else {
            throw PersistentStoreError(.cannotOpen, "could not reserve primary keys for \(root): Z_PRIMARYKEY changed underneath", path: path)
        }
        return max + 1
    }

    /// The entity number (`Z_ENT`) of an entity; 0 when the mapping lacks it. Cached: looking
    /// it up in the mapping copied the mapping.
    func entityNumber(of name: String) -> Int {
        if let last = lastEntityNumber, last.entity == name { return last.number }
        let number = entityNumberCache[name] ?? mapping.entity(name)?.entityNumber ?? 0
        entityNumberCache[name] = number
        lastEntityNumber = (name, number)
        return number
    }

    /// How a save writes rows of an entity (its table, number and row columns, each with the
    /// slot of its property); nil when the mapping lacks the entity. Worked out once.
    func rowLayout(for entity: EntityDescription) -> EntityRowLayout? {
        if let last = lastRowLayout, last.entity == entity.name { return last.layout }
        let layout: EntityRowLayout
        if let cached = rowLayoutCache[entity.name] {
            layout = cached
        } else {
            guard let entityMapping = mapping.entity(entity.name) else { return nil }
            layout = EntityRowLayout(entity: entity, table: entityMapping.table, entityNumber: entityMapping.entityNumber, columns: rowColumns(for: entity))
            rowLayoutCache[entity.name] = layout
        }
        lastRowLayout = (entity.name, layout)
        return layout
    }

    /// The columns of an entity's rows, in table order: the three fixed columns, then those
    /// of the entity's own and inherited properties, and hidden foreign keys pointing at it.
    func rowColumns(for entity: EntityDescription) -> [ColumnMapping] {
        if let cached = rowColumnsCache[entity.name] { return cached }
        let columns = computeRowColumns(for: entity)
        rowColumnsCache[entity.name] = columns
        return columns
    }

    private func computeRowColumns(for entity: EntityDescription) -> [ColumnMapping] {
        guard let entityMapping = mapping.entity(entity.name), let table = mapping.table(named: entityMapping.table) else { return [] }
        let chain = Set(model.inheritanceChain(of: entity).map(\.name))
        return table.columns.filter { column in
            switch column.kind {
            case .primaryKey, .entityKey, .optimisticLock: return true
            case .attribute(let e, _), .foreignKey(let e, _), .foreignEntityKey(let e, _), .orderKey(let e, _): return chain.contains(e)
            case .hiddenForeignKey(let source, let relationship):
                guard let destination = model.entity(named: source)?.relationship(named: relationship)?.destinationEntityName else { return false }
                return chain.contains(destination)
            }
        }
    }

    /// `INSERT INTO ZT(Z_PK, Z_ENT, Z_OPT, …) VALUES(?, …)` with every column of the entity.
    func insertRow(table: String, columns: [String], values: [SQLValue]) throws {
        try connection.execute(insertSQL(table: table, columns: columns), values)
    }

    /// The text of ``insertRow(table:columns:values:)``'s statement.
    func insertSQL(table: String, columns: [String]) -> String {
        let placeholders = Array(repeating: "?", count: columns.count).joined(separator: ", ")
        return "INSERT INTO \(table)(\(columns.joined(separator: ", "))) VALUES(\(placeholders))"
    }

    /// `UPDATE ZT SET ZA = ?, Z_OPT = ? WHERE Z_PK = ? AND Z_OPT = ?`: its values are the
    /// changed columns', then the new version, the key and the version read (no row changed
    /// means an optimistic locking failure).
    func updateSQL(table: String, columns: [String]) -> String {
        let assignments = (columns + ["Z_OPT"]).map { "\($0) = ?" }.joined(separator: ", ")
        return "UPDATE \(table) SET \(assignments) WHERE Z_PK = ? AND Z_OPT = ?"
    }

    /// One row a save writes: its table, the columns set and their values (bound in order).
    struct RowWrite {
        var table: String
        var columns: [String]
        /// The values bound, in order: a row's own, or its part of a buffer that many rows
        /// share (a save's updates); indexed from `values.startIndex`.
        var values: ArraySlice<SQLValue>
    }

    /// What holds a ``RowWrite`` (a save plan's row, with its object).
    protocol RowWriting {
        var write: RowWrite { get }
    }

    /// A row SQLite refused on a unique index (`SQLITE_CONSTRAINT_UNIQUE`): which of the rows
    /// handed over, and SQLite's error (it names the columns).
    struct UniqueViolation: Error {
        var index: Int
        var error: SQLiteError
    }

    /// Consecutive rows of one table with one column list share a statement, looked up once.
    /// Its rows run with ``Statement/runKeepingBindings()``: each statement of the run is
    /// reset (its bindings cleared) when the run moves on to another, and the last one by
    /// ``finish()``.
    private struct StatementRun {
        var table = ""
        var columns: [String] = []
        var current: Statement?

        mutating func statement(_ store: SQLiteStore, _ table: String, _ columns: [String], _ text: (String, [String]) -> String) throws -> Statement {
            if let current, self.table == table, self.columns == columns { return current }
            finish()
            let statement = try store.connection.cachedStatement(text(table, columns))
            (self.table, self.columns, current) = (table, columns, statement)
            return statement
        }

        /// Resets the statement last used (also after an error).
        mutating func finish() {
            current?.reset()
            current = nil
        }
    }

    /// Runs the INSERTs of a save, in order.
    ///
    /// - Throws: ``UniqueViolation`` naming the row a uniqueness constraint refused; other
    ///   SQLite errors as they are.
    func insertRows<Row: RowWriting>(_ rows: [Row]) throws {
        var run = StatementRun()
        defer { run.finish() }
        // By index, each part read in place: a row copied costs its arrays' retains.
        for index in rows.indices {
            let statement = try run.statement(self, rows[index].write.table, rows[index].write.columns, insertSQL)
            try statement.bind(rows[index].write.values)
            do {
                try statement.runKeepingBindings()
            } catch let error as SQLiteError where error.code == 2067 {  // SQLITE_CONSTRAINT_UNIQUE
                throw UniqueViolation(index: index, error: error)
            }
        }
    }

    /// A save's UPDATEs, whose parts are kept side by side rather than in a ``RowWrite`` per
    /// row: each row names its statement's table and columns by number (rows of one entity
    /// changed in the same columns share them) and its values by a range of one buffer. A row's
    /// own column list and value slice cost two reference counts taken and two given back per
    /// row (atomic operations; about 1 % of a bulk update, measured).
    struct UpdateBatch {
        /// The statements' tables and column lists.
        var statements: [(table: String, columns: [String])] = []
        /// Each row: its statement's number and its values in ``values``.
        var rows: [(statement: Int, values: Range<Int>)] = []
        /// The rows' values: each row's changed columns', then the new version, the key and
        /// the version read.
        var values: [SQLValue] = []

        /// The table of row `index`.
        func table(ofRow index: Int) -> String { statements[rows[index].statement].table }
    }

    /// Runs the optimistic-locking UPDATEs of a save; returns the indexes of the rows whose
    /// version no longer matched (no row changed).
    ///
    /// - Throws: as ``insertRows(_:)``.
    func updateRows(_ batch: UpdateBatch) throws -> [Int] {
        var run = StatementRun()
        defer { run.finish() }
        var stale: [Int] = []
        for index in batch.rows.indices {
            let part = batch.statements[batch.rows[index].statement]
            let statement = try run.statement(self, part.table, part.columns, updateSQL)
            try statement.bind(batch.values[batch.rows[index].values])
            do {
                try statement.runKeepingBindings()
            } catch let error as SQLiteError where error.code == 2067 {  // SQLITE_CONSTRAINT_UNIQUE
                throw UniqueViolation(index: index, error: error)
            }
            if connection.changes == 0 { stale.append(index) }
        }
        return stale
    }

    /// The rows of `table` (key and entity number) holding `values` in `columns`, other than
    /// the row `except`: who already has the values a uniqueness constraint refused.
    func rowsHolding(table: String, columns: [String], values: [SQLValue], except: Int64) -> [(primaryKey: Int64, entity: Int64)] {
        let conditions = columns.map { "\($0) = ?" }.joined(separator: " AND ")
        let rows = (try? connection.query("SELECT Z_PK, Z_ENT FROM \(table) WHERE \(conditions) AND Z_PK != ?", values + [.integer(except)])) ?? []
        return rows.compactMap { row in
            guard let key = row[0].int64, let entity = row[1].int64 else { return nil }
            return (key, entity)
        }
    }

    /// Runs `body` inside one write transaction (`BEGIN EXCLUSIVE` … `COMMIT`, rolled back when
    /// it throws): a save, a batch request.
    func withWriteTransaction<T>(_ body: () throws -> T) throws -> T {
        try connection.transaction(.exclusive, body)
    }

    /// Whether anything listens to the store's statements (the SQL log): messages are only
    /// worth building then.
    var isTraced: Bool { connection.isTraced }

    /// Hands a log message to the store's listeners (`CoreData: annotation: …`).
    func emit(_ event: TraceEvent) { connection.emit(event) }

    /// Runs `body` inside one read transaction (`BEGIN DEFERRED` … `COMMIT`, not logged, as
    /// Core Data's are not); inside a transaction already, just runs it.
    func withReadTransaction<T>(_ body: () throws -> T) throws -> T {
        if connection.isInTransaction { return try body() }
        try connection.untraced { try connection.executeScript("BEGIN DEFERRED") }
        defer { try? connection.untraced { try connection.executeScript("COMMIT") } }
        return try body()
    }

    /// `SELECT Z_PK FROM ZT WHERE Z_PK = ?`: whether a row (that a new foreign key names) exists.
    func rowExists(table: String, primaryKey: Int64) throws -> Bool {
        try connection.scalar("SELECT Z_PK FROM \(table) WHERE Z_PK = ?", [.integer(primaryKey)]) != nil
    }

    /// `DELETE FROM ZT WHERE Z_PK = ? AND Z_OPT = ?`; false when no row had that version.
    func deleteRow(table: String, primaryKey: Int64, version: Int64) throws -> Bool {
        try connection.execute("DELETE FROM \(table) WHERE Z_PK = ? AND Z_OPT = ?", [.integer(primaryKey), .integer(version)])
        return connection.changes > 0
    }

    /// `INSERT INTO Z_1TAGS(Z_1ITEMS, Z_2TAGS[, Z_FOK_…]) VALUES(?, ?[, …])`.
    func insertJoinRow(_ join: JoinTableMapping, source: Int64, destination: Int64, sourceOrder: Int64?, destinationOrder: Int64?) throws {
        var columns = [join.sourceColumn, join.destinationColumn]
        var values: [SQLValue] = [.integer(source), .integer(destination)]
        if let c = join.sourceOrderColumn {
            columns.append(c)
            values.append(sourceOrder.map(SQLValue.integer) ?? .null)
        }
        if let c = join.destinationOrderColumn {
            columns.append(c)
            values.append(destinationOrder.map(SQLValue.integer) ?? .null)
        }
        try insertRow(table: join.name, columns: columns, values: values)
    }

    /// `DELETE FROM Z_1TAGS WHERE Z_1ITEMS = ? AND Z_2TAGS = ?`.
    func deleteJoinRow(_ join: JoinTableMapping, source: Int64, destination: Int64) throws {
        try connection.execute("DELETE FROM \(join.name) WHERE \(join.sourceColumn) = ? AND \(join.destinationColumn) = ?", [.integer(source), .integer(destination)])
    }

    /// `UPDATE Z_1TAGS SET Z_FOK_… = ? WHERE Z_1ITEMS = ? AND Z_2TAGS = ?`: a new position.
    func updateJoinOrder(_ join: JoinTableMapping, column: String, order: Int64, source: Int64, destination: Int64) throws {
        try connection.execute(
            "UPDATE \(join.name) SET \(column) = ? WHERE \(join.sourceColumn) = ? AND \(join.destinationColumn) = ?",
            [.integer(order), .integer(source), .integer(destination)])
    }
}

/// How a save writes the rows of one entity: the table, the entity number, the row's columns
/// and, per column, the slot of the attribute or to-one it holds in the entity's
/// ``PropertyLayout``, so a save finds values by slot instead of hashing names.
final class EntityRowLayout {
    let table: String
    let entityNumber: Int
    /// The column names, in order (every column of an INSERT).
    let columnNames: [String]
    /// Per column: the slot of its attribute or to-one in the entity's layout; nil for the
    /// other columns, and for a property the layout does not hold by that name alone.
    let slots: [Int?]
    /// What a column holds, without its names: what the save plans walk per object (a
    /// ``ColumnMapping`` copied per column and object cost its strings' retains and releases).
    enum Role: UInt8 {
        case primaryKey, entityKey, optimisticLock, attribute, foreignKey, foreignEntityKey
        /// An ordered to-many's position or a hidden foreign key: written from the save's extras.
        case extra
    }
    /// Per column: its role.
    let roles: [Role]
    /// Per column: the attribute or to-one it holds; "" for the other columns.
    let propertyNames: [String]
    /// Per column: its attribute's type, and whether it may be stored externally (attribute
    /// columns of the entity only).
    let attributeTypes: [(type: AttributeType, external: Bool)?]
    /// The layout the slots are of (the entity's).
    let propertyLayout: PropertyLayout
    /// Per slot of the layout: the columns holding it (bit n for column n), when
    /// ``slotsCoverColumns``; an update finds its row's columns from the slots it wrote (one
    /// or two of a dozen, in a bulk change) instead of asking every column.
    let columnsOfSlot: [UInt64]
    /// Whether ``columnsOfSlot`` decides the attribute and to-one columns: at most 64 columns,
    /// each of them with a slot of its own below 31 (the ones a value set tracks one by one).
    let slotsCoverColumns: Bool

    /// Whether an object's values (and committed values) have this layout's slots.
    @inline(__always)
    func holds(_ object: ManagedObject) -> Bool {
        object.storage.layout === propertyLayout && object.committed.layout === propertyLayout
    }

    init(entity: EntityDescription, table: String, entityNumber: Int, columns: [ColumnMapping]) {
        self.table = table
        self.entityNumber = entityNumber
        self.columnNames = columns.map(\.name)
        let layout = entity.propertyLayout
        self.propertyLayout = layout
        var slots: [Int?] = []
        var attributes: [AttributeDescription?] = []
        for column in columns {
            switch column.kind {
            case .attribute(_, let name):
                let attribute = entity.attribute(named: name)
                attributes.append(attribute)
                let slot = layout.hasDuplicateNames ? nil : layout.slot(of: name)
                slots.append(attribute != nil && slot.map { layout.kinds[$0] == .attribute } == true ? slot : nil)
            case .foreignKey(_, let name), .foreignEntityKey(_, let name):
                attributes.append(nil)
                let slot = layout.hasDuplicateNames ? nil : layout.slot(of: name)
                slots.append(slot.map { layout.kinds[$0] == .toOne } == true ? slot : nil)
            default:
                attributes.append(nil)
                slots.append(nil)
            }
        }
        self.slots = slots
        self.attributeTypes = attributes.map { $0.map { ($0.attributeType, $0.usesExternalBinaryStorage) } }
        self.roles = columns.map { column in
            switch column.kind {
            case .primaryKey: .primaryKey
            case .entityKey: .entityKey
            case .optimisticLock: .optimisticLock
            case .attribute: .attribute
            case .foreignKey: .foreignKey
            case .foreignEntityKey: .foreignEntityKey
            case .orderKey, .hiddenForeignKey: .extra
            }
        }
        self.propertyNames = columns.map { column in
            switch column.kind {
            case .attribute(_, let name), .foreignKey(_, let name), .foreignEntityKey(_, let name): name
            default: ""
            }
        }
        var columnsOfSlot = [UInt64](repeating: 0, count: layout.count)
        var covered = columns.count <= 64
        for (index, role) in roles.enumerated() where covered {
            switch role {
            case .attribute, .foreignKey, .foreignEntityKey:
                guard let slot = slots[index], slot < ObjectValues.trackedSlots else {
                    covered = false
                    continue
                }
                columnsOfSlot[slot] |= 1 << UInt64(index)
            case .primaryKey, .entityKey, .optimisticLock, .extra:
                continue
            }
        }
        self.columnsOfSlot = covered ? columnsOfSlot : []
        self.slotsCoverColumns = covered
    }
}
