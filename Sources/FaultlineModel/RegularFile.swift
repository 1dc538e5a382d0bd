import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Checks that a path names a regular file before it is opened: opening a FIFO for reading
/// waits for a writer forever, and a device can be endless. Links are followed.
package enum RegularFile {
    /// Nil when `path` is a regular file (or does not exist: opening it will say so); else
    /// what it is instead, e.g. `a FIFO (named pipe)`.
    package static func problem(atPath path: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        switch info.st_mode & S_IFMT {
        case S_IFREG: return nil
        case S_IFIFO: return "a FIFO (named pipe)"
        case S_IFCHR: return "a character device"
        case S_IFBLK: return "a block device"
        case S_IFSOCK: return "a socket"
        case S_IFDIR: return "a folder"
        default: return "not a regular file"
        }
    }

    /// Throws ``ModelError`` (`unreadable`) when `url` names something other than a regular file.
    static func requireModelFile(_ url: URL) throws {
        if let problem = problem(atPath: url.path) {
            throw ModelError(.unreadable, "cannot read a model from \(problem): not a regular file", file: url.path)
        }
    }
}
