import Foundation
import Glibc

/// Runs a program with `posix_spawn` and reaps it with a blocking `waitpid` on its pid, and
/// returns its exit status and (when `capture`) its standard output.
///
/// Not Foundation's `Process`: on Linux its `waitUntilExit()` can miss the SIGCHLD of a child
/// that exits at once and then waits forever, and the shell-start workload starts hundreds of
/// such children.
func spawnAndWait(_ executable: String, _ arguments: [String], capture: Bool = false, quiet: Bool = true) throws -> (status: Int32, output: String) {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    var fds: [Int32] = [-1, -1]
    if capture {
        // The benchmarks spawn from one thread, so pipe + FD_CLOEXEC cannot race another spawn.
        guard pipe(&fds) == 0 else { throw BenchmarkError("pipe: \(String(cString: strerror(errno)))") }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
    } else if quiet {
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    }
    if quiet { posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0) }
    let argv = ([executable] + arguments).map { strdup($0) } + [nil]
    let envp = ProcessInfo.processInfo.environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer { for p in argv + envp { free(p) } }
    var pid: pid_t = 0
    let result = posix_spawn(&pid, executable, &actions, nil, argv, envp)
    if capture { close(fds[1]) }
    guard result == 0 else {
        if capture { close(fds[0]) }
        throw BenchmarkError("cannot start \(executable): \(String(cString: strerror(result)))")
    }
    var output = Data()
    if capture {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fds[0], $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            output.append(contentsOf: buffer[0..<n])
        }
        close(fds[0])
    }
    var raw: Int32 = 0
    while waitpid(pid, &raw, 0) < 0 && errno == EINTR {}
    let signal = raw & 0x7f
    return (signal == 0 ? (raw >> 8) & 0xff : 128 + signal, String(decoding: output, as: UTF8.self))
}
