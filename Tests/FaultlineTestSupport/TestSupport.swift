import Foundation
import Testing

/// Paths and helpers shared by the test targets: the package root, the shared corpus, the
/// built `faultline` binary, temporary folders, and running the binary as a user would.
public enum TestSupport {
    /// The package root (the folder holding `Package.swift`).
    public static let packageRoot: URL = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }  // Tests/FaultlineTestSupport/TestSupport.swift
        return url
    }()

    /// The Inventory sample folder.
    public static var inventoryFolder: URL { packageRoot.appendingPathComponent("Samples/Inventory") }

    /// Whether this run is CI's (`CI=true`), where missing test data is a failure, not a skip.
    public static var isCI: Bool { ProcessInfo.processInfo.environment["CI"] == "true" }

    /// The folder the test binary was built into, which also holds `faultline`.
    public static let productsDirectory: URL = {
        let executable = URL(fileURLWithPath: CommandLine.arguments.first ?? "").resolvingSymlinksInPath()
        var folder = executable.deletingLastPathComponent()
        // On Linux the runner is `<products>/FaultlinePackageTests.xctest`; on macOS it sits
        // inside that bundle's `Contents/MacOS`.
        while folder.path != "/" && folder.pathExtension == "xctest" || folder.lastPathComponent == "MacOS" || folder.lastPathComponent == "Contents" {
            folder.deleteLastPathComponent()
        }
        return folder
    }()

    /// The built `faultline` executable.
    public static var faultlineBinary: URL { productsDirectory.appendingPathComponent("faultline") }

    /// A new empty folder under the system's temporary folder, removed when the test process
    /// exits.
    public static func temporaryDirectory(_ name: String = "faultline-tests") throws -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("\(name)-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        TemporaryFolders.shared.add(url)
        return url
    }

    /// Whether a command is on the PATH.
    public static func hasCommand(_ name: String) -> Bool {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").contains { FileManager.default.isExecutableFile(atPath: "\($0)/\(name)") }
    }

    /// What a finished process printed and its exit status.
    public struct ProcessResult: Sendable {
        /// Standard output.
        public var stdout: String
        /// Standard error.
        public var stderr: String
        /// The exit status (128 + the signal when a signal ended it).
        public var status: Int32
    }

    /// Replaces measured timings (`0.0001s`, `1.2 ms`) with `#`s, so transcripts compare exactly.
    public static func maskingTimings(_ text: String) -> String {
        var result = text
        for pattern in [#"\d+\.\d{4}s"#, #"\d+(\.\d+)? ms"#] {
            if let regex = try? NSRegularExpression(pattern: pattern) {
                result = regex.stringByReplacingMatches(
                    in: result, range: NSRange(result.startIndex..., in: result), withTemplate: "#")
            }
        }
        return result
    }

    /// The bytes of every file in a folder, by name. Used to prove a
    /// read-only session changed nothing.
    public static func snapshot(of folder: URL) throws -> [String: Data] {
        var result: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
            let url = folder.appendingPathComponent(name)
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), !isDirectory.boolValue {
                result[name] = try Data(contentsOf: url)
            }
        }
        return result
    }
}

/// The shared corpus of real Core Data stores and models (`../shared/corpus`).
///
/// Tests that need it use `@Test(.enabled(if: Corpus.shouldRun, Corpus.skipMessage))` and then
/// `try Corpus.required()`: absent corpus → skipped locally, failed on CI.
public enum Corpus {
    /// The corpus folder.
    public static var url: URL { TestSupport.packageRoot.appendingPathComponent("../shared/corpus").standardizedFileURL }

    /// Whether the corpus is present.
    public static var isAvailable: Bool { FileManager.default.fileExists(atPath: url.appendingPathComponent("README.md").path) }

    /// Whether corpus tests run: when it is present, and always on CI (where absence fails).
    public static var shouldRun: Bool { isAvailable || TestSupport.isCI }

    /// Why a corpus test was skipped.
    public static let skipMessage: Comment = "skipped: ../shared/corpus (real Core Data stores and models) is not beside the package"

    /// The corpus folder, or an error when it is absent.
    public static func required() throws -> URL {
        guard isAvailable else { throw CorpusMissing() }
        return url
    }

    /// Every `*.sqlite` under `corpus/stores`, as `folder/name`, sorted.
    public static func storePaths(_ corpus: URL) throws -> [String] {
        let stores = corpus.appendingPathComponent("stores")
        var paths: [String] = []
        for folder in try FileManager.default.contentsOfDirectory(atPath: stores.path) {
            let dir = stores.appendingPathComponent(folder)
            for name in (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? [] where name.hasSuffix(".sqlite") {
                paths.append("\(folder)/\(name)")
            }
        }
        return paths.sorted()
    }

    /// Copies a corpus store and its `-wal`/`-shm` into a new temporary folder and returns the
    /// copy: tests never open the originals (even a read-only open by root can rewrite `-shm`).
    public static func copyStore(_ relativePath: String, from corpus: URL) throws -> URL {
        let source = corpus.appendingPathComponent("stores").appendingPathComponent(relativePath)
        let folder = try TestSupport.temporaryDirectory("faultline-corpus-store")
        let copy = folder.appendingPathComponent(source.lastPathComponent)
        for suffix in ["", "-wal", "-shm"] {
            let from = URL(fileURLWithPath: source.path + suffix)
            guard FileManager.default.fileExists(atPath: from.path) else { continue }
            let to = URL(fileURLWithPath: copy.path + suffix)
            try FileManager.default.copyItem(at: from, to: to)
            // The corpus is read-only on disk; the copy must be writable like a real store.
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: to.path)
        }
        return copy
    }

    /// The corpus is missing where it is required.
    public struct CorpusMissing: Error, CustomStringConvertible {
        public var description: String { "../shared/corpus is missing: CI=true requires it for the compatibility tests" }
    }
}

/// The temporary folders tests made, removed at exit so that test runs leave nothing behind.
final class TemporaryFolders: @unchecked Sendable {  // `urls` is only touched under `lock`
    static let shared = TemporaryFolders()
    private let lock = NSLock()
    private var urls: [URL] = []
    private var registered = false

    func add(_ url: URL) {
        lock.withLock {
            urls.append(url)
            if !registered {
                registered = true
                atexit { TemporaryFolders.shared.removeAll() }
            }
        }
    }

    func removeAll() {
        let list = lock.withLock { urls }
        for url in list { try? FileManager.default.removeItem(at: url) }
    }
}
