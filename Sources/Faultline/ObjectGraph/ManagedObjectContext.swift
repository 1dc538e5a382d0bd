import FaultlineModel
import FaultlineSQL
import Foundation

/// A scratch pad of managed objects: fetches them from the store, keeps one object per row,
/// fires their faults, tracks changes (insert, edit, delete, with inverse relationships kept
/// on both sides), validates them and saves them in one transaction.
///
/// ```swift
/// let context = ManagedObjectContext(coordinator: coordinator)
/// let locations = try context.fetch(FetchRequest(entityName: "Location"))
/// print(locations[0].value(forKey: "label") ?? "")
///
/// let asset = try context.insertObject(entityName: "Asset")
/// try asset.setValue("Drone", forKey: "label")
/// try context.save()   // BEGIN EXCLUSIVE … INSERT INTO ZASSET(Z_PK, Z_ENT, Z_OPT, ZLABEL) VALUES(?, ?, ?, ?) … COMMIT
/// ```
public final class ManagedObjectContext {
    /// The coordinator the context fetches through (a child context's is its parent's).
    public let coordinator: PersistentStoreCoordinator
    /// The context a child context fetches through and saves into; nil for a context on the
    /// coordinator. See `Context+Child.swift`.
    public let parent: ManagedObjectContext?
    /// The queue discipline, owner thread and debug checks. See `Context+Concurrency.swift`.
    let concurrency: ContextConcurrency
    /// Temporary IDs of objects this context saved, with the permanent IDs they got, kept
    /// while it has child contexts (which may still hold the temporary ones).
    var permanentIDs: [ManagedObjectID: ManagedObjectID] = [:]
    /// Objects registered in the context, by ID (the context's own table; see ``ObjectRegistry``).
    let registry = ObjectRegistry()
    /// Objects registered in the context, by ID: a dictionary made from the context's table
    /// each time it is read. To look one ID up, ``registeredObject(for:)`` costs no copy.
    public var registeredObjects: [ManagedObjectID: ManagedObject] {
        checkAccess()
        return registry.dictionary
    }
    /// The object registered in the context for an ID, or nil (no fault is made, nothing is
    /// fetched): Core Data's `registeredObject(for:)`.
    public func registeredObject(for objectID: ManagedObjectID) -> ManagedObject? {
        checkAccess()
        return registry[objectID]
    }

    /// Called each time a fault is fired from the database (not when its row was already
    /// cached): the shell counts these per command and warns of fault storms.
    public var faultObserver: ((FaultEvent) -> Void)?

    /// How a save resolves rows changed in the store since they were read (default: fail).
    public var mergePolicy: MergePolicy = .error
    /// What a read does with an *inaccessible fault*, an object whose row is no longer in the
    /// store when its fault fires (another context or process deleted it), as Core Data's
    /// `shouldDeleteInaccessibleFaults`.
    ///
    /// True (the default): the object becomes a deleted object — its attributes read as nil
    /// (a typed property's default: 0, false), its relationships as empty, ``ManagedObject/isDeleted``
    /// is true and it is among ``deletedObjects`` — exempt from validation and delete rules;
    /// the next ``save()`` discards it (no `DELETE`: the row is gone) and lists it as deleted —
    /// or fails with a ``MergeConflictError`` when other changes still point at it —, and
    /// ``rollback()`` turns it back into a fault. False: the object stays a fault, its
    /// attributes read as nil, and the next ``save()`` throws the error (Core Data raises an
    /// exception); the
    /// throwing calls (``existingObject(with:)``, ``ManagedObject/setValue(_:forKey:)``) throw it
    /// either way.
    public var shouldDeleteInaccessibleFaults = true
    /// Called after each successful save with the permanent IDs of what it wrote.
    public var didSave: ((SaveNotification) -> Void)?
    /// Everything the last batch request run by this context changed in the store (its
    /// own rows and those its delete rules reached), whatever its result type: ready for
    /// ``mergeChanges(fromContextDidSave:)-(SaveNotification)``.
    public internal(set) var lastBatchChanges: SaveNotification?
    /// Whether user-level changes are recorded for ``undo()`` (default true). Set it outside
    /// ``undoGroup(_:)``: a group begun while it is false records nothing, and changes made
    /// after it is turned on inside that group become undo steps of their own.
    @exclusivity(unchecked) public var isUndoEnabled = true {
        didSet { link.recordsUndo = isUndoEnabled }
    }
    /// The context's name (`NSManagedObjectContext.name`): recorded as the context of each
    /// transaction it saves into a store with persistent history.
    public var name: String?
    /// Who saves (`NSManagedObjectContext.transactionAuthor`): recorded as the author of each
    /// transaction it saves into a store with persistent history.
    public var transactionAuthor: String?

