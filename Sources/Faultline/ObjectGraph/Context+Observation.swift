import Foundation

// Observation, as Core Data has it: the objects-did-change, will-save and did-save events of
// a context, posted to `NotificationCenter.default` (object: the context; userInfo: the
// objects) and yielded to every `changes` stream (as object IDs, which are Sendable, where
// objects are not), plus `automaticallyMergesChangesFromParent`.
//
// Each object records, at its first change since the last objects-did-change, whether it was
// in the object graph then (registered and not deleted); when the changes are announced it is
// compared with whether it is now: absent then present is an insert, present then absent a
// delete, present both times an update. So an object inserted and deleted between two
// announcements is not reported at all, and one deleted then undone is not reported as
// deleted. Refreshed objects (refresh, merges, rollback) and invalidated ones (forgotten
// because their row is gone; every object on reset) are collected apart.
//
// Changes are announced by `processPendingChanges()` (which `save()` runs, and which runs at
// the end of every `perform` block, Core Data's "end of the event"), by `undo()`, `redo()`,
// `rollback()`, `reset()` and by merges. `performAndWait` does not announce, as in Core Data.
// See Documentation/Observation.md.

/// One event of a context, as ``ManagedObjectContext/changes`` delivers it: what kind, and the
/// IDs of the objects concerned.
///
/// Objects are not `Sendable` and belong to their context's queue, so the events carry
/// ``ManagedObjectID``s, as Core Data's `NSManagedObjectContextDidSaveObjectIDs` does; get the
/// objects back with ``ManagedObjectContext/object(with:)`` on the context's queue. Objects
/// inserted and not saved have temporary IDs; a did-save event has the permanent ones.
public struct ContextChange: Sendable, Hashable, CustomStringConvertible {
    /// The kind of event.
    public enum Kind: String, Sendable, Hashable {
        /// Objects of the context changed (Core Data's `NSManagedObjectContextObjectsDidChange`).
        case objectsDidChange
        /// A save is about to start (`NSManagedObjectContextWillSave`); no objects.
        case willSave
        /// A save finished (`NSManagedObjectContextDidSave`): inserted, updated and deleted
        /// hold what it wrote, with permanent IDs.
        case didSave
    }

    /// The kind of event.
    public var kind: Kind
    /// Objects inserted (in a did-save event: written as new rows).
    public var inserted: Set<ManagedObjectID> = []
    /// Objects whose values changed.
    public var updated: Set<ManagedObjectID> = []
    /// Objects deleted.
    public var deleted: Set<ManagedObjectID> = []
    /// Objects whose values were reloaded or reverted (refresh, merge, rollback).
    public var refreshed: Set<ManagedObjectID> = []
    /// Objects that left the context because their row is gone (and, after ``ManagedObjectContext/reset()``, every
    /// object the context had).
    public var invalidated: Set<ManagedObjectID> = []
    /// Whether every object of the context was invalidated (``ManagedObjectContext/reset()``).
    public var invalidatedAll = false

    /// An event of a kind, with the IDs given.
    public init(
        kind: Kind, inserted: Set<ManagedObjectID> = [], updated: Set<ManagedObjectID> = [], deleted: Set<ManagedObjectID> = [],
        refreshed: Set<ManagedObjectID> = [], invalidated: Set<ManagedObjectID> = [], invalidatedAll: Bool = false
    ) {
        self.kind = kind
        self.inserted = inserted
        self.updated = updated
        self.deleted = deleted
        self.refreshed = refreshed
        self.invalidated = invalidated
        self.invalidatedAll = invalidatedAll
    }

    /// `objectsDidChange inserted: 1 updated: 2 …`, counts only.
    public var description: String {
        var parts = [kind.rawValue]
        for (name, ids) in [("inserted", inserted), ("updated", updated), ("deleted", deleted), ("refreshed", refreshed), ("invalidated", invalidated)] where !ids.isEmpty {
            parts.append("\(name): \(ids.count)")
        }
        if invalidatedAll { parts.append("invalidatedAll") }
        return parts.joined(separator: " ")
    }
}

