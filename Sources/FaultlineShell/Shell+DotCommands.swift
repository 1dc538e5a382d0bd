import Faultline
import FaultlineModel
import FaultlineSQL
import Foundation

/// The dot commands: settings, files, the model and schema, raw SQL, help.
extension Shell {
    /// Every dot command, for unambiguous prefixes (`.q` is `.quit`, as in sqlite3).
    static let dotCommandNames = [
        ".quit", ".exit", ".help", ".sql", ".storm", ".mode", ".headers", ".timer", ".echo", ".rows", ".output", ".once", ".log",
        ".merge-policy", ".read", ".open", ".write", ".model", ".schema", ".tables", ".indexes", ".history", ".faults", ".stats",
        ".raw", ".print", ".show", ".bail", ".separator", ".nullvalue", ".dump", ".shell", ".system", ".handles", ".width",
    ]

    func runDotCommand(_ typed: String, _ rest: String) throws {
        var command = typed
        if !Shell.dotCommandNames.contains(typed) {
            let matches = Shell.dotCommandNames.filter { $0.hasPrefix(typed) }
            if matches.count == 1, let only = matches.first {
                command = only
            } else if matches.count > 1 {
                throw ShellError("\(typed) is ambiguous: \(matches.joined(separator: ", "))")
            }
        }
        switch command {
        case ".print": results.write(rest)
        case ".dump": try dump(rest)
        case ".shell", ".system": try runSystemCommand(rest)
        case ".bail": bail = try onOff(rest, ".bail")
        case ".once":
            guard !rest.isEmpty else { throw ShellError(".once needs a file: the next command's results go there") }
            try results.redirect(toFile: rest)
            once = rest
            return
        case ".show":
            let settings: [(String, String)] = [
                ("store", session.storePath + (coordinator.store.isReadOnly ? " (read-only)" : " (writable)")),
                ("model", session.modelPath ?? {
                    switch coordinator.store.modelSource {
                    case .given: "the one beside the store"
                    case .modelCache: "the store's own (Z_MODELCACHE)"
                    case .inferred: "inferred from the tables"
                    }
                }()), ("mode", renderer.mode.rawValue), ("headers", renderer.headers ? "on" : "off"),
                ("handles", renderer.handles.map { $0 ? "on" : "off" } ?? "auto"), ("width", width.description),
                ("rows", rowCap.map(String.init) ?? "all"), ("sql", String(log.level)), ("storm", String(statistics.stormThreshold)),
                ("timer", timer ? "on" : "off"), ("echo", echo ? "on" : "off"), ("bail", bail ? "on" : "off"),
                ("output", results.name), ("log", logSink.name),
                ("merge-policy", Shell.mergePolicies.first { $0.1 == context.mergePolicy }?.0 ?? "error"),
            ]
            results.write(settings.map { "\($0.0.padding(toLength: 12, withPad: " ", startingAt: 0)) \($0.1)" }.joined(separator: "\n"))
        case ".tables":
            let tables = try coordinator.store.connection.untraced {
                try coordinator.store.connection.query("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").compactMap { $0[0].string }
            }
            results.write(tables.joined(separator: "  "))
        case ".indexes", ".indices":
            let indexes = try coordinator.store.connection.untraced {
                try coordinator.store.connection.query(
                    "SELECT name FROM sqlite_master WHERE type = 'index' AND (? = '' OR tbl_name = ? COLLATE NOCASE) ORDER BY name", [.text(rest), .text(rest)]
                ).compactMap { $0[0].string }
            }
            results.write(indexes.joined(separator: "\n"))
        case ".quit", ".exit": quit()
        case ".help": help(rest)
        case ".sql":
            guard let level = Int(rest), (0...4).contains(level) else {
                throw ShellError(".sql needs a level from 0 to 4 (now \(log.level)): 0 off, 1 SQL and timings, 2 bound values, 3 row values, 4 query plans")
            }
            log.level = level
        case ".storm":
            guard let n = Int(rest), n >= 0 else {
                throw ShellError(".storm needs a number (now \(statistics.stormThreshold)): warn when a command fires more faults than that through one relationship")
            }
            statistics.stormThreshold = n
        case ".mode":
            let words = rest.split(separator: " ").map(String.init)
            guard let first = words.first, let mode = OutputMode(rawValue: first.lowercased()) else {
                throw ShellError(".mode needs one of \(OutputMode.allCases.map(\.rawValue).joined(separator: ", ")) (now \(renderer.mode.rawValue))")
            }
            renderer.mode = mode
            if mode == .insert, words.count > 1 { renderer.insertTable = words[1] }
        case ".separator":
            let words = Shell.separatorArguments(rest)
            guard let column = words.first else { throw ShellError(".separator needs a column separator (and a row separator), as in: .separator , \\n") }
            renderer.columnSeparator = column
            if words.count > 1 { renderer.rowSeparator = words[1] }
        case ".nullvalue": renderer.nullValue = Shell.unquoted(rest)
        case ".handles":
            switch rest.lowercased() {
            case "on": renderer.handles = true
            case "off": renderer.handles = false
            case "auto": renderer.handles = nil
            default: throw ShellError(".handles needs on, off or auto (now \(renderer.handles.map { $0 ? "on" : "off" } ?? "auto")): whether results show the $N handle column; auto shows it in table, box, line and markdown modes")
            }
        case ".width":
            switch rest.lowercased() {
            case "auto": width = .auto
            case "off": width = .off
            default:
                guard let n = Int(rest), n >= 20, n <= 100_000 else {
                    throw ShellError(".width needs a number of columns from 20, auto (the terminal's width) or off (now \(width.description))")
                }
                width = .columns(n)
            }
        case ".headers": renderer.headers = try onOff(rest, ".headers")
        case ".timer": timer = try onOff(rest, ".timer")
        case ".echo": echo = try onOff(rest, ".echo")
        case ".rows":
            if rest.lowercased() == "all" {
                rowCap = nil
            } else if let n = Int(rest), n > 0 {
                rowCap = n
            } else {
                throw ShellError(".rows needs a number of rows to show, or all")
            }
        case ".output":
            if rest.isEmpty || rest == "stdout" {
                results.redirect(standard.out, name: "stdout")
            } else {
                try results.redirect(toFile: rest)
            }
        case ".log":
            switch rest.lowercased() {
            case "stderr", "": logSink.redirect(standard.err, name: "stderr")
            case "stdout": logSink.redirect(standard.out, name: "stdout")
            default: try logSink.redirect(toFile: rest)
            }
        case ".merge-policy": try setMergePolicy(rest)
        case ".read": try read(file: rest)
        case ".open": try open(rest)
        case ".write": try setWritable(try onOff(rest, ".write"))
        case ".model": try showModel(rest)
        case ".schema": try showSchema(rest)
        case ".history": try showHistory(rest)
        case ".faults": showFaults()
        case ".stats": showStatistics()
        case ".raw": try raw(rest)
        default: throw ShellError("unknown command \"\(command)\"; try .help")
        }
    }

