import FaultlineModel
import FaultlineSQL
import Foundation

/// One fetched row, decoded: its ID, version and values by property name.
struct StoreRow: CustomStringConvertible {
    /// The entity of the row's object.
    var entity: EntityDescription
    var objectID: ManagedObjectID
    var version: Int64
    var values: ObjectValues

    /// `<Entity: x-coredata://…/Entity/p1; data: {count = 12; label = "Garage"}>`, for the log.
    var description: String {
        let data = values.keys.sorted().map { key -> String in
            switch values[key] {
            case let s as String: return "\(key) = \"\(s)\""
            case let id as ManagedObjectID: return "\(key) = \(id.uriRepresentation)"
            case let v?: return "\(key) = \(v)"
            case nil: return "\(key) = nil"
            }
        }
        return "<\(objectID.entityName): \(objectID.uriRepresentation); data: {\(data.joined(separator: "; "))}>"
    }
}

/// The prepared SELECT and the row decoder that fire faults of one entity. The statement is
/// the connection's cached one (kept for the connection's life).
final class FaultPlan {
    let statement: Statement
    let decoder: RowDecoder

    init(statement: Statement, decoder: RowDecoder) {
        self.statement = statement
        self.decoder = decoder
    }
}

/// A column of a SELECT and the property it fills.
struct SelectedColumn {
    enum Target {
        case attribute(AttributeDescription)
        case toOne(RelationshipDescription, entityColumn: Bool)
    }
    var column: String
    var target: Target
}

extension SQLiteStore {
    /// The columns Core Data selects for an entity: ancestors, the entity and its sub-entities in
    /// pre-order; for each, its attributes by name, then its to-one foreign keys by name.
    func selectedColumns(for entity: EntityDescription) -> [SelectedColumn] {
        if let cached = selectedColumnsCache[entity.name] { return cached }
        let columns = computeSelectedColumns(for: entity)
        selectedColumnsCache[entity.name] = columns
        return columns
    }

    private func computeSelectedColumns(for entity: EntityDescription) -> [SelectedColumn] {
        guard let entityMapping = mapping.entity(entity.name) else { return [] }
        let chain = model.inheritanceChain(of: entity).dropLast() + model.entityAndDescendants(of: entity)
        var result: [SelectedColumn] = []
        for e in chain {
            let eMapping = mapping.entity(e.name) ?? entityMapping
            for attribute in e.declaredAttributes.sorted(by: { $0.name < $1.name }) where !attribute.isTransient {
                if let column = eMapping.attributeColumns[attribute.name] {
                    result.append(SelectedColumn(column: column, target: .attribute(attribute)))
                }
            }
            for relationship in e.declaredRelationships.sorted(by: { $0.name < $1.name }) where relationship.isToOne && !relationship.isTransient {
                if let columns = eMapping.toOneColumns[relationship.name] {
                    result.append(SelectedColumn(column: columns.foreignKey, target: .toOne(relationship, entityColumn: false)))
                    if let c = columns.entityColumn {
                        result.append(SelectedColumn(column: c, target: .toOne(relationship, entityColumn: true)))
                    }
                }
            }
        }
        return result
    }

    /// The entity, or a ``FetchRequestError`` in Core Data's words.
    func entityForFetch(_ name: String) throws -> (EntityDescription, EntityMapping) {
        if let found = fetchEntityCache[name] { return found }
        guard let entity = model.entity(named: name), let entityMapping = mapping.entity(name) else {
            throw FetchRequestError("entity \(name) not found in the model; entities: \(model.entities.map(\.name).joined(separator: ", "))")
        }
        fetchEntityCache[name] = (entity, entityMapping)
        return (entity, entityMapping)
    }

