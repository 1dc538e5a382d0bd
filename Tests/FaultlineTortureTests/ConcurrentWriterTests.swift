import Faultline
import FaultlineSQL
import FaultlineTestSupport
import FaultlineTortureKit
import Foundation
import Testing

/// Several `faultline-torture` processes saving into one store at once, under each merge
/// policy: counters incremented (a shared one and one per worker), members moved between
/// groups (an ordered to-many), tags toggled (an ordered many-to-many), and parents deleted
/// with cascade while others insert children into them. Afterwards: `integrity_check`, no
/// foreign key naming a missing row, `Z_MAX` ≥ every key, and the counts each policy
/// promises (see Documentation/Reliability.md, "Concurrent writers").
@Suite(.serialized) struct ConcurrentWriterTests {
    static let workers = 4
    static var saves: Int { Torture.isLong ? 200 : 50 }

    @Test(arguments: ["error", "rollback", "overwrite", "objectTrump", "storeTrump"])
    func workersIncrementingAndMovingUnderAMergePolicy(policy: String) async throws {
        let (n, m) = (Self.workers, Self.saves)
        let folder = try Torture.seededFolder(workers: n, groups: 6, membersPerGroup: 10)
        let store = folder.appendingPathComponent(Torture.storeName)
        let barrier = try TestSupport.temporaryDirectory("faultline-torture-barrier")
        let outputs = try await Torture.runTogether((0..<n).map { ["stress", store.path, "\($0)", "\(n)", "\(m)", policy, barrier.path] })
        var results: [[String: String]] = []
        for (worker, output) in outputs.enumerated() {
            #expect(output.status == 0, "worker \(worker): \(output.stderr)")
            let result = Torture.result(output.stdout)
            #expect(result["otherErrors"] == "0", "worker \(worker) under \(policy): \(output.stdout)")
            results.append(result)
        }
        func total(_ key: String) -> Int { results.reduce(0) { $0 + (Int($1[key] ?? "") ?? 0) } }

        let check = try StoreCheck(storeAt: store, model: try TortureModel.model())
        #expect(check.problems == [], "\(policy): \(check.problems)")
        let db = try Connection(path: store.path, mode: .readOnly)
        func value(_ sql: String) throws -> Int64 { try db.scalar(sql)?.int64 ?? -1 }
        // Moves and tag toggles neither make nor lose members, and never leave one without a group.
        #expect(try value("SELECT count(*) FROM ZMEMBER") == 60)
        #expect(try value("SELECT count(*) FROM ZMEMBER WHERE ZGROUP IS NULL") == 0)
        // A worker's own counter is written by nobody else: every policy keeps every increment.
        for worker in 0..<n {
            #expect(try value("SELECT ZVALUE FROM ZCOUNTER WHERE ZNAME = 'worker\(worker)'") == Int64(m), "\(policy): worker \(worker)'s own counter")
        }
        // The shared counter: each worker adds its own weight (1, 1000, 10⁶, 10⁹), so the
        // value says whose increments it holds.
        let shared = try value("SELECT ZVALUE FROM ZCOUNTER WHERE ZNAME = 'shared'")
        var weight: Int64 = 1
        var committedSum: Int64 = 0
        for result in results {
            committedSum += weight * Int64(Int(result["committed"] ?? "") ?? 0)
            weight *= 1000
        }
        let conflicts = total("conflictErrors") + total("resolved")
        switch policy {
        case "error":
            // Every conflict is reported and retried from a fresh read: nothing is lost.
            #expect(total("committed") == n * m)
            #expect(shared == committedSum)
            #expect(total("conflictErrors") >= n - 1, "the first saves all read the same version")
        case "rollback", "storeTrump":
            // The store wins: an increment that met a newer value is dropped, never written
            // over it, so the counter is exactly the sum of the increments that were kept.
            #expect(shared == committedSum)
            #expect(total("committed") + total("dropped") == n * m)
            #expect(total("dropped") >= n - 1, "the first saves all read the same version")
        default:
            // overwrite / objectTrump: the object wins, so increments are lost by design (each
            // save writes what it read plus its weight); the value is the one written by the
            // last save to commit, which is some worker's last.
            #expect(total("committed") == n * m)
            let lasts = Set(results.compactMap { Int64($0["lastShared"] ?? "") })
            #expect(lasts.contains(shared), "\(policy): \(shared) is no worker's last write \(lasts)")
            #expect(total("resolved") >= n - 1, "the first saves all read the same version")
        }
        print("concurrent writers (\(policy)): \(n) processes × \(m) saves: shared counter \(shared), "
            + "\(total("committed")) increments kept, \(total("dropped")) dropped by the policy, \(conflicts) conflicts "
            + "(\(total("conflictErrors")) reported as errors, \(total("resolved")) resolved by the policy)")
    }

