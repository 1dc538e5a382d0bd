import FaultlineModel
import FaultlinePredicate
import FaultlineSQL
import Foundation

/// A dictionary fetch, compiled: its SQL, bound values and how to read each row.
struct DictionaryQuery {
    var sql: String
    var arguments: [SQLValue]
    var items: [PredicateSQL.SelectItem]

    var sqlAndArguments: (String, [SQLValue]) { (sql, arguments) }
}

extension SQLiteStore {
    /// Compiles a dictionary fetch:
    /// `SELECT [DISTINCT ]<items> FROM ZT t0<joins>[ WHERE …][ GROUP BY  <groups>][ HAVING …][ ORDER BY …][  LIMIT n]`.
    ///
    /// - Throws: ``FetchRequestError`` for unknown keys, a plain property beside `GROUP BY` that is
    ///   not grouped, a `HAVING` without `GROUP BY`, and functions the store cannot compute.
    func dictionaryQuery(for request: FetchRequest) throws -> DictionaryQuery {
        try dictionaryQuery(for: request, batchOfKeys: false)
    }

    /// ``dictionaryQuery(for:)``, or with `batchOfKeys` the query of one batch of a batched
    /// dictionary fetch: `SELECT t0.Z_PK, <items> FROM ZT t0<joins> WHERE t0.Z_PK IN (SELECT *
    /// FROM _Z_intarray0)` — the keys (already filtered, sorted and limited by the key fetch)
    /// in the temporary table; no predicate, order or limit of its own.
    func dictionaryQuery(for request: FetchRequest, batchOfKeys: Bool) throws -> DictionaryQuery {
        let (entity, entityMapping) = try entityForFetch(request.entityName)
        var generator = try predicateSQL(for: request.entityName)
        let properties = request.propertiesToFetch ?? Self.allProperties(of: entity)
        guard !properties.isEmpty else { throw FetchRequestError("a dictionary fetch of \(entity.name) needs propertiesToFetch") }
        var items: [PredicateSQL.SelectItem] = []
        for property in properties { items.append(try translatingPredicateErrors { try generator.selectItem(property) }) }
        var seen: Set<String> = []
        for item in items where !seen.insert(item.key).inserted {
            throw FetchRequestError("propertiesToFetch names \(item.key) twice (each name is a key of the result dictionaries)")
        }
        var whereText = try translatingPredicateErrors { try generator.whereClause(batchOfKeys ? nil : request.predicate, includesSubentities: request.includesSubentities) }
        if batchOfKeys {
            let keys = "t0.Z_PK IN (SELECT * FROM _Z_intarray0)"
            whereText = whereText.map { "(\($0)) AND \(keys)" } ?? keys
        }
        var groups: [PredicateSQL.SelectItem] = []
        if let groupBy = request.propertiesToGroupBy, !groupBy.isEmpty {
            for property in groupBy { groups.append(try translatingPredicateErrors { try generator.selectItem(property) }) }
            let grouped = Set(groups.map { $0.keyPath ?? $0.key })
            if let loose = items.first(where: { $0.isKeyPath && !grouped.contains($0.keyPath ?? $0.key) }) {
                throw FetchRequestError(
                    "Invalid fetch request: SELECT clauses in queries with GROUP BY components can only contain properties named in the GROUP BY or aggregate functions (\(loose.key) is neither)")
            }
        }
        // Values the HAVING predicate names get an alias, in the order they are selected.
        var aliases: [String: String] = [:]
        var having: PredicateSQL.Piece?
        if let predicate = request.havingPredicate {
            guard !groups.isEmpty else { throw FetchRequestError("a havingPredicate needs propertiesToGroupBy (HAVING filters groups)") }
            let named = Self.variables(in: predicate)
            for item in items where named.contains(item.key) { aliases[item.key] = "__var\(aliases.count)" }
            generator.selectAliases = aliases
            having = try translatingPredicateErrors { try generator.havingClause(predicate) }
        }
        let orderText = batchOfKeys ? nil : try translatingPredicateErrors { try generator.orderByClause(request.sortDescriptors) }
        var sql = request.returnsDistinctResults ? "SELECT DISTINCT " : "SELECT "
        if batchOfKeys { sql += "t0.Z_PK, " }
        sql += items.map { item in item.selectText + (aliases[item.key].map { " AS \($0)" } ?? "") }.joined(separator: ", ")
        sql += " FROM \(entityMapping.table) t0" + generator.joins
        if let whereText { sql += " WHERE " + whereText }
        if !groups.isEmpty { sql += " GROUP BY " + groups.map(\.piece.text).joined(separator: ", ") }
        if let having { sql += " HAVING " + having.text }
        if let orderText { sql += " ORDER BY " + orderText }
        if request.fetchLimit > 0, !batchOfKeys { sql += "  LIMIT \(request.fetchLimit)" }
        if request.fetchOffset > 0, !batchOfKeys {
            if request.fetchLimit <= 0 { sql += "  LIMIT -1" }
            sql += " OFFSET \(request.fetchOffset)"
        }
        let arguments = items.flatMap(\.piece.arguments) + generator.arguments + groups.flatMap(\.piece.arguments) + (having?.arguments ?? [])
        return DictionaryQuery(sql: sql, arguments: arguments, items: items)
    }