    /// The pragmas that only read, in their query forms (`PRAGMA journal_mode`,
    /// `PRAGMA table_info(ZASSET)`): SQLite does not call every such statement read-only.
    static let readOnlyPragmas: Set<String> = [
        "application_id", "auto_vacuum", "cache_size", "collation_list", "compile_options", "data_version", "database_list",
        "encoding", "foreign_key_check", "foreign_key_list", "foreign_keys", "freelist_count", "function_list", "index_info",
        "index_list", "index_xinfo", "integrity_check", "journal_mode", "journal_size_limit", "module_list", "page_count",
        "page_size", "pragma_list", "quick_check", "schema_version", "synchronous", "table_info", "table_list", "table_xinfo",
        "user_version", "wal_autocheckpoint",
    ]

    /// Whether a statement is one of ``readOnlyPragmas`` in a form that only reads: no `=`.
    static func isReadOnlyPragma(_ sql: String) -> Bool {
        let words = sql.trimmingCharacters(in: .whitespacesAndNewlines).split(maxSplits: 1, whereSeparator: { $0.isWhitespace })
        guard words.count == 2, words[0].lowercased() == "pragma", !words[1].contains("=") else { return false }
        var name = words[1].split(separator: "(", maxSplits: 1).first.map(String.init) ?? ""
        name = name.trimmingCharacters(in: .whitespaces.union(CharacterSet(charactersIn: ";"))).lowercased()
        if let dot = name.lastIndex(of: ".") { name = String(name[name.index(after: dot)...]) }  // main.journal_mode
        return readOnlyPragmas.contains(name)
    }

