import Faultline
import FaultlineModel
import FaultlinePredicate
import FaultlineTestSupport
import Foundation
import Testing

/// Records a context's notifications as object IDs (observers run on the posting thread).
final class NotificationLog: @unchecked Sendable {  // `tokens` is set once, in init
    struct Entry: Sendable, Equatable {
        var name: Notification.Name
        var change: ContextChange
        var invalidatedAll: [ManagedObjectID]?
    }

    let entries = Locked<[Entry]>([])
    private var tokens: [any NSObjectProtocol] = []

    init(_ context: ManagedObjectContext, names: [Notification.Name] = NotificationLog.contextNames) {
        for name in names {
            let entries = self.entries
            tokens.append(
                NotificationCenter.default.addObserver(forName: name, object: context, queue: nil) { note in
                    var change = ContextChange(kind: .objectsDidChange)
                    var all: [ManagedObjectID]?
                    if let objects = ChangedObjects(note) {
                        change.inserted = Set(objects.inserted.map(\.objectID))
                        change.updated = Set(objects.updated.map(\.objectID))
                        change.deleted = Set(objects.deleted.map(\.objectID))
                        change.refreshed = Set(objects.refreshed.map(\.objectID))
                        change.invalidated = Set(objects.invalidated.map(\.objectID))
                        all = objects.invalidatedAll
                    } else if let saved = SaveNotification(note) {
                        change.inserted = Set(saved.insertedObjectIDs)
                        change.updated = Set(saved.updatedObjectIDs)
                        change.deleted = Set(saved.deletedObjectIDs)
                    }
                    entries.update { $0.append(Entry(name: note.name, change: change, invalidatedAll: all)) }
                })
        }
    }

    deinit { for token in tokens { NotificationCenter.default.removeObserver(token) } }

    static let contextNames = [
        ManagedObjectContext.objectsDidChangeNotification, ManagedObjectContext.willSaveNotification,
        ManagedObjectContext.didSaveNotification, ManagedObjectContext.didSaveObjectIDsNotification,
    ]

    var names: [Notification.Name] { entries.value.map(\.name) }
    var changes: [ContextChange] { entries.value.map(\.change) }
    func clear() { entries.set([]) }
}

/// Objects-did-change, will-save and did-save, as notifications and as a stream; automatic
/// merging from the parent.
@Suite struct ObservationTests {
    static func open() throws -> (ManagedObjectContext, URL) {
        let url = try SaveTests.copyOfInventory()
        let (context, _) = try SaveTests.open(url)
        return (context, url)
    }

    static func id(_ context: ManagedObjectContext, _ entity: String, _ pk: Int64) -> ManagedObjectID {
        ManagedObjectID(entityName: entity, storeIdentifier: context.coordinator.store.identifier, primaryKey: pk)
    }

    static func object(_ context: ManagedObjectContext, _ entity: String, _ pk: Int64) throws -> ManagedObject {
        try context.existingObject(with: id(context, entity, pk))
    }

    @Test func objectsDidChangeReportsInsertsUpdatesAndDeletesWithDeleteRulesApplied() throws {
        let (context, _) = try Self.open()
        let log = NotificationLog(context)
        let garage = try Self.object(context, "Location", 2)
        let office = try Self.object(context, "Location", 3)
        let kite = try context.insertObject(entityName: "Asset")
        try kite.setValue("Kite", forKey: "label")
        try garage.setValue("Carport", forKey: "label")
        context.delete(office)
        let scratch = try context.insertObject(entityName: "Asset")
        context.delete(scratch)  // inserted and deleted before the announcement: not reported
        #expect(log.names.isEmpty)

        try context.processPendingChanges()
        #expect(log.names == [ManagedObjectContext.objectsDidChangeNotification])
        let change = try #require(log.changes.first)
        #expect(change.inserted == [kite.objectID])
        // Office's inventories cascade; their assets lose them (Nullify): updated.
        #expect(change.deleted == Set([office.objectID] + [6, 7, 8].map { Self.id(context, "Inventory", $0) }))
        #expect(change.updated == Set([garage.objectID] + [1, 2, 4].map { Self.id(context, "Asset", $0) }))
        #expect(change.refreshed.isEmpty && change.invalidated.isEmpty)

        // Nothing new: nothing posted.
        try context.processPendingChanges()
        #expect(log.names.count == 1)

        // A change to an object whose insert was announced is an update; its deletion a delete.
        log.clear()
        try kite.setValue("Box kite", forKey: "label")
        try context.processPendingChanges()
        context.delete(kite)
        try context.processPendingChanges()
        #expect(log.changes == [ContextChange(kind: .objectsDidChange, updated: [kite.objectID]), ContextChange(kind: .objectsDidChange, deleted: [kite.objectID])])
    }

