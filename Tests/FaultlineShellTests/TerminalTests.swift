import FaultlineTestSupport
import Foundation
import Testing

/// The shell at a real terminal, typed as a person would: tmux runs `faultline`, `send-keys`
/// types, `capture-pane` reads the screen. Each step waits for the text it expects (polling,
/// with a deadline) rather than for a fixed time.
final class TmuxSession {
    let name = "faultline-test-\(UUID().uuidString.prefix(8))"
    let home: URL

    init(arguments: [String], home: URL, columns: Int = 160) throws {
        self.home = home
        let command = (["env", "HOME=\(home.path)", "NO_COLOR=1", TestSupport.faultlineBinary.path] + arguments)
            .map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        // The tmux server this starts keeps whatever it inherits open, so it gets /dev/null,
        // not pipes that a reader waits to see closed.
        let client = try Subprocess(
            "/usr/bin/env",
            ["tmux", "-L", name, "new-session", "-d", "-s", name, "-x", String(columns), "-y", "50", "-c", TestSupport.packageRoot.path, command],
            environment: ProcessInfo.processInfo.environment, stdin: .null, stdout: .null, stderr: .null)
        let status = client.wait()
        if status != 0 { throw Subprocess.SpawnError(description: "tmux new-session exited with \(status)") }
    }

    @discardableResult
    func tmux(_ arguments: [String]) throws -> String {
        try TestSupport.run(URL(fileURLWithPath: "/usr/bin/env"), ["tmux", "-L", name] + arguments).stdout
    }

    /// Types keys (tmux key names such as `Enter`, `Tab`, `C-c`, `Up`; other words literally).
    func send(_ keys: String...) throws { try tmux(["send-keys", "-t", name] + keys) }

    func screen() throws -> String { try tmux(["capture-pane", "-p", "-t", name]) }

    /// Waits until the screen contains `text`; fails with the screen when the deadline passes.
    func waitFor(_ text: String, seconds: Double = 10) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if try screen().contains(text) { return }
            Thread.sleep(forTimeInterval: 0.05)
        }
        Issue.record("the screen never showed \(text.debugDescription); it shows:\n\(try screen())")
        throw CancellationError()
    }

    /// Ends the session and its tmux server (each session has a server of its own, on its own
    /// socket, so a test never meets a user's tmux or one left by another run).
    func close() { _ = try? tmux(["kill-server"]) }
}

@Suite(.serialized, .enabled(if: TestSupport.hasCommand("tmux") || TestSupport.isCI, "skipped: the terminal tests need tmux (apt-get install tmux)"))
struct TerminalTests {
    /// Runs `body` with a shell on the Recipes sample at a terminal, in a fresh home folder
    /// (its history file), then closes both.
    func withShell(columns: Int = 160, _ body: (TmuxSession) throws -> Void) throws {
        let home = try TestSupport.temporaryDirectory("home")
        defer { try? FileManager.default.removeItem(at: home) }
        let t = try start(home, columns: columns)
        defer { t.close() }
        try body(t)
    }

    func start(_ home: URL, columns: Int = 160) throws -> TmuxSession {
        let session = try TmuxSession(arguments: ["Samples/Recipes/Recipes.sqlite", "--sql-debug", "0"], home: home, columns: columns)
        do {
            // capture-pane drops trailing spaces, so the prompt shows as `faultline>`.
            try session.waitFor("faultline>")
        } catch {
            session.close()
            throw error
        }
        return session
    }

    @Test func resultsAreCutToTheTerminalsWidthAndFollowItsResizing() throws {
        try withShell(columns: 60) { t in
            try t.send("fetch Recipe sort by name limit 2", "Enter")
            try t.waitFor("2 rows")
            let narrow = try t.screen().split(separator: "\n").map(String.init)
            #expect(narrow.allSatisfy { $0.count <= 60 }, "\(narrow.joined(separator: "\n"))")
            #expect(narrow.contains { $0.hasPrefix("| $1 ") && $0.contains("…") && $0.count == 60 }, "\(narrow.joined(separator: "\n"))")
            try t.tmux(["resize-window", "-t", t.name, "-x", "150"])
            try t.send(".show", "Enter")
            try t.waitFor("width        auto")
            try t.send("fetch Recipe sort by name limit 1 show name, overview, instructions, prepTime, type.name", "Enter")
            try t.waitFor("1 row")
            // At 150 columns nothing needs cutting.
            let wide = try t.screen()
            #expect(wide.contains("| $1 | Beef Bourguignon | Beef braised in red wine. | nil          | 3 hours  | Entree    |"), "\(wide)")
        }
    }

