import Foundation
import GRDB

/// An item row as a GRDB record (FetchableRecord + PersistableRecord, columns read by name,
/// no Codable): Core Data's column names, dates as seconds since 2001 as Core Data stores them.
struct ItemRecord: FetchableRecord, PersistableRecord {
    static let databaseTableName = "ZITEM"
    var id: Int64
    var version: Int64
    var entity: Int64
    var values: ItemValues

    init(id: Int64, version: Int64, entity: Int64, values: ItemValues) {
        self.id = id
        self.version = version
        self.entity = entity
        self.values = values
    }

    init(row: Row) throws {
        id = row["Z_PK"]
        version = row["Z_OPT"]
        entity = row["Z_ENT"]
        values = ItemValues(
            quantity: row["ZQUANTITY"], score: row["ZSCORE"], name: row["ZNAME"],
            created: Date(timeIntervalSinceReferenceDate: row["ZCREATED"]), flag: row["ZFLAG"])
    }

    func encode(to container: inout PersistenceContainer) throws {
        container["Z_PK"] = id
        container["Z_ENT"] = entity
        container["Z_OPT"] = version
        container["ZQUANTITY"] = values.quantity
        container["ZSCORE"] = values.score
        container["ZNAME"] = values.name
        container["ZCREATED"] = values.created.timeIntervalSinceReferenceDate
        container["ZFLAG"] = values.flag
    }
}

struct OwnerRecord: FetchableRecord, PersistableRecord {
    static let databaseTableName = "ZOWNER"
    var id: Int64
    var name: String
    var rank: Int64

    init(row: Row) throws {
        id = row["Z_PK"]
        name = row["ZNAME"]
        rank = row["ZRANK"]
    }

    func encode(to container: inout PersistenceContainer) throws {
        container["Z_PK"] = id
        container["ZNAME"] = name
        container["ZRANK"] = rank
    }

    var check: Int64 { Int64(name.utf8.count) &+ rank }
}

/// The same row decoded by column index (`row[0]`), GRDB's fastest documented record path:
/// the peer to beat (issue "Speed", item 1).
struct IndexedItemRecord: FetchableRecord, TableRecord {
    static let databaseTableName = "ZITEM"
    static var databaseSelection: [any SQLSelectable] {
        [Column("Z_PK"), Column("Z_OPT"), Column("Z_ENT"), Column("ZQUANTITY"), Column("ZSCORE"), Column("ZNAME"), Column("ZCREATED"), Column("ZFLAG")]
    }
    var id: Int64
    var version: Int64
    var entity: Int64
    var values: ItemValues

    init(row: Row) throws {
        id = row[0]
        version = row[1]
        entity = row[2]
        values = ItemValues(quantity: row[3], score: row[4], name: row[5], created: Date(timeIntervalSinceReferenceDate: row[6]), flag: row[7])
    }
}

/// The GRDB variants: a `DatabaseQueue` per store, reused across rounds.
enum GRDBBench {
    static func open(_ path: String) throws -> DatabaseQueue {
        try DatabaseQueue(path: path)
    }

    static func fetch(_ queue: DatabaseQueue) throws -> Sample {
        try time {
            try queue.read { db in try ItemRecord.fetchAll(db).reduce(0) { $0 &+ $1.values.check } }
        }
    }

    static func fetchByIndex(_ queue: DatabaseQueue) throws -> Sample {
        try time {
            try queue.read { db in try IndexedItemRecord.fetchAll(db).reduce(0) { $0 &+ $1.values.check } }
        }
    }

    /// Plain rows, values read by index into a dictionary-free tuple: GRDB's `Row` path, the
    /// peer of a dictionary-result fetch.
    static func fetchRows(_ queue: DatabaseQueue) throws -> Sample {
        try time {
            try queue.read { db in
                var check: Int64 = 0
                let rows = try Row.fetchCursor(db, sql: "SELECT ZQUANTITY, ZSCORE, ZNAME, ZCREATED, ZFLAG FROM ZITEM")
                while let row = try rows.next() {
                    let values = ItemValues(quantity: row[0], score: row[1], name: row[2], created: Date(timeIntervalSinceReferenceDate: row[3]), flag: row[4])
                    check &+= values.check
                }
                return check
            }
        }
    }

