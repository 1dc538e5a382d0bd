import FaultlineModel
import FaultlinePredicate
import Foundation

// Inserting, changing and deleting objects; the change sets; rollback and reset (undo and
// redo are in Context+Undo.swift).
//
// Every user-level change goes through `recordingChanges`, which groups the states of the
// objects it touches (before their first change) into one undo step, and `willChange`,
// which marks an object as touched. Inverse relationships are kept on both sides in memory:
// a to-many whose fault has not fired records the change as pending and applies it when
// the fault fires, so keeping an inverse never runs SQL for a to-many.

extension ManagedObjectContext {
    // MARK: Change sets

    /// Objects inserted and not saved yet.
    public var insertedObjects: Set<ManagedObject> {
        Set(touched.objects.filter { $0.isInserted && !$0.isDeleted })
    }

    /// Stored objects with changed values not saved yet.
    public var updatedObjects: Set<ManagedObject> {
        Set(touched.objects.filter(\.isUpdated))
    }

    /// Stored objects deleted and not saved yet (after ``processPendingChanges()``, also those
    /// reached by Cascade delete rules).
    public var deletedObjects: Set<ManagedObject> {
        Set(touched.objects.filter { $0.isDeleted && !$0.isInserted })
    }

    /// Whether anything is inserted, changed or deleted and not saved yet.
    public var hasChanges: Bool {
        touched.contains { ($0.isInserted && !$0.isDeleted) || ($0.isDeleted && !$0.isInserted) || $0.isUpdated }
    }

    // MARK: Insert and delete

    /// Creates a new object of an entity and registers it: it gets a temporary ID
    /// (`x-coredata:///Asset/t<UUID><number>`), attribute defaults from the model, and empty to-many
    /// relationships. It is written by the next ``save()``.
    ///
    /// - Throws: ``ManagedObjectError`` (`cannotInsert`) when the entity is unknown or abstract.
    @discardableResult
    public func insertObject(entityName: String) throws -> ManagedObject {
        checkAccess()
        let entity = try insertableEntity(named: entityName)
        let object = makeObject(entity: entity, objectID: temporaryID(for: entityName), isFault: false)
        finishInsert(object)
        return object
    }

    /// The entity of a new object; throws when the model lacks it or it is abstract.
    func insertableEntity(named entityName: String) throws -> EntityDescription {
        if let last = lastInsertableEntity, last.name == entityName { return last }
        guard let entity = model.entity(named: entityName) else {
            throw ManagedObjectError(.cannotInsert, entity: entityName, "entity \(entityName) not found in the model; entities: \(model.entities.map(\.name).joined(separator: ", "))")
        }
        guard !entity.isAbstract else {
            throw ManagedObjectError(.cannotInsert, entity: entityName, "entity \(entityName) is abstract: insert one of its sub-entities (\(entity.subentityNames.joined(separator: ", ")))")
        }
        lastInsertableEntity = entity
        return entity
    }

    /// Gives a new object its default values and empty to-manys, registers it as inserted
    /// (one undo step), then runs its ``ManagedObject/awakeFromInsert()``.
    func finishInsert(_ object: ManagedObject) {
        let entity = object.entity
        if let defaults = insertDefaults(for: entity) {
            for (slot, value) in defaults { object.storage[stored: slot] = value }
        } else {
            for attribute in entity.attributes {
                if let value = AttributeValues.defaultValue(of: attribute) { object.storage[attribute.name] = value }
            }
            for relationship in entity.relationships where relationship.isToMany {
                object.storage[relationship.name] = [ManagedObjectID]()
            }
        }
        nextInsertionSequence += 1
        object.insertionSequence = nextInsertionSequence
        recordingChanges {
            // Linked, not registered yet: noted as new (not visible before, not registered
            // in its undo step) without a look-up.
            willChange(object, new: true)
            object.isInserted = true
            registry[object.objectID] = object
        }
        if callsLifecycleHooks(of: object) { object.awakeFromInsert() }
    }

    /// The values a new object of an entity starts with, by slot: its attributes' defaults
    /// and its to-many relationships empty. Worked out once per entity; nil when property
    /// names repeat (an invalid model), where they are set by name.
    func insertDefaults(for entity: EntityDescription) -> [(slot: Int, value: StoredValue)]? {
        if let last = lastInsertDefaults, last.entityName == entity.name { return last.defaults }
        let defaults = computedInsertDefaults(for: entity)
        lastInsertDefaults = (entity.name, defaults)
        return defaults
    }

