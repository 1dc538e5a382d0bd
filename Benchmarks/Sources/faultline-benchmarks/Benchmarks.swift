import Foundation

/// The workloads, their sizes (full and `--quick`), and the report.
final class Benchmarks {
    let quick: Bool
    let only: Set<String>?
    /// Whether the process runs with `--steady-heap` (said in the report's header).
    let steadyHeap: Bool
    /// Whether every run starts from a trimmed heap (`--trimmed-heap`; said in the header).
    let trimmedHeap: Bool
    let harness: Harness
    let folder: URL
    let faultline: FaultlineBench

    // Sizes: the issue's numbers, or small ones for CI's `--quick`.
    var objects: Int { quick ? 10_000 : 100_000 }
    var faults: Int { quick ? 2_000 : 10_000 }
    var bigItems: Int { quick ? 20_000 : 1_000_000 }
    var bigOwners: Int { bigItems / 100 }
    var predicates: Int { quick ? 5_000 : 100_000 }
    var rounds: Int { quick ? 1 : 7 }

    /// The allocator line of the report's header.
    private var allocator: String {
        if steadyHeap { return "--steady-heap (glibc's trim and mapping thresholds fixed for this process; the memory workload's children keep the defaults)" }
        if trimmedHeap { return "--trimmed-heap (glibc's defaults; the heap trimmed before every run, so each starts from what a fresh process has)" }
        return "glibc's defaults"
    }

