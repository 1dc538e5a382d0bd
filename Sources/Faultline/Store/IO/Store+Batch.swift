import FaultlineModel
import FaultlinePredicate
import FaultlineSQL
import Foundation

/// What a batch request changed, worked out inside its transaction.
struct BatchOutcome {
    /// Objects whose rows were inserted.
    var inserted: [ManagedObjectID] = []
    /// Objects whose rows were updated (by the request, an upsert or a Nullify rule), and
    /// objects whose to-many lost a deleted object.
    var updated: [ManagedObjectID] = []
    /// Objects whose rows were deleted (by the request or a Cascade rule).
    var deleted: [ManagedObjectID] = []
    /// Rows of the request's own entity changed: what a `count` result reports.
    var count = 0
    /// The IDs a `objectIDs` result reports (the request's own rows).
    var resultIDs: [ManagedObjectID] = []
    /// The changes recorded in the persistent history, when the store keeps one.
    var history: [HistoryChange] = []
    /// External binary data files that deleted rows named (removed after `COMMIT`).
    var obsoleteExternalFiles: [String] = []
}

/// Batch delete, update and insert: Core Data's `NSBatchDeleteRequest`,
/// `NSBatchUpdateRequest` and `NSBatchInsertRequest` in SQL. Each function runs inside the
/// transaction the context opened; every value is bound.
///
/// Statement shapes (see `Documentation/Batch.md` for which are seen in Core Data's logs and
/// which are inferred):
///
/// - the keys of the rows a predicate selects: the fetch's own ID statement,
///   `SELECT 0, t0.Z_PK FROM ZRECIPE t0 WHERE …` (`t0.Z_ENT` first when the entity shares its table);
/// - delete: `DELETE FROM ZRECIPE WHERE Z_PK IN (SELECT * FROM _Z_intarray0)`;
/// - update: `UPDATE ZRECIPE SET ZPREPTIME = ?, Z_OPT = Z_OPT+1 WHERE Z_PK IN (SELECT * FROM _Z_intarray0)`;
/// - insert: `INSERT [OR IGNORE] INTO ZQUAKE(Z_PK, Z_ENT, Z_OPT, ZCODE, …) VALUES(?, …)
///   [ON CONFLICT(ZCODE) DO UPDATE SET Z_OPT = Z_OPT+1 , ZPLACE = excluded.ZPLACE , …]`.
extension SQLiteStore {
    /// How many levels of Cascade rules a batch delete follows before it gives up.
    static let batchCascadeDepthLimit = 100

    // MARK: Keys

    /// The objects a predicate selects, by the fetch's ID statement (logged).
    func batchTargetIDs(entityName: String, predicate: FLPredicate?, includesSubentities: Bool) throws -> [ManagedObjectID] {
        let (entity, entityMapping) = try entityForFetch(entityName)
        var fetch = FetchRequest(entityName: entityName)
        fetch.predicate = predicate
        fetch.includesSubentities = includesSubentities
        let (sql, arguments) = try selectSQL(for: fetch, entity: entity, entityMapping: entityMapping, idsOnly: true)
        return try connection.query(sql, arguments).compactMap { row in objectID(entityNumber: row[0], primaryKey: row[1], default: entity.name) }
    }

    /// An object ID from a selected `Z_ENT` (or the constant 0) and `Z_PK`.
    private func objectID(entityNumber: SQLValue, primaryKey: SQLValue, default name: String) -> ManagedObjectID? {
        guard let key = primaryKey.int64 else { return nil }
        let number = entityNumber.int64 ?? 0
        let entityName = number == 0 ? name : (mapping.entityNames[Int(number)] ?? name)
        return ManagedObjectID(entityName: entityName, storeIdentifier: identifier, primaryKey: key)
    }

    // MARK: Delete