/// The objects of an objects-did-change or did-save notification, read from its `userInfo`.
///
/// ```swift
/// NotificationCenter.default.addObserver(forName: ManagedObjectContext.objectsDidChangeNotification,
///                                        object: context, queue: nil) { note in
///     guard let changes = ChangedObjects(note) else { return }
///     print(changes.inserted.count, "inserted")
/// }
/// ```
///
/// Like the objects, the value belongs to the context's queue (notifications are posted on it).
public struct ChangedObjects {
    /// Objects inserted.
    public var inserted: Set<ManagedObject> = []
    /// Objects whose values changed.
    public var updated: Set<ManagedObject> = []
    /// Objects deleted.
    public var deleted: Set<ManagedObject> = []
    /// Objects whose values were reloaded or reverted.
    public var refreshed: Set<ManagedObject> = []
    /// Objects that left the context because their row is gone.
    public var invalidated: Set<ManagedObject> = []
    /// After ``ManagedObjectContext/reset()``: the IDs of every object the context had.
    public var invalidatedAll: [ManagedObjectID]?

    /// Empty sets.
    public init() {}

    /// The objects of a notification posted by a context; nil when it has none of the keys.
    public init?(_ notification: Notification) {
        guard let info = notification.userInfo else { return nil }
        typealias Key = ManagedObjectContext.NotificationKey
        func objects(_ key: Key) -> Set<ManagedObject>? { info[key.rawValue] as? Set<ManagedObject> }
        inserted = objects(.insertedObjects) ?? []
        updated = objects(.updatedObjects) ?? []
        deleted = objects(.deletedObjects) ?? []
        refreshed = objects(.refreshedObjects) ?? []
        invalidated = objects(.invalidatedObjects) ?? []
        invalidatedAll = info[Key.invalidatedAllObjects.rawValue] as? [ManagedObjectID]
        if isEmpty, invalidatedAll == nil { return nil }
    }

    /// Whether no object is in any set.
    public var isEmpty: Bool {
        inserted.isEmpty && updated.isEmpty && deleted.isEmpty && refreshed.isEmpty && invalidated.isEmpty
    }

    /// The `userInfo` of a notification carrying these objects: a key per non-empty set, as
    /// Core Data posts them.
    var userInfo: [AnyHashable: Any] {
        typealias Key = ManagedObjectContext.NotificationKey
        var info: [AnyHashable: Any] = [:]
        if !inserted.isEmpty { info[Key.insertedObjects.rawValue] = inserted }
        if !updated.isEmpty { info[Key.updatedObjects.rawValue] = updated }
        if !deleted.isEmpty { info[Key.deletedObjects.rawValue] = deleted }
        if !refreshed.isEmpty { info[Key.refreshedObjects.rawValue] = refreshed }
        if !invalidated.isEmpty { info[Key.invalidatedObjects.rawValue] = invalidated }
        if let invalidatedAll { info[Key.invalidatedAllObjects.rawValue] = invalidatedAll }
        return info
    }

    /// The event as object IDs, of a kind.
    func event(_ kind: ContextChange.Kind) -> ContextChange {
        ContextChange(
            kind: kind, inserted: Set(inserted.map(\.objectID)), updated: Set(updated.map(\.objectID)), deleted: Set(deleted.map(\.objectID)),
            refreshed: Set(refreshed.map(\.objectID)),
            invalidated: Set(invalidated.map(\.objectID)).union(invalidatedAll ?? []), invalidatedAll: invalidatedAll != nil)
    }
}

extension ManagedObjectContext {
    // MARK: Names and keys