    init(quick: Bool, only: Set<String>?, steadyHeap: Bool = false, trimmedHeap: Bool = false, variantFilter: String? = nil) throws {
        self.quick = quick
        self.only = only
        self.steadyHeap = steadyHeap
        self.trimmedHeap = trimmedHeap
        harness = Harness(quick: quick, variantFilter: variantFilter, trimsHeap: trimmedHeap)
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("faultline-benchmarks-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        faultline = try FaultlineBench()
    }

    deinit { try? FileManager.default.removeItem(at: folder) }

    private func wanted(_ name: String) -> Bool { only.map { $0.contains(name) } ?? true }

    private func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    /// A store made by Faultline (Core Data's layout), filled through the C API.
    private func makeStore(_ name: String, items: Int, owners: Int, ownerOf: (Int) -> Int64?) throws -> String {
        let p = path(name)
        try faultline.createStore(at: URL(fileURLWithPath: p))
        try Raw.fill(path: p, items: items, owners: owners, ownerOf: ownerOf)
        return p
    }

    func run() throws {
        let started = Date()
        let empty = try makeStore("empty.sqlite", items: 0, owners: 0) { _ in nil }
        let pragmas = try Raw.pragmas(path: empty)

        if wanted("fetch") || wanted("update") || wanted("insert") || wanted("dictionaries") { try objectWorkloads(empty: empty) }
        if wanted("faults") { try faultWorkloads() }
        var big: String?
        if wanted("predicates") || wanted("memory") || wanted("compile") {
            let start = Date()
            var owners = OwnerAssignment(owners: bigOwners)
            big = try makeStore("big.sqlite", items: bigItems, owners: bigOwners) { _ in owners.next() }
            log(String(format: "built the %d-item store in %.1fs", bigItems, Date().timeIntervalSince(start)))
        }
        if let big, wanted("predicates") { try predicateWorkloads(big) }
        if let big, wanted("compile") { try compileWorkload(big) }
        if wanted("shell") { try ShellStart.run(harness, rounds: quick ? 3 : 15, quick: quick) }
        if let big, wanted("memory") { try MemoryWorkload.run(harness, path: big, rounds: quick ? 1 : 3, objects: bigItems) }

        let info = ProcessInfo.processInfo
        print("""
            # Faultline benchmarks\(quick ? " (--quick: small sizes, checks the harness, not speed)" : "")

            - SQLite \(RawDatabase.version); pragmas (all variants, same store files): \(pragmas)
            - \(info.activeProcessorCount) cores, \(info.physicalMemory / 1_073_741_824) GiB; \(info.operatingSystemVersionString)
            - each workload: one warm-up round, then \(rounds) rounds of its variants interleaved (A B C A B C …)
            - allocator: \(allocator)

            """)
        print(harness.table())
        print("")
        for (workload, text) in harness.notes { print("- \(workload): \(text)") }
        log(String(format: "total %.1fs", Date().timeIntervalSince(started)))
    }

    // MARK: Workloads

    private func objectWorkloads(empty: String) throws {
        let n = objects
        let store = try makeStore("objects.sqlite", items: n, owners: 0) { _ in nil }
        let coordinator = try faultline.open(store)
        let typed = try faultline.openTyped(store)
        let queue = try GRDBBench.open(store)
        let raw = try RawDatabase(path: store)
        let rows = "\(n) objects × 5 attributes (Int64, Double, String, Date, Bool)"

        if wanted("fetch") {
            try harness.run("fetch", rounds: rounds, rows: rows + ", every value read", variants: [
                Variant(name: "raw C") { try Raw.fetch(raw) },
                Variant(name: "raw C, an object per row (diagnostic)") { try Raw.fetchObjects(raw) },
                Variant(name: "GRDB records") { try GRDBBench.fetch(queue) },
                Variant(name: "GRDB by index") { try GRDBBench.fetchByIndex(queue) },
                Variant(name: "Faultline typed") { try self.faultline.fetchTyped(typed) },
                Variant(name: "Faultline by key") { try self.faultline.fetch(coordinator) },
            ])
        }
        if wanted("dictionaries") {
            try harness.run("dictionary results", rounds: rounds, rows: "the same \(n) rows × 5 values as rows of values, every value read", variants: [
                Variant(name: "raw C") { try Raw.fetchValues(raw) },
                Variant(name: "GRDB Row by index") { try GRDBBench.fetchRows(queue) },
                Variant(name: "Faultline dictionaries (execute, [String: Any])") { try self.faultline.fetchDictionaries(coordinator) },
                Variant(name: "Faultline rows (fetchRows, typed by key)") { try self.faultline.fetchRows(coordinator, byPosition: false) },
                Variant(name: "Faultline rows (fetchRows, typed by position)") { try self.faultline.fetchRows(coordinator, byPosition: true) },
            ])
        }
        if wanted("insert") {
            // Each round inserts into a fresh copy of an empty store (copying is not timed).
            var copies = 0
            func fresh() throws -> String {
                copies += 1
                let p = path("insert-\(copies).sqlite")
                try FileManager.default.copyItem(atPath: empty, toPath: p)
                return p
            }
            func discard(_ p: String) {
                for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: p + suffix) }
            }
            func variant(_ name: String, _ body: @escaping (String) throws -> Sample) -> Variant {
                Variant(name: name) {
                    let p = try fresh()
                    defer { discard(p) }
                    return try body(p)
                }
            }
            try harness.run("insert + save", rounds: rounds, rows: "\(n) new objects, one transaction", variants: [
                variant("raw C") { try Raw.insert(path: $0, count: n) },
                variant("GRDB records") { try GRDBBench.insert(path: $0, count: n) },
                variant("Faultline typed") { try self.faultline.insertTyped(path: $0, count: n) },
                variant("Faultline by key") { try self.faultline.insert(path: $0, count: n) },
            ])
        }
        if wanted("update") {
            try harness.run("update + save", rounds: rounds, rows: "\(n) objects fetched, one attribute changed on each, one transaction", variants: [
                Variant(name: "raw C") { try Raw.update(raw) },
                Variant(name: "GRDB records") { try GRDBBench.update(queue) },
                Variant(name: "Faultline typed") { try self.faultline.updateTyped(typed) },
                Variant(name: "Faultline by key") { try self.faultline.update(coordinator) },
            ])
        }
    }

    private func faultWorkloads() throws {
        let n = faults
        let store = try makeStore("faults.sqlite", items: n, owners: n) { Int64($0) }
        let coordinator = try faultline.open(store)
        let typed = try faultline.openTyped(store)
        let queue = try GRDBBench.open(store)
        let raw = try RawDatabase(path: store)
        try harness.run("faults one by one", rounds: rounds, rows: "\(n) to-one faults (item → its own owner), one SELECT … WHERE Z_PK = ? each", variants: [
            Variant(name: "raw C") { try Raw.faultsOneByOne(raw, count: n) },
            Variant(name: "GRDB records") { try GRDBBench.faultsOneByOne(queue, count: n) },
            Variant(name: "Faultline typed") { try self.faultline.faultsOneByOne(typed, count: n, owner: FaultlineBench.typedOwner, read: FaultlineBench.typedOwnerCheck) },
            Variant(name: "Faultline by key") { try self.faultline.faultsOneByOne(coordinator, count: n) },
        ])
        try harness.run("faults, fetchBatchSize 500", rounds: rounds, rows: "\(n) owners: their IDs, then rows 500 at a time", variants: [
            Variant(name: "raw C") { try Raw.faultsBatched(raw, batch: 500) },
            Variant(name: "GRDB records") { try GRDBBench.faultsBatched(queue, batch: 500) },
            Variant(name: "Faultline typed") { try self.faultline.faultsBatched(typed, batch: 500, read: FaultlineBench.typedOwnerCheck) },
            Variant(name: "Faultline by key") { try self.faultline.faultsBatched(coordinator, batch: 500) },
        ])
        try harness.run("faults, prefetching", rounds: rounds, rows: "\(n) items, then their owners in one statement", variants: [
            Variant(name: "raw C") { try Raw.faultsPrefetched(raw, count: n) },
            Variant(name: "GRDB records") { try GRDBBench.faultsPrefetched(queue, count: n) },
            Variant(name: "Faultline typed") { try self.faultline.faultsPrefetched(typed, count: n, owner: FaultlineBench.typedOwner, read: FaultlineBench.typedOwnerCheck) },
            Variant(name: "Faultline by key") { try self.faultline.faultsPrefetched(coordinator, count: n) },
        ])
    }

    private struct PredicateCase {
        var name: String
        var entity: String
        var format: String
        var argument: Any
        var rawSQL: String
        var grdbSQL: String
    }

    private func predicateWorkloads(_ store: String) throws {
        let coordinator = try faultline.open(store)
        let queue = try GRDBBench.open(store)
        let raw = try RawDatabase(path: store)
        let itemList = "t0.Z_PK, t0.Z_OPT, t0.ZQUANTITY, t0.ZSCORE, t0.ZNAME, t0.ZCREATED, t0.ZFLAG"
        let ownerList = "t0.Z_PK, t0.Z_OPT, t0.ZNAME, t0.ZRANK"
        let cases = [
            PredicateCase(
                name: "indexed ==", entity: "Item", format: "quantity == %@", argument: 4242,
                rawSQL: "SELECT \(itemList) FROM ZITEM t0 WHERE t0.ZQUANTITY = ?", grdbSQL: "SELECT * FROM ZITEM WHERE ZQUANTITY = ?"),
            PredicateCase(
                name: "BEGINSWITH[c]", entity: "Item", format: "name BEGINSWITH[c] %@", argument: "item 1234",
                rawSQL: "SELECT \(itemList) FROM ZITEM t0 WHERE t0.ZNAME LIKE ? || '%'", grdbSQL: "SELECT * FROM ZITEM WHERE ZNAME LIKE ? || '%'"),
            PredicateCase(
                name: "to-one join", entity: "Item", format: "owner.name == %@", argument: "Owner 42",
                rawSQL: "SELECT \(itemList) FROM ZITEM t0 JOIN ZOWNER t1 ON t0.ZOWNER = t1.Z_PK WHERE t1.ZNAME = ?",
                grdbSQL: "SELECT t0.* FROM ZITEM t0 JOIN ZOWNER t1 ON t0.ZOWNER = t1.Z_PK WHERE t1.ZNAME = ?"),
            PredicateCase(
                name: "ANY to-many", entity: "Owner", format: "ANY items.quantity == %@", argument: 42,
                rawSQL: "SELECT DISTINCT \(ownerList) FROM ZOWNER t0 JOIN ZITEM t1 ON t1.ZOWNER = t0.Z_PK WHERE t1.ZQUANTITY = ?",
                grdbSQL: "SELECT DISTINCT t0.* FROM ZOWNER t0 JOIN ZITEM t1 ON t1.ZOWNER = t0.Z_PK WHERE t1.ZQUANTITY = ?"),
            PredicateCase(
                name: "@count", entity: "Owner", format: "items.@count == %@", argument: 100,
                rawSQL: "SELECT \(ownerList) FROM ZOWNER t0 WHERE (SELECT COUNT(*) FROM ZITEM t1 WHERE t1.ZOWNER = t0.Z_PK) = ?",
                grdbSQL: "SELECT * FROM ZOWNER t0 WHERE (SELECT COUNT(*) FROM ZITEM t1 WHERE t1.ZOWNER = t0.Z_PK) = ?"),
        ]
        for c in cases {
            let ownerRows = c.entity == "Owner"
            let count = try RawDatabase(path: store).scalarInt("SELECT COUNT(*) FROM (\(c.rawSQL.replacingOccurrences(of: "?", with: c.argument is String ? "'\(c.argument)'" : "\(c.argument)")))")
            try harness.run("predicate: \(c.name)", rounds: rounds, rows: "`\(c.format)` (\(c.argument)) over \(bigItems) items / \(bigOwners) owners → \(count) rows", variants: [
                Variant(name: "raw C") { try Raw.query(raw, sql: c.rawSQL, argument: c.argument, ownerRows: ownerRows) },
                Variant(name: "GRDB records") { try GRDBBench.query(queue, sql: c.grdbSQL, argument: c.argument, ownerRows: ownerRows) },
                Variant(name: "Faultline") { try self.faultline.query(coordinator, entity: c.entity, format: c.format, argument: c.argument) },
            ])
        }
    }

    private func compileWorkload(_ store: String) throws {
        let coordinator = try faultline.open(store)
        let n = predicates
        try harness.run("predicate compile", rounds: rounds, rows: "\(n) predicates (5 forms) parsed and compiled to a fetch's SQL", variants: [
            Variant(name: "Faultline") { try self.faultline.compilePredicates(coordinator, count: n) }
        ])
        if let last = harness.results.last, last.workload == "predicate compile" {
            harness.add(Result(workload: "predicate compile", variant: "Faultline", samples: last.samples.map { Double(n) / $0 }, unit: .perSecond, note: "predicates/s"))
        }
    }
}