    /// A batch delete: the keys, the delete rules of every relationship (cascading level by
    /// level), the tombstones and external files of the rows, then one `DELETE` per table.
    func executeBatchDelete(_ request: BatchDeleteRequest) throws -> BatchOutcome {
        let (entity, _) = try entityForFetch(request.entityName)
        let family = Set(model.entityAndDescendants(of: entity).map(\.name))
        var targets: [ManagedObjectID]
        if let ids = request.objectIDs {
            var seen: Set<ManagedObjectID> = []
            targets = []
            for id in ids where seen.insert(id).inserted {
                guard family.contains(id.entityName) else {
                    throw BatchRequestError(entity: request.entityName, "\(id.uriRepresentation) is a \(id.entityName): the objects of a batch delete must all be of one entity")
                }
                guard !id.isTemporaryID, id.storeIdentifier == identifier else {
                    throw BatchRequestError(entity: request.entityName, "\(id.uriRepresentation) is not an object of this store (a new object must be saved first)")
                }
                targets.append(id)
            }
        } else {
            targets = try batchTargetIDs(entityName: request.entityName, predicate: request.predicate, includesSubentities: request.includesSubentities)
        }
        var outcome = BatchOutcome()
        var deletedKeys: [String: Set<Int64>] = [:]
        var groups: [(table: String, entity: EntityDescription, keys: [Int64], depth: Int)] = []
        var updated: [ManagedObjectID: Set<String>] = [:]
        var updatedOrder: [ManagedObjectID] = []
        var level = targets
        var depth = 0
        while !level.isEmpty {
            guard depth <= SQLiteStore.batchCascadeDepthLimit else {
                throw BatchRequestError(entity: request.entityName, "Cascade delete rules reach more than \(SQLiteStore.batchCascadeDepthLimit) levels deep; nothing was deleted")
            }
            var next: [ManagedObjectID] = []
            let byEntity = Dictionary(grouping: level, by: \.entityName)
            for name in byEntity.keys.sorted(by: { (mapping.entity($0)?.entityNumber ?? 0, $0) < (mapping.entity($1)?.entityNumber ?? 0, $1) }) {
                guard let rowEntity = model.entity(named: name), let rowMapping = mapping.entity(name) else { continue }
                var fresh: [Int64] = []
                for id in byEntity[name] ?? [] where deletedKeys[rowMapping.table, default: []].insert(id.primaryKey).inserted {
                    fresh.append(id.primaryKey)
                }
                guard !fresh.isEmpty else { continue }
                fresh.sort()
                groups.append((rowMapping.table, rowEntity, fresh, depth))
                try withIntArray(fresh) {
                    for relationship in rowEntity.relationships where !relationship.isTransient {
                        try applyBatchDeleteRule(relationship, of: rowEntity, mapping: rowMapping, cascade: &next) { id, key in
                            if updated[id] == nil { updatedOrder.append(id) }
                            updated[id, default: []].formUnion(key.map { [$0] } ?? [])
                        }
                    }
                    if tracksPersistentHistory || !externalBinaryColumns(for: rowEntity).isEmpty {
                        try collectDeletedRowData(rowEntity, table: rowMapping.table, keys: fresh, into: &outcome)
                    }
                }
            }
            level = next
            depth += 1
        }
        for group in groups {
            try withIntArray(group.keys) {
                try connection.execute("DELETE FROM \(group.table) WHERE Z_PK IN (SELECT * FROM _Z_intarray0)")
            }
            if group.depth == 0 { outcome.count += connection.changes }
            let ids = group.keys.map { ManagedObjectID(entityName: group.entity.name, storeIdentifier: identifier, primaryKey: $0) }
            outcome.deleted += ids
            if group.depth == 0 { outcome.resultIDs += ids }
        }
        let deletedSet = Set(outcome.deleted)
        for id in updatedOrder where !deletedSet.contains(id) {
            outcome.updated.append(id)
            guard tracksPersistentHistory, let keys = updated[id], !keys.isEmpty, let entity = model.entity(named: id.entityName),
                let bits = PersistentHistory.columnBits(changed: keys, of: entity)
            else { continue }
            outcome.history.append(HistoryChange(type: .update, entityNumber: mapping.entity(id.entityName)?.entityNumber ?? 0, objectID: id, columns: bits, tombstones: []))
        }
        return outcome
    }

