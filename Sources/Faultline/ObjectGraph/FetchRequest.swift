import FaultlinePredicate
import Foundation

/// What to fetch: an entity, a predicate, an order, a window.
///
/// ```swift
/// var request = FetchRequest(entityName: "Location")
/// request.predicate = try FLPredicate(format: "label BEGINSWITH[c] %@", "g")
/// request.sortDescriptors = [FLSortDescriptor(key: "label")]
/// request.fetchLimit = 5
/// let locations = try context.fetch(request)
/// ```
public struct FetchRequest: Sendable {
    /// The entity fetched.
    public var entityName: String
    /// Which objects: nil fetches them all.
    public var predicate: FLPredicate?
    /// The order of the results.
    public var sortDescriptors: [FLSortDescriptor] = []
    /// The largest number of results (0 = no limit).
    public var fetchLimit: Int = 0
    /// How many results to skip.
    public var fetchOffset: Int = 0
    /// Whether objects of sub-entities are included.
    public var includesSubentities: Bool = true
    /// Batch faulting: when above 0, the fetch selects only the object IDs and hands out
    /// faults; touching one loads the rows of its whole batch of this many objects in one
    /// statement.
    public var fetchBatchSize: Int = 0
    /// Relationship key paths (`asset`, `inventories.asset`) whose destinations are loaded
    /// with the fetch, one statement per relationship, so touching them fires no fault.
    public var relationshipKeyPathsForPrefetching: [String] = []
    /// Whether unsaved changes of the context show in the result (default true, as in Core
    /// Data): inserted objects that match are added, deleted ones left out, changed ones
    /// matched again in memory.
    public var includesPendingChanges: Bool = true

    /// Creates a request for an entity.
    public init(entityName: String) {
        self.entityName = entityName
    }
}
