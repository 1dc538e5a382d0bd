import FaultlineTestSupport
import Foundation
import Testing

/// Fault-storm advice names a key path `prefetch` accepts, from the entity that was fetched.
@Suite struct FaultAdviceTests {
    static let recipes = TestSupport.packageRoot.appendingPathComponent("Samples/Recipes/Recipes.sqlite").path

    @Test func theAdviceIsTheFullKeyPathFromTheFetchedEntityAndItWorks() async throws {
        let storm = try await TestSupport.faultline([Self.recipes, "--sql-debug", "0"], stdin: ".storm 1\nfetch Recipe limit 3 show type.recipes\n")
        let warnings = storm.stderr.split(separator: "\n").filter { $0.contains("fault storm") }
        #expect(warnings == [
            "faultline: warning: fault storm: 2 object faults fired one at a time through Recipe.type, one SELECT each; fetch Recipe with 'prefetch type' to load them in one statement",
            "faultline: warning: fault storm: 2 to-many faults fired one at a time through RecipeType.recipes, one SELECT each; fetch Recipe with 'prefetch type.recipes' to load them in one statement",
        ])
        // Following the advice: no storm, and the summary counts the faults by kind.
        let calm = try await TestSupport.faultline([Self.recipes], stdin: ".storm 1\nfetch Recipe limit 3 prefetch type.recipes show type.recipes\n")
        #expect(calm.status == 0, "\(calm.stderr)")
        #expect(!calm.stderr.contains("fault storm"))
    }
}
