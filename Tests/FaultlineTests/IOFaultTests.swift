import CFaultlineFaultVFS
import CFaultlineSQLite
import Faultline
import FaultlineModel
import FaultlineSQL
import FaultlineTestSupport
import Foundation
import Testing

/// A fault-injecting SQLite VFS (Tests/CFaultlineFaultVFS) registered under a name of its own,
/// so suites running in parallel never share its counters or its fault.
final class FaultyVFS {
    /// The kinds of calls it counts and can fail.
    enum Kind: String, CaseIterable, CustomStringConvertible {
        case open, delete, access, read, write, truncate, sync, fileSize, lock, unlock, checkReservedLock, shmMap, shmLock

        var cValue: faultvfs_kind {
            switch self {
            case .open: FAULTVFS_OPEN
            case .delete: FAULTVFS_DELETE
            case .access: FAULTVFS_ACCESS
            case .read: FAULTVFS_READ
            case .write: FAULTVFS_WRITE
            case .truncate: FAULTVFS_TRUNCATE
            case .sync: FAULTVFS_SYNC
            case .fileSize: FAULTVFS_FILESIZE
            case .lock: FAULTVFS_LOCK
            case .unlock: FAULTVFS_UNLOCK
            case .checkReservedLock: FAULTVFS_CHECKRESERVED
            case .shmMap: FAULTVFS_SHMMAP
            case .shmLock: FAULTVFS_SHMLOCK
            }
        }

        var description: String { rawValue }
    }

    let handle: OpaquePointer
    let name: String

    init() throws {
        name = "faultline-faulty-\(UUID().uuidString)"
        handle = try #require(faultvfs_create(name))
    }

    /// Every connection opened on it must be closed before it goes.
    deinit { faultvfs_destroy(handle) }

    func count(_ kind: Kind) -> Int { Int(faultvfs_count(handle, kind.cValue)) }
    func counts() -> [Kind: Int] { Dictionary(uniqueKeysWithValues: Kind.allCases.map { ($0, count($0)) }) }
    func resetCounts() { faultvfs_reset_counts(handle) }
    /// Fails the `nth` call of `kind` from now on (and with `sticky` every later one) with `code`.
    func arm(_ kind: Kind, nth: Int, code: Int32, sticky: Bool) {
        faultvfs_arm(handle, kind.cValue, Int64(nth), code, sticky ? 1 : 0)
    }
    func disarm() { faultvfs_disarm(handle) }
    /// The calls failed since the last arm or reset.
    var injected: Int { Int(faultvfs_injected(handle)) }
}

/// I/O faults during a save (issue 14): for every call a save makes to the file system — each
/// read, write, sync, lock, truncate, … — the save is run again with that one call failing
/// (and, for some kinds, every call after it too, as on a full disk or a dead device). Each
/// run must either succeed, leaving the after-state, or throw an error that says what
/// happened, leaving the file exactly as it was (checked through a new connection with
/// SQLite's own VFS, which also rolls back a hot journal as the next process would) and the
/// context with all its changes, so that a retry once the fault is gone saves them.
///
/// Normal runs try a sample of the call numbers of each kind; `FAULTLINE_LONG_TESTS=1` tries
/// every one.
@Suite(.serialized) struct IOFaultTests {
    /// One fault to inject.
    struct Fault: CustomStringConvertible {
        var kind: FaultyVFS.Kind
        var code: Int32
        var sticky: Bool
        var description: String { "\(kind) → \(FaultCodes.name(code))\(sticky ? " from then on" : " once")" }
    }

