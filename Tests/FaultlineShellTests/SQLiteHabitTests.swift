import FaultlineTestSupport
import Foundation
import Testing

/// What a sqlite3 user types works the same way.
@Suite struct SQLiteHabitTests {
    static let store = TestSupport.inventoryFolder.appendingPathComponent("Inventory.sqlite").path

    @Test func versionAndACommandAsAnArgument() async throws {
        let version = try await TestSupport.faultline(["--version"])
        #expect(version.status == 0)
        #expect(version.stdout.hasPrefix("faultline "), "\(version.stdout)")
        let positional = try await TestSupport.faultline([Self.store, "--sql-debug", "0", "count Location", "count Asset"])
        #expect(positional.status == 0 && positional.stdout == "3\n5\n", "\(positional.stderr)")
    }

    @Test func tablesIndexesPrintShowAndPrefixes() async throws {
        let result = try await TestSupport.faultline([Self.store, "--sql-debug", "0"], stdin: """
            .tab
            .indexes ZINVENTORY
            .print hello there
            .sho
            .s
            .q
            count Asset
            """)
        #expect(result.status == 1)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(Array(lines.prefix(4)) == ["ZASSET  ZINVENTORY  ZLOCATION  Z_METADATA  Z_MODELCACHE  Z_PRIMARYKEY", "ZINVENTORY_ZASSET_INDEX", "ZINVENTORY_ZLOCATION_INDEX", "hello there"])
        #expect(lines.contains("store        \(Self.store) (read-only)"))
        #expect(lines.contains("model        the one beside the store"))
        #expect(result.stderr == "Error: line 5: .s is ambiguous: .sql, .storm, .schema, .stats, .show, .separator, .shell, .system\n")
    }

    @Test func onceAndBail() async throws {
        let folder = try TestSupport.temporaryDirectory("habits")
        let file = folder.appendingPathComponent("once.txt")
        let result = try await TestSupport.faultline([Self.store, "--sql-debug", "0"], stdin: """
            .once \(file.path)
            count Asset
            count Location
            .bail off
            count Nowhere
            count Inventory
            """)
        #expect(try String(contentsOf: file, encoding: .utf8) == "5\n")
        #expect(result.stdout == "3\n8\n")
        #expect(result.status == 1)
        #expect(result.stderr.contains("Error: line 5: entity Nowhere not found"))
    }
}

/// sqlite3's output modes, separators, null value, dump and shell escapes.
@Suite struct SQLiteOutputHabitTests {
    static let store = SQLiteHabitTests.store

    @Test func listQuoteInsertHtmlTabsModes() async throws {
        let result = try await TestSupport.faultline([Self.store, "--sql-debug", "0"], stdin: """
            .mode list
            fetch Location sort by label limit 1
            .separator ; \\n
            .nullvalue NULL
            fetch Inventory sort by date limit 1 show count, date
            .mode quote
            fetch Location where label BEGINSWITH "J"
            .mode insert loc
            fetch Location where label BEGINSWITH "J"
            .handles on
            fetch Location where label BEGINSWITH "J"
            .handles auto
            .mode html
            fetch Location where label BEGINSWITH "G"
            .mode tabs
            .raw SELECT NULL AS n, 'x' AS s
            """)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == """
            label
            Garage
            count;date
            6;NULL
            'label'
            'Jaye''s Basement'
            INSERT INTO loc("label") VALUES('Jaye''s Basement');
            INSERT INTO loc("#","label") VALUES('$3','Jaye''s Basement');
            <TR><TH>label</TH>
            </TR>
            <TR><TD>Garage</TD>
            </TR>
            n\ts
            NULL\tx

            """)
    }

    @Test func readOnlyPragmasRunInRawAndWritingOnesDoNot() async throws {
        let read = try await TestSupport.faultline([Self.store, "-c", ".mode list", "-c", ".headers off", "-c", ".raw PRAGMA journal_mode; PRAGMA user_version"])
        #expect(read.status == 0 && read.stdout.split(separator: "\n").count == 2, "\(read.stdout)\(read.stderr)")
        let write = try await TestSupport.faultline([Self.store, "-c", ".raw PRAGMA user_version = 3"])
        #expect(write.status == 1 && write.stderr.contains(".raw runs read-only SQL only (PRAGMA user_version = 3)"))
    }

    @Test func dumpIsSQLThatRebuildsTheRows() async throws {
        let result = try await TestSupport.faultline([Self.store, "-c", ".dump"])
        #expect(result.status == 0)
        #expect(result.stdout.hasPrefix("PRAGMA foreign_keys=OFF;\nBEGIN TRANSACTION;\nCREATE TABLE ZASSET ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZLABEL VARCHAR );\nINSERT INTO ZASSET VALUES(1,1,1,'Coffee Mug');\n"))
        #expect(result.stdout.hasSuffix("COMMIT;\n"))
        let folder = try TestSupport.temporaryDirectory("dump")
        let script = folder.appendingPathComponent("dump.sql")
        try Data(result.stdout.utf8).write(to: script)
        let rebuilt = folder.appendingPathComponent("rebuilt.db")
        _ = try await TestSupport.run(URL(fileURLWithPath: "/usr/bin/sqlite3"), [rebuilt.path, ".read \(script.path)"])
        let counts = try await TestSupport.run(URL(fileURLWithPath: "/usr/bin/sqlite3"), [rebuilt.path, "SELECT COUNT(*) FROM ZINVENTORY; SELECT SUM(ZCOUNT) FROM ZINVENTORY"])
        let original = try await TestSupport.run(URL(fileURLWithPath: "/usr/bin/sqlite3"), ["file:\(Self.store)?immutable=1", "SELECT COUNT(*) FROM ZINVENTORY; SELECT SUM(ZCOUNT) FROM ZINVENTORY"])
        #expect(counts.stdout == original.stdout && !counts.stdout.isEmpty)
    }

    @Test func shellRunsACommandAndAFailureIsAnError() async throws {
        let result = try await TestSupport.faultline([Self.store, "--keep-going", "-c", ".shell echo hi from sh", "-c", ".system exit 3"])
        #expect(result.stdout == "hi from sh\n")
        #expect(result.status == 1)
        #expect(result.stderr == "Error: .shell: exit 3 exited with status 3\n")
    }
}
