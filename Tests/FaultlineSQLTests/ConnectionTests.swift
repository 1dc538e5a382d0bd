import FaultlineSQL
import FaultlineTestSupport
import Foundation
import Testing

@Suite struct ConnectionTests {
    @Test func bindsValuesByIndexAndReadsThemBack() throws {
        let db = try Connection(path: ":memory:", mode: .inMemory)
        try db.executeScript("CREATE TABLE T (a INTEGER, b FLOAT, c VARCHAR, d BLOB, e INTEGER)")
        try db.execute("INSERT INTO T (a, b, c, d, e) VALUES (?, ?, ?, ?, ?)",
                       [.integer(42), .real(1.5), .text("Jaye's \"Basement\""), .blob(Data([0, 1, 2])), .null])
        let row = try #require(try db.query("SELECT a, b, c, d, e FROM T").first)
        #expect(row[0] == .integer(42))
        #expect(row[1] == .real(1.5))
        #expect(row["c"] == .text("Jaye's \"Basement\""))
        #expect(row[3] == .blob(Data([0, 1, 2])))
        #expect(row[4].isNull)
    }

    @Test func aWrongArgumentCountIsAnErrorNamingTheSQL() throws {
        let db = try Connection(path: ":memory:", mode: .inMemory)
        #expect(throws: SQLiteError.self) { try db.query("SELECT ?", []) }
        #expect(throws: SQLiteError.self) { try db.query("SELECT ?", [1, 2]) }
    }

    @Test func traceObserversSeeEveryStatementWithItsArguments() throws {
        let db = try Connection(path: ":memory:", mode: .inMemory)
        nonisolated(unsafe) var seen: [String] = []
        let token = db.addTraceObserver { event in
            if case .statement(let sql, let arguments) = event { seen.append("\(sql) \(arguments)") }
        }
        _ = try db.query("SELECT ? + 1", [.integer(1)])
        db.removeTraceObserver(token)
        _ = try db.query("SELECT 2")
        #expect(seen == ["SELECT ? + 1 [1]"])
    }

    @Test func readOnlyConnectionsRefuseWrites() throws {
        let folder = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("t.sqlite").path
        do {
            let db = try Connection(path: path, mode: .readWriteCreate)
            try db.executeScript("CREATE TABLE T (a INTEGER)")
        }
        let db = try Connection(path: path, mode: .readOnly)
        #expect(db.isReadOnly)
        #expect(throws: SQLiteError.self) { try db.execute("INSERT INTO T (a) VALUES (1)") }
    }

    @Test func aMissingFileIsAnErrorNamingThePath() throws {
        let error = #expect(throws: SQLiteError.self) {
            try Connection(path: "/nonexistent/folder/x.sqlite", mode: .readOnly)
        }
        #expect(error?.path == "/nonexistent/folder/x.sqlite")
    }

    @Test func pathsWithURIMetacharactersStayPlainFileNames() throws {
        let folder = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("a?b#c%20.sqlite").path
        let db = try Connection(path: path, mode: .readWriteCreate)
        try db.executeScript("CREATE TABLE T (a)")
        #expect(FileManager.default.fileExists(atPath: path))
    }

    @Test func functionsAndCollationsAreCallableFromSQL() throws {
        let db = try Connection(path: ":memory:", mode: .inMemory)
        try db.createCollation("REVERSED") { a, b in
            a == b ? .orderedSame : (a < b ? .orderedDescending : .orderedAscending)
        }
        try db.executeScript("CREATE TABLE T (s); INSERT INTO T VALUES ('a'), ('c'), ('b');")
        let rows = try db.query("SELECT s FROM T ORDER BY s COLLATE REVERSED")
        #expect(rows.map(\.[0]) == [.text("c"), .text("b"), .text("a")])
    }
}

@Suite struct FirstRowTests {
    @Test func firstRowReadsOneRowAndLeavesTheStatementReadyAgain() throws {
        let db = try Connection(path: ":memory:", mode: .inMemory)
        try db.executeScript("CREATE TABLE T (Z_PK INTEGER PRIMARY KEY, ZNAME VARCHAR); INSERT INTO T VALUES (1, 'a'), (2, 'b')")
        nonisolated(unsafe) var finished: [Int] = []
        _ = db.addTraceObserver { event in
            if case .finished(_, _, let rows) = event { finished.append(rows) }
        }
        let statement = try db.cachedStatement("SELECT ZNAME FROM T WHERE Z_PK >= ? ORDER BY Z_PK")
        try statement.bind(only: 1)
        #expect(try statement.firstRow { statement.text(at: 0) }.value == "a")
        try statement.bind(only: 3)
        #expect(try statement.firstRow { statement.text(at: 0) }.value == nil)
        struct Stop: Error {}
        try statement.bind(only: 2)
        #expect(throws: Stop.self) { try statement.firstRow { throw Stop() } }
        // Reset after the error: bound and run again from the start.
        try statement.bind(only: 2)
        #expect(try statement.firstRow { statement.text(at: 0) }.value == "b")
        #expect(finished == [1, 0, 1, 1])
    }
}