    /// `.dump [TABLE]`: the store (or the tables whose names match, as in sqlite3, with `%`
    /// and `_` wildcards) as SQL text — schema and `INSERT` statements — read in one read
    /// transaction; the store is not changed.
    func dump(_ pattern: String) throws {
        let connection = coordinator.store.connection
        try connection.untraced {
            try context.withReadTransaction {
                results.write("PRAGMA foreign_keys=OFF;\nBEGIN TRANSACTION;")
                let like = pattern.isEmpty ? "%" : pattern
                let tables = try connection.query(
                    "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name LIKE ? ORDER BY rowid", [.text(like)])
                for table in tables {
                    guard let name = table[0].string, let sql = table[1].string else { continue }
                    results.write(sql + ";")
                    // Quoted only when it must be, as sqlite3 writes it.
                    let plain = name.first.map { $0.isASCII && ($0.isLetter || $0 == "_") } == true && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
                    let quotedName = plain ? name : "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
                    let statement = try connection.prepare("SELECT * FROM \(quotedName)")
                    while try statement.step() {
                        let values = (0..<statement.columnCount).map { i -> String in
                            switch statement.value(at: i) {
                            case .null: return "NULL"
                            case .integer(let v): return String(v)
                            case .real(let v): return Renderer.sqlLiteral(.real(v))
                            case .text(let v): return Renderer.sqlLiteral(.text(v))
                            case .blob(let v): return "X'" + v.map { String(format: "%02X", $0) }.joined() + "'"
                            }
                        }
                        results.write("INSERT INTO \(quotedName) VALUES(" + values.joined(separator: ",") + ");")
                    }
                }
                let others = try connection.query(
                    "SELECT sql FROM sqlite_master WHERE type IN ('index', 'trigger', 'view') AND sql IS NOT NULL AND tbl_name LIKE ? ORDER BY rowid", [.text(like)])
                for row in others { if let sql = row[0].string { results.write(sql + ";") } }
                results.write("COMMIT;")
            }
        }
    }

    /// `.shell CMD` / `.system CMD`: runs a command with `/bin/sh -c`, on the shell's own
    /// terminal, and says so when it fails.
    func runSystemCommand(_ command: String) throws {
        guard !command.isEmpty else { throw ShellError(".shell needs a command, as in: .shell ls -l") }
        var pid: pid_t = 0
        let arguments = ["/bin/sh", "-c", command]
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let spawned = posix_spawn(&pid, "/bin/sh", nil, nil, &argv, environ)
        guard spawned == 0 else { throw ShellError(".shell: cannot start /bin/sh (\(String(cString: strerror(spawned))))") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let code = (status >> 8) & 0xFF
        if status & 0x7F != 0 { throw ShellError(".shell: \(command) was ended by signal \(status & 0x7F)") }
        if code != 0 { throw ShellError(".shell: \(command) exited with status \(code)") }
    }

    /// Whether a statement begins, ends or marks a transaction (`BEGIN`, `COMMIT`, `END`,
    /// `ROLLBACK`, `SAVEPOINT`, `RELEASE`), or changes how the store is locked.
    static func isTransactionControl(_ sql: String) -> Bool {
        let first = sql.trimmingCharacters(in: .whitespacesAndNewlines).prefix { $0.isLetter }.uppercased()
        if ["BEGIN", "COMMIT", "END", "ROLLBACK", "SAVEPOINT", "RELEASE"].contains(first) { return true }
        return first == "PRAGMA" && sql.lowercased().contains("locking_mode")
    }

    /// A dot command's argument without the quotes around it, if any.
    static func unquoted(_ text: String) -> String {
        if text.count >= 2, let first = text.first, first == "\"" || first == "'", text.last == first { return String(text.dropFirst().dropLast()) }
        return text
    }

    /// `.separator` words with sqlite3's escapes (`\t`, `\n`, `\r`, `\\`), quotes removed.
    static func separatorArguments(_ text: String) -> [String] {
        Shell.splitTopLevel(text, on: " ").filter { !$0.isEmpty }.map { word in
            var out = ""
            var escape = false
            for c in unquoted(word) {
                if escape {
                    switch c {
                    case "t": out.append("\t")
                    case "n": out.append("\n")
                    case "r": out.append("\r")
                    default: out.append(c)
                    }
                    escape = false
                } else if c == "\\" {
                    escape = true
                } else {
                    out.append(c)
                }
            }
            return out
        }
    }

    private func onOff(_ text: String, _ command: String) throws -> Bool {
        switch text.lowercased() {
        case "on", "yes", "1": return true
        case "off", "no", "0": return false
        default: throw ShellError("\(command) needs on or off")
        }
    }

    /// `.read FILE`: runs the file's lines as a script; the first error stops it and names
    /// the file and line.
    func read(file path: String) throws {
        guard !path.isEmpty else { throw ShellError(".read needs a file") }
        guard readDepth < Shell.maximumReadDepth else {
            throw ShellError("\(path): .read files are nested \(Shell.maximumReadDepth) deep (does a file read itself?)")
        }
        if let problem = RegularFile.problem(atPath: path) {
            throw ShellError("\(path): .read reads a file of commands, and this is \(problem)")
        }
        let descriptor = LineReader.openForReading(path)
        guard descriptor >= 0 else {
            throw ShellError("\(path): cannot read this file (\(String(cString: strerror(errno))))")
        }
        defer { close(descriptor) }
        readDepth += 1
        defer { readDepth -= 1 }
        var pending = CommandAccumulator()
        var startLine = 0
        var index = 0
        let reader = LineReader(descriptor: descriptor)
        while let item = reader.next() {
            index += 1
            if pending.isEmpty { startLine = index }
            do {
                guard case .line(let line) = item else {
                    throw ShellError("a line longer than the limit of \(CommandAccumulator.maximumBytes / 1024) KiB")
                }
                guard let text = try pending.add(line) else { continue }
                try run(line: text)
            } catch {
                throw ShellError("\(path):\(startLine): \(error)")
            }
            if didQuit { return }
        }
        if !pending.text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            throw ShellError("\(path):\(startLine): a quote or parenthesis is still open at the end of the file")
        }
    }

