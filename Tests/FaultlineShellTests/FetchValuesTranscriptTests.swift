import Faultline
import FaultlineShell
import FaultlineTestSupport
import Foundation
import Testing

/// `fetch … ids`, `fetch … values … group by … having …`, `fetch … properties …`: transcripts
/// of the built binary on the Recipes and Inventory samples (SQL shapes and their sources in
/// `Documentation/Fetching.md`).
@Suite struct FetchValuesTranscriptTests {
    static let recipes = TestSupport.packageRoot.appendingPathComponent("Samples/Recipes/Recipes.sqlite").path
    static let inventory = TestSupport.inventoryFolder.appendingPathComponent("Inventory.sqlite").path

    @Test func groupedValuesPrintAsATableWithTheirSQL() async throws {
        let result = try await TestSupport.faultline([Self.recipes], stdin: """
            fetch Recipe values type.name as type, count(name), average(prepTime) group by type.name sort by type.name limit 3
            """)
        #expect(result.stdout == """
            +-----------+-------+---------+
            | type      | count | average |
            +-----------+-------+---------+
            | Appetizer | 1     | 15      |
            | Beverage  | 2     | 7.5     |
            | Bread     | 1     | 2       |
            +-----------+-------+---------+
            3 rows

            """, "\(result.stderr)")
        #expect(TestSupport.maskingTimings(result.stderr) == """
            CoreData: sql: SELECT t1.ZNAME, COUNT( t0.ZNAME), AVG( t0.ZPREPTIME) FROM ZRECIPE t0 LEFT OUTER JOIN ZRECIPETYPE t1 ON t0.ZTYPE = t1.Z_PK GROUP BY  t1.ZNAME ORDER BY t1.ZNAME  LIMIT 3
            CoreData: annotation: sql connection fetch time: #
            CoreData: annotation: total fetch execution time: # for 3 rows.
            faultline: 1 statement, #, 3 rows

            """)
    }

    @Test func havingNamesAValueByItsNameOrAsWritten() async throws {
        for having in ["n > 1", "$n > 1"] {
            let result = try await TestSupport.faultline([Self.recipes], stdin: """
                .mode json
                fetch Recipe values type.name as type, count(*) as n group by type having \(having) sort by type
                """)
            #expect(result.stdout == """
                [{"type":"Beverage","n":2},
                {"type":"Dessert","n":3},
                {"type":"Entree","n":2}]

                """, "\(result.stderr)")
            #expect(result.stderr.contains("CoreData: sql: SELECT t1.ZNAME, COUNT( t0.Z_PK) AS __var0 FROM ZRECIPE t0 LEFT OUTER JOIN ZRECIPETYPE t1 ON t0.ZTYPE = t1.Z_PK GROUP BY  t1.ZNAME HAVING __var0 > ? ORDER BY t1.ZNAME\n"))
        }
        let written = try await TestSupport.faultline([Self.inventory, "--sql-debug", "0"], stdin: """
            .mode csv
            fetch Inventory values count, count(count) group by count having count(count) > 1
            """)
        #expect(written.stdout.replacingOccurrences(of: "\r\n", with: "\n") == "count,count_count\n1,3\n", "\(written.stderr)")
    }

    @Test func idsAreHandlesWithoutValues() async throws {
        // Immutable: the sqlite3 CLI would open the checked-in sample read-write and make a -wal
        // and -shm beside it, which other tests reading the sample at that moment trip over.
        let uuid = try await TestSupport.run(URL(fileURLWithPath: "/usr/bin/sqlite3"), ["file:\(Self.recipes)?immutable=1", "SELECT Z_UUID FROM Z_METADATA"]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let result = try await TestSupport.faultline([Self.recipes], stdin: """
            fetch Recipe ids where type.name == "Dessert" sort by name limit 2
            $2.name
            """)
        #expect(result.stdout == """
            +----+-------------------------------------------------------------+
            | #  | objectID                                                    |
            +----+-------------------------------------------------------------+
            | $1 | x-coredata://\(uuid)/Recipe/p1 |
            | $2 | x-coredata://\(uuid)/Recipe/p2 |
            +----+-------------------------------------------------------------+
            2 rows
            Crêpes Suzette

            """, "\(result.stderr)")
        #expect(result.stderr.hasPrefix("CoreData: sql: SELECT 0, t0.Z_PK FROM ZRECIPE t0 JOIN ZRECIPETYPE t1 ON t0.ZTYPE = t1.Z_PK WHERE  t1.ZNAME = ? ORDER BY t0.ZNAME  LIMIT 2\n"))
    }

    @Test func propertiesFetchPartialObjects() async throws {
        let result = try await TestSupport.faultline([Self.recipes], stdin: """
            fetch Recipe properties name limit 2
            $1.prepTime
            """)
        #expect(result.stdout == """
            +----+----------------+
            | #  | name           |
            +----+----------------+
            | $1 | Chocolate Cake |
            | $2 | Crêpes Suzette |
            +----+----------------+
            2 rows
            1 hour

            """, "\(result.stderr)")
        let sql = result.stderr.split(separator: "\n").filter { $0.hasPrefix("CoreData: sql: ") }
        #expect(sql == [
            "CoreData: sql: SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZNAME FROM ZRECIPE t0  LIMIT 2",
            "CoreData: sql: SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZINSTRUCTIONS, t0.ZNAME, t0.ZOVERVIEW, t0.ZPREPTIME, t0.ZTYPE FROM ZRECIPE t0 WHERE  t0.Z_PK = ?",
        ])
    }

    @Test func valuesAreValuesInEveryMode() async throws {
        for mode in ["table", "box", "line", "csv", "json", "markdown", "list", "tabs", "quote", "insert", "html"] {
            let result = try await TestSupport.faultline([Self.inventory, "--sql-debug", "0"], stdin: """
                .mode \(mode)
                fetch Inventory values asset, asset.label as label, date, min(date) as first, sum(count) as total group by asset, asset.label, date
                fetch Inventory values max(date), average(count), count(*)
                fetch Location values objectID, label distinct
                fetch Asset ids limit 2
                """)
            #expect(result.status == 0, "\(mode): \(result.stderr)")
            for bad in ["Optional(", "ManagedObjectID(", "AnyHashable", "Int64(", "<Asset"] {
                #expect(!result.stdout.contains(bad), "\(mode): \(result.stdout)")
            }
        }
        let json = try await TestSupport.faultline([Self.inventory, "--sql-debug", "0"], stdin: """
            .mode json
            fetch Inventory values max(date), average(count), count(*), sum(count)
            """)
        #expect(json.stdout == "[{\"max\":\"2026-11-16T18:45:30.500Z\",\"average\":7.125,\"count\":8,\"sum\":57}]\n", "\(json.stderr)")
    }

    @Test func explainShowsTheDictionarySQLAndPlan() async throws {
        let result = try await TestSupport.faultline([Self.recipes, "--sql-debug", "0"], stdin: """
            explain fetch Recipe values type.name as type, count(*) as n group by type having n > 1
            explain fetch Recipe ids limit 2
            """)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "sql: SELECT t1.ZNAME, COUNT( t0.Z_PK) AS __var0 FROM ZRECIPE t0 LEFT OUTER JOIN ZRECIPETYPE t1 ON t0.ZTYPE = t1.Z_PK GROUP BY  t1.ZNAME HAVING __var0 > ?", "\(result.stderr)")
        #expect(lines.contains("bind[0] = 1"))
        #expect(lines.contains { $0.contains("USE TEMP B-TREE FOR GROUP BY") })
        #expect(lines.contains("sql: SELECT 0, t0.Z_PK FROM ZRECIPE t0  LIMIT 2"))
    }

    @Test func theNewClausesComplete() throws {
        let shell = try ShellHarness(storePath: Self.recipes).shell
        #expect(shell.completions(for: "fetch Recipe val") == ["values"])
        #expect(shell.completions(for: "fetch Recipe values type.name, count(name) group") == ["group by"])
        #expect(shell.completions(for: "fetch Recipe values type.na") == ["type.name"])
    }

    @Test func mistakesAreExplained() async throws {
        // The shell stops at the first error of piped input: one run per mistake.
        let mistakes = [
            ("fetch Recipe values name, count(name) group by type.name",
             "SELECT clauses in queries with GROUP BY components can only contain properties named in the GROUP BY or aggregate functions (name is neither)"),
            ("fetch Recipe values median(name)", "unknown function median("),
            ("fetch Recipe ids values name", "a fetch returns one kind of result"),
            ("fetch Recipe values count(name) having count > 1", "'having' filters groups"),
            ("fetch Recipe values ingredients", "to-many key not allowed here"),
            ("fetch Recipe properties ingredients.name", "ingredients.name"),
            ("fetch Recipe values nope", "keypath nope not found in entity Recipe"),
        ]
        for (line, message) in mistakes {
            let result = try await TestSupport.faultline([Self.recipes, "--sql-debug", "0"], stdin: line + "\n")
            #expect(result.stderr.contains(message), "\(line): \(result.stderr)")
            #expect(!result.stderr.contains("Fatal"))
        }
    }
}
