import Foundation
import FaultlineShell
import FaultlineTestSupport
import Testing

/// The shell as a library: commands in, results and log out, no process.
final class ShellHarness {
    var out: [String] = []
    var err: [String] = []
    let shell: Shell

    init(sqlDebug: Int = 0, storePath: String? = nil, writable: Bool = false) throws {
        let box = Lines()
        shell = try Shell(
            storePath: storePath ?? TestSupport.inventoryFolder.appendingPathComponent("Inventory.sqlite").path, modelPath: nil,
            writable: writable, sqlDebugLevel: sqlDebug, output: Shell.Output(out: { box.out.append($0) }, err: { box.err.append($0) }))
        lines = box
    }

    /// A writable copy of a sample (store and model) in a temporary folder.
    static func writableCopy(of sample: String) throws -> URL {
        let folder = try TestSupport.temporaryDirectory("writable")
        let source = TestSupport.packageRoot.appendingPathComponent("Samples/\(sample)")
        for name in ["\(sample).sqlite", "\(sample).xcdatamodeld"] {
            try FileManager.default.copyItem(at: source.appendingPathComponent(name), to: folder.appendingPathComponent(name))
        }
        return folder.appendingPathComponent("\(sample).sqlite")
    }

    private let lines: Lines
    var output: String { lines.out.joined(separator: "\n") }
    var log: String { lines.err.joined(separator: "\n") }

    func run(_ commands: String...) throws {
        for c in commands { try shell.run(line: c) }
    }

    func clear() { lines.out.removeAll(); lines.err.removeAll() }
}

final class Lines: @unchecked Sendable {
    var out: [String] = []
    var err: [String] = []
}

@Suite struct ShellCommandTests {
    @Test func jsonModeIsValidJSONWithTypedValues() throws {
        let h = try ShellHarness()
        try h.run(".mode json", "fetch Inventory sort by count limit 2 show count, date, asset.label")
        let parsed = try JSONSerialization.jsonObject(with: Data(h.output.utf8)) as? [[String: Any]]
        let rows = try #require(parsed)
        #expect(rows.count == 2)
        #expect(rows[0]["#"] == nil, "handles are session-local: JSON leaves them out unless .handles on")
        #expect(rows[0]["count"] as? Int == 1)
        #expect(rows[0]["asset.label"] as? String == "Camping Stove")
        #expect(rows[0]["date"] as? String == "2026-11-09T14:00:00Z")
    }