    /// Posted when objects of the context changed (Core Data's
    /// `NSManagedObjectContextObjectsDidChange`, `didChangeObjectsNotification`): by
    /// ``processPendingChanges()`` (and so by ``save()`` and at the end of each ``perform(_:)``
    /// block), by undo, redo, rollback, reset and merges. The object is the context; the
    /// `userInfo` holds sets of ``ManagedObject`` under ``NotificationKey/insertedObjects``,
    /// `updatedObjects`, `deletedObjects`, `refreshedObjects`, `invalidatedObjects`, and the
    /// IDs of all objects under `invalidatedAllObjects` after a reset (read them with
    /// ``ChangedObjects/init(_:)``). Posted on the context's queue, only when something changed.
    public static let objectsDidChangeNotification = Notification.Name("NSManagedObjectContextObjectsDidChangeNotification")
    /// Posted when a save is about to start (`NSManagedObjectContextWillSave`); no `userInfo`.
    /// Changes made by an observer are part of the save.
    public static let willSaveNotification = Notification.Name("NSManagedObjectContextWillSaveNotification")
    /// Posted after a save (`NSManagedObjectContextDidSave`): the `userInfo` holds the objects
    /// inserted, updated and deleted (``NotificationKey/insertedObjects`` …), inserted ones
    /// with their permanent IDs. For a child context, after its changes were pushed into its
    /// parent.
    public static let didSaveNotification = Notification.Name("NSManagedObjectContextDidSaveNotification")
    /// Posted after a save, with the IDs only (`NSManagedObjectContextDidSaveObjectIDs`):
    /// `Set<ManagedObjectID>` under ``NotificationKey/insertedObjectIDs``, `updatedObjectIDs`,
    /// `deletedObjectIDs`. Safe to hand to another thread; read it with
    /// ``SaveNotification/init(_:)`` or pass it to ``mergeChanges(fromContextDidSave:)-(Notification)``.
    public static let didSaveObjectIDsNotification = Notification.Name("NSManagedObjectContextDidSaveObjectIDsNotification")
    /// Posted after a context merged another's save (`NSManagedObjectContextDidMergeChangesObjectIDs`),
    /// with the IDs inserted, updated (refreshed) and deleted.
    public static let didMergeChangesObjectIDsNotification = Notification.Name("NSManagedObjectContextDidMergeChangesObjectIDsNotification")

    /// The keys of the `userInfo` of a context's notifications (Core Data's
    /// `NSManagedObjectContext.NotificationKey`: `NSInsertedObjectsKey` and the others).
    public enum NotificationKey: String, Sendable, CaseIterable {
        /// `Set<ManagedObject>` of inserted objects (`NSInsertedObjectsKey`).
        case insertedObjects = "inserted"
        /// `Set<ManagedObject>` of updated objects (`NSUpdatedObjectsKey`).
        case updatedObjects = "updated"
        /// `Set<ManagedObject>` of deleted objects (`NSDeletedObjectsKey`).
        case deletedObjects = "deleted"
        /// `Set<ManagedObject>` of refreshed objects (`NSRefreshedObjectsKey`).
        case refreshedObjects = "refreshed"
        /// `Set<ManagedObject>` of invalidated objects (`NSInvalidatedObjectsKey`).
        case invalidatedObjects = "invalidated"
        /// `[ManagedObjectID]` of every object a reset invalidated (`NSInvalidatedAllObjectsKey`).
        case invalidatedAllObjects = "invalidatedAll"
        /// `Set<ManagedObjectID>` of inserted objects.
        case insertedObjectIDs = "inserted_objectIDs"
        /// `Set<ManagedObjectID>` of updated objects.
        case updatedObjectIDs = "updated_objectIDs"
        /// `Set<ManagedObjectID>` of deleted objects.
        case deletedObjectIDs = "deleted_objectIDs"
        /// `Set<ManagedObjectID>` of refreshed objects.
        case refreshedObjectIDs = "refreshed_objectIDs"
        /// `Set<ManagedObjectID>` of invalidated objects.
        case invalidatedObjectIDs = "invalidated_objectIDs"
    }

    // MARK: The stream

    /// A new stream of the context's events, from now on, in the order they happen:
    /// objects-did-change, will-save and did-save, as object IDs (see ``ContextChange``).
    /// Each use of the property makes a new stream; it ends when its iteration is cancelled
    /// or the context goes away.
    ///
    /// ```swift
    /// let events = context.changes          // subscribed here
    /// try context.save()
    /// for await event in events where event.kind == .didSave { print(event.inserted) }
    /// ```
    ///
    /// Events are yielded on the context's queue and buffered without limit until read.
    public var changes: AsyncStream<ContextChange> {
        let (stream, continuation) = AsyncStream.makeStream(of: ContextChange.self, bufferingPolicy: .unbounded)
        let streams = self.streams
        let token = streams.add(continuation)
        continuation.onTermination = { _ in streams.remove(token) }
        return stream
    }

    // MARK: Automatic merging