    /// The tombstones (persistent history) and external data files of rows about to be
    /// deleted; `_Z_intarray0` holds their keys.
    private func collectDeletedRowData(_ entity: EntityDescription, table: String, keys: [Int64], into outcome: inout BatchOutcome) throws {
        let number = mapping.entity(entity.name)?.entityNumber ?? 0
        if tracksPersistentHistory {
            let preserved = PersistentHistory.tombstoneAttributes(of: entity)
            var tombstones: [Int64: [SQLValue]] = [:]
            let columns = preserved.compactMap { mapping.entity(entity.name)?.attributeColumns[$0.name] }
            if !columns.isEmpty, columns.count == preserved.count {
                let sql = "SELECT Z_PK, \(columns.joined(separator: ", ")) FROM \(table) WHERE Z_PK IN (SELECT * FROM _Z_intarray0)"
                for row in try connection.query(sql) {
                    guard let key = row[0].int64 else { continue }
                    tombstones[key] = (0..<columns.count).map { row[$0 + 1] }
                }
            }
            for key in keys {
                let id = ManagedObjectID(entityName: entity.name, storeIdentifier: identifier, primaryKey: key)
                outcome.history.append(HistoryChange(type: .delete, entityNumber: number, objectID: id, columns: nil, tombstones: tombstones[key] ?? []))
            }
        }
        let external = externalBinaryColumns(for: entity)
        if !external.isEmpty, url != nil {
            for key in keys {
                outcome.obsoleteExternalFiles += try externalReferences(table: table, primaryKey: key, columns: external.values.sorted())
            }
        }
    }

    /// One relationship's delete rule for the rows in `_Z_intarray0`: Cascade adds the
    /// destinations to `cascade`; Nullify clears the destinations' inverse (failing on a
    /// required to-one, as Core Data's batch delete does) and reports them as updated; Deny
    /// refuses when there are destinations; No Action does nothing.
    private func applyBatchDeleteRule(
        _ relationship: RelationshipDescription, of entity: EntityDescription, mapping entityMapping: EntityMapping,
        cascade: inout [ManagedObjectID], updated: (ManagedObjectID, String?) -> Void
    ) throws {
        switch relationship.deleteRule {
        case .noAction:
            return
        case .deny:
            let destinations = try batchDestinationIDs(relationship, of: entity, mapping: entityMapping)
            if let first = destinations.first {
                throw BatchRequestError(
                    entity: entity.name, key: relationship.name,
                    "Batch delete failed due to the Deny delete rule of \(entity.name)/\(relationship.name): objects to delete still have destinations (\(first.uriRepresentation)…); nothing was deleted")
            }
        case .cascade:
            cascade += try batchDestinationIDs(relationship, of: entity, mapping: entityMapping)
            if let join = entityMapping.manyToMany[relationship.name].flatMap(mapping.joinTable(named:)) {
                try deleteJoinRows(join, relationship: relationship, of: entity)
            }
        case .nullify:
            let destinations = try batchDestinationIDs(relationship, of: entity, mapping: entityMapping)
            guard !destinations.isEmpty else { return }
            let inverse = model.inverse(of: relationship)
            if let join = entityMapping.manyToMany[relationship.name].flatMap(mapping.joinTable(named:)) {
                try deleteJoinRows(join, relationship: relationship, of: entity)
                for id in destinations { updated(id, inverse?.name) }
            } else if relationship.isToMany, inverse == nil, let hidden = entityMapping.hiddenForeignKeys[relationship.name] {
                try connection.execute("UPDATE \(hidden.table) SET \(hidden.column) = NULL, Z_OPT = Z_OPT+1 WHERE \(hidden.column) IN (SELECT * FROM _Z_intarray0)")
                for id in destinations { updated(id, nil) }
            } else if let inverse, inverse.isToOne, let destination = mapping.entity(relationship.destinationEntityName),
                let columns = destination.toOneColumns[inverse.name]
            {
                if !inverse.isOptional {
                    throw BatchRequestError(
                        entity: entity.name, key: relationship.name,
                        "Batch delete failed due to mandatory OTO nullify inverse on \(relationship.destinationEntityName)/\(inverse.name); nothing was deleted")
                }
                var sets = ["\(columns.foreignKey) = NULL"]
                if let c = columns.entityColumn { sets.append("\(c) = NULL") }
                if let c = columns.orderColumn { sets.append("\(c) = NULL") }
                try connection.execute(
                    "UPDATE \(destination.table) SET \(sets.joined(separator: ", ")), Z_OPT = Z_OPT+1 WHERE \(columns.foreignKey) IN (SELECT * FROM _Z_intarray0)")
                for id in destinations { updated(id, inverse.name) }
            } else {
                // The foreign key is in the deleted row: the destination's to-many loses it
                // with the row, and no SQL is needed.
                for id in destinations { updated(id, nil) }
            }
        }
    }