    /// What a dictionary fetch without ``FetchRequest/propertiesToFetch`` returns: the
    /// entity's stored attributes and to-one relationships, by name.
    static func allProperties(of entity: EntityDescription) -> [FetchProperty] {
        entity.attributes.filter { !$0.isTransient }.map(\.name).sorted().map(FetchProperty.keyPath)
            + entity.relationships.filter { $0.isToOne && !$0.isTransient }.map(\.name).sorted().map(FetchProperty.keyPath)
    }

    /// The `$variables` a predicate names (outside subqueries).
    static func variables(in predicate: FLPredicate) -> Set<String> {
        var names: Set<String> = []
        func visit(_ e: FLExpression, _ depth: Int) {
            guard depth < FLNestingDepth.maximum else { return }
            switch e.node {
            case .variable(let name): names.insert(name)
            case .function(_, let args), .aggregate(let args): args.forEach { visit($0, depth + 1) }
            case .member(let base, _): visit(base, depth + 1)
            default: break
            }
        }
        func visit(_ p: FLPredicate, _ depth: Int) {
            guard depth < FLNestingDepth.maximum else { return }
            switch p.node {
            case .constant: break
            case .comparison(let c): visit(c.left, depth + 1); visit(c.right, depth + 1)
            case .and(let items), .or(let items): items.forEach { visit($0, depth + 1) }
            case .not(let inner): visit(inner, depth + 1)
            }
        }
        visit(predicate, 0)
        return names
    }

    /// Runs a dictionary fetch: one dictionary per row, keys by ``FetchProperty/name``, a
    /// NULL leaving its key out. Logs the statement and Core Data's two annotations.
    func fetchDictionaries(_ request: FetchRequest) throws -> [[String: Any]] {
        let start = DispatchTime.now().uptimeNanoseconds
        let query = try dictionaryQuery(for: request)
        let statement = try connection.cachedStatement(query.sql)
        try statement.bind(query.arguments)
        let reader = DictionaryRowReader(items: query.items, firstColumn: 0)
        var results: [[String: Any]] = []
        if request.fetchLimit > 0 { results.reserveCapacity(min(request.fetchLimit, 4096)) }
        let entityName = request.entityName
        let other = { (kind: PredicateSQL.SelectedValue, column: Int) in self.decodeSelected(kind, statement, at: column, entityName: entityName) }
        let sqlSeconds = try statement.forEachRow { results.append(reader.row(statement, other: other)) }
        logFetchTimes(sqlSeconds: sqlSeconds, since: start, rows: results.count)
        return results
    }

    /// Runs a dictionary fetch into ``FetchedRows``: the values of the rows in buffers of
    /// ``FetchedRows/rowsPerChunk(keyCount:)`` rows, the keys once. Logs as
    /// ``fetchDictionaries(_:)`` does.
    func fetchValueRows(_ request: FetchRequest) throws -> FetchedRows {
        let start = DispatchTime.now().uptimeNanoseconds
        let query = try dictionaryQuery(for: request)
        let statement = try connection.cachedStatement(query.sql)
        try statement.bind(query.arguments)
        let reader = DictionaryRowReader(items: query.items, firstColumn: 0)
        let keys = FetchedRowKeys(query.items.map(\.key))
        let width = reader.width
        precondition(width == keys.names.count, "a dictionary row reads \(width) values for \(keys.names.count) keys")
        let rowsPerChunk = FetchedRows.rowsPerChunk(keyCount: width)
        let fullSize = rowsPerChunk * width
        // The first chunk as big as the limit asks for, or small (a fetch of a few rows, an
        // aggregate, keeps no full-size buffer): it grows, doubling, to full size; the others
        // are made full-size.
        let firstRows = min(request.fetchLimit > 0 ? request.fetchLimit : Self.firstChunkRows, rowsPerChunk)
        var chunks: [ValueChunk] = []
        var values = ValueChunk(capacity: firstRows * width)
        var rows = 0
        let entityName = request.entityName
        let other = { (kind: PredicateSQL.SelectedValue, column: Int) in self.decodeSelected(kind, statement, at: column, entityName: entityName) }
        let sqlSeconds = try statement.forEachRow {
            if !values.hasRoom(for: width) {
                if values.count < fullSize {
                    // The first chunk, grown (the subscript counts on full chunks before the last).
                    values = values.moved(toCapacity: min(2 * values.capacity, fullSize))
                } else {
                    chunks.append(values)
                    values = ValueChunk(capacity: fullSize)
                }
            }
            values.append(width) { reader.write(statement, at: $0, other: other) }
            rows += 1
        }
        // The last chunk's unused room given back when it is most of it.
        if values.count < values.capacity / 2 { values = values.moved(toCapacity: values.count) }
        if values.count > 0 || chunks.isEmpty { chunks.append(values) }
        logFetchTimes(sqlSeconds: sqlSeconds, since: start, rows: rows)
        return FetchedRows(keys: keys, chunks: chunks)
    }

