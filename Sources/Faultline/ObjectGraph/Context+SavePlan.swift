import FaultlineModel
import FaultlineSQL
import Foundation

// The save plan: what a save writes, worked out before its transaction — rows to insert and
// update (changed columns only), deletes, join rows, external data, history — and the
// version checks that make a row changed elsewhere a conflict.

/// Everything one save writes, computed before its transaction.
struct SavePlan {
    /// A row an INSERT or UPDATE writes for an object: the changed (or all) columns and the
    /// values the store binds, in order (an UPDATE's end with the new version, the key and the
    /// version read). A new object's key is known only inside the save's transaction: where
    /// one goes (the row's own key, a to-one's or a hidden foreign key's), the values hold
    /// NULL until ``resolveKeys(_:)`` puts it in.
    struct RowChange: SQLiteStore.RowWriting {
        var object: ManagedObject
        var write: SQLiteStore.RowWrite
        /// Where the row's own temporary key goes (a new object's `Z_PK`).
        var ownKeyIndex: Int?
        /// The key reserved for a new object's row (set with ``setReservedKey(_:)``).
        var reservedKey: Int64?
        /// Other new objects' keys: where each goes, and whose.
        var unresolved: [(index: Int, id: ManagedObjectID)] = []

        var table: String { write.table }

        /// Puts the key reserved for a new object's row in its place.
        mutating func setReservedKey(_ key: Int64) {
            reservedKey = key
            if let ownKeyIndex { write.values[write.values.startIndex + ownKeyIndex] = .integer(key) }
        }

        /// Puts the keys reserved for the other new objects the row names in their places
        /// (indexes counted from the row's first value).
        mutating func resolveKeys(_ keys: [ManagedObjectID: Int64]) {
            let first = write.values.startIndex
            for (index, id) in unresolved { write.values[first + index] = keys[id].map(SQLValue.integer) ?? .null }
        }
    }

    struct JoinInsert {
        var join: JoinTableMapping
        var row: JoinRow
        var sourceOrder: Int64?
        var destinationOrder: Int64?
    }

    struct JoinOrderUpdate {
        var join: JoinTableMapping
        var row: JoinRow
        var column: String
        var order: Int64
    }

    var inserts: [RowChange] = []
    var updates: [RowChange] = []
    var deletes: [ManagedObject] = []
    /// Inserted, then deleted before the save: forgotten, no SQL.
    var forgotten: [ManagedObject] = []
    /// Stored objects whose values changed (some need no row update: only a to-many changed).
    var changed: [ManagedObject] = []
    /// Objects updated that are not in ``changed`` (rows another object's to-many writes:
    /// an order or a hidden foreign key), in the order of ``updates``.
    var updatedBeyondChanged: [ManagedObjectID] = []
    var joinDeletes: [(join: JoinTableMapping, row: JoinRow)] = []
    var joinInserts: [JoinInsert] = []
    var joinOrderUpdates: [JoinOrderUpdate] = []
    /// Files of external binary data the save writes (values over the store's threshold).
    var externalWrites: [ExternalDataWrite] = []
    /// Rows whose external-storage columns the save replaces or deletes: the files they
    /// name are removed after the commit.
    var externalReplaced: [(table: String, primaryKey: Int64, columns: [String])] = []
    /// Files that values written back unread still name: never removed by this save.
    var externalKept: Set<String> = []
    /// The changes recorded in the persistent history, when the store keeps one.
    var history: [HistoryChange] = []
    /// Stored objects that new or changed rows point at through a to-one without inverse:
    /// nothing else version-checks them, so the save checks that their rows still exist.
    var referencedRows: [ManagedObjectID] = []
    /// The statements of ``updates``, index for index: their tables, columns and values
    /// (each update's ``RowChange/write`` is empty).
    var updateBatch = SQLiteStore.UpdateBatch()

    /// Gives the plan's large buffers back for the next save (``ScratchArrays``), once it is
    /// done with.
    mutating func recycleBuffers() {
        ScratchArrays.give(&inserts)
        ScratchArrays.give(&updates)
        ScratchArrays.give(&updateBatch.values)
        ScratchArrays.give(&updateBatch.rows)
    }