    @Test func csvMarkdownLineAndBoxModes() throws {
        let h = try ShellHarness()
        try h.run(".mode csv", "fetch Location limit 2")
        #expect(h.output == "label\r\nJaye's Basement\r\nGarage")
        h.clear()
        try h.run(".handles on", "fetch Location limit 1")
        #expect(h.output == "#,label\r\n$1,Jaye's Basement")
        h.clear()
        try h.run(".handles auto", ".headers off", "fetch Location limit 1")
        #expect(h.output == "Jaye's Basement")
        h.clear()
        try h.run(".mode markdown", "fetch Location limit 1")
        #expect(h.output == "| # | label |\n|---|---|\n| $1 | Jaye's Basement |\n1 row")
        h.clear()
        try h.run(".mode line", "fetch Location limit 1")
        #expect(h.output == "    # = $1\nlabel = Jaye's Basement\n1 row")
        h.clear()
        try h.run(".mode box", "fetch Location limit 1")
        #expect(h.output == """
            ┌────┬─────────────────┐
            │ #  │ label           │
            ├────┼─────────────────┤
            │ $1 │ Jaye's Basement │
            └────┴─────────────────┘
            1 row
            """)
    }

    @Test func showListsAttributesAndRelationshipFaultState() throws {
        let h = try ShellHarness()
        try h.run("fetch Location limit 1")
        h.clear()
        try h.run("show $1")
        #expect(h.output.contains("| inventories | to-many Inventory, fault | (not loaded) "))
        h.clear()
        try h.run("$1.inventories", "show $1")
        #expect(h.output.contains("| inventories | to-many Inventory, 3 objects | $2, $3, $4 "))
        #expect(h.output.contains("| label       | String                       | Jaye's Basement"))
    }

    @Test func rowCapSaysWhatItLeftOut() throws {
        let h = try ShellHarness()
        try h.run(".rows 2", "fetch Inventory show count")
        #expect(h.output.hasSuffix("8 rows (6 not shown; .rows all to see them)"))
    }

    @Test func rawRunsReadOnlySQLAndRefusesWrites() throws {
        let h = try ShellHarness()
        try h.run(".raw SELECT COUNT(*) AS n FROM ZINVENTORY WHERE ZCOUNT > 1")
        #expect(h.output == "+---+\n| n |\n+---+\n| 5 |\n+---+\n1 row")
        #expect(throws: ShellError(".raw runs read-only SQL only (DELETE FROM ZINVENTORY); change data through the object graph (insert, set, delete, save)")) {
            try h.run(".raw DELETE FROM ZINVENTORY")
        }
        #expect(throws: ShellError.self) { try h.run(".raw SELEKT 1") }
    }

    @Test func readRunsAFileAndNamesTheLineThatFailed() throws {
        let folder = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let script = folder.appendingPathComponent("tour.fl")
        try "-- a comment\ncount Asset\n.raw SELECT (1\n  + 1) AS two\n\n\ncount Widget\n".write(to: script, atomically: true, encoding: .utf8)
        let h = try ShellHarness()
        #expect(throws: ShellError("\(script.path):7: entity Widget not found in the model; entities: Asset, Inventory, Location")) {
            try h.run(".read \(script.path)")
        }
        #expect(h.output.hasPrefix("5\n+-----+\n| two |\n+-----+\n| 2   |"))
    }

    @Test func continuationIsNeededWhileAQuoteOrParenthesisIsOpen() {
        #expect(Shell.needsContinuation("fetch Asset where label == \"Coffee"))
        #expect(Shell.needsContinuation("fetch Asset where (label == 'a'"))
        #expect(!Shell.needsContinuation("fetch Asset where (label == 'a)')"))
        #expect(!Shell.needsContinuation("fetch Asset where label == \"say \\\"hi\\\"\""))
    }

    @Test func explainShowsTheSQLAndSQLitesPlanWithAHint() throws {
        let h = try ShellHarness()
        try h.run("explain fetch Inventory sort by date")
        #expect(h.output.hasPrefix("sql: SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZCOUNT, t0.ZDATE, t0.ZASSET, t0.ZLOCATION FROM ZINVENTORY t0 ORDER BY t0.ZDATE\nquery plan:\n  SCAN t0\n  USE TEMP B-TREE FOR ORDER BY"))
        #expect(h.output.contains("hint: the sort (date) is done in a temporary b-tree"))
    }

    @Test func refreshTurnsAnObjectBackIntoAFault() throws {
        let h = try ShellHarness(sqlDebug: 1)
        try h.run("fetch Location limit 1", "refresh $1")
        #expect(h.output.hasSuffix("$1 is a fault again"))
        h.clear()
        try h.run("$1.label")
        #expect(h.output == "Jaye's Basement")
        #expect(h.log.contains("CoreData: sql: SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZLABEL FROM ZLOCATION t0 WHERE  t0.Z_PK = ?"))
        #expect(h.log.contains("faultline: 1 statement,"))
        #expect(h.log.contains(", 1 object fault fired"))
    }

    @Test func faultsListsRegisteredObjectsAndHowTheyWereReached() throws {
        let h = try ShellHarness()
        try h.run("fetch Inventory limit 1 show count", "$1.asset")
        #expect(h.output.hasSuffix("$2 <Asset: x-coredata://\(h.shell.coordinator.store.identifier)/Asset/p1; data: <fault>>"))
        h.clear()
        try h.run(".faults")
        let lines = h.output.split(separator: "\n").map { $0.replacingOccurrences(of: h.shell.coordinator.store.identifier, with: "UUID") }
        #expect(lines[3] == "| $2     | x-coredata://UUID/Asset/p1     | fault  | Inventory.asset |                |")
        #expect(lines[4] == "| $1     | x-coredata://UUID/Inventory/p1 | loaded | (fetched)       |                |")
    }

    @Test func outputAndLogGoToFiles() throws {
        let folder = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let results = folder.appendingPathComponent("out.txt").path
        let log = folder.appendingPathComponent("log.txt").path
        let h = try ShellHarness(sqlDebug: 1)
        try h.run(".output \(results)", ".log \(log)", "count Asset", ".output", ".log stderr")
        #expect(try String(contentsOfFile: results, encoding: .utf8) == "5\n")
        #expect(try String(contentsOfFile: log, encoding: .utf8).hasPrefix("CoreData: sql: SELECT COUNT(*) FROM ZASSET\n"))
        #expect(h.output == "")
    }

    @Test func schemaShowsTheMappingAndThatTheStoreMatches() throws {
        let h = try ShellHarness()
        try h.run(".schema Inventory")
        #expect(h.output == """
            Inventory  Z_ENT 2  table ZINVENTORY
              attribute  count     Integer 16  ZCOUNT     INTEGER
              attribute  date      Date        ZDATE      TIMESTAMP
              to-one     asset     → Asset     ZASSET     INTEGER
              to-one     location  → Location  ZLOCATION  INTEGER
              index ZINVENTORY_ZASSET_INDEX: CREATE INDEX ZINVENTORY_ZASSET_INDEX ON ZINVENTORY (ZASSET)
              index ZINVENTORY_ZLOCATION_INDEX: CREATE INDEX ZINVENTORY_ZLOCATION_INDEX ON ZINVENTORY (ZLOCATION)

            The store matches the model's mapping.
            """)
    }

    @Test func historyOfAStoreWithoutOneSaysSo() throws {
        let h = try ShellHarness()
        try h.run(".history")
        #expect(h.output == "The store keeps no persistent history (no ATRANSACTION table).")
        #expect(throws: ShellError(".history takes a number of transactions, an entity (Asset) or an object ($3, or its URI); found \"many\"")) { try h.run(".history many") }
    }

    @Test func aPredicateSyntaxErrorShowsTheLineWithACaret() throws {
        let h = try ShellHarness()
        #expect(throws: ShellError("""
            Unable to parse the format string "label ==": expected an expression at column 9
              fetch Location where label ==
                                           ^
            """)) { try h.run("fetch Location where label ==") }
    }

    @Test func whereFiltersAToManyInMemory() throws {
        let h = try ShellHarness()
        try h.run("fetch Location where label BEGINSWITH 'J'", "show $1.inventories where count > 1 AND asset.label CONTAINS 'u'")
        #expect(h.output.hasSuffix("| $2 | 12    | 2026-11-02T09:30:00Z | $3    | $1       |\n+----+-------+----------------------+-------+----------+\n1 row"))
    }

    @Test func sqlLevelsAddBindingsRowValuesAndQueryPlans() throws {
        let h = try ShellHarness(sqlDebug: 1)
        try h.run(".sql 2", "fetch Location where label == 'Garage'")
        #expect(h.log.contains("CoreData: details: SQLite bind[0] = \"Garage\""))
        #expect(h.log.contains("on entity 'Location' with sql text 'SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZLABEL FROM ZLOCATION t0 WHERE  t0.ZLABEL = ?' returned 1 rows\n"))
        h.clear()
        try h.run(".sql 3", "fetch Location where label == 'Garage'")
        #expect(h.log.contains("returned 1 rows with values: (\n    \"<Location: x-coredata://"))
        #expect(h.log.contains("/Location/p2; data: {label = \"Garage\"}>\"\n)"))
        h.clear()
        try h.run(".sql 4", "fetch Location where label == 'Garage'")
        #expect(h.log.contains("CoreData: details: SQLite: EXPLAIN QUERY PLAN SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZLABEL FROM ZLOCATION t0 WHERE  t0.ZLABEL = ?\nCoreData: details: 2 0 0 SCAN t0"))
        h.clear()
        try h.run(".sql 1", "fetch Location where label == 'Garage'")
        #expect(!h.log.contains("details"))
    }

    @Test func badSettingsSayWhatTheyTake() throws {
        let h = try ShellHarness()
        #expect(throws: ShellError(".mode needs one of table, box, line, csv, json, markdown, list, tabs, quote, insert, html (now table)")) { try h.run(".mode columns") }
        #expect(throws: ShellError("no object $1; fetch objects first, they get handles $1, $2, …")) { try h.run("$1") }
        #expect(throws: ShellError("unknown command \".frob\"; try .help")) { try h.run(".frob") }
    }
}

@Suite struct CompleterTests {
    @Test func completesCommandsEntitiesKeyPathsAndHandles() throws {
        let h = try ShellHarness()
        try h.run("fetch Inventory limit 2")
        let complete = { (line: String) in h.shell.completions(for: line) }
        #expect(complete("fe") == ["fetch"])
        #expect(complete(".sc") == [".schema"])
        #expect(complete("fetch Inv") == ["Inventory"])
        #expect(complete("fetch Inventory show asset.la") == ["asset.label"])
        #expect(complete("fetch Inventory show location.inventories.co") == ["location.inventories.count"])
        #expect(complete("fetch Inventory where count > 1 AN") == ["AND", "ANY"])
        #expect(complete("$1.lo") == ["$1.location"])
        // The rows' handles, then those given to the assets and location their values name.
        #expect(complete("show $") == ["$1", "$2", "$3", "$4", "$5"])
        #expect(complete(".mode j") == ["json"])
    }
}

@Suite struct ShellChangeTests {
    @Test func insertSetSaveWritesCoreDatasSQLAndTheRowsAreThereAfterwards() throws {
        let store = try ShellHarness.writableCopy(of: "Inventory")
        defer { try? FileManager.default.removeItem(at: store.deletingLastPathComponent()) }
        let h = try ShellHarness(sqlDebug: 1, storePath: store.path, writable: true)
        try h.run("fetch Location where label == 'Garage'")
        try h.run("insert Asset label = \"Kayak\"", "insert Inventory count = 3, date = \"2026-11-22T10:00:00Z\", asset = $2, location = $1")
        try h.run("set $1.label = \"Garage, east wall\"")
        h.clear()
        try h.run("changes")
        #expect(h.output.contains("| $2     | inserted | Asset     | inventories = $3; label = Kayak"))
        #expect(h.output.contains("| $3     | inserted | Inventory | asset = $2; count = 3; date = 2026-11-22T10:00:00Z; location = $1"))
        h.clear()
        try h.run("save")
        #expect(h.output == "saved: 2 inserted, 1 updated, 0 deleted")
        let sql = h.log.split(separator: "\n").filter { $0.hasPrefix("CoreData: sql: ") }.map { String($0.dropFirst(15)) }
        expectSQL(sql, [
            "BEGIN EXCLUSIVE",
            "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = ?",
            "UPDATE OR FAIL Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_ENT = ? AND Z_MAX = ?",
            "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = ?",
            "UPDATE OR FAIL Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_ENT = ? AND Z_MAX = ?",
            "INSERT INTO ZASSET(Z_PK, Z_ENT, Z_OPT, ZLABEL) VALUES(?, ?, ?, ?)",
            "INSERT INTO ZINVENTORY(Z_PK, Z_ENT, Z_OPT, ZCOUNT, ZASSET, ZLOCATION, ZDATE) VALUES(?, ?, ?, ?, ?, ?, ?)",
            "UPDATE ZLOCATION SET ZLABEL = ?, Z_OPT = ? WHERE Z_PK = ? AND Z_OPT = ?",
            "COMMIT",
        ])
        // Handles follow the objects to their permanent IDs; a new session reads the rows.
        h.clear()
        try h.run("$3")
        #expect(h.output.contains("x-coredata://F00DF00D-0000-4000-8000-000000000001/Inventory/p9"))
        let again = try ShellHarness(storePath: store.path)
        try again.run(".mode csv", "fetch Inventory where asset.label == 'Kayak' show count, date, location.label")
        #expect(again.output == "count,date,location.label\r\n3,2026-11-22T10:00:00Z,\"Garage, east wall\"")
    }

    @Test func aReadOnlyStoreRefusesToSaveAndNothingChanges() throws {
        let store = try ShellHarness.writableCopy(of: "Inventory")
        defer { try? FileManager.default.removeItem(at: store.deletingLastPathComponent()) }
        let before = try TestSupport.snapshot(of: store.deletingLastPathComponent())
        let h = try ShellHarness(storePath: store.path)
        try h.run("insert Location label = \"Attic\"")
        #expect(throws: (any Error).self) { try h.run("save") }
        #expect(try TestSupport.snapshot(of: store.deletingLastPathComponent()) == before)
    }

    @Test func undoRedoRollbackAndDelete() throws {
        let store = try ShellHarness.writableCopy(of: "Inventory")
        defer { try? FileManager.default.removeItem(at: store.deletingLastPathComponent()) }
        let h = try ShellHarness(storePath: store.path, writable: true)
        try h.run("fetch Location sort by label")
        try h.run("set $1.label = \"Carport\"", "undo")
        h.clear()
        try h.run("$1.label")
        #expect(h.output == "Garage")
        try h.run("redo")
        h.clear()
        try h.run("$1.label")
        #expect(h.output == "Carport")
        try h.run("rollback")
        h.clear()
        try h.run("$1.label", "changes")
        #expect(h.output == "Garage\nno unsaved changes")
        try h.run("delete $1", "save", "count Location", "count Inventory")
        // Location's inventories cascade, and their assets lose them: the summary says so.
        #expect(h.output.hasSuffix("""
            saved: 0 inserted, 2 updated, 3 deleted
            by delete rules:
              $4 Inventory deleted (cascade: Location.inventories of $1)
              $5 Inventory deleted (cascade: Location.inventories of $1)
              $6 Asset loses it from inventories (nullify: Inventory.asset of $4)
              $7 Asset loses it from inventories (nullify: Inventory.asset of $5)
            2
            6
            """))
    }

    @Test func badValuesAndRequiredAttributesSayWhatIsWrong() throws {
        let store = try ShellHarness.writableCopy(of: "Recipes")
        defer { try? FileManager.default.removeItem(at: store.deletingLastPathComponent()) }
        let h = try ShellHarness(storePath: store.path, writable: true)
        #expect(throws: ShellError.self) { try h.run("insert Ingredient displayOrder = \"first\"") }
        #expect(throws: ShellError("keypath date not found in entity Ingredient")) { try h.run("insert Ingredient date = 1") }
        try h.run("insert Recipe overview = \"no name\"")
        do {
            try h.run("save")
            Issue.record("a recipe without a name was saved")
        } catch {
            #expect("\(error)".contains("name"))
        }
        #expect(throws: ShellError("cannot read the value tasty: write strings in quotes, numbers, true/false, nil, or a handle such as $3")) {
            try h.run("insert Ingredient name = tasty")
        }
    }

    @Test func keyPathsCompleteInEveryClauseAndInSet() throws {
        let h = try ShellHarness(storePath: TestSupport.packageRoot.appendingPathComponent("Samples/Recipes/Recipes.sqlite").path)
        #expect(h.shell.completions(for: "fetch Recipe show ty") == ["type"])
        #expect(h.shell.completions(for: "fetch Recipe show type.na") == ["type.name"])
        #expect(h.shell.completions(for: "fetch Recipe sort by prep") == ["prepTime"])
        #expect(h.shell.completions(for: "fetch Recipe prefetch ingr") == ["ingredients"])
        #expect(h.shell.completions(for: "count Recipe where type.na") == ["type.name"])
        #expect(h.shell.completions(for: "explain fetch Recipe where na") == ["name"])
        try h.run("fetch Recipe limit 1")
        #expect(h.shell.completions(for: "set $1.prep") == ["$1.prepTime"])
        #expect(h.shell.completions(for: "$") == ["$1", "$2"], "the recipe, and the type its row names")
        #expect(h.shell.completions(for: "show $1.ty") == ["$1.type"])
    }
}
