import Faultline
import FaultlineModel
import FaultlineSQL
import Foundation

/// `migrate [--to MODEL|VERSION] [--dry-run] [--write]`: Core Data's lightweight migration of
/// the open store to another model version, with the inferred mapping and every statement
/// shown before anything runs.
extension Shell {
    /// What `migrate` was asked.
    struct MigrateCommand: Equatable {
        var target: String?
        var dryRun = false
        var write = false

        static func parse(_ text: String) throws -> MigrateCommand {
            var command = MigrateCommand()
            var words = Shell.words(text)[...]
            while let word = words.popFirst() {
                switch word {
                case "--dry-run": command.dryRun = true
                case "--write": command.write = true
                case "--to":
                    guard let target = words.popFirst() else { throw ShellError("migrate: --to needs a model or a version name, as in: migrate --to \"Model 3\"") }
                    command.target = target
                default:
                    throw ShellError("migrate: unknown argument \"\(word)\"; usage: migrate [--to MODEL|VERSION] [--dry-run] [--write]")
                }
            }
            if command.dryRun && command.write { throw ShellError("migrate: --dry-run and --write exclude each other: --dry-run migrates a copy, --write the store") }
            return command
        }
    }

    /// Words of a command line, with `"quoted words"` kept whole and unquoted.
    static func words(_ text: String) -> [String] {
        splitTopLevel(text, on: " ").filter { !$0.isEmpty }.map(unquoted)
    }

    func migrate(_ rest: String) throws {
        let command = try MigrateCommand.parse(rest)
        guard session.storePath != ":memory:" else { throw ShellError("migrate works on a store file; an in-memory store is made by its model") }
        let storeURL = URL(fileURLWithPath: session.storePath)
        let (destination, destinationName) = try migrationTarget(command.target)
        let source = session.model
        let sourceName = session.modelName
        let mapping = destination.inferredMapping(from: source)
        guard mapping.requiresMigration else {
            results.write("the store is already at \(destinationName): every entity's version hash is equal; nothing to migrate")
            return
        }
        var diff = ModelDiffReport.text(mapping, oldName: sourceName, newName: destinationName)
        if diff.hasSuffix("\n") { diff.removeLast() }
        results.write(diff)
        guard mapping.isInferable else {
            throw ShellError("Core Data cannot migrate this store to \(destinationName) lightweight (error 134190): \(mapping.problems.joined(separator: "; "))")
        }
        let migration = try LightweightMigration(storeURL: storeURL, sourceModel: source, destinationModel: destination)
        let plan = try migration.plan()
        results.write("")
        results.write("The migration, in one transaction (\(plan.statements.count) statements; \(Shell.tableSummary(plan))):")
        for statement in plan.statements {
            results.write("CoreData: sql: \(statement.sql)")
            for (i, value) in statement.arguments.enumerated() { results.write("CoreData: details: SQLite bind[\(i)] = \(value)") }
        }
        for note in plan.notes { results.write("note: \(note)") }
        if command.dryRun {
            try dryRun(source: source, destination: destination, storeURL: storeURL)
        } else if command.write {
            try migrateInPlace(migration, destination: destination, destinationName: destinationName)
        } else {
            results.write("nothing was run: 'migrate --dry-run' runs it on a copy and counts the rows before and after; 'migrate --write' migrates \(session.storePath)")
        }
    }

    /// The model to migrate to: `--to` a model file, a store (its cached model) or a version
    /// of the session's versioned model; else the newer model the session was opened with.
    func migrationTarget(_ target: String?) throws -> (ManagedObjectModel, String) {
        let bundle = session.newerModel?.source ?? session.modelPath
        if let target {
            if FileManager.default.fileExists(atPath: target) {
                return try ModelSource.loadVersioned(target)
            }
            if let bundle, ModelSource.isVersionedBundle(bundle) {
                let versions = try ManagedObjectModel.versions(at: URL(fileURLWithPath: bundle))
                guard let version = versions.first(where: { $0.name == target }) else {
                    throw ShellError("migrate --to \(target): no such file, and \(bundle) has no version \"\(target)\"; its versions: \(versions.map(\.name).joined(separator: ", "))")
                }
                return (try version.loadModel(), "\(bundle)@\(version.name)")
            }
            throw ShellError("migrate --to \(target): no such model file (a version name needs the store opened with its versioned model, --model M.xcdatamodeld)")
        }
        if let newer = session.newerModel { return (newer.model, newer.name) }
        if let bundle, ModelSource.isVersionedBundle(bundle) {
            return try ModelSource.loadVersioned(bundle)
        }
        throw ShellError("migrate needs a model to migrate to: migrate --to MODEL (a model file, or a version of the store's versioned model)")
    }

