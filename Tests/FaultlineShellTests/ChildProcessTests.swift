import FaultlineTestSupport
import Foundation
import Glibc
import Subprocess
import SystemPackage
import Testing

/// What the tests rely on when they start a child (`TestSupport.run`, swift-subprocess): see
/// Tests/FaultlineTestSupport/ChildProcesses.swift and Documentation/Reliability.md.
@Suite struct ChildProcessTests {
    static func sh(_ script: String, stdin: String = "") async throws -> TestSupport.ProcessResult {
        try await TestSupport.run(URL(fileURLWithPath: "/bin/sh"), ["-c", script], stdin: stdin)
    }

    @Test func childrenThatExitAtOnceAreAllSeenToExit() async throws {
        // The lost-SIGCHLD hang: a child that exits before anyone waits for it.
        for _ in 0..<100 {
            #expect(try await TestSupport.run(URL(fileURLWithPath: "/bin/true"), [], stdin: "unread input").status == 0)
        }
        #expect(try await Self.sh("exit 3").status == 3)
    }

    @Test func aChildKilledByASignalIsReportedAs128PlusTheSignal() async throws {
        #expect(try await Self.sh("kill -KILL $$").status == 128 + SIGKILL)
        #expect(try await Self.sh("kill -TERM $$").status == 128 + SIGTERM)
    }

    @Test func aChildStartsWithNoSignalBlockedOrIgnored() async throws {
        // The test process ignores SIGPIPE and its threads block signals; the child must not.
        let status = try await TestSupport.run(URL(fileURLWithPath: "/bin/cat"), ["/proc/self/status"]).stdout
        func mask(_ name: String) -> UInt64? {
            status.split(separator: "\n").first { $0.hasPrefix(name + ":") }.flatMap { UInt64($0.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces), radix: 16) }
        }
        #expect(mask("SigBlk") == 0, "\(status)")
        // Signals 1 to 31 (glibc keeps its own two real-time signals, 32 and 33, to itself).
        #expect(mask("SigIgn").map { $0 & 0x7fff_ffff } == 0, "\(status)")
    }

    @Test func aChildInheritsOnlyItsThreeStandardStreams() async throws {
        let result = try await TestSupport.run(URL(fileURLWithPath: "/bin/ls"), ["/proc/self/fd"])
        // ls's own listing adds the directory it reads (3).
        #expect(result.stdout.split(separator: "\n").sorted() == ["0", "1", "2", "3"], "\(result.stdout)")
    }

    @Test func largeOutputOnBothStreamsAndLargeInputDoNotDeadlock() async throws {
        let input = String(repeating: "0123456789abcdef\n", count: 200_000)  // 3.4 MB
        let result = try await Self.sh("head -c 4000000 /dev/zero | tr '\\0' o; cat >&2", stdin: input)
        #expect(result.status == 0)
        #expect(result.stdout.utf8.count == 4_000_000)
        #expect(result.stderr == input)
    }

    @Test func aGrandchildHoldingThePipesOpenDoesNotKeepTheRunWaiting() async throws {
        // The background `sleep` keeps the child's standard output and error open after the
        // child exits; the run must return while it still runs, not when the pipe closes.
        // (600 s: the test's own waits can be stretched by tens of seconds when synchronous
        // tests hold the cooperative pool, and the grandchild must outlive them.)
        let result = try await Self.sh("sleep 600 & echo $!")
        let grandchild = try #require(pid_t(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(kill(grandchild, 0) == 0, "the run waited for the grandchild to end")
        kill(grandchild, SIGKILL)
    }

    @Test func aRunningChildKilledFromHereIsReportedAsKilled() async throws {
        let run = try await Subprocess.run(.path("/bin/sleep"), arguments: ["infinity"], input: .none, output: .discarded, error: .discarded) { execution in
            try execution.send(signal: .kill)
        }
        #expect(TestSupport.shellStatus(run.terminationStatus) == 128 + SIGKILL)
    }

    @Test func noChildIsLeftAZombie() async throws {
        for script in ["echo $$", "echo $$; exit 4", "echo $$; kill -KILL $$"] {
            let run = try await Self.sh(script)
            let pid = try #require(pid_t(run.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
            // Reaped: no such process any more (a zombie would still take signal 0).
            #expect(kill(pid, 0) == -1 && errno == ESRCH, "\(script): \(pid) is still there")
        }
    }
}
