import FaultlineTestSupport
import Foundation
import Subprocess
import SystemPackage
import Testing

/// The shell at a real terminal, typed as a person would: tmux runs `faultline`, `send-keys`
/// types, `capture-pane` reads the screen. Each step waits for the text it expects (polling,
/// with a deadline) rather than for a fixed time.
final class TmuxSession {
    let name = "faultline-test-\(UUID().uuidString.prefix(8))"
    let home: URL

    private init(home: URL) { self.home = home }

    /// Starts `faultline` with `arguments` in a detached tmux session of its own.
    static func start(arguments: [String], home: URL, columns: Int = 160) async throws -> TmuxSession {
        let session = TmuxSession(home: home)
        let command = (["env", "HOME=\(home.path)", "NO_COLOR=1", TestSupport.faultlineBinary.path] + arguments)
            .map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        // The tmux server this starts keeps whatever it inherits open, so it gets /dev/null,
        // not pipes that a reader waits to see closed.
        let client = try await Subprocess.run(
            .path("/usr/bin/env"),
            arguments: ["tmux", "-L", session.name, "new-session", "-d", "-s", session.name, "-x", String(columns), "-y", "50", "-c", TestSupport.packageRoot.path, command],
            input: .none, output: .discarded, error: .discarded)
        guard client.terminationStatus.isSuccess else {
            Issue.record("tmux new-session ended with \(client.terminationStatus)")
            throw CancellationError()
        }
        return session
    }

    @discardableResult
    func tmux(_ arguments: [String]) async throws -> String {
        try await TestSupport.run(URL(fileURLWithPath: "/usr/bin/env"), ["tmux", "-L", name] + arguments).stdout
    }

    /// Types keys (tmux key names such as `Enter`, `Tab`, `C-c`, `Up`; other words literally).
    func send(_ keys: String...) async throws { try await tmux(["send-keys", "-t", name] + keys) }

    func screen() async throws -> String { try await tmux(["capture-pane", "-p", "-t", name]) }

