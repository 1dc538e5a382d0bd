import Foundation
import Subprocess
import SystemPackage

/// Runs a program with swift-subprocess and waits for it, and returns its exit status (128 +
/// the signal when a signal ended it) and, when `capture`, its standard output. Standard input
/// is /dev/null; `quiet` sends what is not captured to /dev/null instead of this process's
/// output and error.
///
/// Not Foundation's `Process`: on Linux its `waitUntilExit()` can miss the SIGCHLD of a child
/// that exits at once and then waits forever, and the shell-start workload starts hundreds of
/// such children. swift-subprocess waits on the child's pidfd and reaps it before it returns
/// (Documentation/Reliability.md, "Child processes in the tests").
///
/// The benchmarks are synchronous and run on the main thread, which is not one of the
/// cooperative pool's: it waits on a semaphore while the run, a task of its own, goes on in
/// the pool. Called from a task this would take a pool thread away, so it refuses to be.
func spawnAndWait(_ executable: String, _ arguments: [String], capture: Bool = false, quiet: Bool = true) throws -> (status: Int32, output: String) {
    precondition(Thread.isMainThread, "spawnAndWait blocks its thread: call it from the main thread only")
    let configuration = Configuration(executable: .path(FilePath(executable)), arguments: Arguments(arguments))
    switch (capture, quiet) {
    case (true, true): return try waitFor { try await Subprocess.run(configuration, output: .string(limit: .max), error: .discarded) }
    case (true, false): return try waitFor { try await Subprocess.run(configuration, output: .string(limit: .max), error: .currentStandardError) }
    case (false, true): return try waitFor { try await Subprocess.run(configuration, output: .discarded, error: .discarded) }
    case (false, false): return try waitFor { try await Subprocess.run(configuration, output: .currentStandardOutput, error: .currentStandardError) }
    }
}

/// Runs `start` in a task and blocks this (main) thread until it has finished.
private func waitFor<Output: OutputProtocol, Error: ErrorOutputProtocol>(
    _ start: @escaping @Sendable () async throws -> ExecutionResult<Void, Output, Error>
) throws -> (status: Int32, output: String) {
    let outcome = Outcome()
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        do {
            let result = try await start()
            let status: Int32
            switch result.terminationStatus {
            case .exited(let code): status = code
            case .signaled(let signal): status = 128 + signal
            }
            outcome.set(.success((status, (result.standardOutput as? String) ?? "")))
        } catch {
            outcome.set(.failure(error))
        }
        done.signal()
    }
    done.wait()
    return try outcome.get()
}

/// A finished run's outcome, handed from its task to the waiting thread.
private final class Outcome: @unchecked Sendable {  // `result` is only touched under `lock`
    private let lock = NSLock()
    private var result: Swift.Result<(status: Int32, output: String), any Error>?

    func set(_ value: Swift.Result<(status: Int32, output: String), any Error>) { lock.withLock { result = value } }

    func get() throws -> (status: Int32, output: String) {
        guard let result = lock.withLock({ result }) else { throw BenchmarkError("a child process's run ended without an outcome") }
        return try result.get()
    }
}
