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
        prepare: ((URL) throws -> Void)? = nil, expected: (StoreSnapshot.Mismatch) -> Bool = { _ in false },
        sourceLocation: SourceLocation = #_sourceLocation
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
            return expected($0)
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

@Suite struct MigrationTests {
    typealias A = AttributeDescription
    typealias R = RelationshipDescription

    static let title = A(name: "title", type: .string)
    static let rating = A(name: "rating", type: .integer32)

    static func model(_ entities: [EntityDescription]) throws -> ManagedObjectModel { try ManagedObjectModel(entities: entities) }

    static func note(_ attributes: [A] = [title, rating], relationships: [R] = [], name: String = "Note", renamingIdentifier: String? = nil, parent: String? = nil, uniqueness: [[String]] = [], indexes: [FetchIndexDescription] = []) -> EntityDescription {
        EntityDescription(name: name, superentityName: parent, attributes: attributes, relationships: relationships, renamingIdentifier: renamingIdentifier, uniquenessConstraints: uniqueness, fetchIndexes: indexes)
    }

    @Test func addedAttributeIsAnAddColumnInPlace() throws {
        let old = try Self.model([Self.note()])
        let new = try Self.model([Self.note([Self.title, Self.rating, A(name: "body", type: .string), A(name: "flag", type: .boolean, isOptional: false, defaultValueString: "YES")])])
        let outcome = try MigrationHarness.migrate(old, new)
        let sql = outcome.result.plan.sql
        expectSQL(Array(sql.prefix(3)), [
            "ALTER TABLE ZNOTE ADD COLUMN ZFLAG INTEGER",
            "ALTER TABLE ZNOTE ADD COLUMN ZBODY VARCHAR",
            "UPDATE ZNOTE AS t0 SET ZFLAG = ?",
        ])
        expectSQL(Array(sql.dropFirst(3)), [
            "DELETE FROM Z_PRIMARYKEY WHERE Z_ENT < ?",
            "INSERT INTO Z_PRIMARYKEY(Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES(?, ?, ?, ?)",
            "UPDATE Z_METADATA SET Z_PLIST = ?",
            "DELETE FROM Z_MODELCACHE",
            "INSERT INTO Z_MODELCACHE(Z_CONTENT) VALUES(?)",
        ])
        #expect(outcome.result.plan.alteredTables == ["ZNOTE"] && outcome.result.plan.rebuiltTables.isEmpty)
        // Existing objects get the new attribute's default.
        let store = try SQLiteStore(url: outcome.url, model: new)
        #expect(try store.connection.query("SELECT DISTINCT ZFLAG FROM ZNOTE").map { $0[0] } == [.integer(1)])
        // The table text has SQLite's ADD COLUMN signature, as Core Data's migrated stores do.
        let ddl = try store.connection.scalar("SELECT sql FROM sqlite_master WHERE name = 'ZNOTE'")?.string ?? ""
        #expect(ddl.hasSuffix(" ), ZFLAG INTEGER, ZBODY VARCHAR)") || ddl.hasSuffix(" , ZFLAG INTEGER, ZBODY VARCHAR)"), "\(ddl)")
    }

    @Test func droppedAttributeRebuildsTheTable() throws {
        let old = try Self.model([Self.note()])
        let new = try Self.model([Self.note([Self.title])])
        let outcome = try MigrationHarness.migrate(old, new)
        expectSQL(Array(outcome.result.plan.sql.prefix(5)), [
            "ALTER TABLE ZNOTE RENAME TO ZFLMIGRATION_ZNOTE",
            "CREATE TABLE ZNOTE ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZTITLE VARCHAR )",
            "INSERT INTO ZNOTE (Z_PK, Z_ENT, Z_OPT, ZTITLE) SELECT t0.Z_PK, t0.Z_ENT, t0.Z_OPT, t0.ZTITLE FROM ZFLMIGRATION_ZNOTE t0 WHERE t0.Z_ENT IN (?)",
            "DROP TABLE ZFLMIGRATION_ZNOTE",
            "DELETE FROM Z_PRIMARYKEY WHERE Z_ENT < ?",
        ])
        #expect(outcome.result.plan.rebuiltTables == ["ZNOTE"])
        #expect(outcome.comparison.removedProperties == ["Note": ["rating"]])
    }