    /// Waits until the screen contains `text`; fails with the screen when the deadline passes.
    /// The screen is read once more after the deadline: a wait the cooperative pool stretched
    /// past it is not the shell's silence.
    func waitFor(_ text: String, seconds: Double = 30) async throws {
        let deadline = ContinuousClock.now + .seconds(seconds)
        var shown = ""
        while true {
            let expired = ContinuousClock.now >= deadline
            shown = try await screen()
            if shown.contains(text) { return }
            if expired { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        Issue.record("the screen never showed \(text.debugDescription); it shows:\n\(shown)")
        throw CancellationError()
    }

    /// Ends the session and its tmux server (each session has a server of its own, on its own
    /// socket, so a test never meets a user's tmux or one left by another run).
    func close() async { _ = try? await tmux(["kill-server"]) }

    /// Runs `body` with this session, then closes it, also when `body` throws.
    func use(_ body: (TmuxSession) async throws -> Void) async throws {
        do {
            try await body(self)
        } catch {
            await close()
            throw error
        }
        await close()
    }
}

@Suite(.serialized, .enabled(if: TestSupport.hasCommand("tmux") || TestSupport.isCI, "skipped: the terminal tests need tmux (apt-get install tmux)"))
struct TerminalTests {
    /// Runs `body` with a shell on the Recipes sample at a terminal, in a fresh home folder
    /// (its history file), then closes both.
    func withShell(columns: Int = 160, _ body: (TmuxSession) async throws -> Void) async throws {
        let home = try TestSupport.temporaryDirectory("home")
        defer { try? FileManager.default.removeItem(at: home) }
        try await start(home, columns: columns).use(body)
    }

    func start(_ home: URL, columns: Int = 160) async throws -> TmuxSession {
        let session = try await TmuxSession.start(arguments: ["Samples/Recipes/Recipes.sqlite", "--sql-debug", "0"], home: home, columns: columns)
        do {
            // capture-pane drops trailing spaces, so the prompt shows as `faultline>`.
            try await session.waitFor("faultline>")
        } catch {
            await session.close()
            throw error
        }
        return session
    }

    @Test func resultsAreCutToTheTerminalsWidthAndFollowItsResizing() async throws {
        try await withShell(columns: 60) { t in
            try await t.send("fetch Recipe sort by name limit 2", "Enter")
            try await t.waitFor("2 rows")
            let narrow = try await t.screen().split(separator: "\n").map(String.init)
            #expect(narrow.allSatisfy { $0.count <= 60 }, "\(narrow.joined(separator: "\n"))")
            #expect(narrow.contains { $0.hasPrefix("| $1 ") && $0.contains("…") && $0.count == 60 }, "\(narrow.joined(separator: "\n"))")
            try await t.tmux(["resize-window", "-t", t.name, "-x", "150"])
            try await t.send(".show", "Enter")
            try await t.waitFor("width        auto")
            try await t.send("fetch Recipe sort by name limit 1 show name, overview, instructions, prepTime, type.name", "Enter")
            try await t.waitFor("1 row")
            // At 150 columns nothing needs cutting.
            let wide = try await t.screen()
            #expect(wide.contains("| $1 | Beef Bourguignon | Beef braised in red wine. | nil          | 3 hours  | Entree    |"), "\(wide)")
        }
    }

    @Test func tabCompletesEntitiesAndKeyPathsThroughRelationships() async throws {
        try await withShell { t in
            try await t.send("fetch RecipeT", "Tab")
            try await t.waitFor("faultline> fetch RecipeType")
            try await t.send("limit 1", "Enter")
            try await t.waitFor("1 row")
            try await t.send("$1.reci", "Tab")
            try await t.waitFor("faultline> $1.recipes")
            try await t.send(".na", "Tab")
            try await t.waitFor("faultline> $1.recipes.name")
            try await t.send("Enter")
            try await t.waitFor("| recipes.name")
        }
    }

    @Test func aCompletedRelationshipTakesNoSpaceSoTheKeyPathGoesOn() async throws {
        try await withShell { t in
            try await t.send("fetch Recipe limit 2 show ty", "Tab")
            try await t.waitFor("faultline> fetch Recipe limit 2 show type")
            // (capture-pane drops trailing spaces: the space shows once more is typed.)
            try await t.send(".na", "Tab")
            try await t.waitFor("show type.name")
            try await t.send("sort by na", "Tab")
            try await t.waitFor("show type.name sort by name")
            try await t.send("Enter")
            try await t.waitFor("| type.name")
        }
    }

    @Test func anOpenParenthesisContinuesOnTheNextLine() async throws {
        try await withShell { t in
            try await t.send("fetch Recipe where (name BEGINSWITH \"Gu\"", "Enter")
            try await t.waitFor("      ...>")
            try await t.send(") show name", "Enter")
            try await t.waitFor("| Guacamole |")
        }
    }

    @Test func ctrlCStopsARunningQueryAndNeverTheShell() async throws {
        try await withShell { t in
            try await t.send("fetch Recipe where name ==")
            try await t.waitFor("faultline> fetch Recipe where name ==")
            try await t.send("C-c", "C-u", "count Recipe", "Enter")
            try await t.waitFor("\n16\n")
            try await t.send(".raw WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c", "Enter")
            // A Ctrl-C that comes before the query runs is lost: the shell clears its interrupt
            // flag as it starts a command, and an interrupt before SQLite steps does nothing.
            // On a loaded machine the first one can come that early, so it is sent again until
            // the shell says it stopped the query (it prints "Interrupted." only then).
            var stopped = false
            for _ in 0..<40 where !stopped {
                try await Task.sleep(for: .milliseconds(300))
                try await t.send("C-c")
                try await Task.sleep(for: .milliseconds(200))
                stopped = try await t.screen().contains("Interrupted.")
            }
            try await t.waitFor("Interrupted.")
            try await t.send("count RecipeType", "Enter")
            try await t.waitFor("\n12\n")
        }
    }

    @Test func quitWithUnsavedChangesAsksFirst() async throws {
        try await withShell { t in
            try await t.send("insert RecipeType name = \"Picnic\"", "Enter")
            try await t.waitFor("$1 <RecipeType")
            try await t.send(".quit", "Enter")
            try await t.waitFor("There are unsaved changes (1 inserted, 0 updated, 0 deleted). Quit without saving? [y/N]")
            try await t.send("n", "Enter")
            // Still in the shell, and the count includes the unsaved insert.
            try await t.send("count RecipeType", "Enter")
            try await t.waitFor("\n13\n")
        }
    }

    @Test func ctrlDWithUnsavedChangesAsksFirstAndOpenAsksToo() async throws {
        try await withShell { t in
            try await t.send("insert RecipeType name = \"Picnic\"", "Enter")
            try await t.waitFor("$1 <RecipeType")
            try await t.send(".open Samples/Inventory/Inventory.sqlite", "Enter")
            try await t.waitFor("There are unsaved changes (1 inserted, 0 updated, 0 deleted). .open Samples/Inventory/Inventory.sqlite and lose them? [y/N]")
            try await t.send("n", "Enter")
            try await t.waitFor("would lose them")
            try await t.send("C-d")
            try await t.waitFor("Quit without saving? [y/N]")
            try await t.send("n", "Enter")
            try await t.send("count RecipeType", "Enter")
            try await t.waitFor("\n13\n")
        }
    }

    @Test func aHistoryFileThatIsAFIFOIsLeftAloneNotWaitedOn() async throws {
        let home = try TestSupport.temporaryDirectory("home")
        defer { try? FileManager.default.removeItem(at: home) }
        #expect(mkfifo(home.appendingPathComponent(".faultline_history").path, 0o600) == 0)
        try await start(home).use { t in
            try await t.waitFor("is a FIFO (named pipe): no command history this session")
            try await t.send("count Recipe", "Enter")
            try await t.waitFor("\n16\n")
        }
    }

    /// The history file in `home` ("" when there is none yet).
    private func history(in home: URL) -> String {
        (try? String(contentsOf: home.appendingPathComponent(".faultline_history"), encoding: .utf8)) ?? ""
    }

    @Test func historyIsKeptAcrossRestarts() async throws {
        let home = try TestSupport.temporaryDirectory("home")
        defer { try? FileManager.default.removeItem(at: home) }
        try await start(home).use { first in
            try await first.send("count Ingredient", "Enter")
            try await first.waitFor("\n50\n")
            try await first.send(".quit", "Enter")
            // The shell writes its history as each command is given, `.quit` too: waited for
            // before the session is closed, so that closing never cuts that write short (a
            // loaded machine can take seconds).
            for _ in 0..<300 where !history(in: home).contains(".quit") {
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        let saved = history(in: home)
        #expect(saved.contains("count\\040Ingredient") || saved.contains("count Ingredient"), "\(saved)")
        try await start(home).use { second in
            try await second.send("Up", "Up")
            try await second.waitFor("faultline> count Ingredient")
        }
    }
}