    /// Puts the keys reserved for new objects in the places of the rows that name them.
    mutating func resolveKeys(_ keys: [ManagedObjectID: Int64]) {
        for index in inserts.indices where !inserts[index].unresolved.isEmpty { inserts[index].resolveKeys(keys) }
        for index in updates.indices where !updates[index].unresolved.isEmpty {
            let first = updateBatch.rows[index].values.lowerBound
            for (place, id) in updates[index].unresolved { updateBatch.values[first + place] = keys[id].map(SQLValue.integer) ?? .null }
        }
    }
}

extension ManagedObjectContext {
    // MARK: Planning

    /// Works out what a save writes, in named steps: the columns and join rows to-many
    /// relationships write (``relationshipWrites(of:)``), the new rows (``planInserts``), the
    /// changed rows with their version checks (``planUpdates``), then history, external data
    /// and join rows.
    func makeSavePlan(overwrite: Set<ObjectIdentifier>) throws -> SavePlan {
        var plan = SavePlan()
        let all = touchedInSaveOrder()
        // New objects by entity number and insertion, deleted ones by entity number and key:
        // sorted as unretained references (`all` holds the objects), each object's entity
        // number and key read once, the number found by name once per run of one entity.
        var last: (name: String, number: Int)?
        func number(_ object: ManagedObject) -> Int {
            let name = object.entity.name
            if let last, last.name == name { return last.number }
            let number = entityNumber(name)
            last = (name, number)
            return number
        }
        var keyedInserts: [(number: Int, order: Int, object: Unmanaged<ManagedObject>)] = []
        var keyedDeletes: [(number: Int, order: Int64, object: Unmanaged<ManagedObject>)] = []
        // One pass, the objects borrowed from `all`: new and deleted ones keyed, inserted-then-
        // deleted ones forgotten, changed stored ones listed, each list in save order. (A pass
        // per list retained and released every object again, out of the cache.)
        all.forEachBorrowed { object in
            if object.isInaccessible && object.isDeleted {
                // Deleted because its row was gone: nothing to write, discarded with the save.
                plan.forgotten.append(object)
            } else if object.isInserted != object.isDeleted {
                if object.isInserted {
                    keyedInserts.append((number(object), object.insertionSequence, .passUnretained(object)))
                } else {
                    keyedDeletes.append((number(object), object.objectID.primaryKey, .passUnretained(object)))
                }
            } else if object.isInserted {
                plan.forgotten.append(object)
            } else if object.isUpdated {
                plan.changed.append(object)
            }
        }
        keyedInserts.sort { ($0.number, $0.order) < ($1.number, $1.order) }
        keyedDeletes.sort { ($0.number, $0.order) < ($1.number, $1.order) }
        let inserted = withExtendedLifetime(all) { keyedInserts.map { $0.object.takeUnretainedValue() } }
        plan.deletes = withExtendedLifetime(all) { keyedDeletes.map { $0.object.takeUnretainedValue() } }

        let writes = try relationshipWrites(of: all)
        planInserts(inserted, writes: writes, plan: &plan)
        try planUpdates(writes: writes, overwrite: overwrite, plan: &plan)
        plan.referencedRows = rowsReferencedWithoutInverse(plan)
        if store.tracksPersistentHistory { plan.history = historyChanges(plan) }
        for object in plan.deletes {
            let external = store.externalBinaryColumns(for: object.entity)
            guard !external.isEmpty, let table = store.mapping.entity(object.entity.name)?.table else { continue }
            plan.externalReplaced.append((table, object.objectID.primaryKey, external.values.sorted()))
        }
        planJoinRows(writes: writes, plan: &plan)
        return plan
    }