    /// `DELETE FROM Z_1TAGS WHERE Z_1ITEMS IN (SELECT * FROM _Z_intarray0)`: the join rows of
    /// deleted objects.
    private func deleteJoinRows(_ join: JoinTableMapping, relationship: RelationshipDescription, of entity: EntityDescription) throws {
        let lineage = model.inheritanceChain(of: entity).map(\.name)
        let near = join.relationship == relationship.name && lineage.contains(join.sourceEntity) ? join.sourceColumn : join.destinationColumn
        try connection.execute("DELETE FROM \(join.name) WHERE \(near) IN (SELECT * FROM _Z_intarray0)")
    }

    /// The destinations of a relationship for the rows in `_Z_intarray0`, in one statement:
    /// `SELECT 0, t0.Z_PK FROM ZDEST t0 WHERE  t0.ZOWNER IN (SELECT * FROM _Z_intarray0)` (or
    /// through the source's foreign key, or the join table).
    func batchDestinationIDs(_ relationship: RelationshipDescription, of entity: EntityDescription, mapping entityMapping: EntityMapping) throws -> [ManagedObjectID] {
        guard let destination = model.entity(named: relationship.destinationEntityName), let destinationMapping = mapping.entity(destination.name) else { return [] }
        let list = "SELECT \(entityColumn(for: destination)), t0.Z_PK FROM \(destinationMapping.table) t0 WHERE "
        let sql: String
        if relationship.isToOne {
            guard let fk = entityMapping.toOneColumns[relationship.name]?.foreignKey else { return [] }
            sql = list + " t0.Z_PK IN (SELECT t1.\(fk) FROM \(entityMapping.table) t1 WHERE t1.Z_PK IN (SELECT * FROM _Z_intarray0))"
        } else {
            let generator = try predicateSQL(for: entity.name)
            let hop = try translatingPredicateErrors { try generator.hop(generator.scopes[0].base, relationship) }
            switch hop {
            case .foreignKey(_, let column, _):
                sql = list + " t0.\(column) IN (SELECT * FROM _Z_intarray0)"
            case .joinTable(let table, let near, let far, _):
                sql = list + " t0.Z_PK IN (SELECT t1.\(far) FROM \(table) t1 WHERE t1.\(near) IN (SELECT * FROM _Z_intarray0))"
            }
        }
        return try connection.query(sql).compactMap { objectID(entityNumber: $0[0], primaryKey: $0[1], default: destination.name) }
    }

    // MARK: Update

