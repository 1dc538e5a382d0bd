import Faultline
import FaultlineModel
import FaultlineSQL
import Foundation

/// The Faultline shell as a library: runs command lines against a store and writes results,
/// the SQL log and diagnostics to the given outputs. The `faultline` executable only parses
/// flags and feeds it lines; tests feed it lines directly.
///
/// ```swift
/// let shell = try Shell(storePath: "Inventory.sqlite", modelPath: nil, output: .standard)
/// try shell.run(line: "fetch Location")
/// ```
public final class Shell {
    /// Where the shell writes.
    public struct Output {
        /// Results.
        public var out: (String) -> Void
        /// The SQL log and diagnostics.
        public var err: (String) -> Void

        /// Creates outputs from two writers (each call is one line or block, without its final newline).
        public init(out: @escaping (String) -> Void, err: @escaping (String) -> Void) {
            self.out = out
            self.err = err
        }

        /// The streams behind `out` and `err` whose write failures the shell reports (none
        /// for writers it does not know).
        public var streams: [TextOutput] = []

        /// Standard output and standard error, written through per call; a failed write
        /// (closed descriptor, full device) becomes an error of the command that wrote.
        public static var standard: Output {
            var output = Output(
                out: { TextOutput.standardOutput.writeLine($0) },
                err: { TextOutput.standardError.writeLine($0) })
            output.streams = [.standardOutput, .standardError]
            return output
        }
    }

    /// One open store: its coordinator, the session's context and the handles given out.
    final class Session {
        let coordinator: PersistentStoreCoordinator
        let context: ManagedObjectContext
        /// What was opened, for messages and `.open` without arguments.
        let storePath: String
        let modelPath: String?
        /// Objects with handles: `$1` is `handles[0]`.
        var handles: [ManagedObject] = []
        var handleByID: [ManagedObjectID: Int] = [:]

        init(coordinator: PersistentStoreCoordinator, storePath: String, modelPath: String?) {
            self.coordinator = coordinator
            self.context = ManagedObjectContext(coordinator: coordinator)
            self.storePath = storePath
            self.modelPath = modelPath
        }

        var model: ManagedObjectModel { coordinator.model }
        /// A warning for the person, printed once the session is open (a model replaced by
        /// the store's own, for example).
        var openingWarning: String?
        /// The model the person asked for when it is a later version than the one that made the
        /// store (the session uses the store's version): what `migrate` migrates to.
        var newerModel: (model: ManagedObjectModel, source: String, name: String)?
        /// How the session's model is named in messages: its file (and version), or the
        /// store's cached model.
        var modelLabel: String?
        var modelName: String { modelLabel ?? modelPath ?? "the model cached in \(storePath)" }
        /// Names from this model for examples (worked out once).
        lazy var examples = Examples(model: coordinator.model, mapping: coordinator.store.mapping)
    }

    private(set) var session: Session
    /// The SQL log (level 1 by default, as with `-com.apple.CoreData.SQLDebug 1`).
    public let log: SQLLog
    /// Statements, rows and faults per command and for the session.
    let statistics = CommandStatistics()
    /// How results are written (`.mode`, `.headers`).
    var renderer = Renderer()
    /// Whether `.timer on` is set.
    var timer = false
    /// Whether `.echo on` is set: each command is written to the results before it runs.
    var echo = false
    /// `.width N|auto|off`: how wide results for people may be.
    var width = ResultWidth.auto
    /// The most rows a result shows before saying how many it left out (nil: all).
    var rowCap: Int?
    /// Where results and the log go now (`.output`, `.log`).
    var results: Sink
    var logSink: Sink
    let standard: Output
    /// Whether `.quit` was run.
    public private(set) var didQuit = false
    /// The command line being run, for error carets.
    var currentLine: String?
    /// Asks the person at the terminal a yes/no question (the runner sets it for interactive
    /// sessions); nil in scripts, where commands that would lose unsaved changes refuse.
    public var confirm: ((String) -> Bool)?
    /// `.bail on|off`: whether a script stops at its first error (the default) or goes on.
    public var bail = true
    /// `.once FILE`: where the next command's results go, then standard output again.
    var once: String?
    /// How many `.read` files are being run, one inside another.
    var readDepth = 0
    /// The most objects one key path of `show` or `$N.…` may visit (through to-many
    /// relationships a key path can fan out without end).
    static let keyPathObjectLimit = 100_000
    /// The most `.read` files that may run one inside another (a file that reads itself stops there).
    static let maximumReadDepth = 16

    /// Faultline's version, and the SQLite it runs on (`faultline --version`).
    public static var version: String { "faultline 0.9 (SQLite \(Connection.sqliteVersion))" }