    private func computedInsertDefaults(for entity: EntityDescription) -> [(slot: Int, value: StoredValue)]? {
        if let cached = insertDefaultsCache[entity.name] { return cached }
        let layout = entity.propertyLayout
        guard !layout.hasDuplicateNames else { return nil }
        var defaults: [(slot: Int, value: StoredValue)] = []
        for (slot, attribute) in entity.attributes.enumerated() {
            if let value = AttributeValues.defaultValue(of: attribute) { defaults.append((slot, StoredValue(value))) }
        }
        for (index, relationship) in entity.relationships.enumerated() where relationship.isToMany {
            defaults.append((entity.attributes.count + index, .objectIDs([])))
        }
        insertDefaultsCache[entity.name] = defaults
        return defaults
    }

    /// Marks an object deleted. Its delete rules (Nullify, Cascade, Deny, No Action) are
    /// applied by ``processPendingChanges()``, which ``save()`` runs first; a Deny rule with
    /// related objects fails the save's validation. Deleting an inserted object simply
    /// forgets it at the next save.
    public func delete(_ object: ManagedObject) {
        checkAccess()
        guard object.belongs(to: self), !object.isDeleted else { return }
        recordingChanges {
            willChange(object)
            object.isDeleted = true
            deletionsMayNeedRules = true
        }
    }

    /// Applies the delete rules of the objects deleted since the last call: Nullify removes
    /// the object from its related objects' inverse relationships, Cascade deletes the related
    /// objects (and applies their rules), Deny and No Action leave them (Deny is checked when
    /// saving). Fires the faults needed to find the related objects.
    ///
    /// Then announces the changes made since the last announcement: posts
    /// ``objectsDidChangeNotification`` and yields an event to the ``changes`` streams (see
    /// `Context+Observation.swift`). ``save()`` runs it, and so does the end of each
    /// ``perform(_:)`` block.
    public func processPendingChanges() throws {
        try recordingChanges {
            let changesBefore = changeCount
            var flagsRecorded: [ObjectKey] = []
            while deletionsMayNeedRules, let object = touched.first(where: { $0.isDeleted && !propagatedDeletions.contains(ObjectKey($0)) }) {
                let key = ObjectKey(object)
                // The undo step records that this object's rules had not run, so undoing it
                // makes the next save run them again (else the save deletes the object and
                // leaves rows naming it).
                if isUndoEnabled, openGroup != nil, openGroupMembers.insert(key).inserted {
                    openGroup?.append(capture(object))
                    flagsRecorded.append(key)
                }
                // Marked only once its rules ran, so a failure (a fault that cannot fire) is
                // retried by the next call.
                try propagateDeletion(of: object)
                propagatedDeletions.insert(key)
            }
            // None left (a rule that threw leaves the flag set: the next call retries).
            deletionsMayNeedRules = false
            // Rules that changed nothing make no undo step.
            if changeCount == changesBefore, !flagsRecorded.isEmpty {
                openGroup?.removeLast(flagsRecorded.count)
                openGroupMembers.subtract(flagsRecorded)
            }
        }
        announcePendingChanges()
    }

    private func propagateDeletion(of object: ManagedObject) throws {
        // A deleted fault whose row is gone has no relationships to follow: with
        // shouldDeleteInaccessibleFaults the save discards it, else the save fails on it.
        if object.isFault, shouldDeleteInaccessibleFaults, !(try fireFaultIfRowExists(object)) {
            deleteInaccessibleFault(object)
            return
        }
        try fireFault(object)
        if callsLifecycleHooks(of: object) { object.prepareForDeletion() }
        for relationship in object.entity.relationships {
            switch relationship.deleteRule {
            case .deny, .noAction:
                continue
            case .nullify, .cascade:
                let destinations = try relatedIDs(of: object, relationship)
                for id in destinations {
                    let destination = self.object(with: id)
                    if relationship.deleteRule == .cascade {
                        delete(destination)
                    } else if let inverse = model.inverse(of: relationship) {
                        try unlink(destination, inverse, from: object.objectID)
                    }
                }
            }
        }
    }