    /// The SELECT Core Data runs for an object fetch, and its arguments.
    ///
    /// With `idsOnly`, selects only `Z_ENT` (or 0) and `Z_PK`, as Core Data's first statement of
    /// a batched fetch.
    /// With `columns`, selects `0, t0.Z_PK, t0.Z_OPT` and those columns only (a fetch of
    /// partial objects, ``FetchRequest/propertiesToFetch``).
    func selectSQL(
        for request: FetchRequest, entity: EntityDescription, entityMapping: EntityMapping, idsOnly: Bool = false,
        columns: [SelectedColumn]? = nil
    ) throws -> (String, [SQLValue]) {
        var compiled = try compiledWhereClause(for: request, forSorting: !request.sortDescriptors.isEmpty)
        // The SELECT of a cached clause without sorting or partial columns: built once.
        let reusable = request.sortDescriptors.isEmpty && columns == nil ? compiled.entry : nil
        if let select = reusable?.select, select.idsOnly == idsOnly, select.limit == request.fetchLimit, select.offset == request.fetchOffset {
            return (select.sql, compiled.arguments)
        }
        var orderText: String?
        if !request.sortDescriptors.isEmpty, var generator = compiled.generator {
            orderText = try translatingPredicateErrors { try generator.orderByClause(request.sortDescriptors) }
            compiled.joins = generator.joins  // sort key paths may join, or make a join outer
            compiled.needsDistinct = generator.needsDistinct
            compiled.arguments = generator.arguments
        }
        let list: String
        if idsOnly {
            list = "\(entityColumn(for: entity)), t0.Z_PK"
        } else if let columns {
            list = "\(entityColumn(for: entity)), t0.Z_PK, t0.Z_OPT" + columns.map { ", t0.\($0.column)" }.joined()
        } else {
            list = columnList(for: entity)
        }
        // The pieces, made one String at the end.
        var sql = SQLText(pieces: 14)
        sql.append(compiled.needsDistinct ? "SELECT DISTINCT " : "SELECT ")
        sql.append(list)
        sql.append(" FROM ")
        sql.append(entityMapping.table)
        sql.append(" t0")
        sql.append(compiled.joins)
        if let whereText = compiled.text {
            sql.append(" WHERE ")
            sql.append(whereText)
        }
        if let orderText {
            sql.append(" ORDER BY ")
            sql.append(orderText)
        }
        if request.fetchLimit > 0 { sql.append("  LIMIT \(request.fetchLimit)") }
        if request.fetchOffset > 0 {
            if request.fetchLimit <= 0 { sql.append("  LIMIT -1") }
            sql.append(" OFFSET \(request.fetchOffset)")
        }
        let text = sql.string
        reusable?.select = (idsOnly, request.fetchLimit, request.fetchOffset, text)
        return (text, compiled.arguments)
    }

    /// A predicate compiler for an entity.
    func predicateSQL(for entityName: String) throws -> PredicateSQL {
        if let fresh = predicateSQLCache[entityName] { return fresh }
        let fresh = try translatingPredicateErrors { try PredicateSQL(mapping: mapping, entityName: entityName) }
        predicateSQLCache[entityName] = fresh
        return fresh
    }

