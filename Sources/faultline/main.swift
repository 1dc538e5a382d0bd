import ArgumentParser
import Faultline
import FaultlineCodegen
import FaultlineShell
import Foundation

/// `faultline`: open a Core Data store in the shell, or print a model or a store's schema.
struct FaultlineCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "faultline",
        abstract: "Open a Core Data SQLite store, fetch with predicates, and see the SQL behind every operation.",
        version: Shell.version,
        subcommands: [Open.self, Model.self, Schema.self, Diff.self, Migrate.self, Generate.self],
        defaultSubcommand: Open.self
    )
}

/// Prints an error the way the shell does and exits with status 1.
func fail(_ error: Error) -> ExitCode {
    ShellRunner.report("Error: \(error)")
    return ExitCode(1)
}

/// Exits with status 1 when a write to standard output or standard error failed.
func checkStandardStreams() throws {
    if ShellRunner.finalStatus(0) != 0 { throw ExitCode(1) }
}

/// `faultline [STORE] [--model PATH] [--write] [--sql-debug N] [-c COMMAND]… [--keep-going]`.
struct Open: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "open",
        abstract: "Open a store in the shell (the default command).",
        discussion: """
            Without STORE, opens an in-memory store for --model, or the bundled Inventory demo store.
            A STORE that does not exist is created from --model when --write is given.
            With standard input from a pipe or file, its lines run as a script.
            """
    )

    @Argument(help: "The Core Data store (.sqlite) to open.")
    var store: String?

    @Argument(help: "Commands to run, as with -c (like sqlite3 DB \"SQL\").")
    var commands: [String] = []

    @Option(name: .long, help: "The model: an .xcdatamodeld, .xcdatamodel or compiled .momd/.mom (default: the one beside the store).")
    var model: String?

    @Flag(name: .long, help: "Open the store for writing (the default is read-only).")
    var write = false

    @Flag(name: .customLong("model-from-store"), help: "Use the model the store caches (Z_MODELCACHE), not one beside it.")
    var modelFromStore = false

    @Option(name: .customLong("sql-debug"), help: "SQL log level 0–4, as -com.apple.CoreData.SQLDebug.")
    var sqlDebug: Int = 1

    @Option(name: .customShort("c"), help: "Run this command and exit (may be repeated).")
    var command: [String] = []

    @Flag(name: .long, help: "In a script, go on after a failing command.")
    var keepGoing = false

    func validate() throws {
        guard (0...4).contains(sqlDebug) else { throw ValidationError("--sql-debug must be from 0 to 4") }
    }

    func run() throws {
        let shell: Shell
        do {
            if let store {
                shell = try Shell(storePath: store, modelPath: model, writable: write, modelFromStore: modelFromStore, sqlDebugLevel: sqlDebug, output: .standard)
            } else if let model {
                shell = try Shell(inMemoryStoreFor: model, sqlDebugLevel: sqlDebug, output: .standard)
            } else {
                shell = try Shell(storePath: try Open.demoStore(), modelPath: nil, writable: false, sqlDebugLevel: sqlDebug, output: .standard)
            }
        } catch {
            throw fail(error)
        }
        let noColor = ProcessInfo.processInfo.environment["NO_COLOR"].map { !$0.isEmpty } ?? false
        shell.setColor(results: isatty(STDOUT_FILENO) != 0 && !noColor, log: isatty(STDERR_FILENO) != 0 && !noColor)
        // On a terminal long results stop at 200 rows and say how many more there are.
        if isatty(STDOUT_FILENO) != 0 && isatty(STDIN_FILENO) != 0 && command.isEmpty && commands.isEmpty { shell.setRowCap(200) }
        let all = command + commands
        let status = all.isEmpty
            ? ShellRunner.runStandardInput(shell: shell, keepGoing: keepGoing)
            : ShellRunner.run(commands: all, shell: shell, keepGoing: keepGoing)
        let final = ShellRunner.finalStatus(status, reported: shell.standardStreamFailure != nil)
        if final != 0 { throw ExitCode(final) }
    }

    /// The Inventory sample: beside the current folder, or above the executable (a build
    /// folder inside the package).
    static func demoStore() throws -> String {
        let relative = "Samples/Inventory/Inventory.sqlite"
        var folders = [URL(fileURLWithPath: FileManager.default.currentDirectoryPath)]
        var folder = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<5 {
            folders.append(folder)
            folder.deleteLastPathComponent()
        }
        for candidate in folders.map({ $0.appendingPathComponent(relative) }) where FileManager.default.fileExists(atPath: candidate.path) {
            return candidate.path
        }
        throw ValidationError("no STORE given and the demo store \(relative) was not found; name a store, or an in-memory one with --model")
    }
}