    /// What to-many relationships write besides their objects' own columns: positions in
    /// ordered to-manys and hidden foreign keys of to-manys without inverse (columns of other
    /// objects' rows), and join-table rows added, removed and reordered.
    struct RelationshipWrites {
        var extra: [ObjectIdentifier: [String: SaveValue]] = [:]
        var extraObjects: [ObjectIdentifier: ManagedObject] = [:]
        var joinAdds: [JoinRow: JoinTableMapping] = [:]
        var joinRemoves: [JoinRow: JoinTableMapping] = [:]
        var joinOrders: [JoinRow: [String: Int64]] = [:]

        mutating func setExtra(_ object: ManagedObject, _ column: String, _ value: SaveValue, onlyIfUnset: Bool = false) {
            if object.isDeleted { return }
            let key = ObjectIdentifier(object)
            if onlyIfUnset, extra[key]?[column] != nil { return }
            extra[key, default: [:]][column] = value
            extraObjects[key] = object
        }
    }

    /// What a to-many relationship writes beyond its objects' own rows — rows of its join
    /// table, its hidden foreign key in the destinations' rows, or (ordered) the order column
    /// of its inverse — as names; nil when it writes none of them.
    private func toManyWrites(_ relationship: RelationshipDescription, in entityMapping: EntityMapping) -> (join: String?, hidden: HiddenForeignKey?, orderColumn: String?)? {
        let joinName = entityMapping.manyToMany[relationship.name]
        let hidden = entityMapping.hiddenForeignKeys[relationship.name]
        let orderColumn = model.inverse(of: relationship).flatMap { inverse in
            store.mapping.entity(relationship.destinationEntityName)?.toOneColumns[inverse.name]?.orderColumn
        }
        guard joinName != nil || hidden != nil || (relationship.isOrdered && orderColumn != nil) else { return nil }
        return (joinName, hidden, orderColumn)
    }

    /// Step 1: what the changed to-many relationships of `all` write.
    func relationshipWrites(of all: [ManagedObject]) throws -> RelationshipWrites {
        var writes = RelationshipWrites()
        // A model none of whose to-manys writes beyond its objects' own rows: nothing to look at.
        guard modelShape.toManysWrite else { return writes }
        // Whether an entity has to-many relationships, once per entity (objects of an entity
        // come in runs); most changed objects have none to write.
        var last: (entity: String, hasToMany: Bool)?
        for object in all where !(object.isInserted && object.isDeleted) {
            if last?.entity != object.entity.name {
                last = (object.entity.name, object.entity.relationships.contains { $0.isToMany && !$0.isTransient })
            }
            guard last?.hasToMany == true, let entityMapping = store.mapping.entity(object.entity.name) else { continue }
            for relationship in object.entity.relationships where relationship.isToMany && !relationship.isTransient {
                guard let (joinName, hidden, orderColumn) = toManyWrites(relationship, in: entityMapping) else { continue }
                // What changed in the list.
                var current: [ManagedObjectID] = []
                var added: [ManagedObjectID] = []
                var removed: [ManagedObjectID] = []
                var listChanged = false
                if object.isDeleted {
                    if object.committed[relationship.name] == nil, object.storage[relationship.name] == nil {
                        _ = try fireRelationshipFault(relationship, of: object)
                    }
                    removed = object.committed.objectIDs(forKey: relationship.name) ?? []
                } else {
                    if object.storage[relationship.name] == nil, relationship.isOrdered, object.pendingToMany[relationship.name] != nil {
                        _ = try fireRelationshipFault(relationship, of: object)
                    }
                    if let ids = object.storage.objectIDs(forKey: relationship.name) {
                        current = ids
                        let old = object.committed.objectIDs(forKey: relationship.name) ?? []
                        let oldSet = Set(old), newSet = Set(ids)
                        added = ids.filter { !oldSet.contains($0) }
                        removed = old.filter { !newSet.contains($0) }
                        listChanged = ids != old
                    } else if let pending = object.pendingToMany[relationship.name] {
                        added = pending.added
                        removed = pending.removed.sorted { $0.primaryKey < $1.primaryKey }
                    }
                }
                if let joinName, let join = store.mapping.joinTable(named: joinName) {
                    let isSource =
                        join.relationship == relationship.name
                        && model.inheritanceChain(of: object.entity).contains { $0.name == join.sourceEntity }
                    func row(_ other: ManagedObjectID) -> JoinRow {
                        isSource
                            ? JoinRow(table: join.name, source: object.objectID, destination: other)
                            : JoinRow(table: join.name, source: other, destination: object.objectID)
                    }
                    for id in removed { writes.joinRemoves[row(id)] = join }
                    for id in added { writes.joinAdds[row(id)] = join }
                    if relationship.isOrdered, listChanged || object.isInserted,
                        let column = isSource ? join.destinationOrderColumn : join.sourceOrderColumn
                    {
                        for (index, id) in current.enumerated() { writes.joinOrders[row(id), default: [:]][column] = SchemaMapping.orderKey(at: index) }
                    }
                } else if let hidden {
                    for id in removed { writes.setExtra(self.object(with: id), hidden.column, .value(.null), onlyIfUnset: true) }
                    for id in added { writes.setExtra(self.object(with: id), hidden.column, .key(object.objectID)) }
                } else if let orderColumn, !object.isDeleted, listChanged || object.isInserted {
                    for (index, id) in current.enumerated() { writes.setExtra(self.object(with: id), orderColumn, .value(.integer(SchemaMapping.orderKey(at: index)))) }
                }
            }
        }

        return writes
    }