    /// Names from the open model for examples in help and error messages.
    var examples: Examples { session.examples }

    /// The open store's coordinator.
    public var coordinator: PersistentStoreCoordinator { session.coordinator }
    /// The session's context.
    public var context: ManagedObjectContext { session.context }

    /// Opens a store with a model (found beside the store when `modelPath` is nil).
    ///
    /// A store that does not exist is created from the model when `writable` is true.
    ///
    /// - Throws: ``ShellError``, `ModelError` or `PersistentStoreError` naming the file that failed.
    public init(storePath: String, modelPath: String?, writable: Bool = false, modelFromStore: Bool = false, sqlDebugLevel: Int = 1, output: Output) throws {
        self.standard = output
        self.results = Sink(output.out)
        self.logSink = Sink(output.err)
        let logSink = self.logSink
        self.log = SQLLog(level: sqlDebugLevel) { logSink.write($0) }
        self.session = try Shell.openSession(storePath: storePath, modelPath: modelPath, writable: writable, modelFromStore: modelFromStore)
        attach(session)
    }

    /// Opens an in-memory store for a model: the same engine and SQL, nothing on disk.
    public init(inMemoryStoreFor modelPath: String, sqlDebugLevel: Int = 1, output: Output) throws {
        self.standard = output
        self.results = Sink(output.out)
        self.logSink = Sink(output.err)
        let logSink = self.logSink
        self.log = SQLLog(level: sqlDebugLevel) { logSink.write($0) }
        let model = try ManagedObjectModel(contentsOf: URL(fileURLWithPath: modelPath))
        let coordinator = PersistentStoreCoordinator(store: try SQLiteStore(inMemoryWith: model))
        self.session = Session(coordinator: coordinator, storePath: ":memory:", modelPath: modelPath)
        attach(session)
    }

    static func openSession(storePath: String, modelPath: String?, writable: Bool, modelFromStore: Bool = false) throws -> Session {
        let storeURL = URL(fileURLWithPath: storePath)
        let exists = FileManager.default.fileExists(atPath: storeURL.path)
        if !writable && !exists {
            throw ShellError("\(storeURL.path): no such store file (to create it from the model, add --write)")
        }
        let options = SQLiteStore.Options(readOnly: !writable, createIfMissing: writable)
        if modelFromStore {
            guard exists else { throw ShellError("\(storeURL.path): no such store file, so there is no model in it") }
            return Session(coordinator: try PersistentStoreCoordinator(storeURL: storeURL, options: options), storePath: storePath, modelPath: nil)
        }
        let model: ManagedObjectModel
        let source: String
        if let modelPath {
            model = try ModelSource.load(path: modelPath)
            source = modelPath
        } else {
            do {
                let found = try Shell.findModel(besideStore: storeURL)
                model = try ManagedObjectModel(contentsOf: found)
                source = found.path
            } catch let missing as ShellError {
                // No model file beside the store: the one Core Data cached inside it, or one
                // inferred from its tables (the store says so in its warnings).
                guard exists else { throw missing }
                let coordinator = try PersistentStoreCoordinator(storeURL: storeURL, options: options)
                return Session(coordinator: coordinator, storePath: storePath, modelPath: nil)
            }
        }
        do {
            let coordinator = try PersistentStoreCoordinator(model: model, storeURL: storeURL, options: options)
            return Session(coordinator: coordinator, storePath: storePath, modelPath: modelPath)
        } catch let error as PersistentStoreError where error.code == .incompatibleModel {
            // Another version of the model than the one that made the store. A versioned
            // model (.xcdatamodeld, .momd) may hold the version that did: then that version
            // is used, and said.
            var nearest = ""
            if exists, ModelSource.isVersionedBundle(source), let hashes = try? SQLiteStore.versionHashes(at: storeURL),
                let versions = try? ManagedObjectModel.versions(at: URL(fileURLWithPath: source)), versions.count > 1,
                let match = ManagedObjectModel.matchVersion(storeVersionHashes: hashes, in: versions)
            {
                let current = versions.first(where: \.isCurrent).map { " `\($0.name)`" } ?? ""
                if match.isExact, let versionModel = try? match.version.loadModel() {
                    let coordinator = try PersistentStoreCoordinator(model: versionModel, storeURL: storeURL, options: options)
                    let session = Session(coordinator: coordinator, storePath: storePath, modelPath: modelPath)
                    session.modelLabel = "\(source)@\(match.version.name)"
                    session.newerModel = (model, source, "\(source)@\(versions.first(where: \.isCurrent)?.name ?? "current")")
                    session.openingWarning = "\(storePath): \(ModelDiffReport.versionMatch(match, modelName: source)) of \(source), not the current version\(current); using that version. "
                        + "'faultline diff \(source)@\"\(match.version.name)\" \(source)' shows what changed" + Shell.migrationAdvice(from: versionModel, to: model)
                    return session
                }
                nearest = " No version of \(source) made the store (nearest: `\(match.version.name)`, \(match.differences.count) \(match.differences.count == 1 ? "entity differs" : "entities differ"))."
            }
            // Otherwise the model the store caches is the right one, when it has it.
            guard exists, let cached = try? SQLiteStore.cachedModel(at: storeURL),
                let hashes = try? SQLiteStore.versionHashes(at: storeURL), cached.isCompatible(withStoreVersionHashes: hashes)
            else {
                throw ShellError("\(error)\n(the store caches no model of its own: open it with the model version that made it, e.g. --model M.xcdatamodeld/'M 2.xcdatamodel')\(nearest)")
            }
            let differing = model.entitiesDiffering(fromStoreVersionHashes: hashes).map { name -> String in
                switch (model.entityVersionHashesByName[name], hashes[name]) {
                case (_?, nil): "\(name) (only in the model)"
                case (nil, _?): "\(name) (only in the store)"
                default: "\(name) (changed)"
                }
            }
            let coordinator = try PersistentStoreCoordinator(model: cached, storeURL: storeURL, options: options)
            let session = Session(coordinator: coordinator, storePath: storePath, modelPath: nil)
            session.newerModel = (model, source, source)
            session.openingWarning = "\(storePath) was made by another version of the model than \(source) (entities that differ: \(differing.joined(separator: ", "))); "
                + "using the model cached in the store. Choose with --model PATH (another version) or --model-from-store; 'faultline schema STORE --model M' shows the differences" + nearest
                + Shell.migrationAdvice(from: cached, to: model)
            return session
        }
    }

