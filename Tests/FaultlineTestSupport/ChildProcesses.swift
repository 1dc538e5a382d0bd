import Foundation
import Glibc
import Subprocess
import SystemPackage

/// Child processes for the tests, started and reaped by swift-subprocess.
///
/// Not Foundation's `Process`: on Linux its `waitUntilExit()` waits for a SIGCHLD that can be
/// lost when the child exits at once (seen in CI: a `tmux new-session -d` client left a zombie
/// and the run hung until CI's time limit). The tests once had their own `posix_spawn` and
/// `waitpid` for that; swift-subprocess keeps each of its guarantees (Reliability.md,
/// "Child processes in the tests"):
///
/// - an exit is never missed and never left a zombie: it waits on a pidfd (no SIGCHLD
///   involved; kernels older than 5.4 fall back to a SIGCHLD handler that checks every child
///   it started) and reaps the child before `run` returns, also when the body throws or the
///   task is cancelled, after killing it;
/// - the child starts with no signal blocked and every signal at its default disposition (a
///   test thread blocks signals, and a tmux server started with them blocked never reaps its
///   panes);
/// - the child inherits only its three standard streams: pipes are made close-on-exec
///   atomically and the spawn closes every other descriptor, so a daemon it forks (tmux's
///   server) holds no pipe a reader waits on;
/// - both outputs are read at once while standard input is written, so no full pipe blocks
///   the child, and once the child exits the reads take what is buffered and stop even when
///   a grandchild keeps the pipe open;
/// - a child ended by a signal is reported as such (`shellStatus` makes it 128 + the signal).
///
/// One thing is the tests' own: the test process ignores SIGPIPE (`ignoreBrokenPipes()`), so
/// that writing to a child that has already exited is an EPIPE error, not the end of the whole
/// run without a word. The children still start with SIGPIPE at its default.
extension TestSupport {
    /// Makes a write to a pipe nobody reads an `EPIPE` error in the test process instead of a
    /// SIGPIPE that ends it. Whatever starts a child with a pipe to its standard input calls
    /// this first.
    public static func ignoreBrokenPipes() { _ = brokenPipesIgnored }

    private static let brokenPipesIgnored: Void = { _ = signal(SIGPIPE, SIG_IGN) }()

    /// A termination status as a shell reports it: the exit code, or 128 + the signal that
    /// ended the child.
    public static func shellStatus(_ status: TerminationStatus) -> Int32 {
        switch status {
        case .exited(let code): return code
        case .signaled(let signal): return 128 + signal
        }
    }

    /// The test process's environment with `overrides` applied, for swift-subprocess.
    public static func environment(_ overrides: [String: String]) -> Subprocess.Environment {
        .inherit.updating(Dictionary(uniqueKeysWithValues: overrides.map { (Environment.Key(stringLiteral: $0.key), Optional($0.value)) }))
    }

    /// Runs a program with arguments and standard input, and waits for it. `NO_COLOR=1` is
    /// set unless `environment` says otherwise.
    public static func run(
        _ executable: URL, _ arguments: [String], stdin: String = "", environment: [String: String] = [:],
        currentDirectory: URL? = nil
    ) async throws -> ProcessResult {
        ignoreBrokenPipes()
        var overrides = ["NO_COLOR": "1"]
        for (key, value) in environment { overrides[key] = value }
        let result = try await Subprocess.run(
            .path(FilePath(executable.path)), arguments: Arguments(arguments), environment: Self.environment(overrides),
            workingDirectory: currentDirectory.map { FilePath($0.path) },
            input: .inputWriter, output: .string(limit: .max), error: .string(limit: .max)
        ) { execution in
            // All of standard input, or what the child takes of it before it exits (a child
            // that exits early must not turn the write's EPIPE into the test's error).
            _ = try? await execution.standardInputWriter.write(stdin)
            try await execution.standardInputWriter.finish()
        }
        return ProcessResult(stdout: result.standardOutput, stderr: result.standardError, status: shellStatus(result.terminationStatus))
    }

    /// Runs the built `faultline` binary.
    public static func faultline(_ arguments: [String], stdin: String = "", environment: [String: String] = [:]) async throws -> ProcessResult {
        try await run(faultlineBinary, arguments, stdin: stdin, environment: environment, currentDirectory: packageRoot)
    }
}