    /// One process deletes a group (cascading to its notes) between another process's read
    /// of the group and its save of a new note into it: the note's save must fail with a
    /// conflict (Core Data checks the parent's `Z_OPT`, which a to-many change bumps), not
    /// commit a note whose foreign key names the deleted group.
    @Test func aChildSavedIntoAParentDeletedMeanwhileIsAConflict() async throws {
        let folder = try Torture.seededFolder(groups: 3, membersPerGroup: 2)
        let store = folder.appendingPathComponent(Torture.storeName)
        let barrier = try TestSupport.temporaryDirectory("faultline-torture-barrier")
        let outputs = try await Torture.runTogether([
            ["insert-note-after-delete", store.path, barrier.path],
            ["delete-group-when-read", store.path, barrier.path],
        ])
        #expect(outputs.map(\.status) == [0, 0], "\(outputs.map(\.stderr))")
        #expect(outputs[1].stdout.contains("result deleted"))
        let check = try StoreCheck(storeAt: store, model: try TortureModel.model())
        #expect(check.danglingKeys == [], "a note was committed into the deleted group")
        #expect(check.problems == [])
        #expect(outputs[0].stdout.contains("result conflict"), "the late note's save: \(outputs[0].stdout)")
    }

    /// Two processes add the same tag to the same member (an ordered many-to-many): the
    /// second save, made over the first, must be a reported conflict (`.error`) or be
    /// resolved by the policy, never fail on the join table's primary key, and the join row
    /// must be there once.
    @Test(arguments: ["error", "rollback", "overwrite", "objectTrump", "storeTrump"])
    func twoProcessesAddingTheSameManyToManyRow(policy: String) async throws {
        let folder = try Torture.seededFolder(groups: 2, membersPerGroup: 3)
        let store = folder.appendingPathComponent(Torture.storeName)
        let barrier = try TestSupport.temporaryDirectory("faultline-torture-barrier")
        let outputs = try await Torture.runTogether(["first", "second"].map { ["add-same-tag", store.path, barrier.path, $0, policy] })
        #expect(outputs.map(\.status) == [0, 0], "\(policy): \(outputs.map(\.stderr))")
        #expect(outputs[0].stdout.contains("result saved"))
        if policy == "error" {
            #expect(outputs[1].stdout.contains("result conflict"), "\(policy): \(outputs[1].stdout)")
        }
        let check = try StoreCheck(storeAt: store, model: try TortureModel.model())
        #expect(check.problems == [])
        let db = try Connection(path: store.path, mode: .readOnly)
        let rows = try db.scalar(
            "SELECT count(*) FROM Z_3TAGS WHERE Z_3MEMBERS = (SELECT Z_PK FROM ZMEMBER WHERE ZNAME = 'member0') AND Z_5TAGS = (SELECT Z_PK FROM ZTAG WHERE ZNAME = 'tag11')")
        #expect(rows == .integer(1), "\(policy): member0–tag11 join rows")
    }

    /// The same race at random: one process deletes six of eight groups while three insert
    /// notes into whichever groups they read.
    @Test func deletingParentsWhileOthersInsertChildren() async throws {
        let folder = try Torture.seededFolder(groups: 8, membersPerGroup: 5)
        let store = folder.appendingPathComponent(Torture.storeName)
        let saves = Torture.isLong ? 300 : 60
        let outputs = try await Torture.runTogether([["delete-groups", store.path, "6"]] + (0..<3).map { ["insert-notes", store.path, "\($0)", "\(saves)"] })
        for output in outputs { #expect(output.status == 0, "\(output.stderr)") }
        #expect(Torture.result(outputs[0].stdout)["deleted"] == "6")
        let check = try StoreCheck(storeAt: store, model: try TortureModel.model())
        #expect(check.problems == [])
        let inserted = outputs.dropFirst().reduce(0) { $0 + (Int(Torture.result($1.stdout)["inserted"] ?? "") ?? 0) }
        let conflicts = outputs.reduce(0) { $0 + (Int(Torture.result($1.stdout)["conflicts"] ?? "") ?? 0) }
        print("deleting parents while inserting children: \(inserted) notes inserted, \(conflicts) conflicts, dangling keys: \(check.danglingKeys)")
    }
}
