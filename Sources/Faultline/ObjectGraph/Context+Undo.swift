import FaultlineModel
import Foundation

// Undo and redo: each user-level change records the states of the objects it touches (before
// their first change) as one step; undo puts those states back and keeps the current ones
// for redo.

extension ManagedObjectContext {
    // MARK: Undo

    /// Marks an object as changed, recording its state for undo first.
    func willChange(_ object: ManagedObject, new: Bool = false) {
        changeCount &+= 1
        let key = ObjectKey(object)
        if isUndoEnabled, openGroup != nil, openGroupMembers.insert(key).inserted {
            openGroup?.append(capture(object, new: new))
        }
        if new { noteFirstChange(object, wasVisible: false) } else { noteChange(object) }
        if lastTouched != key {
            touched.insert(object)
            lastTouched = key
        }
    }

    /// Runs `body` as one undo step (nested calls join the outer step).
    func recordingChanges<T>(_ body: () throws -> T) rethrows -> T {
        checkAccess()
        // Nothing to record without undo (every use of the group checks `isUndoEnabled`).
        if openGroup != nil || !isUndoEnabled { return try body() }
        openGroup = []
        openGroupMembers = []
        defer {
            if let group = openGroup, !group.isEmpty {
                undoStack.append(group)
                redoStack.removeAll()
            }
            openGroup = nil
            openGroupMembers = []
        }
        return try body()
    }

    /// Runs `body` so that all its changes are undone by one ``undo()``.
    public func undoGroup<T>(_ body: () throws -> T) rethrows -> T {
        try recordingChanges(body)
    }

    /// Whether there is a change to undo.
    public var canUndo: Bool { !undoStack.isEmpty }
    /// Whether there is an undone change to redo.
    public var canRedo: Bool { !redoStack.isEmpty }

    /// Undoes the last user-level change (an insert, a set, a relationship change, a delete,
    /// or a whole ``undoGroup(_:)``), with its inverse-relationship and delete-rule effects.
    ///
    /// The stack holds changes since the last ``save()``, ``rollback()`` or ``reset()``: a
    /// save clears it (saved changes are not undone), as do rollback and reset.
    public func undo() {
        checkAccess()
        guard let group = undoStack.popLast() else { return }
        let current = group.map { capture($0.object) }
        for state in group.reversed() { restore(state) }
        redoStack.append(current)
        announcePendingChanges()
    }

    /// Redoes the last undone change.
    public func redo() {
        checkAccess()
        guard let group = redoStack.popLast() else { return }
        let current = group.map { capture($0.object) }
        for state in group.reversed() { restore(state) }
        undoStack.append(current)
        announcePendingChanges()
    }

    func capture(_ object: ManagedObject, new: Bool = false) -> ObjectState {
        let key = ObjectKey(object)
        return ObjectState(
            object: object, storage: object.storage, committed: object.committed, pendingToMany: object.pendingToMany,
            isFault: object.isFault, version: object.rowVersion, isInserted: object.isInserted, isDeleted: object.isDeleted,
            isRegistered: !new && isRegistered(object), isTouched: touched.contains(object),
            isPropagated: propagatedDeletions.contains(key), isInaccessible: object.isInaccessible)
    }

    func restore(_ state: ObjectState) {
        let object = state.object
        let key = ObjectKey(object)
        noteChange(object)
        object.storage = state.storage
        object.committed = state.committed
        object.pendingToMany = state.pendingToMany
        object.isFault = state.isFault
        object.rowVersion = state.version
        object.isInserted = state.isInserted
        object.isDeleted = state.isDeleted
        object.isInaccessible = state.isInaccessible
        if state.isRegistered {
            // An object registered under the ID since (a new fault after the object was
            // forgotten) leaves the registry and keeps its link.
            if let displaced = registry.updateValue(object, forKey: object.objectID), displaced !== object, displaced.belongs(to: self) {
                link.mayHoldUnregisteredObjects = true
            }
            object.managedObjectContext = self
        } else if registry[object.objectID] === object {
            registry[object.objectID] = nil
            // Out of the registry, still linked (a redo registers it again).
            if object.belongs(to: self) { link.mayHoldUnregisteredObjects = true }
        }
        if state.isTouched { touched.insert(object) } else { touched.remove(object) }
        if state.isPropagated { propagatedDeletions.insert(key) } else { propagatedDeletions.remove(key) }
        if state.isDeleted, !state.isPropagated { deletionsMayNeedRules = true }
    }
}

/// An object's state before a change, for undo and redo.
struct ObjectState {
    let object: ManagedObject
    var storage: ObjectValues
    var committed: ObjectValues
    var pendingToMany: [String: PendingToMany]
    var isFault: Bool
    var version: Int64
    var isInserted: Bool
    var isDeleted: Bool
    var isRegistered: Bool
    var isTouched: Bool
    var isPropagated: Bool
    /// Whether the object was deleted as an inaccessible fault (a state no undo step records:
    /// one captured before it restores the object as it was then).
    var isInaccessible: Bool
}
