import FaultlineTestSupport
import Foundation
import Testing

/// Nothing lost without a word: commands that would drop unsaved changes refuse in a script,
/// `.write on` keeps them, and a change in a read-only session says at once what saving needs.
@Suite struct UnsavedChangesTests {
    @Test func commandsThatWouldDropChangesRefuseInAScript() async throws {
        for command in [".open OTHER", ".write off", "refresh $1"] {
            let store = try ShellHarness.writableCopy(of: "Recipes")
            let command = command.replacingOccurrences(of: "OTHER", with: store.path)
            let result = try await TestSupport.faultline([store.path, "--write", "--sql-debug", "0", "--keep-going"], stdin: """
                fetch Recipe where name == "Guacamole"
                set $1.name = "Guac"
                \(command)
                save
                """)
            #expect(result.stderr.contains("Error: line 3: there are unsaved changes"), "\(command): \(result.stderr)")
            #expect(result.stderr.contains("would lose them; save them (save) or drop them (rollback) first"), "\(command)")
            #expect(result.stdout.hasSuffix("saved: 0 inserted, 1 updated, 0 deleted\n"), "\(command): the change was still there to save")
        }
    }

    @Test func writeOnKeepsThePendingEditsAndTheHandles() async throws {
        let store = try ShellHarness.writableCopy(of: "Recipes")
        let result = try await TestSupport.faultline([store.path, "--sql-debug", "0"], stdin: """
            fetch Recipe where name == "Guacamole"
            set $1.prepTime = "99 minutes"
            insert Ingredient name = "Salt", recipe = $1
            fetch RecipeType sort by name limit 1
            delete $2
            .write on
            $1.prepTime
            save
            """)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("faultline: note: this session is read-only; the change is kept, and saving it needs .write on (which keeps it)"))
        #expect(result.stdout.contains("is now open for writing; the unsaved changes are kept (1 inserted, 1 updated, 1 deleted), and so are the handles\n99 minutes\n"))
        #expect(result.stdout.hasSuffix("saved: 1 inserted, 1 updated, 1 deleted\nby delete rules:\n  $1 Recipe loses it from type (nullify: RecipeType.recipes of $2)\n"))
        let check = try await TestSupport.run(URL(fileURLWithPath: "/usr/bin/sqlite3"), [store.path,
            "SELECT ZPREPTIME FROM ZRECIPE WHERE ZNAME = 'Guacamole'; SELECT COUNT(*) FROM ZINGREDIENT WHERE ZNAME = 'Salt' AND ZRECIPE = 3; SELECT COUNT(*) FROM ZRECIPETYPE"])
        #expect(check.stdout == "99 minutes\n1\n11\n")
    }

    @Test func aRowDeletedByAnotherWriterShowsAsGoneAndIsNoChangeToLose() async throws {
        let store = try ShellHarness.writableCopy(of: "Inventory")
        let other = try ShellHarness.writableCopy(of: "Inventory")
        let result = try await TestSupport.faultline([store.path, "--write", "--sql-debug", "0", "--keep-going"], stdin: """
            fetch Inventory where count == 2 show count
            .shell /usr/bin/sqlite3 '\(store.path)' 'DELETE FROM ZLOCATION WHERE Z_PK = 2'
            $1.location.label
            changes
            refresh $2
            .write off
            .write on
            .open \(other.path)
            """)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("| $2     | row gone | Location | its row is gone from the store (another writer deleted it): the save only forgets it |"), "\(result.stdout)")
        #expect(result.stdout.contains("$2 has no row in the store (another writer deleted it): nothing to refresh"), "\(result.stdout)")
        #expect(!result.stderr.contains("unsaved changes") && !result.stdout.contains("unsaved changes are kept"), "nothing of the session's own to lose: \(result.stderr)")
    }
}
