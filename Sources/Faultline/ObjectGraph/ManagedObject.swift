import FaultlineModel
import FaultlinePredicate
import Foundation

/// An object of the graph: one row of an entity, with values by key.
///
/// Objects belong to one ``ManagedObjectContext`` and are unique in it: one object per row.
/// An object fetched or reached through a relationship may be a *fault*: a placeholder whose
/// values load from the store the first time one is read.
open class ManagedObject: CustomStringConvertible, Hashable, KeyValueCoding {
    /// The entity of the object.
    public let entity: EntityDescription
    /// The object's identity.
    @exclusivity(unchecked) public internal(set) var objectID: ManagedObjectID
    /// The context the object belongs to (nil once it is removed from it, or once the
    /// context is gone).
    public internal(set) var managedObjectContext: ManagedObjectContext? {
        @inline(__always) get { contextLink?.context }
        set { contextLink = newValue?.link }
    }
    /// The link to the context, shared by all its objects (see ``ContextLink``).
    @exclusivity(unchecked) final var contextLink: ContextLink?

    /// Whether the object belongs to `context` (``managedObjectContext`` `=== context`),
    /// told by the context's link alone: loading the weakly held context takes the runtime's
    /// slow path, and a save asks this of every changed object.
    @inline(__always)
    final func belongs(to context: ManagedObjectContext) -> Bool { contextLink === context.link }
    /// The row version (`Z_OPT`) the values were read at.
    @exclusivity(unchecked) public internal(set) var rowVersion: Int64 = 0

    /// Loaded values by property name; to-one relationships hold ``ManagedObjectID``s, fired
    /// to-many relationships `[ManagedObjectID]`.
    // The object's mutable properties skip Swift's run-time exclusivity checks
    // (`@exclusivity(unchecked)`): they are read and written on every value access and every
    // object made, only on the context's queue, and never across an access that could overlap.
    @exclusivity(unchecked) final var storage: ObjectValues
    /// The batch of a batched fetch this fault belongs to, and its place in it.
    @exclusivity(unchecked) final var batchPosition: (batch: FaultBatch, index: Int)?
    // The one-byte flags are declared together: stored properties are laid out in
    // declaration order, each aligned, and an object is made per row fetched (four flags
    // spread out took 24 bytes an object, side by side they take 8).
    /// Whether the object's values are not loaded yet.
    @exclusivity(unchecked) public internal(set) var isFault: Bool
    /// Whether the object was inserted and not saved yet.
    @exclusivity(unchecked) public internal(set) var isInserted = false
    /// Whether the object is deleted and the deletion is not saved yet.
    @exclusivity(unchecked) public internal(set) var isDeleted = false
    /// The context's marks on the object, one byte: bits 0–1 ``wasVisibleBeforeEvent`` (0 nil,
    /// 1 false, 2 true), bit 2 ``isTouched``, bit 3 ``hasStaleTouchedEntry``, bit 4
    /// ``isInaccessible``, bit 5 ``isBorrowedByRegistry``.
    @exclusivity(unchecked) final var contextMarks: UInt8 = 0
    /// ``faultOrigin`` as its number in ``FaultOrigins`` (0: none). Four bytes in the padding
    /// after the flags, where a `String?` took sixteen of its own in every object.
    @exclusivity(unchecked) final var faultOriginNumber: UInt32 = 0
    /// The relationship through which this object was first reached as a fault
    /// (`Inventory.asset`), for fault statistics; nil when it was fetched.
    public internal(set) var faultOrigin: String? {
        get { FaultOrigins.origin(faultOriginNumber) }
        set { faultOriginNumber = FaultOrigins.number(newValue) }
    }
    /// Observation: whether the object was in the context's object graph (registered, not
    /// deleted) before its first change since the context last announced its changes
    /// (`Context+Observation.swift`); nil when it has not changed since.
    final var wasVisibleBeforeEvent: Bool? {
        @inline(__always) get {
            switch contextMarks & 3 {
            case 0: return nil
            case 1: return false
            default: return true
            }
        }
        @inline(__always) set {
            let state: UInt8
            switch newValue {
            case nil: state = 0
            case false?: state = 1
            case true?: state = 2
            }
            contextMarks = contextMarks & ~3 | state
        }
    }
    /// Whether the object is in its context's ``TouchedObjects`` (has unsaved changes, or had).
    final var isTouched: Bool {
        @inline(__always) get { contextMarks & 4 != 0 }
        @inline(__always) set { contextMarks = newValue ? contextMarks | 4 : contextMarks & ~4 }
    }
    /// Whether its context's ``TouchedObjects`` still holds a stale entry of the object
    /// (removed, not dropped yet).
    final var hasStaleTouchedEntry: Bool {
        @inline(__always) get { contextMarks & 8 != 0 }
        @inline(__always) set { contextMarks = newValue ? contextMarks | 8 : contextMarks & ~8 }
    }