    /// An object made with a context but not inserted into it (the public initializer) is in
    /// no object graph: its changes are not announced, and the context's registered objects
    /// still are (it tells them apart by looking each one up once such an object exists).
    @Test func anObjectMadeWithAContextButNotInsertedIsNotAnnounced() throws {
        let (context, _) = try Self.open()
        let mug = try Self.object(context, "Asset", 1)
        let log = NotificationLog(context)
        let entity = try #require(context.coordinator.model.entity(named: "Asset"))
        let id = try ManagedObjectContext(coordinator: context.coordinator).insertObject(entityName: "Asset").objectID
        let stray = ManagedObject(entity: entity, objectID: id, context: context, isFault: false)
        #expect(stray.managedObjectContext === context && context.registeredObjects[id] == nil)
        try stray.setValue("Stray", forKey: "label")
        try mug.setValue("Cup", forKey: "label")
        try context.processPendingChanges()
        #expect(log.changes == [ContextChange(kind: .objectsDidChange, updated: [mug.objectID])])
    }

    /// An undo that brings back an object the context had forgotten (a merged deletion) takes
    /// its ID back from a fault made for it since: the fault, out of the registry, is not
    /// registered again by undoing a change made to it afterwards.
    @Test func aFaultAnUndoDisplacedStaysOutOfTheRegistry() throws {
        let (context, _) = try Self.open()
        let mug = try Self.object(context, "Asset", 1)
        try mug.setValue("Cup", forKey: "label")
        let other = ManagedObjectContext(coordinator: context.coordinator)
        var deletion: SaveNotification?
        other.didSave = { deletion = $0 }
        other.delete(try Self.object(other, "Asset", 1))
        try other.save()
        context.mergeChanges(fromContextDidSave: try #require(deletion))
        #expect(mug.managedObjectContext == nil)
        let standIn = context.object(with: mug.objectID)
        #expect(standIn !== mug)
        context.undo()
        #expect(context.registeredObjects[mug.objectID] === mug && standIn.managedObjectContext === context)
        context.delete(standIn)
        context.undo()
        #expect(context.registeredObjects[mug.objectID] === mug)
    }

    /// A save's did-save lists the objects it saved, whether or not its own objects-did-change
    /// listed the same ones (the set announced is reused only when it holds exactly them).
    @Test func didSaveListsTheSavedObjectsWhateverTheSaveAnnouncedBefore() throws {
        let (context, _) = try Self.open()
        let log = NotificationLog(context, names: [ManagedObjectContext.didSaveNotification])
        let kite = try context.insertObject(entityName: "Asset")
        try kite.setValue("Kite", forKey: "label")
        try context.processPendingChanges()  // the insert announced before the save
        let mug = try Self.object(context, "Asset", 1)
        try mug.setValue("Cup", forKey: "label")
        try context.save()  // its objects-did-change: the mug updated, nothing inserted
        #expect(log.changes == [ContextChange(kind: .objectsDidChange, inserted: [kite.objectID], updated: [mug.objectID])])
        // The same objects announced and saved: the did-save lists them as well.
        log.clear()
        let shirt = try Self.object(context, "Asset", 2)
        try shirt.setValue("Tee", forKey: "label")
        try kite.setValue("Box kite", forKey: "label")
        try context.save()
        #expect(log.changes == [ContextChange(kind: .objectsDidChange, updated: [shirt.objectID, kite.objectID])])
    }

    @Test func undoRollbackRefreshAndResetAreAnnounced() throws {
        let (context, _) = try Self.open()
        let log = NotificationLog(context)
        let kite = try context.insertObject(entityName: "Asset")
        try context.processPendingChanges()
        context.undo()
        #expect(log.changes.last == ContextChange(kind: .objectsDidChange, deleted: [kite.objectID]))
        context.redo()
        #expect(log.changes.last == ContextChange(kind: .objectsDidChange, inserted: [kite.objectID]))

        // Rollback: inserted objects leave, deleted ones come back, changed ones are refreshed.
        let garage = try Self.object(context, "Location", 2)
        let mug = try Self.object(context, "Asset", 1)
        try garage.setValue("Carport", forKey: "label")
        context.delete(mug)
        try context.processPendingChanges()
        log.clear()
        context.rollback()
        // The mug's inventories (1, 6) had cascaded, and their locations (1, 3) lost them.
        let inventories = [1, 6].map { Self.id(context, "Inventory", $0) }
        let locations = [garage.objectID, Self.id(context, "Location", 1), Self.id(context, "Location", 3)]
        #expect(log.changes == [
            ContextChange(kind: .objectsDidChange, inserted: Set([mug.objectID] + inventories), deleted: [kite.objectID], refreshed: Set(locations))
        ])