    /// The IDs a relationship holds now, firing the fault of a to-many.
    func relatedIDs(of object: ManagedObject, _ relationship: RelationshipDescription) throws -> [ManagedObjectID] {
        try fireFault(object)
        if relationship.isToMany {
            _ = try fireRelationshipFault(relationship, of: object)
            return object.storage.objectIDs(forKey: relationship.name) ?? []
        }
        return (object.storage.objectID(forKey: relationship.name)).map { [$0] } ?? []
    }

    // MARK: Setting values

    func setValue(_ value: Any?, forKey key: String, of object: ManagedObject) throws {
        if let attribute = object.entity.attribute(named: key) {
            if attribute.isReadOnly || attribute.isDerived {
                throw ManagedObjectError(.readOnly, entity: object.entity.name, objectID: object.objectID, key: key, "attribute \(key) is read-only")
            }
            let slot = object.storage.layout.slot(of: key)
            // A value of the attribute's own Swift type (most): typed as it is, without a cast.
            if let slot, let value, let stored = StoredValue.ofExactType(value, for: attribute.attributeType) {
                return try setAttribute(stored, slot: slot, of: object)
            }
            let coerced = try value.map { try AttributeValues.coerce($0, to: attribute, of: object) }
            if let slot { return try setAttribute(StoredValue(coerced), slot: slot, of: object) }
            try recordingChanges {
                try fireFault(object)
                if ManagedObject.valuesEqual(object.storage[key], coerced) { return }
                willChange(object)
                object.storage[key] = coerced
            }
            return
        }
        guard let relationship = object.entity.relationship(named: key) else {
            throw ManagedObjectError(
                .unknownKey, entity: object.entity.name, objectID: object.objectID, key: key,
                "entity \(object.entity.name) has no property \(key); properties: \((object.entity.attributes.map(\.name) + object.entity.relationships.map(\.name)).joined(separator: ", "))")
        }
        if relationship.isToOne {
            let destination: ManagedObject?
            switch value {
            case nil: destination = nil
            case let object as ManagedObject: destination = object
            default:
                throw ManagedObjectError(.typeMismatch, entity: object.entity.name, objectID: object.objectID, key: key, "expected a \(relationship.destinationEntityName) object or nil for to-one relationship \(key), got \(type(of: value!))")
            }
            if let destination { try checkDestination(destination, of: relationship, in: object) }
            try recordingChanges { try setToOne(object, relationship, destination) }
            return
        }
        let objects: [ManagedObject]
        switch value {
        case nil: objects = []
        case let array as [ManagedObject]: objects = array
        case let set as Set<ManagedObject>: objects = set.sorted { $0.objectID.uriRepresentation < $1.objectID.uriRepresentation }
        default:
            throw ManagedObjectError(.typeMismatch, entity: object.entity.name, objectID: object.objectID, key: key, "expected an array or set of \(relationship.destinationEntityName) objects for to-many relationship \(key), got \(type(of: value!))")
        }
        for destination in objects { try checkDestination(destination, of: relationship, in: object) }
        try recordingChanges { try replaceToMany(object, relationship, with: objects) }
    }

    /// Sets an attribute's slot to a value already of the attribute's Swift type: one change
    /// (an undo step of its own unless a group is open). While ``ManagedObject/awakeFromFetch()``
    /// runs the value becomes the committed one too, so the object does not change.
    func setAttribute(_ value: StoredValue, slot: Int, of object: ManagedObject) throws {
        if awakeningFromFetch > 0, !object.isInserted {
            object.storage[stored: slot] = value
            object.committed[stored: slot] = value
            return
        }
        try recordingChanges {
            try fireFault(object)
            if StoredValue.same(object.storage[stored: slot], value) { return }
            willChange(object)
            object.storage[stored: slot] = value
        }
    }

    /// Checks that `destination` may be put in `relationship` of `object`.
    func checkDestination(_ destination: ManagedObject, of relationship: RelationshipDescription, in object: ManagedObject) throws {
        guard destination.belongs(to: self), object.belongs(to: self) else {
            throw ManagedObjectError(.otherContext, entity: object.entity.name, objectID: object.objectID, key: relationship.name, "\(destination.objectID.uriRepresentation) belongs to another context: relationships join objects of one context")
        }
        guard model.inheritanceChain(of: destination.entity).contains(where: { $0.name == relationship.destinationEntityName }) else {
            throw ManagedObjectError(.typeMismatch, entity: object.entity.name, objectID: object.objectID, key: relationship.name, "relationship \(relationship.name) holds \(relationship.destinationEntityName) objects, got a \(destination.entity.name)")
        }
    }

