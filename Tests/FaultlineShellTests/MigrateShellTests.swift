import FaultlineTestSupport
import Foundation
import Testing

/// `migrate` in the shell, on stores made by older versions of the corpus's versioned models.
@Suite struct MigrateShellTests {
    /// A folder with a copy of a corpus bundle and a store made by one of its versions, with
    /// a few objects.
    static func oldStore(bundle: String, version: String, inserts: [String]) async throws -> (folder: URL, store: String, bundle: String) {
        let corpus = try Corpus.required()
        let folder = try TestSupport.temporaryDirectory("migrate")
        try FileManager.default.copyItem(at: corpus.appendingPathComponent("models/\(bundle)"), to: folder.appendingPathComponent(bundle))
        let store = folder.appendingPathComponent("Old.sqlite").path
        let made = try await TestSupport.faultline([store, "--model", folder.appendingPathComponent("\(bundle)/\(version).xcdatamodel").path, "--write", "--sql-debug", "0"],
            stdin: (inserts + ["save"]).joined(separator: "\n"))
        #expect(made.status == 0, "\(made.stderr)")
        return (folder, store, folder.appendingPathComponent(bundle).path)
    }

    @Test(.enabled(if: Corpus.shouldRun, Corpus.skipMessage))
    func migrateShowsThePlanDryRunsOnACopyAndWritesOnlyWhenAsked() async throws {
        let (folder, store, bundle) = try await Self.oldStore(bundle: "VersionedModel.xcdatamodeld", version: "VersionedModel", inserts: [
            "insert Article title = \"One\", body = \"First\"", "insert Article title = \"Two\", body = \"Second\"", "insert Tag name = \"news\"",
        ])
        defer { try? FileManager.default.removeItem(at: folder) }
        let before = try TestSupport.snapshot(of: folder)
        // Opening with the bundle uses the version that made the store and says migration is possible.
        let plan = try await TestSupport.faultline([store, "--model", bundle, "--sql-debug", "0"], stdin: "migrate\nmigrate --dry-run")
        #expect(plan.status == 0, "\(plan.stderr)")
        #expect(plan.stderr.contains("store made by version `VersionedModel` (1 of 4)"))
        #expect(plan.stderr.contains("Lightweight migration to it is possible: 'migrate --dry-run' shows it and runs it on a copy, 'migrate --write' migrates the store"))
        #expect(plan.stdout.hasPrefix("""
            Changes from \(bundle)@VersionedModel to \(bundle)@VersionedModel 4
            entities: 1 changed, 1 unchanged
            Core Data can infer the mapping (lightweight migration).

            entity Article (changed)
              version hash 2dbe7dbade71f73af2fa7254a867945be4b1d935d51bbd0736cc25256b8b9e5b → e43a665e405fc3b826abbff97f4d9db800a3ac45f8e752bd6404003a1f2a3712
              attribute authorName: added

            The migration, in one transaction (7 statements; 1 table altered):
            CoreData: sql: ALTER TABLE ZARTICLE ADD COLUMN ZAUTHORNAME VARCHAR
            CoreData: sql: DELETE FROM Z_PRIMARYKEY WHERE Z_ENT < ?
            """), "\(plan.stdout)")
        #expect(plan.stdout.contains("nothing was run: 'migrate --dry-run' runs it on a copy and counts the rows before and after; 'migrate --write' migrates \(store)\n"))
        #expect(plan.stdout.contains("""
            dry run on a copy: 7 statements ran and committed; the copy opens with the new model
            +---------+----------------+---------------+
            | entity  | objects before | objects after |
            +---------+----------------+---------------+
            | Article | 2              | 2             |
            | Tag     | 1              | 1             |
            +---------+----------------+---------------+
            2 entities
            \(store) is unchanged; 'migrate --write' migrates it
            """), "\(plan.stdout)")
        #expect(try TestSupport.snapshot(of: folder) == before, "migrate and migrate --dry-run change no byte of the store")
        // The same from the command line.
        let command = try await TestSupport.faultline(["migrate", store, "--model", bundle, "--dry-run", "--sql-debug", "0"])
        #expect(command.status == 0 && command.stdout.contains("| Article | 2              | 2             |"), "\(command.stderr)")
        let both = try await TestSupport.faultline(["migrate", store, "--model", bundle, "--dry-run", "--write"])
        #expect(both.status != 0 && both.stderr.contains("--dry-run and --write exclude each other"))
        #expect(try TestSupport.snapshot(of: folder) == before)

        let write = try await TestSupport.faultline([store, "--model", bundle, "--sql-debug", "1"], stdin: "migrate --write\nfetch Article sort by title")
        #expect(write.status == 0, "\(write.stderr)")
        #expect(write.stdout.contains("migrated \(store) to \(bundle)@VersionedModel 4: 7 statements in one transaction; 3 objects before, 3 objects after"))
        #expect(write.stdout.hasSuffix("""
            +----+------------+--------+-------+
            | #  | authorName | body   | title |
            +----+------------+--------+-------+
            | $1 | nil        | First  | One   |
            | $2 | nil        | Second | Two   |
            +----+------------+--------+-------+
            2 rows

            """))
        // The statements ran through the SQL log, in Core Data's format.
        #expect(write.stderr.contains("CoreData: sql: ALTER TABLE ZARTICLE ADD COLUMN ZAUTHORNAME VARCHAR\n"))
        // The migrated store opens with the current version, with no warning, and checks out.
        let reopened = try await TestSupport.faultline([store, "--model", bundle, "--sql-debug", "0"], stdin: "count Article")
        #expect(reopened.stdout == "2\n" && reopened.stderr.isEmpty, "\(reopened.stderr)")
        let integrity = try await TestSupport.run(URL(fileURLWithPath: "/usr/bin/sqlite3"), [store, "PRAGMA integrity_check"])
        #expect(integrity.stdout == "ok\n")
        // Nothing left to do.
        let again = try await TestSupport.faultline([store, "--model", bundle, "--sql-debug", "0"], stdin: "migrate")
        #expect(again.stdout == "the store is already at \(bundle)@VersionedModel 4: every entity's version hash is equal; nothing to migrate\n")
    }

    @Test(.enabled(if: Corpus.shouldRun, Corpus.skipMessage))
    func aVersionByNameAndAMappingCoreDataCannotInfer() async throws {
        let (folder, store, bundle) = try await Self.oldStore(bundle: "Bookmark.xcdatamodeld", version: "Bookmark", inserts: [])
        defer { try? FileManager.default.removeItem(at: folder) }
        let before = try TestSupport.snapshot(of: folder)
        let result = try await TestSupport.faultline([store, "--model", bundle, "--sql-debug", "0", "--keep-going"], stdin: """
            migrate --to "Bookmark 2"
            migrate --to "Bookmark 9"
            migrate --dry-run --write
            """)
        #expect(result.status == 1)
        #expect(result.stderr.contains("Lightweight migration to it is not possible: attribute BookmarkManagedObject.id"), "\(result.stderr)")
        #expect(result.stdout.contains("Core Data cannot infer the mapping"))
        #expect(result.stderr.contains("Error: line 1: Core Data cannot migrate this store to \(bundle)@Bookmark 2 lightweight (error 134190): attribute BookmarkManagedObject.id"), "\(result.stderr)")
        #expect(result.stderr.contains("Error: line 2: migrate --to Bookmark 9: no such file, and \(bundle) has no version \"Bookmark 9\"; its versions: Bookmark, Bookmark 2, Bookmark 3"), "\(result.stderr)")
        #expect(result.stderr.contains("Error: line 3: migrate: --dry-run and --write exclude each other"))
        #expect(try TestSupport.snapshot(of: folder) == before)
    }
}
