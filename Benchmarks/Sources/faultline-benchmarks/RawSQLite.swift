import CBenchSQLite
import Foundation

/// The SQLite C API, used directly: the baseline of every workload. A thin owner of a
/// connection and its statements, with no caching beyond what each variant does itself.
final class RawDatabase {
    let handle: OpaquePointer

    init(path: String) throws {
        var db: OpaquePointer?
        let rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil)
        guard rc == SQLITE_OK, let db else { throw BenchmarkError("cannot open \(path): \(rc)") }
        handle = db
        sqlite3_busy_timeout(db, 5000)
    }

    deinit { sqlite3_close_v2(handle) }

    static var version: String { String(cString: sqlite3_libversion()) }

    func exec(_ sql: String) throws {
        var error: UnsafeMutablePointer<CChar>?
        if sqlite3_exec(handle, sql, nil, nil, &error) != SQLITE_OK {
            let message = error.map { String(cString: $0) } ?? "?"
            sqlite3_free(error)
            throw BenchmarkError("\(sql): \(message)")
        }
    }

    func prepare(_ sql: String) throws -> RawStatement {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
            throw BenchmarkError("\(sql): \(String(cString: sqlite3_errmsg(handle)))")
        }
        return RawStatement(statement)
    }

    /// The first column of the first row, as text.
    func scalarText(_ sql: String) throws -> String {
        let s = try prepare(sql)
        return try s.step() ? s.text(0) : ""
    }

    func scalarInt(_ sql: String) throws -> Int64 {
        let s = try prepare(sql)
        return try s.step() ? s.int(0) : 0
    }
}

final class RawStatement {
    let handle: OpaquePointer
    init(_ handle: OpaquePointer) { self.handle = handle }
    deinit { sqlite3_finalize(handle) }

    @inline(__always) func step() throws -> Bool {
        let rc = sqlite3_step(handle)
        if rc == SQLITE_ROW { return true }
        if rc == SQLITE_DONE { return false }
        throw BenchmarkError("step: \(rc) \(String(cString: sqlite3_errmsg(sqlite3_db_handle(handle))))")
    }

    @inline(__always) func reset() { sqlite3_reset(handle) }
    @inline(__always) func bind(_ i: Int32, _ v: Int64) { sqlite3_bind_int64(handle, i, v) }
    @inline(__always) func bind(_ i: Int32, _ v: Double) { sqlite3_bind_double(handle, i, v) }
    @inline(__always) func bind(_ i: Int32, _ v: String) { sqlite3_bind_text(handle, i, v, -1, bench_sqlite3_transient()) }
    @inline(__always) func int(_ i: Int32) -> Int64 { sqlite3_column_int64(handle, i) }
    @inline(__always) func double(_ i: Int32) -> Double { sqlite3_column_double(handle, i) }
    @inline(__always) func text(_ i: Int32) -> String {
        guard let p = sqlite3_column_text(handle, i) else { return "" }
        return String(decoding: UnsafeRawBufferPointer(start: p, count: Int(sqlite3_column_bytes(handle, i))), as: UTF8.self)
    }

    func run() throws {
        while try step() {}
        reset()
    }
}

/// The raw C variants of every workload.
enum Raw {
    static let itemColumns = "Z_PK, Z_OPT, ZQUANTITY, ZSCORE, ZNAME, ZCREATED, ZFLAG"

    /// Reads an item row selected with ``itemColumns`` (from column `offset`).
    @inline(__always) static func item(_ s: RawStatement, offset: Int32 = 2) -> ItemValues {
        ItemValues(
            quantity: s.int(offset), score: s.double(offset + 1), name: s.text(offset + 2),
            created: Date(timeIntervalSinceReferenceDate: s.double(offset + 3)), flag: s.int(offset + 4) != 0)
    }

    /// Fills a store Faultline created with `items` items and `owners` owners, in one
    /// transaction, and moves `Z_PRIMARYKEY` on. Item `i` belongs to owner `ownerOf(i)`.
    static func fill(path: String, items: Int, owners: Int, ownerOf: (Int) -> Int64?) throws {
        let db = try RawDatabase(path: path)
        let itemEntity = try db.scalarInt("SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Item'")
        let ownerEntity = try db.scalarInt("SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Owner'")
        try db.exec("BEGIN EXCLUSIVE")
        let owner = try db.prepare("INSERT INTO ZOWNER(Z_PK, Z_ENT, Z_OPT, ZNAME, ZRANK) VALUES(?, ?, 1, ?, ?)")
        for o in 0..<owners {
            owner.bind(1, Int64(o + 1)); owner.bind(2, ownerEntity); owner.bind(3, "Owner \(o + 1)"); owner.bind(4, Int64(o % 100))
            try owner.run()
        }
        let item = try db.prepare("INSERT INTO ZITEM(Z_PK, Z_ENT, Z_OPT, ZQUANTITY, ZSCORE, ZNAME, ZCREATED, ZFLAG, ZOWNER) VALUES(?, ?, 1, ?, ?, ?, ?, ?, ?)")
        for i in 1...max(items, 1) where items > 0 {
            let v = ItemValues(i)
            item.bind(1, Int64(i)); item.bind(2, itemEntity); item.bind(3, v.quantity); item.bind(4, v.score); item.bind(5, v.name)
            item.bind(6, v.created.timeIntervalSinceReferenceDate); item.bind(7, Int64(v.flag ? 1 : 0))
            if let o = ownerOf(i) { item.bind(8, o) } else { sqlite3_bind_null(item.handle, 8) }
            try item.run()
        }
        try db.exec("UPDATE Z_PRIMARYKEY SET Z_MAX = \(items) WHERE Z_ENT = \(itemEntity)")
        try db.exec("UPDATE Z_PRIMARYKEY SET Z_MAX = \(owners) WHERE Z_ENT = \(ownerEntity)")
        try db.exec("COMMIT")
        try db.exec("PRAGMA wal_checkpoint(TRUNCATE)")
    }

