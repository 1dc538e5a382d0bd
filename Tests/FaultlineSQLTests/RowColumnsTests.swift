import CFaultlineSQLite
import Foundation
import Testing

@testable import FaultlineSQL

/// `Statement.currentColumns()`: a row's columns found once, the rest by the spacing of
/// SQLite's result registers — every column must read as `value(at:)` reads it.
@Suite struct RowColumnsTests {
    /// Each row's columns, read both ways.
    private func rows(_ statement: Statement) throws -> [(whole: [SQLValue], oneByOne: [SQLValue])] {
        var rows: [(whole: [SQLValue], oneByOne: [SQLValue])] = []
        _ = try statement.forEachRow {
            let columns = statement.currentColumns()
            #expect(columns.count == Int(sqlite3_data_count(statement.handle)))
            let whole = (0..<columns.count).map { columns[$0].sqlValue }
            rows.append((whole, (0..<columns.count).map { statement.value(at: $0) }))
        }
        return rows
    }

    @Test func everyColumnOfEveryRowReadsAsItsOwnValue() throws {
        let db = try Connection(path: ":memory:", mode: .inMemory)
        try db.executeScript("CREATE TABLE T (a INTEGER, b FLOAT, c VARCHAR, d BLOB, e INTEGER, f TIMESTAMP)")
        let values: [[SQLValue]] = [
            [.integer(42), .real(1.5), .text("Jaye's \"Basement\""), .blob(Data([0, 1, 2])), .null, .real(700_000_000)],
            [.null, .null, .null, .null, .null, .null],
            [.integer(-1), .integer(3), .text(String(repeating: "long text ", count: 40)), .blob(Data(count: 5000)), .integer(7), .text("2024")],
        ]
        for row in values { try db.execute("INSERT INTO T VALUES (?, ?, ?, ?, ?, ?)", row) }
        // As the columns' affinities keep them: a whole real or numeric text in a NUMERIC
        // column an integer, an integer in a FLOAT column a real.
        var stored = values
        stored[0][5] = .integer(700_000_000)
        stored[2][1] = .real(3)
        stored[2][5] = .integer(2024)
        let statement = try db.cachedStatement("SELECT 0, rowid, a, b, c, d, e, f, a + 1, 'constant' FROM T ORDER BY rowid")
        for run in 0..<2 {
            let rows = try rows(statement)
            #expect(rows.count == 3, "run \(run)")
            for (index, row) in rows.enumerated() {
                #expect(row.whole == row.oneByOne, "run \(run), row \(index)")
                #expect(Array(row.whole[2...7]) == stored[index], "run \(run), row \(index)")
            }
        }
        // The registers' spacing was found and checked on the first row (not left to the
        // column-by-column path, which would read the same, only slower).
        #expect(statement.columnSpacing > 0)
    }

    @Test func theArmsOfACompoundSelectReadAsTheirOwnValues() throws {
        let db = try Connection(path: ":memory:", mode: .inMemory)
        try db.executeScript("CREATE TABLE T (a INTEGER, b VARCHAR); INSERT INTO T VALUES (1, 'one'), (2, NULL);")
        let statement = try db.prepare("SELECT a, b, 'first' FROM T UNION ALL SELECT b, a * 10, NULL FROM T UNION ALL SELECT 3.5, x'ff', 9")
        let rows = try rows(statement)
        #expect(rows.count == 5)
        for (index, row) in rows.enumerated() { #expect(row.whole == row.oneByOne, "row \(index)") }
        #expect(
            rows.map(\.whole) == [
                [.integer(1), .text("one"), .text("first")], [.integer(2), .null, .text("first")],
                [.text("one"), .integer(10), .null], [.null, .integer(20), .null],
                [.real(3.5), .blob(Data([0xff])), .integer(9)],
            ])
    }

    @Test func aOneColumnStatementReadsItsColumn() throws {
        let db = try Connection(path: ":memory:", mode: .inMemory)
        let statement = try db.prepare("SELECT value FROM (SELECT 1 AS value UNION ALL SELECT 'two' UNION ALL SELECT NULL)")
        let rows = try rows(statement)
        #expect(rows.map(\.whole) == [[.integer(1)], [.text("two")], [.null]])
        #expect(rows.allSatisfy { $0.whole == $0.oneByOne })
    }

    @Test func rowsSortedOrGroupedReadAsTheirOwnValues() throws {
        let db = try Connection(path: ":memory:", mode: .inMemory)
        try db.executeScript("CREATE TABLE T (a INTEGER, b VARCHAR); INSERT INTO T VALUES (3, 'c'), (1, 'a'), (2, NULL), (1, 'b');")
        for sql in ["SELECT b, a, a * 2 FROM T ORDER BY a DESC, b", "SELECT a, count(*), group_concat(b) FROM T GROUP BY a ORDER BY a"] {
            let rows = try rows(try db.prepare(sql))
            #expect(rows.count >= 3, "\(sql)")
            for (index, row) in rows.enumerated() { #expect(row.whole == row.oneByOne, "\(sql), row \(index)") }
        }
    }

    /// A statement SQLite prepares again because the schema changed — its registers in another
    /// program, its column count another for `SELECT *` — reads each row as its own.
    @Test func aStatementPreparedAgainForANewSchemaReadsItsNewRows() throws {
        let db = try Connection(path: ":memory:", mode: .inMemory)
        try db.executeScript("CREATE TABLE T (a INTEGER, b VARCHAR); INSERT INTO T VALUES (1, 'one'), (2, 'two');")
        let star = try db.cachedStatement("SELECT * FROM T ORDER BY a")
        let listed = try db.cachedStatement("SELECT b, a FROM T ORDER BY a")
        #expect(try rows(star).map(\.whole) == [[.integer(1), .text("one")], [.integer(2), .text("two")]])
        #expect(try rows(listed).allSatisfy { $0.whole == $0.oneByOne })
        #expect(star.columnSpacing > 0)
        try db.executeScript("ALTER TABLE T ADD COLUMN c FLOAT DEFAULT 2.5; CREATE INDEX TA ON T (a); INSERT INTO T VALUES (3, 'three', NULL);")
        let after = try rows(star)
        #expect(after.map(\.whole) == [[.integer(1), .text("one"), .real(2.5)], [.integer(2), .text("two"), .real(2.5)], [.integer(3), .text("three"), .null]])
        #expect(after.allSatisfy { $0.whole == $0.oneByOne })
        #expect(try rows(listed).map(\.whole) == [[.text("one"), .integer(1)], [.text("two"), .integer(2)], [.text("three"), .integer(3)]])
    }

    /// Without a row (before the first step, after the last) no column is found: each reads
    /// NULL, as `sqlite3_column_value` has it, and no spacing is learnt from SQLite's NULL.
    @Test func withoutARowEveryColumnIsNull() throws {
        let db = try Connection(path: ":memory:", mode: .inMemory)
        try db.executeScript("CREATE TABLE T (a INTEGER, b VARCHAR); INSERT INTO T VALUES (1, 'one');")
        let statement = try db.prepare("SELECT a, b FROM T")
        let before = statement.currentColumns()
        #expect(before.count == 0 && before[0].sqlValue == .null && before[1].sqlValue == .null)
        #expect(statement.columnSpacing == 0)
        #expect(try statement.step())
        #expect(statement.currentColumns()[1].sqlValue == .text("one"))
        #expect(try !statement.step())
        let after = statement.currentColumns()
        #expect(after.count == 0 && after[1].sqlValue == .null)
        #expect(statement.columnSpacing > 0)
    }
}