/// `faultline migrate STORE [--model M] [--to MODEL|VERSION] [--dry-run | --write]`: the
/// shell's `migrate` command, on its own.
struct Migrate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Migrate a store to a later version of its model with Core Data's lightweight migration.",
        discussion: """
            Shows the inferred mapping (or why Core Data cannot infer one) and every SQL statement, in Core Data's
            log format. Without --dry-run or --write nothing runs. --dry-run migrates a copy and counts the objects
            before and after; --write migrates the store in one transaction (all or nothing). The target is --to
            (a model file, a store, or a version name of the --model bundle), else the current version of --model.
            The same as: faultline STORE --model M "migrate [--to …] [--dry-run|--write]".
            """
    )

    @Argument(help: "The Core Data store (.sqlite) to migrate.")
    var store: String

    @Option(name: .long, help: "The model: a versioned .xcdatamodeld/.momd (its versions), or a later model (default: the one beside the store).")
    var model: String?

    @Option(name: .long, help: "The model or version to migrate to (default: the current version of --model).")
    var to: String?

    @Flag(name: .customLong("dry-run"), help: "Migrate a copy and report the counts; the store is not touched.")
    var dryRun = false

    @Flag(name: .long, help: "Migrate the store itself.")
    var write = false

    @Option(name: .customLong("sql-debug"), help: "SQL log level 0–4 for the statements as they run.")
    var sqlDebug: Int = 1

    func validate() throws {
        guard (0...4).contains(sqlDebug) else { throw ValidationError("--sql-debug must be from 0 to 4") }
        if dryRun && write { throw ValidationError("--dry-run and --write exclude each other") }
    }

    func run() throws {
        let shell: Shell
        do {
            shell = try Shell(storePath: store, modelPath: model, writable: false, sqlDebugLevel: sqlDebug, output: .standard)
        } catch {
            throw fail(error)
        }
        var command = "migrate"
        if let to { command += " --to \"" + to.replacingOccurrences(of: "\"", with: "") + "\"" }
        if dryRun { command += " --dry-run" }
        if write { command += " --write" }
        let status = ShellRunner.run(commands: [command], shell: shell, keepGoing: false)
        let final = ShellRunner.finalStatus(status, reported: shell.standardStreamFailure != nil)
        if final != 0 { throw ExitCode(final) }
    }
}

