import FaultlineSQL
import FaultlineTestSupport
import Foundation
import Testing

/// `delete all`, `update all` and `insert all` in the shell: the SQL logged, the counts
/// reported, a read-only session refused, the import's errors naming row and column, the
/// store read back afterwards.
@Suite struct BatchCommandTests {
    @Test func batchCommandsLogTheirSQLAndReportCounts() async throws {
        let store = try ShellHarness.writableCopy(of: "Recipes")
        let folder = store.deletingLastPathComponent()
        try "name,prepTime,overview\n\"Soup, hot\",20 min,Warm\nToast,5 min,\n".write(to: folder.appendingPathComponent("rows.csv"), atomically: true, encoding: .utf8)
        try #"[{"name": "Pie", "prepTime": "1 h"}, {"name": "Jam", "size": 3}]"#.write(to: folder.appendingPathComponent("rows.json"), atomically: true, encoding: .utf8)
        let result = try await TestSupport.faultline([store.path, "--write", "--sql-debug", "1", "--keep-going"], stdin: """
            update all Recipe set overview = "Dip" where type.name == "Appetizer"
            delete all RecipeType where name == "Appetizer"
            insert all Recipe from \(folder.path)/rows.csv
            insert all Recipe from \(folder.path)/rows.json
            """)
        let sql = result.stderr.split(separator: "\n").filter { $0.hasPrefix("CoreData: sql: ") }.map { String($0.dropFirst(15)) }
        expectSQL(sql, [
            "BEGIN EXCLUSIVE",
            "SELECT 0, t0.Z_PK FROM ZRECIPE t0 JOIN ZRECIPETYPE t1 ON t0.ZTYPE = t1.Z_PK WHERE  t1.ZNAME = ?",
            "UPDATE ZRECIPE SET ZOVERVIEW = ?, Z_OPT = Z_OPT+1 WHERE Z_PK IN (SELECT * FROM _Z_intarray0)",
            "COMMIT",
            "BEGIN EXCLUSIVE",
            "SELECT 0, t0.Z_PK FROM ZRECIPETYPE t0 WHERE  t0.ZNAME = ?",
            "SELECT 0, t0.Z_PK FROM ZRECIPE t0 WHERE  t0.ZTYPE IN (SELECT * FROM _Z_intarray0)",
            "UPDATE ZRECIPE SET ZTYPE = NULL, Z_OPT = Z_OPT+1 WHERE ZTYPE IN (SELECT * FROM _Z_intarray0)",
            "DELETE FROM ZRECIPETYPE WHERE Z_PK IN (SELECT * FROM _Z_intarray0)",
            "COMMIT",
            "BEGIN EXCLUSIVE",
            "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = ?",
            "UPDATE OR FAIL Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_ENT = ? AND Z_MAX = ?",
            "INSERT INTO ZRECIPE(Z_PK, Z_ENT, Z_OPT, ZINSTRUCTIONS, ZNAME, ZOVERVIEW, ZPREPTIME) VALUES(?, ?, ?, ?, ?, ?, ?)",
            "INSERT INTO ZRECIPE(Z_PK, Z_ENT, Z_OPT, ZINSTRUCTIONS, ZNAME, ZOVERVIEW, ZPREPTIME) VALUES(?, ?, ?, ?, ?, ?, ?)",
            "COMMIT",
        ])
        #expect(result.stdout == """
            updated 1 Recipe object
            deleted 1 RecipeType object (by delete rules: 1 updated)
            inserted 2 Recipe objects from 2 rows

            """)
        #expect(result.stderr.contains("Error: line 4: \(folder.path)/rows.json row 2, column size: no stored attribute of Recipe has this name"))
        let raw = try Connection(path: store.path, mode: .readWrite)
        #expect(try raw.query("SELECT Z_OPT, ZOVERVIEW, ZTYPE FROM ZRECIPE WHERE ZNAME = 'Guacamole'").first?.values == [3, "Dip", .null])
        #expect(try raw.scalar("SELECT COUNT(*) FROM ZRECIPE WHERE ZNAME IN ('Soup, hot', 'Toast')") == 2)
        #expect(try raw.scalar("SELECT COUNT(*) FROM ZRECIPE WHERE ZNAME = 'Pie'") == 0)
    }

    @Test func aReadOnlySessionRefusesBatchCommands() async throws {
        let store = try ShellHarness.writableCopy(of: "Recipes")
        let result = try await TestSupport.faultline([store.path, "--sql-debug", "0", "--keep-going"], stdin: """
            delete all Recipe
            update all Recipe set overview = nil
            insert all Recipe from rows.csv
            """)
        for (line, command) in [(1, "delete"), (2, "update"), (3, "insert")] {
            #expect(result.stderr.contains("Error: line \(line): \(command) all writes to the store and this session is read-only: open it with --write, or run .write on"))
        }
    }
}
