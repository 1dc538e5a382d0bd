import FaultlineModel
import FaultlineSQL
import Foundation

/// Core Data's persistent history (`NSPersistentHistoryTrackingKey`): one row per saved
/// transaction in `ATRANSACTION`, one per inserted, updated or deleted object in `ACHANGE`,
/// and the transaction's author, bundle, context and process names interned in
/// `ATRANSACTIONSTRING`. The tables are "ancillary" (prefix `A`, entity numbers 16001–16003 in
/// `Z_PRIMARYKEY`, keys reserved there like any entity's).
///
/// What is verified on Photos' stores (macOS 10.15 and 16): the DDL, word for word and in
/// order; `Z_ENT` 16001/16002/16003 and NULL `Z_OPT` on every row; change types 0 insert, 1
/// update, 2 delete; `ZCOLUMNS` NULL except for updates; strings stored once and referred to
/// by key; `ZTOMBSTONE<n>` columns, as many as the entity with the most attributes that
/// preserve their value after deletion has, filled with those values in name order.
///
/// Inferred (no store shows which properties an update changed): `ZCOLUMNS` is a bit set
/// over the entity's persistent properties (inherited ones included) sorted by name, bit
/// `i` in byte `i / 8` at `1 << (i % 8)`, `ceil(count / 8)` bytes — the reading that gives
/// coherent property sets for Photos' recorded updates (`endDate`+`kind`, `cloudDeleteState`).
public enum PersistentHistory {
    /// `Z_ENT` of `ACHANGE` rows.
    public static let changeEntity = 16001
    /// `Z_ENT` of `ATRANSACTION` rows.
    public static let transactionEntity = 16002
    /// `Z_ENT` of `ATRANSACTIONSTRING` rows.
    public static let stringEntity = 16003

    /// The kinds of change (`ZCHANGETYPE`).
    public enum ChangeType: Int, Sendable {
        case insert = 0
        case update = 1
        case delete = 2
    }

    /// The number of `ZTOMBSTONE<n>` columns for a model: the most attributes preserved after
    /// deletion that one entity has (inherited ones included).
    public static func tombstoneCount(for model: ManagedObjectModel) -> Int {
        model.entities.map { tombstoneAttributes(of: $0).count }.max() ?? 0
    }

    /// The attributes whose values a delete records, in the order of the tombstone columns.
    /// Binary attributes that allow external storage are never kept (as reported of Core
    /// Data by people who explored its history tables).
    public static func tombstoneAttributes(of entity: EntityDescription) -> [AttributeDescription] {
        entity.attributes.filter { $0.preservesValueInHistoryOnDeletion && !$0.isTransient && !$0.allowsExternalBinaryDataStorage }
            .sorted { $0.name < $1.name }
    }

    /// The statements that create the history tables and their indexes, in Core Data's text and order.
    public static func createStatements(for model: ManagedObjectModel) -> [String] {
        let tombstones = (0..<tombstoneCount(for: model)).map { ", ZTOMBSTONE\($0) BLOB" }.joined()
        return [
            "CREATE TABLE ACHANGE ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZCHANGETYPE INTEGER, ZENTITY INTEGER, ZENTITYPK INTEGER, ZTRANSACTIONID INTEGER, ZCOLUMNS BLOB\(tombstones) )",
            "CREATE TABLE ATRANSACTION ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZAUTHORTS INTEGER, ZBUNDLEIDTS INTEGER, ZCONTEXTNAMETS INTEGER, ZPROCESSIDTS INTEGER, ZTIMESTAMP FLOAT, ZAUTHOR VARCHAR, ZBUNDLEID VARCHAR, ZCONTEXTNAME VARCHAR, ZPROCESSID VARCHAR, ZQUERYGEN BLOB )",
            "CREATE TABLE ATRANSACTIONSTRING ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZNAME VARCHAR )",
            "CREATE INDEX ACHANGE_ZTRANSACTIONID_INDEX ON ACHANGE (ZTRANSACTIONID)",
            "CREATE INDEX ATRANSACTION_ZAUTHORTS_INDEX ON ATRANSACTION (ZAUTHORTS)",
            "CREATE INDEX ATRANSACTION_ZBUNDLEIDTS_INDEX ON ATRANSACTION (ZBUNDLEIDTS)",
            "CREATE INDEX ATRANSACTION_ZCONTEXTNAMETS_INDEX ON ATRANSACTION (ZCONTEXTNAMETS)",
            "CREATE INDEX ATRANSACTION_ZPROCESSIDTS_INDEX ON ATRANSACTION (ZPROCESSIDTS)",
            "CREATE INDEX Z_TRANSACTION_TransactionAuthorIndex ON ATRANSACTION (ZAUTHOR COLLATE BINARY ASC)",
            "CREATE INDEX Z_TRANSACTION_TransactionTimestampIndex ON ATRANSACTION (ZTIMESTAMP COLLATE BINARY ASC)",
            "CREATE UNIQUE INDEX Z_TRANSACTIONSTRING_UNIQUE_NAME ON ATRANSACTIONSTRING (ZNAME COLLATE BINARY ASC)",
        ]
    }