/// `faultline model PATH [--version NAME] [--hashes | --json | --format dot|mermaid] [--match STORE]`.
struct Model: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print a model: an .xcdatamodeld, .xcdatamodel, compiled .momd/.mom, or the model cached in a store.",
        discussion: """
            With --match STORE, print instead which version of the model made the store: the version whose
            entity version hashes equal the store's NSStoreModelVersionHashes ("store made by version `Moody 3`
            (3 of 6)"), exit status 0; or, when none does, the nearest version and the entities that differ,
            exit status 1.
            """
    )

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case text, json, dot, mermaid, hashes
    }

    @Argument(help: "The model, or a store whose Z_MODELCACHE holds it.")
    var path: String

    @Option(name: .long, help: "The version of an .xcdatamodeld to read (default: the current one).")
    var version: String?

    @Flag(name: .long, help: "One line per entity: its name and Core Data version hash (base64).")
    var hashes = false

    @Flag(name: .long, help: "The whole model as JSON.")
    var json = false

    @Option(name: .long, help: "text, json, dot, mermaid or hashes.")
    var format: Format = .text

    @Option(name: .long, help: ArgumentHelp("Say which version of the model made this store (exit status 1 when none did).", valueName: "store"))
    var match: String?

    func run() throws {
        if let match {
            let exact: Bool
            do {
                guard let found = try ModelSource.matchVersion(model: path, store: match) else {
                    throw ShellError("\(match): the store records no model version hashes (NSStoreModelVersionHashes)")
                }
                TextOutput.standardOutput.writeLine(ModelDiffReport.versionMatch(found, modelName: path))
                exact = found.isExact
            } catch {
                throw fail(error)
            }
            try checkStandardStreams()
            if !exact { throw ExitCode(1) }
            return
        }
        do {
            let (model, warnings) = try ModelSource.loadOrInfer(path: path, version: version)
            for warning in warnings { ShellRunner.report("faultline: warning: \(warning)") }
            let chosen: Format = hashes ? .hashes : (json ? .json : format)
            let text: String
            switch chosen {
            case .text: text = ModelReport.text(model)
            case .json: text = ModelReport.json(model)
            case .dot: text = ModelReport.dot(model)
            case .mermaid: text = ModelReport.mermaid(model)
            case .hashes: text = ModelReport.hashes(model)
            }
            TextOutput.standardOutput.write(text.hasSuffix("\n") ? text : text + "\n")
        } catch {
            throw fail(error)
        }
        try checkStandardStreams()
    }
}

/// `faultline schema STORE [--model PATH] [--entity NAME]`.
struct Schema: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show how the model maps onto the store's tables, columns and indexes, and where they differ.")

    @Argument(help: "The Core Data store (.sqlite).")
    var store: String

    @Option(name: .long, help: "The model (default: the one beside the store).")
    var model: String?

    @Option(name: .long, help: "Only this entity.")
    var entity: String?

    func run() throws {
        do {
            // A model that is not the version that made the store: the differences, entity by
            // entity, property by property, hash by hash.
            if let model {
                let url = URL(fileURLWithPath: store)
                let given = try ModelSource.load(path: model)
                if let hashes = try SQLiteStore.versionHashes(at: url), !given.isCompatible(withStoreVersionHashes: hashes) {
                    let cached = try? SQLiteStore.cachedModel(at: url)
                    TextOutput.standardOutput.writeLine(ModelReport.differences(model: given, modelName: model, storeHashes: hashes, storeModel: cached ?? nil))
                    try checkStandardStreams()
                    return
                }
            }
            let shell = try Shell(storePath: store, modelPath: model, sqlDebugLevel: 0, output: .standard)
            try shell.run(line: ".schema" + (entity.map { " " + $0 } ?? ""))
        } catch {
            throw fail(error)
        }
        try checkStandardStreams()
    }
}

/// `faultline diff OLD NEW [--old-version NAME] [--new-version NAME] [--json]`.
struct Diff: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show what changed between two model versions, and whether Core Data can infer the migration.",
        discussion: """
            OLD and NEW are each a model (.xcdatamodeld — its current version —, .xcdatamodel, .momd, .mom),
            one version of a bundle written BUNDLE@VERSION (Model.xcdatamodeld@"Model 2") or chosen with
            --old-version / --new-version, or a store (the model cached in its Z_MODELCACHE).
            Entities and properties are matched as Core Data matches them, by renaming identifier.
            Every entity that differs is listed with its old and new version hash (hex); each change
            Core Data's lightweight migration cannot infer is marked, and the reasons close the report.
            Exit status 0 whenever both models load (whatever the differences), 1 on an error.
            """
    )

    @Argument(help: "The old model, version or store.")
    var old: String

    @Argument(help: "The new model, version or store.")
    var new: String

    @Option(name: .customLong("old-version"), help: "The version of OLD, when it is an .xcdatamodeld or .momd.")
    var oldVersion: String?

    @Option(name: .customLong("new-version"), help: "The version of NEW, when it is an .xcdatamodeld or .momd.")
    var newVersion: String?

    @Flag(name: .long, help: "The differences as JSON.")
    var json = false

    func run() throws {
        do {
            let (source, oldName) = try ModelSource.loadVersioned(old, version: oldVersion)
            let (destination, newName) = try ModelSource.loadVersioned(new, version: newVersion)
            let mapping = destination.inferredMapping(from: source)
            let text = json
                ? ModelDiffReport.json(mapping, oldName: oldName, newName: newName)
                : ModelDiffReport.text(mapping, oldName: oldName, newName: newName)
            TextOutput.standardOutput.write(text)
        } catch {
            throw fail(error)
        }
        try checkStandardStreams()
    }
}