    /// Whether the object is deleted because its row was gone when its fault fired (see
    /// ``ManagedObjectContext/shouldDeleteInaccessibleFaults``): exempt from validation and
    /// delete rules, and discarded, not deleted, by the next save — a deletion no one made
    /// here, so nothing of the context's own is lost if it is dropped.
    public internal(set) final var isInaccessible: Bool {
        @inline(__always) get { contextMarks & 16 != 0 }
        @inline(__always) set { contextMarks = newValue ? contextMarks | 16 : contextMarks & ~16 }
    }

    /// Whether the context's registry holds this object without a reference of its own: an
    /// object a batch of a batched fetch made, which the batch's ``FetchedResults`` holds (its
    /// registry entry borrows that reference; see ``ObjectRegistry``). The registry clears it
    /// when the entry goes or takes a reference of its own.
    final var isBorrowedByRegistry: Bool {
        @inline(__always) get { contextMarks & 32 != 0 }
        @inline(__always) set { contextMarks = newValue ? contextMarks | 32 : contextMarks & ~32 }
    }

    /// The values as last read from or written to the store, by property name (same shapes as
    /// `storage`; a to-many appears once its fault fired). Empty for an inserted object.
    @exclusivity(unchecked) final var committed: ObjectValues
    /// What few objects have (see ``ObjectExtras``); nil for most: an object is made for every
    /// row fetched, and each field it carries costs its making and freeing.
    @exclusivity(unchecked) final var extras: ObjectExtras?

    /// Changes to to-many relationships whose fault has not fired: applied when it fires.
    var pendingToMany: [String: PendingToMany] {
        @inline(__always) get { extras?.pendingToMany ?? [:] }
        set {
            if let extras { extras.pendingToMany = newValue } else if !newValue.isEmpty { makeExtras().pendingToMany = newValue }
        }
        _modify {
            if let extras {
                yield &extras.pendingToMany
            } else {
                var value: [String: PendingToMany] = [:]
                yield &value
                if !value.isEmpty { makeExtras().pendingToMany = value }
            }
        }
    }

    /// For an object fetched with ``FetchRequest/propertiesToFetch``: the properties loaded;
    /// reading another loads the rest of the row. nil when the whole row is loaded.
    var partialKeys: Set<String>? {
        @inline(__always) get { extras?.partialKeys }
        set {
            if let extras { extras.partialKeys = newValue } else if newValue != nil { makeExtras().partialKeys = newValue }
        }
    }

    /// The values of fetched properties read so far (object IDs by property name), kept
    /// until the object is turned into a fault, as Core Data caches them.
    var fetchedPropertyValues: [String: [ManagedObjectID]] {
        get { extras?.fetchedPropertyValues ?? [:] }
        set {
            if let extras { extras.fetchedPropertyValues = newValue } else if !newValue.isEmpty { makeExtras().fetchedPropertyValues = newValue }
        }
        _modify {
            if let extras {
                yield &extras.fetchedPropertyValues
            } else {
                var value: [String: [ManagedObjectID]] = [:]
                yield &value
                if !value.isEmpty { makeExtras().fetchedPropertyValues = value }
            }
        }
    }

    /// Keeps the entity whose layout the object's values have alive with the object, when it
    /// is not the object's own entity (a fault of a parent entity filled with a sub-entity's
    /// row). The class's slot table, made for its own entity's layout, no longer applies: it is
    /// dropped, and the typed accessors go by key (the slots of the two layouts differ — an
    /// attribute read or written through the old table was another one's).
    final func keepLayout(of entity: EntityDescription) {
        guard storage.layout !== self.entity.propertyLayout else { return }
        (extras ?? makeExtras()).layoutOwner = entity
        classSlots = .empty
    }

