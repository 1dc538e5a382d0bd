import FaultlineTestSupport
import Foundation
import Subprocess
import SystemPackage
import Testing

/// A `faultline` process driven through pipes, one command at a time, as another program
/// would drive it: each answer is read before the next command is sent.
final class PipedShell: Sendable {
    private let input: StandardInputWriter
    private let output = Locked((out: [UInt8](), err: [UInt8]()))

    private init(input: StandardInputWriter) { self.input = input }

    /// Runs `body` with a `faultline` started with `arguments`, then ends the shell's input and
    /// waits for it to exit; kills it if it has not after 60 s, or when `body` throws. (60 s,
    /// not 10: this waits in Swift's cooperative pool, which long synchronous tests can hold
    /// for seconds.)
    @discardableResult
    static func with<Result: Sendable>(_ arguments: [String], _ body: (PipedShell) async throws -> Result) async throws -> Result {
        TestSupport.ignoreBrokenPipes()
        let run = try await Subprocess.run(
            .path(FilePath(TestSupport.faultlineBinary.path)), arguments: Arguments(arguments),
            workingDirectory: FilePath(TestSupport.packageRoot.path),
            input: .inputWriter, output: .sequence, error: .sequence
        ) { execution in
            let shell = PipedShell(input: execution.standardInputWriter)
            let readersDone = Locked(0)
            return try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for try await chunk in execution.standardOutput { shell.append(chunk, error: false) }
                    readersDone.update { $0 += 1 }
                }
                group.addTask {
                    for try await chunk in execution.standardError { shell.append(chunk, error: true) }
                    readersDone.update { $0 += 1 }
                }
                let result: Result
                do {
                    result = try await body(shell)
                } catch {
                    try? execution.send(signal: .kill)
                    throw error
                }
                try await execution.standardInputWriter.finish()
                // The watchdog asks whether both outputs ended rather than whether it was
                // cancelled: its wake-up can be queued behind the readers' last steps.
                group.addTask {
                    try? await Task.sleep(for: .seconds(60))
                    guard readersDone.value < 2 else { return }
                    Issue.record("faultline did not exit after its input ended")
                    try? execution.send(signal: .kill)
                }
                while readersDone.value < 2, try await group.next() != nil {}
                group.cancelAll()
                return result
            }
        }
        return run.closureResult
    }

    private func append(_ chunk: SubprocessOutputSequence.Buffer, error: Bool) {
        let bytes = chunk.withUnsafeBytes { Array($0) }
        output.update { if error { $0.err += bytes } else { $0.out += bytes } }
    }

    /// Sends one command and waits until the standard output or error contains `expected`.
    ///
    /// The wait is counted in this task's own 10 ms turns, `seconds` worth of them (so at
    /// least `seconds` of clock time), not by the clock alone. The readers that fill the
    /// output run in the same cooperative pool, which long synchronous tests can hold for
    /// many seconds on a two-core machine: a clock deadline would call that the shell's
    /// silence (CI saw it once), while turns pass only when the pool runs, the readers'
    /// turns with them.
    @discardableResult
    func send(_ command: String, expect expected: String, seconds: Double = 30) async throws -> (out: String, err: String) {
        output.set((out: [], err: []))
        _ = try await input.write(command + "\n")
        let turns = Int(seconds * 100)
        var text = (out: "", err: "")
        for turn in 0...turns {
            let bytes = output.value
            text = (String(decoding: bytes.out, as: UTF8.self), String(decoding: bytes.err, as: UTF8.self))
            if text.out.contains(expected) || text.err.contains(expected) { return text }
            if turn < turns { try await Task.sleep(for: .milliseconds(10)) }
        }
        Issue.record("\(command): never answered \(expected.debugDescription); stdout: \(text.out) stderr: \(text.err)")
        throw CancellationError()
    }
}

/// Two `faultline` processes editing one store: optimistic locking across processes.
@Suite struct TwoProcessTests {
    @Test func aSaveOverAnotherProcessesChangeIsAConflictAndNothingIsLost() async throws {
        let store = try ShellHarness.writableCopy(of: "Inventory")
        defer { try? FileManager.default.removeItem(at: store.deletingLastPathComponent()) }
        let writer = [store.path, "--write", "--sql-debug", "0", "--keep-going"]
        try await PipedShell.with(writer) { first in
            try await PipedShell.with(writer) { second in
                try await first.send("fetch Location where label == 'Garage'", expect: "1 row")
                try await second.send("fetch Location where label == 'Garage'", expect: "1 row")
                try await first.send("set $1.label = \"Carport\"", expect: "$1.label = Carport")
                try await second.send("set $1.label = \"Workshop\"", expect: "$1.label = Workshop")
                try await second.send("save", expect: "saved: 0 inserted, 1 updated, 0 deleted")
                let conflict = try await first.send("save", expect: "merge conflict")
                #expect(conflict.err.contains("merge conflict (1 object changed in the store since read)"))
                #expect(conflict.err.contains("Location"))
                // The first process still holds its change; after a rollback it sees the other's.
                try await first.send("changes", expect: "| updated | Location | label = Carport |")
                try await first.send("rollback", expect: "rolled back")
                try await first.send("refresh $1", expect: "is a fault again")
                try await first.send("$1.label", expect: "Workshop")
                // The other process's save is in the file.
                try await PipedShell.with([store.path, "--sql-debug", "0"]) { check in
                    try await check.send("count Location where label == 'Workshop'", expect: "1\n")
                }
            }
        }
    }
}
