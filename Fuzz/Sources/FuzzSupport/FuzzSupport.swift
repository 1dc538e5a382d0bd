import CLibFuzzer
import Foundation

/// Helpers shared by the fuzz targets.
public enum FuzzSupport {
    /// Runs libFuzzer with the process's arguments, calling `test` with each input, and exits
    /// with its status. Each target's `@main` calls this: SwiftPM renames an executable's
    /// `main`, so libFuzzer's own `main` would never run.
    public static func runFuzzer(_ test: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> Never {
        var argc = CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv, test))
    }

    /// Whether inputs that reach a defect already known (and being fixed) are run anyway:
    /// `FUZZ_KNOWN_DEFECTS=1`. By default a target passes over them, so a run finds new ones.
    public static let includesKnownDefects = ProcessInfo.processInfo.environment["FUZZ_KNOWN_DEFECTS"] == "1"

    /// The repository root: `FAULTLINE_ROOT` when set, else found from this file's path
    /// (`<root>/Fuzz/Sources/FuzzSupport/FuzzSupport.swift`).
    public static let repositoryRoot: URL = {
        if let root = ProcessInfo.processInfo.environment["FAULTLINE_ROOT"], !root.isEmpty {
            return URL(fileURLWithPath: root)
        }
        return URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }()

    /// A file of the repository, such as `Samples/Inventory/Inventory.xcdatamodeld`.
    public static func path(_ relative: String) -> String {
        repositoryRoot.appendingPathComponent(relative).path
    }

    /// The fuzzer's input as `Data`.
    public static func data(_ start: UnsafePointer<UInt8>?, _ count: Int) -> Data {
        guard let start, count > 0 else { return Data() }
        return Data(bytes: start, count: count)
    }

    /// The fuzzer's input as text (invalid UTF-8 becomes U+FFFD, as a terminal or file reader would give).
    public static func text(_ start: UnsafePointer<UInt8>?, _ count: Int) -> String {
        guard let start, count > 0 else { return "" }
        return String(decoding: UnsafeBufferPointer(start: start, count: count), as: UTF8.self)
    }

    /// Stops the process with a message a crash report shows: a property the target checks
    /// (not an error the API reports) failed.
    public static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("fuzz property failed: \(message)\n".utf8))
        abort()
    }
}