    private func makeExtras() -> ObjectExtras {
        let made = ObjectExtras()
        extras = made
        return made
    }
    /// Order of insertion in the context, so that saves insert rows in a stable order.
    @exclusivity(unchecked) final var insertionSequence = 0
    /// For an instance of a registered ``ManagedObjectSubclass``: the slot of each of the
    /// class's ``ManagedObjectSubclass/managedProperties``, so typed accessors hash no key.
    @exclusivity(unchecked) final var classSlots = ClassSlotTable.empty

    /// Creates an object; contexts call this, users call ``ManagedObjectContext/insertObject(entityName:)``.
    /// A context making an object passes nil and sets itself as the object's context right
    /// after this returns: set values up in ``awakeFromInsert()`` or ``awakeFromFetch()``.
    ///
    /// An object made with a context is not registered or inserted in it; like any use of the
    /// context, call this with one on the context's queue.
    public required init(entity: EntityDescription, objectID: ManagedObjectID, context: ManagedObjectContext?, isFault: Bool) {
        self.entity = entity
        self.objectID = objectID
        self.contextLink = context?.link
        self.isFault = isFault
        self.storage = ObjectValues(layout: entity.propertyLayout)
        self.committed = storage
        // Linked but not registered: the context then looks its objects up to tell.
        contextLink?.mayHoldUnregisteredObjects = true
    }

    deinit {
        // A registry entry borrowing a reference to the object must end before the holder
        // lets go of it (``ObjectRegistry/register(_:for:at:borrowing:)``): it would dangle.
        assert(!isBorrowedByRegistry, "\(objectID) freed while its registry entry borrows a reference to it")
    }

    /// Sets a new object's values as read from the store (its values and committed values
    /// the same row) and its row version.
    @inline(__always)
    final func setLoadedValues(_ values: consuming ObjectValues, version: Int64) {
        storage = copy values
        committed = values
        rowVersion = version
    }

    /// ``setLoadedValues(_:version:)`` with the row at `base` of a page: both value sets made
    /// in place. (Copying a value set whole went through the runtime's value witnesses, field
    /// by field — the optimizer merges the copies of its three references into one generic
    /// function — several times a retain's cost.)
    ///
    /// A new object's value sets hold no reference (``ObjectValues/holdsNoReference``): they
    /// are initialized over, not assigned, which would let go of their three fields each —
    /// six calls into the runtime per object fetched, for nothing.
    @inline(__always)
    final func setLoadedRow(layout: PropertyLayout, page: RowPage, base: Int, version: Int64) {
        if storage.holdsNoReference && committed.holdsNoReference {
            withUnsafeMutablePointer(to: &storage) { $0.initialize(to: ObjectValues(layout: layout, page: page, base: base)) }
            withUnsafeMutablePointer(to: &committed) { $0.initialize(to: ObjectValues(layout: layout, page: page, base: base)) }
        } else {
            storage = ObjectValues(layout: layout, page: page, base: base)
            committed = ObjectValues(layout: layout, page: page, base: base)
        }
        rowVersion = version
    }

    /// ``setLoadedRow(layout:page:base:version:)`` for a new object (its value sets hold no
    /// reference yet), with two references to the page that each hold a count the fetch took
    /// in bulk (``BulkReferences``): one for the values, one for the committed values.
    /// (A subclass's initializer that set values — which it should not — has them replaced.)
    @inline(__always)
    final func setLoadedRow(layout: PropertyLayout, countedPage values: Unmanaged<RowPage>, _ committedValues: Unmanaged<RowPage>, base: Int, version: Int64) {
        if storage.holdsNoReference && committed.holdsNoReference {
            withUnsafeMutablePointer(to: &storage) { $0.initialize(to: ObjectValues(layout: layout, page: values.takeRetainedValue(), base: base)) }
            withUnsafeMutablePointer(to: &committed) { $0.initialize(to: ObjectValues(layout: layout, page: committedValues.takeRetainedValue(), base: base)) }
        } else {
            storage = ObjectValues(layout: layout, page: values.takeRetainedValue(), base: base)
            committed = ObjectValues(layout: layout, page: committedValues.takeRetainedValue(), base: base)
        }
        rowVersion = version
    }