/// `faultline generate MODEL [--output DIR] [--version NAME] [--model-type NAME]`.
struct Generate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write typed Swift classes for a model's entities, as Xcode's Class Definition code generation.",
        discussion: """
            MODEL is an .xcdatamodeld (its current version, or --version), .xcdatamodel, .momd, .mom, or a store
            (the model cached in its Z_MODELCACHE). Writes one file per entity, <Class>+Faultline.swift: a
            ManagedObject subclass with a typed property for each attribute and relationship; and
            <Model>Model+Faultline.swift, the enum listing the classes for registerClasses. Files whose text is
            unchanged are not touched; generated files of entities no longer in the model are removed.
            The FaultlineGenerate build-tool plugin does the same at build time. See Documentation/TypedModels.md.
            """
    )

    @Argument(help: "The model, or a store whose Z_MODELCACHE holds it.")
    var model: String

    @Option(name: .shortAndLong, help: "The folder to write the files into (default: the current folder).")
    var output: String = "."

    @Option(name: .long, help: "The version of an .xcdatamodeld or .momd to read (default: the current one).")
    var version: String?

    @Option(name: .customLong("model-type"), help: "The name of the enum listing the classes (default: <file name>Model).")
    var modelType: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Another Swift name for a property whose model name cannot be one (may be repeated; the model's swiftName user info does the same).",
            valueName: "ENTITY.PROPERTY=NAME"))
    var rename: [String] = []

    func validate() throws {
        _ = try renames()
    }

    /// `--rename` values by `Entity.property`.
    func renames() throws -> [String: String] {
        var result: [String: String] = [:]
        for value in rename {
            let parts = value.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, parts[0].contains("."), !parts[1].isEmpty else {
                throw ValidationError("--rename \(value): write ENTITY.PROPERTY=NAME")
            }
            result[parts[0]] = parts[1]
        }
        return result
    }

    func run() throws {
        do {
            let source = URL(fileURLWithPath: model).lastPathComponent
            let loaded = try ModelSource.load(path: model, version: version)
            let generator = try ClassGenerator(model: loaded, sourceName: source, modelTypeName: modelType, swiftNames: try renames())
            let files = try generator.files()
            let (written, removed) = try GeneratedFile.write(files, to: URL(fileURLWithPath: output), removingStale: true)
            let unchanged = files.count - written.count
            var summary = "\(files.count) files for \(files.count - 1) entities in \(output): \(written.count) written"
            if unchanged > 0 { summary += ", \(unchanged) unchanged" }
            if !removed.isEmpty { summary += ", \(removed.count) removed (\(removed.joined(separator: ", ")))" }
            TextOutput.standardOutput.writeLine(summary)
        } catch {
            throw fail(error)
        }
        try checkStandardStreams()
    }
}

/// ArgumentParser's `main()`, with its messages (help, version, usage errors) written
/// through the checked writers: `--help > /dev/full` is a failed write, status 1, not 0.
func runMain() -> Never {
    do {
        var command = try FaultlineCommand.parseAsRoot()
        try command.run()
        exit(0)
    } catch {
        let code = FaultlineCommand.exitCode(for: error)
        let message = FaultlineCommand.fullMessage(for: error)
        // An exit code alone (a command that failed and said why) is passed on as it is.
        guard !message.isEmpty else { exit(code.rawValue) }
        if code == .success { TextOutput.standardOutput.writeLine(message) } else { ShellRunner.report(message) }
        exit(ShellRunner.finalStatus(code.rawValue))
    }
}

runMain()