    /// Step 2: new rows, every column of the entity.
    func planInserts(_ inserted: [ManagedObject], writes: RelationshipWrites, plan: inout SavePlan) {
        ScratchArrays.reserve(&plan.inserts, adding: inserted.count)
        for object in inserted {
            guard let row = store.rowLayout(for: object.entity) else { continue }
            let bySlot = row.holds(object)
            var values: [SQLValue] = []
            values.reserveCapacity(row.roles.count)
            var ownKeyIndex: Int?
            var unresolved: [(index: Int, id: ManagedObjectID)] = []
            let extras = writes.extra.isEmpty ? nil : writes.extra[ObjectIdentifier(object)]
            for (index, role) in row.roles.enumerated() {
                switch role {
                case .primaryKey:
                    if object.objectID.isTemporaryID {
                        ownKeyIndex = values.count
                        values.append(.null)
                    } else {
                        values.append(.integer(object.objectID.primaryKey))
                    }
                case .entityKey: values.append(.integer(Int64(row.entityNumber)))
                case .optimisticLock: values.append(.integer(1))
                case .attribute, .foreignKey, .foreignEntityKey, .extra:
                    appendValue(ofColumn: index, of: row, object: object, bySlot: bySlot, extras: extras, to: &values, from: 0, unresolved: &unresolved, plan: &plan)
                }
            }
            plan.inserts.append(
                SavePlan.RowChange(
                    object: object, write: .init(table: row.table, columns: row.columnNames, values: values[...]), ownKeyIndex: ownKeyIndex,
                    unresolved: unresolved))
        }
    }

    /// Appends the value of column `index` of an object's row to a planned row, for the
    /// columns inserts and updates write alike: an attribute's, a to-one's key or entity
    /// number, an extra (an order or a hidden foreign key). The key columns (`Z_PK`, `Z_ENT`,
    /// `Z_OPT`) are the caller's.
    @inline(__always)
    private func appendValue(
        ofColumn index: Int, of row: EntityRowLayout, object: ManagedObject, bySlot: Bool, extras: [String: SaveValue]?,
        to values: inout [SQLValue], from base: Int, unresolved: inout [(index: Int, id: ManagedObjectID)], plan: inout SavePlan
    ) {
        switch row.roles[index] {
        case .primaryKey, .entityKey, .optimisticLock:
            return
        case .attribute:
            values.append(encode(object, column: index, of: row, bySlot: bySlot, plan: &plan))
        case .foreignKey:
            append(toOneID(object, column: index, of: row, bySlot: bySlot).map(SaveValue.key) ?? .value(.null), to: &values, from: base, unresolved: &unresolved)
        case .foreignEntityKey:
            append(toOneID(object, column: index, of: row, bySlot: bySlot).map(SaveValue.entity) ?? .value(.null), to: &values, from: base, unresolved: &unresolved)
        case .extra:
            append(extras?[row.columnNames[index]] ?? .value(.null), to: &values, from: base, unresolved: &unresolved)
        }
    }