    static func tableSummary(_ plan: LightweightMigration.Plan) -> String {
        var parts: [String] = []
        for (n, word) in [(plan.alteredTables.count, "altered"), (plan.rebuiltTables.count, "rebuilt"), (plan.createdTables.count, "created"), (plan.droppedTables.count, "dropped")] where n > 0 {
            parts.append("\(n) \(n == 1 ? "table" : "tables") \(word)")
        }
        return parts.isEmpty ? "metadata only" : parts.joined(separator: ", ")
    }

    /// Runs the migration on a copy of the store (its `-wal`, `-shm` and external data too),
    /// then opens the copy with the new model and counts its objects; the store is untouched.
    func dryRun(source: ManagedObjectModel, destination: ManagedObjectModel, storeURL: URL) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("faultline-migrate-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let copy = folder.appendingPathComponent(storeURL.lastPathComponent)
        for suffix in ["", "-wal", "-shm"] {
            let file = URL(fileURLWithPath: storeURL.path + suffix)
            if FileManager.default.fileExists(atPath: file.path) { try FileManager.default.copyItem(at: file, to: URL(fileURLWithPath: copy.path + suffix)) }
        }
        let support = ValueCoding.externalDataFolder(forStoreAt: storeURL).deletingLastPathComponent()
        if FileManager.default.fileExists(atPath: support.path) {
            try FileManager.default.copyItem(at: support, to: ValueCoding.externalDataFolder(forStoreAt: copy).deletingLastPathComponent())
        }
        let before = try Shell.objectCounts(storeURL: copy, model: source)
        let result = try LightweightMigration(storeURL: copy, sourceModel: source, destinationModel: destination).run(log: log)
        let after = try Shell.objectCounts(storeURL: copy, model: destination)
        let names = Array(Set(before.keys).union(after.keys)).sorted()
        let rows: [[Cell]] = names.map { name in
            [.text(name), before[name].map { .integer(Int64($0)) } ?? .text("—"), after[name].map { .integer(Int64($0)) } ?? .text("—")]
        }
        results.write("dry run on a copy: \(result.plan.statements.count) statements ran and committed; the copy opens with the new model")
        printTable(ResultTable(headers: ["entity", "objects before", "objects after"], rows: rows), noun: "entity", plural: "entities")
        results.write("\(session.storePath) is unchanged; 'migrate --write' migrates it")
    }

    /// Objects per non-abstract entity (sub-entities' objects not counted in their parent), by
    /// fetch counts through the library with `model`.
    static func objectCounts(storeURL: URL, model: ManagedObjectModel) throws -> [String: Int] {
        let store = try SQLiteStore(url: storeURL, model: model)
        let context = ManagedObjectContext(coordinator: PersistentStoreCoordinator(store: store))
        var counts: [String: Int] = [:]
        for entity in model.entities where !entity.isAbstract {
            var request = FetchRequest(entityName: entity.name)
            request.includesSubentities = false
            counts[entity.name] = try context.count(for: request)
        }
        return counts
    }

    /// Migrates the open store itself, then opens it again with the new model.
    func migrateInPlace(_ migration: LightweightMigration, destination: ManagedObjectModel, destinationName: String) throws {
        try confirmLosingChanges("migrate --write")
        let writable = !coordinator.store.isReadOnly
        let before = try Shell.objectCounts(storeURL: migration.storeURL, model: migration.sourceModel)
        let result = try migration.run(log: log)
        let after = try Shell.objectCounts(storeURL: migration.storeURL, model: destination)
        let reopened = try Shell.openSession(storePath: session.storePath, model: destination, modelName: destinationName, writable: writable)
        replaceSession(reopened)
        let total = { (counts: [String: Int]) -> String in
            let n = counts.values.reduce(0, +)
            return "\(n) \(n == 1 ? "object" : "objects")"
        }
        results.write("migrated \(session.storePath) to \(destinationName): \(result.plan.statements.count) statements in one transaction; \(total(before)) before, \(total(after)) after; the session now uses the new model and handles start again at $1")
    }
}
