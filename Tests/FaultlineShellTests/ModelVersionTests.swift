import FaultlineTestSupport
import Foundation
import Testing

/// A store opened beside (or with) another version of its model.
@Suite struct ModelVersionTests {
    /// A copy of the Inventory store beside a later model: Asset gains a `color`.
    static func storeBesideALaterModel() throws -> URL {
        let folder = try TestSupport.temporaryDirectory("versions")
        try FileManager.default.copyItem(at: TestSupport.inventoryFolder.appendingPathComponent("Inventory.sqlite"), to: folder.appendingPathComponent("Inventory.sqlite"))
        let bundle = folder.appendingPathComponent("Inventory.xcdatamodeld")
        try FileManager.default.copyItem(at: TestSupport.inventoryFolder.appendingPathComponent("Inventory.xcdatamodeld"), to: bundle)
        let version = try #require(try FileManager.default.contentsOfDirectory(atPath: bundle.path).first { $0.hasSuffix(".xcdatamodel") })
        let contents = bundle.appendingPathComponent(version).appendingPathComponent("contents")
        var xml = try String(contentsOf: contents, encoding: .utf8)
        xml = xml.replacingOccurrences(
            of: "<entity name=\"Asset\" representedClassName=\"Asset\" syncable=\"YES\" codeGenerationType=\"class\">",
            with: "<entity name=\"Asset\" representedClassName=\"Asset\" syncable=\"YES\" codeGenerationType=\"class\">\n        <attribute name=\"color\" optional=\"YES\" attributeType=\"Integer 16\"/>")
        try xml.write(to: contents, atomically: true, encoding: .utf8)
        return folder.appendingPathComponent("Inventory.sqlite")
    }

    @Test func theStoresOwnModelIsUsedWithOneWarning() async throws {
        let store = try Self.storeBesideALaterModel()
        let result = try await TestSupport.faultline([store.path, "--sql-debug", "0", "-c", "count Asset"])
        #expect(result.status == 0)
        #expect(result.stdout == "5\n")
        #expect(result.stderr == "faultline: warning: \(store.path) was made by another version of the model than \(store.deletingLastPathComponent().appendingPathComponent("Inventory.xcdatamodeld").path) (entities that differ: Asset (changed)); using the model cached in the store. Choose with --model PATH (another version) or --model-from-store; 'faultline schema STORE --model M' shows the differences. "
            + "Lightweight migration to it is possible: 'migrate --dry-run' shows it and runs it on a copy, 'migrate --write' migrates the store\n")
        let fromStore = try await TestSupport.faultline([store.path, "--model-from-store", "--sql-debug", "0", "-c", "count Asset"])
        #expect(fromStore.status == 0 && fromStore.stdout == "5\n" && fromStore.stderr.isEmpty)
    }

    @Test func schemaWithAnotherVersionShowsTheDifferences() async throws {
        let store = try Self.storeBesideALaterModel()
        let model = store.deletingLastPathComponent().appendingPathComponent("Inventory.xcdatamodeld").path
        let result = try await TestSupport.faultline(["schema", store.path, "--model", model])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "The store was made by another version of the model than \(model): 1 of 3 entities differ.")
        #expect(lines.count == 3)
        #expect(lines[1].hasPrefix("entity Asset: model hash ") && lines[1].contains(", store hash "))
        #expect(lines[2] == "  attribute color: only in the model (Integer 16)")
    }

    @Test func modelOfAStoreWithoutACacheIsInferredWithAWarning() async throws {
        let store = try Self.storeBesideALaterModel()
        _ = try await TestSupport.run(URL(fileURLWithPath: "/usr/bin/sqlite3"), [store.path, "UPDATE Z_MODELCACHE SET Z_CONTENT = NULL"])
        let result = try await TestSupport.faultline(["model", store.path])
        #expect(result.status == 0)
        #expect(result.stdout.hasPrefix("Model \(store.path) (inferred from the tables): 3 entities"))
        #expect(result.stderr.contains("the store has no model cache; the model was inferred from its tables"))
        // Opening it beside the later model now fails, saying why and what to do.
        let open = try await TestSupport.faultline([store.path, "-c", "count Asset"])
        #expect(open.status == 1)
        #expect(open.stderr.contains("the store caches no model of its own: open it with the model version that made it"))
    }
}