    /// Changes recorded since the last objects-did-change (`Context+Observation.swift`).
    @exclusivity(unchecked) var pendingEvent = PendingEvent()
    /// The continuations of the ``changes`` streams.
    let streams = ContextStreams()
    /// Fetched-results controllers following the context.
    var internalObservers: [WeakContextObserver] = []
    /// The `NotificationCenter` observer of ``automaticallyMergesChangesFromParent``.
    var automaticMergeObserver: (any NSObjectProtocol)?

    /// Objects with unsaved changes (inserted, deleted, or changed at some point), in the
    /// order they were first touched.
    @exclusivity(unchecked) var touched = TouchedObjects() {
        didSet {
            if saveOrderCache != nil { saveOrderCache = nil }
            lastTouched = nil
        }
    }
    /// The object ``willChange(_:)`` last put in ``touched``, while it is there (any change
    /// of ``touched`` forgets it): setting several values of one object adds it to
    /// ``touched`` once. Kept in the link, where typed setters read it (see
    /// `ContextLink.lastTouched`).
    var lastTouched: ObjectKey? {
        @inline(__always) get { link.lastTouched }
        @inline(__always) set { link.lastTouched = newValue }
    }
    /// The objects of ``touched`` in save order while it does not change (see
    /// ``touchedInSaveOrder()``): a save's passes share one sort.
    @exclusivity(unchecked) var saveOrderCache: [ManagedObject]?
    @exclusivity(unchecked) var nextInsertionSequence = 0
    /// Deleted objects whose delete rules were applied already.
    @exclusivity(unchecked) var propagatedDeletions: Set<ObjectKey> = []
    /// Whether a touched object may be deleted with its delete rules not applied yet: set
    /// where an object becomes deleted (``delete(_:)``, an undo or redo restoring a deletion),
    /// cleared by ``processPendingChanges()`` once it found none. Without one, the search
    /// for such objects (a read of every changed object, twice a save) is skipped.
    @exclusivity(unchecked) var deletionsMayNeedRules = false
    @exclusivity(unchecked) var undoStack: [[ObjectState]] = []
    @exclusivity(unchecked) var redoStack: [[ObjectState]] = []
    /// The undo group being recorded: each object's state before its first change in it.
    @exclusivity(unchecked) var openGroup: [ObjectState]?
    @exclusivity(unchecked) var openGroupMembers: Set<ObjectKey> = []
    /// How many times an object was about to change (``willChange(_:)``), to tell whether a
    /// step changed anything. Kept in the link, which typed setters count in.
    var changeCount: Int {
        @inline(__always) get { link.changeCount }
        @inline(__always) set { link.changeCount = newValue }
    }
    /// The classes objects are made of, by entity name (the coordinator's registered
    /// classes when the context was made); empty when none are registered.
    let classBindings: [String: ClassBinding]
    @exclusivity(unchecked) private var lastClassBinding: (entityName: String, binding: ClassBinding?)?
    @exclusivity(unchecked) private var lastTemporaryNames: (entityName: String, names: UInt32)?
    /// The entity of the last fault made by ID alone (see `faultEntity(for:)`).
    @exclusivity(unchecked) var lastFaultEntity: (names: UInt32, entity: EntityDescription)?
    /// ``insertDefaults(for:)`` by entity name (per context: inserts do not hold the store's
    /// lock, so the cache cannot be the store's).
    @exclusivity(unchecked) var insertDefaultsCache: [String: [(slot: Int, value: StoredValue)]] = [:]
    /// The last entity ``insertableEntity(named:)`` gave: inserts come many of one entity in a
    /// row (no hashed name for those).
    @exclusivity(unchecked) var lastInsertableEntity: EntityDescription?
    /// The last ``insertDefaults(for:)``, by entity name, for the same reason.
    @exclusivity(unchecked) var lastInsertDefaults: (entityName: String, defaults: [(slot: Int, value: StoredValue)]?)?
    /// Errors of typed property setters and of reads whose fault could not fire, which cannot
    /// throw: the next ``save()`` throws the first of them (and forgets them all), so none goes
    /// unnoticed; ``rollback()`` and ``reset()`` forget them with the changes.
    var accessorErrors: [Error] = []
    /// While ``save()`` runs: whether objects-did-change keeps what it announced
    /// (``announcedObjects``) for the save's did-save.
    @exclusivity(unchecked) var keepsAnnouncedObjects = false
    /// The objects the last objects-did-change of the running save announced.
    @exclusivity(unchecked) var announcedObjects: ChangedObjects?
    /// The lists ``announcedObjects``' inserted, updated and deleted sets were made from, in
    /// their order, unretained (the sets hold the objects); kept and dropped with them.
    @exclusivity(unchecked) var announcedLists: (inserted: [Unmanaged<ManagedObject>], updated: [Unmanaged<ManagedObject>], deleted: [Unmanaged<ManagedObject>])?
    /// What the save plan's passes look for in the model (see `ModelShape`), once per context.
    lazy var modelShape: ModelShape = computeModelShape()
    /// Above zero while objects' ``ManagedObject/awakeFromFetch()`` runs: values set then
    /// are not changes (Core Data turns change processing off around it). Kept in the link,
    /// where typed setters read it.
    var awakeningFromFetch: Int {
        @inline(__always) get { link.awakening }
        @inline(__always) set { link.awakening = newValue }
    }

