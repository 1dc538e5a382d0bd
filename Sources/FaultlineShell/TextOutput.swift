import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes text to a file descriptor and remembers the first failure, instead of trapping
/// (Foundation's `FileHandle.write(_:)` stops the process on a closed descriptor) or
/// losing it (a full device): the shell turns a failure into an error and a non-zero exit.
public final class TextOutput: @unchecked Sendable {  // used from the thread that runs the shell
    /// The descriptor written to.
    public let descriptor: Int32
    /// What it is, for messages: `standard output`, or a file path.
    public let name: String
    /// The first write that failed, as `<name>: write failed: <reason>`; nil while every write succeeded.
    public private(set) var failure: String?
    private let ownsDescriptor: Bool

    /// Standard output.
    public static let standardOutput = TextOutput(descriptor: STDOUT_FILENO, name: "standard output", owns: false)
    /// Standard error.
    public static let standardError = TextOutput(descriptor: STDERR_FILENO, name: "standard error", owns: false)

    init(descriptor: Int32, name: String, owns: Bool) {
        self.descriptor = descriptor
        self.name = name
        self.ownsDescriptor = owns
    }

    /// Opens (creating or truncating) a file for writing; throws ``ShellError`` naming it.
    static func file(_ path: String) throws -> TextOutput {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw ShellError("\(path): cannot write to this file (\(String(cString: strerror(errno))))")
        }
        return TextOutput(descriptor: fd, name: path, owns: true)
    }

    deinit {
        if ownsDescriptor { close(descriptor) }
    }

    /// Writes `text` whole (retrying after interruptions and short writes); after a failure,
    /// writes nothing more.
    public func write(_ text: String) {
        guard failure == nil else { return }
        var bytes = Array(text.utf8)
        bytes.withUnsafeMutableBytes { buffer in
            guard var base = buffer.baseAddress else { return }
            var remaining = buffer.count
            while remaining > 0 {
                let written = systemWrite(descriptor, base, remaining)
                if written < 0 {
                    if errno == EINTR { continue }
                    failure = "\(name): write failed: \(String(cString: strerror(errno)))"
                    return
                }
                if written == 0 {
                    failure = "\(name): write failed: nothing was written"
                    return
                }
                remaining -= written
                base += written
            }
        }
    }

    /// Writes `line` and a newline.
    public func writeLine(_ line: String) { write(line + "\n") }
}

/// `write(2)`, under a name that the method `write(_:)` does not hide.
@inline(__always)
private func systemWrite(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    #if canImport(Glibc)
    return Glibc.write(fd, buffer, count)
    #else
    return Darwin.write(fd, buffer, count)
    #endif
}