    // MARK: Lifecycle (overridden by subclasses; the defaults do nothing or check the model)

    /// Called once, right after the object is inserted into a context (not when a child's
    /// insert reaches its parent): set initial values here. Changes made are part of the insert.
    open func awakeFromInsert() {}

    /// Called after the object's values are loaded from the store (a fault fired, a fetch
    /// with property values, a refresh); values set here do not make the object changed.
    open func awakeFromFetch() {}

    /// Called for each inserted, updated and deleted object at the start of a save, before
    /// validation; changes made here are saved with the rest.
    open func willSave() {}

    /// Called for each inserted, updated and deleted object after a save succeeded.
    open func didSave() {}

    /// Called when a deletion is processed, before the delete rules run
    /// (``ManagedObjectContext/processPendingChanges()``, which a save starts with).
    open func prepareForDeletion() {}

    /// Called before the object's values are dropped to make it a fault again.
    open func willTurnIntoFault() {}

    /// Called after the object became a fault again (refreshed, or deleted and saved).
    open func didTurnIntoFault() {}

    /// Checks (and may replace) one property's value when the object is validated: the
    /// place for Core Data's `validate<Key>` methods. Called, after the model's rules, for
    /// every property of an inserted instance of a subclass and for each changed property of
    /// an updated one (values read from the store were checked when they were saved); a
    /// replaced value is set on the object. Throw an error saying what is wrong; the save
    /// then fails with it.
    open func validateValue(_ value: inout Any?, forKey key: String) throws {}

    /// Validates an inserted object before it is saved: the model's rules (required
    /// properties, bounds, patterns, relationship counts), then ``validateValue(_:forKey:)``
    /// for each property. An override should call `super` to keep these.
    ///
    /// - Throws: ``ObjectValidationError`` listing the failures.
    open func validateForInsert() throws {
        try validateProperties()
    }

    /// Validates an updated object before it is saved; see ``validateForInsert()``.
    open func validateForUpdate() throws {
        try validateProperties()
    }

    /// The model's rules and the per-key validation, by the object's context: the one
    /// validating its changes when it is (borrowed, see `ContextLink.validating`), else the
    /// context loaded from its weak reference.
    private func validateProperties() throws {
        if let validating = contextLink?.validating {
            try validating._withUnsafeGuaranteedRef { try $0.validateProperties(of: self) }
        } else {
            try managedObjectContext?.validateProperties(of: self)
        }
    }

    /// Validates a deleted object before the deletion is saved: relationships with the Deny
    /// delete rule must be empty. An override should call `super`.
    ///
    /// - Throws: ``ObjectValidationError`` listing the failures.
    open func validateForDelete() throws {
        try managedObjectContext?.validateDeletion(of: self)
    }

    /// The value of a property; reading fires the fault when the object is one.
    ///
    /// Attributes give Swift values (`String`, `Int16`, `Date`, …); a to-one relationship gives
    /// the destination ``ManagedObject`` (possibly a fault) or nil; a to-many relationship gives
    /// the destination objects as an array (in the relationship's order when it is ordered),
    /// firing the relationship fault the first time.
    public func value(forKey key: String) -> Any? {
        // A loaded, whole object whose context does not check its uses: an attribute's slot
        // as it is, without loading the context (the path below gives the same value).
        // The key's slot is looked up once, again only if loading changed the layout.
        // The layout is borrowed for it (every object of the entity shares it: a retain and a
        // release per value read were two atomic operations on one cache line).
        let (found, isAttribute, external) = storage.layoutReference._withUnsafeGuaranteedRef { layout -> (Int?, Bool, Bool) in
            guard !layout.hasDuplicateNames, let slot = layout.slot(of: key) else { return (nil, false, false) }
            return (slot, layout.kinds[slot] == .attribute, layout.hasExternalBinary)
        }
        if isAttribute, let found, !isFault, extras?.partialKeys == nil, let link = contextLink, !link.checksAccess {
            let value = storage[slot: found]
            if !external || !(value is ExternalBinaryDataReference) { return value }
        }
        var layout = storage.layout
        var slot = found
        guard let context = managedObjectContext else {
            return entity.relationship(named: key) == nil ? storage[key] : nil
        }
        context.checkAccess()
        if isFault {
            context.fireFaultForRead(self)
        }
        if let partialKeys, !partialKeys.contains(key) { context.completePartialObject(self) }
        if storage.layout !== layout {
            layout = storage.layout
            slot = layout.hasDuplicateNames ? nil : layout.slot(of: key)
        }
        guard let slot else { return valueByName(key, in: context) }
        switch layout.kinds[slot] {
        case .attribute:
            let value = storage[slot: slot]
            if layout.hasExternalBinary, let reference = value as? ExternalBinaryDataReference {
                return context.loadExternalData(reference, forKey: key, of: self)
            }
            return value
        case .toOne:
            guard let id = storage.objectID(at: slot) else { return nil }
            return context.object(with: id, reachedThrough: "\(entity.name).\(key)")
        case .toMany:
            guard let relationship = entity.relationship(named: key) else { return nil }
            return context.relationshipFaultForRead(relationship, of: self)
        }
    }

