import FaultlineTestSupport
import Foundation
import Testing

/// What a sqlite3 user types works the same way.
@Suite struct SQLiteHabitTests {
    static let store = TestSupport.inventoryFolder.appendingPathComponent("Inventory.sqlite").path

    @Test func versionAndACommandAsAnArgument() throws {
        let version = try TestSupport.faultline(["--version"])
        #expect(version.status == 0)
        #expect(version.stdout.hasPrefix("faultline "), "\(version.stdout)")
        let positional = try TestSupport.faultline([Self.store, "--sql-debug", "0", "count Location", "count Asset"])
        #expect(positional.status == 0 && positional.stdout == "3\n5\n", "\(positional.stderr)")
    }

    @Test func tablesIndexesPrintShowAndPrefixes() throws {
        let result = try TestSupport.faultline([Self.store, "--sql-debug", "0"], stdin: """
            .tab
            .indexes ZINVENTORY
            .print hello there
            .sh
            .s
            .q
            count Asset
            """)
        #expect(result.status == 1)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(Array(lines.prefix(4)) == ["ZASSET  ZINVENTORY  ZLOCATION  Z_METADATA  Z_MODELCACHE  Z_PRIMARYKEY", "ZINVENTORY_ZASSET_INDEX", "ZINVENTORY_ZLOCATION_INDEX", "hello there"])
        #expect(lines.contains("store        \(Self.store) (read-only)"))
        #expect(lines.contains("model        the one beside the store"))
        #expect(result.stderr == "Error: line 5: .s is ambiguous: .sql, .storm, .schema, .stats, .show\n")
    }

    @Test func onceAndBail() throws {
        let folder = try TestSupport.temporaryDirectory("habits")
        let file = folder.appendingPathComponent("once.txt")
        let result = try TestSupport.faultline([Self.store, "--sql-debug", "0"], stdin: """
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
