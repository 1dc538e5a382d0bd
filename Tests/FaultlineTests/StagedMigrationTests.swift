import Faultline
import FaultlineTestSupport
import Foundation
import Testing

/// Staged migration: a store made by any version goes through every later one, with custom
/// code between steps (Core Data's `NSStagedMigrationManager`).
@Suite(.enabled(if: Corpus.shouldRun, Corpus.skipMessage)) struct StagedMigrationTests {
    static func versions(_ bundle: String) throws -> [ManagedObjectModel] {
        try ManagedObjectModel.versions(at: Corpus.required().appendingPathComponent("models/\(bundle)")).map { try $0.loadModel() }
    }

    @Test func aBundleMigratesFromEveryOlderVersionThroughItsVersions() throws {
        let bundle = try Corpus.required().appendingPathComponent("models/VersionedModel.xcdatamodeld")
        let versions = try Self.versions("VersionedModel.xcdatamodeld")
        #expect(versions.count == 4)
        guard let current = versions.last else { return }
        for (index, old) in versions.enumerated() {
            let folder = try TestSupport.temporaryDirectory("staged")
            defer { try? FileManager.default.removeItem(at: folder) }
            let url = folder.appendingPathComponent("Store.sqlite")
            let populated = try StorePopulator(model: old, options: .init(objectsPerEntity: 4)).populate(storeAt: url)
            let result = try StagedMigration(versionsOf: bundle).migrateStore(at: url)
            // Version 4 removes what version 3 added: a store of version 2 is already a store of 4.
            let upToDate = current.entityVersionHashesByName == old.entityVersionHashesByName
            #expect(result.steps.count == (upToDate ? 0 : versions.count - 1 - index), "from version \(index + 1)")
            #expect(try SchemaConformance.problems(storeAt: url, model: current).isEmpty)
            let after = try StoreSnapshot(storeAt: url, model: current)
            #expect(after.compare(with: populated.expected).mismatches.isEmpty, "from version \(index + 1)")
            #expect(after.counts == populated.expected.counts)
        }
    }

    @Test func customStagesRunTheirCodeBeforeAndAfterTheirStep() throws {
        let v = try Self.versions("VersionedModel.xcdatamodeld")
        let folder = try TestSupport.temporaryDirectory("staged")
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("Store.sqlite")
        _ = try StorePopulator(model: v[0], options: .init(objectsPerEntity: 3)).populate(storeAt: url)
        nonisolated(unsafe) var seenBefore = 0
        let stages = StagedMigration(stages: [
            .custom(from: v[0], to: v[1], willMigrate: { context in
                seenBefore = try context.count(for: FetchRequest(entityName: "Article"))
            }, didMigrate: { context in
                for article in try context.fetch(FetchRequest(entityName: "Article")) { try article.setValue("Staff", forKey: "authorName") }
            }),
            .lightweight([v[1], v[2], v[3]]),
        ])
        let result = try stages.migrateStore(at: url)
        #expect(result.steps.count == 3)
        #expect(seenBefore == 3)
        let after = try StoreSnapshot(storeAt: url, model: v[3])
        let authors = after.entities["Article"]?.objects.values.map { $0.attributes["authorName"] }
        #expect(authors?.count == 3 && authors?.allSatisfy { $0 == StoreSnapshot.Value("Staff") } == true, "\(String(describing: authors))")
        // Run again: the store is at the last version, nothing to do.
        #expect(try stages.migrateStore(at: url).steps.isEmpty)
    }

    @Test func aFailingCustomStageLeavesTheStoreAtTheLastCompletedVersion() throws {
        let v = try Self.versions("VersionedModel.xcdatamodeld")
        let folder = try TestSupport.temporaryDirectory("staged")
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("Store.sqlite")
        _ = try StorePopulator(model: v[0], options: .init(objectsPerEntity: 2)).populate(storeAt: url)
        struct Refused: Error {}
        let stages = StagedMigration(stages: [
            .lightweight([v[0], v[1]]),
            .custom(from: v[1], to: v[2], willMigrate: { _ in throw Refused() }),
            .lightweight([v[2], v[3]]),
        ])
        let error = #expect(throws: PersistentStoreError.self) { try stages.migrateStore(at: url) }
        #expect(error?.code == .migrationFailed)
        #expect(error?.message.hasPrefix("stage 2: the custom code before its migration failed") == true, "\(String(describing: error))")
        // The first stage's step stayed done: the store opens with version 2.
        #expect(try SchemaConformance.problems(storeAt: url, model: v[1]).isEmpty)
        // Stages that do not chain, and a store no stage made, are refused before anything runs.
        let broken = StagedMigration(stages: [.lightweight([v[0], v[1]]), .lightweight([v[2], v[3]])])
        let chain = #expect(throws: PersistentStoreError.self) { try broken.migrateStore(at: url) }
        #expect(chain?.message.contains("stage 2 does not start at the version stage 1 ends with") == true)
        let fresh = folder.appendingPathComponent("Fresh.sqlite")
        _ = try StorePopulator(model: v[0], options: .init(objectsPerEntity: 1)).populate(storeAt: fresh)
        let none = #expect(throws: PersistentStoreError.self) { try StagedMigration(stages: [.lightweight([v[2], v[3]])]).migrateStore(at: fresh) }
        #expect(none?.code == .missingSourceModel)
    }

    @Test func aNonInferableStepIsCoreDatasError134190() throws {
        let v = try Self.versions("Bookmark.xcdatamodeld")
        let folder = try TestSupport.temporaryDirectory("staged")
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("Store.sqlite")
        _ = try StorePopulator(model: v[0], options: .init(objectsPerEntity: 2)).populate(storeAt: url)
        let before = try Data(contentsOf: url)
        let error = #expect(throws: PersistentStoreError.self) { try StagedMigration(stages: [.lightweight(v)]).migrateStore(at: url) }
        #expect(error?.code == .inferredMappingFailed)
        #expect(try Data(contentsOf: url) == before)
    }
}
