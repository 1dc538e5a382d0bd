import Faultline
import FaultlineSQL
import FaultlineTestSupport
import Foundation
import Testing

/// Migrates stores made by one model version to another and checks every object and value,
/// the row counts, the schema and the store's integrity.
enum MigrationHarness {
    struct Outcome {
        var result: LightweightMigration.Result
        var comparison: StoreSnapshot.Comparison
        var countsBefore: [String: Int]
        var countsAfter: [String: Int]
        var url: URL
        var populated: StorePopulator.Result
    }

    /// Old entity and property names → new ones, from the inferred mapping.
    static func renames(_ mapping: InferredMapping) -> StoreSnapshot.Renames {
        var renames = StoreSnapshot.Renames()
        for e in mapping.entityMappings {
            guard let s = e.source else { continue }
            renames.entities[s.name] = e.destination.name
            var properties: [String: String] = [:]
            for a in e.attributes { if let sa = a.source { properties[sa.name] = a.destination.name } }
            for r in e.relationships { if let sr = r.source { properties[sr.name] = r.destination.name } }
            renames.properties[s.name] = properties
        }
        return renames
    }

    /// Populates a store with `old`, migrates it to `new`, and checks it.
    static func migrate(
        _ old: ManagedObjectModel, _ new: ManagedObjectModel, folder: URL? = nil, options: StorePopulator.Options = .init(objectsPerEntity: 4),
        prepare: ((URL) throws -> Void)? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> Outcome {
        let folder = try folder ?? TestSupport.temporaryDirectory("migration")
        let url = folder.appendingPathComponent("Store.sqlite")
        let populated = try StorePopulator(model: old, options: options).populate(storeAt: url)
        try prepare?(url)
        let countsBefore = try StoreRowCounts.read(storeAt: url)
        let migration = try LightweightMigration(storeURL: url, sourceModel: old, destinationModel: new)
        let result = try migration.run()
        let problems = try SchemaConformance.problems(storeAt: url, model: new)
        #expect(problems.isEmpty, "\(problems)", sourceLocation: sourceLocation)
        let after = try StoreSnapshot(storeAt: url, model: new)
        var comparison = after.compare(with: populated.expected, renames: renames(migration.mapping))
        // Links to objects of removed entities go with them.
        let removed = Set(migration.mapping.removedEntities.map(\.name))
        comparison.mismatches.removeAll {
            if case .relationshipChanged(_, _, let old, let new) = $0 { return new.isEmpty && old.allSatisfy { removed.contains($0.entity) } }
            return false
        }
        #expect(comparison.mismatches.isEmpty, "\(comparison.mismatches.prefix(10).map(\.description))", sourceLocation: sourceLocation)
        let countsAfter = try StoreRowCounts.read(storeAt: url)
        // Every kept entity has as many rows as before (under its new name).
        let names = renames(migration.mapping)
        for (oldName, count) in countsBefore where count > 0 {
            guard migration.mapping.entityMapping(forSource: oldName) != nil else { continue }
            #expect(countsAfter[names.entity(oldName)] == count, "\(oldName) → \(names.entity(oldName))", sourceLocation: sourceLocation)
        }
        return Outcome(result: result, comparison: comparison, countsBefore: countsBefore, countsAfter: countsAfter, url: url, populated: populated)
    }
}

@Suite struct MigrationCorpusTests {
    static func bundle(_ name: String) throws -> URL {
        try Corpus.required().appendingPathComponent("models").appendingPathComponent(name)
    }

    /// Version pairs Core Data cannot migrate lightweight, with the reason.
    static let knownNonInferable: [String: [String]] = [
        "Bookmark.xcdatamodeld Bookmark → Bookmark 3": [
            "attribute BookmarkManagedObject.id was added as non-optional without a default value, so existing objects would have no value"
        ],
        "Bookmark.xcdatamodeld Bookmark → Bookmark 2": [
            "attribute BookmarkManagedObject.id was added as non-optional without a default value, so existing objects would have no value"
        ],
    ]

    @Test(.enabled(if: Corpus.shouldRun, Corpus.skipMessage))
    func everyOlderVersionMigratesToTheCurrentOneAndEachStepToTheNext() throws {
        let bundles = try FileManager.default.contentsOfDirectory(atPath: Corpus.required().appendingPathComponent("models").path)
            .filter { $0.hasSuffix(".xcdatamodeld") }.sorted()
        var nonInferable: [String: [String]] = [:]
        var migrated: [String] = []
        for name in bundles {
            let versions = try ManagedObjectModel.versions(at: Self.bundle(name))
            guard versions.count > 1, let current = versions.last(where: \.isCurrent) ?? versions.last else { continue }
            let currentModel = try current.loadModel()
            var pairs: [(String, String, ManagedObjectModel, ManagedObjectModel)] = []
            for old in versions where old.name != current.name { pairs.append((old.name, current.name, try old.loadModel(), currentModel)) }
            for (a, b) in zip(versions, versions.dropFirst()) where b.name != current.name { pairs.append((a.name, b.name, try a.loadModel(), try b.loadModel())) }
            for (oldName, newName, old, new) in pairs {
                let label = "\(name) \(oldName) → \(newName)"
                let mapping = new.inferredMapping(from: old)
                guard mapping.isInferable else {
                    nonInferable[label] = mapping.problems
                    continue
                }
                guard mapping.requiresMigration else { continue }
                let outcome = try MigrationHarness.migrate(old, new)
                #expect(outcome.comparison.isMatch, "\(label)")
                migrated.append(label)
            }
        }
        #expect(nonInferable == Self.knownNonInferable)
        #expect(migrated.count >= 10, "\(migrated)")
    }
}
