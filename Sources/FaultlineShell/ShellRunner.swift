import CFaultlineEditLine
import CFaultlineSQLite
import FaultlineModel
import Foundation

/// Drives a ``Shell`` from a terminal (libedit: prompt, editing, history, completion, Ctrl-C)
/// or from a script (lines from a pipe or `-c`: no prompt, stop at the first error unless
/// asked to keep going).
public enum ShellRunner {
    /// Runs commands given with `-c`; returns the exit status.
    public static func run(commands: [String], shell: Shell, keepGoing: Bool) -> Int32 {
        // --keep-going is `.bail off` from the start; a script may change it.
        if keepGoing { shell.bail = false }
        var status: Int32 = 0
        for command in commands {
            if !execute(command, shell: shell, location: nil) {
                status = 1
                if shell.bail || shell.standardStreamFailure != nil { return max(status, unsavedChangesStatus(shell, keepGoing: !shell.bail)) }
            }
            if shell.didQuit { break }
        }
        return max(status, unsavedChangesStatus(shell, keepGoing: !shell.bail))
    }

    /// Writes a message to standard error, or to standard output when standard error
    /// cannot be written.
    public static func report(_ message: String) {
        TextOutput.standardError.writeLine(message)
        if TextOutput.standardError.failure != nil { TextOutput.standardOutput.writeLine(message) }
    }

    /// 1 when a write to standard output or standard error failed (said on the other
    /// stream, if it still works, unless `reported`), else `status`.
    public static func finalStatus(_ status: Int32, reported: Bool = false) -> Int32 {
        guard let failure = TextOutput.standardOutput.failure ?? TextOutput.standardError.failure else { return status }
        if !reported { report("Error: \(failure)") }
        return 1
    }

    /// A script that ends with changes it did not save says so; that is a failure (status 1)
    /// unless the script was asked to keep going.
    static func unsavedChangesStatus(_ shell: Shell, keepGoing: Bool) -> Int32 {
        guard let summary = shell.unsavedChangesSummary else { return 0 }
        report("faultline: warning: the script ended with unsaved changes (\(summary)); they were not written")
        return keepGoing ? 0 : 1
    }

    /// Runs lines read from standard input; a terminal gets a prompt and line editing.
    public static func runStandardInput(shell: Shell, keepGoing: Bool) -> Int32 {
        if isatty(STDIN_FILENO) != 0 {
            return runInteractive(shell: shell)
        }
        if keepGoing { shell.bail = false }
        let status = runScript(shell: shell)
        return max(status, unsavedChangesStatus(shell, keepGoing: !shell.bail))
    }

