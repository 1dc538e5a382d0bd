import FaultlineModel
import Foundation

// Typed accessors: what the properties of a ManagedObjectSubclass call. They read and write
// the same value slots as value(forKey:) and setValue(_:forKey:), with the same faults,
// change tracking, undo and inverse relationships, but find the slot by the class's property
// number (a table made when the class was registered) instead of hashing the key.
//
// `index` is the property's position in the class's `managedProperties`; `key` its name, used
// for errors and for an object not made by a context (no slot table), where the accessors
// fall back to the key-value methods.

extension ManagedObject {
    /// The slot of the class's property `index`, after firing the fault and completing a
    /// partially fetched object; nil when the object has no slot table (not made by a
    /// context as an instance of a registered class) or no context.
    @inline(__always)
    private func loadedSlot(_ index: Int, _ key: String) -> (slot: Int, context: ManagedObjectContext)? {
        guard index < classSlots.count, let context = managedObjectContext else { return nil }
        context.checkAccess()
        if isFault { context.fireFaultForRead(self) }
        if let partialKeys, !partialKeys.contains(key) { context.completePartialObject(self) }
        // The row may have been a sub-entity's, whose layout the class's slots do not fit
        // (``keepLayout(of:)`` drops them): then by key.
        guard index < classSlots.count else { return nil }
        return (classSlots[index], context)
    }

    /// The value of an attribute (nil when it has none), for a typed property's getter.
    @inlinable
    public func attributeValue<Value: ManagedAttributeValue>(at index: Int, named key: String) -> Value? {
        Value._managedValue(of: self, at: index, named: key)
    }

    /// Sets an attribute, for a typed property's setter: a change like
    /// ``setValue(_:forKey:)``'s. Setters cannot throw, so a refused change (a read-only
    /// attribute) is kept and thrown by the context's next ``ManagedObjectContext/save()``.
    @inlinable
    public func setAttributeValue<Value: ManagedAttributeValue>(_ value: Value?, at index: Int, named key: String) {
        Value._setManagedValue(value, of: self, at: index, named: key)
    }

    /// The typed getters' fast path: the class's attribute `index` read in place in its row
    /// page (see ``RowPage/read(base:slot:field:_:)``) when the object is loaded, whole, unchecked
    /// and its values are the page's (unchanged since read); nil otherwise, and
    /// ``storedAttribute(at:named:)`` decides. A copy of the value, made and destroyed through
    /// outlined calls, was a third of a typed read.
    @inline(__always)
    func pageRead<T>(at index: Int, field: CompactField<T>, _ match: (UnsafePointer<StoredValue>) -> T?) -> T?? {
        // The link only looked at, not bound: bound, the optimizer kept it retained across the read.
        guard !isFault, let slot = classSlots.slotIfPresent(index), contextLink?.checksAccess == false, partialKeys == nil else { return nil }
        return ObjectValues.pageRead(&storage, at: slot, field: field, match)
    }

    /// A typed getter's read of the class's attribute `index`: in place in the row page when
    /// ``pageRead(at:field:_:)`` can (`match`, its type's case, for a wide page), else `match`
    /// applied to ``storedAttribute(at:named:)``'s value, out of line.
    @inline(__always)
    func typedAttribute<T>(at index: Int, named key: String, field: CompactField<T>, _ match: (UnsafePointer<StoredValue>) -> T?) -> T? {
        if let read = pageRead(at: index, field: field, match) { return read }
        return storedAttribute(at: index, named: key, match)
    }

    /// The typed getters' slow path, out of line (the fast path's function then saves and
    /// restores fewer registers): `match` applied to ``storedAttribute(at:named:)``.
    @inline(never)
    private func storedAttribute<T>(at index: Int, named key: String, _ match: (UnsafePointer<StoredValue>) -> T?) -> T? {
        withUnsafePointer(to: storedAttribute(at: index, named: key), match)
    }

    /// The typed value of the class's attribute `index`: its slot's, after firing the fault;
    /// an external binary value is read from its file.
    @inline(__always)
    func storedAttribute(at index: Int, named key: String) -> StoredValue {
        // Loaded, whole and unchecked: the slot as it is, without loading the context (the
        // slow path below would find the same value, after a weak load).
        if !isFault, partialKeys == nil, index < classSlots.count, let link = contextLink, !link.checksAccess {
            let stored = storage[stored: classSlots[index]]
            if case .other = stored {} else { return stored }
        }
        guard let (slot, context) = loadedSlot(index, key) else { return StoredValue(value(forKey: key)) }
        let stored = storage[stored: slot]
        if case .other(let box) = stored, let reference = box.value as? ExternalBinaryDataReference {
            return StoredValue(context.loadExternalData(reference, forKey: key, of: self))
        }
        return stored
    }

