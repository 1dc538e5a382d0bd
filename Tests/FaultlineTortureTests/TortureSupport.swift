import FaultlineTestSupport
import FaultlineTortureKit
import Foundation
import Testing

/// What a finished child printed and its exit status (128 + the signal when killed).
typealias ChildResult = TestSupport.ProcessResult

/// Running the `faultline-torture` child program (Tests/faultline-torture) from the tests.
enum Torture {
    /// `FAULTLINE_LONG_TESTS=1` (or `make crash-test-long`): hundreds of kills, longer stress.
    static var isLong: Bool { ProcessInfo.processInfo.environment["FAULTLINE_LONG_TESTS"] == "1" }

    /// The built child program, beside the test bundle.
    static var binary: URL { TestSupport.productsDirectory.appendingPathComponent("faultline-torture") }

    /// The store's file name inside each run's folder; its external data is in
    /// `.Torture_SUPPORT/_EXTERNAL_DATA` beside it.
    static let storeName = "Torture.sqlite"

    /// A seeded store in a new folder (the folder is returned; the store is `storeName` in it).
    static func seededFolder(workers: Int = 0, groups: Int = 8, membersPerGroup: Int = 25) throws -> URL {
        let folder = try TestSupport.temporaryDirectory("faultline-torture").appendingPathComponent("store")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try TortureModel.seed(folder.appendingPathComponent(storeName), groups: groups, membersPerGroup: membersPerGroup, workers: workers)
        return folder
    }

    /// A copy of a store folder (the store, any `-wal`/`-shm`, its external data) in a new
    /// temporary folder.
    static func copy(_ folder: URL) throws -> URL {
        let target = try TestSupport.temporaryDirectory("faultline-torture").appendingPathComponent("store")
        try FileManager.default.copyItem(at: folder, to: target)
        return target
    }

    /// Runs the child with `arguments` to its end (`environment` is added to the test's) and
    /// returns what it printed and its exit status. The
    /// child kills itself when `FAULTLINE_TORTURE_KILL_AT` or `FAULTLINE_TORTURE_KILL_AFTER`
    /// says so (Tests/faultline-torture/main.swift).
    static func run(_ arguments: [String], environment: [String: String] = [:]) async throws -> ChildResult {
        try await TestSupport.run(binary, arguments, environment: environment)
    }

    /// Runs every command at once and returns each one's result, in order.
    static func runTogether(_ commands: [[String]]) async throws -> [ChildResult] {
        try await withThrowingTaskGroup(of: (Int, ChildResult).self) { group in
            for (index, command) in commands.enumerated() {
                group.addTask { (index, try await run(command)) }
            }
            var results: [Int: ChildResult] = [:]
            for try await (index, result) in group { results[index] = result }
            return commands.indices.compactMap { results[$0] }
        }
    }

    /// The `key=value` fields of the child's `result` line.
    static func result(_ output: String) -> [String: String] {
        guard let line = output.split(separator: "\n").first(where: { $0.hasPrefix("result") }) else { return [:] }
        var fields: [String: String] = [:]
        for part in line.split(separator: " ").dropFirst() {
            let pair = part.split(separator: "=", maxSplits: 1).map(String.init)
            fields[pair[0]] = pair.count > 1 ? pair[1] : ""
        }
        return fields
    }
}