    /// Runs predicate compilation, turning its errors into ``FetchRequestError``s (same words).
    func translatingPredicateErrors<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as PredicateSQLError {
            throw FetchRequestError(error.message)
        }
    }

    /// The SELECT a fetch request runs and its bound values, without running it (for `explain`).
    public func sqlForFetch(_ request: FetchRequest) throws -> (sql: String, arguments: [SQLValue]) {
        let (entity, entityMapping) = try entityForFetch(request.entityName)
        switch request.resultType {
        case .dictionary: return try dictionaryQuery(for: request).sqlAndArguments
        case .count: return try countSQL(for: request)
        case .managedObjectID where !request.includesPropertyValues:
            return try selectSQL(for: request, entity: entity, entityMapping: entityMapping, idsOnly: true)
        default:
            if !request.includesPropertyValues { return try selectSQL(for: request, entity: entity, entityMapping: entityMapping, idsOnly: true) }
            if request.resultType == .managedObject, let properties = request.propertiesToFetch {
                let columns = try partialColumns(for: entity, properties: properties)
                return try selectSQL(for: request, entity: entity, entityMapping: entityMapping, idsOnly: request.fetchBatchSize > 0, columns: columns)
            }
            return try selectSQL(for: request, entity: entity, entityMapping: entityMapping, idsOnly: request.fetchBatchSize > 0)
        }
    }

    /// SQLite's `EXPLAIN QUERY PLAN` for a statement: one line per step, indented by depth.
    /// Not logged as one of the store's statements.
    public func queryPlan(_ sql: String, _ arguments: [SQLValue]) throws -> [String] {
        try connection.untraced {
            let rows = try connection.prepare("EXPLAIN QUERY PLAN " + sql)
            try rows.bind(arguments)
            var depth: [Int64: Int] = [0: 0]
            var lines: [String] = []
            while try rows.step() {
                let id = rows.int64(at: 0)
                let parent = rows.int64(at: 1)
                let level = (depth[parent] ?? 0) + 1
                depth[id] = level
                lines.append(String(repeating: "  ", count: level - 1) + (rows.value(at: 3).string ?? ""))
            }
            return lines
        }
    }

    /// Fetches only the keys of a fetch's objects: the first statement of a batched fetch.
    func fetchObjectKeys(_ request: FetchRequest) throws -> ObjectKeys {
        let start = DispatchTime.now().uptimeNanoseconds
        let (entity, entityMapping) = try entityForFetch(request.entityName)
        let (sql, arguments) = try selectSQL(for: request, entity: entity, entityMapping: entityMapping, idsOnly: true)
        let statement = try connection.cachedStatement(sql)
        try statement.bind(arguments)
        var primaryKeys: [Int64] = []
        var entityNumbers: [Int32] = []
        let mixed = entity.hasSubentities
        let sqlSeconds = try statement.forEachRow {
            primaryKeys.append(statement.int64(at: 1))
            if mixed { entityNumbers.append(Int32(truncatingIfNeeded: statement.int64(at: 0))) }
        }
        logFetchTimes(sqlSeconds: sqlSeconds, since: start, rows: primaryKeys.count)
        var namesByEntityNumber: [Int32: UInt32] = [:]
        if mixed {
            for number in mapping.entityNames.keys { namesByEntityNumber[Int32(truncatingIfNeeded: number)] = idNames(entityNumber: number) }
        }
        return ObjectKeys(
            names: idNames(entityName: entity.name), primaryKeys: primaryKeys,
            entityNumbers: mixed ? entityNumbers : nil, namesByEntityNumber: namesByEntityNumber)
    }

    /// Core Data's level-2 line after a fetch, and from level 3 the same with the rows' values.
    func logFetchDetails(entity: String, sql: String, rows: [StoreRow]) {
        let head = "fetch using NSSQLiteStatement <0x\(String(UInt(bitPattern: sql.hashValue) & 0xffff_ffff, radix: 16))> on entity '\(entity)' with sql text '\(sql)' returned \(rows.count) rows"
        connection.emit(.detail(levels: 2...2, category: "annotation") { head })
        let descriptions = rows.map(\.description)
        connection.emit(.detail(levels: 3...4, category: "annotation") {
            head + " with values: (\n" + descriptions.map { "    \"\($0)\"" }.joined(separator: ",\n") + "\n)"
        })
    }

    /// Logs Core Data's two annotations after a fetch.
    func logFetchTimes(sqlSeconds: Double, since start: UInt64, rows: Int) {
        guard connection.isTraced else { return }
        let total = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        connection.emit(.message(category: "annotation", text: String(format: "sql connection fetch time: %.4fs", sqlSeconds)))
        connection.emit(.message(category: "annotation", text: String(format: "total fetch execution time: %.4fs for %d rows.", total, rows)))
    }

    /// Fetches and decodes the rows of an object fetch, logging Core Data's annotations.
    func fetchRows(_ request: FetchRequest) throws -> [StoreRow] {
        let (entity, entityMapping) = try entityForFetch(request.entityName)
        let columns = selectedColumns(for: entity)
        let (sql, arguments) = try selectSQL(for: request, entity: entity, entityMapping: entityMapping)
        let rows = try selectRows(sql: sql, arguments: arguments, entity: entity, columns: columns)
        if connection.isTraced { logFetchDetails(entity: entity.name, sql: sql, rows: rows) }
        return rows
    }

    /// ``fetchRows(_:)`` into one decoded page, for a context to make its objects from.
    func fetchPage(_ request: FetchRequest) throws -> DecodedPage {
        let (entity, entityMapping) = try entityForFetch(request.entityName)
        let columns = selectedColumns(for: entity)
        let (sql, arguments) = try selectSQL(for: request, entity: entity, entityMapping: entityMapping)
        // Its row list the one the last such fetch gave back, if any (see `DecodedPage.recycle()`).
        let page = try selectPage(sql: sql, arguments: arguments, decoder: rowDecoder(for: entity, columns: columns), reusingKeptRows: true)
        if connection.isTraced {
            logFetchDetails(entity: entity.name, sql: sql, rows: (0..<page.count).map { page.storeRow(at: $0) })
        }
        return page
    }

    /// The start of Core Data's SELECT for the rows of an entity: `SELECT 0, t0.Z_PK, t0.Z_OPT, …`.
    func selectList(for entity: EntityDescription) -> String {
        "SELECT " + columnList(for: entity)
    }

    /// The first column Core Data selects: `t0.Z_ENT` when the entity shares its table with
    /// others (a parent or a sub-entity, leaf or not), else the constant `0`.
    func entityColumn(for entity: EntityDescription) -> String {
        entity.hasSubentities || entity.superentityName != nil ? "t0.Z_ENT" : "0"
    }

    /// `0, t0.Z_PK, t0.Z_OPT, t0.ZLABEL, …` (`t0.Z_ENT` first for an entity with sub-entities):
    /// the entity's ``selectedColumns(for:)``, worked out once per entity.
    func columnList(for entity: EntityDescription) -> String {
        if let cached = columnListCache[entity.name] { return cached }
        let list = "\(entityColumn(for: entity)), t0.Z_PK, t0.Z_OPT" + selectedColumns(for: entity).map { ", t0.\($0.column)" }.joined()
        columnListCache[entity.name] = list
        return list
    }

    /// Runs a SELECT built by ``selectList(for:)``, decodes its rows, and logs Core
    /// Data's two timing annotations.
    func selectRows(
        sql: String, arguments: [SQLValue], entity: EntityDescription, columns: [SelectedColumn], variant: String = ""
    ) throws -> [StoreRow] {
        let page = try selectPage(sql: sql, arguments: arguments, decoder: rowDecoder(for: entity, columns: columns, variant: variant))
        return (0..<page.count).map(page.storeRow(at:))
    }

    /// ``selectRows(sql:arguments:entity:columns:variant:)`` into one decoded page (the rows
    /// share its buffers), for a context to make or fill its objects from.
    /// `expectedRows`, `reusingKeptRows`: as in ``decodePage(_:with:into:expectedRows:reusingKeptRows:eachRow:)``.
    func selectPage(sql: String, arguments: [SQLValue], decoder: RowDecoder, expectedRows: Int = 0, reusingKeptRows: Bool = false) throws -> DecodedPage {
        let start = DispatchTime.now().uptimeNanoseconds
        let statement = try connection.cachedStatement(sql)
        try statement.bind(arguments)
        var page = DecodedPage()
        let sqlSeconds = try decodePage(statement, with: decoder, into: &page, expectedRows: expectedRows, reusingKeptRows: reusingKeptRows)
        logFetchTimes(sqlSeconds: sqlSeconds, since: start, rows: page.count)
        return page
    }

    /// Fetches one object's row by primary key (firing a fault).
    func fetchRow(for id: ManagedObjectID) throws -> StoreRow? {
        let plan = try faultPlan(for: id)
        let start = connection.isTraced ? DispatchTime.now().uptimeNanoseconds : 0  // read only when traced
        let statement = plan.statement
        statement.reset()
        try statement.bind(only: id.primaryKey)
        let (row, sqlSeconds) = try statement.firstRow { decodeRow(statement, with: plan.decoder) }
        if connection.isTraced { logFetchTimes(sqlSeconds: sqlSeconds, since: start, rows: row == nil ? 0 : 1) }
        return row
    }

    /// How a fault of an ID's entity is fired: its SELECT, prepared, and its row decoder,
    /// worked out once per entity and found by the ID's pair number (no name is hashed).
    private func faultPlan(for id: ManagedObjectID) throws -> FaultPlan {
        if let last = lastFaultPlan, last.names == id.names { return last.plan }
        if let plan = faultPlans[id.names] {
            lastFaultPlan = (id.names, plan)
            return plan
        }
        let (entity, entityMapping) = try entityForFetch(id.entityName)
        let columns = selectedColumns(for: entity)
        let sql: String
        if let cached = faultSQLCache[entity.name] {
            sql = cached
        } else {
            sql = selectList(for: entity) + " FROM \(entityMapping.table) t0 WHERE  t0.Z_PK = ?"
            faultSQLCache[entity.name] = sql
        }
        let plan = FaultPlan(statement: try connection.cachedStatement(sql), decoder: rowDecoder(for: entity, columns: columns))
        faultPlans[id.names] = plan
        return plan
    }

    /// Counts the objects of a fetch.
    func count(_ request: FetchRequest) throws -> Int {
        let start = DispatchTime.now().uptimeNanoseconds
        let (sql, arguments) = try countSQL(for: request)
        let statement = try connection.cachedStatement(sql)
        try statement.bind(arguments)
        var count = 0
        if try statement.step() { count = Int(statement.int64(at: 0)) }
        while try statement.step() {}
        statement.reset()
        let total = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        if connection.isTraced {
            connection.emit(.message(category: "annotation", text: String(format: "total count request execution time: %.4fs for count of %lu.", total, count)))
        }
        return count
    }

    /// The `SELECT COUNT` of a count request and its bound values.
    func countSQL(for request: FetchRequest) throws -> (String, [SQLValue]) {
        let (_, entityMapping) = try entityForFetch(request.entityName)
        let compiled = try compiledWhereClause(for: request, forSorting: false)
        let whereText = compiled.text
        var sql: String
        if whereText == nil && compiled.joins.isEmpty {
            sql = "SELECT COUNT(*) FROM \(entityMapping.table)"
        } else {
            sql = "SELECT COUNT(DISTINCT t0.Z_PK) FROM \(entityMapping.table) t0" + compiled.joins
            if let whereText { sql += " WHERE " + whereText }
        }
        return (sql, compiled.arguments)
    }
}

/// The objects of a batched fetch as compactly as they can be named: a primary key each, and
/// an entity number each when the entity has sub-entities. IDs are made when asked for, so a
/// fetch of a million objects holds 8 MB of keys, not a million IDs.
final class ObjectKeys {
    /// The ``ObjectIDNames`` number of the fetched entity in the store.
    let names: UInt32
    let primaryKeys: [Int64]
    let entityNumbers: [Int32]?
    /// The ``ObjectIDNames`` numbers of the store's entities by `Z_ENT` (for sub-entity rows).
    let namesByEntityNumber: [Int32: UInt32]

    init(names: UInt32, primaryKeys: [Int64], entityNumbers: [Int32]?, namesByEntityNumber: [Int32: UInt32]) {
        self.names = names
        self.primaryKeys = primaryKeys
        self.entityNumbers = entityNumbers
        self.namesByEntityNumber = namesByEntityNumber
    }

    var count: Int { primaryKeys.count }

    /// The ID of the object at `index`.
    func id(at index: Int) -> ManagedObjectID {
        var names = self.names
        if let entityNumbers, let actual = namesByEntityNumber[entityNumbers[index]] { names = actual }
        return ManagedObjectID(names: names, primaryKey: primaryKeys[index])
    }
}
