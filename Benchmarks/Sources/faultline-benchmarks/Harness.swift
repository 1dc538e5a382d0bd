import CBenchSQLite
import Foundation

/// One timed run of a variant: the seconds its measured part took and a checksum of what it
/// read, so that variants can be checked to do the same work.
struct Sample {
    var seconds: Double
    var check: Int64
}

/// A way of doing a workload: raw C, GRDB or Faultline.
struct Variant {
    var name: String
    /// Runs once (setup inside is not timed: the variant times its own measured part with ``time(_:)``).
    var run: () throws -> Sample
}

/// Times `body` with the monotonic clock.
func time(_ body: () throws -> Int64) rethrows -> Sample {
    let start = DispatchTime.now().uptimeNanoseconds
    let check = try body()
    let end = DispatchTime.now().uptimeNanoseconds
    return Sample(seconds: Double(end - start) / 1e9, check: check)
}

/// The results of one variant of one workload.
struct Result {
    var workload: String
    var variant: String
    var samples: [Double]
    /// How the numbers are shown: seconds (default), or a custom unit.
    var unit: Unit = .seconds
    var note: String = ""

    enum Unit { case seconds, megabytes, perSecond }

    var min: Double { samples.min() ?? .nan }
    var median: Double {
        let sorted = samples.sorted()
        guard !sorted.isEmpty else { return .nan }
        let mid = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
    }
}

/// Runs workloads, interleaving their variants, and collects the results.
final class Harness {
    let quick: Bool
    private(set) var results: [Result] = []
    /// Workload name → row counts and other facts, for the report.
    private(set) var notes: [(String, String)] = []

    /// Only the variants whose names contain this (`--variant`): one variant alone under a
    /// profiler. The table then has no raw C to divide by.
    let variantFilter: String?

    /// Whether every run starts from a trimmed heap (`--trimmed-heap`).
    let trimsHeap: Bool

    init(quick: Bool, variantFilter: String? = nil, trimsHeap: Bool = false) {
        self.quick = quick
        self.variantFilter = variantFilter
        self.trimsHeap = trimsHeap
    }

    /// Runs `variants` round-robin (A B C A B C …): one untimed warm-up round, then `rounds`
    /// timed rounds. Checks that every variant's checksum agrees with the first one's.
    func run(_ workload: String, rounds: Int, warmup: Int = 1, rows: String, variants: [Variant]) throws {
        let variants = variantFilter.map { filter in variants.filter { $0.name.contains(filter) } } ?? variants
        guard !variants.isEmpty else { return }
        let start = Date()
        log("\(workload): \(rows), \(rounds) rounds")
        var samples = Array(repeating: [Double](), count: variants.count)
        var checks = Array(repeating: Int64?.none, count: variants.count)
        for round in 0..<(warmup + rounds) {
            for (i, variant) in variants.enumerated() {
                if trimsHeap { bench_trim_heap() }
                let sample = try variant.run()
                if round >= warmup { samples[i].append(sample.seconds) }
                if let previous = checks[i], previous != sample.check {
                    throw BenchmarkError("\(workload) / \(variant.name): checksum changed between rounds (\(previous) then \(sample.check))")
                }
                checks[i] = sample.check
            }
        }
        for (i, variant) in variants.enumerated() {
            if let reference = checks[0], let check = checks[i], check != reference {
                throw BenchmarkError("\(workload): \(variant.name) read different data than \(variants[0].name) (checksum \(check) vs \(reference))")
            }
            results.append(Result(workload: workload, variant: variant.name, samples: samples[i]))
        }
        notes.append((workload, rows))
        log(String(format: "  done in %.1fs", Date().timeIntervalSince(start)))
    }

    /// Adds results measured some other way (memory, rates).
    func add(_ result: Result) { results.append(result) }

    /// Adds a line to the report's notes.
    func note(_ workload: String, _ text: String) { notes.append((workload, text)) }

    /// The results as a Markdown table: min, median, and the median's ratio to the workload's
    /// raw C variant.
    func table() -> String {
        var lines = ["| workload | variant | min | median | median / raw C |", "| --- | --- | ---: | ---: | ---: |"]
        for result in results {
            let raw = results.first { $0.workload == result.workload && $0.variant.hasPrefix("raw C") }
            let ratio: String
            if let raw, result.unit != .perSecond {
                ratio = String(format: "%.2f×", result.median / raw.median)
            } else {
                ratio = "—"
            }
            let variant = result.note.isEmpty ? result.variant : "\(result.variant) (\(result.note))"
            lines.append("| \(result.workload) | \(variant) | \(format(result.min, result.unit)) | \(format(result.median, result.unit)) | \(ratio) |")
        }
        return lines.joined(separator: "\n")
    }

    private func format(_ value: Double, _ unit: Result.Unit) -> String {
        switch unit {
        case .megabytes: return String(format: "%.1f MB", value)
        case .perSecond: return String(format: "%.0f /s", value)
        case .seconds:
            if value >= 1 { return String(format: "%.2f s", value) }
            if value >= 10e-3 { return String(format: "%.1f ms", value * 1e3) }
            // Three digits below 10 ms: a workload of a few milliseconds moves by a few
            // percent between changes, which one decimal does not show.
            if value >= 1e-3 { return String(format: "%.2f ms", value * 1e3) }
            return String(format: "%.1f µs", value * 1e6)
        }
    }
}

/// Progress goes to standard error so that standard output is the report alone.
func log(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}

struct BenchmarkError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

// MARK: The data every workload uses

/// The values of item `i` (1-based): the same in every variant and every store.
struct ItemValues {
    var quantity: Int64
    var score: Double
    var name: String
    var created: Date
    var flag: Bool

    init(quantity: Int64, score: Double, name: String, created: Date, flag: Bool) {
        self.quantity = quantity
        self.score = score
        self.name = name
        self.created = created
        self.flag = flag
    }

    init(_ i: Int) {
        quantity = Int64(i % 5000)
        score = Double(i) * 0.5
        name = "Item \(i)"
        created = Date(timeIntervalSinceReferenceDate: 700_000_000 + Double(i))
        flag = i % 3 == 0
    }

    /// A checksum touching every value.
    var check: Int64 {
        quantity &+ Int64(score) &+ Int64(name.utf8.count) &+ Int64(created.timeIntervalSinceReferenceDate) &+ (flag ? 1 : 0)
    }
}

/// A deterministic owner for each item: SplitMix64, so owners have about the same number of
/// items each, not exactly (so that `items.@count == 100` picks a few hundred owners).
struct OwnerAssignment {
    var state: UInt64 = 0x9E37_79B9_7F4A_7C15
    let owners: Int

    mutating func next() -> Int64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        return Int64(z % UInt64(owners)) + 1
    }
}

/// The peak resident set size of this process, from `/proc/self/status` (`VmHWM`), in kB.
func peakRSSKilobytes() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return -1 }
    for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
        return Int(line.split(separator: " ").dropFirst().first { !$0.isEmpty }.flatMap { Int($0) } ?? -1)
    }
    return -1
}