    /// `.open STORE [--model M] [--write]`.
    func open(_ rest: String) throws {
        var words = rest.split(separator: " ").map(String.init)
        var writable = false
        var model: String?
        if let i = words.firstIndex(of: "--write") {
            writable = true
            words.remove(at: i)
        }
        if let i = words.firstIndex(of: "--model") {
            guard i + 1 < words.count else { throw ShellError(".open: --model needs a path") }
            model = words[i + 1]
            words.removeSubrange(i...(i + 1))
        }
        guard words.count == 1, let store = words.first else {
            throw ShellError(".open needs a store, as in: .open Samples/Inventory/Inventory.sqlite [--model PATH] [--write]")
        }
        try confirmLosingChanges(".open \(store)")
        replaceSession(try Shell.openSession(storePath: store, modelPath: model, writable: writable))
        results.write("opened \(store)\(writable ? " for writing" : " read-only")")
    }

    /// The merge policies by the names `.merge-policy` takes.
    static let mergePolicies: [(String, MergePolicy)] = [
        ("error", .error), ("rollback", .rollback), ("overwrite", .overwrite),
        ("objectTrump", .mergeByPropertyObjectTrump), ("storeTrump", .mergeByPropertyStoreTrump),
    ]

    /// `.merge-policy [error|rollback|overwrite|objectTrump|storeTrump]`: how a save resolves
    /// rows another writer changed meanwhile (the context's merge policy); without a name,
    /// the current one.
    func setMergePolicy(_ rest: String) throws {
        let names = Shell.mergePolicies.map(\.0)
        guard !rest.isEmpty else {
            let current = Shell.mergePolicies.first { $0.1 == context.mergePolicy }?.0 ?? "error"
            results.write("merge policy: \(current) (one of \(names.joined(separator: ", ")))")
            return
        }
        guard let policy = Shell.mergePolicies.first(where: { $0.0.lowercased() == rest.lowercased() })?.1 else {
            throw ShellError(".merge-policy needs one of \(names.joined(separator: ", ")), found \"\(rest)\"")
        }
        context.mergePolicy = policy
        results.write("merge policy: \(rest)")
    }