    /// ``value(forKey:)`` by name, a relationship first (for keys outside the layout, and for
    /// invalid models where an attribute and a relationship share a name).
    private func valueByName(_ key: String, in context: ManagedObjectContext) -> Any? {
        if let relationship = entity.relationship(named: key) {
            if relationship.isToMany { return context.relationshipFaultForRead(relationship, of: self) }
            guard let id = storage.objectID(forKey: key) else { return nil }
            return context.object(with: id, reachedThrough: "\(entity.name).\(key)")
        }
        if let reference = storage[key] as? ExternalBinaryDataReference {
            return context.loadExternalData(reference, forKey: key, of: self)
        }
        if let fetched = entity.fetchedProperties.first(where: { $0.name == key }) {
            do {
                return try context.fetchedPropertyValue(fetched, of: self)
            } catch {
                context.keepAccessorError(error)  // said by the next save
                return []
            }
        }
        return storage[key]
    }

    /// The value at a dotted key path (`asset.label`), following relationships; through a
    /// to-many relationship the result is the array of the values of each destination object
    /// (`[Any?]`, nested for a second to-many). Key-value coding's collection operators apply
    /// to the collection reached so far: `inventories.@count`, `inventories.@sum.count`,
    /// `@avg`, `@min`, `@max`, `@unionOfObjects`, `@distinctUnionOfObjects`.
    /// A key path of more than ``maximumKeyPathComponents`` components, an unknown key or a
    /// misplaced operator gives nil (``value(forKeyPath:visiting:)`` says why).
    public func value(forKeyPath keyPath: String) -> Any? {
        try? value(forKeyPath: keyPath, visiting: .max)
    }

    /// The most components a key path may have (`a.b.c` has three).
    public static let maximumKeyPathComponents = FLNestingDepth.maximum

    /// ``value(forKeyPath:)``, visiting at most `limit` objects: through to-many
    /// relationships a key path can reach more objects than the store holds
    /// (`inventories.asset.inventories.asset…` doubles at every pair of steps).
    ///
    /// - Throws: ``KeyPathError`` when the key path has more than
    ///   ``maximumKeyPathComponents`` components, reaches more than `limit` objects, or has a
    ///   collection operator that is unknown, follows a single value, or cannot aggregate the
    ///   values (`@sum` of strings).
    public func value(forKeyPath keyPath: String, visiting limit: Int) throws -> Any? {
        let keys = keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard keys.count <= Self.maximumKeyPathComponents else {
            throw KeyPathError("the key path has \(keys.count) components, more than \(Self.maximumKeyPathComponents)")
        }
        var walk = KeyPathWalk(keyPath: keyPath, limit: limit, budget: limit)
        return try walk.value(of: self, atKeyPath: keys[...])
    }

    /// The elements of a collection a key path has reached: a to-many relationship's objects or
    /// the values read through one.
    static func keyPathCollection(_ value: Any?) -> [Any?]? {
        switch value {
        case let objects as [ManagedObject]: return objects.map { $0 }
        case let values as [Any?]: return values
        default: return nil
        }
    }

    /// One walk of a key path, with its budget of objects to visit.
    private struct KeyPathWalk {
        let keyPath: String
        let limit: Int
        var budget: Int