    /// Appends a value to a planned row, whose first value is at `base` in `values`: what it
    /// binds when that is known now, else NULL in its place and the new object whose key goes
    /// there (by its place in the row).
    private func append(_ value: SaveValue, to values: inout [SQLValue], from base: Int, unresolved: inout [(index: Int, id: ManagedObjectID)]) {
        switch value {
        case .value(let value): values.append(value)
        case .key(let id):
            if id.isTemporaryID {
                unresolved.append((values.count - base, id))
                values.append(.null)
            } else {
                values.append(.integer(id.primaryKey))
            }
        case .entity(let id): values.append(.integer(Int64(entityNumber(id.entityName))))
        }
    }

    /// Step 3: changed rows, the changed columns only (every column under the overwrite
    /// policy), each version-checked.
    func planUpdates(writes: RelationshipWrites, overwrite: Set<ObjectIdentifier>, plan: inout SavePlan) throws {
        var candidates = plan.changed
        var extraCandidates: Set<ObjectIdentifier> = []
        if !writes.extraObjects.isEmpty {
            let changed = Set(plan.changed.map(ObjectIdentifier.init))
            for (key, object) in writes.extraObjects where !object.isInserted && !object.isDeleted && !changed.contains(key) {
                candidates.append(object)
                extraCandidates.insert(key)
            }
        }
        // Every stored object the save changes is version-checked, even when only a to-many
        // changed (an inverse kept on the other side): its row gets `UPDATE … SET Z_OPT = ?
        // WHERE Z_PK = ? AND Z_OPT = ?`, as in Core Data, so a row another writer changed or
        // deleted meanwhile is a conflict and no new row can point at a row that is gone. A
        // fault is fired for the version it was read at.
        var gone: [ManagedObjectID] = []
        for object in candidates where object.isFault {
            if !(try fireFaultIfRowExists(object)) { gone.append(object.objectID) }
        }
        if !gone.isEmpty { throw ConflictsFound(objectIDs: gone) }
        // Each object's row layout looked up once, then sorted by entity number and key. The
        // entries hold both unretained — `candidates` holds the objects and `layouts` the row
        // layouts until the loop below is done — so that making and freeing the list moves no
        // reference count (a retain and a release of each object, out of the cache, and the
        // runtime's generic destroy of each entry, in a save of 100,000).
        typealias RowEntry = (number: Int, key: Int64, object: Unmanaged<ManagedObject>, row: Unmanaged<EntityRowLayout>)
        var rows = ScratchArrays.take(RowEntry.self, capacity: candidates.count)
        defer { ScratchArrays.give(&rows) }
        var layouts: [EntityRowLayout] = []
        candidates.forEachBorrowed { object in
            guard !object.isFault, !object.isDeleted, let row = store.rowLayout(for: object.entity) else { return }
            if layouts.last !== row, !layouts.contains(where: { $0 === row }) { layouts.append(row) }
            rows.append((row.entityNumber, object.objectID.primaryKey, .passUnretained(object), .passUnretained(row)))
        }
        rows.sort { ($0.number, $0.key) < ($1.number, $1.key) }
        ScratchArrays.reserve(&plan.updates, adding: rows.count)
        // Rows of one entity changed in the same columns (most, in a bulk change) share one
        // column list, as they share one statement.
        var lastColumns: (row: EntityRowLayout, mask: UInt64, statement: Int)?
        // The rows' values go into one buffer, each row its range of it — an array of its own
        // per row was an allocation and a free per object.
        var batch = plan.updateBatch
        plan.updateBatch = SQLiteStore.UpdateBatch()
        defer { plan.updateBatch = batch }
        if batch.rows.isEmpty { batch.rows = ScratchArrays.take((statement: Int, values: Range<Int>).self, capacity: rows.count) }
        if batch.values.isEmpty { batch.values = ScratchArrays.take(SQLValue.self, capacity: rows.count * 4) }
        withExtendedLifetime((candidates, layouts)) {
            // Each entry's object and row layout borrowed (`takeUnretainedValue()` retained
            // and released both, per row).
            for entry in rows { entry.object._withUnsafeGuaranteedRef { object in entry.row._withUnsafeGuaranteedRef { row in
                let all = !overwrite.isEmpty && overwrite.contains(ObjectIdentifier(object))
                let extras = writes.extra.isEmpty ? nil : writes.extra[ObjectIdentifier(object)]
                let bySlot = row.holds(object)
                let written = bySlot ? object.writtenSlots : 0
                // Whether the row writes column `index`: a changed attribute or to-one, an extra.
                func included(_ index: Int) -> Bool {
                    switch row.roles[index] {
                    case .primaryKey, .entityKey, .optimisticLock: return false
                    case .extra: return extras?[row.columnNames[index]] != nil
                    case .attribute, .foreignKey, .foreignEntityKey:
                        if all { return true }
                        if bySlot, let slot = row.slots[index] {
                            return ObjectValues.mayDiffer(written, atSlot: slot) && object.valueDiffers(atSlot: slot)
                        }
                        return object.valueDiffers(forKey: row.propertyNames[index])
                    }
                }
                // The columns written, each decided once: bit n for column n (rows of up to 64
                // columns), else a flag per column.
                let narrow = row.roles.count <= 64
                let mask: UInt64
                if !all, bySlot, extras == nil, row.slotsCoverColumns, var bits = ObjectValues.trackedWrittenSlots(written) {
                    // Only the written slots' columns can be included (no extra to write): found
                    // from the slots, each slot's value compared once.
                    var found: UInt64 = 0
                    while bits != 0 {
                        let slot = bits.trailingZeroBitCount
                        bits &= bits &- 1
                        if slot < row.columnsOfSlot.count, row.columnsOfSlot[slot] != 0, object.valueDiffers(atSlot: slot) { found |= row.columnsOfSlot[slot] }
                    }
                    mask = found
                } else {
                    mask = narrow ? row.roles.indices.reduce(0) { included($1) ? $0 | 1 << UInt64($1) : $0 } : 0
                }
                let wide: [Bool] = narrow ? [] : row.roles.indices.map(included)
                // The written columns in order: the mask's bits one by one (a bulk change writes
                // a column or two of many), else the flags.
                func forEachWritten(_ body: (Int) -> Void) {
                    guard narrow else {
                        for index in wide.indices where wide[index] { body(index) }
                        return
                    }
                    var rest = mask
                    while rest != 0 {
                        body(rest.trailingZeroBitCount)
                        rest &= rest &- 1
                    }
                }
                let count = narrow ? mask.nonzeroBitCount : wide.reduce(0) { $1 ? $0 + 1 : $0 }
                let statement: Int
                if narrow, let lastColumns, lastColumns.row === row, lastColumns.mask == mask {
                    statement = lastColumns.statement
                } else {
                    var columns: [String] = []
                    columns.reserveCapacity(count)
                    forEachWritten { columns.append(row.columnNames[$0]) }
                    statement = batch.statements.count
                    batch.statements.append((row.table, columns))
                    if narrow { lastColumns = (row, mask, statement) }
                }
                // Its statement in `batch`: the change's own is left empty.
                var change = SavePlan.RowChange(object: object, write: .init(table: "", columns: [], values: []))
                let base = batch.values.count
                var replacedExternal: [String] = []
                let hasExternalBinary = object.entity.propertyLayout.hasExternalBinary
                forEachWritten { index in
                    // The key columns append nothing here (they come last, below).
                    appendValue(ofColumn: index, of: row, object: object, bySlot: bySlot, extras: extras, to: &batch.values, from: base, unresolved: &change.unresolved, plan: &plan)
                    if hasExternalBinary, row.roles[index] == .attribute, store.externalBinaryColumns(for: object.entity)[row.propertyNames[index]] != nil {
                        replacedExternal.append(row.columnNames[index])
                    }
                }
                // Then the new version, the key and the version read (`WHERE Z_PK = ? AND Z_OPT = ?`).
                let version = object.rowVersion
                batch.values.append(.integer(version + 1))
                batch.values.append(.integer(object.objectID.primaryKey))
                batch.values.append(.integer(version))
                batch.rows.append((statement, base..<batch.values.count))
                plan.updates.append(consume change)
                if !extraCandidates.isEmpty, extraCandidates.contains(ObjectIdentifier(object)) { plan.updatedBeyondChanged.append(object.objectID) }
                if !replacedExternal.isEmpty { plan.externalReplaced.append((row.table, object.objectID.primaryKey, replacedExternal)) }
            } } }
        }
    }