    /// Whether saves of the parent are merged into this context as they happen (Core Data's
    /// `automaticallyMergesChangesFromParent`): for a child context, the saves of its parent;
    /// for a context on a coordinator, the saves of the other contexts on the same
    /// coordinator. Each save is merged with ``mergeChanges(fromContextDidSave:)-(SaveNotification)``
    /// inside this context's ``perform(_:)`` (at once for a confinement context, on the
    /// saving thread), which posts objects-did-change with the objects refreshed, deleted
    /// and inserted. Default false.
    public var automaticallyMergesChangesFromParent: Bool {
        get { automaticMergeObserver != nil }
        set {
            checkAccess()
            if newValue == (automaticMergeObserver != nil) { return }
            if let token = automaticMergeObserver {
                NotificationCenter.default.removeObserver(token)
                automaticMergeObserver = nil
                return
            }
            automaticMergeObserver = NotificationCenter.default.addObserver(
                forName: Self.didSaveObjectIDsNotification, object: nil, queue: nil
            ) { [weak self] note in
                guard let self, let saver = note.object as? ManagedObjectContext, saver !== self, let saved = SaveNotification(note) else { return }
                if let parent = self.parent {
                    guard saver === parent else { return }
                } else {
                    guard saver.parent == nil, saver.coordinator === self.coordinator else { return }
                }
                self.perform { self.mergeChanges(fromContextDidSave: saved) }
            }
        }
    }

    /// Merges the changes of a did-save notification (``didSaveNotification`` or
    /// ``didSaveObjectIDsNotification``) posted by another context: see
    /// ``mergeChanges(fromContextDidSave:)-(SaveNotification)``.
    public func mergeChanges(fromContextDidSave notification: Notification) {
        guard let saved = SaveNotification(notification) else { return }
        mergeChanges(fromContextDidSave: saved)
    }

    // MARK: Recording

    /// Whether an object is in ``registry`` under its ID. Told by its link alone
    /// while no object can hold the link unregistered (see
    /// `ContextLink.mayHoldUnregisteredObjects`): a look-up in a table of every object, per
    /// object changed, twice (noted, then announced), was a cache miss each in a big context.
    /// Not for a new object between its making and its registration.
    @inline(__always)
    func isRegistered(_ object: ManagedObject) -> Bool {
        guard object.belongs(to: self) else { return false }
        return !link.mayHoldUnregisteredObjects || registry[object.objectID] === object
    }

    /// Records an object's state before its first change since the last announcement.
    @inline(__always)
    func noteChange(_ object: ManagedObject) {
        guard object.wasVisibleBeforeEvent == nil else { return }
        noteFirstChange(object, wasVisible: !object.isDeleted && isRegistered(object))
    }

    func noteFirstChange(_ object: ManagedObject, wasVisible: Bool) {
        guard object.wasVisibleBeforeEvent == nil else { return }
        object.wasVisibleBeforeEvent = wasVisible
        pendingEvent.changed.append(object)
    }

    /// Records an object whose values were reloaded or reverted.
    func noteRefresh(_ object: ManagedObject) {
        pendingEvent.refreshed[ObjectIdentifier(object)] = object
    }

    // MARK: Announcing

    /// Posts objects-did-change for the changes recorded since the last time, if any:
    /// `refreshing` reports objects present before and after as refreshed (a rollback)
    /// rather than updated.
    func announcePendingChanges(refreshing: Bool = false) {
        guard !pendingEvent.isEmpty else { return }
        let pending = pendingEvent
        pendingEvent = PendingEvent()
        var objects = ChangedObjects()
        // Classified into arrays first, so that each set is made at its size (growing a set
        // of 100,000 objects rehashes it again and again). The arrays hold the objects
        // unretained (`pending` holds them): only the sets retain them.
        var inserted: [Unmanaged<ManagedObject>] = [], deleted: [Unmanaged<ManagedObject>] = [], changed: [Unmanaged<ManagedObject>] = []
        pending.changed.forEachBorrowed { object in
            let was = object.wasVisibleBeforeEvent ?? false
            object.wasVisibleBeforeEvent = nil
            let now = !object.isDeleted && isRegistered(object)
            switch (was, now) {
            case (false, true): inserted.append(.passUnretained(object))
            case (true, false): deleted.append(.passUnretained(object))
            case (true, true): changed.append(.passUnretained(object))
            case (false, false): break
            }
        }
        withExtendedLifetime(pending) {
            objects.inserted = Set(inserted.lazy.map { $0.takeUnretainedValue() })
            objects.deleted = Set(deleted.lazy.map { $0.takeUnretainedValue() })
            if refreshing {
                objects.refreshed = Set(changed.lazy.map { $0.takeUnretainedValue() })
            } else {
                objects.updated = Set(changed.lazy.map { $0.takeUnretainedValue() })
            }
        }
        for object in pending.refreshed.values where !objects.deleted.contains(object) && !objects.inserted.contains(object) {
            objects.refreshed.insert(object)
        }
        for object in pending.invalidated.values { objects.invalidated.insert(object) }
        objects.invalidatedAll = pending.invalidatedAll
        if objects.isEmpty, objects.invalidatedAll == nil { return }
        if keepsAnnouncedObjects {
            announcedObjects = objects
            // The lists the sets were made from, in order (`objects` holds their objects while
            // it is kept): the did-save compares its lists with them before hashing anything.
            announcedLists = (inserted, refreshing ? [] : changed, deleted)
        }
        announce(.objectsDidChange, objects)
    }