    /// The end of the opening warning: whether Core Data's lightweight migration can take the
    /// store to the newer model, and how.
    static func migrationAdvice(from old: ManagedObjectModel, to new: ManagedObjectModel) -> String {
        let mapping = new.inferredMapping(from: old)
        guard mapping.requiresMigration else { return "" }
        guard mapping.isInferable else {
            return ". Lightweight migration to it is not possible: \(mapping.problems.first ?? "")\(mapping.problems.count > 1 ? " (and \(mapping.problems.count - 1) more; 'migrate' lists them)" : "")"
        }
        return ". Lightweight migration to it is possible: 'migrate --dry-run' shows it and runs it on a copy, 'migrate --write' migrates the store"
    }

    /// Opens a store with a given model (after `migrate --write`).
    static func openSession(storePath: String, model: ManagedObjectModel, modelName: String, writable: Bool) throws -> Session {
        let options = SQLiteStore.Options(readOnly: !writable)
        let coordinator = try PersistentStoreCoordinator(model: model, storeURL: URL(fileURLWithPath: storePath), options: options)
        let session = Session(coordinator: coordinator, storePath: storePath, modelPath: nil)
        session.modelLabel = modelName
        return session
    }

    private func attach(_ session: Session) {
        let store = session.coordinator.store
        if store.modelSource == .inferred {
            for warning in store.warnings { logSink.write("faultline: warning: \(warning)") }
        } else if let warning = store.uncheckedModelWarning {
            logSink.write("faultline: warning: \(warning)")
        }
        if let warning = session.openingWarning { logSink.write("faultline: warning: \(warning)") }
        let connection = store.connection
        log.attach(to: connection)
        let statistics = self.statistics
        statistics.model = session.model
        statistics.fetchedEntity = nil
        connection.addTraceObserver { statistics.observe($0) }
        session.context.faultObserver = { statistics.observe($0) }
    }

    /// Replaces the open store (`.open`, `.write`).
    func replaceSession(_ new: Session) {
        session = new
        attach(new)
    }

    /// The model beside a store: the only `.xcdatamodeld`/`.momd`/`.mom` in its folder, or the
    /// one named like the store.
    public static func findModel(besideStore storeURL: URL) throws -> URL {
        let folder = storeURL.deletingLastPathComponent()
        let items = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        let candidates = items.filter { ["xcdatamodeld", "momd", "mom", "xcdatamodel"].contains(($0 as NSString).pathExtension.lowercased()) }.sorted()
        let base = storeURL.deletingPathExtension().lastPathComponent
        if let named = candidates.first(where: { ($0 as NSString).deletingPathExtension == base }) {
            return folder.appendingPathComponent(named)
        }
        if candidates.count == 1, let only = candidates.first {
            return folder.appendingPathComponent(only)
        }
        if candidates.isEmpty {
            throw ShellError("\(storeURL.path): no model found beside the store (no .xcdatamodeld, .momd or .mom in \(folder.path)); pass one with --model")
        }
        throw ShellError("\(storeURL.path): several models beside the store (\(candidates.joined(separator: ", "))); pick one with --model")
    }