    @Test func renamedAttributeAndEntity() throws {
        let old = try Self.model([Self.note()])
        let new = try Self.model([Self.note([A(name: "heading", type: .string, renamingIdentifier: "title"), Self.rating], name: "Memo", renamingIdentifier: "Note")])
        let outcome = try MigrationHarness.migrate(old, new)
        #expect(outcome.comparison.addedEntities.isEmpty && outcome.comparison.removedEntities.isEmpty)
        #expect(outcome.result.plan.droppedTables == ["ZNOTE"])
        #expect(outcome.countsAfter == ["Memo": 4])
    }

    @Test func optionalBecomesRequiredWithADefault() throws {
        let old = try Self.model([Self.note()])
        let folder = try TestSupport.temporaryDirectory("migration")
        let new = try Self.model([Self.note([A(name: "title", type: .string, isOptional: false, defaultValueString: "untitled"), Self.rating])])
        // One object without a title, added before migrating.
        // One object without a title (set after the populator's snapshot): it gets the default.
        let outcome = try MigrationHarness.migrate(
            old, new, folder: folder,
            prepare: { url in
                let store = try SQLiteStore(url: url, model: old, options: .init(readOnly: false))
                try store.connection.execute("UPDATE ZNOTE SET ZTITLE = NULL WHERE Z_PK = 1")
            },
            expected: { $0.description.hasPrefix("Note#1.title: ") && $0.description.hasSuffix(" became \"untitled\"") })
        let store = try SQLiteStore(url: outcome.url, model: new)
        #expect(try store.connection.scalar("SELECT ZTITLE FROM ZNOTE WHERE Z_PK = 1") == .text("untitled"))
        #expect(outcome.result.plan.sql.contains("UPDATE ZNOTE AS t0 SET ZTITLE = COALESCE(t0.ZTITLE, ?)"))
    }

    @Test func aNewEntityBeforeTheOthersRenumbersEverything() throws {
        let tag = EntityDescription(name: "Tag", attributes: [A(name: "name", type: .string)], relationships: [R(name: "notes", destination: "Note", inverse: "tags", toMany: true)])
        let folder = EntityDescription(name: "Folder", attributes: [A(name: "name", type: .string)], relationships: [R(name: "notes", destination: "Note", inverse: "folder", toMany: true, ordered: true)])
        let noteRelationships = [R(name: "tags", destination: "Tag", inverse: "notes", toMany: true), R(name: "folder", destination: "Folder", inverse: "notes")]
        let old = try Self.model([Self.note(relationships: noteRelationships), tag, folder])
        let album = EntityDescription(name: "Album", attributes: [A(name: "name", type: .string)])
        let new = try Self.model([album, Self.note(relationships: noteRelationships), tag, folder])
        let outcome = try MigrationHarness.migrate(old, new)
        let store = try SQLiteStore(url: outcome.url, model: new)
        let numbers = try store.connection.query("SELECT Z_NAME, Z_ENT FROM Z_PRIMARYKEY ORDER BY Z_ENT").map { "\($0[0].string ?? "")=\($0[1].int64 ?? 0)" }
        #expect(numbers == ["Album=1", "Folder=2", "Note=3", "Tag=4"])
        let tables = try store.connection.tableNames()
        #expect(tables.contains("Z_3TAGS") && !tables.contains("Z_2TAGS"))
        #expect(try store.connection.scalar("SELECT count(*) FROM Z_3TAGS")?.int64 ?? 0 > 0)
        #expect(try store.connection.query("SELECT DISTINCT Z_ENT FROM ZNOTE").map { $0[0] } == [.integer(3)])
    }

