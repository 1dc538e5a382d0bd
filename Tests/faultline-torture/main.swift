// faultline-torture: the child program of the crash-consistency and concurrent-writer tests
// (Tests/FaultlineTortureTests). Not a user tool. Commands:
//
//   save-large STORE SEED
//       opens STORE for writing (persistent history on), makes TortureModel's large change,
//       prints "saving", saves, prints "saved SECONDS EVENTS" (EVENTS: SQLite statement starts
//       and ends during the save). With FAULTLINE_TORTURE_KILL_AT=N it SIGKILLs itself at the
//       Nth such event: a crash at an exact statement boundary; with
//       FAULTLINE_TORTURE_KILL_AFTER=SECONDS, that long after printing "saving": a crash at a
//       chosen time (see armKillTimer). FAULTLINE_TORTURE_UNSAFE=1
//       turns SQLite's journal off first (the negative control: kills then tear the store).
//   migrate STORE
//       migrates STORE (made with TortureModel.model()) to TortureModel.migratedModel() with
//       LightweightMigration, prints "migrating" first and "migrated EVENTS" after (EVENTS:
//       statements logged, BEGIN and COMMIT included). With FAULTLINE_TORTURE_KILL_AT=N it
//       SIGKILLs itself just before the Nth statement runs; FAULTLINE_TORTURE_KILL_AFTER as
//       for save-large, after "migrating".
//   stress STORE WORKER WORKERS SAVES POLICY BARRIER_DIR
//       SAVES times: fresh read, add this worker's weight to the shared counter, 1 to its own,
//       move a member to another group, toggle a tag, save; a MergeConflictError is counted
//       and the step retried from a fresh read. The first save waits until every worker has
//       read (files in BARRIER_DIR), so conflicts are certain. Prints "result key=value …".
//   insert-notes STORE WORKER SAVES
//       SAVES times: insert a note into a random existing group (the group changes only in a
//       to-many), save; retried on conflict.
//   delete-groups STORE COUNT
//       deletes groups group1 … groupCOUNT one at a time (cascading to members and notes).
//   insert-note-after-delete STORE DIR / delete-group-when-read STORE DIR
//       one exact interleaving: the first reads group0, the second deletes it and saves, then
//       the first inserts a note into it and saves.
//   add-same-tag STORE DIR first|second POLICY
//       both read member0's tags; the first adds tag11 and saves, then the second does the same.
import CFaultlineSQLite
import Faultline
import FaultlineTortureKit
import Foundation

/// Writes a line to standard output at once (no buffer: the parent waits for "saving").
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// SQLite trace events seen since the hook was installed, and the one to die at.
nonisolated(unsafe) var traceEvents = 0
nonisolated(unsafe) var killAt = 0

/// Counts statement starts and ends on the store's connection (all of them, including the
/// ones Faultline runs untraced), and raises SIGKILL at event `killAt` when it is set.
func installKillHook(_ store: SQLiteStore) {
    killAt = Int(ProcessInfo.processInfo.environment["FAULTLINE_TORTURE_KILL_AT"] ?? "") ?? 0
    traceEvents = 0
    sqlite3_trace_v2(store.connection.handle, UInt32(SQLITE_TRACE_STMT | SQLITE_TRACE_PROFILE), { _, _, _, _ in
        traceEvents += 1
        if traceEvents == killAt { raise(SIGKILL) }
        return 0
    }, nil)
}

/// With `FAULTLINE_TORTURE_KILL_AFTER=SECONDS`, SIGKILLs this process that long from now, from
/// a thread of its own: a crash at a time the test chose. The timer is here rather than in
/// the test because the test's clock runs in Swift's cooperative pool, where long synchronous
/// tests can hold every thread for seconds, and a kill meant for 5 ms into the save would land
/// after it (Documentation/Reliability.md, "Child processes in the tests").
func armKillTimer() {
    guard let seconds = Double(ProcessInfo.processInfo.environment["FAULTLINE_TORTURE_KILL_AFTER"] ?? "") else { return }
    Thread.detachNewThread {
        usleep(UInt32(seconds * 1_000_000))
        kill(getpid(), SIGKILL)
    }
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("faultline-torture: \(message)\n".utf8))
    exit(2)
}

func policy(_ name: String) -> MergePolicy {
    switch name {
    case "error": return .error
    case "rollback": return .rollback
    case "overwrite": return .overwrite
    case "objectTrump": return .mergeByPropertyObjectTrump
    case "storeTrump": return .mergeByPropertyStoreTrump
    default: fail("unknown merge policy \(name)")
    }
}

/// Creates `dir/name` and waits until `count` files starting with `prefix` are in `dir`.
func barrier(_ dir: String, mark name: String?, waitFor prefix: String, count: Int) {
    if let name { _ = FileManager.default.createFile(atPath: dir + "/" + name, contents: nil) }
    let deadline = Date().addingTimeInterval(60)
    while Date() < deadline {
        let present = ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).filter { $0.hasPrefix(prefix) }
        if present.count >= count { return }
        usleep(2000)
    }
    fail("barrier \(prefix) in \(dir): timed out")
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard let command = arguments.first, arguments.count >= 2 else { fail("usage: see Tests/faultline-torture/main.swift") }
let storeURL = URL(fileURLWithPath: arguments[1])

