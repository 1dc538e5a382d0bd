import Foundation
import Glibc

/// A child process started with `posix_spawn` and reaped with a blocking `waitpid` on its own
/// pid.
///
/// The tests do not use Foundation's `Process` on Linux: its `waitUntilExit()` waits for a
/// SIGCHLD that can be lost when the child exits at once (seen in CI: a `tmux new-session -d`
/// client left a zombie and the test run hung until CI's time limit). `waitpid` on the pid
/// cannot miss an exit. Pipes are made close-on-exec, so a child (or a daemon it forks, such
/// as tmux's server) inherits only its own three standard streams.
public final class Subprocess: @unchecked Sendable {  // the pid is written once; `status` under `lock`
    /// What a standard stream of the child is connected to.
    public enum Stream: Sendable {
        /// `/dev/null`.
        case null
        /// A new pipe whose other end the parent keeps.
        case pipe
    }

    /// An error starting a child.
    public struct SpawnError: Error, CustomStringConvertible {
        /// What failed, with the program and `errno`'s text.
        public var description: String

        /// An error saying `description`.
        public init(description: String) { self.description = description }
    }

    private static let spawnLock = NSLock()

    private static func makePipe(_ fds: inout [Int32]) -> Bool {
        guard pipe(&fds) == 0 else { return false }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        return true
    }

    /// The child's process ID.
    public let pid: pid_t
    /// The parent's end of the child's standard input, when it is a pipe.
    public private(set) var standardInput: Int32?
    /// The parent's end of the child's standard output, when it is a pipe.
    public let standardOutput: Int32?
    /// The parent's end of the child's standard error, when it is a pipe.
    public let standardError: Int32?
    private let lock = NSLock()
    private var status: Int32?

    /// Starts `executable` (a path) with `arguments`, the whole `environment`, in
    /// `currentDirectory` when given.
    public init(
        _ executable: String, _ arguments: [String], environment: [String: String],
        currentDirectory: String? = nil, stdin: Stream = .pipe, stdout: Stream = .pipe, stderr: Stream = .pipe
    ) throws {
        // Pipes are made close-on-exec in two steps (pipe2 is not visible to Swift), so making
        // them and spawning are one critical section: no other spawn can inherit a fresh pipe.
        Self.spawnLock.lock()
        defer { Self.spawnLock.unlock() }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var parentEnds: [Int32?] = [nil, nil, nil]
        var childEnds: [Int32] = []
        defer { for fd in childEnds { close(fd) } }
        func closeParentEnds() { for case let fd? in parentEnds { close(fd) } }
        for (target, stream) in [stdin, stdout, stderr].enumerated() {
            switch stream {
            case .null:
                posix_spawn_file_actions_addopen(&actions, Int32(target), "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
            case .pipe:
                var fds: [Int32] = [-1, -1]
                guard Self.makePipe(&fds) else {
                    closeParentEnds()
                    throw SpawnError(description: "pipe for \(executable): \(String(cString: strerror(errno)))")
                }
                // Standard input: the child reads fds[0]; output streams: the child writes fds[1].
                let (child, parent) = target == 0 ? (fds[0], fds[1]) : (fds[1], fds[0])
                childEnds.append(child)
                parentEnds[target] = parent
                posix_spawn_file_actions_adddup2(&actions, child, Int32(target))
            }
        }
        var program = [executable]
        if let currentDirectory {
            // posix_spawn_file_actions_addchdir_np is not visible to Swift; env(1) changes folder.
            program = ["/usr/bin/env", "-C", currentDirectory, executable]
        }
        let argv = (program + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for p in argv + envp { free(p) } }
        // The child starts with no signal blocked and the usual dispositions: a test thread
        // (a libdispatch worker) blocks signals, and a mask is inherited, so without this a
        // tmux server would never see SIGCHLD and never reap its panes' processes.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGINT, SIGCHLD, SIGPIPE, SIGTERM, SIGQUIT] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var pid: pid_t = 0
        let result = posix_spawn(&pid, program[0], &actions, &attributes, argv, envp)
        guard result == 0 else {
            closeParentEnds()
            throw SpawnError(description: "cannot start \(executable): \(String(cString: strerror(result)))")
        }
        self.pid = pid
        standardInput = parentEnds[0]
        standardOutput = parentEnds[1]
        standardError = parentEnds[2]
    }

    deinit {
        for case let fd? in [standardInput, standardOutput, standardError] { close(fd) }
    }

    /// Writes `data` to the child's standard input (all of it, or until the child closes it).
    public func write(_ data: Data) {
        guard let fd = standardInput else { return }
        data.withUnsafeBytes { buffer in
            guard let base = buffer.baseAddress else { return }
            var offset = 0
            while offset < buffer.count {
                let n = Glibc.write(fd, base + offset, buffer.count - offset)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return }
                offset += n
            }
        }
    }

    /// Closes the child's standard input, so it reads end of file.
    public func closeInput() {
        if let fd = standardInput { close(fd); standardInput = nil }
    }

    /// Reads `fd` to its end, calling `chunk` with what each read returns.
    public static func readToEnd(_ fd: Int32, chunk: (Data) -> Void) {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return }
            chunk(Data(buffer[0..<n]))
        }
    }

    /// Waits for the child to exit and returns its exit status (128 + the signal when killed).
    @discardableResult
    public func wait() -> Int32 {
        if let status = lock.withLock({ status }) { return status }
        var raw: Int32 = 0
        while waitpid(pid, &raw, 0) < 0 && errno == EINTR {}
        // WIFEXITED / WEXITSTATUS / WTERMSIG, which are macros C exposes but Swift does not.
        let signal = raw & 0x7f
        let code = signal == 0 ? (raw >> 8) & 0xff : 128 + signal
        lock.withLock { status = code }
        return code
    }
}

/// A value shared between threads, behind a lock.
public final class Locked<Value>: @unchecked Sendable {  // `stored` is only touched under `lock`
    private let lock = NSLock()
    private var stored: Value

    /// A locked box holding `value`.
    public init(_ value: Value) { stored = value }

    /// The current value.
    public var value: Value {
        lock.lock()
        defer { lock.unlock() }
        return stored
    }

    /// Replaces the value.
    public func set(_ value: Value) { update { $0 = value } }

    /// Changes the value in place, under the lock.
    public func update(_ body: (inout Value) -> Void) {
        lock.lock()
        defer { lock.unlock() }
        body(&stored)
    }
}
