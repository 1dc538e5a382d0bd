// Fuzzes the shell's command lines: the input is a script, one command a line, run by a fresh
// shell on an in-memory store of the Inventory sample model (so nothing is written to disk),
// with line continuation and Tab completion asked of every line. Commands that reach outside
// the process (`.open`, `.read`, `.output`, `.log`, `.raw`) and `.storm` (a load generator)
// are skipped.
import Faultline
import FaultlineShell
import Foundation
import FuzzSupport

let skipped: Set<String> = [".open", ".read", ".output", ".log", ".raw", ".storm"]
let modelPath = FuzzSupport.path("Samples/Inventory/Inventory.xcdatamodeld")

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzShell(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let script = FuzzSupport.text(start, count)
    let shell: Shell
    do {
        shell = try Shell(inMemoryStoreFor: modelPath, sqlDebugLevel: 1, output: Shell.Output(out: { _ in }, err: { _ in }))
    } catch {
        FuzzSupport.fail("cannot open the in-memory shell: \(error)")
    }
    _ = Shell.needsContinuation(script)
    for line in script.split(separator: "\n", omittingEmptySubsequences: false).prefix(64) {
        let text = String(line)
        let word = text.trimmingCharacters(in: .whitespaces).split(whereSeparator: { $0 == " " || $0 == "\t" }).first.map { $0.lowercased() } ?? ""
        if skipped.contains(word) { continue }
        _ = shell.completions(for: text)
        _ = Shell.needsContinuation(text)
        try? shell.run(line: text)
        if shell.didQuit { break }
    }
    return 0
}

@main
enum Main {
    static func main() { FuzzSupport.runFuzzer(fuzzShell) }
}
