import FaultlineTestSupport
import Foundation
import Testing

/// `changes` and the save summary say what delete rules reach, with the rule and relationship.
@Suite struct DeleteRuleVisibilityTests {
    @Test func deletingARecipeShowsItsCascadedIngredientsAndTheNullifiedType() async throws {
        let store = try ShellHarness.writableCopy(of: "Recipes")
        let result = try await TestSupport.faultline([store.path, "--write", "--sql-debug", "0"], stdin: """
            fetch Recipe where name == "Guacamole"
            delete $1
            changes
            save
            """)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("| $3     | deleted by a delete rule | Ingredient | deleted (cascade: Recipe.ingredients of $1)"))
        #expect(result.stdout.contains("| $2     | updated                  | RecipeType | loses it from recipes (nullify: Recipe.type of $1); recipes = (empty) |"))
        #expect(result.stdout.contains("6 changes\n"))
        #expect(result.stdout.hasSuffix("""
            saved: 0 inserted, 1 updated, 5 deleted
            by delete rules:
              $3 Ingredient deleted (cascade: Recipe.ingredients of $1)
              $4 Ingredient deleted (cascade: Recipe.ingredients of $1)
              $5 Ingredient deleted (cascade: Recipe.ingredients of $1)
              $6 Ingredient deleted (cascade: Recipe.ingredients of $1)
              $2 RecipeType loses it from recipes (nullify: Recipe.type of $1)

            """))
    }
}