    /// A batch update: the keys, then one `UPDATE` of the request's columns with `Z_OPT`
    /// bumped.
    func executeBatchUpdate(_ request: BatchUpdateRequest) throws -> BatchOutcome {
        let (entity, entityMapping) = try entityForFetch(request.entityName)
        guard !request.propertiesToUpdate.isEmpty else {
            throw BatchRequestError(entity: entity.name, "propertiesToUpdate is empty: a batch update needs at least one attribute to set")
        }
        var assignments: [(column: String, text: String, arguments: [SQLValue])] = []
        for (key, expression) in request.propertiesToUpdate {
            guard let attribute = entity.attribute(named: key) else {
                if entity.relationship(named: key) != nil {
                    throw BatchRequestError(entity: entity.name, key: key, "a batch update cannot change relationships")
                }
                throw BatchRequestError(entity: entity.name, key: key, "keypath \(key) not found in entity \(entity.name)")
            }
            guard !attribute.isTransient, !attribute.isDerived, let column = entityMapping.attributeColumns[key] else {
                throw BatchRequestError(entity: entity.name, key: key, "\(key) is \(attribute.isTransient ? "transient" : "derived"): a batch update sets stored attributes only")
            }
            if let constant = expression.constantValue {
                assignments.append((column, "?", [try batchEncode(constant.anyValue, attribute: attribute, entity: entity.name, row: nil)]))
            } else {
                var generator = try predicateSQL(for: entity.name)
                do {
                    let (text, arguments) = try generator.batchUpdateValue(expression, attribute: attribute)
                    assignments.append((column, text, arguments))
                } catch let error as PredicateSQLError {
                    throw BatchRequestError(entity: entity.name, key: key, error.message)
                }
            }
        }
        // In the table's column order, so the statement is the same whatever the dictionary's order.
        let order = Dictionary(uniqueKeysWithValues: (mapping.table(named: entityMapping.table)?.columns ?? []).enumerated().map { ($1.name, $0) })
        assignments.sort { (order[$0.column] ?? 0, $0.column) < (order[$1.column] ?? 0, $1.column) }
        var outcome = BatchOutcome()
        let targets = try batchTargetIDs(entityName: request.entityName, predicate: request.predicate, includesSubentities: request.includesSubentities)
        guard !targets.isEmpty else { return outcome }
        let sets = assignments.map { "\($0.column) = \($0.text)" } + ["Z_OPT = Z_OPT+1"]
        try withIntArray(targets.map(\.primaryKey)) {
            try connection.execute(
                "UPDATE \(entityMapping.table) SET \(sets.joined(separator: ", ")) WHERE Z_PK IN (SELECT * FROM _Z_intarray0)",
                assignments.flatMap(\.arguments))
        }
        outcome.count = connection.changes
        outcome.updated = targets
        outcome.resultIDs = targets
        if tracksPersistentHistory {
            let keys = Set(request.propertiesToUpdate.keys)
            for id in targets {
                guard let rowEntity = model.entity(named: id.entityName), let bits = PersistentHistory.columnBits(changed: keys, of: rowEntity) else { continue }
                outcome.history.append(HistoryChange(type: .update, entityNumber: mapping.entity(id.entityName)?.entityNumber ?? 0, objectID: id, columns: bits, tombstones: []))
            }
        }
        return outcome
    }

    /// A value for a column, checked and converted for its attribute (nil and `NSNull` are
    /// NULL); binary data that may live outside the store is written inline.
    func batchEncode(_ value: Any?, attribute: AttributeDescription, entity: String, row: Int?) throws -> SQLValue {
        guard let value, !(value is NSNull) else { return .null }
        let converted: Any
        do {
            converted = try AttributeValues.coerce(value, to: attribute, entityName: entity, objectID: nil)
        } catch let error as ManagedObjectError {
            throw BatchRequestError(entity: entity, key: attribute.name, row: row, error.message)
        }
        if attribute.usesExternalBinaryStorage { return ValueCoding.encodeExternalBinaryInline(converted as? Data) }
        return ValueCoding.encode(converted, as: attribute.attributeType)
    }