    /// The faults tried on each call of a kind: one-shot errors everywhere; the kinds where a
    /// persistent failure is realistic (full disk, dead device, another writer) also sticky.
    static func faults(for kind: FaultyVFS.Kind) -> [Fault] {
        switch kind {
        case .read: [Fault(kind: kind, code: FaultCodes.ioerrRead, sticky: false), Fault(kind: kind, code: FaultCodes.ioerrRead, sticky: true)]
        case .write: [Fault(kind: kind, code: FaultCodes.ioerrWrite, sticky: false), Fault(kind: kind, code: SQLITE_FULL, sticky: true)]
        case .sync: [Fault(kind: kind, code: FaultCodes.ioerrFsync, sticky: false), Fault(kind: kind, code: FaultCodes.ioerrFsync, sticky: true)]
        case .lock: [Fault(kind: kind, code: SQLITE_BUSY, sticky: false), Fault(kind: kind, code: SQLITE_BUSY, sticky: true), Fault(kind: kind, code: FaultCodes.ioerrLock, sticky: false)]
        // A WAL lock that stays busy makes SQLite retry for about 10 s before it gives up
        // (SQLITE_PROTOCOL): long runs only.
        case .shmLock: [Fault(kind: kind, code: SQLITE_BUSY, sticky: false)] + (long ? [Fault(kind: kind, code: SQLITE_BUSY, sticky: true)] : [])
        case .open: [Fault(kind: kind, code: SQLITE_CANTOPEN, sticky: false)]
        case .delete: [Fault(kind: kind, code: FaultCodes.ioerrDelete, sticky: false)]
        case .access: [Fault(kind: kind, code: FaultCodes.ioerrAccess, sticky: false)]
        case .truncate: [Fault(kind: kind, code: FaultCodes.ioerrTruncate, sticky: false)]
        case .fileSize: [Fault(kind: kind, code: FaultCodes.ioerrFstat, sticky: false)]
        case .unlock: [Fault(kind: kind, code: FaultCodes.ioerrUnlock, sticky: false)]
        case .checkReservedLock: [Fault(kind: kind, code: FaultCodes.ioerrCheckReservedLock, sticky: false)]
        case .shmMap: [Fault(kind: kind, code: FaultCodes.ioerrShmMap, sticky: false)]
        }
    }

    static var long: Bool { ProcessInfo.processInfo.environment["FAULTLINE_LONG_TESTS"] == "1" }

    /// The call numbers tried for a kind a clean save calls `count` times: all of them in long
    /// runs or when there are few; otherwise the first 8, the last 8 (where COMMIT and the
    /// journal's end are) and every few between, about 32 in all.
    static func callNumbers(_ count: Int) -> [Int] {
        guard count > 0 else { return [] }
        if long || count <= 32 { return Array(1...count) }
        let step = max(1, (count - 16) / 16)
        return Array(Set(Array(1...8) + Array((count - 7)...count) + stride(from: 9, to: count - 7, by: step))).sorted()
    }

    // MARK: Scenarios

    /// A store in its before-state, the model, and a change to make and save.
    struct Scenario {
        var name: String
        var model: ManagedObjectModel
        /// Writes the before-state store at the URL (with SQLite's own VFS).
        var create: (URL) throws -> Void
        var options = SQLiteStore.Options(readOnly: false)
        /// Makes the change in a fresh context on the before-state.
        var change: (ManagedObjectContext) throws -> Void
    }

    /// The Recipes sample turned into a rollback-journal store: inserts with a value that spills into
    /// overflow pages, updates, a delete that cascades to four ingredients, a delete that
    /// nullifies recipes' to-one, a moved recipe.
    static func recipes() throws -> Scenario {
        let folder = TestSupport.packageRoot.appendingPathComponent("Samples/Recipes")
        let model = try ManagedObjectModel(contentsOf: folder.appendingPathComponent("Recipes.xcdatamodeld"))
        return Scenario(
            name: "Recipes (rollback journal)", model: model,
            create: { url in
                try FileManager.default.copyItem(at: folder.appendingPathComponent("Recipes.sqlite"), to: url)
                // The sample is a WAL store, like every store Core Data makes by default; stores
                // opened with NSSQLitePragmasOption journal_mode DELETE use a rollback journal.
                let db = try Connection(path: url.path, mode: .readWrite)
                try db.executeScript("PRAGMA journal_mode = DELETE")
            },
            change: { context in
                func all(_ entity: String) throws -> [ManagedObject] {
                    try context.fetch(FetchRequest(entityName: entity)).sorted { $0.objectID.primaryKey < $1.objectID.primaryKey }
                }
                let recipes = try all("Recipe"), types = try all("RecipeType"), ingredients = try all("Ingredient")
                let stew = try context.insertObject(entityName: "Recipe")
                try stew.setValue("Fault-Tolerant Stew", forKey: "name")
                try stew.setValue(String(repeating: "Simmer until every write has been synced. ", count: 300), forKey: "instructions")
                try stew.setValue(types[0], forKey: "type")
                for index in 0..<4 {
                    let ingredient = try context.insertObject(entityName: "Ingredient")
                    try ingredient.setValue("Ingredient \(index)", forKey: "name")
                    try ingredient.setValue(Int16(index), forKey: "displayOrder")
                    try stew.addObject(ingredient, toRelationship: "ingredients")
                }
                for recipe in recipes[1...3] { try recipe.setValue("Revised", forKey: "overview") }
                for ingredient in ingredients[0..<6] { try ingredient.setValue("a pinch", forKey: "amount") }
                try recipes[6].setValue(types[2], forKey: "type")
                context.delete(recipes[4])
                context.delete(types[11])
            })
    }