    // MARK: Running commands

    /// Runs one command line. Blank lines and `--` comments do nothing.
    ///
    /// - Throws: an error describing what failed; the shell stays usable.
    public func run(line rawLine: String) throws {
        do {
            try runLine(rawLine)
        } catch {
            try checkOutputs()
            throw error
        }
        try checkOutputs()
    }

    /// The first failed write to standard output or standard error (closed, full device),
    /// or nil: after one, a script stops with status 1.
    public private(set) var standardStreamFailure: String?

    /// Turns a failed write of the command into its error: a file of `.output`/`.log` is
    /// left (results or the log go back to the standard stream); a standard stream that
    /// failed is remembered in ``standardStreamFailure``.
    private func checkOutputs() throws {
        if let failure = results.file?.failure {
            results.redirect(standard.out, name: "stdout")
            throw ShellError("\(failure); results go to standard output again")
        }
        if let failure = logSink.file?.failure {
            logSink.redirect(standard.err, name: "stderr")
            throw ShellError("\(failure); the log goes to standard error again")
        }
        if let failure = standard.streams.lazy.compactMap(\.failure).first {
            standardStreamFailure = failure
            throw ShellError(failure)
        }
    }

    private func runLine(_ rawLine: String) throws {
        let line = rawLine.trimmingCharacters(in: .whitespacesAndNewlines)
        // `.once FILE` sends one command's results to the file, then standard output again.
        let endsOnce = once != nil && !line.lowercased().hasPrefix(".once") && !line.isEmpty && !line.hasPrefix("--")
        defer {
            if endsOnce {
                results.redirect(standard.out, name: "stdout")
                once = nil
            }
        }
        if echo && !line.isEmpty {
            results.write(line.hasPrefix("--") ? line : "faultline> " + line.replacingOccurrences(of: "\n", with: "\n      ...> "))
        }
        if line.isEmpty || line.hasPrefix("--") { return }
        statistics.begin()
        defer {
            let totals = statistics.end()
            if totals.statements > 0 && log.level > 0 {
                logSink.write(CommandStatistics.summary(totals))
            }
            for warning in statistics.stormWarnings(totals) { logSink.write(warning) }
            if timer { results.write(String(format: "Run Time: %.3f ms", totals.seconds * 1000)) }
        }
        currentLine = line
        defer { currentLine = nil }
        try runCommand(line)
    }

    private func runCommand(_ line: String) throws {
        let (word, rest) = Shell.splitFirstWord(line)
        let command = word.lowercased()
        if command.hasPrefix(".") {
            try runDotCommand(command, rest)
            return
        }
        // Everything but a save reads in one read transaction, so the faults a command fires
        // share a snapshot and the shared lock (Core Data does the same around faulting).
        if command != "save", !Shell.isBatchCommand(command, rest) {
            try context.withReadTransaction { try runObjectCommand(command, word: word, rest: rest, line: line) }
        } else {
            try runObjectCommand(command, word: word, rest: rest, line: line)
        }
    }

    private func runObjectCommand(_ command: String, word: String, rest: String, line: String) throws {
        if Shell.isBatchCommand(command, rest) { return try runBatchCommand(command, rest) }
        switch command {
        case "fetch": try fetchAnyResult(rest)
        case "count": try count(FetchCommand.parse(rest, examples: examples))
        case "show": try show(rest)
        case "explain": try explain(rest)
        case "refresh": try refresh(rest)
        case "migrate": try migrate(rest)
        case "insert", "set", "add", "remove", "delete", "save", "rollback", "undo", "redo", "changes":
            try runChangeCommand(command, rest)
        default:
            if word.hasPrefix("$") || word.hasPrefix("x-coredata:") {
                try evaluate(line)
            } else {
                throw ShellError("unknown command \"\(word)\"; try .help")
            }
        }
    }

    /// Colours results (dim nil, cyan handles, bold headers) and the log's timings; the
    /// executable turns these on for terminals unless `NO_COLOR` is set.
    public func setColor(results: Bool, log: Bool) {
        renderer.color = results
        self.log.colored = log
    }

    /// Shows at most `rows` rows of a result, then how many were left out (`.rows`).
    public func setRowCap(_ rows: Int?) { rowCap = rows }