    /// The SQL value of the attribute in column `index` of an object's row: by slot when the
    /// object's values have the row layout's slots, else by name.
    private func encode(_ object: ManagedObject, column index: Int, of row: EntityRowLayout, bySlot: Bool, plan: inout SavePlan) -> SQLValue {
        guard bySlot, let slot = row.slots[index], let attribute = row.attributeTypes[index] else {
            return encode(object, attribute: row.propertyNames[index], plan: &plan)
        }
        if attribute.external {
            return store.encodeExternalBinary(object.storage[slot: slot], writes: &plan.externalWrites, kept: &plan.externalKept)
        }
        return ValueCoding.encode(object.storage[stored: slot], as: attribute.type)
    }

    /// The destination ID of the to-one in column `index` of an object's row.
    private func toOneID(_ object: ManagedObject, column index: Int, of row: EntityRowLayout, bySlot: Bool) -> ManagedObjectID? {
        if bySlot, let slot = row.slots[index] { return object.storage.objectID(at: slot) }
        return object.storage.objectID(forKey: row.propertyNames[index])
    }

    /// Step 4: join rows; removals and additions that cancel out are dropped.
    func planJoinRows(writes: RelationshipWrites, plan: inout SavePlan) {
        for (row, join) in writes.joinRemoves.sorted(by: { JoinRow.order($0.key, $1.key) }) where writes.joinAdds[row] == nil {
            plan.joinDeletes.append((join, row))
        }
        for (row, join) in writes.joinAdds.sorted(by: { JoinRow.order($0.key, $1.key) }) where writes.joinRemoves[row] == nil {
            let orders = writes.joinOrders[row] ?? [:]
            plan.joinInserts.append(
                .init(
                    join: join, row: row,
                    sourceOrder: join.sourceOrderColumn.flatMap { orders[$0] },
                    destinationOrder: join.destinationOrderColumn.flatMap { orders[$0] }))
        }
        for (row, orders) in writes.joinOrders.sorted(by: { JoinRow.order($0.key, $1.key) }) where writes.joinAdds[row] == nil && writes.joinRemoves[row] == nil {
            guard let join = store.mapping.joinTable(named: row.table) else { continue }
            for (column, order) in orders.sorted(by: { $0.key < $1.key }) {
                plan.joinOrderUpdates.append(.init(join: join, row: row, column: column, order: order))
            }
        }
    }