        mutating func value(of current: Any?, atKeyPath keys: ArraySlice<String>) throws -> Any? {
            guard let key = keys.first else { return current }
            let rest = keys.dropFirst()
            if key.hasPrefix("@") {
                guard let op = FLCollectionOperator(rawValue: key) else {
                    throw KeyPathError("\(keyPath): unknown collection operator \(key); operators are \(FLCollectionOperator.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                if !op.takesKeyPath, !rest.isEmpty {
                    throw KeyPathError("\(keyPath): \(key) ends a key path")
                }
                guard let items = ManagedObject.keyPathCollection(current) else {
                    if current == nil { return op == .count ? 0 : nil }
                    throw KeyPathError("\(keyPath): \(key) needs a to-many relationship before it, not a single value")
                }
                var values: [Any?] = []
                values.reserveCapacity(items.count)
                if rest.isEmpty {
                    values = items
                } else {
                    for item in items { values.append(try value(of: item, atKeyPath: rest)) }
                }
                do {
                    return try op.apply(to: values)
                } catch let error as PredicateEvaluationError {
                    throw KeyPathError("\(keyPath): \(error.message)")
                }
            }
            switch current {
            case let object as ManagedObject:
                budget -= 1
                if budget < 0 { throw KeyPathError("\(keyPath) reaches more than \(limit) objects") }
                return try value(of: object.value(forKey: key), atKeyPath: rest)
            default:
                // Through a collection, one key at a time (as NSArray's valueForKey:), so an
                // operator further on sees the whole collection of values.
                guard let items = ManagedObject.keyPathCollection(current) else { return nil }
                var mapped: [Any?] = []
                mapped.reserveCapacity(items.count)
                for item in items { mapped.append(try value(of: item, atKeyPath: keys.prefix(1))) }
                return try value(of: mapped, atKeyPath: rest)
            }
        }
    }

    /// The IDs of a relationship's destinations without making objects of them: for a to-one,
    /// the one ID or none (this fires the object's own fault); for a to-many, the IDs in
    /// order (this fires the relationship fault).
    public func objectIDs(forRelationshipNamed name: String) -> [ManagedObjectID] {
        guard let relationship = entity.relationship(named: name), let context = managedObjectContext else { return [] }
        if isFault { context.fireFaultForRead(self) }
        if relationship.isToMany {
            _ = context.relationshipFaultForRead(relationship, of: self)
            return storage.objectIDs(forKey: name) ?? []
        }
        return (storage.objectID(forKey: name)).map { [$0] } ?? []
    }

    /// Whether a relationship's destination is not loaded yet: for a to-many, the relationship
    /// fault has not fired; for a to-one, the object itself is a fault (the destination's ID is
    /// only known once the object's row is loaded).
    public func hasFault(forRelationshipNamed name: String) -> Bool {
        guard let relationship = entity.relationship(named: name) else { return false }
        if relationship.isToMany { return storage[name] == nil }
        return isFault
    }

    /// Whether the object has unsaved changes: it is inserted, deleted, or a value differs
    /// from its committed value.
    public var hasChanges: Bool {
        isInserted || isDeleted || hasPersistentChangedValues
    }

    /// Whether the object is stored and has changed values (Core Data's `isUpdated`).
    public var isUpdated: Bool { !isInserted && !isDeleted && hasPersistentChangedValues }

    var hasPersistentChangedValues: Bool {
        if !pendingToMany.isEmpty { return true }
        if isFault { return false }
        return valuesDiffer
    }

    /// Equality of stored values (attribute values, IDs, ID arrays); nil equals nil only.
    static func valuesEqual(_ a: Any?, _ b: Any?) -> Bool {
        switch (a, b) {
        case (nil, nil): return true
        case (nil, _), (_, nil): return false
        case let (x?, y?):
            // The common types first: a cast to a concrete type is much cheaper than one to
            // AnyHashable, and gives the same answer for two values of that type.
            switch (x, y) {
            case let (x as String, y as String): return x == y
            case let (x as Int64, y as Int64): return x == y
            case let (x as Double, y as Double): return x == y
            case let (x as Bool, y as Bool): return x == y
            case let (x as Date, y as Date): return x == y
            case let (x as ManagedObjectID, y as ManagedObjectID): return x == y
            case let (x as [ManagedObjectID], y as [ManagedObjectID]): return x == y
            default:
                if let x = x as? AnyHashable, let y = y as? AnyHashable { return x == y }
                return false
            }
        }
    }

