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
        } else if let joinName = sourceMapping.manyToMany[relationship.name], let join = mapping.joinTable(named: joinName) {
            // The join table's columns are named from the side that named the table.
            let fromSource = join.relationship == relationship.name
                && model.inheritanceChain(of: sourceEntity).contains { $0.name == join.sourceEntity }
            let own = fromSource ? join.sourceColumn : join.destinationColumn
            let other = fromSource ? join.destinationColumn : join.sourceColumn
            sql += "\(join.name) t1 JOIN \(destinationMapping.table) t0 ON t0.Z_PK = t1.\(other) WHERE t1.\(own) = ?"
            if relationship.isOrdered, let order = fromSource ? join.destinationOrderColumn : join.sourceOrderColumn {
                sql += " ORDER BY t1.\(order)"
            }
        } else {
            throw FetchError("relationship \(relationship.name) of entity \(sourceEntity.name) has no foreign key or join table in the store")
        }
        let statement = try connection.cachedStatement(sql)
        try statement.bind([.integer(source.primaryKey)])
        var ids: [ManagedObjectID] = []
        while try statement.step() {
            var name = destination.name
            if destination.hasSubentities, let actual = mapping.entityNames[Int(statement.int64(at: 0))] { name = actual }
            ids.append(ManagedObjectID(entityName: name, storeIdentifier: identifier, primaryKey: statement.int64(at: 1)))
        }
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
}
