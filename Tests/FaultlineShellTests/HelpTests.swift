import FaultlineTestSupport
import Foundation
import Testing

/// Help that teaches: every clause is listed, and the predicate examples are this store's own
/// and run as they are printed.
@Suite struct HelpTests {
    @Test(arguments: ["Inventory", "Recipes", "Triage", "Books"])
    func everyPredicateExampleRunsOnTheStoreItWasWrittenFor(sample: String) async throws {
        let store = TestSupport.packageRoot.appendingPathComponent("Samples/\(sample)/\(sample).sqlite").path
        let help = try await TestSupport.faultline([store, "-c", ".help predicates"])
        #expect(help.status == 0)
        let lines = help.stdout.split(separator: "\n").map(String.init)
        let entity = try #require(lines.first?.components(separatedBy: "with this store's ").last?.dropLast()).description
        // The first example of each line, up to the first run of three spaces.
        var examples: [String] = []
        for line in lines where line.hasPrefix("  ") && !line.hasPrefix("  constants") {
            let body = line.dropFirst(20)
            guard let first = body.components(separatedBy: "   ").first?.trimmingCharacters(in: .whitespaces), !first.contains("KEY"),
                !first.hasPrefix("(") else { continue }
            examples.append(first)
        }
        #expect(examples.count >= 5, "\(examples)")
        let script = examples.map { "count \(entity) where \($0)" }.joined(separator: "\n") + "\n"
            + (lines.first { $0.hasPrefix("Example:") }?.dropFirst("Example:".count).trimmingCharacters(in: .whitespaces) ?? "")
        let run = try await TestSupport.faultline([store, "--sql-debug", "0"], stdin: "fetch \(entity) limit 2\n" + script + "\n")
        #expect(run.status == 0, "\(sample): \(run.stderr)\n\(script)")
    }

    @Test func helpForACommandShowsEveryClause() async throws {
        let store = TestSupport.inventoryFolder.appendingPathComponent("Inventory.sqlite").path
        let fetch = try await TestSupport.faultline([store, "-c", ".help fetch"])
        #expect(fetch.stdout.hasPrefix("fetch Entity [where PREDICATE] [sort by KEY [asc|desc], …] [limit N] [offset N] [batch N] [prefetch REL, …] [show KEY, …]\n"))
        let count = try await TestSupport.faultline([store, "-c", ".help count"])
        #expect(count.stdout.hasPrefix("count Entity [where PREDICATE]"))
        let all = try await TestSupport.faultline([store, "-c", ".help"])
        #expect(all.stdout.contains(".help predicates"))
    }

    @Test func errorExamplesNameTheOpenStoresEntities() async throws {
        let store = TestSupport.packageRoot.appendingPathComponent("Samples/Recipes/Recipes.sqlite").path
        let result = try await TestSupport.faultline([store, "--keep-going", "-c", "fetch", "-c", "insert", "-c", "fetch Recipe show", "-c", ".raw"])
        #expect(result.stderr.contains("expected an entity name, as in: fetch Recipe"))
        #expect(result.stderr.contains("insert needs an entity, as in: insert Recipe name = "))
        #expect(result.stderr.contains("'show' needs key paths, as in: show name, type.name"))
        #expect(result.stderr.contains(".raw needs SQL, as in: .raw SELECT COUNT(*) FROM ZRECIPE"))
        #expect(!result.stderr.contains("Location"))
    }
}