    /// What the context's objects reach it through (see ``ManagedObject/managedObjectContext``).
    let link = ContextLink()

    /// The one designated initializer; the public ones are in `Context+Concurrency.swift`
    /// and `Context+Child.swift`.
    init(coordinator: PersistentStoreCoordinator, parent: ManagedObjectContext?, concurrencyType: ConcurrencyType) {
        self.coordinator = coordinator
        self.parent = parent
        self.concurrency = ContextConcurrency(type: concurrencyType)
        self.classBindings = coordinator.classBindingsForNewContext()
        link.context = self
        link.checksAccess = concurrency.debug
    }

    /// The binding of an entity: the last one looked up is kept, as fetches make many objects
    /// of one entity in a row (comparing a name with itself is cheaper than hashing it).
    @inline(__always)
    func classBinding(for entityName: String) -> ClassBinding? {
        if let last = lastClassBinding, last.entityName == entityName { return last.binding }
        let binding = classBindings[entityName]
        lastClassBinding = (entityName, binding)
        return binding
    }

    /// A new temporary ID of an entity. The last entity's ``ObjectIDNames`` number is kept, as
    /// inserts come many of one entity in a row (no lock and no hashed name for those).
    func temporaryID(for entityName: String) -> ManagedObjectID {
        if let last = lastTemporaryNames, last.entityName == entityName { return ManagedObjectID(temporaryNames: last.names) }
        let names = ObjectIDNames.number(entityName: entityName, storeIdentifier: "")
        lastTemporaryNames = (entityName, names)
        return ManagedObjectID(temporaryNames: names)
    }

    /// A new object of an entity, of the entity's registered class if it has one.
    /// The object is made without its context and given the context's link right after: passing
    /// the context in would retain and release it for every object (the slow way, as the link
    /// holds it weakly).
    func makeObject(entity: EntityDescription, objectID: ManagedObjectID, isFault: Bool) -> ManagedObject {
        makeObject(entity: entity, objectID: objectID, isFault: isFault, binding: classBindings.isEmpty ? nil : classBinding(for: entity.name))
    }

    /// ``makeObject(entity:objectID:isFault:)`` with the entity's binding looked up already
    /// (once for all the rows of a fetch; nil: no registered class).
    @inline(__always)
    func makeObject(entity: EntityDescription, objectID: ManagedObjectID, isFault: Bool, binding: ClassBinding?) -> ManagedObject {
        // Each branch returns its own object (one `let` assigned in both branches kept a
        // retain and a release of the new object around the link's store).
        if let binding {
            let object = binding.type.init(entity: entity, objectID: objectID, context: nil, isFault: isFault)
            object.classSlots = binding.slots
            object.contextLink = link
            return object
        }
        let object = ManagedObject(entity: entity, objectID: objectID, context: nil, isFault: isFault)
        object.contextLink = link
        return object
    }

    /// ``makeObject(entity:objectID:isFault:binding:)`` for a fetch's rows, with the
    /// references every object holds counted in bulk (``BulkReferences``): `entity` holds one
    /// of the fetch's counts, and the link's reference is taken from `links` (`upTo`: the most
    /// objects the fetch may still make).
    @inline(__always)
    func makeObject(
        countedEntity entity: consuming EntityDescription, objectID: ManagedObjectID, binding: ClassBinding?, links: inout BulkReferences, upTo: Int
    ) -> ManagedObject {
        let linkReference = links.take(Unmanaged.passUnretained(link).toOpaque(), upTo: upTo)
        if let binding {
            let object = binding.type.init(entity: consume entity, objectID: objectID, context: nil, isFault: false)
            object.classSlots = binding.slots
            object.contextLink = Unmanaged<ContextLink>.fromOpaque(linkReference).takeRetainedValue()
            return object
        }
        let object = ManagedObject(entity: consume entity, objectID: objectID, context: nil, isFault: false)
        object.contextLink = Unmanaged<ContextLink>.fromOpaque(linkReference).takeRetainedValue()
        return object
    }

    deinit {
        if let automaticMergeObserver { NotificationCenter.default.removeObserver(automaticMergeObserver) }
        streams.finish()
    }