    @Test func toOneBecomesToManyThroughAJoinTable() throws {
        let author = { (toMany: Bool) in
            EntityDescription(name: "Person", attributes: [A(name: "name", type: .string)], relationships: [R(name: "notes", destination: "Note", inverse: "authors", toMany: true)])
        }
        let oldNote = Self.note(relationships: [R(name: "authors", destination: "Person", inverse: "notes")])
        let newNote = Self.note(relationships: [R(name: "authors", destination: "Person", inverse: "notes", toMany: true)])
        let old = try Self.model([oldNote, author(false)])
        let new = try Self.model([newNote, author(true)])
        let outcome = try MigrationHarness.migrate(old, new)
        let store = try SQLiteStore(url: outcome.url, model: new)
        let pairs = try store.connection.scalar("SELECT count(*) FROM Z_1AUTHORS")?.int64 ?? 0
        #expect(pairs == 4)
    }

    @Test func manyToManyAddedAndToManyWithoutInverse() throws {
        let tag = EntityDescription(name: "Tag", attributes: [A(name: "name", type: .string)])
        let old = try Self.model([Self.note(), tag])
        let newTag = EntityDescription(name: "Tag", attributes: [A(name: "name", type: .string)], relationships: [R(name: "notes", destination: "Note", inverse: "tags", toMany: true)])
        let new = try Self.model([Self.note(relationships: [R(name: "tags", destination: "Tag", inverse: "notes", toMany: true), R(name: "pinned", destination: "Tag", toMany: true)]), newTag])
        let outcome = try MigrationHarness.migrate(old, new)
        #expect(outcome.comparison.addedProperties["Note"] == ["pinned", "tags"])
    }

    @Test func inheritanceAddedAndRemoved() throws {
        // Note gets a new parent Item: its rows move to ZITEM.
        let old = try Self.model([Self.note()])
        let item = EntityDescription(name: "Item", attributes: [A(name: "created", type: .date)])
        let new = try Self.model([item, Self.note(parent: "Item")])
        let outcome = try MigrationHarness.migrate(old, new)
        #expect(outcome.result.plan.droppedTables == ["ZNOTE"])
        #expect(outcome.countsAfter["Note"] == 4)
        // And back: Note leaves the hierarchy, its rows move back to ZNOTE.
        let folder = try TestSupport.temporaryDirectory("migration")
        let back = try MigrationHarness.migrate(new, old, folder: folder)
        #expect(back.countsAfter["Note"] == 4)
        #expect(back.comparison.removedEntities == ["Item": 4])
    }

    @Test func indexAndConstraintChanges() throws {
        let old = try Self.model([Self.note(indexes: [FetchIndexDescription(name: "byRating", elements: [.init(property: "rating")])])])
        let new = try Self.model([Self.note(uniqueness: [["title"]], indexes: [FetchIndexDescription(name: "byTitle", elements: [.init(property: "title")])])])
        let outcome = try MigrationHarness.migrate(old, new)
        #expect(outcome.result.plan.sql.contains("DROP INDEX IF EXISTS Z_Note_byRating"))
        #expect(outcome.result.plan.sql.contains("CREATE INDEX Z_Note_byTitle ON ZNOTE (ZTITLE COLLATE BINARY ASC)"))
        #expect(outcome.result.plan.sql.contains("CREATE UNIQUE INDEX Z_Note_UNIQUE_title ON ZNOTE (ZTITLE COLLATE BINARY ASC)"))
    }

    @Test func numericTypeChange() throws {
        let old = try Self.model([Self.note()])
        let new = try Self.model([Self.note([Self.title, A(name: "rating", type: .double)])])
        // Integer 32 → Double: the values are the same numbers, now REAL.
        let outcome = try MigrationHarness.migrate(
            old, new,
            expected: { (mismatch: StoreSnapshot.Mismatch) -> Bool in
                if case .valueChanged(_, let property, let a, let b) = mismatch { return property == "rating" && a.description + ".0" == b.description }
                return false
            })
        #expect(outcome.result.plan.rebuiltTables == ["ZNOTE"])
        let store = try SQLiteStore(url: outcome.url, model: new)
        #expect(try store.connection.query("SELECT DISTINCT typeof(ZRATING) FROM ZNOTE").map { $0[0] } == [SQLValue.text("real")])
    }
}

/// Migration through `SQLiteStore.Options`, failures, history and external data.
@Suite struct MigrationOpeningTests {
    typealias A = AttributeDescription
    typealias R = RelationshipDescription

