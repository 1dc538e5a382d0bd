import CBenchSQLite
import Foundation

// faultline-benchmarks [--quick] [--only NAME,…] [--variant TEXT] [--steady-heap | --trimmed-heap]
//
// Every workload runs its raw C, GRDB and Faultline variants interleaved in this process and
// prints a Markdown table: min and median per variant and the median's ratio to raw C.
// `--memory-child VARIANT STORE` is the child process of the memory workload (internal).
// `--steady-heap` fixes glibc's allocator thresholds for this process, for every variant alike:
// a diagnostic for A/B runs (Performance.md, eighth round), not how the targets are read.
// `--trimmed-heap` gives the heap's free memory back to the system before every run
// (`malloc_trim`), so that no variant starts from memory the one before it freed: the other
// diagnostic (Performance.md, fourteenth round).
// `--variant TEXT` runs only the variants whose names contain TEXT (one variant under `perf`);
// the memory workload, which measures child processes, runs all of its variants still.

let arguments = Array(CommandLine.arguments.dropFirst())

if arguments.first == "--memory-child" {
    do {
        try MemoryChild.run(variant: arguments[1], path: arguments[2])
        exit(0)
    } catch {
        log("memory child: \(error)")
        exit(1)
    }
}

let quick = arguments.contains("--quick")
let steadyHeap = arguments.contains("--steady-heap")
let trimmedHeap = arguments.contains("--trimmed-heap")
if steadyHeap, trimmedHeap {
    log("error: --steady-heap and --trimmed-heap exclude each other")
    exit(1)
}
if steadyHeap, bench_steady_heap() == 0 {
    log("error: --steady-heap: mallopt refused a setting")
    exit(1)
}
var only: Set<String>?
if let i = arguments.firstIndex(of: "--only"), i + 1 < arguments.count {
    only = Set(arguments[i + 1].split(separator: ",").map(String.init))
}

var variantFilter: String?
if let i = arguments.firstIndex(of: "--variant"), i + 1 < arguments.count {
    variantFilter = arguments[i + 1]
}

do {
    try Benchmarks(quick: quick, only: only, steadyHeap: steadyHeap, trimmedHeap: trimmedHeap, variantFilter: variantFilter).run()
} catch {
    log("error: \(error)")
    exit(1)
}