    /// The rows the first buffer of ``fetchValueRows(_:)`` has room for, without a limit.
    static let firstChunkRows = 16

    /// Whether a dictionary fetch can be read in batches of keys: rows are objects (no
    /// grouping, no `DISTINCT`), so the keys of a key fetch name them.
    static func canBatchDictionaries(_ request: FetchRequest) -> Bool {
        request.fetchBatchSize > 0 && (request.propertiesToGroupBy ?? []).isEmpty && request.havingPredicate == nil && !request.returnsDistinctResults
    }

    /// One batch of a batched dictionary fetch: the dictionaries of the objects with these
    /// keys, in the keys' order. `query` is the request's batch query
    /// (``dictionaryQuery(for:batchOfKeys:)``), compiled once for all its batches.
    func fetchDictionaryBatch(_ query: DictionaryQuery, entityName: String, keys: [Int64]) throws -> [[String: Any]] {
        let start = DispatchTime.now().uptimeNanoseconds
        var byKey: [Int64: [String: Any]] = [:]
        byKey.reserveCapacity(keys.count)
        let sqlSeconds: Double = try withIntArray(keys) {
            let statement = try connection.cachedStatement(query.sql)
            try statement.bind(query.arguments)
            let reader = DictionaryRowReader(items: query.items, firstColumn: 1)
            let other = { (kind: PredicateSQL.SelectedValue, column: Int) in self.decodeSelected(kind, statement, at: column, entityName: entityName) }
            return try statement.forEachRow { byKey[statement.int64(at: 0)] = reader.row(statement, other: other) }
        }
        logFetchTimes(sqlSeconds: sqlSeconds, since: start, rows: byKey.count)
        return keys.compactMap { byKey[$0] }
    }

    /// One selected value of a dictionary row (nil for NULL).
    func decodeSelected(_ kind: PredicateSQL.SelectedValue, _ statement: Statement, at column: Int, entityName: String) -> Any? {
        if statement.isNull(at: column) { return nil }
        switch kind {
        case .attribute(let type):
            return ValueCoding.decode(statement.value(at: column), as: type)
        case .computed(let type):
            let value = statement.value(at: column)
            guard type != .undefined else {
                switch value {
                case .integer(let i): return i
                case .real(let d): return d
                case .text(let s): return s
                case .blob(let b): return b
                case .null: return nil
                }
            }
            return ValueCoding.decode(value, as: type)
        case .object(let destination, let entityColumn):
            var names = idNames(entityName: destination)
            if entityColumn, !statement.isNull(at: column + 1), let actual = idNames(entityNumber: Int(statement.int64(at: column + 1))) {
                names = actual
            }
            return ManagedObjectID(names: names, primaryKey: statement.int64(at: column))
        case .objectID(let entityColumn):
            let key = statement.int64(at: entityColumn ? column + 1 : column)
            var names = idNames(entityName: entityName)
            if entityColumn, let actual = idNames(entityNumber: Int(statement.int64(at: column))) { names = actual }
            return ManagedObjectID(names: names, primaryKey: key)
        }
    }

    /// The columns of a partial fetch: those of the named attributes and to-one
    /// relationships, in the entity's own column order.
    ///
    /// - Throws: ``FetchRequestError`` for a name that is not a stored attribute or to-one of the entity.
    func partialColumns(for entity: EntityDescription, properties: [FetchProperty]) throws -> [SelectedColumn] {
        var names: Set<String> = []
        for property in properties {
            guard case .keyPath(let name) = property else {
                throw FetchRequestError("propertiesToFetch of a managed-object fetch cannot hold expression descriptions (\(property.name)); use the dictionary result type")
            }
            if name == "objectID" || name == "self" { continue }
            if let attribute = entity.attribute(named: name), !attribute.isTransient { names.insert(name); continue }
            if let relationship = entity.relationship(named: name), relationship.isToOne, !relationship.isTransient { names.insert(name); continue }
            throw FetchRequestError("propertiesToFetch of a managed-object fetch of \(entity.name) must name its stored attributes and to-one relationships; \(name) is not one")
        }
        return selectedColumns(for: entity).filter { column in
            switch column.target {
            case .attribute(let attribute): return names.contains(attribute.name)
            case .toOne(let relationship, _): return names.contains(relationship.name)
            }
        }
    }

