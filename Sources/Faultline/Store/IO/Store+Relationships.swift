import FaultlineModel
import FaultlineSQL
import Foundation

extension SQLiteStore {
    /// Fetches the destination IDs of a to-many relationship of one object, the way Core Data
    /// fires a to-many fault: `SELECT 0, t0.Z_PK` through the inverse foreign key, the hidden
    /// foreign key of a to-many without inverse, or the many-to-many join table; ordered
    /// relationships come back in their `Z_FOK_` order. The destinations are faults: each
    /// loads its own row when touched (the classic N+1, which prefetching avoids).
    ///
    /// Logs Core Data's annotation: `to-many relationship fault "inventories" for objectID …
    /// fulfilled from database.  Got 3 rows`.
    func fetchToManyIDs(_ relationship: RelationshipDescription, of source: ManagedObjectID) throws -> [ManagedObjectID] {
        let start = DispatchTime.now().uptimeNanoseconds
        let (sourceEntity, sourceMapping) = try entityForFetch(source.entityName)
        let (destination, destinationMapping) = try entityForFetch(relationship.destinationEntityName)
        var sql = "SELECT \(entityColumn(for: destination)), t0.Z_PK FROM "
        if let inverse = model.inverse(of: relationship), inverse.isToOne,
            let foreignKey = destinationMapping.toOneColumns[inverse.name]
        {
            sql += "\(destinationMapping.table) t0 WHERE  t0.\(foreignKey.foreignKey) = ?"
            if relationship.isOrdered, let order = foreignKey.orderColumn { sql += " ORDER BY t0.\(order)" }
        } else if let hidden = sourceMapping.hiddenForeignKeys[relationship.name] {
            sql += "\(destinationMapping.table) t0 WHERE  t0.\(hidden.column) = ?"
        } else if let join = joinColumns(of: relationship, from: sourceEntity, sourceMapping) {
            sql += "\(join.table) t1 JOIN \(destinationMapping.table) t0 ON t0.Z_PK = t1.\(join.other) WHERE t1.\(join.own) = ?"
            if relationship.isOrdered, let order = join.order { sql += " ORDER BY t1.\(order)" }
        } else {
            throw FetchRequestError("relationship \(relationship.name) of entity \(sourceEntity.name) has no foreign key or join table in the store")
        }
        let statement = try connection.cachedStatement(sql)
        try statement.bind([.integer(source.primaryKey)])
        let ids = try readObjectIDs(statement, entity: destination)
        let sqlSeconds = statement.elapsedSeconds
        statement.reset()
        logFetchTimes(sqlSeconds: sqlSeconds, since: start, rows: ids.count)
        if connection.isTraced {
            connection.emit(.message(
                category: "annotation",
                text: "to-many relationship fault \"\(relationship.name)\" for objectID \(source.uriRepresentation) fulfilled from database.  Got \(ids.count) rows"))
        }
        return ids
    }

    /// A many-to-many relationship's join table seen from one side: the column holding this
    /// side's keys, the other side's, and the destinations' order column. The columns are
    /// named from the side that named the table.
    func joinColumns(of relationship: RelationshipDescription, from sourceEntity: EntityDescription, _ sourceMapping: EntityMapping)
        -> (table: String, own: String, other: String, order: String?)?
    {
        guard let joinName = sourceMapping.manyToMany[relationship.name], let join = mapping.joinTable(named: joinName) else { return nil }
        let fromSource = join.relationship == relationship.name
            && model.inheritanceChain(of: sourceEntity).contains { $0.name == join.sourceEntity }
        return fromSource
            ? (join.name, join.sourceColumn, join.destinationColumn, join.destinationOrderColumn)
            : (join.name, join.destinationColumn, join.sourceColumn, join.sourceOrderColumn)
    }

    /// Steps a statement selecting `Z_ENT` (or 0) and `Z_PK`, and returns the object IDs.
    func readObjectIDs(_ statement: Statement, entity: EntityDescription) throws -> [ManagedObjectID] {
        var ids: [ManagedObjectID] = []
        while try statement.step() {
            var names = idNames(entityName: entity.name)
            if entity.hasSubentities, let actual = idNames(entityNumber: Int(statement.int64(at: 0))) { names = actual }
            ids.append(ManagedObjectID(names: names, primaryKey: statement.int64(at: 1)))
        }
        return ids
    }
}
