import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// Concurrency as Core Data has it.
//
// A context and its objects are confined: to the thread that created the context
// (`.confinement`, the default, so that single-threaded code and the shell use the context
// directly), to a private serial queue (`.privateQueue`) or to the main queue
// (`.mainQueue`). Code runs on a queue context through `perform` (asynchronous) and
// `performAndWait` (synchronous, re-entrant). Object IDs are `Sendable` and are what crosses
// between contexts; objects are not. The coordinator serializes the store's one connection
// with a recursive lock, so contexts on different threads can fetch and save at once.
//
// With `concurrencyDebug` on, every use of a context or one of its objects off its queue (or
// owner thread) is reported, like Core Data's `-com.apple.CoreData.ConcurrencyDebug 1`.

/// How a ``ManagedObjectContext`` runs the code that uses it (Core Data's
/// `NSManagedObjectContextConcurrencyType`).
public enum ConcurrencyType: Sendable, Hashable {
    /// The context belongs to the thread that created it and is used directly there (Core
    /// Data's confinement type; the default). `perform` and `performAndWait` run their block
    /// at once, on the calling thread.
    case confinement
    /// The context owns a private serial queue: use it inside `perform` or `performAndWait`.
    case privateQueue
    /// The context belongs to the main queue: use it on the main queue (the main thread, or
    /// the main actor), or inside `perform`.
    case mainQueue
}

/// A use of a context, or of one of its objects, off the context's queue, found while
/// ``ManagedObjectContext/concurrencyDebug`` is on.
public struct ConcurrencyViolation: Sendable, CustomStringConvertible {
    /// The operation (the function called).
    public var operation: String
    /// The context's concurrency type.
    public var concurrencyType: ConcurrencyType
    /// The thread that made the call.
    public var thread: String

    public var description: String {
        let rule: String
        switch concurrencyType {
        case .confinement: rule = "a confinement context may only be used on the thread that created it"
        case .privateQueue: rule = "a private-queue context may only be used inside perform { } or performAndWait { }"
        case .mainQueue: rule = "a main-queue context may only be used on the main queue"
        }
        return "Faultline concurrency violation: \(operation) called on \(thread): \(rule)"
    }
}

/// A context's queue discipline: its queue, owner thread, the thread now running a block for
/// it, and the debug switch.
final class ContextConcurrency: @unchecked Sendable {
    let type: ConcurrencyType
    /// The serial queue of a private-queue context; the main queue for a main-queue context.
    let queue: DispatchQueue?
    /// The thread that created the context (the owner of a confinement context).
    let owner: pthread_t
    /// Whether uses off the queue are checked (read on every use: set it before the context
    /// is used from another thread).
    var debug: Bool
    /// Called with each violation when ``debug`` is on; nil stops the process with the message.
    var violationHandler: (@Sendable (ConcurrencyViolation) -> Void)?

    private let lock = NSLock()
    /// The thread running a `perform`/`performAndWait` block of a private-queue context.
    private var executing: pthread_t?
    private var childCount = 0

    init(type: ConcurrencyType) {
        self.type = type
        self.owner = pthread_self()
        self.debug = ManagedObjectContext.concurrencyDebugDefault
        switch type {
        case .confinement: queue = nil
        case .mainQueue:
            queue = DispatchQueue.main
            DispatchQueue.main.setSpecific(key: ContextConcurrency.mainQueueKey, value: true)
        case .privateQueue: queue = DispatchQueue(label: "faultline.context")
        }
    }

    /// Whether the calling thread may use the context now.
    var isOnQueue: Bool {
        let current = pthread_self()
        switch type {
        case .confinement: return pthread_equal(current, owner) != 0
        case .mainQueue: return ContextConcurrency.isOnMainQueue
        case .privateQueue:
            lock.lock()
            defer { lock.unlock() }
            return executing.map { pthread_equal($0, current) != 0 } ?? false
        }
    }

    /// Marks the main queue, which on Linux is drained by a worker thread once the program
    /// calls `dispatchMain()` (as async programs and Swift concurrency's main actor do).
    static let mainQueueKey = DispatchSpecificKey<Bool>()

    /// Whether the calling code runs on the main queue (or the main thread), including inside
    /// a private queue's `performAndWait` entered from the main queue.
    static var isOnMainQueue: Bool {
        Thread.isMainThread || DispatchQueue.getSpecific(key: mainQueueKey) == true || mainQueueHolders.contains(pthread_self())
    }

    /// Threads that hold the main queue while they run a private queue's `performAndWait`
    /// block (libdispatch runs a `sync` block on the calling thread): from there a child
    /// of a main-queue context may call back into its parent without waiting for the main
    /// queue, which that very thread holds.
    static let mainQueueHolders = ThreadSet()

    /// Runs `body`, recording that the calling thread holds the main queue when `holdsMain`.
    static func holdingMainQueue<T>(_ holdsMain: Bool, _ body: () throws -> T) rethrows -> T {
        guard holdsMain else { return try body() }
        let thread = pthread_self()
        let added = mainQueueHolders.insert(thread)
        defer { if added { mainQueueHolders.remove(thread) } }
        return try body()
    }

