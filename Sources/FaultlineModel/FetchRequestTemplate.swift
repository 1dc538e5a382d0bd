import Foundation

/// A fetch request stored in the model: a template with a name, or a fetched property's request.
public struct FetchRequestTemplate: Sendable, Hashable {
    /// The template name.
    public var name: String
    /// The entity fetched.
    public var entityName: String
    /// The predicate in NSPredicate format, as stored in the model.
    public var predicateFormat: String?
    /// The fetch limit (0 = none).
    public var fetchLimit: Int
    /// The batch size (0 = all at once).
    public var fetchBatchSize: Int
    /// The result type code (0 objects, 1 object IDs, 2 dictionaries, 4 count).
    public var resultType: Int
    /// Flags stored in the model; absent in XML means false.
    public var includesSubentities: Bool
    /// Whether property values are fetched with the objects.
    public var includesPropertyValues: Bool
    /// Whether unsaved changes are matched.
    public var includesPendingChanges: Bool
    /// Whether objects come back as faults.
    public var returnsObjectsAsFaults: Bool
    /// Whether dictionary results are distinct.
    public var returnsDistinctResults: Bool
    /// The fetch offset (0 = none).
    public var fetchOffset: Int = 0
    /// Sort descriptors as (key path, ascending), from a compiled model.
    public var sortDescriptors: [SortKey] = []

    /// One sort key of a stored fetch request.
    public struct SortKey: Sendable, Hashable {
        /// The key path sorted on.
        public var keyPath: String
        /// Whether the order is ascending.
        public var ascending: Bool

        /// Creates a sort key.
        public init(keyPath: String, ascending: Bool = true) {
            self.keyPath = keyPath
            self.ascending = ascending
        }
    }

    /// Creates a template.
    public init(
        name: String,
        entityName: String,
        predicateFormat: String? = nil,
        fetchLimit: Int = 0,
        fetchBatchSize: Int = 0,
        resultType: Int = 0,
        includesSubentities: Bool = true,
        includesPropertyValues: Bool = true,
        includesPendingChanges: Bool = true,
        returnsObjectsAsFaults: Bool = true,
        returnsDistinctResults: Bool = false
    ) {
        self.name = name
        self.entityName = entityName
        self.predicateFormat = predicateFormat
        self.fetchLimit = fetchLimit
        self.fetchBatchSize = fetchBatchSize
        self.resultType = resultType
        self.includesSubentities = includesSubentities
        self.includesPropertyValues = includesPropertyValues
        self.includesPendingChanges = includesPendingChanges
        self.returnsObjectsAsFaults = returnsObjectsAsFaults
        self.returnsDistinctResults = returnsDistinctResults
    }
}
