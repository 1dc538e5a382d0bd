import Faultline
import FaultlineModel
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

        /// Creates outputs from two writers (each call is one line, without its newline).
        public init(out: @escaping (String) -> Void, err: @escaping (String) -> Void) {
            self.out = out
            self.err = err
        }

        /// Standard output and standard error, flushed per line.
        public static var standard: Output {
            Output(
                out: { line in FileHandle.standardOutput.write(Data((line + "\n").utf8)) },
                err: { line in FileHandle.standardError.write(Data((line + "\n").utf8)) })
        }
    }

    /// The open store's coordinator.
    public let coordinator: PersistentStoreCoordinator
    /// The session's context.
    public let context: ManagedObjectContext
    /// The SQL log (level 1 by default, as with `-com.apple.CoreData.SQLDebug 1`).
    public let log: SQLLog
    private let output: Output
    /// Objects with handles: `$1` is `handles[0]`.
    private(set) var handles: [ManagedObject] = []
    private var handleByID: [ManagedObjectID: Int] = [:]
    /// Statements, rows and faults per command and for the session.
    let statistics = CommandStatistics()
    /// Whether `.quit` was run.
    public private(set) var didQuit = false

    /// Opens a store with a model (found beside the store when `modelPath` is nil).
    ///
    /// - Throws: ``ShellError``, `ModelError` or `StoreError` naming the file that failed.
    public init(storePath: String, modelPath: String?, writable: Bool = false, sqlDebugLevel: Int = 1, output: Output) throws {
        let storeURL = URL(fileURLWithPath: storePath)
        let modelURL: URL
        if let modelPath {
            modelURL = URL(fileURLWithPath: modelPath)
        } else {
            modelURL = try Shell.findModel(besideStore: storeURL)
        }
        let model = try ManagedObjectModel(contentsOf: modelURL)
        self.output = output
        self.coordinator = try PersistentStoreCoordinator(
            model: model, storeURL: storeURL,
            options: SQLiteStore.Options(readOnly: !writable, createIfMissing: writable))
        self.context = ManagedObjectContext(coordinator: coordinator)
        self.log = SQLLog(level: sqlDebugLevel, write: output.err)
        log.attach(to: coordinator.store.connection)
        let statistics = self.statistics
        coordinator.store.connection.addTraceObserver { statistics.observe($0) }
        context.faultObserver = { statistics.observe($0) }
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

    /// Runs one command line. Blank lines and `--` comments do nothing.
    ///
    /// - Throws: an error describing what failed; the shell stays usable.
    public func run(line rawLine: String) throws {
        let line = rawLine.trimmingCharacters(in: .whitespaces)
        if line.isEmpty || line.hasPrefix("--") { return }
        statistics.begin()
        defer {
            let totals = statistics.end()
            if totals.statements > 0 && log.level > 0 {
                output.err(CommandStatistics.summary(totals))
            }
            for warning in statistics.stormWarnings(totals) { output.err(warning) }
        }
        try runCommand(line)
    }

    private func runCommand(_ line: String) throws {
        let (word, rest) = Shell.splitFirstWord(line)
        switch word.lowercased() {
        case "fetch":
            try fetch(FetchCommand.parse(rest))
        case "count":
            try count(FetchCommand.parse(rest))
        case ".quit", ".exit":
            didQuit = true
        case ".help":
            output.out(Shell.helpText)
        case ".sql":
            guard let level = Int(rest), (0...4).contains(level) else { throw ShellError(".sql needs a level from 0 to 4") }
            log.level = level
        case ".storm":
            guard let n = Int(rest), n >= 0 else { throw ShellError(".storm needs a number: warn when one command fires more faults than that through one relationship") }
            statistics.stormThreshold = n
        default:
            if word.hasPrefix("$") {
                try evaluate(line)
            } else {
                throw ShellError("unknown command \"\(word)\"; try .help")
            }
        }
    }

    static func splitFirstWord(_ line: String) -> (String, String) {
        guard let space = line.firstIndex(where: { $0 == " " || $0 == "\t" }) else { return (line, "") }
        return (String(line[..<space]), String(line[space...]).trimmingCharacters(in: .whitespaces))
    }

    static let helpText = """
        fetch Entity [sort by KEY [asc|desc], …] [limit N] [offset N] [batch N] [prefetch REL, …] [show KEY, …]
                                  fetch objects; each gets a handle $1, $2, …
        count Entity              count objects
        $N  $N.key  $N.rel.key    show an object or follow key paths (faults fire)
        .sql N                    SQL log level 0–4 (as -com.apple.CoreData.SQLDebug N)
        .storm N                  warn when a command fires more than N faults through one relationship (10)
        .help                     this text
        .quit                     leave
        """

    // MARK: Commands

    private func request(for command: FetchCommand) throws -> FetchRequest {
        guard coordinator.model.entity(named: command.entity) != nil else {
            throw ShellError("entity \(command.entity) not found in the model; entities: \(coordinator.model.entities.map(\.name).joined(separator: ", "))")
        }
        if command.predicate != nil {
            throw ShellError("predicates ('where') are not supported yet")
        }
        var request = FetchRequest(entityName: command.entity)
        request.sortDescriptors = command.sort.map { FetchSort(keyPath: $0.keyPath, ascending: $0.ascending) }
        request.fetchLimit = command.limit ?? 0
        request.fetchOffset = command.offset ?? 0
        request.fetchBatchSize = command.batch ?? 0
        request.relationshipKeyPathsForPrefetching = command.prefetch
        return request
    }

    private func fetch(_ command: FetchCommand) throws {
        let objects = try context.fetch(request(for: command))
        guard let entity = coordinator.model.entity(named: command.entity) else { return }
        printObjects(objects, entity: entity, keys: command.show)
    }

    /// Prints objects as a numbered table, giving each a handle. Without `keys`, the columns
    /// are the entity's stored attributes, then its to-one relationships.
    private func printObjects(_ objects: [ManagedObject], entity: EntityDescription, keys: [String] = []) {
        let keys = keys.isEmpty ? Shell.defaultKeys(for: entity) : keys
        var rows: [[String]] = []
        for object in objects {
            let handle = self.handle(for: object)
            rows.append(["$\(handle)"] + keys.map { format(object.value(forKeyPath: $0)) })
        }
        output.out(TableRenderer.table(headers: ["#"] + keys, rows: rows))
        output.out("\(objects.count) \(objects.count == 1 ? "row" : "rows")")
    }

    static func defaultKeys(for entity: EntityDescription) -> [String] {
        entity.attributes.filter { !$0.isTransient }.map(\.name) + entity.relationships.filter(\.isToOne).map(\.name)
    }

    private func count(_ command: FetchCommand) throws {
        let n = try context.count(for: request(for: command))
        output.out(String(n))
    }

    private func evaluate(_ line: String) throws {
        let parts = line.split(separator: ".", maxSplits: 1).map(String.init)
        guard let n = Int(parts[0].dropFirst()), n >= 1, n <= handles.count else {
            throw ShellError(handles.isEmpty ? "no object \(parts[0]); fetch objects first, they get handles $1, $2, …" : "no object \(parts[0]); handles are $1 to $\(handles.count)")
        }
        let object = handles[n - 1]
        guard parts.count > 1 else {
            output.out(format(object) + " " + object.description)
            return
        }
        let keyPath = parts[1]
        try checkKeyPath(keyPath, from: object.entity)
        let value = object.value(forKeyPath: keyPath)
        if let objects = value as? [ManagedObject] {
            let destination = objects.first?.entity ?? destinationEntity(ofKeyPath: keyPath, from: object.entity)
            if let destination {
                printObjects(objects, entity: destination)
                return
            }
        }
        if let values = value as? [Any] {
            output.out(TableRenderer.table(headers: [keyPath], rows: values.map { [format($0)] }))
            output.out("\(values.count) \(values.count == 1 ? "row" : "rows")")
            return
        }
        output.out(format(value))
    }

    /// Checks each step of a key path against the model, in Core Data's words.
    private func checkKeyPath(_ keyPath: String, from entity: EntityDescription) throws {
        var current: EntityDescription? = entity
        for key in keyPath.split(separator: ".").map(String.init) {
            guard let e = current else {
                throw ShellError("keypath \(keyPath) goes past an attribute at \(key)")
            }
            if let relationship = e.relationship(named: key) {
                current = coordinator.model.entity(named: relationship.destinationEntityName)
            } else if e.attribute(named: key) != nil {
                current = nil
            } else {
                throw ShellError("keypath \(key) not found in entity \(e.name)")
            }
        }
    }

    private func destinationEntity(ofKeyPath keyPath: String, from entity: EntityDescription) -> EntityDescription? {
        var current: EntityDescription? = entity
        for key in keyPath.split(separator: ".") {
            current = current?.relationship(named: String(key)).flatMap { coordinator.model.entity(named: $0.destinationEntityName) }
        }
        return current
    }

    /// The handle number of an object, giving it the next one when it has none.
    func handle(for object: ManagedObject) -> Int {
        if let n = handleByID[object.objectID] { return n }
        handles.append(object)
        handleByID[object.objectID] = handles.count
        return handles.count
    }

    /// A value as the shell shows it.
    func format(_ value: Any?) -> String {
        guard let value else { return "nil" }
        let mirror = Mirror(reflecting: value)
        if mirror.displayStyle == .optional {
            return mirror.children.first.map { format($0.value) } ?? "nil"
        }
        switch value {
        case let object as ManagedObject:
            if let n = handleByID[object.objectID] { return "$\(n)" }
            return "<\(object.entity.name) p\(object.objectID.primaryKey)>"
        case let date as Date:
            return Shell.dateFormatter.string(from: date)
        case let data as Data:
            return "<\(data.count) bytes>"
        case let string as String:
            return string
        default:
            return "\(value)"
        }
    }

    nonisolated(unsafe) static let dateFormatter: ISO8601DateFormatter = {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime]
        return f
    }()
}
