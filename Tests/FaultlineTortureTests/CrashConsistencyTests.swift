import Faultline
import FaultlineSQL
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
/// 28 kills in the normal run (fixed seeds); `FAULTLINE_LONG_TESTS=1` (`make crash-test-long`)
/// kills at about 450 statement boundaries and 200 random times.
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

    @Test func aSaveKilledAnywhereLeavesExactlyTheBeforeOrTheAfterState() async throws {
        let model = try TortureModel.model()
        let seed: UInt64 = 20_261_124
        let before = try Torture.seededFolder()
        let store = Torture.storeName
        let beforeCheck = try StoreCheck(storeAt: before.appendingPathComponent(store), model: model)
        #expect(beforeCheck.problems == [])

        // The after-state: the same save, uninterrupted, on a copy.
        let reference = try Torture.copy(before)
        let run = try await Torture.run(["save-large", reference.appendingPathComponent(store).path, "\(seed)"])
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
                result = try await Torture.run(["save-large", path, "\(seed)"], environment: ["FAULTLINE_TORTURE_KILL_AT": "\(n)"])
                #expect(result.status == (n <= events ? 128 + SIGKILL : 0), "\(plan): exit status \(result.status) \(result.stderr)")
            case .afterDelay(let seconds):
                result = try await Torture.run(["save-large", path, "\(seed)"], environment: ["FAULTLINE_TORTURE_KILL_AFTER": "\(seconds)"])
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
                    let again = try await Torture.run(["save-large", path, "\(seed)"])
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

    /// The negative control: with SQLite's journal off and a one-page cache, pages reach the
    /// file in the middle of the save, and a kill there must be seen as a torn store (an
    /// integrity failure, an unreadable store, or rows of neither state).
    @Test func theChecksSeeATornSaveWhenTheJournalIsOff() async throws {
        let model = try TortureModel.model()
        let before = try Torture.seededFolder()
        let beforeCheck = try StoreCheck(storeAt: before.appendingPathComponent(Torture.storeName), model: model)
        for event in [600, 1200, 1800] {
            let trial = try Torture.copy(before)
            let path = trial.appendingPathComponent(Torture.storeName).path
            let result = try await Torture.run(["save-large", path, "7"], environment: ["FAULTLINE_TORTURE_UNSAFE": "1", "FAULTLINE_TORTURE_KILL_AT": "\(event)"])
            #expect(result.status == 128 + SIGKILL)
            do {
                let check = try StoreCheck(storeAt: URL(fileURLWithPath: path), model: model)
                #expect(check.integrity != "ok" || check.dump != beforeCheck.dump, "kill at \(event) with no journal went unnoticed")
            } catch {
                // Unreadable: torn, as expected.
            }
        }
    }

    /// Each check fails on the damage it is for: a changed row, a missing external file, a
    /// foreign key naming no row, a `Z_MAX` below the keys in use.
    @Test func theStoreChecksFindDamage() throws {
        let model = try TortureModel.model()
        let folder = try Torture.seededFolder(groups: 3, membersPerGroup: 4)
        let url = folder.appendingPathComponent(Torture.storeName)
        let clean = try StoreCheck(storeAt: url, model: model)
        #expect(clean.problems == [] && clean.orphanFiles == [])
        let db = try Connection(path: url.path, mode: .readWrite)
        try db.execute("UPDATE ZMEMBER SET Z_OPT = Z_OPT + 1 WHERE Z_PK = 2")
        #expect(try StoreCheck(storeAt: url, model: model).dump != clean.dump)
        try db.execute("UPDATE ZMEMBER SET ZGROUP = 99 WHERE Z_PK = 3")
        try db.execute("INSERT INTO Z_3TAGS(Z_3MEMBERS, Z_5TAGS, Z_FOK_5TAGS) VALUES(4, 77, 1)")
        try db.execute("UPDATE Z_PRIMARYKEY SET Z_MAX = 1 WHERE Z_NAME = 'Member'")
        let files = try FileManager.default.contentsOfDirectory(at: ValueCoding.externalDataFolder(forStoreAt: url), includingPropertiesForKeys: nil)
        let removed = try #require(files.first)
        try FileManager.default.removeItem(at: removed)
        #expect(FileManager.default.createFile(atPath: removed.deletingLastPathComponent().appendingPathComponent("orphan").path, contents: Data([1])))
        let damaged = try StoreCheck(storeAt: url, model: model)
        #expect(damaged.danglingKeys == [
            "ZMEMBER.ZGROUP → Group: 1 key(s) with no row: 99",
            "Z_3TAGS.Z_5TAGS → Tag: 1 key(s) with no row: 77",
        ])
        #expect(damaged.maxKeyErrors == ["Member: Z_MAX 1 < max(Z_PK) 12"])
        #expect(damaged.missingFiles.count == 1 && damaged.missingFiles[0].hasSuffix(removed.lastPathComponent))
        #expect(damaged.orphanFiles == ["orphan"])
    }
}