    func toManyRelationship(_ key: String, of object: ManagedObject) throws -> RelationshipDescription {
        guard let relationship = object.entity.relationship(named: key) else {
            throw ManagedObjectError(.unknownKey, entity: object.entity.name, objectID: object.objectID, key: key, "entity \(object.entity.name) has no relationship \(key)")
        }
        guard relationship.isToMany else {
            throw ManagedObjectError(.notToMany, entity: object.entity.name, objectID: object.objectID, key: key, "\(key) is a to-one relationship: set it with setValue(_:forKey:)")
        }
        return relationship
    }

    // MARK: Relationship primitives (inverse kept on both sides)

    func setToOne(_ object: ManagedObject, _ relationship: RelationshipDescription, _ destination: ManagedObject?) throws {
        try fireFault(object)
        let old = object.storage.objectID(forKey: relationship.name)
        if old == destination?.objectID { return }
        willChange(object)
        object.storage[relationship.name] = destination?.objectID
        guard let inverse = model.inverse(of: relationship) else { return }
        if let old { try unlink(self.object(with: old), inverse, from: object.objectID) }
        if let destination { try link(destination, inverse, to: object) }
    }

    func addToMany(_ object: ManagedObject, _ relationship: RelationshipDescription, _ destination: ManagedObject) throws {
        if let ids = object.storage.objectIDs(forKey: relationship.name), ids.contains(destination.objectID) { return }
        rawAdd(destination.objectID, to: object, relationship.name)
        if let inverse = model.inverse(of: relationship) { try link(destination, inverse, to: object) }
    }

    func removeFromToMany(_ object: ManagedObject, _ relationship: RelationshipDescription, _ destination: ManagedObject) throws {
        if let ids = object.storage.objectIDs(forKey: relationship.name), !ids.contains(destination.objectID) { return }
        rawRemove(destination.objectID, from: object, relationship.name)
        if let inverse = model.inverse(of: relationship) { try unlink(destination, inverse, from: object.objectID) }
    }

    func replaceToMany(_ object: ManagedObject, _ relationship: RelationshipDescription, with objects: [ManagedObject]) throws {
        let current = try relatedIDs(of: object, relationship)
        let wanted = Set(objects.map(\.objectID))
        for id in current where !wanted.contains(id) {
            try removeFromToMany(object, relationship, self.object(with: id))
        }
        for destination in objects { try addToMany(object, relationship, destination) }
        var seen: Set<ManagedObjectID> = []
        let ordered = objects.map(\.objectID).filter { seen.insert($0).inserted }
        if relationship.isOrdered, (object.storage.objectIDs(forKey: relationship.name)) != ordered {
            willChange(object)
            object.storage[relationship.name] = ordered
        }
    }

    /// Makes `destination`'s relationship (the inverse of one of `source`'s) point back at `source`.
    private func link(_ destination: ManagedObject, _ relationship: RelationshipDescription, to source: ManagedObject) throws {
        if relationship.isToMany {
            rawAdd(source.objectID, to: destination, relationship.name)
            return
        }
        try fireFault(destination)
        let previous = destination.storage.objectID(forKey: relationship.name)
        if previous == source.objectID { return }
        if let previous, let back = model.inverse(of: relationship) {
            try unlink(self.object(with: previous), back, from: destination.objectID)
        }
        willChange(destination)
        destination.storage[relationship.name] = source.objectID
    }

    /// Removes `id` from `object`'s relationship (the inverse of the one being changed).
    func unlink(_ object: ManagedObject, _ relationship: RelationshipDescription, from id: ManagedObjectID) throws {
        if relationship.isToMany {
            rawRemove(id, from: object, relationship.name)
            return
        }
        try fireFault(object)
        guard object.storage.objectID(forKey: relationship.name) == id else { return }
        willChange(object)
        object.storage[relationship.name] = nil
    }

    private func rawAdd(_ id: ManagedObjectID, to object: ManagedObject, _ key: String) {
        // Already there: no change, so no undo step and nothing to version-check.
        if let ids = object.storage.objectIDs(forKey: key), ids.contains(id) { return }
        willChange(object)
        if var ids = object.storage.objectIDs(forKey: key) {
            if !ids.contains(id) { ids.append(id) }
            object.storage[key] = ids
            return
        }
        var pending = object.pendingToMany[key] ?? PendingToMany()
        pending.removed.remove(id)
        if !pending.added.contains(id) { pending.added.append(id) }
        object.pendingToMany[key] = pending
    }

