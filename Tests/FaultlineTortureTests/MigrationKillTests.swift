import Faultline
import FaultlineSQL
import FaultlineTestSupport
import FaultlineTortureKit
import Foundation
import Glibc
import Testing

/// A child process migrating a store (`faultline-torture migrate`: a new entity that renumbers
/// every other, an attribute added in place, a table rebuilt, join tables renamed, history
/// renumbered) is killed with SIGKILL just before chosen statements and at random times.
/// After each kill the store is exactly the old store (its version hashes the old model's,
/// every row as before) or exactly the migrated one (the new model's hashes, every row as in
/// an uninterrupted migration, the schema conforming), never anything in between.
///
/// 8 kills in the normal run; `FAULTLINE_LONG_TESTS=1` (`make crash-test-long`) kills before
/// every statement and at 60 random times.
@Suite(.serialized) struct MigrationKillTests {
    static func masked(_ dump: String) -> String {
        dump.split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.hasPrefix("Z_METADATA ") }.joined(separator: "\n")
    }

    @Test func aMigrationKilledAnywhereLeavesTheOldStoreOrTheMigratedOne() async throws {
        let old = try TortureModel.model(), new = try TortureModel.migratedModel()
        let before = try Torture.seededFolder(groups: 3, membersPerGroup: 6)
        let store = Torture.storeName
        let beforeDump = try StoreCheck(storeAt: before.appendingPathComponent(store), model: old).dump

        let reference = try Torture.copy(before)
        let run = try await Torture.run(["migrate", reference.appendingPathComponent(store).path])
        try #require(run.status == 0, "the uninterrupted migration failed: \(run.stderr)")
        let events = try #require(run.stdout.split(separator: "\n").first { $0.hasPrefix("migrated ") }.flatMap { Int($0.split(separator: " ")[1]) })
        let afterCheck = try StoreCheck(storeAt: reference.appendingPathComponent(store), model: new)
        #expect(afterCheck.problems == [])
        #expect(try SchemaConformance.problems(storeAt: reference.appendingPathComponent(store), model: new) == [])

        var rng = SplitMix64(seed: 0x316)
        var kills: [(event: Int?, delay: Double?)] = []
        if Torture.isLong {
            kills += (1...events).map { ($0, nil) }
            kills += (0..<60).map { _ in (nil, 0.002 * Double(rng.below(100))) }
        } else {
            kills += [1, 2, events - 1, events].map { ($0, nil) }
            kills += (0..<2).map { _ in (3 + rng.below(max(1, events - 4)), nil) }
            kills += (0..<2).map { _ in (nil, 0.001 * Double(rng.below(40))) }
        }
        var outcomes: [String: Int] = [:]
        for kill in kills {
            let trial = try Torture.copy(before)
            let url = trial.appendingPathComponent(store)
            if let n = kill.event {
                let result = try await Torture.run(["migrate", url.path], environment: ["FAULTLINE_TORTURE_KILL_AT": "\(n)"])
                #expect(result.status == 128 + SIGKILL, "kill before statement \(n): status \(result.status) \(result.stderr)")
            } else if let delay = kill.delay {
                let result = try await Torture.run(["migrate", url.path], environment: ["FAULTLINE_TORTURE_KILL_AFTER": "\(delay)"])
                #expect(result.status == 0 || result.status == 128 + SIGKILL, "status \(result.status) \(result.stderr)")
            }
            let label = kill.event.map { "kill before statement \($0) of \(events)" } ?? "kill after \(kill.delay ?? 0) s"
            // Recovery as an app's open does it (a read-only open cannot replay a killed WAL).
            do {
                let recovery = try Connection(path: url.path, mode: .readWrite)
                _ = try recovery.scalar("SELECT count(*) FROM sqlite_master")
            }
            let hashes = try #require(try SQLiteStore.versionHashes(at: url))
            if old.isCompatible(withStoreVersionHashes: hashes) {
                let check = try StoreCheck(storeAt: url, model: old)
                #expect(check.problems == [] && check.dump == beforeDump, "\(label): the old store changed")
                outcomes["old", default: 0] += 1
            } else if new.isCompatible(withStoreVersionHashes: hashes) {
                let check = try StoreCheck(storeAt: url, model: new)
                // Z_METADATA's plist is compared by meaning (its hashes, above): Foundation's
                // writer orders dictionary keys differently from one process to the next.
                #expect(check.problems == [] && Self.masked(check.dump) == Self.masked(afterCheck.dump), "\(label): the migrated store differs: \(firstDifference(Self.masked(check.dump), Self.masked(afterCheck.dump)))")
                #expect(try SchemaConformance.problems(storeAt: url, model: new) == [], "\(label)")
                outcomes["migrated", default: 0] += 1
            } else {
                Issue.record("\(label): the store's hashes are neither model's")
            }
            try? FileManager.default.removeItem(at: trial.deletingLastPathComponent())
        }
        #expect(outcomes["old", default: 0] > 0, "\(outcomes)")
        print("migration kills: \(kills.count) over a \(events)-statement migration: \(outcomes)")
    }
}