    static func shelfModel() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(name: "Box", attributes: [AttributeDescription(name: "label", type: .string)], relationships: [
                RelationshipDescription(name: "items", destination: "Item", inverse: "box", toMany: true, ordered: true, deleteRule: .cascade)
            ]),
            EntityDescription(name: "Item", attributes: [
                AttributeDescription(name: "name", type: .string), AttributeDescription(name: "weight", type: .double),
            ], relationships: [
                RelationshipDescription(name: "box", destination: "Box", inverse: "items"),
                RelationshipDescription(name: "tags", destination: "Tag", inverse: "items", toMany: true),
            ]),
            EntityDescription(name: "Tag", attributes: [AttributeDescription(name: "name", type: .string)], relationships: [
                RelationshipDescription(name: "items", destination: "Item", inverse: "tags", toMany: true)
            ]),
        ])
    }

    /// A WAL store made by Faultline with persistent history: an ordered to-many with a
    /// cascade, a many-to-many, and history rows for every change.
    static func shelf() throws -> Scenario {
        let model = try shelfModel()
        func all(_ context: ManagedObjectContext, _ entity: String) throws -> [ManagedObject] {
            try context.fetch(FetchRequest(entityName: entity)).sorted { $0.objectID.primaryKey < $1.objectID.primaryKey }
        }
        return Scenario(
            name: "Shelf (WAL, history, many-to-many)", model: model,
            create: { url in
                let store = try SQLiteStore(url: url, model: model, options: .init(readOnly: false, createIfMissing: true, persistentHistoryTracking: true))
                let context = ManagedObjectContext(coordinator: PersistentStoreCoordinator(store: store))
                var tags: [ManagedObject] = []
                for index in 0..<6 {
                    let tag = try context.insertObject(entityName: "Tag")
                    try tag.setValue("tag \(index)", forKey: "name")
                    tags.append(tag)
                }
                for b in 0..<4 {
                    let box = try context.insertObject(entityName: "Box")
                    try box.setValue("box \(b)", forKey: "label")
                    for i in 0..<8 {
                        let item = try context.insertObject(entityName: "Item")
                        try item.setValue("item \(b).\(i)", forKey: "name")
                        try item.setValue(Double(i) * 0.5, forKey: "weight")
                        try box.addObject(item, toRelationship: "items")
                        try item.addObject(tags[(b + i) % 6], toRelationship: "tags")
                        try item.addObject(tags[(b * 3 + i) % 6], toRelationship: "tags")
                    }
                }
                try context.save()
            },
            options: .init(readOnly: false, persistentHistoryTracking: true),
            change: { context in
                let boxes = try all(context, "Box"), items = try all(context, "Item"), tags = try all(context, "Tag")
                let crate = try context.insertObject(entityName: "Box")
                try crate.setValue("crate", forKey: "label")
                for i in 0..<5 {
                    let item = try context.insertObject(entityName: "Item")
                    try item.setValue("new \(i)", forKey: "name")
                    try crate.addObject(item, toRelationship: "items")
                    try item.addObject(tags[i % 6], toRelationship: "tags")
                }
                for item in items[8..<14] { try item.setValue("renamed \(item.objectID.primaryKey)", forKey: "name") }
                try items[9].addObject(tags[5], toRelationship: "tags")
                if let first = (items[10].value(forKey: "tags") as? [ManagedObject])?.first {
                    try items[10].removeObject(first, fromRelationship: "tags")
                }
                try boxes[1].insertObject(items[15], at: 0, inRelationship: "items")  // reorder
                context.delete(boxes[2])  // cascades to its 8 items and their join rows
                context.delete(tags[4])
            })
    }

    // MARK: Running

    /// A store in its before-state on disk, its canonical dump, and the after-state's.
    final class Bench {
        let scenario: Scenario
        let vfs: FaultyVFS
        let folder: URL
        let pristine: URL
        let url: URL
        let beforeState: [String]
        let afterState: [String]
        /// The calls of each kind a clean save makes.
        let cleanCounts: [FaultyVFS.Kind: Int]

        init(_ scenario: Scenario) throws {
            self.scenario = scenario
            vfs = try FaultyVFS()
            folder = try TestSupport.temporaryDirectory("faultline-iofault")
            pristine = folder.appendingPathComponent("pristine.sqlite")
            url = folder.appendingPathComponent("store.sqlite")
            try scenario.create(pristine)
            #expect(!FileManager.default.fileExists(atPath: pristine.path + "-wal"))
            beforeState = try Self.dump(pristine)
            // A clean save through the VFS: its calls, and the after-state.
            try Self.reset(url, from: pristine)
            let vfs = self.vfs, url = self.url
            let counts: [FaultyVFS.Kind: Int] = try {
                let context = try Self.open(url, scenario, vfs: vfs)
                try scenario.change(context)
                vfs.resetCounts()
                try context.save()
                return vfs.counts()
            }()
            cleanCounts = counts
            let after = try Self.dump(url)
            afterState = after
            #expect(after != beforeState)
        }

        static func reset(_ url: URL, from pristine: URL) throws {
            let fm = FileManager.default
            for suffix in ["", "-wal", "-shm", "-journal"] where fm.fileExists(atPath: url.path + suffix) {
                try fm.removeItem(atPath: url.path + suffix)
            }
            try fm.copyItem(at: pristine, to: url)
        }

        static func open(_ url: URL, _ scenario: Scenario, vfs: FaultyVFS) throws -> ManagedObjectContext {
            var options = scenario.options
            options.vfsName = vfs.name
            let store = try SQLiteStore(url: url, model: scenario.model, options: options)
            return ManagedObjectContext(coordinator: PersistentStoreCoordinator(store: store))
        }

        /// Every table's rows in key order, through a new read-write connection with SQLite's
        /// own VFS (which rolls back a hot journal left behind, as the next process would);
        /// history timestamps masked; and `PRAGMA integrity_check`.
        static func dump(_ url: URL) throws -> [String] {
            let db = try Connection(path: url.path, mode: .readWrite)
            db.setBusyTimeout(milliseconds: 200)
            var lines = ["integrity: \(try db.scalar("PRAGMA integrity_check").map { "\($0)" } ?? "none")"]
            for table in try db.query("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name") {
                guard case .text(let name) = table[0] else { continue }
                let columns = try db.query("SELECT name FROM pragma_table_info(?)", [.text(name)]).compactMap { row -> String? in
                    if case .text(let column) = row[0] { column } else { nil }
                }
                let order = columns.contains("Z_PK") ? "Z_PK" : columns.map { "\"\($0)\"" }.joined(separator: ", ")
                for row in try db.query("SELECT * FROM \"\(name)\" ORDER BY \(order)") {
                    let values = zip(columns, row.values).map { column, value in
                        name == "ATRANSACTION" && column == "ZTIMESTAMP" ? "#" : "\(value)"
                    }
                    lines.append("\(name): \(values.joined(separator: " | "))")
                }
            }
            return lines
        }

        /// What one faulty save did.
        enum Outcome: Hashable { case saved, failed(String) }

        /// Runs the change and a save with `fault` on call `nth`; checks every promise; returns
        /// what happened.
        func trial(_ fault: Fault, nth: Int) throws -> Outcome {
            try Self.reset(url, from: pristine)
            let context = try Self.open(url, scenario, vfs: vfs)
            try scenario.change(context)
            // The delete rules run when the save starts, and their effects stay (as in Core Data).
            try context.processPendingChanges()
            let pending = (context.insertedObjects.count, context.updatedObjects.count, context.deletedObjects.count)
            let pendingIDs = Set(context.insertedObjects.map(\.objectID))
            if fault.sticky && (fault.code & 0xFF) == SQLITE_BUSY {
                context.coordinator.store.connection.setBusyTimeout(milliseconds: 20)
            }
            vfs.arm(fault.kind, nth: nth, code: fault.code, sticky: fault.sticky)
            let outcome: Outcome
            do {
                try context.save()
                outcome = .saved
            } catch {
                outcome = .failed(String(describing: error))
            }
            vfs.disarm()
            let injected = vfs.injected
            let where_ = "\(scenario.name): \(fault) on call \(nth)"
            switch outcome {
            case .saved:
                #expect(!context.hasChanges, "\(where_): saved, yet changes are pending")
                #expect(try Self.dump(url) == afterState, "\(where_): saved, yet the store is not the after-state")
            case .failed(let message):
                #expect(injected > 0, "\(where_): failed with no fault injected: \(message)")
                #expect(FaultCodes.isClear(message, path: url.path), "\(where_): unclear error: \(message)")
                let state = try Self.dump(url)
                #expect(state == beforeState, "\(where_): failed (\(message)), yet the store is not the before-state: \(Self.difference(state, beforeState))")
                #expect(context.hasChanges, "\(where_): failed, and the context lost its changes")
                #expect((context.insertedObjects.count, context.updatedObjects.count, context.deletedObjects.count) == pending, "\(where_): failed, and the pending changes differ")
                #expect(Set(context.insertedObjects.map(\.objectID)) == pendingIDs, "\(where_): failed, yet inserted objects changed their IDs")
                do {
                    try context.save()
                    #expect(!context.hasChanges, "\(where_): the retry left changes pending")
                    let after = try Self.dump(url)
                    #expect(after == afterState, "\(where_): the retry did not give the after-state: \(Self.difference(after, afterState))")
                } catch {
                    Issue.record("\(where_): the retry failed: \(error) (first failure: \(message))")
                }
            }
            return outcome
        }

        /// A sticky fault, after which the program gives up: the store is closed while the
        /// fault lasts (so its rollback may fail too), then read without it, as the next
        /// process would: the before-state, or the after-state when the save succeeded.
        func abandonedTrial(_ fault: Fault, nth: Int) throws {
            try Self.reset(url, from: pristine)
            var outcome = "saved"
            do {
                let context = try Self.open(url, scenario, vfs: vfs)
                try scenario.change(context)
                if (fault.code & 0xFF) == SQLITE_BUSY { context.coordinator.store.connection.setBusyTimeout(milliseconds: 20) }
                vfs.arm(fault.kind, nth: nth, code: fault.code, sticky: fault.sticky)
                do { try context.save() } catch { outcome = "\(error)" }
            }  // the context, its store and connection are gone here; the fault is still armed
            vfs.disarm()
            let state = try Self.dump(url)
            #expect(state == (outcome == "saved" ? afterState : beforeState),
                    "\(scenario.name): \(fault) on call \(nth), store closed with the fault on (\(outcome)): not the \(outcome == "saved" ? "after" : "before")-state: \(Self.difference(state, outcome == "saved" ? afterState : beforeState))")
        }

        static func difference(_ a: [String], _ b: [String]) -> String {
            let extra = a.filter { !b.contains($0) }.prefix(3), missing = b.filter { !a.contains($0) }.prefix(3)
            return "extra \(Array(extra)), missing \(Array(missing))"
        }

        /// Every fault of every kind on the sampled call numbers; returns, per fault, how many
        /// trials saved and how many failed, and the distinct messages.
        func sweep() throws -> [String] {
            var report: [String] = []
            for kind in FaultyVFS.Kind.allCases {
                let count = cleanCounts[kind] ?? 0
                for fault in IOFaultTests.faults(for: kind) {
                    var saved = 0, failed = 0
                    let start = Date()
                    var messages: Set<String> = []
                    // A WAL lock that stays busy costs SQLite's ~10 s of retries: three call numbers.
                    let numbers = fault.kind == .shmLock && fault.sticky && count > 0 ? Array(Set([1, (count + 1) / 2, count])).sorted() : IOFaultTests.callNumbers(count)
                    for nth in numbers where nth > 0 {
                        switch try trial(fault, nth: nth) {
                        case .saved: saved += 1
                        case .failed(let message): failed += 1; messages.insert(message.replacingOccurrences(of: url.path, with: "<store>"))
                        }
                        if fault.sticky { try abandonedTrial(fault, nth: nth) }
                    }
                    report.append("\(fault) [\(count) calls, \(String(format: "%.2f", Date().timeIntervalSince(start))) s]: \(saved) saved, \(failed) failed\(messages.isEmpty ? "" : ": " + messages.sorted().joined(separator: " / "))")
                }
            }
            return report
        }
    }

    static func run(_ scenario: Scenario) throws {
        let start = Date()
        let report: [String]
        do {
            let bench = try Bench(scenario)
            print("[IOFaultTests] \(scenario.name): a clean save makes \(FaultyVFS.Kind.allCases.map { "\($0) \(bench.cleanCounts[$0] ?? 0)" }.joined(separator: ", "))")
            report = try bench.sweep()
        }
        for line in report { print("[IOFaultTests]   \(line)") }
        print("[IOFaultTests] \(scenario.name): \(String(format: "%.1f", Date().timeIntervalSince(start))) s")
    }

    @Test func recipesSaveSurvivesEveryFault() throws {
        try Self.run(try Self.recipes())
    }

    @Test func shelfSaveSurvivesEveryFault() throws {
        try Self.run(try Self.shelf())
    }

    @Test func theVFSCountsAndFailsCalls() throws {
        let vfs = try FaultyVFS()
        let folder = try TestSupport.temporaryDirectory("faultline-iofault")
        let path = folder.appendingPathComponent("t.sqlite").path
        do {
            let db = try Connection(path: path, mode: .readWriteCreate, vfs: vfs.name)
            try db.executeScript("CREATE TABLE t(x); INSERT INTO t VALUES (1);")
            #expect(vfs.count(.write) > 0 && vfs.count(.sync) > 0 && vfs.count(.lock) > 0)
            vfs.arm(.write, nth: 1, code: SQLITE_FULL, sticky: true)
            #expect(throws: SQLiteError.self) { try db.execute("INSERT INTO t VALUES (2)") }
            #expect(vfs.injected >= 1)
            vfs.disarm()
            try db.execute("INSERT INTO t VALUES (3)")
            #expect(try db.query("SELECT x FROM t ORDER BY x").map(\.values) == [[1], [3]])
        }
        #expect(throws: SQLiteError.self) { try Connection(path: path, mode: .readWrite, vfs: "no-such-vfs") }
    }
}