    /// Sets the class's attribute `index` to a value of its type.
    func setStoredAttribute(_ value: StoredValue, at index: Int, named key: String) {
        // Another value of the object the context's last change was to, its change noted
        // since the last announcement: nothing but the value and the context's change count
        // moves when no undo step is recorded, no access is checked and no awakeFromFetch
        // runs — written here, without loading the weakly held context (the runtime's slow
        // path, in every setter of a new object). What the context's `setAttribute` does is
        // then this: no fault to fire, no undo step, the object noted and touched already.
        if let link = contextLink, link.lastTouched == ObjectKey(self), !link.recordsUndo, !link.checksAccess, link.awakening == 0,
            !isFault, wasVisibleBeforeEvent != nil, index < classSlots.count
        {
            let slot = classSlots[index]
            if entity.propertyLayout.isWritable[slot] {
                if StoredValue.same(storage[stored: slot], value) { return }
                link.changeCount &+= 1
                storage[stored: slot] = value
                return
            }
        }
        guard index < classSlots.count, let context = managedObjectContext else { return setByKey(value.any, key) }
        context.checkAccess()
        do {
            // One undo step for the fault's filling (what its awakeFromFetch() changes) and
            // the change, as setValue(_:forKey:) records them.
            try context.recordingChanges {
                // Filled first: the row may be a sub-entity's, whose layout the class's slots
                // do not fit (``keepLayout(of:)`` drops them), and the slot is chosen after.
                if isFault { try context.fireFault(self) }
                guard index < classSlots.count else { return setByKey(value.any, key) }
                let slot = classSlots[index]
                if !entity.propertyLayout.isWritable[slot] {
                    throw ManagedObjectError(.readOnly, entity: entity.name, objectID: objectID, key: key, "attribute \(key) is read-only")
                }
                try context.setAttribute(value, slot: slot, of: self)
            }
        } catch {
            context.keepAccessorError(error)
        }
    }

    /// The destination of a to-one relationship (a fault, maybe), for a typed getter.
    public func toOneValue<Destination: ManagedObject>(at index: Int, named key: String) -> Destination? {
        guard let (slot, context) = loadedSlot(index, key) else { return value(forKey: key) as? Destination }
        guard let id = storage.objectID(at: slot) else { return nil }
        return context.object(with: id, reachedThrough: "\(entity.name).\(key)") as? Destination
    }

    /// Sets a to-one relationship (its inverse follows), for a typed setter; a refused
    /// change (an object of another context) is thrown by the next save.
    public func setToOneValue<Destination: ManagedObject>(_ destination: Destination?, at index: Int, named key: String) {
        changeRelationship(at: index, named: key, byKey: { try setValue(destination, forKey: key) }) { context, relationship in
            if let destination { try context.checkDestination(destination, of: relationship, in: self) }
            try context.recordingChanges { try context.setToOne(self, relationship, destination) }
        }
    }

    /// The destinations of a to-many relationship, in the relationship's order when it is
    /// ordered (firing the relationship fault the first time), for a typed getter.
    public func toManyValue<Destination: ManagedObject>(at index: Int, named key: String) -> [Destination] {
        guard let (slot, context) = loadedSlot(index, key) else {
            return (value(forKey: key) as? [ManagedObject] ?? []).compactMap { $0 as? Destination }
        }
        let relationship = entity.relationships[slot - entity.attributes.count]
        let objects = context.relationshipFaultForRead(relationship, of: self)
        return objects.compactMap { $0 as? Destination }
    }

    /// Replaces the destinations of a to-many relationship (inverses follow), for a typed
    /// setter; a refused change is thrown by the next save.
    public func setToManyValue<Destination: ManagedObject>(_ destinations: [Destination], at index: Int, named key: String) {
        changeRelationship(at: index, named: key, byKey: { try setValue(destinations as [ManagedObject], forKey: key) }) { context, relationship in
            for destination in destinations { try context.checkDestination(destination, of: relationship, in: self) }
            try context.recordingChanges { try context.replaceToMany(self, relationship, with: destinations) }
        }
    }

    /// Adds objects to a to-many relationship (at the end of an ordered one), for the
    /// generated `addTo<Key>(_:)`; a refused change is thrown by the next save.
    public func addToManyValues<Destination: ManagedObject>(_ destinations: [Destination], at index: Int, named key: String) {
        changeRelationship(at: index, named: key, byKey: { for destination in destinations { try addObject(destination, toRelationship: key) } }) {
            context, relationship in
            for destination in destinations { try context.checkDestination(destination, of: relationship, in: self) }
            try context.recordingChanges {
                for destination in destinations { try context.addToMany(self, relationship, destination) }
            }
        }
    }

    /// Removes objects from a to-many relationship, for the generated
    /// `removeFrom<Key>(_:)`; a refused change is thrown by the next save.
    public func removeToManyValues<Destination: ManagedObject>(_ destinations: [Destination], at index: Int, named key: String) {
        changeRelationship(at: index, named: key, byKey: { for destination in destinations { try removeObject(destination, fromRelationship: key) } }) {
            context, relationship in
            try context.recordingChanges {
                for destination in destinations { try context.removeFromToMany(self, relationship, destination) }
            }
        }
    }

    /// Runs a typed relationship change on the class's property `index` (its relationship
    /// found by slot); an object without a slot table changes it by key instead. Errors wait
    /// for the next save; an object in no context has no relationships to change.
    private func changeRelationship(
        at index: Int, named key: String, byKey fallback: () throws -> Void,
        _ change: (ManagedObjectContext, RelationshipDescription) throws -> Void
    ) {
        guard let context = managedObjectContext else { return }
        do {
            guard index < classSlots.count else { return try fallback() }
            context.checkAccess()
            try change(context, entity.relationships[classSlots[index] - entity.attributes.count])
        } catch {
            context.keepAccessorError(error)
        }
    }

    /// A typed setter on an object without a slot table: through ``setValue(_:forKey:)``; an
    /// object in no context keeps the value in its storage (it is never saved).
    private func setByKey(_ value: Any?, _ key: String) {
        guard let context = managedObjectContext else {
            if entity.relationship(named: key) == nil { storage[key] = value }
            return
        }
        do { try setValue(value, forKey: key) } catch { context.keepAccessorError(error) }
    }
}