        // refresh(_:mergeChanges:) is reported by the next processPendingChanges.
        log.clear()
        context.refresh(garage, mergeChanges: false)
        #expect(log.changes.isEmpty)
        try context.processPendingChanges()
        #expect(log.changes == [ContextChange(kind: .objectsDidChange, refreshed: [garage.objectID])])

        // reset: every object invalidated.
        log.clear()
        let registered = Set(context.registeredObjects.keys)
        context.reset()
        let entry = try #require(log.entries.value.first)
        #expect(entry.name == ManagedObjectContext.objectsDidChangeNotification)
        #expect(Set(entry.invalidatedAll ?? []) == registered)
        #expect(mug.managedObjectContext == nil)
    }

    @Test func aSavePostsWillSaveObjectsDidChangeAndDidSaveWithPermanentIDs() throws {
        let (context, _) = try Self.open()
        let log = NotificationLog(context)
        var callback: [SaveNotification] = []
        context.didSave = { callback.append($0) }
        let garage = try Self.object(context, "Location", 2)
        let mug = try Self.object(context, "Asset", 1)
        try garage.setValue("Carport", forKey: "label")
        let kite = try context.insertObject(entityName: "Asset")
        let temporary = kite.objectID
        context.delete(mug)
        try context.save()

        #expect(log.names == [
            ManagedObjectContext.willSaveNotification, ManagedObjectContext.objectsDidChangeNotification,
            ManagedObjectContext.didSaveNotification, ManagedObjectContext.didSaveObjectIDsNotification,
        ])
        let changes = log.changes
        #expect(changes[1].inserted == [temporary])
        #expect(!kite.objectID.isTemporaryID)
        let inventories = [1, 6].map { Self.id(context, "Inventory", $0) }  // the mug's, cascaded
        for saved in changes[2...] {
            #expect(saved.inserted == [kite.objectID])
            #expect(saved.deleted == Set([mug.objectID] + inventories))
            #expect(saved.updated.contains(garage.objectID))
        }
        // The didSave callback still works, with the same IDs.
        let notification = try #require(callback.first)
        #expect(notification.insertedObjectIDs == [kite.objectID])
        #expect(Set(notification.updatedObjectIDs) == changes[2].updated)

        // Nothing to save: nothing posted.
        log.clear()
        try context.save()
        #expect(log.names.isEmpty)
    }

    @Test func theChangesStreamDeliversEventsInOrderAsObjectIDs() async throws {
        let (context, _) = try Self.open()
        let events = context.changes
        let garage = try Self.object(context, "Location", 2)
        let kite = try context.insertObject(entityName: "Asset")
        let temporary = kite.objectID
        try context.processPendingChanges()
        try garage.setValue("Carport", forKey: "label")
        try context.save()
        let later = context.changes  // made after: sees only what follows
        try garage.setValue("Shed", forKey: "label")
        try context.processPendingChanges()
        let permanent = kite.objectID

        var received: [ContextChange] = []
        for await event in events {
            received.append(event)
            if received.count == 5 { break }
        }
        #expect(received == [
            ContextChange(kind: .objectsDidChange, inserted: [temporary]),
            ContextChange(kind: .willSave),
            ContextChange(kind: .objectsDidChange, updated: [garage.objectID]),
            ContextChange(kind: .didSave, inserted: [permanent], updated: [garage.objectID]),
            ContextChange(kind: .objectsDidChange, updated: [garage.objectID]),
        ])
        var iterator = later.makeAsyncIterator()
        #expect(await iterator.next() == ContextChange(kind: .objectsDidChange, updated: [garage.objectID]))
    }

    @Test func theStreamsEventHasTheIDsAtTheAnnouncementEvenWhenAnObserverSaves() async throws {
        let (context, _) = try Self.open()
        let events = context.changes
        // An observer that saves on objects-did-change: the new object's ID becomes permanent
        // while the announcement is under way.
        nonisolated(unsafe) var saved = false
        let token = NotificationCenter.default.addObserver(
            forName: ManagedObjectContext.objectsDidChangeNotification, object: context, queue: nil
        ) { _ in
            guard !saved else { return }
            saved = true
            try? context.save()
        }
        defer { NotificationCenter.default.removeObserver(token) }
        let kite = try context.insertObject(entityName: "Asset")
        let temporary = kite.objectID
        try context.processPendingChanges()
        #expect(saved && !kite.objectID.isTemporaryID)
        // The nested save's events reach the stream first (the outer announcement yields
        // after its observers return); the outer one still names the ID it announced.
        var received: [ContextChange] = []
        for await event in events {
            received.append(event)
            if received.count == 3 { break }
        }
        #expect(received == [
            ContextChange(kind: .willSave),
            ContextChange(kind: .didSave, inserted: [kite.objectID]),
            ContextChange(kind: .objectsDidChange, inserted: [temporary]),
        ], "\(received)")
    }

    @Test func aPerformBlockEndsTheEvent() throws {
        let (context, _) = try Self.open()
        let queue = ManagedObjectContext(coordinator: context.coordinator, concurrencyType: .privateQueue)
        let log = NotificationLog(queue)
        let done = DispatchSemaphore(value: 0)
        queue.perform {
            _ = try? queue.insertObject(entityName: "Asset")
            done.signal()
        }
        done.wait()
        queue.performAndWait {}  // the perform block has ended, with its processPendingChanges
        #expect(log.changes.map(\.inserted.count) == [1])
        // performAndWait does not end the event.
        try queue.performAndWait { _ = try queue.insertObject(entityName: "Asset") }
        #expect(log.changes.count == 1)
        try queue.performAndWait { try queue.processPendingChanges() }
        #expect(log.changes.count == 2)
    }

    @Test func aSiblingSaveIsMergedAutomatically() throws {
        let (viewContext, _) = try Self.open()
        viewContext.automaticallyMergesChangesFromParent = true
        #expect(viewContext.automaticallyMergesChangesFromParent)
        let garage = try Self.object(viewContext, "Location", 2)
        let office = try Self.object(viewContext, "Location", 3)
        let log = NotificationLog(viewContext, names: [ManagedObjectContext.objectsDidChangeNotification])

        let background = ManagedObjectContext(coordinator: viewContext.coordinator)
        try Self.object(background, "Location", 2).setValue("Carport", forKey: "label")
        background.delete(try Self.object(background, "Location", 3))
        let attic = try background.insertObject(entityName: "Location")
        try attic.setValue("Attic", forKey: "label")
        try background.save()

        #expect(garage.value(forKey: "label") as? String == "Carport")
        #expect(office.managedObjectContext == nil)
        let change = try #require(log.changes.last)
        #expect(change.refreshed == [garage.objectID])
        #expect(change.deleted == [office.objectID])
        #expect(change.inserted == [attic.objectID])
        #expect(viewContext.object(with: attic.objectID).value(forKey: "label") as? String == "Attic")

        // Turned off: saves are no longer merged.
        viewContext.automaticallyMergesChangesFromParent = false
        try Self.object(background, "Location", 2).setValue("Shed", forKey: "label")
        try background.save()
        #expect(garage.value(forKey: "label") as? String == "Carport")
    }

    @Test func aPrivateQueueContextMergesOnItsQueue() throws {
        let (writer, _) = try Self.open()
        let reader = ManagedObjectContext(coordinator: writer.coordinator, concurrencyType: .privateQueue)
        reader.performAndWait { reader.automaticallyMergesChangesFromParent = true }
        let id = Self.id(writer, "Location", 2)
        let before = try reader.performAndWait { try reader.existingObject(with: id).value(forKey: "label") as? String }
        #expect(before == "Garage")
        try writer.existingObject(with: id).setValue("Carport", forKey: "label")
        try writer.save()
        let after = reader.performAndWait { reader.object(with: id).value(forKey: "label") as? String }
        #expect(after == "Carport")
    }

    @Test func aChildMergesItsParentsSavesIncludingASiblingsPushedChanges() throws {
        let (parent, _) = try Self.open()
        let viewer = ManagedObjectContext(parent: parent)
        viewer.automaticallyMergesChangesFromParent = true
        let garage = try Self.object(viewer, "Location", 2)
        let mug = try Self.object(viewer, "Asset", 1)
        let log = NotificationLog(viewer, names: [ManagedObjectContext.objectsDidChangeNotification])

        let editor = ManagedObjectContext(parent: parent)
        try Self.object(editor, "Location", 2).setValue("Carport", forKey: "label")
        editor.delete(try Self.object(editor, "Asset", 1))
        try editor.save()  // into the parent: the viewer is not told yet
        #expect(garage.value(forKey: "label") as? String == "Garage")
        #expect(log.changes.isEmpty)

        try parent.save()
        #expect(garage.value(forKey: "label") as? String == "Carport")
        #expect(mug.managedObjectContext == nil)
        let change = try #require(log.changes.last)
        #expect(change.refreshed.contains(garage.objectID))
        #expect(change.deleted.contains(mug.objectID))
    }

    @Test func aDidSaveNotificationMergesAndReadsAsASaveNotification() throws {
        let (writer, _) = try Self.open()
        let reader = ManagedObjectContext(coordinator: writer.coordinator)
        let garage = try Self.object(reader, "Location", 2)
        let received = Locked<SaveNotification?>(nil)
        let token = NotificationCenter.default.addObserver(forName: ManagedObjectContext.didSaveNotification, object: writer, queue: nil) { note in
            received.set(SaveNotification(note))
        }
        defer { NotificationCenter.default.removeObserver(token) }
        try Self.object(writer, "Location", 2).setValue("Carport", forKey: "label")
        try writer.save()
        let saved = try #require(received.value)
        #expect(saved.updatedObjectIDs == [garage.objectID])
        reader.mergeChanges(fromContextDidSave: saved)
        #expect(garage.value(forKey: "label") as? String == "Carport")
    }
}