    /// Tells the context's fetched-results controllers, `NotificationCenter.default` and the
    /// streams, in that order. The streams' event (sets of IDs) is made from `objects` only
    /// when a stream is open (a save of 100,000 objects hashes each ID again to make it), and
    /// before anyone is told: an observer's save or fault could change the objects' IDs.
    func announce(_ kind: ContextChange.Kind, _ objects: ChangedObjects, event: ContextChange? = nil) {
        let streamEvent = streams.isEmpty ? nil : event ?? objects.event(kind)
        for observer in internalObservers { observer.observer?.context(self, didAnnounce: kind, objects) }
        internalObservers.removeAll { $0.observer == nil }
        let name: Notification.Name
        switch kind {
        case .objectsDidChange: name = Self.objectsDidChangeNotification
        case .willSave: name = Self.willSaveNotification
        case .didSave: name = Self.didSaveNotification
        }
        NotificationCenter.default.post(name: name, object: self, userInfo: kind == .willSave ? nil : objects.userInfo)
        if kind == .didSave {
            let event = streamEvent ?? event ?? objects.event(kind)
            NotificationCenter.default.post(name: Self.didSaveObjectIDsNotification, object: self, userInfo: event.objectIDsUserInfo)
        }
        if let streamEvent { streams.yield(streamEvent) }
    }

    /// Announces a save: the notifications, the streams, then ``didSave``.
    func announceSave(_ saved: SaveNotification, _ savedObjects: SavedObjects) {
        var objects = ChangedObjects()
        let announced = announcedObjects
        let lists = announcedLists
        objects.inserted = Self.set(of: savedObjects.inserted, reusing: announced?.inserted, madeFrom: lists?.inserted)
        objects.updated = Self.set(of: savedObjects.updated, reusing: announced?.updated, madeFrom: lists?.updated)
        objects.deleted = Self.set(of: savedObjects.deleted, reusing: announced?.deleted, madeFrom: lists?.deleted)
        let event = ContextChange(
            kind: .didSave, inserted: Set(saved.insertedObjectIDs), updated: Set(saved.updatedObjectIDs), deleted: Set(saved.deletedObjectIDs))
        announce(.didSave, objects, event: event)
        didSave?(saved)
    }

    /// The set of `objects`: `announced` itself when it holds exactly them (a save's
    /// objects-did-change listed the objects its did-save lists, most often), else made. The
    /// check compares the objects with the list `announced` was made from (`list`, in its
    /// order: a bulk change is saved in the order it was made, most often), else hashes each
    /// object's identity; it reads no object. Making the set retained each one, out of the
    /// cache, and freeing it released each.
    private static func set(of objects: [ManagedObject], reusing announced: Set<ManagedObject>?, madeFrom list: [Unmanaged<ManagedObject>]?) -> Set<ManagedObject> {
        if let announced, let list, list.count == objects.count, announced.count == objects.count {
            let same = objects.withUnsafeBufferPointer { objects in
                list.withUnsafeBufferPointer { list in
                    // Compared as addresses: no reference taken.
                    zip(objects, list).allSatisfy { Unmanaged.passUnretained($0).toOpaque() == $1.toOpaque() }
                }
            }
            if same { return announced }
        }
        if let announced, announced.count == objects.count {
            var all = true
            objects.forEachBorrowed { object in
                if all, !announced.contains(object) { all = false }
            }
            if all { return announced }
        }
        return Set(objects)
    }

    /// Registers a fetched-results controller (held weakly).
    func addInternalObserver(_ observer: ContextObserver) {
        internalObservers.append(WeakContextObserver(observer: observer))
    }
}