    /// Stored destinations of to-one relationships without inverse that the plan's inserts
    /// and updates write (an inverse would make the destination an updated, version-checked
    /// object). Sorted, each once.
    /// What a save plan's passes over every changed object look for, when the model has
    /// none of it: each pass is skipped (a read of each object, out of the cache, in a save
    /// of 100,000). Worked out once per context: model and mapping do not change.
    struct ModelShape {
        /// Whether some to-many writes beyond its objects' own rows (a join table, a hidden
        /// foreign key, an order column): what ``relationshipWrites(of:)`` looks for.
        var toManysWrite = false
        /// Whether some to-one has no inverse: what `rowsReferencedWithoutInverse` looks for.
        var hasToOnesWithoutInverse = false
    }

    /// The ``ModelShape`` of the context's model and store.
    func computeModelShape() -> ModelShape {
        var shape = ModelShape()
        for entity in model.entities {
            let entityMapping = store.mapping.entity(entity.name)
            for relationship in entity.relationships where !relationship.isTransient {
                if relationship.isToOne {
                    if model.inverse(of: relationship) == nil { shape.hasToOnesWithoutInverse = true }
                    continue
                }
                // As relationshipWrites(of:) decides it for each object of the entity.
                if let entityMapping, toManyWrites(relationship, in: entityMapping) != nil { shape.toManysWrite = true }
            }
        }
        return shape
    }