/// SQLite result codes the faults use, and what makes an error message clear.
enum FaultCodes {
    static let ioerrRead = SQLITE_IOERR | (1 << 8)
    static let ioerrWrite = SQLITE_IOERR | (3 << 8)
    static let ioerrFsync = SQLITE_IOERR | (4 << 8)
    static let ioerrTruncate = SQLITE_IOERR | (6 << 8)
    static let ioerrFstat = SQLITE_IOERR | (7 << 8)
    static let ioerrUnlock = SQLITE_IOERR | (8 << 8)
    static let ioerrDelete = SQLITE_IOERR | (10 << 8)
    static let ioerrAccess = SQLITE_IOERR | (13 << 8)
    static let ioerrCheckReservedLock = SQLITE_IOERR | (14 << 8)
    static let ioerrLock = SQLITE_IOERR | (15 << 8)
    static let ioerrShmMap = SQLITE_IOERR | (21 << 8)

    static func name(_ code: Int32) -> String {
        switch code {
        case SQLITE_BUSY: "SQLITE_BUSY"
        case SQLITE_FULL: "SQLITE_FULL"
        case SQLITE_CANTOPEN: "SQLITE_CANTOPEN"
        case ioerrRead: "SQLITE_IOERR_READ"
        case ioerrWrite: "SQLITE_IOERR_WRITE"
        case ioerrFsync: "SQLITE_IOERR_FSYNC"
        case ioerrTruncate: "SQLITE_IOERR_TRUNCATE"
        case ioerrFstat: "SQLITE_IOERR_FSTAT"
        case ioerrUnlock: "SQLITE_IOERR_UNLOCK"
        case ioerrDelete: "SQLITE_IOERR_DELETE"
        case ioerrAccess: "SQLITE_IOERR_ACCESS"
        case ioerrCheckReservedLock: "SQLITE_IOERR_CHECKRESERVEDLOCK"
        case ioerrLock: "SQLITE_IOERR_LOCK"
        case ioerrShmMap: "SQLITE_IOERR_SHMMAP"
        default: "\(code)"
        }
    }

    /// A message is clear when it names the store and says in words what went wrong: for a
    /// file error, which operation failed (SQLite's own text is only "disk I/O error").
    static func isClear(_ message: String, path: String) -> Bool {
        let phrases = [
            #"\(SQLITE_IOERR_[A-Z_]+\): disk I/O error: [a-z]"#,
            #"\(SQLITE_FULL\): database or disk is full: the disk is full"#,
            #"\(SQLITE_CANTOPEN\): unable to open database file: a file could not be opened"#,
            #"SQLite error 5: database is locked"#,
            #"\(SQLITE_PROTOCOL\): locking protocol: the WAL index locks stayed busy"#,
        ]
        return message.contains(path) && phrases.contains { message.range(of: $0, options: .regularExpression) != nil }
    }
}
