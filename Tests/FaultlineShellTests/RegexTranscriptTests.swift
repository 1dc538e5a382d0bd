import FaultlineSQL
import FaultlineTestSupport
import Foundation
import Testing

/// `MATCHES` in the shell: the defect's count is 1, and a pattern the engine cannot decide
/// is an error on stderr with a failing status, not a count of 0.
@Suite struct RegexTranscriptTests {
    @Test func matchesIsDecidedOrTheCommandFails() async throws {
        let folder = try TestSupport.temporaryDirectory("faultline-regex-shell")
        let store = folder.appendingPathComponent("Inventory.sqlite")
        try FileManager.default.copyItem(at: TestSupport.inventoryFolder.appendingPathComponent("Inventory.sqlite"), to: store)
        let label = String(repeating: "a", count: 30) + "b"
        do {
            let connection = try Connection(path: store.path, mode: .readWrite)
            try connection.execute("INSERT INTO ZLOCATION(Z_PK, Z_ENT, Z_OPT, ZLABEL) VALUES(?, 3, 1, ?)", [.integer(10), .text(label)])
        }
        let decided = try await TestSupport.faultline([store.path, "--sql-debug", "0", "-c", #"count Location where label MATCHES "(a+)+c|a*b""#])
        #expect(decided.status == 0)
        #expect(decided.stdout == "1\n")
        let undecided = try await TestSupport.faultline([store.path, "--sql-debug", "0", "-c", #"count Location where label MATCHES "(a+)+c|(x)\\2""#])
        #expect(undecided.status != 0)
        #expect(undecided.stdout == "")
        #expect(undecided.stderr.contains(#"MATCHES could not decide whether "\#(label)" matches "(a+)+c|(x)\2" (the regular expression engine gave up"#), "\(undecided.stderr)")
    }
}