    /// The `Z_PRIMARYKEY` rows of the history entities: number and name.
    static let primaryKeyRows: [(Int, String)] = [(changeEntity, "CHANGE"), (transactionEntity, "TRANSACTION"), (stringEntity, "TRANSACTIONSTRING")]

    /// The properties an update's `ZCOLUMNS` bits stand for, in bit order.
    public static func columnBitProperties(of entity: EntityDescription) -> [String] {
        (entity.attributes.filter { !$0.isTransient }.map(\.name) + entity.relationships.filter { !$0.isTransient }.map(\.name)).sorted()
    }

    /// `ZCOLUMNS` for an update of `changed` properties of an entity; nil when none of them
    /// is persistent (a transient change writes nothing).
    public static func columnBits(changed: Set<String>, of entity: EntityDescription) -> Data? {
        let properties = columnBitProperties(of: entity)
        var bytes = [UInt8](repeating: 0, count: (properties.count + 7) / 8)
        var any = false
        for (i, name) in properties.enumerated() where changed.contains(name) {
            bytes[i / 8] |= 1 << UInt8(i % 8)
            any = true
        }
        return any ? Data(bytes) : nil
    }

    /// The property names an update's `ZCOLUMNS` names, by ``columnBits(changed:of:)``'s
    /// reading; bits past the entity's properties (written under an older model) come back
    /// as `#<bit>`.
    public static func changedProperties(_ bits: Data, of entity: EntityDescription) -> [String] {
        let properties = columnBitProperties(of: entity)
        var names: [String] = []
        for (byteIndex, byte) in bits.enumerated() {
            for bit in 0..<8 where byte & (1 << UInt8(bit)) != 0 {
                let i = byteIndex * 8 + bit
                names.append(i < properties.count ? properties[i] : "#\(i)")
            }
        }
        return names
    }
}

/// One object's change in a transaction being recorded.
struct HistoryChange {
    var type: PersistentHistory.ChangeType
    var entityNumber: Int
    /// The object (a temporary ID for an insert: its key is known only inside the save).
    var objectID: ManagedObjectID
    var columns: Data?
    var tombstones: [SQLValue]
}

/// Who made a transaction, as recorded in `ATRANSACTION`.
struct HistoryAuthor {
    var author: String?
    var bundleID: String?
    var contextName: String?
    var processID: String?
}