    /// `.write on|off`: opens the current store again with or without write access.
    func setWritable(_ writable: Bool) throws {
        guard session.storePath != ":memory:" else { throw ShellError(".write: an in-memory store is always writable") }
        guard writable != !coordinator.store.isReadOnly else { return }
        if !writable { try confirmLosingChanges(".write off") }
        let old = session
        let new = try Shell.openSession(storePath: session.storePath, modelPath: session.modelPath, writable: writable)
        guard writable, old.context.hasChanges else {
            replaceSession(new)
            results.write("\(session.storePath) is now \(writable ? "open for writing" : "read-only"); handles start again at $1")
            return
        }
        // `.write on` keeps the pending edits (and the handles): they are made again in the
        // new session's context, then saved from there.
        let map = try ChangeCarrier(from: old.context, to: new.context).carry()
        for object in old.handles {
            let moved = map[ObjectIdentifier(object)] ?? new.context.object(with: object.objectID)
            new.handles.append(moved)
            new.handleByID[moved.objectID] = new.handles.count
        }
        replaceSession(new)
        results.write("\(session.storePath) is now open for writing; the unsaved changes are kept (\(unsavedChangesSummary ?? "none")), and so are the handles")
    }

    /// `.model [Entity]`.
    func showModel(_ rest: String) throws {
        let model = session.model
        guard !rest.isEmpty else {
            results.write(ModelReport.text(model).trimmingCharacters(in: .newlines))
            return
        }
        guard model.entity(named: rest) != nil else {
            throw ShellError("entity \(rest) not found in the model; entities: \(model.entities.map(\.name).joined(separator: ", "))")
        }
        results.write(ModelReport.text(model, entity: rest).trimmingCharacters(in: .newlines))
    }

    /// `.schema [Entity]`.
    func showSchema(_ rest: String) throws {
        let store = coordinator.store
        if !rest.isEmpty, session.model.entity(named: rest) == nil {
            throw ShellError("entity \(rest) not found in the model; entities: \(session.model.entities.map(\.name).joined(separator: ", "))")
        }
        results.write(try SchemaReport.text(store: store, entity: rest.isEmpty ? nil : rest))
    }

    /// `.history [N] [Entity] [$n]`: the changes of the last N (10) transactions of the
    /// store's persistent history, oldest first, as a result table (so `.mode` applies),
    /// for one entity or one object; what an update's bits stand for is marked as inferred.
    func showHistory(_ rest: String) throws {
        // `.history [N] [Entity] [$n | object URI]`, in any order.
        var count = 10
        var entityFilter: String?
        var objectFilter: ManagedObjectID?
        for word in rest.split(separator: " ").map(String.init) {
            if let n = Int(word) {
                guard n > 0 else { throw ShellError(".history needs a number of transactions to show (10)") }
                count = n
            } else if word.hasPrefix("$") || word.hasPrefix("x-coredata:") {
                objectFilter = try object(named: word).objectID
            } else if session.model.entity(named: word) != nil {
                entityFilter = word
            } else {
                throw ShellError(".history takes a number of transactions, an entity (\(examples.entity)) or an object ($3, or its URI); found \"\(word)\"")
            }
        }
        let store = coordinator.store
        guard store.tracksPersistentHistory else {
            results.write("The store keeps no persistent history (no ATRANSACTION table).")
            return
        }
        let transactions = try store.connection.untraced { try store.historyTransactions(last: count) }
        guard !transactions.isEmpty else {
            results.write("The persistent history is empty.")
            return
        }
        let dates = ISO8601DateFormatter()
        var rows: [[Cell]] = []
        var inferred = false
        for t in transactions {
            let who = [("author", t.author), ("context", t.contextName), ("bundle", t.bundleID), ("process", t.processID)]
                .compactMap { label, value in value.map { "\(label) \($0)" } }.joined(separator: ", ")
            for change in t.changes {
                if let entityFilter, change.objectID.entityName != entityFilter { continue }
                if let objectFilter, change.objectID != objectFilter { continue }
                let kind: String
                switch change.type {
                case .insert: kind = "insert"
                case .update: kind = "update"
                case .delete: kind = "delete"
                }
                // An update names its properties only by bits whose order is inferred, not
                // documented: the bits are shown as stored, and the reading says it is a guess.
                var properties = ""
                if let bits = change.columnBits {
                    properties = "bits " + bits.map { String(format: "%02X", $0) }.joined()
                    if !change.updatedProperties.isEmpty {
                        properties += ": probably " + change.updatedProperties.map { name in
                            name.hasPrefix("#") ? "bit \(name.dropFirst()) (no property of this model)" : name
                        }.joined(separator: ", ")
                        inferred = true
                    }
                }
                let kept = change.tombstone.filter { $0.value != .null }.map { "\($0.name) = \($0.value)" }.joined(separator: ", ")
                rows.append([
                    .integer(t.number), .text(dates.string(from: t.timestamp)), .text(who), .text(kind), .text(change.objectID.entityName),
                    .reference("p\(change.objectID.primaryKey)"), .text(properties), .text(kept),
                ])
            }
        }
        guard !rows.isEmpty else {
            results.write("No change in the last \(count == 1 ? "transaction" : "\(count) transactions") matches.")
            return
        }
        printTable(ResultTable(headers: ["transaction", "time", "by", "change", "entity", "object", "updated", "kept after delete"], rows: rows), noun: "change")
        if inferred {
            logSink.write("faultline: note: which property each bit of an update stands for is not documented by Apple; 'probably' reads them in property-name order, which fits Apple's stores but is inferred")
        }
    }