extension ContextChange {
    /// The `userInfo` of a did-save-object-IDs or did-merge notification.
    var objectIDsUserInfo: [AnyHashable: Any] {
        typealias Key = ManagedObjectContext.NotificationKey
        var info: [AnyHashable: Any] = [:]
        info[Key.insertedObjectIDs.rawValue] = inserted
        info[Key.updatedObjectIDs.rawValue] = updated
        info[Key.deletedObjectIDs.rawValue] = deleted
        if !refreshed.isEmpty { info[Key.refreshedObjectIDs.rawValue] = refreshed }
        if !invalidated.isEmpty { info[Key.invalidatedObjectIDs.rawValue] = invalidated }
        return info
    }
}

extension SaveNotification {
    /// The IDs of a did-save notification: ``ManagedObjectContext/didSaveObjectIDsNotification``
    /// (its ID sets) or ``ManagedObjectContext/didSaveNotification`` (its objects' IDs); nil
    /// for a notification with neither. IDs come sorted by URI, for a stable order.
    public init?(_ notification: Notification) {
        guard let info = notification.userInfo else { return nil }
        typealias Key = ManagedObjectContext.NotificationKey
        func ids(_ idKey: Key, _ objectKey: Key) -> [ManagedObjectID]? {
            let found = (info[idKey.rawValue] as? Set<ManagedObjectID>) ?? (info[objectKey.rawValue] as? Set<ManagedObject>).map { Set($0.map(\.objectID)) }
            return found?.sorted { $0.uriRepresentation < $1.uriRepresentation }
        }
        let inserted = ids(.insertedObjectIDs, .insertedObjects)
        let updated = ids(.updatedObjectIDs, .updatedObjects)
        let deleted = ids(.deletedObjectIDs, .deletedObjects)
        guard inserted != nil || updated != nil || deleted != nil else { return nil }
        self.init(insertedObjectIDs: inserted ?? [], updatedObjectIDs: updated ?? [], deletedObjectIDs: deleted ?? [])
    }
}

/// The changes recorded since the last objects-did-change.
struct PendingEvent {
    /// Objects changed since, each once (their state before is on the object).
    var changed: [ManagedObject] = []
    var refreshed: [ObjectIdentifier: ManagedObject] = [:]
    var invalidated: [ObjectIdentifier: ManagedObject] = [:]
    /// After a reset: the IDs of every object the context had.
    var invalidatedAll: [ManagedObjectID]?

    var isEmpty: Bool { changed.isEmpty && refreshed.isEmpty && invalidated.isEmpty && invalidatedAll == nil }
}

/// Something in the library that follows a context's events synchronously, on its queue (a
/// fetched-results controller).
protocol ContextObserver: AnyObject {
    func context(_ context: ManagedObjectContext, didAnnounce kind: ContextChange.Kind, _ objects: ChangedObjects)
}

struct WeakContextObserver {
    weak var observer: ContextObserver?
}

/// The continuations of a context's ``ManagedObjectContext/changes`` streams; a stream ends
/// (on any thread) when its iteration is cancelled, so the list is behind a lock.
final class ContextStreams: Sendable {
    private let state = LockedState()

    private final class LockedState: @unchecked Sendable {
        let lock = NSLock()
        var next = 0
        var continuations: [Int: AsyncStream<ContextChange>.Continuation] = [:]
    }

    func add(_ continuation: AsyncStream<ContextChange>.Continuation) -> Int {
        state.lock.withLock {
            state.next += 1
            state.continuations[state.next] = continuation
            return state.next
        }
    }

    func remove(_ token: Int) {
        state.lock.withLock { _ = state.continuations.removeValue(forKey: token) }
    }

    var isEmpty: Bool { state.lock.withLock { state.continuations.isEmpty } }

    /// Yields an event to every stream, in the order streams were made.
    func yield(_ event: ContextChange) {
        let continuations = state.lock.withLock { state.continuations.sorted { $0.key < $1.key }.map(\.value) }
        for continuation in continuations { continuation.yield(event) }
    }

    /// Ends every stream (the context goes away).
    func finish() {
        let continuations = state.lock.withLock {
            defer { state.continuations.removeAll() }
            return Array(state.continuations.values)
        }
        for continuation in continuations { continuation.finish() }
    }
}
