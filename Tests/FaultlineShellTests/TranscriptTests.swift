import FaultlineTestSupport
import Foundation
import Testing

/// Runs the built `faultline` binary as a user would (arguments, piped stdin) and compares
/// its whole output. Timings are measured, so they are masked as `#` before comparing.
@Suite struct TranscriptTests {
    static let store = "Samples/Inventory/Inventory.sqlite"

    @Test func fetchLocationPrintsTheTableAndCoreDatasLog() async throws {
        let result = try await TestSupport.faultline([Self.store, "-c", "fetch Location"])
        #expect(result.status == 0)
        #expect(result.stdout == """
            +----+-----------------+
            | #  | label           |
            +----+-----------------+
            | $1 | Jaye's Basement |
            | $2 | Garage          |
            | $3 | Office          |
            +----+-----------------+
            3 rows

            """)
        #expect(TestSupport.maskingTimings(result.stderr) == """
            CoreData: sql: SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZLABEL FROM ZLOCATION t0
            CoreData: annotation: sql connection fetch time: #
            CoreData: annotation: total fetch execution time: # for 3 rows.
            faultline: 1 statement, #, 3 rows

            """)
    }

    @Test func timingsArePrintedWithFourDecimals() async throws {
        let result = try await TestSupport.faultline([Self.store, "-c", "fetch Location"])
        let regex = try NSRegularExpression(pattern: #"^CoreData: annotation: total fetch execution time: \d+\.\d{4}s for 3 rows\.$"#, options: .anchorsMatchLines)
        #expect(regex.firstMatch(in: result.stderr, range: NSRange(result.stderr.startIndex..., in: result.stderr)) != nil)
    }

    @Test func pipedStdinRunsAsAScriptWithoutAPrompt() async throws {
        let result = try await TestSupport.faultline([Self.store, "--sql-debug", "0"], stdin: "count Inventory\nfetch Asset sort by label limit 2 show label\n")
        #expect(result.status == 0)
        #expect(result.stderr == "")
        #expect(result.stdout == """
            8
            +----+---------------+
            | #  | label         |
            +----+---------------+
            | $1 | Bicycle       |
            | $2 | Camping Stove |
            +----+---------------+
            2 rows

            """)
    }

    @Test func theFirstErrorStopsAScriptWithStatusOne() async throws {
        let result = try await TestSupport.faultline([Self.store, "--sql-debug", "0"], stdin: "fetch Widget\ncount Location\n")
        #expect(result.status == 1)
        #expect(result.stdout == "")
        #expect(result.stderr == "Error: line 1: entity Widget not found in the model; entities: Asset, Inventory, Location\n")
    }

    @Test func keepGoingRunsTheRestAfterAnError() async throws {
        let result = try await TestSupport.faultline([Self.store, "--sql-debug", "0", "--keep-going"], stdin: "fetch Widget\ncount Location\n")
        #expect(result.status == 1)
        #expect(result.stdout == "3\n")
    }

    @Test func handlesFollowToOneRelationships() async throws {
        let result = try await TestSupport.faultline([Self.store, "--sql-debug", "0", "-c", "fetch Inventory limit 1", "-c", "$1.asset.label"])
        #expect(result.status == 0)
        #expect(result.stdout.hasSuffix("1 row\nCoffee Mug\n"))
    }

    @Test func aToManyKeyPathFiresTheRelationshipFaultAndListsTheObjects() async throws {
        let result = try await TestSupport.faultline([Self.store, "-c", "fetch Location limit 1", "-c", "$1.inventories", "-c", "$5.label"])
        #expect(result.status == 0)
        #expect(result.stdout.hasSuffix("""
            +----+-------+----------------------+-------+----------+
            | #  | count | date                 | asset | location |
            +----+-------+----------------------+-------+----------+
            | $2 | 12    | 2026-11-02T09:30:00Z | $5    | $1       |
            | $3 | 30    | 2026-11-02T09:30:00Z | $6    | $1       |
            | $4 | 1     | 2026-11-09T14:00:00Z | $7    | $1       |
            +----+-------+----------------------+-------+----------+
            3 rows
            Coffee Mug

            """))
        let log = TestSupport.maskingTimings(result.stderr).split(separator: "\n").map(String.init)
        #expect(log.contains("CoreData: sql: SELECT 0, t0.Z_PK FROM ZINVENTORY t0 WHERE  t0.ZLOCATION = ?"))
        // The destinations are faults: listing them fires each one (Core Data's N+1).
        #expect(log.contains("faultline: 4 statements, #, 6 rows, 3 object faults, 1 to-many fault fired"))
        #expect(log.contains { $0.hasPrefix("CoreData: annotation: to-many relationship fault \"inventories\" for objectID x-coredata://") && $0.hasSuffix("/Location/p1 fulfilled from database.  Got 3 rows") })
        #expect(log.contains { $0.hasPrefix("CoreData: annotation: fault fulfilled from database for : x-coredata://") && $0.hasSuffix("/Asset/p1") })
    }

    @Test func aFaultStormIsNamedWithItsFix() async throws {
        let result = try await TestSupport.faultline([Self.store, "-c", ".storm 3", "-c", "fetch Inventory show count, asset.label"])
        let log = TestSupport.maskingTimings(result.stderr).split(separator: "\n").map(String.init)
        #expect(log.suffix(2) == [
            "faultline: 6 statements, #, 13 rows, 5 object faults fired",
            "faultline: warning: fault storm: 5 object faults fired one at a time through Inventory.asset, one SELECT each; fetch Inventory with 'prefetch asset' to load them in one statement",
        ])
        let calm = try await TestSupport.faultline([Self.store, "-c", ".storm 5", "-c", "fetch Inventory show count, asset.label"])
        #expect(!calm.stderr.contains("fault storm"))
        let prefetched = try await TestSupport.faultline([Self.store, "-c", ".storm 3", "-c", "fetch Inventory prefetch asset show count, asset.label"])
        #expect(!prefetched.stderr.contains("fault storm"))
        #expect(TestSupport.maskingTimings(prefetched.stderr).hasSuffix("faultline: 2 statements, #, 13 rows\n"))
        #expect(prefetched.stdout == result.stdout)
    }

    @Test func anUnknownKeyPathIsAnErrorInCoreDatasWords() async throws {
        let result = try await TestSupport.faultline([Self.store, "--sql-debug", "0", "-c", "fetch Location limit 1", "-c", "$1.inventories.colour"])
        #expect(result.status == 1)
        #expect(result.stderr == "Error: keypath colour not found in entity Inventory\n")
    }

    @Test func theModelIsFoundBesideTheStoreNamedWithModelOrInferred() async throws {
        let explicit = try await TestSupport.faultline([
            Self.store, "--model", "Samples/Inventory/Inventory.xcdatamodeld", "--sql-debug", "0", "-c", "count Asset",
        ])
        #expect(explicit.stdout == "5\n")
        let folder = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let lone = folder.appendingPathComponent("Inventory.sqlite")
        try FileManager.default.copyItem(at: TestSupport.inventoryFolder.appendingPathComponent("Inventory.sqlite"), to: lone)
        // No model beside it: the model Faultline cached in Z_MODELCACHE when it created the store.
        let lonely = try await TestSupport.faultline([lone.path, "--sql-debug", "0", "-c", "count Asset", "-c", "fetch Inventory where asset.label == 'Laptop' show count"])
        #expect(lonely.status == 0)
        #expect(lonely.stdout.hasPrefix("5\n"))
        #expect(lonely.stdout.contains("| $1 | 1     |"))
        #expect(lonely.stderr == "")
        // Without a cache either, the model is inferred from the tables, with a warning.
        _ = try await TestSupport.run(URL(fileURLWithPath: "/usr/bin/env"), ["sqlite3", lone.path, "DELETE FROM Z_MODELCACHE"])
        let inferred = try await TestSupport.faultline([lone.path, "--sql-debug", "0", "-c", "count Asset"])
        #expect(inferred.stdout == "5\n")
        #expect(inferred.stderr.hasPrefix("faultline: warning: \(lone.path): the store has no model cache; the model was inferred from its tables"))
    }

    @Test func recipesWithTheirTypesAreAFaultStormUnlessTheTypesArePrefetched() async throws {
        let storm = try await TestSupport.faultline(["Samples/Recipes/Recipes.sqlite", "-c", "fetch Recipe show name, type.name"])
        #expect(storm.status == 0)
        #expect(TestSupport.maskingTimings(storm.stderr).hasSuffix("""
            faultline: 13 statements, #, 28 rows, 12 object faults fired
            faultline: warning: fault storm: 12 object faults fired one at a time through Recipe.type, one SELECT each; fetch Recipe with 'prefetch type' to load them in one statement

            """))
        let calm = try await TestSupport.faultline(["Samples/Recipes/Recipes.sqlite", "-c", "fetch Recipe prefetch type show name, type.name"])
        #expect(!calm.stderr.contains("fault storm"))
        #expect(TestSupport.maskingTimings(calm.stderr).hasSuffix("faultline: 2 statements, #, 28 rows\n"))
        #expect(calm.stdout == storm.stdout)
    }

    @Test func aScriptThatEndsWithUnsavedChangesSaysSo() async throws {
        let result = try await TestSupport.faultline([Self.store, "--sql-debug", "0"], stdin: "insert Location label = \"Shed\"\n")
        // Losing changes is a failure of the script, unless it was asked to keep going.
        #expect(result.status == 1)
        #expect(result.stderr == """
            faultline: note: this session is read-only; the change is kept, and saving it needs .write on (which keeps it)
            faultline: warning: the script ended with unsaved changes (1 inserted, 0 updated, 0 deleted); they were not written

            """)
        let going = try await TestSupport.faultline([Self.store, "--sql-debug", "0", "--keep-going", "-c", "insert Location label = \"Shed\""])
        #expect(going.status == 0)
        #expect(going.stderr.hasSuffix("faultline: warning: the script ended with unsaved changes (1 inserted, 0 updated, 0 deleted); they were not written\n"))
    }

    @Test func aMissingStoreIsAClearError() async throws {
        let result = try await TestSupport.faultline(["/nonexistent/Store.sqlite", "--model", "Samples/Inventory/Inventory.xcdatamodeld", "-c", "count Asset"])
        #expect(result.status == 1)
        #expect(result.stderr == "Error: /nonexistent/Store.sqlite: no such store file (to create it from the model, add --write)\n")
    }
}

/// Each sample's store is built by a checked-in script, and its tour's transcript is checked
/// in: both are re-run here, so the samples and their documentation cannot rot.
@Suite struct SampleTests {
    static let samples = ["Inventory", "Recipes", "Triage", "Books"]

    @Test(.enabled(if: TestSupport.hasCommand("sqlite3") || TestSupport.isCI, "skipped: build-store.sh needs the sqlite3 command (apt-get install sqlite3)"),
          arguments: samples)
    func buildStoreReproducesTheCheckedInStore(_ sample: String) async throws {
        let folder = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let built = folder.appendingPathComponent("\(sample).sqlite")
        let script = TestSupport.packageRoot.appendingPathComponent("Samples/build-store.sh")
        let run = try await TestSupport.run(URL(fileURLWithPath: "/bin/sh"), [script.path, sample, built.path, TestSupport.faultlineBinary.path])
        #expect(run.status == 0, "build-store.sh failed: \(run.stderr)")
        // Schema, metadata rows, primary keys and every entity table must match.
        let tables = try await TestSupport.run(URL(fileURLWithPath: "/usr/bin/env"), ["sqlite3", "file:\(built.path)?immutable=1"],
                                         stdin: "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'Z%' AND name NOT IN ('Z_METADATA', 'Z_MODELCACHE') ORDER BY name;")
        var query = "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name;\nSELECT Z_UUID FROM Z_METADATA;\nPRAGMA journal_mode;\nPRAGMA auto_vacuum;\n"
        for table in tables.stdout.split(separator: "\n") { query += "SELECT * FROM \(table) ORDER BY 1;\n" }
        let checkedIn = TestSupport.packageRoot.appendingPathComponent("Samples/\(sample)/\(sample).sqlite")
        let expected = try await TestSupport.run(URL(fileURLWithPath: "/usr/bin/env"), ["sqlite3", "file:\(checkedIn.path)?immutable=1"], stdin: query)
        let actual = try await TestSupport.run(URL(fileURLWithPath: "/usr/bin/env"), ["sqlite3", "file:\(built.path)?immutable=1"], stdin: query)
        #expect(expected.status == 0 && actual.status == 0)
        #expect(expected.stdout.contains("CREATE TABLE"))
        #expect(actual.stdout == expected.stdout)
    }

    @Test(arguments: samples)
    func tourTranscriptIsWhatTheShellPrints(_ sample: String) async throws {
        let folder = TestSupport.packageRoot.appendingPathComponent("Samples/\(sample)")
        let tour = try String(contentsOf: folder.appendingPathComponent("tour.fl"), encoding: .utf8)
        let transcript = try String(contentsOf: folder.appendingPathComponent("tour.transcript"), encoding: .utf8)
        let result = try await TestSupport.faultline(["Samples/\(sample)/\(sample).sqlite"], stdin: tour)
        #expect(result.status == 0, "\(result.stderr)")
        let actual = TestSupport.maskingTimings(result.stdout + result.stderr)
        let expected = TestSupport.maskingTimings(transcript)
        #expect(actual == expected, "Samples/\(sample)/tour.transcript is out of date: run make samples, and review the diff")
    }
}
