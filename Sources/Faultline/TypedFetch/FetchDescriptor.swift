import FaultlinePredicate
import Foundation

/// A typed fetch, in SwiftData's shape: a `#Predicate`, Foundation `SortDescriptor`s, a
/// window, the properties to load and the relationships to prefetch, for a registered
/// ``ManagedObjectSubclass``.
///
/// ```swift
/// let limit = 5
/// var descriptor = FetchDescriptor<Recipe>(
///     predicate: #Predicate { $0.name.starts(with: "G") && $0.ingredients.count < limit },
///     sortBy: [SortDescriptor(\.name)])
/// descriptor.fetchLimit = 10
/// let recipes = try context.fetch(descriptor)          // [Recipe]
/// try descriptor.fetchRequest().predicate              // name BEGINSWITH "G" AND ingredients.@count < 5
/// ```
///
/// A descriptor becomes a ``FetchRequest`` (``fetchRequest()``): the predicate is translated
/// (`FLPredicate.init(_:)`), each key path becomes its model property name
/// through ``ManagedObjectSubclass/propertyName(for:)``, and the request runs as any other,
/// with the same SQL as the equivalent format string.
///
/// Sorting: Foundation's `SortDescriptor` gives its key path, its order and (when made with
/// one) its `String.StandardComparator` on Linux too. A key path sorts by its property
/// (`compare:`, a plain `ORDER BY t0.ZNAME`); `.localizedStandard` sorts with
/// `localizedStandardCompare:` (`COLLATE NSCollateFinderlike`) and `.localized` with
/// `localizedCompare:` — but Linux's Foundation offers only `.lexical`, and its
/// `SortDescriptor(\.name)` has no string comparator, so on Linux strings sort by `compare:`.
/// For a collation there, change ``FLSortDescriptor/comparator`` in ``fetchRequest()``'s
/// result and fetch that. SwiftData's default for strings is `.localizedStandard`, and
/// SwiftData also appends `t0.Z_PK` as a last sort key; Faultline does neither.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
public struct FetchDescriptor<T: ManagedObjectSubclass> {
    /// Which objects: nil fetches them all.
    public var predicate: Predicate<T>?
    /// The order, first descriptor first.
    public var sortBy: [SortDescriptor<T>]
    /// The largest number of objects returned; nil for no limit (0 is also no limit, as in
    /// Core Data).
    public var fetchLimit: Int?
    /// How many objects to skip; nil for none.
    public var fetchOffset: Int?
    /// Whether unsaved changes of the context show in the result (true by default): inserted
    /// objects that match are added, deleted ones left out, changed ones matched again, with
    /// the same translated predicate.
    public var includePendingChanges = true
    /// The attributes and to-one relationships loaded with the fetch; the others load when
    /// first read. Empty loads all of them.
    public var propertiesToFetch: [PartialKeyPath<T>] = []
    /// Relationships whose destinations are loaded with the fetch, one statement each.
    public var relationshipKeyPathsForPrefetching: [PartialKeyPath<T>] = []

    /// A descriptor with a predicate and sort order.
    public init(predicate: Predicate<T>? = nil, sortBy: [SortDescriptor<T>] = []) {
        self.predicate = predicate
        self.sortBy = sortBy
    }