    private func rowsReferencedWithoutInverse(_ plan: SavePlan) -> [ManagedObjectID] {
        // Most models have no to-one without inverse (Core Data's model editor warns of them).
        guard modelShape.hasToOnesWithoutInverse else { return [] }
        // Each entity's to-ones without inverse, worked out once per entity in this save
        // (objects of an entity come in runs); most entities have none.
        var last: (entity: String, names: [String])?
        func uninversed(_ entity: EntityDescription) -> [String] {
            if let last, last.entity == entity.name { return last.names }
            let names = entity.relationships.filter { $0.isToOne && !$0.isTransient && model.inverse(of: $0) == nil }.map(\.name)
            last = (entity.name, names)
            return names
        }
        var checkedIDs: Set<ManagedObjectID>?
        var result: Set<ManagedObjectID> = []
        func collect(_ object: ManagedObject, onlyChanged: Bool) {
            for name in uninversed(object.entity) {
                if onlyChanged, !object.valueDiffers(forKey: name) { continue }
                guard let id = object.storage.objectID(forKey: name), !id.isTemporaryID else { continue }
                let checked = checkedIDs ?? Set(plan.updates.indices.map { plan.updates[$0].object.objectID })
                checkedIDs = checked
                if !checked.contains(id) { result.insert(id) }
            }
        }
        // By index: a RowChange copied costs its arrays' retains.
        for index in plan.inserts.indices { collect(plan.inserts[index].object, onlyChanged: false) }
        for index in plan.updates.indices { collect(plan.updates[index].object, onlyChanged: true) }
        return result.sorted { ($0.entityName, $0.primaryKey) < ($1.entityName, $1.primaryKey) }
    }

    /// The persistent history of a plan: an insert per new object, an update per changed
    /// stored object with the properties that changed, a delete per deleted object with the
    /// values its entity preserves after deletion (its fault fired for them if need be).
    private func historyChanges(_ plan: SavePlan) -> [HistoryChange] {
        var changes: [HistoryChange] = []
        for object in plan.inserts.indices.map({ plan.inserts[$0].object }) {
            changes.append(HistoryChange(type: .insert, entityNumber: entityNumber(object.entity.name), objectID: object.objectID, columns: nil, tombstones: []))
        }
        for object in plan.changed where !object.isInserted && !object.isDeleted {
            let changed = Set(object.changedValueIDs().keys).union(object.pendingToMany.keys)
            guard let bits = PersistentHistory.columnBits(changed: changed, of: object.entity) else { continue }
            changes.append(
                HistoryChange(
                    type: .update, entityNumber: entityNumber(object.entity.name), objectID: object.objectID, columns: bits, tombstones: []))
        }
        for object in plan.deletes {
            let preserved = PersistentHistory.tombstoneAttributes(of: object.entity)
            // A row already gone from the store keeps no values (its DELETE then conflicts).
            if !preserved.isEmpty, object.isFault { try? fireFault(object) }
            let tombstones = preserved.map { ValueCoding.encode(object.committed[$0.name] ?? nil, as: $0.attributeType) }
            changes.append(HistoryChange(type: .delete, entityNumber: entityNumber(object.entity.name), objectID: object.objectID, columns: nil, tombstones: tombstones))
        }
        return changes
    }

    private func encode(_ object: ManagedObject, attribute name: String, plan: inout SavePlan) -> SQLValue {
        guard let attribute = object.entity.attribute(named: name) else { return .null }
        if attribute.usesExternalBinaryStorage {
            return store.encodeExternalBinary(object.storage[name], writes: &plan.externalWrites, kept: &plan.externalKept)
        }
        return ValueCoding.encode(object.storage[name], as: attribute.attributeType)
    }
}