    // MARK: Insert

    /// The statement of a batch insert into an entity's table: the fixed columns and every
    /// stored attribute, plain, `OR IGNORE`, or with one `ON CONFLICT(…) DO UPDATE` per
    /// uniqueness constraint.
    func batchInsertSQL(for entity: EntityDescription, resolution: BatchInsertRequest.ConflictResolution) -> (sql: String, attributes: [AttributeDescription]) {
        // The fixed columns, then the stored attributes by name (the log's
        // `ZCODE, ZMAGNITUDE, ZPLACE, ZTIME`), not the table's type-grouped order.
        let entityMapping = mapping.entity(entity.name)
        var names = ["Z_PK", "Z_ENT", "Z_OPT"]
        var attributes: [AttributeDescription] = []
        for attribute in entity.attributes.sorted(by: { $0.name < $1.name }) where !attribute.isTransient && !attribute.isDerived {
            guard let column = entityMapping?.attributeColumns[attribute.name] else { continue }
            names.append(column)
            attributes.append(attribute)
        }
        let table = entityMapping?.table ?? ""
        let constraints = batchConstraintColumns(of: entity)
        let placeholders = Array(repeating: "?", count: names.count).joined(separator: ", ")
        var sql = (resolution == .ignore && !constraints.isEmpty ? "INSERT OR IGNORE INTO " : "INSERT INTO ") + "\(table)(\(names.joined(separator: ", "))) VALUES(\(placeholders))"
        if resolution == .upsert {
            for constraint in constraints {
                let updated = names.dropFirst(3).filter { !constraint.contains($0) }
                let sets = ["Z_OPT = Z_OPT+1"] + updated.map { "\($0) = excluded.\($0)" }
                sql += " ON CONFLICT(\(constraint.joined(separator: ", "))) DO UPDATE SET \(sets.joined(separator: " , "))"
            }
        }
        return (sql, attributes)
    }

    /// The columns of each uniqueness constraint of an entity (inherited ones included) that
    /// a batch insert can conflict on: constraints over attributes only.
    func batchConstraintColumns(of entity: EntityDescription) -> [[String]] {
        guard let entityMapping = mapping.entity(entity.name) else { return [] }
        return model.inheritanceChain(of: entity).flatMap(\.uniquenessConstraints).compactMap { properties in
            let columns = properties.compactMap { entityMapping.attributeColumns[$0] }
            return columns.count == properties.count && !columns.isEmpty ? columns : nil
        }
    }

