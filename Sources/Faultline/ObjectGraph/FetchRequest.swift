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

    /// What the fetch returns (`NSFetchRequest.resultType`): managed objects (the default),
    /// object IDs, dictionaries of values, or a count. Run requests of every type with
    /// ``ManagedObjectContext/execute(_:)->FetchResult``; see `Documentation/Fetching.md` for the SQL of each.
    public var resultType: FetchResultType = .managedObject
    /// The properties fetched (`NSFetchRequest.propertiesToFetch`): for dictionaries, the keys
    /// of each dictionary (attributes, to-one relationships as object IDs, `objectID`, key
    /// paths through to-ones, ``ExpressionDescription``s); for managed objects, the
    /// attributes and to-ones loaded with the fetch (the others load when first read). nil
    /// fetches all of them.
    public var propertiesToFetch: [FetchProperty]?
    /// The key paths (or expressions) dictionaries are grouped by (`propertiesToGroupBy`,
    /// SQL `GROUP BY`); only with ``FetchResultType/dictionary``, and every plain property
    /// fetched must be one of them.
    public var propertiesToGroupBy: [FetchProperty]?
    /// Which groups are kept (`havingPredicate`, SQL `HAVING`): `$name` names an expression
    /// description of ``propertiesToFetch``, as in `$count > 40`.
    public var havingPredicate: FLPredicate?
    /// Whether equal dictionaries are returned once (`returnsDistinctResults`, `SELECT DISTINCT`).
    public var returnsDistinctResults: Bool = false
    /// Whether objects come back as faults (`returnsObjectsAsFaults`). Faultline fills the
    /// objects of a fetch from the rows it read either way; no SQL differs.
    public var returnsObjectsAsFaults: Bool = true
    /// Whether the rows' values are read with the fetch (`includesPropertyValues`, default
    /// true). false selects only `Z_ENT` (or 0) and `Z_PK`, and returns faults; with
    /// ``FetchResultType/managedObjectID`` that is the cheap form (true reads every column,
    /// as Core Data does).
    public var includesPropertyValues: Bool = true

    /// Creates a request for an entity.
    public init(entityName: String) {
        self.entityName = entityName
    }
}