    /// `<Entity: x-coredata://…/p1>` plus `<fault>` or the values, like Core Data's description.
    open var description: String {
        if isFault { return "<\(entity.name): \(objectID.uriRepresentation); data: <fault>>" }
        let values = entity.attributes.map { "\($0.name) = \(storage[$0.name].map { "\($0)" } ?? "nil")" }
        return "<\(entity.name): \(objectID.uriRepresentation); data: {\(values.joined(separator: "; "))}>"
    }
}

extension ManagedObject {
    /// Objects are equal only to themselves (one object per row per context).
    public static func == (lhs: ManagedObject, rhs: ManagedObject) -> Bool { lhs === rhs }

    /// Hashes the object's identity.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    /// The hash sets and dictionaries of objects use: the object's identity mixed with the
    /// table's seed by a multiply–xorshift finalizer, not SipHash (a save puts every changed
    /// object in sets).
    public func _rawHashValue(seed: Int) -> Int { ObjectKey(self)._rawHashValue(seed: seed) }
}

/// Additions and removals made to a to-many relationship before its fault fired.
struct PendingToMany {
    var added: [ManagedObjectID] = []
    var removed: Set<ManagedObjectID> = []

    var isEmpty: Bool { added.isEmpty && removed.isEmpty }

    /// The relationship's IDs once the stored `ids` are known.
    func applied(to ids: [ManagedObjectID]) -> [ManagedObjectID] {
        var result = ids.filter { !removed.contains($0) }
        var present = Set(result)
        for id in added where present.insert(id).inserted { result.append(id) }
        return result
    }
}

/// A key path that is too long, or reaches too many objects, to follow.
public struct KeyPathError: Error, Sendable, CustomStringConvertible {
    /// What is wrong.
    public var message: String

    /// An error saying `message`.
    public init(_ message: String) { self.message = message }

    public var description: String { message }
}

extension ManagedObject: FLPredicateArgumentConvertible {
    /// A managed object stands in a predicate for its object ID, as in Core Data: `recipe ==
    /// %@` with an object binds its primary key in SQL, and in memory compares the IDs.
    public var predicateValue: FLValue { .object(FLObjectReference(objectID)) }
}

/// The state of a managed object that few objects have: pending to-many edits, a partial
/// fetch's keys, cached fetched-property values.
final class ObjectExtras {
    /// The entity whose layout the object's values have when it is not the object's own (a
    /// fault of a parent entity filled with a sub-entity's row): values do not retain their
    /// layout, so this keeps it alive.
    @exclusivity(unchecked) var layoutOwner: EntityDescription?
    @exclusivity(unchecked) var pendingToMany: [String: PendingToMany] = [:]
    @exclusivity(unchecked) var partialKeys: Set<String>?
    @exclusivity(unchecked) var fetchedPropertyValues: [String: [ManagedObjectID]] = [:]
}

/// The fault origins of the process (`"Inventory.asset"`: an entity's name and one of its
/// relationships), numbered once each, so that an object keeps its origin in four bytes.
/// There are as many as the relationships of the models a process opens.
enum FaultOrigins {
    private static let lock = NSLock()
    // Both written only under `lock`.
    nonisolated(unsafe) private static var numbers: [String: UInt32] = [:]
    nonisolated(unsafe) private static var origins: [String] = []

    /// The number of an origin (0 for nil), numbering it if it is new.
    static func number(_ origin: String?) -> UInt32 {
        guard let origin else { return 0 }
        return lock.withLock {
            if let number = numbers[origin] { return number }
            origins.append(origin)
            let number = UInt32(origins.count)
            numbers[origin] = number
            return number
        }
    }

    /// The origin of a number given out by ``number(_:)`` (nil for 0).
    static func origin(_ number: UInt32) -> String? {
        guard number > 0 else { return nil }
        return lock.withLock { Int(number) <= origins.count ? origins[Int(number) - 1] : nil }
    }
}