    /// `.faults`: the registered objects and their state.
    func showFaults() {
        let objects = context.registeredObjects.values.sorted {
            ($0.entity.name, $0.objectID.primaryKey) < ($1.entity.name, $1.objectID.primaryKey)
        }
        let rows: [[Cell]] = objects.map { object in
            let toMany = object.entity.relationships.filter { $0.isToMany }
            let loaded = toMany.filter { !object.hasFault(forRelationshipNamed: $0.name) }.map(\.name)
            return [
                .reference(reference(to: object)), .text(object.objectID.uriRepresentation),
                .text(object.isFault ? "fault" : "loaded"),
                .text(object.faultOrigin ?? "(fetched)"),
                .text(loaded.isEmpty ? "" : loaded.joined(separator: ", ")),
            ]
        }
        printTable(ResultTable(headers: ["object", "id", "state", "reached through", "to-many loaded"], rows: rows), noun: "object")
    }

    /// `.stats`: the last command and the session.
    func showStatistics() {
        func row(_ name: String, _ t: CommandStatistics.Totals) -> [Cell] {
            [.text(name), .integer(Int64(t.statements)), .integer(Int64(t.rows)), .integer(Int64(t.faults.count)),
             .text(String(format: "%.3f", t.sqlSeconds * 1000)), .text(String(format: "%.3f", t.seconds * 1000))]
        }
        printTable(ResultTable(
            headers: ["", "statements", "rows", "faults", "SQL ms", "total ms"],
            rows: [row("last command", statistics.last), row("session", statistics.session)]))
    }

    /// `.raw SQL`: read-only SQL straight to SQLite, outside the object graph and its log.
    func raw(_ sql: String) throws {
        guard !sql.isEmpty else { throw ShellError(".raw needs SQL, as in: .raw SELECT COUNT(*) FROM \(examples.table)") }
        let connection = coordinator.store.connection
        // Every statement is prepared (and checked) before any runs: a text with one write,
        // an ATTACH or a syntax error anywhere runs nothing.
        let statements: [Statement]
        do {
            statements = try connection.refusingAttach { try connection.untraced { try connection.prepareAll(sql) } }
        } catch let error as SQLiteError where error.isDeniedByAuthorizer {
            throw ShellError(".raw does not run ATTACH or DETACH: an attached database would not be opened read-only (\(error.sql ?? sql))")
        } catch let error as SQLiteError {
            throw ShellError("SQLite: \(error.message)" + (error.sql.map { " in: \($0)" } ?? ""))
        }
        guard !statements.isEmpty else { throw ShellError(".raw: no SQL statement in \"\(sql)\"") }
        // Transaction control counts as read-only to SQLite, but a transaction left open
        // here would make the next save fail.
        if let control = statements.first(where: { Shell.isTransactionControl($0.sql) }) {
            throw ShellError(".raw does not run transaction control (\(control.sql)): each .raw runs on its own, and saves make their own transactions")
        }
        if let write = statements.first(where: { !$0.isReadOnly && !Shell.isReadOnlyPragma($0.sql) }) {
            throw ShellError(".raw runs read-only SQL only (\(write.sql)); change data through the object graph (insert, set, delete, save)")
        }
        for statement in statements {
            let table: ResultTable = try connection.untraced {
                var rows: [[Cell]] = []
                while try statement.step() {
                    rows.append((0..<statement.columnCount).map { i in
                        switch statement.value(at: i) {
                        // NULL as sqlite3 shows it (`.nullvalue`, nothing by default); JSON,
                        // quote and insert modes keep a real null.
                        case .null: [.json, .quote, .insert].contains(renderer.mode) ? .null : .text(renderer.nullValue)
                        case .integer(let v): .integer(v)
                        case .real(let v): .real(v)
                        case .text(let v): .text(v)
                        case .blob(let v): .binary(v)
                        }
                    })
                }
                return ResultTable(headers: statement.columnNames, rows: rows)
            }
            if !table.headers.isEmpty { printTable(table) }
        }
    }

