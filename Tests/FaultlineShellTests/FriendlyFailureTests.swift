import FaultlineTestSupport
import Foundation
import Testing

/// Failures in Core Data's words, with a way out.
@Suite struct FriendlyFailureTests {
    static func taggedStore() throws -> (store: URL, model: URL) {
        let folder = try TestSupport.temporaryDirectory("friendly")
        let model = folder.appendingPathComponent("Tags.xcdatamodel")
        try FileManager.default.createDirectory(at: model, withIntermediateDirectories: true)
        try Data("""
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel">
                <entity name="Tag" representedClassName="Tag">
                    <attribute name="name" optional="YES" attributeType="String"/>
                    <uniquenessConstraints><uniquenessConstraint><constraint value="name"/></uniquenessConstraint></uniquenessConstraints>
                </entity>
            </model>
            """.utf8).write(to: model.appendingPathComponent("contents"))
        return (folder.appendingPathComponent("Tags.sqlite"), model)
    }

    @Test func aUniquenessViolationReadsAsAConstraintConflict() async throws {
        let (store, model) = try Self.taggedStore()
        let result = try await TestSupport.faultline([store.path, "--model", model.path, "--write", "--sql-debug", "0", "--keep-going"], stdin: """
            insert Tag name = "red"
            save
            insert Tag name = "red"
            save
            rollback
            """)
        let lines = result.stderr.split(separator: "\n").map(String.init)
        let uuid = try await Self.uuid(store)
        #expect(lines.contains { $0.hasPrefix("Error: line 4: constraint conflict (uniqueness constraint of Tag on name): x-coredata:///Tag/t") && $0.hasSuffix(" has name = red, as x-coredata://\(uuid)/Tag/p1 already has; nothing was written") }, "\(result.stderr)")
        #expect(!result.stderr.contains("2067"))
    }

    @Test func mergePolicyShowsAndSetsTheContextsPolicy() async throws {
        let result = try await TestSupport.faultline([TestSupport.inventoryFolder.appendingPathComponent("Inventory.sqlite").path, "--sql-debug", "0"], stdin: """
            .merge-policy
            .merge-policy objectTrump
            .merge-policy
            .merge-policy sideways
            """)
        #expect(result.stdout == "merge policy: error (one of error, rollback, overwrite, objectTrump, storeTrump)\nmerge policy: objectTrump\nmerge policy: objectTrump (one of error, rollback, overwrite, objectTrump, storeTrump)\n")
        #expect(result.stderr == "Error: line 4: .merge-policy needs one of error, rollback, overwrite, objectTrump, storeTrump, found \"sideways\"\n")
    }

    static func uuid(_ store: URL) async throws -> String {
        try await TestSupport.run(URL(fileURLWithPath: "/usr/bin/sqlite3"), [store.path, "SELECT Z_UUID FROM Z_METADATA"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