    static func insert(path: String, count: Int) throws -> Sample {
        let queue = try open(path)
        let values = (1...count).map(ItemValues.init)
        return try time {
            try queue.inTransaction(.exclusive) { db in
                guard let entity = try Int64.fetchOne(db, sql: "SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Item'") else {
                    throw BenchmarkError("no Item entity")
                }
                let max = try Int64.fetchOne(db, sql: "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = ?", arguments: [entity]) ?? 0
                try db.execute(sql: "UPDATE Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_ENT = ?", arguments: [max + Int64(count), entity])
                for (i, v) in values.enumerated() {
                    try ItemRecord(id: max + Int64(i) + 1, version: 1, entity: entity, values: v).insert(db)
                }
                return .commit
            }
            return values.reduce(0) { $0 &+ $1.check }
        }
    }

    static func update(_ queue: DatabaseQueue) throws -> Sample {
        try time {
            let records = try queue.read { db in try ItemRecord.fetchAll(db) }
            try queue.inTransaction(.exclusive) { db in
                for var record in records {
                    record.values.score += 1
                    record.version += 1
                    try record.update(db, columns: ["ZSCORE", "Z_OPT"])
                }
                return .commit
            }
            return Int64(records.count)
        }
    }

    static func faultsOneByOne(_ queue: DatabaseQueue, count: Int) throws -> Sample {
        let keys = try queue.read { db in try Int64.fetchAll(db, sql: "SELECT ZOWNER FROM ZITEM ORDER BY Z_PK LIMIT ?", arguments: [count]) }
        return try time {
            var check: Int64 = 0
            for key in keys {
                // One read per fault, as an app touching objects one by one.
                guard let owner = try queue.read({ db in try OwnerRecord.fetchOne(db, key: key) }) else { throw BenchmarkError("owner \(key)") }
                check &+= owner.check
            }
            return check
        }
    }

    static func faultsBatched(_ queue: DatabaseQueue, batch: Int) throws -> Sample {
        try time {
            try queue.read { db in
                let keys = try Int64.fetchAll(db, sql: "SELECT Z_PK FROM ZOWNER")
                var check: Int64 = 0
                var start = 0
                while start < keys.count {
                    for owner in try OwnerRecord.fetchAll(db, keys: keys[start..<min(start + batch, keys.count)]) { check &+= owner.check }
                    start += batch
                }
                return check
            }
        }
    }

    static func faultsPrefetched(_ queue: DatabaseQueue, count: Int) throws -> Sample {
        try time {
            try queue.read { db in
                let rows = try Row.fetchAll(db, sql: "SELECT *, ZOWNER AS ownerKey FROM ZITEM ORDER BY Z_PK LIMIT ?", arguments: [count])
                let items = try rows.map { (try ItemRecord(row: $0), $0["ownerKey"] as Int64) }
                let owners = try OwnerRecord.fetchAll(db, keys: Set(items.map(\.1)))
                let byKey = Dictionary(uniqueKeysWithValues: owners.map { ($0.id, $0) })
                var check: Int64 = 0
                for (_, key) in items {
                    guard let owner = byKey[key] else { throw BenchmarkError("owner \(key)") }
                    check &+= owner.check
                }
                return check
            }
        }
    }

    static func query(_ queue: DatabaseQueue, sql: String, argument: Any, ownerRows: Bool) throws -> Sample {
        let arguments: StatementArguments
        switch argument {
        case let i as Int: arguments = [i]
        case let s as String: arguments = [s]
        default: throw BenchmarkError("argument \(argument)")
        }
        return try time {
            try queue.read { db in
                if ownerRows {
                    return try OwnerRecord.fetchAll(db, sql: sql, arguments: arguments).reduce(0) { $0 &+ $1.check }
                }
                return try ItemRecord.fetchAll(db, sql: sql, arguments: arguments).reduce(0) { $0 &+ $1.values.check }
            }
        }
    }

    static func iterate(path: String) throws -> Int64 {
        let queue = try open(path)
        return try queue.read { db in
            var check: Int64 = 0
            let cursor = try ItemRecord.fetchCursor(db)
            while let item = try cursor.next() { check &+= item.values.check }
            return check
        }
    }
}
