import FaultlineShell
import FaultlineTestSupport
import Foundation
import Testing

/// The shell under input a hostile user or a broken machine gives it: each test is a defect a
/// probe found (a crash, a hang, a silent loss), run as a user would run it.
@Suite struct HostileInputTests {
    static let inventory = TestSupport.inventoryFolder.appendingPathComponent("Inventory.sqlite")
    static let inventoryModel = TestSupport.inventoryFolder.appendingPathComponent("Inventory.xcdatamodeld")

    /// A copy of the Inventory store alone in a temporary folder.
    static func copyOfInventory() throws -> URL {
        let folder = try TestSupport.temporaryDirectory("hostile")
        let url = folder.appendingPathComponent("s.sqlite")
        try FileManager.default.copyItem(at: inventory, to: url)
        return url
    }

    @Test func aStoreWithUnreadableMetadataOpensReadOnlyAndSaysSo() async throws {
        let url = try Self.copyOfInventory()
        _ = try await TestSupport.run(URL(fileURLWithPath: "/usr/bin/sqlite3"), [url.path, "UPDATE Z_METADATA SET Z_PLIST = NULL"])
        let before = try TestSupport.snapshot(of: url.deletingLastPathComponent())
        let result = try await TestSupport.faultline(
            [url.path, "--model", Self.inventoryModel.path, "--write", "--sql-debug", "0", "-c", #"insert Location label = "x""#, "-c", "save"])
        #expect(result.status == 1)
        #expect(result.stderr.hasPrefix("faultline: warning: \(url.path): the store's metadata (Z_METADATA.Z_PLIST) has no readable NSStoreModelVersionHashes, so the model could not be checked against the store; it was opened read-only: saving is refused\n"))
        #expect(result.stderr.contains("save refused, nothing was written"))
        #expect(try TestSupport.snapshot(of: url.deletingLastPathComponent()) == before)
    }

    @Test func deeplyNestedPredicatesAreAnErrorInEveryCommand() async throws {
        let chain = Array(repeating: "1", count: 1_450).joined(separator: "+")
        let index = "count" + String(repeating: "[0]", count: 2_519)
        for command in ["count Location where count > \(chain)", "explain fetch Inventory where count > \(chain)", "fetch Inventory where \(index) == 1"] {
            let result = try await TestSupport.faultline([Self.inventory.path, "--sql-debug", "0", "-c", command])
            #expect(result.status == 1, "\(command.prefix(30))")
            #expect(result.stderr.contains("nested too deeply"), "\(command.prefix(30))")
        }
        let filter = try await TestSupport.faultline([Self.inventory.path, "--sql-debug", "0", "-c", "fetch Asset limit 1", "-c", "show $1.inventories where count > \(chain)"])
        #expect(filter.status == 1)
        #expect(filter.stderr.contains("nested too deeply"))
    }

    @Test func aFileThatReadsItselfStopsAtTheNestingLimit() async throws {
        let folder = try TestSupport.temporaryDirectory("hostile")
        let script = folder.appendingPathComponent("self.fl")
        try Data(".read \(script.path)\n".utf8).write(to: script)
        let result = try await TestSupport.faultline([Self.inventory.path, "--sql-debug", "0", "-c", ".read \(script.path)"])
        #expect(result.status == 1)
        #expect(result.stderr.contains(".read files are nested 16 deep (does a file read itself?)"))
    }

    @Test func fifosAreRefusedNotWaitedOn() async throws {
        let folder = try TestSupport.temporaryDirectory("hostile")
        let fifo = folder.appendingPathComponent("s.sqlite")
        #expect(mkfifo(fifo.path, 0o600) == 0)
        let model = Self.inventoryModel.path
        let runs: [([String], String)] = [
            ([fifo.path, "--model", model, "-c", "count Location"], "this is a FIFO (named pipe), not a store file: refused"),
            ([fifo.path, "--model", model, "--write", "-c", "count Location"], "this is a FIFO (named pipe), not a store file: refused"),
            (["schema", fifo.path, "--model", model], "this is a FIFO (named pipe), not a store file: refused"),
            ([Self.inventory.path, "--model", fifo.path, "-c", "count Location"], "not a model"),
            ([Self.inventory.path, "-c", ".read \(fifo.path)"], ".read reads a file of commands, and this is a FIFO (named pipe)"),
        ]
        for (arguments, message) in runs {
            let result = try await TestSupport.faultline(arguments)
            #expect(result.status == 1, "\(arguments)")
            #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
        }
        let modelFolder = folder.appendingPathComponent("M.xcdatamodel")
        try FileManager.default.createDirectory(at: modelFolder, withIntermediateDirectories: true)
        #expect(mkfifo(modelFolder.appendingPathComponent("contents").path, 0o600) == 0)
        let result = try await TestSupport.faultline(["model", modelFolder.path])
        #expect(result.status == 1)
        #expect(result.stderr.contains("cannot read a model from a FIFO (named pipe): not a regular file"))
    }

    /// Runs `faultline ARGS REDIRECTION` through the shell, for closed and full descriptors.
    static func faultlineInShell(_ arguments: String, _ redirection: String) async throws -> TestSupport.ProcessResult {
        try await TestSupport.run(
            URL(fileURLWithPath: "/bin/sh"),
            ["-c", "exec '\(TestSupport.faultlineBinary.path)' \(arguments) \(redirection)"])
    }

    @Test func writeErrorsAreErrorsNeverExitZero() async throws {
        let store = "'\(Self.inventory.path)'"
        let closedOut = try await Self.faultlineInShell("\(store) -c 'count Location'", ">&-")
        #expect(closedOut.status == 1)
        #expect(closedOut.stderr.hasSuffix("Error: standard output: write failed: Bad file descriptor\n"))

        let closedErr = try await Self.faultlineInShell("\(store) -c 'count Location'", "2>&-")
        #expect(closedErr.status == 1)
        #expect(closedErr.stdout == "3\nError: standard error: write failed: Bad file descriptor\n")

        let full = try await Self.faultlineInShell("\(store) -c 'count Location' -c 'count Asset'", ">/dev/full")
        #expect(full.status == 1)
        #expect(full.stderr.contains("Error: standard output: write failed: No space left on device"))
        #expect(!full.stderr.contains("ZASSET"), "the script stops at the first failed write")

        let piped = try await Self.faultlineInShell(store, "</dev/null >/dev/full <<'EOF'\ncount Location\nEOF")
        #expect(piped.status == 1)
        #expect(piped.stderr.contains("Error: line 1: standard output: write failed: No space left on device"))

        for command in ["model '\(Self.inventoryModel.path)'", "schema \(store)"] {
            let result = try await Self.faultlineInShell(command, ">/dev/full")
            #expect(result.status == 1, "\(command)")
            #expect(result.stderr.contains("standard output: write failed: No space left on device"), "\(command)")
        }

        // ArgumentParser's own messages go through the same checked writers.
        for command in ["--help", "--version", "model --help"] {
            let result = try await Self.faultlineInShell(command, ">/dev/full")
            #expect(result.status == 1, "\(command)")
            #expect(result.stderr == "Error: standard output: write failed: No space left on device\n", "\(command)")
        }
        let help = try await Self.faultlineInShell("--help", "")
        #expect(help.status == 0)
        #expect(help.stdout.hasPrefix("OVERVIEW: Open a Core Data SQLite store"))
        let usage = try await Self.faultlineInShell("--no-such-option", "")
        #expect(usage.status == 64)
        #expect(usage.stderr.hasPrefix("Error: Unknown option '--no-such-option'"))
    }

    @Test func outputToAFullDeviceIsAnErrorAndResultsComeBack() async throws {
        let result = try await TestSupport.faultline([Self.inventory.path, "--sql-debug", "0", "--keep-going", "-c", ".output /dev/full", "-c", "count Location", "-c", "count Asset"])
        #expect(result.status == 1)
        #expect(result.stderr == "Error: /dev/full: write failed: No space left on device; results go to standard output again\n")
        #expect(result.stdout == "5\n")
        let log = try await TestSupport.faultline([Self.inventory.path, "-c", ".log /dev/full", "-c", "count Location"])
        #expect(log.status == 1)
        #expect(log.stderr == "Error: /dev/full: write failed: No space left on device; the log goes to standard error again\n")
    }

    @Test func rawRefusesAttachAndChangesNoFile() async throws {
        let url = try Self.copyOfInventory()
        let folder = url.deletingLastPathComponent()
        let other = folder.appendingPathComponent("other.db")
        _ = try await TestSupport.run(URL(fileURLWithPath: "/usr/bin/sqlite3"), [other.path, "PRAGMA journal_mode=WAL; CREATE TABLE t(x); INSERT INTO t VALUES(1);"])
        let before = try TestSupport.snapshot(of: folder)
        for sql in ["ATTACH '\(other.path)' AS o", "attach database '\(other.path)' as o; SELECT * FROM o.t", "SELECT 1; /* */ ATTACH '\(other.path)' AS o"] {
            let result = try await TestSupport.faultline([url.path, "--model", Self.inventoryModel.path, "-c", ".raw \(sql)"])
            #expect(result.status == 1, "\(sql)")
            #expect(result.stderr.contains(".raw does not run ATTACH or DETACH"), "\(sql)")
            #expect(result.stdout.isEmpty, "nothing ran: \(sql)")
        }
        #expect(try TestSupport.snapshot(of: folder) == before)
    }

    @Test func rawRunsEveryStatementOrNone() async throws {
        let all = try await TestSupport.faultline([Self.inventory.path, "-c", ".raw SELECT 1 AS one; SELECT COUNT(*) AS n FROM ZLOCATION; -- the end"])
        #expect(all.status == 0)
        #expect(all.stdout == """
            +-----+
            | one |
            +-----+
            | 1   |
            +-----+
            1 row
            +---+
            | n |
            +---+
            | 3 |
            +---+
            1 row

            """)
        let write = try await TestSupport.faultline([Self.inventory.path, "-c", ".raw SELECT 1; DELETE FROM ZLOCATION"])
        #expect(write.status == 1)
        #expect(write.stdout.isEmpty)
        #expect(write.stderr.contains(".raw runs read-only SQL only (DELETE FROM ZLOCATION)"))
        let syntax = try await TestSupport.faultline([Self.inventory.path, "-c", ".raw SELECT 1; SELEC 2"])
        #expect(syntax.status == 1 && syntax.stdout.isEmpty)
        #expect(syntax.stderr.contains("syntax error"))
    }

    @Test func aLineLongerThanTheLimitIsSkippedInBoundedMemory() async throws {
        let folder = try TestSupport.temporaryDirectory("hostile")
        let input = folder.appendingPathComponent("input.txt")
        var data = Data("count Location\n".utf8)
        data.append(Data(repeating: UInt8(ascii: "x"), count: 3 * CommandAccumulator.maximumBytes))
        data.append(Data("\ncount Asset\n".utf8))
        try data.write(to: input)
        let piped = try await Self.faultlineInShell("'\(Self.inventory.path)' --keep-going --sql-debug 0", "< '\(input.path)'")
        #expect(piped.status == 1)
        #expect(piped.stdout == "3\n5\n")
        #expect(piped.stderr == "Error: line 2: a line of \(3 * CommandAccumulator.maximumBytes) bytes is longer than the limit of 1024 KiB: skipped\n")
        let read = try await TestSupport.faultline([Self.inventory.path, "--sql-debug", "0", "-c", ".read \(input.path)"])
        #expect(read.status == 1)
        #expect(read.stdout == "3\n")
        #expect(read.stderr.contains("\(input.path):2: a line longer than the limit of 1024 KiB"))
    }

    @Test func garbageOnStandardInputIsLinearWork() async throws {
        // An unclosed quote used to make every later line rescan all the earlier ones (1 MB of
        // random bytes took 141 s); each line is now scanned once, and a command that grows
        // past the limit is dropped.
        // Bytes that look random (a multiplicative hash of the position), quotes and all.
        let bytes = (0..<(2 * CommandAccumulator.maximumBytes)).map { UInt8(truncatingIfNeeded: ($0 &* 2_654_435_761) >> 13) }
        let folder = try TestSupport.temporaryDirectory("hostile")
        let input = folder.appendingPathComponent("garbage")
        try Data(bytes + Array("\ncount Location\n".utf8)).write(to: input)
        let result = try await Self.faultlineInShell("'\(Self.inventory.path)' --keep-going --sql-debug 0", "< '\(input.path)'")
        #expect(result.status == 1)
        #expect(result.stderr.contains("Error: line"))
    }

    @Test func theAccumulatorJoinsLinesAndDropsOversizedCommands() throws {
        var accumulator = CommandAccumulator()
        #expect(try accumulator.add("fetch Asset where label == \"a") == nil)
        #expect(try accumulator.add("b\" sort by label") == "fetch Asset where label == \"a\nb\" sort by label")
        #expect(accumulator.isEmpty)
        #expect(try accumulator.add("-- a comment with \" a quote") == "-- a comment with \" a quote")
        #expect(try accumulator.add("count Asset where (label == \"\\\"\"") == nil)
        #expect(try accumulator.add(")") == "count Asset where (label == \"\\\"\"\n)")
        #expect(try accumulator.add("\"open") == nil)
        let line = String(repeating: "y", count: 64 * 1024)
        var dropped = false
        for _ in 0..<20 {
            do { _ = try accumulator.add(line) } catch { dropped = true; break }
        }
        #expect(dropped)
        #expect(accumulator.isEmpty)
        #expect(try accumulator.add("count Asset") == "count Asset")
    }

    @Test func longAndFanningKeyPathsAreErrorsNotCrashesOrHangs() async throws {
        // 10,000 components overflowed the stack; 3,000 through to-manys never finished (the
        // values double at every pair of steps).
        let long = Array(repeating: "inventories.asset", count: 5_000).joined(separator: ".")
        let fanning = Array(repeating: "inventories.asset", count: 40).joined(separator: ".") + ".label"
        let result = try await TestSupport.faultline([Self.inventory.path, "--sql-debug", "0", "--keep-going"], stdin: """
            fetch Asset where label == "Laptop"
            $1.\(long)
            fetch Asset show \(fanning)
            count Asset where %K == 1
            """)
        #expect(result.status == 1)
        #expect(result.stderr.contains("Error: line 2: the key path has 10000 components, more than 100"), "\(result.stderr)")
        #expect(result.stderr.contains("Error: line 3: \(fanning) reaches more than 100000 objects"), "\(result.stderr)")
    }
}