    static let old: ManagedObjectModel = {
        // swift-format-ignore
        try! ManagedObjectModel(entities: [EntityDescription(name: "Note", attributes: [A(name: "title", type: .string), A(name: "rating", type: .integer32)])])
    }()
    static func new(_ extra: [A] = [A(name: "body", type: .string)], uniqueness: [[String]] = []) throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(name: "Album", attributes: [A(name: "name", type: .string)]),
            EntityDescription(name: "Note", attributes: [A(name: "title", type: .string), A(name: "rating", type: .integer32)] + extra, uniquenessConstraints: uniqueness),
        ])
    }

    static func populated() throws -> (URL, StorePopulator.Result) {
        let url = try TestSupport.temporaryDirectory("migration").appendingPathComponent("Store.sqlite")
        return (url, try StorePopulator(model: old, options: .init(objectsPerEntity: 4)).populate(storeAt: url))
    }

    static var migrating: SQLiteStore.Options {
        SQLiteStore.Options(readOnly: false, migratePersistentStoresAutomatically: true, inferMappingModelAutomatically: true)
    }

    @Test func openingWithTheOptionsMigrates() throws {
        let (url, populated) = try Self.populated()
        let new = try Self.new()
        // Without the options: Core Data's 134100, as before.
        #expect(throws: PersistentStoreError.self) { try SQLiteStore(url: url, model: new, options: .init(readOnly: false)) }
        do {
            _ = try SQLiteStore(url: url, model: new, options: .init(readOnly: false))
        } catch let error as PersistentStoreError {
            #expect(error.code == .incompatibleModel)
        }
        // Read-only with the options: never migrates, and says why.
        var readOnly = Self.migrating
        readOnly.readOnly = true
        do {
            _ = try SQLiteStore(url: url, model: new, options: readOnly)
            Issue.record("a read-only open migrated")
        } catch let error as PersistentStoreError {
            #expect(error.code == .incompatibleModel && error.message.contains("writable"))
        }
        let store = try SQLiteStore(url: url, model: new, options: Self.migrating)
        let result = try #require(store.migrationResult)
        #expect(result.plan.alteredTables == ["ZNOTE"])
        #expect(try SchemaConformance.problems(connection: store.connection, model: new).isEmpty)
        let identifier = store.identifier
        let after = try StoreSnapshot(store: store)
        #expect(after.differences(from: populated.expected).isEmpty)
        // A second open needs nothing; the store UUID is kept.
        let again = try SQLiteStore(url: url, model: new, options: Self.migrating)
        #expect(again.migrationResult == nil && again.identifier == identifier)
    }

    @Test func aStoreWithoutModelCacheNeedsTheSourceModel() throws {
        let (url, _) = try Self.populated()
        do {
            let store = try SQLiteStore(url: url, model: Self.old, options: .init(readOnly: false))
            try store.connection.execute("DELETE FROM Z_MODELCACHE")
        }
        let new = try Self.new()
        do {
            _ = try SQLiteStore(url: url, model: new, options: Self.migrating)
            Issue.record("migrated without a source model")
        } catch let error as PersistentStoreError {
            #expect(error.code == .missingSourceModel && error.message.contains("migrationSourceModels"))
        }
        var options = Self.migrating
        options.migrationSourceModels = [try Self.new([A(name: "other", type: .string)]), Self.old]
        let store = try SQLiteStore(url: url, model: new, options: options)
        #expect(store.migrationResult != nil)
    }

    @Test func aMappingThatCannotBeInferredLeavesTheStoreAlone() throws {
        let (url, _) = try Self.populated()
        let before = try Data(contentsOf: url)
        let new = try Self.new([A(name: "body", type: .string, isOptional: false)])
        do {
            _ = try SQLiteStore(url: url, model: new, options: Self.migrating)
            Issue.record("migrated")
        } catch let error as PersistentStoreError {
            #expect(error.code == .inferredMappingFailed)
            #expect(error.message.contains("attribute Note.body was added as non-optional without a default value"))
        }
        #expect(try Data(contentsOf: url) == before)
    }

    @Test func aFailingStatementRollsEverythingBack() throws {
        let (url, populated) = try Self.populated()
        do {
            let store = try SQLiteStore(url: url, model: Self.old, options: .init(readOnly: false))
            try store.connection.execute("UPDATE ZNOTE SET ZTITLE = 'same'")
        }
        let before = try TestSupport.snapshot(of: url.deletingLastPathComponent())
        // A uniqueness constraint the rows break: its CREATE UNIQUE INDEX fails near the end.
        let new = try Self.new(uniqueness: [["title"]])
        do {
            try LightweightMigration(storeURL: url, sourceModel: Self.old, destinationModel: new).run()
            Issue.record("migrated")
        } catch let error as PersistentStoreError {
            #expect(error.code == .migrationFailed)
            #expect(error.message.contains("CREATE UNIQUE INDEX Z_Note_UNIQUE_title"), "\(error.message)")
        }
        #expect(try TestSupport.snapshot(of: url.deletingLastPathComponent()) == before)
        let old = try StoreSnapshot(storeAt: url, model: Self.old)
        #expect(old.counts == populated.expected.counts)
    }

    @Test func historyIsCarriedOverAndRenumbered() throws {
        let (url, _) = try Self.populated()
        do {
            var options = SQLiteStore.Options(readOnly: false)
            options.persistentHistoryTracking = true
            let context = ManagedObjectContext(coordinator: PersistentStoreCoordinator(store: try SQLiteStore(url: url, model: Self.old, options: options)))
            let note = try context.insertObject(entityName: "Note")
            try note.setValue("history", forKey: "title")
            try context.save()
        }
        let new = try Self.new()
        let store = try SQLiteStore(url: url, model: new, options: Self.migrating)
        #expect(store.tracksPersistentHistory)
        // Note was 1, is 2 (Album sorts first).
        #expect(try store.connection.query("SELECT DISTINCT ZENTITY FROM ACHANGE").map { $0[0] } == [SQLValue.integer(2)])
        #expect(try SchemaConformance.problems(connection: store.connection, model: new).isEmpty)
    }

    @Test func externalDataFilesAreKept() throws {
        let model = try ManagedObjectModel(entities: [EntityDescription(name: "Photo", attributes: [A(name: "title", type: .string), A(name: "image", type: .binaryData, allowsExternalBinaryDataStorage: true)])])
        let new = try ManagedObjectModel(entities: [
            EntityDescription(name: "Album", attributes: [A(name: "name", type: .string)]),
            EntityDescription(name: "Photo", attributes: [A(name: "caption", type: .string, renamingIdentifier: "title"), A(name: "image", type: .binaryData, allowsExternalBinaryDataStorage: true)]),
        ])
        let folder = try TestSupport.temporaryDirectory("migration")
        let external = folder.appendingPathComponent(".Store_SUPPORT/_EXTERNAL_DATA")
        var files: [String] = []
        let outcome = try MigrationHarness.migrate(model, new, folder: folder, options: .init(objectsPerEntity: 4, externalBinaryDataSize: 200 * 1024)) { _ in
            files = try FileManager.default.contentsOfDirectory(atPath: external.path).sorted()
        }
        #expect(!files.isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: external.path).sorted() == files)
        #expect(outcome.result.plan.rebuiltTables == ["ZPHOTO"])
    }

    @Test func anIOErrorMidMigrationLeavesTheOldStore() throws {
        let new = try Self.new()
        for nth in [1, 3, 6] {
            let (url, populated) = try Self.populated()
            let vfs = try FaultyVFS()
            vfs.arm(.write, nth: nth, code: 10 /* SQLITE_IOERR */, sticky: true)
            do {
                try LightweightMigration(storeURL: url, sourceModel: Self.old, destinationModel: new, vfsName: vfs.name).run()
                Issue.record("migrated despite write fault \(nth)")
            } catch let error as PersistentStoreError {
                #expect(error.code == .migrationFailed || error.code == .cannotOpen, "\(error)")
            }
            vfs.disarm()
            let old = try StoreSnapshot(storeAt: url, model: Self.old)
            #expect(old.differences(from: populated.expected).isEmpty, "write fault \(nth)")
        }
    }
}