    /// Fetches the rows of partial objects: `SELECT 0, t0.Z_PK, t0.Z_OPT, <their columns> …`.
    func fetchPartialRows(_ request: FetchRequest, properties: [FetchProperty]) throws -> [StoreRow] {
        let (entity, entityMapping) = try entityForFetch(request.entityName)
        let columns = try partialColumns(for: entity, properties: properties)
        let (sql, arguments) = try selectSQL(for: request, entity: entity, entityMapping: entityMapping, columns: columns)
        let rows = try selectRows(sql: sql, arguments: arguments, entity: entity, columns: columns, variant: columns.map(\.column).joined(separator: ","))
        if connection.isTraced { logFetchDetails(entity: entity.name, sql: sql, rows: rows) }
        return rows
    }
}

/// Reads the rows of a dictionary fetch without hashing a key per row: each row starts as a
/// copy of a template dictionary holding every key, and its values are set through the
/// template's indices (a copy of a dictionary has its indices, and setting a value through
/// `values` keeps them); the keys of NULL values are removed, by key, at the end. Attribute
/// values decode straight from the statement through ``AttributeColumn``, as object rows do;
/// other values as ``SQLiteStore/decodeSelected``.
/// The plan is kept in flat arrays of plain values, so walking it per row copies nothing.
struct DictionaryRowReader {
    private let template: [String: Any]
    private let columns: [Int]
    /// How each attribute's column decodes; nil for the other values, which
    /// ``SQLiteStore/decodeSelected`` reads as `selected` says.
    private let kinds: [AttributeColumn?]
    private let selected: [PredicateSQL.SelectedValue]
    private let keys: [String]
    private let indices: [Dictionary<String, Any>.Index]

    /// A reader of rows whose first item is at column `firstColumn`.
    init(items: [PredicateSQL.SelectItem], firstColumn: Int) {
        var template: [String: Any] = [:]
        template.reserveCapacity(items.count)
        for item in items { template[item.key] = 0 }
        var columns: [Int] = [], kinds: [AttributeColumn?] = [], indices: [Dictionary<String, Any>.Index] = [], keys: [String] = []
        var column = firstColumn
        for item in items {
            if let index = template.index(forKey: item.key) {
                var kind: AttributeColumn?
                if case .attribute(let type) = item.value { kind = AttributeColumn(type) }
                columns.append(column)
                kinds.append(kind)
                indices.append(index)
                keys.append(item.key)
            }
            column += item.columnCount
        }
        self.template = template
        self.columns = columns
        self.kinds = kinds
        self.selected = items.map(\.value)
        self.keys = keys
        self.indices = indices
    }

    /// The statement's current row; `other` decodes values that are not attributes
    /// (``SQLiteStore/decodeSelected``).
    func row(_ statement: Statement, other: (PredicateSQL.SelectedValue, Int) -> Any?) -> [String: Any] {
        var row = template
        var nulls: [String] = []
        let found = statement.currentColumns()
        for i in kinds.indices {
            if let value = value(i, found, other).any {
                row.values[indices[i]] = value
            } else {
                nulls.append(keys[i])
            }
        }
        for key in nulls { row.removeValue(forKey: key) }
        return row
    }

    /// How many values a row has (one per item with a key).
    var width: Int { kinds.count }

    /// Writes the statement's current row's ``width`` values at `slot` (uninitialized memory),
    /// in the items' order.
    @inline(__always)
    func write(_ statement: Statement, at slot: UnsafeMutablePointer<StoredValue>, other: (PredicateSQL.SelectedValue, Int) -> Any?) {
        // The row's columns found once (see Statement.currentColumns()).
        let found = statement.currentColumns()
        for i in kinds.indices { (slot + i).initialize(to: value(i, found, other)) }
    }

    @inline(__always)
    private func value(_ i: Int, _ found: RowColumns, _ other: (PredicateSQL.SelectedValue, Int) -> Any?) -> StoredValue {
        guard let kind = kinds[i] else { return StoredValue(other(selected[i], columns[i])) }
        return kind.decode(found[columns[i]])
    }
}