    /// `.help [command]`.
    func help(_ topic: String) {
        let topic = topic.lowercased()
        if topic.isEmpty {
            results.write(Shell.helpText + "\n\n.help predicates      the predicate language, with examples from this store's model")
            return
        }
        if topic == "predicates" || topic == "predicate" || topic == "where" {
            results.write(predicateHelp())
            return
        }
        // A command's lines: the one that starts with it and the lines that go on from it.
        var lines: [Substring] = []
        var taking = false
        for line in Shell.helpText.split(separator: "\n") {
            let trimmed = line.trimmingCharacters(in: .whitespaces).lowercased()
            if line.hasPrefix(" ") || line.hasPrefix("\t") || trimmed.isEmpty {
                if taking { lines.append(line) }
                continue
            }
            taking = trimmed.hasPrefix(topic)
            if taking { lines.append(line) }
        }
        results.write(lines.isEmpty ? "no command \(topic); .help lists them all, .help predicates the predicate language" : lines.joined(separator: "\n"))
    }

    /// `.help predicates`: the predicate language, each form with an example over the open
    /// model (so it can be typed as it is).
    func predicateHelp() -> String {
        let e = examples
        let k = e.key, entity = e.entity
        var lines = [
            "Predicates (after 'where', as NSPredicate(format:) reads them), with this store's \(entity):",
            "  comparison        \(k) == \"Tea\"     \(k) != nil     \(k) < \"M\"     (also =, <>, <=, >, >=)",
            "  strings           \(k) BEGINSWITH \"T\"   CONTAINS   ENDSWITH   LIKE \"T*a?\"   MATCHES \"T[a-z]+\"",
            "  modifiers         \(k) CONTAINS[c] \"tea\"   ([c] case, [d] diacritics, [cd] both)",
            "  logic             \(k) BEGINSWITH \"T\" AND NOT (\(k) ENDSWITH \"s\")    OR    ( … )",
        ]
        if let r = e.relationship {
            lines.append("  key paths         \(r).\(e.destinationKey) == \"x\"   (through to-one relationships; a join in SQL)")
        }
        if let m = e.toMany {
            lines += [
                "  to-many           ANY \(m).\(e.toManyKey) \(e.toManyCondition)   ALL …   NONE …",
                "  aggregates        \(m).@count > 2   @sum  @avg  @min  @max of a key, as in \(m).@max.KEY > 3",
                "  SUBQUERY          SUBQUERY(\(m), $x, $x.\(e.toManyKey) \(e.toManyCondition)).@count > 0",
            ]
        }
        lines += [
            "  lists, ranges     \(k) IN {\"a\", \"b\"}     KEY BETWEEN {1, 10}",
            "  dates             KEY > \"2026-11-05\"  or  \"2026-11-05T14:00:00Z\"  or  now()   (ISO 8601, UTC unless a zone is given)",
            "  objects           self IN {$1, $2}   \(e.relationship.map { "\($0) == $3   " } ?? "")self == x-coredata://…/\(entity)/p3   (handles, or pasted URIs)",
            "  arithmetic        KEY + 1 > 10    KEY * 2 < 5",
            "  constants         nil  YES/NO  TRUEPREDICATE  FALSEPREDICATE  \"strings\"  12  1.5",
            "Example:  fetch \(entity) where \(k) BEGINSWITH[c] \"a\" sort by \(k) limit 5",
            "Every predicate becomes Core Data's SQL: see it with 'explain fetch \(entity) where …'.",
        ]
        return lines.joined(separator: "\n")
    }

