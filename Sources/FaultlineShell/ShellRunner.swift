import CFaultlineEditLine
import Foundation

/// Drives a ``Shell`` from a terminal (libedit, history, prompt) or from a script (lines from a
/// pipe, no prompt, stop at the first error unless asked to keep going).
public enum ShellRunner {
    /// Runs commands given with `-c`; returns the exit status.
    public static func run(commands: [String], shell: Shell, keepGoing: Bool) -> Int32 {
        var status: Int32 = 0
        for command in commands {
            if !execute(command, shell: shell) {
                status = 1
                if !keepGoing { return status }
            }
            if shell.didQuit { break }
        }
        return status
    }

    /// Runs lines read from standard input; a terminal gets a prompt and line editing.
    public static func runStandardInput(shell: Shell, keepGoing: Bool) -> Int32 {
        if isatty(STDIN_FILENO) != 0 {
            return runInteractive(shell: shell)
        }
        var status: Int32 = 0
        while let line = readLine(strippingNewline: true) {
            if !execute(line, shell: shell) {
                status = 1
                if !keepGoing { return status }
            }
            if shell.didQuit { break }
        }
        return status
    }

    /// Runs one line; reports an error on standard error and returns false when it fails.
    static func execute(_ line: String, shell: Shell) -> Bool {
        do {
            try shell.run(line: line)
            return true
        } catch {
            FileHandle.standardError.write(Data("Error: \(error)\n".utf8))
            return false
        }
    }

    static var historyPath: String {
        let home = ProcessInfo.processInfo.environment["HOME"] ?? NSHomeDirectory()
        return home + "/.faultline_history"
    }

    static func runInteractive(shell: Shell) -> Int32 {
        let history = historyPath
        using_history()
        read_history(history)
        while !shell.didQuit {
            guard let cLine = readline("faultline> ") else {
                FileHandle.standardOutput.write(Data("\n".utf8))
                break
            }
            let line = String(cString: cLine)
            free(cLine)
            if !line.trimmingCharacters(in: .whitespaces).isEmpty {
                add_history(line)
                write_history(history)
            }
            _ = execute(line, shell: shell)
        }
        return 0
    }
}
