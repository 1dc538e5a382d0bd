import ArgumentParser
import FaultlineShell
import Foundation

/// `faultline [--model PATH] STORE [-c COMMAND]…`: opens a Core Data store in the shell.
struct Faultline: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "faultline",
        abstract: "Open a Core Data SQLite store, fetch with predicates, and see the SQL behind every operation."
    )

    @Argument(help: "The Core Data store (.sqlite) to open.")
    var store: String

    @Option(name: .long, help: "The model: an .xcdatamodeld, .xcdatamodel or compiled .momd/.mom (default: the one beside the store).")
    var model: String?

    @Flag(name: .long, help: "Open the store for writing (the default is read-only).")
    var write = false

    @Option(name: .customLong("sql-debug"), help: "SQL log level 0–4, as -com.apple.CoreData.SQLDebug.")
    var sqlDebug: Int = 1

    @Option(name: .customShort("c"), help: "Run this command and exit (may be repeated).")
    var command: [String] = []

    @Flag(name: .long, help: "In a script, go on after a failing command.")
    var keepGoing = false

    func validate() throws {
        guard (0...4).contains(sqlDebug) else { throw ValidationError("--sql-debug must be from 0 to 4") }
    }

    func run() throws {
        let shell: Shell
        do {
            shell = try Shell(storePath: store, modelPath: model, writable: write, sqlDebugLevel: sqlDebug, output: .standard)
        } catch {
            FileHandle.standardError.write(Data("Error: \(error)\n".utf8))
            throw ExitCode(1)
        }
        let status = command.isEmpty
            ? ShellRunner.runStandardInput(shell: shell, keepGoing: keepGoing)
            : ShellRunner.run(commands: command, shell: shell, keepGoing: keepGoing)
        if status != 0 { throw ExitCode(status) }
    }
}

Faultline.main()