    var store: SQLiteStore { coordinator.store }
    var model: ManagedObjectModel { coordinator.model }

}

/// A context as its objects hold it: one per context, shared by its objects. The context is
/// held weakly here, once per context, instead of by a weak reference in every object (each
/// object then paid a weak store and destroy, and the context's retains the slow path); an
/// object outliving its context sees nil, safely from any thread, as before.
final class ContextLink {
    /// The context; nil once it is gone.
    weak var context: ManagedObjectContext?
    /// Whether the context checks that it is used on its queue (its
    /// ``ManagedObjectContext/concurrencyDebug``), so typed reads of loaded values can skip the
    /// context when it does not.
    @exclusivity(unchecked) var checksAccess = false
    /// The context, while its ``ManagedObjectContext/validatePendingChanges()`` runs (which
    /// holds it): the objects' default `validateForInsert()` and `validateForUpdate()` reach
    /// it here without loading the weak reference (the runtime's slow path, once per object
    /// saved). Set and cleared on the context's queue, read by its objects there; nil
    /// otherwise.
    @exclusivity(unchecked) var validating: Unmanaged<ManagedObjectContext>?
    /// Whether an object may hold this link without being in the context's
    /// ``ManagedObjectContext/registeredObjects``: one made with the context passed to
    /// `ManagedObject.init(entity:objectID:context:isFault:)`, one an undo took out of the
    /// registry, one another object replaced there. Until then, an object holds the link if
    /// and only if it is registered (besides a new object between its making and its
    /// registration), and ``ManagedObjectContext/isRegistered(_:)`` need not look it up.
    @exclusivity(unchecked) var mayHoldUnregisteredObjects = false

    // What a typed setter needs to know to change a value without the context (see
    // `ManagedObject.setStoredAttribute`): the context keeps these here, on its queue, and
    // its deinit writes none of them, so an object outliving its context reads them safely.
    /// The context's `changeCount`.
    @exclusivity(unchecked) var changeCount = 0
    /// The context's `lastTouched`: the object its last change was to, while the object is
    /// among its changed objects (which hold it).
    @exclusivity(unchecked) var lastTouched: ObjectKey?
    /// The context's ``ManagedObjectContext/isUndoEnabled``.
    @exclusivity(unchecked) var recordsUndo = true
    /// The context's `awakeningFromFetch`.
    @exclusivity(unchecked) var awakening = 0
}

/// The objects of a batched fetch, loaded a batch at a time.
final class FaultBatch {
    let entityName: String
    let keys: ObjectKeys
    let size: Int
    let prefetching: [String]
    /// The properties each batch loads (a batched fetch of partial objects); nil for all.
    let properties: [FetchProperty]?
    /// Whether touching a fault loads its whole batch; false for a fetch without property
    /// values (`includesPropertyValues` false), whose faults load one by one.
    let loadsBatches: Bool

    init(entityName: String, keys: ObjectKeys, size: Int, prefetching: [String], properties: [FetchProperty]? = nil, loadsBatches: Bool = true) {
        self.entityName = entityName
        self.keys = keys
        self.size = size
        self.prefetching = prefetching
        self.properties = properties
        self.loadsBatches = loadsBatches
    }

    /// The indexes of the batch that holds `index`.
    func range(containing index: Int) -> Range<Int> {
        let start = (index / size) * size
        return start..<min(start + size, keys.count)
    }

    /// The object at `index` of the fetch: the registered one, or a fault that loads its
    /// whole batch when touched (see ``loadsBatches``).
    func object(at index: Int, in context: ManagedObjectContext) -> ManagedObject {
        let object = context.object(with: keys.id(at: index))
        if loadsBatches, object.isFault { object.batchPosition = (self, index) }
        return object
    }
}

/// A fault fired from the database.
public struct FaultEvent: Sendable, Hashable {
    /// What kind of fault.
    public enum Kind: Sendable, Hashable {
        /// An object's values were loaded.
        case object
        /// A to-many relationship's destinations were loaded.
        case toMany
        /// A batch of a batched fetch was loaded, in one statement.
        case batch
    }

    /// What kind of fault.
    public var kind: Kind
    /// The object whose fault fired (for a to-many, the source object).
    public var objectID: ManagedObjectID
    /// The relationship involved, as `Entity.relationship`: for an object fault, the one it
    /// was reached through (nil when it was not reached through one); for a to-many, itself.
    public var origin: String?
}

/// An error in a fetch request: unknown entity, key path or option.
public struct FetchRequestError: Error, Sendable, CustomStringConvertible, Equatable {
    /// A sentence saying what is wrong.
    public var message: String

    /// Creates an error.
    public init(_ message: String) { self.message = message }

    public var description: String { message }
}