extension SQLiteStore {
    /// Whether the store has the persistent history tables (`ATRANSACTION`, `ACHANGE`,
    /// `ATRANSACTIONSTRING`); when it does, every save records a transaction.
    static func hasHistoryTables(_ connection: Connection) throws -> Bool {
        let count = try connection.scalar(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('ACHANGE', 'ATRANSACTION', 'ATRANSACTIONSTRING')")
        return count?.int64 == 3
    }

    /// The `Z_PRIMARYKEY` row of a history entity, added (with `Z_MAX` the table's largest
    /// key) when a store has the tables but not the row, so keys can be reserved.
    func ensureHistoryPrimaryKeyRow(_ number: Int, name: String, table: String) throws {
        guard try connection.scalar("SELECT count(*) FROM Z_PRIMARYKEY WHERE Z_ENT = ?", [.integer(Int64(number))])?.int64 == 0 else { return }
        let max = try connection.scalar("SELECT max(Z_PK) FROM \(table)")?.int64 ?? 0
        try insertPrimaryKeyRow(number, name: name, superNumber: 0, max: max)
    }

    /// The store's `ZTOMBSTONE<n>` columns of `ACHANGE`, in order: the ones the file has (a
    /// store made under another model version may have fewer or more than this model
    /// needs). Only names of that exact form are taken: they go into SQL text.
    func historyTombstoneColumns() throws -> [String] {
        func tombstoneNumber(_ name: String) -> Int? {
            guard name.hasPrefix("ZTOMBSTONE") else { return nil }
            let digits = name.dropFirst(10)
            guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
            return Int(digits)
        }
        return try connection.columns(ofTable: "ACHANGE").map(\.name)
            .compactMap { name -> (String, Int)? in tombstoneNumber(name).map { (name, $0) } }
            .sorted { $0.1 < $1.1 }.map(\.0)
    }

    /// Creates the history tables and their `Z_PRIMARYKEY` rows (inside the caller's transaction).
    func createHistoryTables() throws {
        for statement in PersistentHistory.createStatements(for: model) {
            try connection.executeScript(statement)
        }
        for (number, name) in PersistentHistory.primaryKeyRows {
            try insertPrimaryKeyRow(number, name: name, superNumber: 0, max: 0)
        }
    }

    /// Records one saved transaction: the strings, the `ATRANSACTION` row, an `ACHANGE` row
    /// per change. Runs inside the save's transaction, after its writes.
    func recordHistory(_ changes: [HistoryChange], by author: HistoryAuthor, key: (ManagedObjectID) -> Int64) throws {
        guard !changes.isEmpty else { return }
        let tombstoneColumns: [String]
        if let known = historyTombstoneColumnsCache {
            tombstoneColumns = known
        } else {
            // Bookkeeping, once per store: not Core Data's SQL, so not in the log.
            tombstoneColumns = try connection.untraced {
                for (number, name) in PersistentHistory.primaryKeyRows {
                    try ensureHistoryPrimaryKeyRow(number, name: name, table: "A" + name)
                }
                return try historyTombstoneColumns()
            }
            historyTombstoneColumnsCache = tombstoneColumns
        }
        var interned: [String: SQLValue] = [:]
        func stringKey(_ name: String?) throws -> SQLValue {
            guard let name else { return .null }
            if let key = interned[name] { return key }
            let key = try lookUpOrAddString(name)
            interned[name] = key
            return key
        }
        func lookUpOrAddString(_ name: String) throws -> SQLValue {
            if let key = try connection.scalar("SELECT Z_PK FROM ATRANSACTIONSTRING WHERE ZNAME = ?", [.text(name)]), case .integer = key {
                return key
            }
            let key = try reservePrimaryKeys(entityNumber: PersistentHistory.stringEntity, label: "TRANSACTIONSTRING", count: 1)
            try connection.execute(
                "INSERT INTO ATRANSACTIONSTRING(Z_PK, Z_ENT, Z_OPT, ZNAME) VALUES(?, ?, ?, ?)",
                [.integer(key), .integer(Int64(PersistentHistory.stringEntity)), .null, .text(name)])
            return .integer(key)
        }
        let authorKey = try stringKey(author.author), bundleKey = try stringKey(author.bundleID)
        let contextKey = try stringKey(author.contextName), processKey = try stringKey(author.processID)
        let transaction = try reservePrimaryKeys(entityNumber: PersistentHistory.transactionEntity, label: "TRANSACTION", count: 1)
        try connection.execute(
            "INSERT INTO ATRANSACTION(Z_PK, Z_ENT, Z_OPT, ZAUTHORTS, ZBUNDLEIDTS, ZCONTEXTNAMETS, ZPROCESSIDTS, ZTIMESTAMP) VALUES(?, ?, ?, ?, ?, ?, ?, ?)",
            [.integer(transaction), .integer(Int64(PersistentHistory.transactionEntity)), .null, authorKey, bundleKey, contextKey, processKey,
             .real(Date().timeIntervalSinceReferenceDate)])
        let first = try reservePrimaryKeys(entityNumber: PersistentHistory.changeEntity, label: "CHANGE", count: changes.count)
        let statement = try connection.cachedStatement(
            "INSERT INTO ACHANGE(Z_PK, Z_ENT, Z_OPT, ZCHANGETYPE, ZENTITY, ZENTITYPK, ZTRANSACTIONID, ZCOLUMNS\(tombstoneColumns.map { ", " + $0 }.joined()))"
                + " VALUES(?, ?, ?, ?, ?, ?, ?, ?\(String(repeating: ", ?", count: tombstoneColumns.count)))")
        for (offset, change) in changes.enumerated() {
            var values: [SQLValue] = [
                .integer(first + Int64(offset)), .integer(Int64(PersistentHistory.changeEntity)), .null,
                .integer(Int64(change.type.rawValue)), .integer(Int64(change.entityNumber)), .integer(key(change.objectID)),
                .integer(transaction), change.columns.map(SQLValue.blob) ?? .null,
            ]
            for i in tombstoneColumns.indices { values.append(i < change.tombstones.count ? change.tombstones[i] : .null) }
            try statement.bind(values)
            try statement.run()
        }
    }
}

/// A transaction read back from a store's persistent history.
public struct HistoryTransaction: Sendable {
    /// Its key in `ATRANSACTION` (increasing with each save).
    public var number: Int64
    /// When it was saved.
    public var timestamp: Date
    /// The saving context's `transactionAuthor`.
    public var author: String?
    /// The saving app's bundle identifier.
    public var bundleID: String?
    /// The saving context's name.
    public var contextName: String?
    /// The saving process.
    public var processID: String?
    /// What it changed, in the order recorded.
    public var changes: [HistoryChangeRecord]
}

/// One object's change in a ``HistoryTransaction``.
public struct HistoryChangeRecord: Sendable {
    /// Insert, update or delete.
    public var type: PersistentHistory.ChangeType
    /// The object (its entity name is `entity <n>` when the model has no entity numbered n).
    public var objectID: ManagedObjectID
    /// For an update: `ZCOLUMNS`, the bit set of the properties it changed.
    public var columnBits: Data?
    /// For an update: the properties it changed, as ``PersistentHistory/changedProperties(_:of:)``
    /// reads ``columnBits`` (an inferred reading).
    public var updatedProperties: [String]
    /// For a delete: the values kept of the attributes preserved after deletion, by name.
    public var tombstone: [(name: String, value: SQLValue)]
}

extension SQLiteStore {
    /// The last `limit` transactions of the persistent history (all when nil or negative,
    /// none when 0), oldest first, with their changes; empty for a store without history.
    ///
    /// ```swift
    /// for t in try store.historyTransactions(last: 5) { print(t.number, t.author ?? "", t.changes.count) }
    /// ```
    ///
    /// - Throws: a SQLite error when the history tables cannot be read.
    public func historyTransactions(last limit: Int? = nil) throws -> [HistoryTransaction] {
        guard tracksPersistentHistory else { return [] }
        var strings: [Int64: String] = [:]
        for row in try connection.query("SELECT Z_PK, ZNAME FROM ATRANSACTIONSTRING") {
            if let key = row[0].int64, let name = row[1].string { strings[key] = name }
        }
        func string(_ value: SQLValue) -> String? { value.int64.flatMap { strings[$0] } }
        var transactions: [HistoryTransaction] = []
        var index: [Int64: Int] = [:]
        let rows = try connection.query(
            "SELECT Z_PK, ZTIMESTAMP, ZAUTHORTS, ZBUNDLEIDTS, ZCONTEXTNAMETS, ZPROCESSIDTS FROM (SELECT * FROM ATRANSACTION ORDER BY Z_PK DESC LIMIT ?) ORDER BY Z_PK",
            [.integer(Int64(limit ?? -1))])
        for row in rows {
            guard let number = row[0].int64 else { continue }
            index[number] = transactions.count
            transactions.append(HistoryTransaction(
                number: number, timestamp: Date(timeIntervalSinceReferenceDate: row[1].double ?? 0),
                author: string(row[2]), bundleID: string(row[3]), contextName: string(row[4]), processID: string(row[5]), changes: []))
        }
        guard let first = transactions.first?.number else { return [] }
        let tombstoneColumns = try historyTombstoneColumns()
        let changeRows = try connection.query(
            "SELECT ZTRANSACTIONID, ZCHANGETYPE, ZENTITY, ZENTITYPK, ZCOLUMNS\(tombstoneColumns.map { ", " + $0 }.joined()) FROM ACHANGE WHERE ZTRANSACTIONID >= ? ORDER BY Z_PK",
            [.integer(first)])
        for row in changeRows {
            guard let transaction = row[0].int64, let i = index[transaction], let type = row[1].int64.flatMap({ PersistentHistory.ChangeType(rawValue: Int($0)) }),
                let number = row[2].int64, let key = row[3].int64
            else { continue }
            let name = mapping.entityNames[Int(number)]
            let entity = name.flatMap { model.entity(named: $0) }
            var record = HistoryChangeRecord(
                type: type, objectID: ManagedObjectID(entityName: name ?? "entity \(number)", storeIdentifier: identifier, primaryKey: key),
                columnBits: row[4].data, updatedProperties: [], tombstone: [])
            if type == .update, let bits = row[4].data, let entity {
                record.updatedProperties = PersistentHistory.changedProperties(bits, of: entity)
            }
            if type == .delete, let entity {
                for (offset, attribute) in PersistentHistory.tombstoneAttributes(of: entity).enumerated() where offset < tombstoneColumns.count {
                    record.tombstone.append((attribute.name, row[5 + offset]))
                }
            }
            transactions[i].changes.append(record)
        }
        return transactions
    }
}