    private func rawRemove(_ id: ManagedObjectID, from object: ManagedObject, _ key: String) {
        // Not there (a delete rule run again for a deletion a child context already applied):
        // no change, so no undo step that undoes nothing.
        if let ids = object.storage.objectIDs(forKey: key), !ids.contains(id) { return }
        willChange(object)
        if var ids = object.storage.objectIDs(forKey: key) {
            ids.removeAll { $0 == id }
            object.storage[key] = ids
            return
        }
        var pending = object.pendingToMany[key] ?? PendingToMany()
        pending.added.removeAll { $0 == id }
        pending.removed.insert(id)
        object.pendingToMany[key] = pending
    }

    // MARK: Rollback and reset

    /// Discards every unsaved change: inserted objects are forgotten, deleted ones come back,
    /// changed ones get their committed values again. Clears the undo stack.
    ///
    /// Announces it (``objectsDidChangeNotification``): inserted objects as deleted, deleted
    /// ones as inserted again, changed ones as refreshed.
    public func rollback() {
        checkAccess()
        let touchedObjects = touched.objects
        for object in touchedObjects { noteChange(object) }
        for object in touchedObjects {
            if object.isInserted {
                if registry[object.objectID] === object { registry[object.objectID] = nil }
                object.managedObjectContext = nil
                continue
            }
            object.isDeleted = false
            object.pendingToMany.removeAll()
            if object.isInaccessible {
                // Deleted because its row was gone: a fault again, which the next read finds gone.
                object.isInaccessible = false
                object.isFault = true
                object.storage.removeAll()
                object.committed.removeAll()
            } else if !object.isFault {
                object.storage = object.committed
            } else {
                // A fault has no loaded values; fired to-manys are dropped with its changes.
                object.storage.removeAll()
            }
        }
        touched.removeAll()
        propagatedDeletions.removeAll()
        accessorErrors.removeAll()
        undoStack.removeAll()
        redoStack.removeAll()
        announcePendingChanges(refreshing: true)
    }

    /// Forgets every object (they are no longer registered; unsaved changes are lost) and
    /// clears the undo stack.
    ///
    /// Announces it: ``objectsDidChangeNotification`` with the IDs of every object the context
    /// had under ``NotificationKey/invalidatedAllObjects`` (changes not announced yet are
    /// dropped with the objects).
    public func reset() {
        checkAccess()
        for object in pendingEvent.changed { object.wasVisibleBeforeEvent = nil }
        var invalidated = Set(registry.keys)
        for object in touched.objects { invalidated.insert(object.objectID) }
        pendingEvent = PendingEvent()
        pendingEvent.invalidatedAll = invalidated.sorted { $0.uriRepresentation < $1.uriRepresentation }
        for object in registry.values { object.managedObjectContext = nil }
        for object in touched.objects { object.managedObjectContext = nil }
        registry.removeAll()
        touched.removeAll()
        propagatedDeletions.removeAll()
        accessorErrors.removeAll()
        undoStack.removeAll()
        redoStack.removeAll()
        announcePendingChanges()
    }

    // MARK: Fetching with pending changes

    /// Applies unsaved changes to the objects a fetch found in the store.
    func mergePendingChanges(into objects: [ManagedObject], for request: FetchRequest) throws -> [ManagedObject] {
        guard let entity = model.entity(named: request.entityName) else { return objects }
        let names = Set(request.includesSubentities ? model.entityAndDescendants(of: entity).map(\.name) : [entity.name])
        func matches(_ object: ManagedObject) throws -> Bool {
            guard let predicate = request.predicate else { return true }
            return try predicate.evaluate(with: object)
        }
        var result: [ManagedObject] = []
        var present: Set<ObjectIdentifier> = []
        var changed = false
        for object in objects {
            let stillMatches = try !object.isUpdated || matches(object)
            if object.isDeleted || !stillMatches {
                changed = true
                continue
            }
            result.append(object)
            present.insert(ObjectIdentifier(object))
        }
        let candidates = touched.objects.filter { names.contains($0.entity.name) && !$0.isDeleted && !present.contains(ObjectIdentifier($0)) }
        for object in ManagedObjectContext.inSaveOrder(candidates) where object.isInserted || (request.predicate != nil && object.isUpdated) {
            if try matches(object) {
                result.append(object)
                changed = true
            }
        }
        guard changed else { return result }
        if !request.sortDescriptors.isEmpty {
            result = try sorted(result, by: request.sortDescriptors)
        }
        if request.fetchLimit > 0, result.count > request.fetchLimit { result = Array(result.prefix(request.fetchLimit)) }
        return result
    }

