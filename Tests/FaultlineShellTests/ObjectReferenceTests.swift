import FaultlineTestSupport
import Foundation
import Testing

/// Handles and pasted object URIs wherever an object is meant: in predicates, in `show`, in
/// key paths and as values.
@Suite struct ObjectReferenceTests {
    static let recipes = TestSupport.packageRoot.appendingPathComponent("Samples/Recipes/Recipes.sqlite").path
    static let store = "F00DF00D-0000-4000-8000-000000000002"

    @Test func handlesAndURIsAreObjectsInPredicates() async throws {
        let result = try await TestSupport.faultline([Self.recipes, "--sql-debug", "2"], stdin: """
            fetch Recipe where name == "Guacamole"
            count Ingredient where recipe == $1
            fetch Recipe sort by name limit 3
            count Recipe where self IN {$1, $2}
            count Ingredient where recipe == x-coredata://\(Self.store)/Recipe/p3
            x-coredata://\(Self.store)/Recipe/p3.name
            show $1.ingredients where recipe != $1
            count Recipe where name == "$1"
            """)
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init).filter { !$0.hasPrefix("+") && !$0.hasPrefix("|") }
        #expect(lines == ["1 row", "4", "3 rows", "2", "4", "Guacamole", "0 rows", "0"])
        // Bound as the primary key, as Core Data binds an object.
        #expect(result.stderr.contains("CoreData: sql: SELECT COUNT(DISTINCT t0.Z_PK) FROM ZINGREDIENT t0 WHERE  t0.ZRECIPE = ?\nCoreData: details: SQLite bind[0] = 3\n"))
    }

    @Test func aURIOfAnotherStoreOrAMissingRowIsAClearError() async throws {
        let other = try await TestSupport.faultline([Self.recipes, "-c", "count Ingredient where recipe == x-coredata://ABC/Recipe/p3"])
        #expect(other.status == 1)
        #expect(other.stderr == "Error: x-coredata://ABC/Recipe/p3 names an object of another store (ABC); this store is \(Self.store)\n")
        let missing = try await TestSupport.faultline([Self.recipes, "-c", "show x-coredata://\(Self.store)/Recipe/p999"])
        #expect(missing.status == 1)
        #expect(missing.stderr.hasSuffix("Error: x-coredata://\(Self.store)/Recipe/p999: the store has no Recipe with primary key 999\n"))
    }
}