    /// Runs `body` as the context's current block on this thread.
    func running<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        let previous = executing
        executing = pthread_self()
        lock.unlock()
        defer {
            lock.lock()
            executing = previous
            lock.unlock()
        }
        return try body()
    }

    /// Whether a child context was ever made on this one (its temporary IDs must then stay
    /// resolvable after a save).
    var hasChildren: Bool {
        lock.lock()
        defer { lock.unlock() }
        return childCount > 0
    }

    func addChild() {
        lock.lock()
        childCount += 1
        lock.unlock()
    }

    private var generation = 0
    /// Counts the saves (or adoptions) that gave temporary IDs of this context permanent
    /// ones, so a child asks for them only when there are new ones.
    var permanentIDGeneration: Int {
        lock.lock()
        defer { lock.unlock() }
        return generation
    }

    func advancePermanentIDGeneration() {
        lock.lock()
        generation += 1
        lock.unlock()
    }

    /// The parent's ``permanentIDGeneration`` this (child) context last adopted; used on
    /// the child's queue only.
    var adoptedGeneration = 0
}

/// A set of threads, behind a lock.
final class ThreadSet: @unchecked Sendable {
    private let lock = NSLock()
    private var threads: [pthread_t] = []

    func contains(_ thread: pthread_t) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        return threads.contains { pthread_equal($0, thread) != 0 }
    }

    /// Adds `thread`; false when it was there already.
    func insert(_ thread: pthread_t) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        if threads.contains(where: { pthread_equal($0, thread) != 0 }) { return false }
        threads.append(thread)
        return true
    }

    func remove(_ thread: pthread_t) {
        lock.lock()
        threads.removeAll { pthread_equal($0, thread) != 0 }
        lock.unlock()
    }
}

// A context is handed to other threads (`perform` blocks capture it); its state is only
// touched on its queue, which `concurrencyDebug` checks.
extension ManagedObjectContext: @unchecked Sendable {}

extension ManagedObjectContext {
    /// Creates a context on a coordinator that is confined to the calling thread (the
    /// `.confinement` type): used directly, as in single-threaded code and the shell.
    public convenience init(coordinator: PersistentStoreCoordinator) {
        self.init(coordinator: coordinator, parent: nil, concurrencyType: .confinement)
    }

    /// Creates a context on a coordinator with a concurrency type.
    ///
    /// ```swift
    /// let background = ManagedObjectContext(coordinator: coordinator, concurrencyType: .privateQueue)
    /// background.perform {
    ///     let assets = try? background.fetch(FetchRequest(entityName: "Asset"))
    ///     …
    /// }
    /// ```
    public convenience init(coordinator: PersistentStoreCoordinator, concurrencyType: ConcurrencyType) {
        self.init(coordinator: coordinator, parent: nil, concurrencyType: concurrencyType)
    }

    /// The context's concurrency type.
    public var concurrencyType: ConcurrencyType { concurrency.type }

    /// Whether every use of the context and its objects is checked to be on the context's
    /// queue (or owner thread), like Core Data's `-com.apple.CoreData.ConcurrencyDebug 1`.
    /// A violation calls ``concurrencyViolationHandler``, or stops the process with a message
    /// naming the operation, the thread and the rule broken.
    ///
    /// Defaults to ``concurrencyDebugDefault``. Set it before the context is used from
    /// another thread.
    public var concurrencyDebug: Bool {
        get { concurrency.debug }
        set {
            concurrency.debug = newValue
            link.checksAccess = newValue
        }
    }

    /// What a violation found under ``concurrencyDebug`` does; nil (the default) stops the
    /// process with the violation's message.
    public var concurrencyViolationHandler: (@Sendable (ConcurrencyViolation) -> Void)? {
        get { concurrency.violationHandler }
        set { concurrency.violationHandler = newValue }
    }

    /// The process-wide default of ``concurrencyDebug``: on when the environment has
    /// `FAULTLINE_CONCURRENCY_DEBUG=1`, or the arguments hold Core Data's
    /// `-com.apple.CoreData.ConcurrencyDebug 1`.
    public static let concurrencyDebugDefault: Bool = {
        if ProcessInfo.processInfo.environment["FAULTLINE_CONCURRENCY_DEBUG"] == "1" { return true }
        let arguments = ProcessInfo.processInfo.arguments
        guard let index = arguments.firstIndex(of: "-com.apple.CoreData.ConcurrencyDebug"), index + 1 < arguments.count else { return false }
        return arguments[index + 1] == "1"
    }()

    /// Reports a use off the context's queue when ``concurrencyDebug`` is on.
    @inline(__always)
    func checkAccess(_ operation: StaticString = #function) {
        guard concurrency.debug else { return }
        reportViolationIfOffQueue(operation)
    }

