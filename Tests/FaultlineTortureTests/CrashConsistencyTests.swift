import Faultline
import FaultlineTestSupport
import FaultlineTortureKit
import Foundation
import Glibc
import Testing

/// A child process saving one large change (inserts, updates, cascading deletes, ordered and
/// many-to-many relationships, external binary data, persistent history) is killed with
/// SIGKILL: at exact statement boundaries (the child raises SIGKILL at its Nth SQLite
/// statement start or end, `FAULTLINE_TORTURE_KILL_AT`) and at random times over the
/// save's measured duration. After each kill the store, opened as an app would open it,
/// passes `PRAGMA integrity_check` and holds exactly the before- or the after-state: every
/// row of every table (`Z_PRIMARYKEY.Z_MAX`, `Z_OPT`, join tables, the history tables), with
/// every external-data reference naming a file with the right bytes.
///
/// 27 kills in the normal run (fixed seeds); `FAULTLINE_LONG_TESTS=1` (`make crash-test-long`)
/// kills at about 400 statement boundaries and 200 random times.
@Suite(.serialized) struct CrashConsistencyTests {
    enum Kill: CustomStringConvertible {
        case atEvent(Int)
        case afterDelay(Double)

        var description: String {
            switch self {
            case .atEvent(let n): return "kill at statement event \(n)"
            case .afterDelay(let s): return String(format: "kill %.2f ms into the save", s * 1000)
            }
        }
    }

    @Test func aSaveKilledAnywhereLeavesExactlyTheBeforeOrTheAfterState() throws {
        let model = try TortureModel.model()
        let seed: UInt64 = 20_261_124
        let before = try Torture.seededFolder()
        let store = Torture.storeName
        let beforeCheck = try StoreCheck(storeAt: before.appendingPathComponent(store), model: model)
        #expect(beforeCheck.problems == [])

        // The after-state: the same save, uninterrupted, on a copy.
        let reference = try Torture.copy(before)
        let run = try Torture.run(["save-large", reference.appendingPathComponent(store).path, "\(seed)"])
        try #require(run.status == 0, "the uninterrupted save failed: \(run.stderr)")
        let saved = try #require(run.stdout.split(separator: "\n").first { $0.hasPrefix("saved ") }?.split(separator: " "))
        let duration = try #require(Double(saved[1]))
        let events = try #require(Int(saved[2]))
        let afterCheck = try StoreCheck(storeAt: reference.appendingPathComponent(store), model: model)
        #expect(afterCheck.problems == [])
        #expect(afterCheck.orphanFiles == [], "an uninterrupted save removes the files it replaced")
        try #require(afterCheck.dump != beforeCheck.dump)

        // Where to kill: the first and last statement events (BEGIN, COMMIT's start and end)
        // and seeded ones in between; seeded times over the save's duration.
        var rng = SplitMix64(seed: seed)
        var kills: [Kill] = []
        if Torture.isLong {
            kills += stride(from: 1, through: events, by: max(1, events / 400)).map { .atEvent($0) }
            kills += (0..<200).map { _ in .afterDelay(duration * 1.2 * Double(rng.below(10_000)) / 10_000) }
        } else {
            kills += [1, 2, events - 1, events].map { .atEvent($0) }
            kills += (0..<11).map { _ in .atEvent(3 + rng.below(events - 4)) }
            kills += (0..<12).map { _ in .afterDelay(duration * 1.2 * Double(rng.below(10_000)) / 10_000) }
        }
        kills.append(.atEvent(events + 1))  // never reached: the save completes, the child exits

        var outcomes: [String: Int] = [:]
        var orphans = 0
        var resaved = 0
        for plan in kills {
            let trial = try Torture.copy(before)
            let path = trial.appendingPathComponent(store).path
            let result: ChildResult
            switch plan {
            case .atEvent(let n):
                result = Torture.finish(try Torture.start(["save-large", path, "\(seed)"], environment: ["FAULTLINE_TORTURE_KILL_AT": "\(n)"]))
                #expect(result.status == (n <= events ? 128 + SIGKILL : 0), "\(plan): exit status \(result.status) \(result.stderr)")
            case .afterDelay(let seconds):
                let child = try Torture.start(["save-large", path, "\(seed)"])
                let read = Torture.readUntil(child, line: "saving")
                usleep(UInt32(seconds * 1_000_000))
                kill(child.pid, SIGKILL)
                result = Torture.finish(child, alreadyRead: read)
                #expect(result.status == 0 || result.status == 128 + SIGKILL, "\(plan): exit status \(result.status) \(result.stderr)")
            }
            let check = try StoreCheck(storeAt: URL(fileURLWithPath: path), model: model)
            #expect(check.problems == [], "\(plan): \(check.problems)")
            orphans += check.orphanFiles.count
            if check.dump == beforeCheck.dump {
                outcomes["before", default: 0] += 1
                // The recovered store takes the same save again and reaches the after-state.
                if resaved < 3 {
                    resaved += 1
                    let again = try Torture.run(["save-large", path, "\(seed)"])
                    #expect(again.status == 0, "\(plan): saving again after recovery failed: \(again.stderr)")
                    let redone = try StoreCheck(storeAt: URL(fileURLWithPath: path), model: model)
                    #expect(redone.dump == afterCheck.dump, "\(plan): the save redone after recovery: \(firstDifference(redone.dump, afterCheck.dump))")
                }
            } else if check.dump == afterCheck.dump {
                outcomes["after", default: 0] += 1
            } else {
                outcomes["torn", default: 0] += 1
                Issue.record("\(plan): the store is neither the before- nor the after-state\nvs before: \(firstDifference(check.dump, beforeCheck.dump))\nvs after: \(firstDifference(check.dump, afterCheck.dump))")
            }
            try? FileManager.default.removeItem(at: trial.deletingLastPathComponent())
        }
        #expect(kills.count >= 20)
        #expect(outcomes["before", default: 0] > 0 && outcomes["after", default: 0] > 0, "kills on both sides of COMMIT: \(outcomes)")
        print("crash consistency: \(kills.count) kills over a \(events)-event save of \(String(format: "%.1f", duration * 1000)) ms: "
            + "\(outcomes["before", default: 0]) before-state, \(outcomes["after", default: 0]) after-state, \(outcomes["torn", default: 0]) torn; \(orphans) orphan external files")
    }
}