    /// Marks the session as finished (`.quit`).
    func quit() { didQuit = true }

    /// Takes a `.quit` back (the user chose to keep unsaved changes).
    public func cancelQuit() { didQuit = false }

    static func splitFirstWord(_ line: String) -> (String, String) {
        guard let space = line.firstIndex(where: { $0 == " " || $0 == "\t" }) else { return (line, "") }
        return (String(line[..<space]), String(line[space...]).trimmingCharacters(in: .whitespaces))
    }

    /// Whether text typed so far leaves a quote, parenthesis or brace open, so the shell
    /// should read another line before running it.
    public static func needsContinuation(_ text: String) -> Bool {
        var accumulator = CommandAccumulator()
        var open = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            open = ((try? accumulator.add(String(line))) ?? nil) == nil && !accumulator.isEmpty
        }
        return open
    }

    /// Prints a result table, capped at ``rowCap`` rows with a line saying what was left out,
    /// cut to the width (``width``), with a line naming the columns that did not fit.
    func printTable(_ table: ResultTable, noun: String = "row", plural: String? = nil) {
        var shown = table
        var hidden = 0
        if let cap = rowCap, table.rows.count > cap {
            hidden = table.rows.count - cap
            shown.rows = Array(table.rows.prefix(cap))
        }
        renderer.maxWidth = width.columns(resultsGoToTerminal: results.file == nil && standard.streams.contains { $0 === TextOutput.standardOutput })
        let rendered = renderer.rendering(shown)
        results.write(rendered.text)
        if renderer.mode.isForPeople {
            let n = table.rows.count
            var summary = "\(n) \(n == 1 ? noun : plural ?? noun + "s")"
            if hidden > 0 { summary += " (\(hidden) not shown; .rows all to see them)" }
            if !rendered.omittedColumns.isEmpty {
                let names = rendered.omittedColumns
                let named = names.count > 8 ? names.prefix(6).joined(separator: ", ") + " and \(names.count - 6) others" : names.joined(separator: ", ")
                summary += "; \(names.count) more \(names.count == 1 ? "column" : "columns") not shown (\(named)): "
                    + "pick columns with show KEY, …, or see them all with .mode line or .width off"
            }
            results.write(summary)
        }
    }
}

/// `.width N|auto|off`: the most terminal columns a result for people takes.
enum ResultWidth: Equatable, CustomStringConvertible {
    /// The terminal's width when results go to a terminal; no limit otherwise.
    case auto
    /// No limit.
    case off
    /// At most this many columns.
    case columns(Int)

    var description: String {
        switch self {
        case .auto: "auto"
        case .off: "off"
        case .columns(let n): String(n)
        }
    }

    /// The limit now, or nil for none.
    func columns(resultsGoToTerminal: Bool) -> Int? {
        switch self {
        case .off: return nil
        case .columns(let n): return n
        case .auto:
            guard resultsGoToTerminal, isatty(STDOUT_FILENO) != 0 else { return nil }
            return ResultWidth.terminalColumns()
        }
    }

    /// The terminal's columns (TIOCGWINSZ), else `COLUMNS`, else 80.
    static func terminalColumns() -> Int {
        var size = winsize()
        if ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col >= 20 { return Int(size.ws_col) }
        if let text = ProcessInfo.processInfo.environment["COLUMNS"], let n = Int(text), n >= 20 { return n }
        return 80
    }
}

/// A switchable writer: standard output or error, or a file (`.output FILE`, `.log FILE`).
final class Sink {
    private var writeLine: (String) -> Void
    /// The file it writes to after `.output FILE` / `.log FILE`.
    private(set) var file: TextOutput?
    /// What it writes to, for messages.
    private(set) var name: String

    init(_ writeLine: @escaping (String) -> Void, name: String = "default") {
        self.writeLine = writeLine
        self.name = name
    }

    func write(_ text: String) { writeLine(text) }

    /// Writes to a file from now on (created or truncated).
    func redirect(toFile path: String) throws {
        let stream = try TextOutput.file(path)
        file = stream
        name = path
        writeLine = { stream.writeLine($0) }
    }

    /// Writes through `writeLine` from now on.
    func redirect(_ writeLine: @escaping (String) -> Void, name: String) {
        file = nil
        self.name = name
        self.writeLine = writeLine
    }
}

/// An error in a shell command, worded for the user.
public struct ShellError: Error, CustomStringConvertible, Equatable {
    /// What is wrong.
    public var message: String

    /// Creates an error.
    public init(_ message: String) { self.message = message }

    public var description: String { message }
}
