import FaultlineModel
import FaultlineShell
import FaultlineTestSupport
import Foundation
import Testing

/// `faultline diff`, `faultline model --match` and opening a store with a versioned model.
@Suite struct ModelDiffTests {
    static func bundle(_ name: String) throws -> URL {
        try Corpus.required().appendingPathComponent("models").appendingPathComponent(name)
    }

    /// A new store made with one version of a corpus bundle, in a temporary folder.
    static func store(madeBy version: String, of bundle: String) async throws -> URL {
        let folder = try TestSupport.temporaryDirectory("model-diff")
        let store = folder.appendingPathComponent("made.sqlite")
        let model = try Self.bundle(bundle).appendingPathComponent("\(version).xcdatamodel").path
        let made = try await TestSupport.faultline([store.path, "--model", model, "--write", "--sql-debug", "0", "-c", ".tables"])
        #expect(made.status == 0, "\(made.stderr)")
        return store
    }

    @Test(.enabled(if: Corpus.shouldRun, Corpus.skipMessage))
    func goldenDiffOfBookmarkVersions1And2() throws {
        let versions = try ManagedObjectModel.versions(at: Self.bundle("Bookmark.xcdatamodeld"))
        let mapping = try versions[1].loadModel().inferredMapping(from: versions[0].loadModel())
        #expect(ModelDiffReport.text(mapping, oldName: "Bookmark", newName: "Bookmark 2") == """
            Changes from Bookmark to Bookmark 2
            entities: 1 changed, 0 unchanged
            Core Data cannot infer the mapping: 1 change it cannot migrate (below).

            entity BookmarkManagedObject (changed)
              version hash 7269d8298f6bd3737a9323bfdc1c8692ccd7ea307d9c55e0a5fd64ea8388b1d0 → f98e37267580e56e2cf521e130e07a8157d55c366379cd94558882772a10cfd2
              uniqueness constraints none → (id)  (existing objects must already be unique on (id))
              indexes byDateAdded(dateAdded desc) → byDateAdded(dateAdded desc), byID(id)
              relationship children: added
              attribute id: added  [not inferable]
              attribute isFavorite: became optional
              attribute isFolder: added
              relationship parentFolder: added
              attribute urlEncrypted: became optional

            Not inferable:
              - attribute BookmarkManagedObject.id was added as non-optional without a default value, so existing objects would have no value

            """)
    }

    @Test(.enabled(if: Corpus.shouldRun, Corpus.skipMessage))
    func diffCommandTakesVersionsBySuffixOrOption() async throws {
        let bundle = try Self.bundle("VersionedModel.xcdatamodeld").path
        let bySuffix = try await TestSupport.faultline(["diff", "\(bundle)@VersionedModel", "\(bundle)@VersionedModel 2"])
        #expect(bySuffix.status == 0, "\(bySuffix.stderr)")
        #expect(bySuffix.stdout.hasPrefix("Changes from \(bundle)@VersionedModel to \(bundle)@VersionedModel 2\nentities: 1 changed, 1 unchanged\nCore Data can infer the mapping (lightweight migration).\n"))
        #expect(bySuffix.stdout.contains("\n  attribute authorName: added\n"))
        let byOption = try await TestSupport.faultline(["diff", bundle, bundle, "--old-version", "VersionedModel", "--new-version", "VersionedModel 2"])
        #expect(byOption.stdout == bySuffix.stdout)
        // Without a version, a bundle is its current version.
        let current = try await TestSupport.faultline(["diff", "\(bundle)@VersionedModel 4", bundle])
        #expect(current.status == 0 && current.stdout.contains("Every entity's version hash is equal"))
        #expect(current.stdout.hasPrefix("Changes from \(bundle)@VersionedModel 4 to \(bundle)@VersionedModel 4\n"))
        // An unknown version is an error naming the versions.
        let unknown = try await TestSupport.faultline(["diff", "\(bundle)@Nope", bundle])
        #expect(unknown.status == 1)
        #expect(unknown.stderr.contains("no version named \"Nope\""))
    }

    @Test(.enabled(if: Corpus.shouldRun, Corpus.skipMessage))
    func diffAsJSON() async throws {
        let bundle = try Self.bundle("Bookmark.xcdatamodeld").path
        let result = try await TestSupport.faultline(["diff", "\(bundle)@Bookmark", "\(bundle)@Bookmark 2", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let root = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(root["inferable"] as? Bool == false && root["requiresMigration"] as? Bool == true)
        #expect((root["problems"] as? [String])?.count == 1)
        let entity = try #require((root["entities"] as? [[String: Any]])?.first)
        #expect(entity["name"] as? String == "BookmarkManagedObject" && entity["status"] as? String == "changed")
        #expect(entity["oldVersionHash"] as? String == "7269d8298f6bd3737a9323bfdc1c8692ccd7ea307d9c55e0a5fd64ea8388b1d0")
        let changes = try #require(entity["changes"] as? [[String: Any]])
        let id = try #require(changes.first { $0["property"] as? String == "id" })
        #expect(id["kind"] as? String == "added" && id["inferable"] as? Bool == false && id["element"] as? String == "attribute")
        let attributes = try #require(entity["attributes"] as? [[String: Any]])
        #expect(attributes.contains { $0["name"] as? String == "isFolder" && $0["from"] is NSNull })
    }

    @Test(.enabled(if: Corpus.shouldRun, Corpus.skipMessage))
    func matchSaysWhichVersionMadeAStore() async throws {
        let store = try await Self.store(madeBy: "CoreData 3", of: "MastodonCoreData.xcdatamodeld")
        let bundle = try Self.bundle("MastodonCoreData.xcdatamodeld").path
        let found = try await TestSupport.faultline(["model", bundle, "--match", store.path])
        #expect(found.status == 0, "\(found.stderr)")
        #expect(found.stdout == "store made by version `CoreData 3` (3 of 9)\n")
        // No version of another model made it: the nearest, and exit status 1.
        let other = try Self.bundle("Bookmark.xcdatamodeld").path
        let none = try await TestSupport.faultline(["model", other, "--match", store.path])
        #expect(none.status == 1)
        #expect(none.stdout.hasPrefix("no version of \(other) made the store; nearest: version `Bookmark 3` (3 of 3, the current version), 18 of 18 entities differ:\n"))
        #expect(none.stdout.contains("\n  BookmarkManagedObject (only in the model) store —, model d3d0b04d"))
        // A store compared with its own cached model: no differences.
        let same = try await TestSupport.faultline(["diff", store.path, "\(bundle)@CoreData 3"])
        #expect(same.status == 0 && same.stdout.contains("Every entity's version hash is equal"))
    }

    @Test(.enabled(if: Corpus.shouldRun, Corpus.skipMessage))
    func openingWithTheBundleUsesTheVersionThatMadeTheStore() async throws {
        let store = try await Self.store(madeBy: "CoreData 3", of: "MastodonCoreData.xcdatamodeld")
        let bundle = try Self.bundle("MastodonCoreData.xcdatamodeld").path
        // No cached model either: the version is found by its hashes alone.
        _ = try await TestSupport.run(URL(fileURLWithPath: "/usr/bin/sqlite3"), [store.path, "UPDATE Z_MODELCACHE SET Z_CONTENT = NULL"])
        let before = try TestSupport.snapshot(of: store.deletingLastPathComponent())
        let result = try await TestSupport.faultline([store.path, "--model", bundle, "--sql-debug", "0", "-c", "count Feed"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "0\n")
        #expect(result.stderr == "faultline: warning: \(store.path): store made by version `CoreData 3` (3 of 9) of \(bundle), not the current version `CoreData 9`; using that version. 'faultline diff \(bundle)@\"CoreData 3\" \(bundle)' shows what changed. "
            + "Lightweight migration to it is possible: 'migrate --dry-run' shows it and runs it on a copy, 'migrate --write' migrates the store\n")
        #expect(try TestSupport.snapshot(of: store.deletingLastPathComponent()) == before)
    }

    @Test func diffOfAModelFileWithItself() async throws {
        let model = TestSupport.inventoryFolder.appendingPathComponent("Inventory.xcdatamodeld").path
        let result = try await TestSupport.faultline(["diff", model, model])
        #expect(result.status == 0)
        #expect(result.stdout.contains("Every entity's version hash is equal"))
        let help = try await TestSupport.faultline(["diff", "--help"])
        #expect(help.stdout.contains("BUNDLE@VERSION"))
    }
}