    private func reportViolationIfOffQueue(_ operation: StaticString) {
        guard !concurrency.isOnQueue else { return }
        let thread = ContextConcurrency.isOnMainQueue ? "the main queue" : "thread \(pthread_self())"
        let violation = ConcurrencyViolation(operation: "\(operation)", concurrencyType: concurrency.type, thread: thread)
        guard let handler = concurrency.violationHandler else { fatalError(violation.description) }
        handler(violation)
    }

    // MARK: perform

    /// Runs `block` on the context's queue, asynchronously: returns at once. Use the context
    /// and its objects inside the block; hand object IDs, not objects, to other contexts.
    ///
    /// A main-queue context runs it on the main queue; a confinement context (which has no
    /// queue) runs it at once on the calling thread, before returning.
    ///
    /// The block ends the event, as in Core Data: ``processPendingChanges()`` runs after it
    /// (applying delete rules and announcing the block's changes to observers; an error there
    /// is left for the next save to report).
    ///
    /// ```swift
    /// background.perform {
    ///     guard let asset = try? background.existingObject(with: id) else { return }
    ///     try? asset.setValue("Drone", forKey: "label")
    ///     try? background.save()
    /// }
    /// ```
    public func perform(_ block: @escaping @Sendable () -> Void) {
        switch concurrency.type {
        case .confinement:
            block()
            endEvent()
        case .mainQueue:
            DispatchQueue.main.async {
                block()
                self.endEvent()
            }
        case .privateQueue:
            let concurrency = self.concurrency
            concurrency.queue?.async {
                concurrency.running {
                    block()
                    self.endEvent()
                }
            }
        }
    }

    /// The end of a ``perform(_:)`` block: delete rules applied, changes announced.
    private func endEvent() {
        do {
            try processPendingChanges()
        } catch {
            // A fault that could not fire while applying delete rules: the save applies them
            // again and reports the error. The changes made so far are announced.
            announcePendingChanges()
        }
    }

    /// Runs `body` on the context's queue and waits for it; rethrows its error and returns its
    /// value. Re-entrant: called on the context's queue already (inside another `perform`
    /// or `performAndWait`, or on the main queue for a main-queue context), it runs `body`
    /// at once. A confinement context runs it at once on the calling thread.
    ///
    /// Unlike ``perform(_:)``, it does not end the event (as in Core Data): changes made in
    /// it are announced by the next ``processPendingChanges()``, save or `perform` block.
    ///
    /// ```swift
    /// let count = try background.performAndWait { try background.count(for: FetchRequest(entityName: "Asset")) }
    /// ```
    public func performAndWait<T>(_ body: () throws -> T) rethrows -> T {
        switch concurrency.type {
        case .confinement:
            return try body()
        case .mainQueue:
            // `concurrency.queue` is the main queue, used as a plain queue: the block runs
            // on the main thread while the caller waits.
            if ContextConcurrency.isOnMainQueue { return try body() }
            guard let queue = concurrency.queue else { return try body() }
            return try queue.sync { try body() }
        case .privateQueue:
            if concurrency.isOnQueue { return try body() }
            let concurrency = self.concurrency
            guard let queue = concurrency.queue else { return try concurrency.running(body) }
            let holdsMain = ContextConcurrency.isOnMainQueue
            return try queue.sync { try ContextConcurrency.holdingMainQueue(holdsMain) { try concurrency.running(body) } }
        }
    }

    // MARK: Objects across contexts

    /// The object for an ID, with its values loaded: the registered object when it is not a
    /// fault, else one loaded now (from the store, or for a child context from its parent).
    /// The way to bring an object from another context into this one is to pass its ID.
    ///
    /// - Throws: ``FetchRequestError`` when no such object exists (the row is gone, or a temporary
    ///   ID is unknown here).
    public func existingObject(with id: ManagedObjectID) throws -> ManagedObject {
        checkAccess()
        if let object = registry[id] {
            if object.isFault { try fireFault(object) }
            return object
        }
        if id.isTemporaryID, parent == nil {
            throw FetchRequestError("object \(id.uriRepresentation) is not in this context: a temporary ID belongs to the context that inserted the object (save it first)")
        }
        let object = self.object(with: id)
        do {
            try fireFault(object)
        } catch {
            if registry[id] === object { registry[id] = nil }
            object.managedObjectContext = nil
            throw error
        }
        return object
    }
}

extension PersistentStoreCoordinator: @unchecked Sendable {}

extension PersistentStoreCoordinator {
    /// Runs `body` with the store locked: contexts on other threads wait until it returns.
    /// Contexts take this lock themselves around every use of the store; use it when working
    /// with ``store`` or its connection directly while contexts may be busy on other threads.
    ///
    /// Re-entrant. Do not wait for a context's queue inside `body` (that context may be
    /// waiting for the store).
    public func performAndWait<T>(_ body: () throws -> T) rethrows -> T {
        storeLock.lock()
        defer { storeLock.unlock() }
        return try body()
    }
}