    /// The lines of standard input as a script: each command as soon as it is complete.
    static func runScript(shell: Shell) -> Int32 {
        var status: Int32 = 0
        var pending = CommandAccumulator()
        var lineNumber = 0
        var startLine = 0
        let reader = LineReader(descriptor: STDIN_FILENO)
        // Each command runs as soon as its last line is read, so another program can drive
        // the shell through a pipe and read each answer before sending the next command.
        while let item = reader.next() {
            lineNumber += 1
            if pending.isEmpty { startLine = lineNumber }
            let command: String?
            do {
                guard case .line(let line) = item else {
                    guard case .tooLong(let length) = item else { continue }
                    pending = CommandAccumulator()
                    throw ShellError("a line of \(length) bytes is longer than the limit of \(CommandAccumulator.maximumBytes / 1024) KiB: skipped")
                }
                command = try pending.add(line)
            } catch {
                report("Error: line \(lineNumber): \(error)")
                status = 1
                if shell.bail { return status }
                continue
            }
            guard let command else { continue }
            if !execute(command, shell: shell, location: "line \(startLine)") {
                status = 1
                if shell.bail || shell.standardStreamFailure != nil { return status }
            }
            if shell.didQuit { break }
        }
        if !pending.text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            report("Error: line \(startLine): a quote or parenthesis is still open at the end of the input")
            status = 1
        }
        return status
    }

    /// Runs one command; reports an error on standard error and returns false when it fails.
    static func execute(_ line: String, shell: Shell, location: String?) -> Bool {
        do {
            try shell.run(line: line)
            return true
        } catch {
            let prefix = location.map { "Error: \($0): " } ?? "Error: "
            report(prefix + "\(error)")
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
        // The history file is read and written only when it is a regular file (or absent): a
        // FIFO would block the shell, a device feed it without end.
        var keepsHistory = true
        if let problem = RegularFile.problem(atPath: history) {
            report("faultline: warning: \(history) is \(problem): no command history this session")
            keepsHistory = false
        } else {
            read_history(history)
        }
        Interactive.shell = shell
        installCompletion()
        installInterruptHandler(shell: shell)
        shell.confirm = { question in ask(question) }
        defer { shell.confirm = nil }
        var pending = CommandAccumulator()
        while !shell.didQuit {
            let read = readline(pending.isEmpty ? "faultline> " : "      ...> ")
            faultline_unblock_sigint()
            guard let cLine = read else {
                TextOutput.standardOutput.write("\n")
                if Interactive.interrupted != 0 {
                    // Ctrl-C at the prompt: drop the line, stay in the shell.
                    Interactive.interrupted = 0
                    pending = CommandAccumulator()
                    continue
                }
                // Ctrl-D (end of input) with unsaved changes asks first, as .quit does.
                if let summary = shell.unsavedChangesSummary, !ask("There are unsaved changes (\(summary)). Quit without saving? [y/N] ") {
                    continue
                }
                break
            }
            let line = String(cString: cLine)
            free(cLine)
            if Interactive.interrupted != 0 {
                // Ctrl-C at the prompt: libedit holds SIGINT while it reads, so it arrives
                // once the line is entered; it drops the unfinished lines of a multi-line
                // command, and never ends the shell.
                Interactive.interrupted = 0
                pending = CommandAccumulator()
            }
            let completed: String?
            do {
                completed = try pending.add(line)
            } catch {
                report("Error: \(error)")
                continue
            }
            guard let command = completed else { continue }
            if !command.trimmingCharacters(in: .whitespaces).isEmpty {
                add_history(command)
                if keepsHistory { write_history(history) }
            }
            Interactive.interrupted = 0
            Interactive.running = 1
            _ = execute(command, shell: shell, location: nil)
            Interactive.running = 0
            if shell.didQuit, let summary = shell.unsavedChangesSummary,
                !ask("There are unsaved changes (\(summary)). Quit without saving? [y/N] ")
            {
                shell.cancelQuit()
            }
            if Interactive.interrupted != 0 {
                report("Interrupted.")
                Interactive.interrupted = 0
            }
        }
        Interactive.shell = nil
        return 0
    }

    /// Asks a yes/no question at the terminal; only an answer starting with `y` is yes.
    static func ask(_ question: String) -> Bool {
        let answer = readline(question)
        faultline_unblock_sigint()
        let yes = answer.map { String(cString: $0).lowercased().hasPrefix("y") } ?? false
        free(answer)
        return yes
    }

    // MARK: Completion and Ctrl-C

    /// State the C callbacks of libedit and the signal handler reach; only the interactive
    /// loop's thread touches it.
    enum Interactive {
        nonisolated(unsafe) static var shell: Shell?
        nonisolated(unsafe) static var matches: [String] = []
        nonisolated(unsafe) static var interrupted: sig_atomic_t = 0
        /// 1 while a command runs: only then does Ctrl-C interrupt SQLite.
        nonisolated(unsafe) static var running: sig_atomic_t = 0
        nonisolated(unsafe) static var database: OpaquePointer?
        nonisolated(unsafe) static var wordBreaks: UnsafeMutablePointer<CChar>? = strdup(" \t\n\"'(),=<>!{}")
    }

    static func installCompletion() {
        faultline_rl_set_word_breaks(Interactive.wordBreaks)
        faultline_rl_set_completion { text, start, _ in
            guard let shell = Interactive.shell, let buffer = faultline_rl_line_buffer() else { return nil }
            let line = String(decoding: Array(String(cString: buffer).utf8.prefix(Int(start))), as: UTF8.self)
                + (text.map { String(cString: $0) } ?? "")
            Interactive.matches = Completer.completions(line: line, model: shell.coordinator.model, handles: shell.session.handles)
                .map { shell.completionInsert(for: $0, line: line) }
            faultline_rl_completion_over()
            // A handle, or a key path that ends at a relationship, may go on with `.`: no space
            // after it (`ty` Tab → `type`, then `.name`).
            let continues = Interactive.matches.count == 1
                && Completer.continuesWithDot(Interactive.matches[0], line: line, model: shell.coordinator.model, handles: shell.session.handles)
            faultline_rl_set_append_character(continues ? 0 : 32)
            guard !Interactive.matches.isEmpty else { return nil }
            return rl_completion_matches(text) { _, state in
                let index = Int(state)
                guard index < Interactive.matches.count else { return nil }
                return strdup(Interactive.matches[index])
            }
        }
    }

    static func installInterruptHandler(shell: Shell) {
        Interactive.database = shell.coordinator.store.connection.handle
        faultline_rl_leave_signals_alone()
        _ = faultline_install_sigint { _ in
            ShellRunner.Interactive.interrupted = 1
            if ShellRunner.Interactive.running != 0, let db = ShellRunner.Interactive.database { faultline_interrupt(db) }
        }
    }
}

extension Shell {
    /// What the terminal inserts for a completion: the completed word relative to where
    /// libedit's word starts (the whole word, since `.` does not break words).
    func completionInsert(for completion: String, line: String) -> String { completion }
}
