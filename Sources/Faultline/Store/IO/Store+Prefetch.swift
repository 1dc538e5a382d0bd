import FaultlineModel
import FaultlineSQL
import Foundation

extension SQLiteStore {
    /// Puts primary keys into `_Z_intarray0` for the statements `body` runs.
    ///
    /// Core Data binds id lists through an int-array virtual table named `_Z_intarray0` and
    /// selects `… IN (SELECT * FROM _Z_intarray0)`; Faultline does the same
    /// (`Connection.withIntArray`): an in-memory table registered on the connection, read in
    /// place — no statement fills or empties it, nothing is written (a read-only store
    /// included), and the log shows Core Data's two annotations.
    func withIntArray<T>(_ keys: [Int64], _ body: () throws -> T) throws -> T {
        if connection.isTraced {
            connection.emit(.message(category: "annotation", text: "Bound intarray _Z_intarray0"))
            connection.emit(.message(category: "annotation", text: "Bound intarray values."))
        }
        return try connection.withIntArray(keys, named: "_Z_intarray0", body)
    }

    /// The rows of objects of one entity (and its sub-entities) by primary key, in one
    /// statement, decoded into one page: how a batched fetch loads each batch. With
    /// `properties` (a batched fetch of partial objects), only their columns after
    /// `0, t0.Z_PK, t0.Z_OPT`. The keys may come in any order; rows come by primary key.
    func fetchPage(entityName: String, primaryKeys: [Int64], limit: Int? = nil, properties: [FetchProperty]? = nil) throws -> DecodedPage {
        let (entity, entityMapping) = try entityForFetch(entityName)
        var columns = selectedColumns(for: entity)
        var list = selectList(for: entity)
        var variant = ""
        if let properties {
            columns = try partialColumns(for: entity, properties: properties)
            list = "SELECT \(entityColumn(for: entity)), t0.Z_PK, t0.Z_OPT" + columns.map { ", t0.\($0.column)" }.joined()
            variant = columns.map(\.column).joined(separator: ",")
        }
        var sql = list + " FROM \(entityMapping.table) t0 WHERE  t0.Z_PK IN (SELECT * FROM _Z_intarray0)"
        if let limit { sql += "  LIMIT \(limit)" }
        return try withIntArray(primaryKeys) {
            try selectPage(
                sql: sql, arguments: [], decoder: rowDecoder(for: entity, columns: columns, variant: variant),
                expectedRows: min(primaryKeys.count, limit ?? primaryKeys.count))
        }
    }

    /// The rows one prefetch read: decoded into one page, with the primary key of the source
    /// each row belongs to (nil where a row names none) for a to-many; a to-one's rows are
    /// their own owners, and `owners` is empty.
    struct PrefetchedRows {
        var page = DecodedPage()
        var owners: [Int64?] = []
        var count: Int { page.count }
    }

    /// Prefetches one relationship for many source objects in one statement: the destination
    /// rows, decoded into one page, each with the primary key of the source it belongs to.
    ///
    /// For a to-one, the keys are the destinations' own (`t0.Z_PK IN …`) and the owner is the
    /// destination itself; for a to-many, the keys are the sources' and the owner column is the
    /// inverse foreign key, the hidden foreign key, or the join table's column.
    func prefetchRows(_ relationship: RelationshipDescription, sourceEntity: EntityDescription, keys: [Int64]) throws -> PrefetchedRows {
        let (destination, destinationMapping) = try entityForFetch(relationship.destinationEntityName)
        let sourceMapping = try entityForFetch(sourceEntity.name).1
        let columns = selectedColumns(for: destination)
        var sql = selectList(for: destination)
        // Where the owner's key is read: the row's own key (to-one), the inverse foreign key
        // already selected (to-many with inverse), or one more column (the others).
        var inverseName: String?
        var ownerColumn = false
        if relationship.isToOne {
            sql += " FROM \(destinationMapping.table) t0 WHERE  t0.Z_PK IN (SELECT * FROM _Z_intarray0)"
        } else if let inverse = model.inverse(of: relationship), inverse.isToOne, let fk = destinationMapping.toOneColumns[inverse.name] {
            inverseName = inverse.name
            sql += " FROM \(destinationMapping.table) t0 WHERE  t0.\(fk.foreignKey) IN (SELECT * FROM _Z_intarray0)"
            if relationship.isOrdered, let order = fk.orderColumn { sql += " ORDER BY t0.\(order)" }
        } else if let hidden = sourceMapping.hiddenForeignKeys[relationship.name] {
            ownerColumn = true
            sql += ", t0.\(hidden.column) FROM \(destinationMapping.table) t0 WHERE  t0.\(hidden.column) IN (SELECT * FROM _Z_intarray0)"
        } else if let join = joinColumns(of: relationship, from: sourceEntity, sourceMapping) {
            ownerColumn = true
            sql += ", t1.\(join.own) FROM \(destinationMapping.table) t0 JOIN \(join.table) t1 ON t0.Z_PK = t1.\(join.other) WHERE t1.\(join.own) IN (SELECT * FROM _Z_intarray0)"
            if relationship.isOrdered, let order = join.order { sql += " ORDER BY t1.\(order)" }
        } else {
            throw FetchRequestError("relationship \(relationship.name) of entity \(sourceEntity.name) has no foreign key or join table in the store")
        }
        let ownerIndex = 3 + columns.count
        let start = DispatchTime.now().uptimeNanoseconds
        let result: PrefetchedRows = try withIntArray(keys) {
            let statement = try connection.cachedStatement(sql)
            var result = PrefetchedRows()
            let decoder = rowDecoder(for: destination, columns: columns)
            let sqlSeconds: Double
            if ownerColumn {
                // The owner is the column after the entity's: read as each row is decoded.
                var owners: [Int64?] = []
                sqlSeconds = try decodePage(statement, with: decoder, into: &result.page) { row in owners.append(row.int64(at: ownerIndex)) }
                result.owners = owners
            } else {
                // A to-one's rows are at most one a key; a to-many's are not known.
                sqlSeconds = try decodePage(statement, with: decoder, into: &result.page, expectedRows: relationship.isToOne ? keys.count : 0)
                // A to-one's owner is the row itself: nobody reads it, none is listed.
                if let inverseName {
                    result.owners.reserveCapacity(result.page.count)
                    for index in 0..<result.page.count {
                        result.owners.append(result.page.values(at: index).objectID(forKey: inverseName)?.primaryKey)
                    }
                }
            }
            logFetchTimes(sqlSeconds: sqlSeconds, since: start, rows: result.count)
            return result
        }
        if connection.isTraced {
            connection.emit(.message(category: "annotation", text: "Prefetching with key '\(relationship.name)'.  Got \(result.count) rows."))
        }
        return result
    }
}
