import FaultlineModel
import FaultlineSQL
import Foundation

extension SQLiteStore {
    /// Fetches the destination rows of a to-many relationship of one object, the way Core Data
    /// fires a to-many fault: through the inverse foreign key, the hidden foreign key of a
    /// to-many without inverse, or the many-to-many join table; ordered relationships come back
    /// in their `Z_FOK_` order.
    ///
    /// Logs Core Data's annotation: `to-many relationship fault "inventories" for objectID …
    /// fulfilled from database.  Got 3 rows`.
    func fetchToMany(_ relationship: RelationshipDescription, of source: ManagedObjectID) throws -> [StoreRow] {
        let (sourceEntity, sourceMapping) = try entityForFetch(source.entityName)
        let (destination, destinationMapping) = try entityForFetch(relationship.destinationEntityName)
        let columns = selectedColumns(for: destination)
        var sql = selectList(for: destination, columns: columns) + " FROM \(destinationMapping.table) t0"
        if let inverse = model.inverse(of: relationship), inverse.isToOne,
            let foreignKey = destinationMapping.toOneColumns[inverse.name]
        {
            sql += " WHERE  t0.\(foreignKey.foreignKey) = ?"
            if relationship.isOrdered, let order = foreignKey.orderColumn { sql += " ORDER BY t0.\(order)" }
        } else if let hidden = sourceMapping.hiddenForeignKeys[relationship.name] {
            sql += " WHERE  t0.\(hidden.column) = ?"
        } else if let joinName = sourceMapping.manyToMany[relationship.name], let join = mapping.joinTable(named: joinName) {
            // The join table's columns are named from the side that named the table.
            let fromSource = join.relationship == relationship.name
                && model.inheritanceChain(of: sourceEntity).contains { $0.name == join.sourceEntity }
            let ownColumn = fromSource ? join.sourceColumn : join.destinationColumn
            let otherColumn = fromSource ? join.destinationColumn : join.sourceColumn
            let orderColumn = fromSource ? join.destinationOrderColumn : join.sourceOrderColumn
            if join.destinationColumn == "REFLEXIVE" {
                sql += " JOIN \(join.name) t1 ON t0.Z_PK = t1.REFLEXIVE WHERE t1.\(join.sourceColumn) = ?"
            } else {
                sql += " JOIN \(join.name) t1 ON t0.Z_PK = t1.\(otherColumn) WHERE t1.\(ownColumn) = ?"
            }
            if relationship.isOrdered, let orderColumn { sql += " ORDER BY t1.\(orderColumn)" }
        } else {
            throw FetchError("relationship \(relationship.name) of entity \(sourceEntity.name) has no foreign key or join table in the store")
        }
        let rows = try selectRows(sql: sql, arguments: [.integer(source.primaryKey)], entity: destination, columns: columns)
        if connection.isTraced {
            connection.emit(.message(
                category: "annotation",
                text: "to-many relationship fault \"\(relationship.name)\" for objectID \(source.uriRepresentation) fulfilled from database.  Got \(rows.count) rows"))
        }
        return rows
    }
}