    @Test func tabCompletesEntitiesAndKeyPathsThroughRelationships() throws {
        try withShell { t in
            try t.send("fetch RecipeT", "Tab")
            try t.waitFor("faultline> fetch RecipeType")
            try t.send("limit 1", "Enter")
            try t.waitFor("1 row")
            try t.send("$1.reci", "Tab")
            try t.waitFor("faultline> $1.recipes")
            try t.send(".na", "Tab")
            try t.waitFor("faultline> $1.recipes.name")
            try t.send("Enter")
            try t.waitFor("| recipes.name")
        }
    }

    @Test func aCompletedRelationshipTakesNoSpaceSoTheKeyPathGoesOn() throws {
        try withShell { t in
            try t.send("fetch Recipe limit 2 show ty", "Tab")
            try t.waitFor("faultline> fetch Recipe limit 2 show type")
            // (capture-pane drops trailing spaces: the space shows once more is typed.)
            try t.send(".na", "Tab")
            try t.waitFor("show type.name")
            try t.send("sort by na", "Tab")
            try t.waitFor("show type.name sort by name")
            try t.send("Enter")
            try t.waitFor("| type.name")
        }
    }

    @Test func anOpenParenthesisContinuesOnTheNextLine() throws {
        try withShell { t in
            try t.send("fetch Recipe where (name BEGINSWITH \"Gu\"", "Enter")
            try t.waitFor("      ...>")
            try t.send(") show name", "Enter")
            try t.waitFor("| Guacamole |")
        }
    }

    @Test func ctrlCStopsARunningQueryAndNeverTheShell() throws {
        try withShell { t in
            try t.send("fetch Recipe where name ==")
            try t.waitFor("faultline> fetch Recipe where name ==")
            try t.send("C-c", "C-u", "count Recipe", "Enter")
            try t.waitFor("\n16\n")
            try t.send(".raw WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c", "Enter")
            Thread.sleep(forTimeInterval: 0.3)
            try t.send("C-c")
            try t.waitFor("Interrupted.")
            try t.send("count RecipeType", "Enter")
            try t.waitFor("\n12\n")
        }
    }

    @Test func quitWithUnsavedChangesAsksFirst() throws {
        try withShell { t in
            try t.send("insert RecipeType name = \"Picnic\"", "Enter")
            try t.waitFor("$1 <RecipeType")
            try t.send(".quit", "Enter")
            try t.waitFor("There are unsaved changes (1 inserted, 0 updated, 0 deleted). Quit without saving? [y/N]")
            try t.send("n", "Enter")
            // Still in the shell, and the count includes the unsaved insert.
            try t.send("count RecipeType", "Enter")
            try t.waitFor("\n13\n")
        }
    }

    @Test func ctrlDWithUnsavedChangesAsksFirstAndOpenAsksToo() throws {
        try withShell { t in
            try t.send("insert RecipeType name = \"Picnic\"", "Enter")
            try t.waitFor("$1 <RecipeType")
            try t.send(".open Samples/Inventory/Inventory.sqlite", "Enter")
            try t.waitFor("There are unsaved changes (1 inserted, 0 updated, 0 deleted). .open Samples/Inventory/Inventory.sqlite and lose them? [y/N]")
            try t.send("n", "Enter")
            try t.waitFor("would lose them")
            try t.send("C-d")
            try t.waitFor("Quit without saving? [y/N]")
            try t.send("n", "Enter")
            try t.send("count RecipeType", "Enter")
            try t.waitFor("\n13\n")
        }
    }

    @Test func aHistoryFileThatIsAFIFOIsLeftAloneNotWaitedOn() throws {
        let home = try TestSupport.temporaryDirectory("home")
        defer { try? FileManager.default.removeItem(at: home) }
        #expect(mkfifo(home.appendingPathComponent(".faultline_history").path, 0o600) == 0)
        let t = try start(home)
        defer { t.close() }
        try t.waitFor("is a FIFO (named pipe): no command history this session")
        try t.send("count Recipe", "Enter")
        try t.waitFor("\n16\n")
    }

    @Test func historyIsKeptAcrossRestarts() throws {
        let home = try TestSupport.temporaryDirectory("home")
        defer { try? FileManager.default.removeItem(at: home) }
        let first = try start(home)
        try first.send("count Ingredient", "Enter")
        try first.waitFor("\n50\n")
        try first.send(".quit", "Enter")
        Thread.sleep(forTimeInterval: 0.2)
        first.close()
        let history = try String(contentsOf: home.appendingPathComponent(".faultline_history"), encoding: .utf8)
        #expect(history.contains("count\\040Ingredient") || history.contains("count Ingredient"))
        let second = try start(home)
        defer { second.close() }
        try second.send("Up", "Up")
        try second.waitFor("faultline> count Ingredient")
    }
}
