import Foundation

/// Shell start: the whole `faultline STORE --model MODEL -c '.quit'` process, release build,
/// against `sqlite3 STORE .quit` as the raw C baseline.
enum ShellStart {
    /// The repository root (the Benchmarks package's parent).
    static var root: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
    }

    /// The release `faultline` binary: beside this executable (built with `swift build -c
    /// release --package-path Benchmarks --product faultline`), else the root package's; when
    /// neither exists, the root package's is built now (not timed), unless `build` is false.
    static func binary(build: Bool) throws -> String? {
        let sibling = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent("faultline").path
        let path = root.appendingPathComponent(".build/release/faultline").path
        for candidate in [sibling, path] where FileManager.default.isExecutableFile(atPath: candidate) {
            return candidate
        }
        guard build else { return nil }
        log("building the release faultline binary (swift build -c release --product faultline)…")
        let status = try runProcess("/usr/bin/env", ["swift", "build", "-c", "release", "--product", "faultline", "--package-path", root.path], quiet: false)
        guard status == 0 else { throw BenchmarkError("swift build of faultline failed (\(status))") }
        return path
    }

    @discardableResult
    static func runProcess(_ executable: String, _ arguments: [String], quiet: Bool = true) throws -> Int32 {
        try spawnAndWait(executable, arguments, quiet: quiet).status
    }

    static func timed(_ executable: String, _ arguments: [String]) throws -> Sample {
        try time {
            let status = try runProcess(executable, arguments)
            guard status == 0 else { throw BenchmarkError("\(executable) \(arguments.joined(separator: " ")) exited with \(status)") }
            return 0
        }
    }

    static func run(_ harness: Harness, rounds: Int, quick: Bool) throws {
        guard let faultline = try binary(build: !quick) else {
            log("shell start: skipped, no release faultline binary (--quick does not build one)")
            harness.note("shell start", "skipped: no release `faultline` binary; build one with `swift build -c release --package-path Benchmarks --product faultline`")
            return
        }
        let sample = root.appendingPathComponent("Samples/Inventory")
        // A private copy, so that nothing the shell or sqlite3 does touches the sample.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("faultline-shell-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = folder.appendingPathComponent("Inventory.sqlite").path
        let model = folder.appendingPathComponent("Inventory.xcdatamodeld").path
        try FileManager.default.copyItem(atPath: sample.appendingPathComponent("Inventory.sqlite").path, toPath: store)
        try FileManager.default.copyItem(atPath: sample.appendingPathComponent("Inventory.xcdatamodeld").path, toPath: model)
        var variants: [Variant] = []
        if let sqlite3 = ["/usr/bin/sqlite3", "/usr/local/bin/sqlite3"].first(where: FileManager.default.isExecutableFile(atPath:)) {
            variants.append(Variant(name: "raw C (sqlite3 CLI)") { try timed(sqlite3, [store, ".quit"]) })
        }
        variants.append(Variant(name: "Faultline (faultline -c '.quit')") { try timed(faultline, [store, "--model", model, "-c", ".quit"]) })
        try harness.run("shell start", rounds: rounds, rows: "Samples/Inventory store and its .xcdatamodeld, whole process, release binary", variants: variants)
    }
}

/// Memory: iterating every item with fetchBatchSize 500 (Faultline's `fetch(_:)`, Core Data's
/// batch-faulting array) or a cursor (raw C, GRDB), each in a fresh child process that reports
/// its peak RSS (`VmHWM`).
enum MemoryWorkload {
    static let variants = [
        ("baseline", "process baseline (no work)"),
        ("raw", "raw C"),
        ("grdb", "GRDB records (cursor)"),
        ("faultline", "Faultline (fetch(_:), fetchBatchSize 500)"),
    ]

    static func run(_ harness: Harness, path: String, rounds: Int, objects: Int) throws {
        log("memory: \(objects) objects, \(rounds) rounds, a child process each")
        var peaks = Array(repeating: [Double](), count: variants.count)
        var checks: [String: String] = [:]
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
        for _ in 0..<rounds {
            for (i, variant) in variants.enumerated() {
                let (status, output) = try spawnAndWait(executable, ["--memory-child", variant.0, path], capture: true, quiet: false)
                let fields = output.split(whereSeparator: \.isWhitespace)
                guard status == 0, fields.count == 2, let kb = Double(fields[0]) else {
                    throw BenchmarkError("memory child \(variant.0) failed: \(output)")
                }
                peaks[i].append(kb / 1024)
                if variant.0 != "baseline" { checks[variant.0] = String(fields[1]) }
            }
        }
        guard Set(checks.values).count <= 1 else { throw BenchmarkError("memory variants read different data: \(checks)") }
        for (i, variant) in variants.enumerated() {
            harness.add(Result(workload: "peak RSS, iterate \(objects)", variant: variant.1, samples: peaks[i], unit: .megabytes))
        }
        harness.note("peak RSS, iterate \(objects)", "VmHWM of a fresh child process per measurement, \(rounds) rounds interleaved; every value of every item read")
    }
}

/// The child side of the memory workload: iterate, then print `VmHWM_kB CHECKSUM`.
enum MemoryChild {
    static func run(variant: String, path: String) throws {
        let check: Int64
        switch variant {
        case "baseline": check = 0
        case "raw": check = try Raw.iterate(path: path)
        case "grdb": check = try GRDBBench.iterate(path: path)
        case "faultline": check = try FaultlineBench().iterate(path: path)
        default: throw BenchmarkError("unknown memory variant \(variant)")
        }
        print("\(peakRSSKilobytes()) \(check)")
    }
}
