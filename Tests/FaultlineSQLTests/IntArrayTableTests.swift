import FaultlineSQL
import FaultlineTestSupport
import Foundation
import Testing

/// `Connection.withIntArray`: Core Data's `_Z_intarray0`, an in-memory integer array read as
/// a virtual table.
@Suite struct IntArrayTableTests {
    static func values(_ db: Connection, _ sql: String = "SELECT * FROM _Z_intarray0") throws -> [Int64] {
        try db.query(sql).map { row in
            guard case .integer(let value) = row[0] else { Issue.record("not an integer: \(row[0])"); return 0 }
            return value
        }
    }

    @Test func theRowsAreTheBoundKeysInOrderDuplicatesIncluded() throws {
        let db = try Connection(path: ":memory:", mode: .inMemory)
        let keys: [Int64] = [3, 1, .max, -4, 1, .min, 0]
        let read = try db.withIntArray(keys, named: "_Z_intarray0") { try Self.values(db) }
        #expect(read == keys)
        let named = try db.withIntArray([5, 6], named: "_Z_intarray0") { try Self.values(db, "SELECT value FROM _Z_intarray0 WHERE value > 5") }
        #expect(named == [6])
        // Outside a binding, and bound to no keys, the table is there and empty.
        #expect(try Self.values(db).isEmpty)
        #expect(try db.withIntArray([], named: "_Z_intarray0") { try Self.values(db) }.isEmpty)
    }

    @Test func aCachedStatementReadsWhateverIsBoundWhenItRuns() throws {
        let db = try Connection(path: ":memory:", mode: .inMemory)
        try db.executeScript("CREATE TABLE T (Z_PK INTEGER PRIMARY KEY, ZNAME VARCHAR)")
        for key in 1...1_000 { try db.execute("INSERT INTO T (Z_PK, ZNAME) VALUES (?, ?)", [.integer(Int64(key)), .text("n\(key)")]) }
        let sql = "SELECT ZNAME FROM T WHERE Z_PK IN (SELECT * FROM _Z_intarray0) ORDER BY Z_PK"
        let first = try db.withIntArray([10, 2, 999, 5_000], named: "_Z_intarray0") { try db.query(sql).map(\.[0]) }
        #expect(first == [.text("n2"), .text("n10"), .text("n999")])
        let second = try db.withIntArray(Array(100...600), named: "_Z_intarray0") { try db.query(sql).count }
        #expect(second == 501)
        // The planner looks the keys up by primary key, however many are bound when the
        // statement is prepared: it does not scan the other table.
        let plan = try db.withIntArray(Array(1...1_000), named: "_Z_intarray0") {
            try db.query("EXPLAIN QUERY PLAN SELECT ZNAME FROM T WHERE Z_PK IN (SELECT * FROM _Z_intarray0)")
                .map { "\($0[3])" }.joined(separator: "\n")
        }
        #expect(plan.contains("SEARCH T USING INTEGER PRIMARY KEY"), "\(plan)")
    }

    @Test func aNestedBindingEndsWithTheOuterKeysBackEvenWhenItThrows() throws {
        let db = try Connection(path: ":memory:", mode: .inMemory)
        struct Stop: Error {}
        try db.withIntArray([1, 2], named: "_Z_intarray0") {
            let inner = try db.withIntArray([7], named: "_Z_intarray0") { try Self.values(db) }
            #expect(inner == [7])
            #expect(throws: Stop.self) { try db.withIntArray([8, 9], named: "_Z_intarray0") { throw Stop() } }
            #expect(try Self.values(db) == [1, 2])
            // Another name is another table.
            let both = try db.withIntArray([4], named: "_Z_intarray1") {
                (try Self.values(db, "SELECT * FROM _Z_intarray1"), try Self.values(db))
            }
            #expect(both.0 == [4] && both.1 == [1, 2])
        }
        #expect(try Self.values(db).isEmpty)
    }

    @Test func aReadOnlyDatabaseIsNotTouchedAndARollbackCannotDropTheTable() throws {
        let folder = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("t.sqlite").path
        do {
            let db = try Connection(path: path, mode: .readWriteCreate)
            try db.executeScript("CREATE TABLE T (Z_PK INTEGER PRIMARY KEY); INSERT INTO T VALUES (1), (2), (3)")
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        let db = try Connection(path: path, mode: .readOnly)
        struct Abort: Error {}
        var inTransaction: [Int64] = []
        #expect(throws: Abort.self) {
            try db.transaction {
                inTransaction = try db.withIntArray([2, 3], named: "_Z_intarray0") {
                    try Self.values(db, "SELECT Z_PK FROM T WHERE Z_PK IN (SELECT * FROM _Z_intarray0)")
                }
                throw Abort()
            }
        }
        #expect(inTransaction == [2, 3])
        #expect(try db.withIntArray([1], named: "_Z_intarray0") { try Self.values(db, "SELECT Z_PK FROM T WHERE Z_PK IN (SELECT * FROM _Z_intarray0)") } == [1])
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == files)
    }
}

extension IntArrayTableTests {
    @Test func aStatementSteppedAfterTheBindingEndsReadsItsOwnCopyOfTheKeys() throws {
        let db = try Connection(path: ":memory:", mode: .inMemory)
        try db.withIntArray([], named: "_Z_intarray0") {}  // registers the table
        let statement = try db.prepare("SELECT value FROM _Z_intarray0")
        let first: Int64 = try db.withIntArray((1...1_000).map { Int64($0) * 3 }, named: "_Z_intarray0") {
            guard try statement.step() else { Issue.record("no row"); return 0 }
            return statement.int64(at: 0)
        }
        // The array is unbound and freed; the scan goes on over its copy (AddressSanitizer
        // would report a read of freed memory otherwise).
        var rest: [Int64] = []
        while try statement.step() { rest.append(statement.int64(at: 0)) }
        statement.reset()
        #expect([first] + rest == (1...1_000).map { Int64($0) * 3 })
    }

    @Test func aTableOfTheSameNameIsRefusedNotReadInstead() throws {
        let db = try Connection(path: ":memory:", mode: .inMemory)
        #expect(try db.withIntArray([1], named: "_Z_intarray0") { try Self.values(db) } == [1])
        for create in ["CREATE TEMP TABLE _z_INTARRAY0 (value INTEGER)", "CREATE TABLE _Z_intarray0 (value INTEGER)"] {
            try db.executeScript(create + "; INSERT INTO _Z_intarray0 VALUES (42)")
            let error = #expect(throws: SQLiteError.self) { try db.withIntArray([1], named: "_Z_intarray0") { try Self.values(db) } }
            #expect(error?.message.contains("table or view named _Z_intarray0") == true, "\(String(describing: error))")
            try db.executeScript("DROP TABLE _Z_intarray0")
        }
        #expect(try db.withIntArray([2], named: "_Z_intarray0") { try Self.values(db) } == [2])
    }
}
