import FaultlineTestSupport
import Foundation
import Testing

/// `Samples/RecipesApp`, a package that uses the FaultlineGenerate plugin: it builds (the
/// plugin generating the Recipes classes) and runs, fetching, editing, observing and saving
/// through typed classes.
///
/// Building it builds Faultline a second time, in the sample's own build folder (about 80 s
/// on two cores), so that test runs only with `CI=true` or `FAULTLINE_SAMPLE_BUILD=1`
/// (`make sample` builds and runs the sample itself).
@Suite struct SampleAppTests {
    static let package = TestSupport.packageRoot.appendingPathComponent("Samples/RecipesApp")
    static let buildPath = TestSupport.packageRoot.appendingPathComponent(".build/samples/RecipesApp")

    static var enabled: Bool { TestSupport.isCI || ProcessInfo.processInfo.environment["FAULTLINE_SAMPLE_BUILD"] == "1" }

    static let skipMessage: Comment = """
        skipped: building Samples/RecipesApp builds Faultline again (about 80 s); run it with \
        FAULTLINE_SAMPLE_BUILD=1 swift test --filter SampleAppTests (CI=true runs it too), or build and run the sample with make sample
        """

    /// The app ships the sample's model (a resource it opens the store with, and the plugin's
    /// input): the same files as `Samples/Recipes/Recipes.xcdatamodeld`.
    @Test func theAppShipsTheSampleModel() throws {
        let shipped = Self.package.appendingPathComponent("Sources/RecipesApp/Recipes.xcdatamodeld")
        let sample = TestSupport.packageRoot.appendingPathComponent("Samples/Recipes/Recipes.xcdatamodeld")
        func files(_ folder: URL) throws -> [String: Data] {
            var result: [String: Data] = [:]
            let walker = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: [.isRegularFileKey])
            while let url = walker?.nextObject() as? URL {
                guard try url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile == true else { continue }
                result[String(url.path.dropFirst(folder.path.count))] = try Data(contentsOf: url)
            }
            return result
        }
        let copy = try files(shipped)
        #expect(!copy.isEmpty)
        #expect(copy == (try files(sample)), "Samples/RecipesApp/Sources/RecipesApp/Recipes.xcdatamodeld must be a copy of Samples/Recipes/Recipes.xcdatamodeld")
    }

    @Test(.enabled(if: enabled, skipMessage), .timeLimit(.minutes(20)))
    func recipesAppBuildsWithThePluginAndRuns() async throws {
        let swift = try #require(
            (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map { URL(fileURLWithPath: String($0)).appendingPathComponent("swift") }
                .first { FileManager.default.isExecutableFile(atPath: $0.path) }, "swift is not on the PATH")
        let start = Date()
        let build = try await TestSupport.run(swift, ["build", "--package-path", Self.package.path, "--build-path", Self.buildPath.path])
        let seconds = Date().timeIntervalSince(start)
        #expect(build.status == 0, "swift build of Samples/RecipesApp failed:\n\(build.stdout)\n\(build.stderr)")
        try #require(build.status == 0)
        let output = build.stdout + build.stderr
        #expect(output.contains("Generating Faultline classes from Recipes.xcdatamodeld") || output.contains("Build complete"), "\(output)")
        let warnings = output.split(separator: "\n").filter { $0.contains("warning:") }
        #expect(warnings.isEmpty, "the sample built with warnings:\n\(warnings.joined(separator: "\n"))")
        print("SampleAppTests: swift build of Samples/RecipesApp took \(String(format: "%.0f", seconds)) s")

        let run = try await TestSupport.run(Self.buildPath.appendingPathComponent("debug/RecipesApp"), [])
        #expect(run.status == 0, "RecipesApp failed:\n\(run.stdout)\n\(run.stderr)")
        let expected = """
            fetched 2 recipes starting with G:
              Ginger Soy Chicken (Entree, 40 minutes): Chicken thighs, Ginger, Soy sauce
              Guacamole (Appetizer, 15 minutes): Avocado, Lime, Onion, Cilantro
            before save: Guacamole has 5 ingredients; Gazpacho is Soup
            did-save notification: inserted Ingredient Jalapeño, Recipe Gazpacho; updated Recipe Guacamole, RecipeType Soup
            event willSave: 0 inserted, 0 updated, 0 deleted
            event objectsDidChange: 2 inserted, 2 updated, 0 deleted
            event didSave: 2 inserted, 2 updated, 0 deleted
            saved: Gazpacho, 30 minutes, Soup, ingredients: none
            saved: Guacamole, 20 minutes, Appetizer, ingredients: Avocado, Cilantro, Jalapeño, Lime, Onion

            """
        #expect(run.stdout == expected)
    }
}