    private func sorted(_ objects: [ManagedObject], by sorts: [FLSortDescriptor]) throws -> [ManagedObject] {
        // Sort descriptors compare as Core Data's in-memory sort does (the predicate module's rules).
        try objects.sorted(by: sorts)
    }

    /// The objects of ``touched`` in save order, sorted again only after ``touched`` changed
    /// (a save's passes — `willSave`, validation, the plan — share one sort). An object's
    /// place depends on its insertion number and key, which change only when it is inserted
    /// (touched then) or saved (after which `touched` is emptied).
    func touchedInSaveOrder() -> [ManagedObject] {
        if let cached = saveOrderCache { return cached }
        let objects = ManagedObjectContext.inSaveOrder(touched.objects)
        saveOrderCache = objects
        return objects
    }

    /// Objects in the order they are validated and written: insertion order (stored objects
    /// share 0), then primary key, then entity name; each object's keys are read once.
    ///
    /// The sort moves keys and unretained references: `objects` (an array, a collection that
    /// holds its elements) keeps the objects alive meanwhile, and only the result retains
    /// them. Sorting the objects themselves retained and released
    /// each several times (copies into the keyed array, the merge's moves, the result, the
    /// keyed array freed): atomic operations on objects long out of the cache, in a save of
    /// 100,000 of them.
    ///
    /// Most saves need no comparison at all: new objects have distinct insertion numbers and
    /// stored ones (of one entity, or of entities sharing a table) distinct keys, each run
    /// about as wide as it is long, so each object is put in its place by its number
    /// (``placedByNumber(_:)``); a comparison sort (of the order of the changes, often
    /// sorted already) is left for numbers that repeat or spread.
    static func inSaveOrder<C: Collection<ManagedObject>>(_ objects: C) -> [ManagedObject] {
        // Inserted (numbered) ones after stored ones (number 0), as the sort below orders them.
        var stored: [(number: Int64, key: Int64, object: Unmanaged<ManagedObject>)] = []
        var inserted: [(number: Int64, key: Int64, object: Unmanaged<ManagedObject>)] = []
        for object in objects {
            let sequence = object.insertionSequence
            let key = object.objectID.primaryKey
            if sequence == 0 {
                stored.append((key, key, Unmanaged.passUnretained(object)))
            } else {
                inserted.append((Int64(sequence), key, Unmanaged.passUnretained(object)))
            }
        }
        return withExtendedLifetime(objects) {
            var result: [ManagedObject] = []
            result.reserveCapacity(stored.count + inserted.count)
            for run in [stored, inserted] {
                if let placed = placedByNumber(run) {
                    for object in placed { result.append(object.takeUnretainedValue()) }
                    continue
                }
                // Equal numbers (keys of two entities) or spread ones: compared, then by key
                // and entity name.
                let sorted = run.sorted { a, b in
                    if a.number != b.number { return a.number < b.number }
                    if a.key != b.key { return a.key < b.key }
                    return a.object.takeUnretainedValue().objectID.entityName < b.object.takeUnretainedValue().objectID.entityName
                }
                for entry in sorted { result.append(entry.object.takeUnretainedValue()) }
            }
            return result
        }
    }

    /// The objects of `run` in the order of their numbers, each put at its number's place,
    /// when the numbers are distinct and span at most about twice their count; nil otherwise.
    private static func placedByNumber(_ run: [(number: Int64, key: Int64, object: Unmanaged<ManagedObject>)]) -> [Unmanaged<ManagedObject>]? {
        guard var low = run.first?.number else { return [] }
        var high = low
        for entry in run {
            low = min(low, entry.number)
            high = max(high, entry.number)
        }
        let (span, overflow) = high.subtractingReportingOverflow(low)
        guard !overflow, span < Int64(run.count) * 2 + 64 else { return nil }
        var places = [Unmanaged<ManagedObject>?](repeating: nil, count: Int(span) + 1)
        for entry in run {
            let place = Int(entry.number - low)
            guard places[place] == nil else { return nil }
            places[place] = entry.object
        }
        return places.compactMap { $0 }
    }
}