    static let helpText = """
        fetch Entity [where PREDICATE] [sort by KEY [asc|desc], …] [limit N] [offset N] [batch N] [prefetch REL, …] [show KEY, …]
                                  fetch objects; each gets a handle $1, $2, …
        fetch Entity ids [where …] [sort by …] [limit N]   object IDs only: handles, no values
        fetch Entity [where …] values KEY|FUNC(KEY) [as NAME], … [group by KEY, …] [having PREDICATE] [distinct] [sort by …] [limit N]
                                  values as rows; FUNC: count, sum, min, max, average; count(*)
        fetch Entity … properties KEY, …   objects with only those properties loaded
        count Entity [where PREDICATE]   count objects
        $N  $N.key  $N.rel.key    an object, or a key path from it (touching a fault fires it)
        show $N                   every attribute, and each relationship with its fault state
        refresh $N                turn an object back into a fault
        explain fetch|count …     the SQL, bound values and SQLite's query plan, with hints
        migrate [--to MODEL|VERSION] [--dry-run|--write]
                                  Core Data's lightweight migration to another model version: the inferred
                                  mapping and every statement; --dry-run runs it on a copy, --write on the store
        insert Entity [key = value, …]   a new object (needs a store opened with --write)
        set $N.key = value        change an attribute or a to-one (value: "text", 12, 1.5, true, nil, $M)
        add $M to $N.rel          add an object to a to-many relationship
        remove $M from $N.rel     take an object out of a to-many relationship
        delete $N                 delete an object (its delete rules apply)
        changes                   the unsaved inserts, updates and deletes
        delete all Entity [where PREDICATE]   batch delete in SQL, delete rules applied (needs --write)
        update all Entity set key = value, … [where PREDICATE]   batch update in SQL; a value may be an expression (key + 1)
        insert all Entity from FILE.json|FILE.csv [policy error|ignore|upsert]   batch insert (import); duplicates of a uniqueness constraint fail, are ignored or update the stored row
        save                      write the changes in one transaction, as Core Data's SQL
        rollback                  drop every unsaved change
        undo                      take back the last change; redo puts it back
        redo                      put back what undo took back
        .open STORE [--model M] [--write]   open another store
        .write on|off             reopen the store with or without write access
        .model [Entity]           the model: entities, attributes, relationships
        .schema [Entity]          how the model maps onto tables, columns and indexes
        .history [N] [Entity] [$N]  the changes in the last N (10) transactions of the persistent history, for an entity or an object
                                  (an update's columns bits ≈ the properties they name, by name order: inferred)
        .sql N                    SQL log level 0–4 (as -com.apple.CoreData.SQLDebug N)
        .mode MODE                table, box, line, csv, json, markdown, list, tabs, quote, insert [TABLE] or html
        .separator COL [ROW]      separators of list mode (| and \n)
        .nullvalue TEXT           what list, tabs, csv and html modes show for nil (nothing)
        .headers on|off           column headers in csv mode
        .handles on|off|auto      the $N handle column (auto: in table, box, line and markdown modes; csv, json… leave it out)
        .width N|auto|off         cut values with … to fit N columns (auto: the terminal's width; off: never cut)
        .timer on|off             time each command
        .echo on|off              write each command (and -- comment) before its results
        .rows N|all               show at most N rows of a result
        .faults                   registered objects and their fault state
        .stats                    statements, rows, faults and time: last command and session
        .storm N                  warn when a command fires more than N faults through one relationship (10)
        .read FILE                run the commands in a file
        .merge-policy [NAME]      how a save resolves rows changed elsewhere: error, rollback, overwrite, objectTrump, storeTrump
        .output [FILE]            results to a file (no FILE: standard output)
        .once FILE                the next command's results to a file
        .tables                   the store's tables;  .indexes [TABLE]: its indexes
        .show                     the current settings
        .dump [TABLE]             the store (or tables matching TABLE) as SQL text: schema and INSERTs
        .shell CMD                run a command in /bin/sh (also .system)
        .print TEXT               write TEXT
        .bail on|off              stop a script at its first error (on) or go on (off, as --keep-going)
        .log stderr|stdout|FILE   where the SQL log goes
        .raw SQL                  read-only SQL straight to SQLite, for comparison
        .help [command]           this text, or the lines about one command
        .quit                     leave
        """
}
