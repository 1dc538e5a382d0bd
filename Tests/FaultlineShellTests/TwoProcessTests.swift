import FaultlineTestSupport
import Foundation
import Testing

/// A `faultline` process driven through pipes, one command at a time, as another program
/// would drive it: each answer is read before the next command is sent.
final class PipedShell: @unchecked Sendable {  // its buffers are guarded by `lock`
    private let child: Subprocess
    private let lock = NSLock()
    private let finished = DispatchGroup()
    private var out = ""
    private var err = ""

    init(_ arguments: [String]) throws {
        child = try Subprocess(
            TestSupport.faultlineBinary.path, arguments, environment: ProcessInfo.processInfo.environment,
            currentDirectory: TestSupport.packageRoot.path)
        for (fd, isOutput) in [(child.standardOutput, true), (child.standardError, false)] {
            guard let fd else { continue }
            finished.enter()
            Thread.detachNewThread { [self] in
                Subprocess.readToEnd(fd) { chunk in
                    let text = String(decoding: chunk, as: UTF8.self)
                    lock.withLock { if isOutput { out += text } else { err += text } }
                }
                finished.leave()
            }
        }
    }

    /// Sends one command and waits until the standard output or error contains `expected`.
    @discardableResult
    func send(_ command: String, expect expected: String, seconds: Double = 10) throws -> (out: String, err: String) {
        lock.withLock { out = ""; err = "" }
        child.write(Data((command + "\n").utf8))
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            let (o, e) = lock.withLock { (out, err) }
            if o.contains(expected) || e.contains(expected) { return (o, e) }
            Thread.sleep(forTimeInterval: 0.01)
        }
        let (o, e) = lock.withLock { (out, err) }
        Issue.record("\(command): never answered \(expected.debugDescription); stdout: \(o) stderr: \(e)")
        throw CancellationError()
    }

    /// Ends the shell's input and waits for it to exit; kills it if it has not after 10 s.
    func close() {
        child.closeInput()
        if finished.wait(timeout: .now() + .seconds(10)) == .timedOut {
            Issue.record("faultline did not exit after its input ended")
            kill(child.pid, SIGKILL)
        }
        child.wait()
    }
}

/// Two `faultline` processes editing one store: optimistic locking across processes.
@Suite struct TwoProcessTests {
    @Test func aSaveOverAnotherProcessesChangeIsAConflictAndNothingIsLost() throws {
        let store = try ShellHarness.writableCopy(of: "Inventory")
        defer { try? FileManager.default.removeItem(at: store.deletingLastPathComponent()) }
        let first = try PipedShell([store.path, "--write", "--sql-debug", "0", "--keep-going"])
        let second = try PipedShell([store.path, "--write", "--sql-debug", "0", "--keep-going"])
        defer { first.close(); second.close() }

        try first.send("fetch Location where label == 'Garage'", expect: "1 row")
        try second.send("fetch Location where label == 'Garage'", expect: "1 row")
        try first.send("set $1.label = \"Carport\"", expect: "$1.label = Carport")
        try second.send("set $1.label = \"Workshop\"", expect: "$1.label = Workshop")
        try second.send("save", expect: "saved: 0 inserted, 1 updated, 0 deleted")
        let conflict = try first.send("save", expect: "merge conflict")
        #expect(conflict.err.contains("merge conflict (1 object changed in the store since read)"))
        #expect(conflict.err.contains("Location"))
        // The first process still holds its change; after a rollback it sees the other's.
        try first.send("changes", expect: "| updated | Location | label = Carport |")
        try first.send("rollback", expect: "rolled back")
        try first.send("refresh $1", expect: "is a fault again")
        try first.send("$1.label", expect: "Workshop")
        // The other process's save is in the file.
        let check = try PipedShell([store.path, "--sql-debug", "0"])
        defer { check.close() }
        try check.send("count Location where label == 'Workshop'", expect: "1\n")
    }
}