    /// The pragmas every variant runs with (they share the store files and SQLite's defaults).
    static func pragmas(path: String) throws -> String {
        let db = try RawDatabase(path: path)
        return try ["journal_mode", "synchronous", "page_size", "cache_size", "auto_vacuum", "temp_store", "mmap_size"].map {
            "\($0)=\(try db.scalarText("PRAGMA \($0)"))"
        }.joined(separator: ", ")
    }

    // MARK: Workloads

    static func fetch(_ db: RawDatabase) throws -> Sample {
        return try time {
            let s = try db.prepare("SELECT \(itemColumns) FROM ZITEM")
            var items: [ItemValues] = []
            while try s.step() { items.append(item(s)) }
            return items.reduce(0) { $0 &+ $1.check }
        }
    }

    /// An object per row, the least an object graph makes: ``fetch(_:)`` with each row's values
    /// in an instance of a small class (its key, version and values) instead of a struct in
    /// the array. A diagnostic, not a peer: no uniquing, no change tracking, no faulting —
    /// what allocating, filling and freeing one object per row costs by itself.
    static func fetchObjects(_ db: RawDatabase) throws -> Sample {
        return try time {
            let s = try db.prepare("SELECT \(itemColumns) FROM ZITEM")
            var items: [RowObject] = []
            while try s.step() { items.append(RowObject(key: s.int(0), version: s.int(1), values: item(s))) }
            return items.reduce(0) { $0 &+ $1.values.check }
        }
    }

    /// One row as an object (see ``fetchObjects(_:)``).
    final class RowObject {
        let key: Int64
        let version: Int64
        let values: ItemValues
        init(key: Int64, version: Int64, values: ItemValues) {
            self.key = key
            self.version = version
            self.values = values
        }
    }

    /// The values of every item (no keys): the peer of a dictionary-result fetch.
    static func fetchValues(_ db: RawDatabase) throws -> Sample {
        return try time {
            let s = try db.prepare("SELECT ZQUANTITY, ZSCORE, ZNAME, ZCREATED, ZFLAG FROM ZITEM")
            var items: [ItemValues] = []
            while try s.step() { items.append(item(s, offset: 0)) }
            return items.reduce(0) { $0 &+ $1.check }
        }
    }

    static func insert(path: String, count: Int) throws -> Sample {
        let db = try RawDatabase(path: path)
        let values = (1...count).map(ItemValues.init)
        return try time {
            try db.exec("BEGIN EXCLUSIVE")
            let entity = try db.scalarInt("SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Item'")
            let max = try db.scalarInt("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = \(entity)")
            try db.exec("UPDATE Z_PRIMARYKEY SET Z_MAX = \(max + Int64(count)) WHERE Z_ENT = \(entity)")
            let s = try db.prepare("INSERT INTO ZITEM(Z_PK, Z_ENT, Z_OPT, ZCREATED, ZFLAG, ZNAME, ZOWNER, ZQUANTITY, ZSCORE) VALUES(?, ?, 1, ?, ?, ?, NULL, ?, ?)")
            var check: Int64 = 0
            for (i, v) in values.enumerated() {
                s.bind(1, max + Int64(i) + 1); s.bind(2, entity); s.bind(3, v.created.timeIntervalSinceReferenceDate)
                s.bind(4, Int64(v.flag ? 1 : 0)); s.bind(5, v.name); s.bind(6, v.quantity); s.bind(7, v.score)
                try s.run()
                check &+= v.check
            }
            try db.exec("COMMIT")
            return check
        }
    }