    /// The descriptor as a fetch request for `T`'s entity, with the predicate translated: what
    /// `ManagedObjectContext.fetch(_:)` runs. Print its predicate to
    /// see the format string a `#Predicate` became.
    ///
    /// - Throws: ``PredicateTranslationError`` for a predicate, sort key path, property or
    ///   relationship with no Core Data form; ``FetchRequestError`` for a negative limit or
    ///   offset.
    public func fetchRequest() throws -> FetchRequest {
        try FetchRequest(self)
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension FetchRequest {
    /// The request a ``FetchDescriptor`` stands for (see ``FetchDescriptor/fetchRequest()``).
    ///
    /// - Throws: as ``FetchDescriptor/fetchRequest()``.
    public init<T: ManagedObjectSubclass>(_ descriptor: FetchDescriptor<T>) throws {
        self.init(entityName: T.entityName)
        if let predicate = descriptor.predicate { self.predicate = try FLPredicate(predicate) }
        sortDescriptors = try descriptor.sortBy.map { try FLSortDescriptor($0) }
        if let limit = descriptor.fetchLimit {
            guard limit >= 0 else { throw FetchRequestError("fetchLimit is \(limit); it must be 0 or more (nil for no limit)") }
            fetchLimit = limit
        }
        if let offset = descriptor.fetchOffset {
            guard offset >= 0 else { throw FetchRequestError("fetchOffset is \(offset); it must be 0 or more") }
            fetchOffset = offset
        }
        includesPendingChanges = descriptor.includePendingChanges
        if !descriptor.propertiesToFetch.isEmpty {
            propertiesToFetch = try descriptor.propertiesToFetch.map { .keyPath(try Self.propertyName($0, of: T.self, "propertiesToFetch")) }
        }
        relationshipKeyPathsForPrefetching = try descriptor.relationshipKeyPathsForPrefetching.map {
            try Self.propertyName($0, of: T.self, "relationshipKeyPathsForPrefetching")
        }
    }

    private static func propertyName<T: ManagedObjectSubclass>(_ keyPath: PartialKeyPath<T>, of type: T.Type, _ list: String) throws -> String {
        guard let name = T.propertyName(for: keyPath) else {
            let text = FLPredicateTranslator.describe(keyPath)
            throw PredicateTranslationError(
                expression: text,
                message: "cannot use \(text) in \(list) of FetchDescriptor<\(T.self)>: \(T.self).propertyName(for:) does not know it as a model property")
        }
        return name
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension FLSortDescriptor {
    /// A Foundation `SortDescriptor` of a registered class as a sort on its model property:
    /// the key path's property, ascending for `.forward`, and the comparison of its string
    /// comparator (`compare:` when it has none or `.lexical`; on Apple platforms
    /// `localizedStandardCompare:` for `.localizedStandard`, `localizedCompare:` for `.localized`).
    ///
    /// - Throws: ``PredicateTranslationError`` when the descriptor has no key path or its key
    ///   path is not a model property.
    public init<T: ManagedObjectSubclass>(_ descriptor: SortDescriptor<T>) throws {
        guard let keyPath = descriptor.keyPath else {
            throw PredicateTranslationError(
                expression: "SortDescriptor<\(T.self)>",
                message: "cannot sort FetchDescriptor<\(T.self)> by a SortDescriptor without a key path; make it with SortDescriptor(\\.property)")
        }
        guard let name = T.propertyName(for: keyPath) else {
            let text = FLPredicateTranslator.describe(keyPath)
            throw PredicateTranslationError(
                expression: text,
                message:
                    "cannot sort FetchDescriptor<\(T.self)> by \(text): \(T.self).propertyName(for:) does not know it as a model property (sort keys are the class's own attributes and to-one relationships)"
            )
        }
        var comparator = Comparator.compare
        #if canImport(Darwin)
            if let strings = descriptor.stringComparator {
                if strings == .localizedStandard {
                    comparator = .localizedStandardCompare
                } else if strings == .localized {
                    comparator = .localizedCompare
                }
            }
        #endif
        self.init(key: name, ascending: descriptor.order == .forward, comparator: comparator)
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension ManagedObjectContext {
    /// Fetches the objects a descriptor describes, as instances of its class (SwiftData's
    /// `ModelContext.fetch`): the descriptor becomes a ``FetchRequest``
    /// (``FetchDescriptor/fetchRequest()``) run by `fetch(_:)` (of a `FetchRequest`), pending changes included as
    /// the descriptor says.
    ///
    /// ```swift
    /// let recipes = try context.fetch(FetchDescriptor<Recipe>(predicate: #Predicate { $0.name.starts(with: "G") }))
    /// ```
    ///
    /// - Throws: ``FetchRequestError`` when `T` is not registered with the coordinator for its
    ///   entity; ``PredicateTranslationError`` for a predicate or key path with no Core Data
    ///   form; otherwise as `fetch(_:)` (of a `FetchRequest`).
    public func fetch<T: ManagedObjectSubclass>(_ descriptor: FetchDescriptor<T>) throws -> [T] {
        let request = try registeredRequest(descriptor)
        var typed: [T] = []
        for object in try fetch(request) {
            guard let instance = object as? T else {
                throw FetchRequestError("the fetch of \(T.entityName) found a \(type(of: object)), not a \(T.self)")
            }
            typed.append(instance)
        }
        return typed
    }

    /// The number of objects a descriptor finds (SwiftData's `fetchCount`), counted as
    /// ``count(for:)`` counts: one `SELECT COUNT`, or a fetch merged with the pending changes.
    ///
    /// - Throws: as `fetch(_:)` (of a descriptor).
    public func fetchCount<T: ManagedObjectSubclass>(_ descriptor: FetchDescriptor<T>) throws -> Int {
        try count(for: registeredRequest(descriptor))
    }

    /// The IDs of the objects a descriptor finds (SwiftData's `fetchIdentifiers`), read without
    /// their values (`SELECT 0, t0.Z_PK …`); with pending changes included, inserted objects
    /// have temporary IDs.
    ///
    /// - Throws: as `fetch(_:)` (of a descriptor).
    public func fetchIdentifiers<T: ManagedObjectSubclass>(_ descriptor: FetchDescriptor<T>) throws -> [ManagedObjectID] {
        var request = try registeredRequest(descriptor)
        request.includesPropertyValues = false
        request.propertiesToFetch = nil
        return try fetchObjectIDs(request)
    }

    /// The descriptor's request, after checking that its class makes the entity's objects.
    private func registeredRequest<T: ManagedObjectSubclass>(_ descriptor: FetchDescriptor<T>) throws -> FetchRequest {
        guard classBindings[T.entityName]?.type == T.self else {
            throw FetchRequestError(
                "class \(T.self) is not registered for entity \(T.entityName): call registerClasses on the coordinator before making the context")
        }
        return try FetchRequest(descriptor)
    }
}