    /// A batch insert: keys reserved for every row, then one prepared statement run per row.
    func executeBatchInsert(
        entityName: String, rows: [[String: Any]], resolution: BatchInsertRequest.ConflictResolution, needsIDs: Bool
    ) throws -> BatchOutcome {
        let (entity, entityMapping) = try entityForFetch(entityName)
        guard !entity.isAbstract else { throw BatchRequestError(entity: entityName, "\(entityName) is abstract: no object of it can be inserted") }
        var outcome = BatchOutcome()
        guard !rows.isEmpty else { return outcome }
        let (sql, attributes) = batchInsertSQL(for: entity, resolution: resolution)
        let byName = Dictionary(uniqueKeysWithValues: attributes.map { ($0.name, $0) })
        let defaults = attributes.map { attribute in
            (try? batchEncode(AttributeValues.defaultValue(of: attribute), attribute: attribute, entity: entityName, row: nil)) ?? .null
        }
        let constraints = model.inheritanceChain(of: entity).flatMap(\.uniquenessConstraints).filter { $0.allSatisfy { byName[$0] != nil } }
        let first = try reservePrimaryKeys(root: model.rootEntity(of: entity).name, count: rows.count)
        let statement = try connection.cachedStatement(sql)
        let number = SQLValue.integer(Int64(entityMapping.entityNumber))
        let updatedColumns = Set(attributes.map(\.name)).subtracting(constraints.flatMap { $0 })
        let tracks = tracksPersistentHistory
        for (index, row) in rows.enumerated() {
            var values: [SQLValue] = [.integer(first + Int64(index)), number, .integer(1)]
            values.reserveCapacity(3 + attributes.count)
            for key in row.keys where byName[key] == nil {
                if entity.relationship(named: key) != nil {
                    throw BatchRequestError(entity: entityName, key: key, row: index, "a batch insert cannot set relationships")
                }
                let attribute = entity.attribute(named: key)
                throw BatchRequestError(
                    entity: entityName, key: key, row: index,
                    attribute.map { "\($0.name) is \($0.isTransient ? "transient" : "derived"): a batch insert sets stored attributes only" }
                        ?? "keypath \(key) not found in entity \(entityName)")
            }
            for (offset, attribute) in attributes.enumerated() {
                if let value = row[attribute.name] {
                    values.append(try batchEncode(value, attribute: attribute, entity: entityName, row: index))
                } else {
                    values.append(defaults[offset])
                }
            }
            let key = first + Int64(index)
            try statement.bind(values)
            do {
                try statement.run()
            } catch let error as SQLiteError where error.code == 2067 {  // SQLITE_CONSTRAINT_UNIQUE
                let described = constraints.first.map { c in c.map { "\($0) = \(row[$0].map { "\($0)" } ?? "nil")" }.joined(separator: ", ") } ?? ""
                throw BatchRequestError(
                    entity: entityName, row: index,
                    "breaks the uniqueness constraint (\(described)): an object with these values already exists; nothing was inserted")
            }
            guard connection.changes > 0 else { continue }  // ignored
            outcome.count += 1
            if connection.lastInsertRowID == key {
                let id = ManagedObjectID(entityName: entityName, storeIdentifier: identifier, primaryKey: key)
                outcome.inserted.append(id)
                outcome.resultIDs.append(id)
                if tracks { outcome.history.append(HistoryChange(type: .insert, entityNumber: entityMapping.entityNumber, objectID: id, columns: nil, tombstones: [])) }
            } else if needsIDs || tracks {
                // An upsert updated the stored row: find it by the constraint that matched.
                guard let id = try upsertedRow(entity: entity, mapping: entityMapping, constraints: constraints, values: values, attributes: attributes) else { continue }
                outcome.updated.append(id)
                outcome.resultIDs.append(id)
                if tracks, let bits = PersistentHistory.columnBits(changed: updatedColumns.intersection(row.keys), of: entity) {
                    outcome.history.append(HistoryChange(type: .update, entityNumber: entityMapping.entityNumber, objectID: id, columns: bits, tombstones: []))
                }
            }
        }
        return outcome
    }

    /// The stored row an upsert updated: `SELECT Z_PK FROM ZQUAKE WHERE ZCODE = ?` for each
    /// constraint until one matches.
    private func upsertedRow(
        entity: EntityDescription, mapping entityMapping: EntityMapping, constraints: [[String]], values: [SQLValue], attributes: [AttributeDescription]
    ) throws -> ManagedObjectID? {
        let position = Dictionary(uniqueKeysWithValues: attributes.enumerated().map { ($1.name, $0 + 3) })
        for constraint in constraints {
            let columns = constraint.compactMap { entityMapping.attributeColumns[$0] }
            let arguments = constraint.compactMap { position[$0].map { values[$0] } }
            guard columns.count == constraint.count, arguments.count == constraint.count else { continue }
            let sql = "SELECT Z_PK, Z_ENT FROM \(entityMapping.table) WHERE " + columns.map { "\($0) = ?" }.joined(separator: " AND ")
            if let row = try connection.query(sql, arguments).first, let key = row[0].int64 {
                let name = row[1].int64.flatMap { mapping.entityNames[Int($0)] } ?? entity.name
                return ManagedObjectID(entityName: name, storeIdentifier: identifier, primaryKey: key)
            }
        }
        return nil
    }
}