    /// Fetches every item, adds 1 to its score, and writes it back with Core Data's optimistic
    /// locking (`WHERE Z_PK = ? AND Z_OPT = ?`), in one transaction.
    static func update(_ db: RawDatabase) throws -> Sample {
        return try time {
            let select = try db.prepare("SELECT \(itemColumns) FROM ZITEM")
            var rows: [(pk: Int64, version: Int64, values: ItemValues)] = []
            while try select.step() { rows.append((select.int(0), select.int(1), item(select))) }
            try db.exec("BEGIN EXCLUSIVE")
            let update = try db.prepare("UPDATE ZITEM SET ZSCORE = ?, Z_OPT = ? WHERE Z_PK = ? AND Z_OPT = ?")
            for row in rows {
                update.bind(1, row.values.score + 1); update.bind(2, row.version + 1); update.bind(3, row.pk); update.bind(4, row.version)
                try update.run()
                guard sqlite3_changes(db.handle) == 1 else { throw BenchmarkError("raw update: row \(row.pk) changed underneath") }
            }
            try db.exec("COMMIT")
            return Int64(rows.count)
        }
    }

    /// The owners' keys of the first `count` items (untimed), then one `SELECT … WHERE Z_PK = ?`
    /// per owner.
    static func faultsOneByOne(_ db: RawDatabase, count: Int) throws -> Sample {
        let keys = try db.prepare("SELECT ZOWNER FROM ZITEM ORDER BY Z_PK LIMIT \(count)")
        var fks: [Int64] = []
        while try keys.step() { fks.append(keys.int(0)) }
        return try time {
            let s = try db.prepare("SELECT Z_PK, Z_OPT, ZNAME, ZRANK FROM ZOWNER WHERE Z_PK = ?")
            var check: Int64 = 0
            for fk in fks {
                s.bind(1, fk)
                guard try s.step() else { throw BenchmarkError("owner \(fk) missing") }
                check &+= Int64(s.text(2).utf8.count) &+ s.int(3)
                s.reset()
            }
            return check
        }
    }

    /// The owners' keys, then their rows 500 at a time (`WHERE Z_PK IN (?, …)`).
    static func faultsBatched(_ db: RawDatabase, batch: Int) throws -> Sample {
        return try time {
            let ids = try db.prepare("SELECT Z_PK FROM ZOWNER")
            var keys: [Int64] = []
            while try ids.step() { keys.append(ids.int(0)) }
            var check: Int64 = 0
            let full = try db.prepare("SELECT Z_PK, Z_OPT, ZNAME, ZRANK FROM ZOWNER WHERE Z_PK IN (\(Array(repeating: "?", count: batch).joined(separator: ", ")))")
            var start = 0
            while start < keys.count {
                let chunk = keys[start..<min(start + batch, keys.count)]
                let s = chunk.count == batch ? full : try db.prepare("SELECT Z_PK, Z_OPT, ZNAME, ZRANK FROM ZOWNER WHERE Z_PK IN (\(Array(repeating: "?", count: chunk.count).joined(separator: ", ")))")
                for (i, key) in chunk.enumerated() { s.bind(Int32(i + 1), key) }
                while try s.step() { check &+= Int64(s.text(2).utf8.count) &+ s.int(3) }
                s.reset()
                start += batch
            }
            return check
        }
    }

    /// The items, then their owners in one statement, then each item's owner.
    static func faultsPrefetched(_ db: RawDatabase, count: Int) throws -> Sample {
        return try time {
            let items = try db.prepare("SELECT \(itemColumns), ZOWNER FROM ZITEM ORDER BY Z_PK LIMIT \(count)")
            var rows: [(ItemValues, Int64)] = []
            while try items.step() { rows.append((item(items), items.int(7))) }
            let owners = try db.prepare("SELECT Z_PK, Z_OPT, ZNAME, ZRANK FROM ZOWNER WHERE Z_PK IN (SELECT ZOWNER FROM ZITEM ORDER BY Z_PK LIMIT \(count))")
            var byKey: [Int64: (name: String, rank: Int64)] = [:]
            while try owners.step() { byKey[owners.int(0)] = (owners.text(2), owners.int(3)) }
            var check: Int64 = 0
            for (_, fk) in rows {
                guard let owner = byKey[fk] else { throw BenchmarkError("owner \(fk) missing") }
                check &+= Int64(owner.name.utf8.count) &+ owner.rank
            }
            return check
        }
    }

    /// One query with one bound argument; every row's values are read.
    static func query(_ db: RawDatabase, sql: String, argument: Any, ownerRows: Bool) throws -> Sample {
        return try time {
            let s = try db.prepare(sql)
            switch argument {
            case let i as Int: s.bind(1, Int64(i))
            case let t as String: s.bind(1, t)
            default: throw BenchmarkError("argument \(argument)")
            }
            var check: Int64 = 0
            while try s.step() {
                if ownerRows {
                    check &+= Int64(s.text(2).utf8.count) &+ s.int(3)
                } else {
                    check &+= item(s).check
                }
            }
            return check
        }
    }

    /// Iterates every item row (the memory workload's baseline).
    static func iterate(path: String) throws -> Int64 {
        let db = try RawDatabase(path: path)
        let s = try db.prepare("SELECT \(itemColumns) FROM ZITEM")
        var check: Int64 = 0
        while try s.step() { check &+= item(s).check }
        return check
    }
}
