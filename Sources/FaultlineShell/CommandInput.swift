import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Joins the lines of a command typed over several lines (an open quote or parenthesis
/// continues it), one line at a time: each line is scanned once, so a long unclosed quote
/// costs linear time, and a command may be at most ``maximumBytes`` long.
public struct CommandAccumulator {
    /// The longest command accepted (1 MiB), in UTF-8 bytes.
    public static let maximumBytes = 1 << 20

    /// The lines so far, joined with newlines.
    public private(set) var text = ""
    private var bytes = 0
    private var depth = 0
    private var quote: Character?
    private var escaped = false
    private var isComment = false

    /// An accumulator with no lines.
    public init() {}

    /// Whether no line is waiting for the rest of its command.
    public var isEmpty: Bool { text.isEmpty && bytes == 0 }

    /// Whether the lines so far leave a quote or parenthesis open.
    public var needsContinuation: Bool { !isComment && (quote != nil || depth > 0) }

    /// Adds a line; returns the whole command when the line completes it.
    ///
    /// - Throws: ``ShellError`` when the command grows past ``maximumBytes`` (the lines are
    ///   dropped, so the next line starts a new command).
    public mutating func add(_ line: String) throws -> String? {
        if bytes == 0 { isComment = line.trimmingCharacters(in: .whitespaces).hasPrefix("--") }
        let first = bytes == 0
        bytes += line.utf8.count + (first ? 0 : 1)
        guard bytes <= Self.maximumBytes else {
            self = CommandAccumulator()
            throw ShellError("a command longer than \(Self.maximumBytes / 1024) KiB was dropped (an unclosed quote or parenthesis?)")
        }
        text += first ? line : "\n" + line
        if !isComment { scan(line) }
        if needsContinuation { return nil }
        let command = text
        self = CommandAccumulator()
        return command
    }

    private mutating func scan(_ line: String) {
        for c in line {
            if let q = quote {
                if escaped { escaped = false } else if c == "\\" { escaped = true } else if c == q { quote = nil }
                continue
            }
            switch c {
            case "\"", "'": quote = c
            case "(", "{", "[": depth += 1
            case ")", "}", "]": depth -= 1
            default: break
            }
        }
        // A newline inside a quote is part of the string (and ends an escape).
        if quote != nil { escaped = false }
    }
}

/// Reads lines from a file descriptor in chunks, never holding more than one line of at most
/// ``CommandAccumulator/maximumBytes``: a longer line is skipped to its end and reported.
final class LineReader {
    enum Item {
        case line(String)
        /// A line longer than the limit, skipped; its length in bytes.
        case tooLong(Int)
    }

    private let descriptor: Int32
    private var buffer: [UInt8] = []
    private var start = 0
    private var atEnd = false
    private let limit: Int

    /// `open(2)` for reading (close-on-exec); -1 with `errno` set on failure.
    static func openForReading(_ path: String) -> Int32 {
        open(path, O_RDONLY | O_CLOEXEC)
    }

    init(descriptor: Int32, limit: Int = CommandAccumulator.maximumBytes) {
        self.descriptor = descriptor
        self.limit = limit
    }

    /// The next line without its newline, or nil at the end of input.
    func next() -> Item? {
        var skipped = 0
        // Bytes from `start` up to `scanned` hold no newline: each byte is looked at once.
        var scanned = start
        while true {
            if let newline = Self.firstNewline(in: buffer, from: scanned) {
                let line = buffer[start..<newline]
                start = newline + 1
                if skipped > 0 { return .tooLong(skipped + line.count) }
                return .line(String(decoding: line, as: UTF8.self))
            }
            scanned = buffer.count
            if buffer.count - start > limit {
                skipped += buffer.count - start
                buffer.removeAll(keepingCapacity: true)
                start = 0
                scanned = 0
            }
            if atEnd {
                guard start < buffer.count || skipped > 0 else { return nil }
                let line = buffer[start...]
                start = buffer.count
                if skipped > 0 { return .tooLong(skipped + line.count) }
                return .line(String(decoding: line, as: UTF8.self))
            }
            scanned -= fill()
        }
    }

    /// The index of the first newline at or after `from` (`memchr`: this runs over every byte).
    private static func firstNewline(in buffer: [UInt8], from: Int) -> Int? {
        guard from < buffer.count else { return nil }
        return buffer.withUnsafeBytes { raw -> Int? in
            guard let base = raw.baseAddress, let found = memchr(base + from, Int32(UInt8(ascii: "\n")), raw.count - from) else { return nil }
            return base.distance(to: UnsafeRawPointer(found))
        }
    }

    /// Drops the bytes before `start`, then reads the next chunk; returns how far the kept
    /// bytes moved down.
    private func fill() -> Int {
        let moved = start
        if start > 0 {
            buffer.removeSubrange(0..<start)
            start = 0
        }
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            if count <= 0 {
                atEnd = true
            } else {
                buffer.append(contentsOf: chunk[0..<count])
            }
            return moved
        }
    }
}
