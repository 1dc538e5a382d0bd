import CFaultlineSQLite
import Faultline
import FaultlineModel
import FaultlineSQL
import FaultlineTestSupport
import Foundation
import Testing

/// Queue contexts, the debug check, saves from contexts on several threads, and two
/// coordinators (two connections, as two processes) contending for the write lock.
///
/// Threads meet through semaphores with timeouts, never through sleeps.
@Suite struct ConcurrencyTests {
    static func coordinator(_ url: URL) throws -> PersistentStoreCoordinator {
        let model = try ManagedObjectModel(contentsOf: SaveTests.modelURL)
        return try PersistentStoreCoordinator(model: model, storeURL: url, options: .init(readOnly: false))
    }

    static func id(_ entity: String, _ pk: Int64, in coordinator: PersistentStoreCoordinator) -> ManagedObjectID {
        ManagedObjectID(entityName: entity, storeIdentifier: coordinator.store.identifier, primaryKey: pk)
    }

    static func wait(_ semaphore: DispatchSemaphore, _ what: String) {
        if semaphore.wait(timeout: .now() + .seconds(30)) == .timedOut { Issue.record(Comment(rawValue: "timed out waiting for \(what)")) }
    }

    @Test func performAndWaitReturnsTheValueRethrowsAndIsReentrant() throws {
        let coordinator = try Self.coordinator(SaveTests.copyOfInventory())
        let context = ManagedObjectContext(coordinator: coordinator, concurrencyType: .privateQueue)
        #expect(context.concurrencyType == .privateQueue)
        let labels = try context.performAndWait {
            try context.fetch(FetchRequest(entityName: "Location")).map { $0.value(forKey: "label") as? String ?? "" }
        }
        #expect(labels == ["Jaye's Basement", "Garage", "Office"])
        let nested = context.performAndWait { context.performAndWait { 42 } }
        #expect(nested == 42)
        #expect(throws: FetchRequestError.self) {
            try context.performAndWait { try context.fetch(FetchRequest(entityName: "Nope")) }
        }
    }

    /// Batched results returned out of a `performAndWait` and let go of on the caller's
    /// thread: the registry takes its references to the held batch's objects back on the
    /// context's queue (the debug check sees no use off it), and the objects stay registered.
    @Test func batchedResultsLetGoOfOffTheQueueChangeTheRegistryOnIt() throws {
        let coordinator = try Self.coordinator(SaveTests.copyOfInventory())
        let context = ManagedObjectContext(coordinator: coordinator, concurrencyType: .privateQueue)
        context.concurrencyDebug = true
        let violations = Violations()
        context.concurrencyViolationHandler = { violations.append($0) }
        var results: FetchedResults<ManagedObject>? = try context.performAndWait {
            var request = FetchRequest(entityName: "Inventory")
            request.fetchBatchSize = 3
            let results = try context.fetch(request)
            _ = results[4]  // the second batch held
            return results
        }
        #expect(results?.count == 8)
        results = nil
        #expect(violations.all.isEmpty)
        #expect(context.performAndWait { context.registeredObjects.count } == 3)
    }

    @Test func performReturnsAtOnceAndRunsTheBlockOnTheContextsQueue() throws {
        let coordinator = try Self.coordinator(SaveTests.copyOfInventory())
        let context = ManagedObjectContext(coordinator: coordinator, concurrencyType: .privateQueue)
        context.concurrencyDebug = true
        let violations = Violations()
        context.concurrencyViolationHandler = { violations.append($0) }
        let mayRun = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        let count = Locked(0)
        context.perform {
            // Blocks until the caller got control back: perform did not wait for the block.
            Self.wait(mayRun, "the caller to continue")
            count.set((try? context.count(for: FetchRequest(entityName: "Asset"))) ?? -1)
            done.signal()
        }
        mayRun.signal()
        Self.wait(done, "the block")
        #expect(count.value == 5)
        #expect(violations.all.isEmpty)
    }

    @Test func theDebugCheckReportsUseOffTheQueue() throws {
        let coordinator = try Self.coordinator(SaveTests.copyOfInventory())
        let context = ManagedObjectContext(coordinator: coordinator, concurrencyType: .privateQueue)
        context.concurrencyDebug = true
        let violations = Violations()
        context.concurrencyViolationHandler = { violations.append($0) }

        let location = try context.performAndWait { try context.existingObject(with: Self.id("Location", 1, in: coordinator)) }
        #expect(violations.all.isEmpty)
        _ = try context.fetch(FetchRequest(entityName: "Asset"))  // off the queue
        _ = location.value(forKey: "label")  // an object touched off its context's queue
        try location.setValue("Cellar", forKey: "label")
        #expect(violations.all.map(\.operation) == ["fetch(_:)", "value(forKey:)", "recordingChanges(_:)"])
        #expect(violations.all.first?.description.hasPrefix("Faultline concurrency violation: fetch(_:) called on ") == true)
        #expect(violations.all.first?.description.hasSuffix("a private-queue context may only be used inside perform { } or performAndWait { }") == true)

        // A confinement context belongs to the thread that made it.
        let confined = ManagedObjectContext(coordinator: coordinator)
        confined.concurrencyDebug = true
        confined.concurrencyViolationHandler = { violations.append($0) }
        _ = try confined.fetch(FetchRequest(entityName: "Location"))
        #expect(violations.all.count == 3)
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            _ = try? confined.count(for: FetchRequest(entityName: "Location"))
            done.signal()
        }
        Self.wait(done, "the other thread")
        #expect(violations.all.count == 4)
        #expect(violations.all.last?.concurrencyType == .confinement)
        #expect(violations.all.last?.operation == "count(for:)")
    }

    @Test func objectIDsCrossBetweenContextsAndExistingObjectLoadsThem() throws {
        let coordinator = try Self.coordinator(SaveTests.copyOfInventory())
        let writer = ManagedObjectContext(coordinator: coordinator, concurrencyType: .privateQueue)
        let reader = ManagedObjectContext(coordinator: coordinator, concurrencyType: .privateQueue)
        let id: ManagedObjectID = try writer.performAndWait {
            let asset = try writer.insertObject(entityName: "Asset")
            try asset.setValue("Kite", forKey: "label")
            try writer.save()
            return asset.objectID
        }
        #expect(!id.isTemporaryID)
        let label = try reader.performAndWait { try reader.existingObject(with: id).value(forKey: "label") as? String }
        #expect(label == "Kite")
        #expect(throws: FetchRequestError.self) {
            try reader.performAndWait { try reader.existingObject(with: Self.id("Asset", 99, in: coordinator)) }
        }
        #expect(reader.performAndWait { reader.registeredObjects[Self.id("Asset", 99, in: coordinator)] == nil })
    }

    /// Two private-queue contexts on one coordinator, each editing its own objects and saving
    /// many times at once; every save of one is merged into the other on the other's queue.
    @Test func twoQueuesSaveDifferentObjectsAtOnceAndMergeEachOthersSaves() throws {
        let url = try SaveTests.copyOfInventory()
        let coordinator = try Self.coordinator(url)
        let a = ManagedObjectContext(coordinator: coordinator, concurrencyType: .privateQueue)
        let b = ManagedObjectContext(coordinator: coordinator, concurrencyType: .privateQueue)
        for context in [a, b] {
            context.concurrencyDebug = true
            context.concurrencyViolationHandler = { Issue.record("\($0)") }
        }
        let merged = Locked(0)
        let mergesDone = DispatchSemaphore(value: 0)
        let rounds = 20
        a.didSave = { note in b.perform { b.mergeChanges(fromContextDidSave: note); merged.update { $0 += 1 }; mergesDone.signal() } }
        b.didSave = { note in a.perform { a.mergeChanges(fromContextDidSave: note); merged.update { $0 += 1 }; mergesDone.signal() } }
        let finished = DispatchSemaphore(value: 0)
        let errors = Locked<[String]>([])
        for (context, pk, prefix) in [(a, Int64(1), "A"), (b, Int64(2), "B")] {
            context.perform {
                do {
                    let location = try context.existingObject(with: Self.id("Location", pk, in: coordinator))
                    for round in 1...rounds {
                        try location.setValue("\(prefix)\(round)", forKey: "label")
                        try context.insertObject(entityName: "Asset").setValue("\(prefix)-asset-\(round)", forKey: "label")
                        try context.save()
                    }
                } catch {
                    errors.update { $0.append("\(prefix): \(error)") }
                }
                finished.signal()
            }
        }
        Self.wait(finished, "context A")
        Self.wait(finished, "context B")
        for _ in 0..<(2 * rounds) { Self.wait(mergesDone, "a merge") }
        #expect(errors.value.isEmpty)
        #expect(merged.value == 2 * rounds)

        // Each context sees the other's last label, merged in on its own queue.
        let seenByA = try a.performAndWait { try a.existingObject(with: Self.id("Location", 2, in: coordinator)).value(forKey: "label") as? String }
        let seenByB = try b.performAndWait { try b.existingObject(with: Self.id("Location", 1, in: coordinator)).value(forKey: "label") as? String }
        #expect(seenByA == "B\(rounds)")
        #expect(seenByB == "A\(rounds)")
        let raw = try Connection(path: url.path, mode: .readOnly)
        #expect(try raw.query("SELECT Z_OPT, ZLABEL FROM ZLOCATION WHERE Z_PK IN (1, 2) ORDER BY Z_PK").map(\.values) == [[.integer(Int64(rounds + 1)), .text("A\(rounds)")], [.integer(Int64(rounds + 1)), .text("B\(rounds)")]])
        #expect(try raw.scalar("SELECT COUNT(*) FROM ZASSET") == .integer(Int64(5 + 2 * rounds)))
        #expect(try raw.scalar("SELECT COUNT(DISTINCT Z_PK) FROM ZASSET") == .integer(Int64(5 + 2 * rounds)))
        #expect(try raw.scalar("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = 1") == .integer(Int64(5 + 2 * rounds)))
    }

    /// Two queues edit the same object: the second save conflicts, then merges by property.
    @Test func twoQueuesEditingOneObjectConflict() throws {
        let url = try SaveTests.copyOfInventory()
        let coordinator = try Self.coordinator(url)
        let a = ManagedObjectContext(coordinator: coordinator, concurrencyType: .privateQueue)
        let b = ManagedObjectContext(coordinator: coordinator, concurrencyType: .privateQueue)
        let id = Self.id("Location", 3, in: coordinator)
        try a.performAndWait { try a.existingObject(with: id).setValue("Study", forKey: "label") }
        try b.performAndWait { try b.existingObject(with: id).setValue("Den", forKey: "label") }
        let saved = DispatchSemaphore(value: 0)
        let aError = Locked<String?>(nil)
        a.perform {
            do { try a.save() } catch { aError.set("\(error)") }
            saved.signal()
        }
        Self.wait(saved, "A's save")
        #expect(aError.value == nil)
        let conflict: MergeConflictError? = b.performAndWait {
            do {
                try b.save()
                return nil
            } catch {
                return error as? MergeConflictError
            }
        }
        #expect(conflict?.conflicts == [MergeConflict(objectID: id, objectVersion: 1, storeVersion: 2)])
        try b.performAndWait {
            b.mergePolicy = .mergeByPropertyObjectTrump
            try b.save()
        }
        let raw = try Connection(path: url.path, mode: .readOnly)
        #expect(try raw.query("SELECT Z_OPT, ZLABEL FROM ZLOCATION WHERE Z_PK = 3").first?.values == [3, "Den"])
    }

    @MainActor
    @Test func aMainQueueContextRunsOnTheMainThread() async throws {
        let coordinator = try Self.coordinator(SaveTests.copyOfInventory())
        let context = ManagedObjectContext(coordinator: coordinator, concurrencyType: .mainQueue)
        context.concurrencyDebug = true
        let violations = Violations()
        context.concurrencyViolationHandler = { violations.append($0) }
        #expect(try context.performAndWait { try context.count(for: FetchRequest(entityName: "Location")) } == 3)
        // From another thread, performAndWait waits for the main queue; perform returns at once.
        let fromBackground: Int = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                let count = context.performAndWait { (try? context.count(for: FetchRequest(entityName: "Asset"))) ?? -1 }
                continuation.resume(returning: count)
            }
        }
        #expect(fromBackground == 5)
        let fetched: Int = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                context.perform {
                    continuation.resume(returning: (try? context.fetch(FetchRequest(entityName: "Asset")))?.count ?? -1)
                }
            }
        }
        #expect(fetched == 5)
        #expect(violations.all.isEmpty)
    }

    /// Two coordinators (two connections, as two processes): A holds the write lock in the
    /// middle of its save; B's save waits for it (SQLite's busy handler), then goes through.
    @Test func aSaveWaitsForAnotherConnectionsWriteLockAndNothingIsLost() throws {
        let url = try SaveTests.copyOfInventory()
        let a = ManagedObjectContext(coordinator: try Self.coordinator(url), concurrencyType: .privateQueue)
        let bCoordinator = try Self.coordinator(url)
        let b = ManagedObjectContext(coordinator: bCoordinator, concurrencyType: .privateQueue)

        let aHoldsTheLock = DispatchSemaphore(value: 0)
        let releaseA = DispatchSemaphore(value: 0)
        let aSaved = DispatchSemaphore(value: 0)
        let bSaved = DispatchSemaphore(value: 0)
        a.coordinator.store.connection.addTraceObserver { event in
            if case .statement(let sql, _) = event, sql.hasPrefix("INSERT INTO ZASSET") {
                aHoldsTheLock.signal()
                Self.wait(releaseA, "the test to let A commit")
            }
        }
        // B's busy handler: the first call means B is waiting for A's lock; it lets A commit
        // and retries once A's save returned.
        let busy = BusyProbe(aSaved: aSaved)
        bCoordinator.performAndWait {
            _ = sqlite3_busy_handler(bCoordinator.store.connection.handle, { pointer, count in
                guard let pointer else { return 0 }
                let probe = Unmanaged<BusyProbe>.fromOpaque(pointer).takeUnretainedValue()
                return probe.waited(count)
            }, Unmanaged.passUnretained(busy).toOpaque())
        }

        let errors = Locked<[String]>([])
        a.perform {
            do {
                try a.insertObject(entityName: "Asset").setValue("Kite", forKey: "label")
                try a.save()
            } catch { errors.update { $0.append("A: \(error)") } }
            aSaved.signal()
        }
        Self.wait(aHoldsTheLock, "A to take the write lock")
        b.perform {
            do {
                try b.insertObject(entityName: "Asset").setValue("Drone", forKey: "label")
                try b.save()
            } catch { errors.update { $0.append("B: \(error)") } }
            bSaved.signal()
        }
        Self.wait(busy.bIsWaiting, "B to wait for the lock")
        releaseA.signal()
        Self.wait(bSaved, "B's save")
        #expect(errors.value.isEmpty)
        #expect(busy.calls.value >= 1)
        withExtendedLifetime(busy) {}
        let raw = try Connection(path: url.path, mode: .readOnly)
        #expect(try raw.query("SELECT Z_PK, ZLABEL FROM ZASSET WHERE Z_PK > 5 ORDER BY Z_PK").map(\.values) == [[6, "Kite"], [7, "Drone"]])
        #expect(try raw.scalar("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = 1") == 7)
    }

    /// Two coordinators saving many times at once with SQLite's busy timeout: every save lands.
    @Test func twoConnectionsSavingAtOnceLoseNoSave() throws {
        let url = try SaveTests.copyOfInventory()
        let contexts = try (0..<2).map { _ in ManagedObjectContext(coordinator: try Self.coordinator(url), concurrencyType: .privateQueue) }
        let rounds = 25
        let finished = DispatchSemaphore(value: 0)
        let errors = Locked<[String]>([])
        for (index, context) in contexts.enumerated() {
            context.perform {
                for round in 1...rounds {
                    do {
                        try context.insertObject(entityName: "Asset").setValue("\(index)-\(round)", forKey: "label")
                        try context.save()
                    } catch { errors.update { $0.append("\(index): \(error)") } }
                }
                finished.signal()
            }
        }
        Self.wait(finished, "the first context")
        Self.wait(finished, "the second context")
        #expect(errors.value.isEmpty)
        let raw = try Connection(path: url.path, mode: .readOnly)
        #expect(try raw.scalar("SELECT COUNT(DISTINCT ZLABEL) FROM ZASSET WHERE Z_PK > 5") == .integer(Int64(2 * rounds)))
        #expect(try raw.scalar("SELECT MAX(Z_PK) FROM ZASSET") == .integer(Int64(5 + 2 * rounds)))
        #expect(try raw.scalar("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = 1") == .integer(Int64(5 + 2 * rounds)))
    }
}

/// Violations reported by a context's debug check.
final class Violations: Sendable {
    private let list = Locked<[ConcurrencyViolation]>([])
    var all: [ConcurrencyViolation] { list.value }
    func append(_ violation: ConcurrencyViolation) { list.update { $0.append(violation) } }
}

/// A busy handler's state: signals the first wait, then lets SQLite retry once A has saved.
final class BusyProbe: @unchecked Sendable {
    let bIsWaiting = DispatchSemaphore(value: 0)
    let aSaved: DispatchSemaphore
    let calls = Locked(0)

    init(aSaved: DispatchSemaphore) { self.aSaved = aSaved }

    func waited(_ count: Int32) -> Int32 {
        calls.update { $0 += 1 }
        guard count == 0 else { return count < 1000 ? 1 : 0 }
        bIsWaiting.signal()
        return aSaved.wait(timeout: .now() + .seconds(30)) == .success ? 1 : 0
    }
}
