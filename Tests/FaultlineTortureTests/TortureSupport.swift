import FaultlineTestSupport
import FaultlineTortureKit
import Foundation
import Glibc
import Testing

/// What a finished child printed and its exit status (128 + the signal when killed).
struct ChildResult {
    var stdout: String
    var stderr: String
    var status: Int32
}

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

    /// Starts the child with `arguments`; `environment` is added to the test's.
    static func start(_ arguments: [String], environment: [String: String] = [:]) throws -> Subprocess {
        var env = ProcessInfo.processInfo.environment
        for (key, value) in environment { env[key] = value }
        return try Subprocess(binary.path, arguments, environment: env, stdin: .null)
    }

    /// Reads the child's standard output until a line starting with `prefix` (or the end);
    /// returns what was read.
    static func readUntil(_ child: Subprocess, line prefix: String) -> String {
        guard let fd = child.standardOutput else { return "" }
        var text = ""
        var byte: UInt8 = 0
        while true {
            let n = read(fd, &byte, 1)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return text }
            text.append(Character(UnicodeScalar(byte)))
            if byte == 10, text.split(separator: "\n").last?.hasPrefix(prefix) == true { return text }
        }
    }

    /// What a finished child printed, and its exit status.
    static func finish(_ child: Subprocess, alreadyRead: String = "") -> ChildResult {
        var out = Data(alreadyRead.utf8)
        var err = Data()
        let errors = Locked(Data())
        let group = DispatchGroup()
        if let fd = child.standardError {
            group.enter()
            Thread.detachNewThread {
                Subprocess.readToEnd(fd) { chunk in errors.update { $0.append(chunk) } }
                group.leave()
            }
        }
        if let fd = child.standardOutput { Subprocess.readToEnd(fd) { out.append($0) } }
        group.wait()
        err = errors.value
        let status = child.wait()
        return .init(stdout: String(decoding: out, as: UTF8.self), stderr: String(decoding: err, as: UTF8.self), status: status)
    }

    /// Runs the child to its end.
    static func run(_ arguments: [String], environment: [String: String] = [:]) throws -> ChildResult {
        finish(try start(arguments, environment: environment))
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