do {
    switch command {
    case "seed":
        guard arguments.count == 3, let workers = Int(arguments[2]) else { fail("seed STORE WORKERS") }
        try TortureModel.seed(storeURL, workers: workers)
        say("seeded")

    case "save-large":
        guard arguments.count == 3, let seed = UInt64(arguments[2]) else { fail("save-large STORE SEED") }
        let context = try TortureModel.open(storeURL)
        try TortureModel.makeLargeChange(context, seed: seed)
        if ProcessInfo.processInfo.environment["FAULTLINE_TORTURE_UNSAFE"] == "1" {
            // The negative control: no journal and a one-page cache, so pages reach the file
            // mid-transaction and a kill leaves a torn store (the test must see it).
            try context.coordinator.store.connection.executeScript("PRAGMA journal_mode = OFF; PRAGMA cache_size = 1;")
        }
        installKillHook(context.coordinator.store)
        say("saving")
        armKillTimer()
        let start = DispatchTime.now().uptimeNanoseconds
        try context.save()
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        say("saved \(seconds) \(traceEvents)")

    case "migrate":
        let killAt = Int(ProcessInfo.processInfo.environment["FAULTLINE_TORTURE_KILL_AT"] ?? "") ?? 0
        var statements = 0
        let log = SQLLog(level: 1) { line in
            guard line.hasPrefix("CoreData: sql: ") else { return }
            statements += 1
            if statements == killAt { raise(SIGKILL) }
        }
        let migration = try LightweightMigration(storeURL: storeURL, sourceModel: TortureModel.model(), destinationModel: TortureModel.migratedModel())
        say("migrating")
        armKillTimer()
        try migration.run(log: log)
        say("migrated \(statements)")

    case "stress":
        guard arguments.count == 7, let worker = Int(arguments[2]), let workers = Int(arguments[3]), let saves = Int(arguments[4]),
            (1...6).contains(workers)
        else { fail("stress STORE WORKER WORKERS SAVES POLICY BARRIER_DIR") }
        let mergePolicy = policy(arguments[5])
        let barrierDir = arguments[6]
        // A weight per worker: the shared counter's final value says how many of each
        // worker's increments it holds (workers ≤ 6, saves < 1000).
        var weight: Int64 = 1
        for _ in 0..<worker { weight *= 1000 }
        let context = try TortureModel.open(storeURL)
        context.mergePolicy = mergePolicy
        context.transactionAuthor = "worker\(worker)"
        var begins = 0
        context.coordinator.store.connection.addTraceObserver { event in
            if case .statement(let sql, _) = event, sql.hasPrefix("BEGIN EXCLUSIVE") { begins += 1 }
        }
        var rng = SplitMix64(seed: UInt64(worker) &+ 0xC0FFEE)
        var committed = 0, dropped = 0, resolved = 0, conflictErrors = 0, otherErrors = 0
        var lastShared: Int64 = -1
        var errorText: [String] = []
        for i in 0..<saves {
            while true {
                context.reset()
                guard let shared = try TortureModel.all(context, "Counter", where: "name == 'shared'").first,
                    let own = try TortureModel.all(context, "Counter", where: "name == 'worker\(worker)'").first
                else { fail("no counters: the store is not seeded for \(workers) workers") }
                let base = shared.value(forKey: "value") as? Int64 ?? 0
                try shared.setValue(base + weight, forKey: "value")
                try own.setValue((own.value(forKey: "value") as? Int64 ?? 0) + 1, forKey: "value")
                let groups = try TortureModel.all(context, "Group")
                let members = try TortureModel.all(context, "Member")
                let tags = try TortureModel.all(context, "Tag")
                if !members.isEmpty, groups.count > 1 {
                    let member = members[rng.below(members.count)]
                    let current = (member.value(forKey: "group") as? ManagedObject)?.objectID
                    let others = groups.filter { $0.objectID != current }
                    try member.setValue(others[rng.below(others.count)], forKey: "group")
                    let other = members[rng.below(members.count)]
                    let tag = tags[rng.below(tags.count)]
                    if ((other.value(forKey: "tags") as? [ManagedObject]) ?? []).contains(tag) {
                        try other.removeObject(tag, fromRelationship: "tags")
                    } else {
                        try other.insertObject(tag, at: 0, inRelationship: "tags")
                    }
                }
                if i == 0 { barrier(barrierDir, mark: "read\(worker)", waitFor: "read", count: workers) }
                let before = begins
                do {
                    try context.save()
                } catch let error as MergeConflictError {
                    conflictErrors += 1
                    if conflictErrors <= 3 { errorText.append("\(error.conflicts.count) conflicts") }
                    continue
                } catch {
                    // Anything else (busy, a constraint) is a finding: counted, the step retried.
                    otherErrors += 1
                    if otherErrors <= 3 { errorText.append("\(error)".replacingOccurrences(of: "\n", with: " ")) }
                    if otherErrors > 50 { fail("too many errors: \(errorText)") }
                    continue
                }
                if begins - before > 1 { resolved += 1 }
                // Weights make a coincidence impossible: the value is ours only if ours was written.
                if shared.value(forKey: "value") as? Int64 == base + weight {
                    committed += 1
                    lastShared = base + weight
                } else {
                    dropped += 1
                }
                break
            }
        }
        say("result worker=\(worker) saves=\(saves) committed=\(committed) dropped=\(dropped) resolved=\(resolved) conflictErrors=\(conflictErrors) otherErrors=\(otherErrors) lastShared=\(lastShared)")
        for text in errorText { say("error \(text)") }

    case "insert-notes":
        guard arguments.count == 4, let worker = Int(arguments[2]), let saves = Int(arguments[3]) else { fail("insert-notes STORE WORKER SAVES") }
        let context = try TortureModel.open(storeURL)
        var rng = SplitMix64(seed: UInt64(worker) &+ 0xBEEF)
        var conflicts = 0, inserted = 0
        for i in 0..<saves {
            while true {
                context.reset()
                let groups = try TortureModel.all(context, "Group")
                guard !groups.isEmpty else { break }
                let note = try context.insertObject(entityName: "Note")
                try note.setValue("worker\(worker) note \(i)", forKey: "text")
                try note.setValue(groups[rng.below(groups.count)], forKey: "group")
                do {
                    try context.save()
                    inserted += 1
                    break
                } catch is MergeConflictError {
                    conflicts += 1
                }
            }
        }
        say("result worker=\(worker) inserted=\(inserted) conflicts=\(conflicts)")

    case "delete-groups":
        guard arguments.count == 3, let count = Int(arguments[2]) else { fail("delete-groups STORE COUNT") }
        let context = try TortureModel.open(storeURL)
        var conflicts = 0, deleted = 0
        for g in 1...count {
            usleep(15_000)
            while true {
                context.reset()
                guard let group = try TortureModel.all(context, "Group", where: "name == 'group\(g)'").first else { break }
                context.delete(group)
                do {
                    try context.save()
                    deleted += 1
                    break
                } catch is MergeConflictError {
                    conflicts += 1
                }
            }
        }
        say("result deleted=\(deleted) conflicts=\(conflicts)")

    case "insert-note-after-delete":
        guard arguments.count == 3 else { fail("insert-note-after-delete STORE DIR") }
        let context = try TortureModel.open(storeURL)
        guard let group = try TortureModel.all(context, "Group", where: "name == 'group0'").first else { fail("no group0") }
        barrier(arguments[2], mark: "read", waitFor: "deleted", count: 1)
        let note = try context.insertObject(entityName: "Note")
        try note.setValue("late note", forKey: "text")
        try note.setValue(group, forKey: "group")
        do {
            try context.save()
            say("result saved")
        } catch let error as MergeConflictError {
            say("result conflict \(error.conflicts.count)")
        }

    case "delete-group-when-read":
        guard arguments.count == 3 else { fail("delete-group-when-read STORE DIR") }
        let context = try TortureModel.open(storeURL)
        barrier(arguments[2], mark: nil, waitFor: "read", count: 1)
        guard let group = try TortureModel.all(context, "Group", where: "name == 'group0'").first else { fail("no group0") }
        context.delete(group)
        try context.save()
        _ = FileManager.default.createFile(atPath: arguments[2] + "/deleted", contents: nil)
        say("result deleted")

    case "add-same-tag":
        guard arguments.count == 5 else { fail("add-same-tag STORE DIR first|second POLICY") }
        let (dir, first) = (arguments[2], arguments[3] == "first")
        let context = try TortureModel.open(storeURL)
        context.mergePolicy = policy(arguments[4])
        guard let member = try TortureModel.all(context, "Member", where: "name == 'member0'").first,
            let tag = try TortureModel.all(context, "Tag", where: "name == 'tag11'").first
        else { fail("no member0 or tag11") }
        _ = member.value(forKey: "tags")
        barrier(dir, mark: first ? "read-first" : "read-second", waitFor: "read-", count: 2)
        if !first { barrier(dir, mark: nil, waitFor: "saved", count: 1) }
        try member.insertObject(tag, at: 0, inRelationship: "tags")
        do {
            try context.save()
            say("result saved")
        } catch let error as MergeConflictError {
            say("result conflict \(error.conflicts.count)")
        }
        if first { _ = FileManager.default.createFile(atPath: dir + "/saved", contents: nil) }

    default:
        fail("unknown command \(command)")
    }
} catch {
    fail("\(command): \(error)")
}
