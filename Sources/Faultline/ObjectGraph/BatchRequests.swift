import FaultlinePredicate
import Foundation

/// What a batch request returns (Core Data's `NSBatchDeleteResult`, `NSBatchUpdateResult`,
/// `NSBatchInsertResult`), as chosen by the request's `resultType`.
public enum BatchResult: Sendable, Hashable {
    /// `statusOnly`: whether the request ran (always true: a failure throws).
    case status(Bool)
    /// `count`: how many rows were deleted, updated or inserted (an upsert that updated a row
    /// counts it; an ignored row does not).
    case count(Int)
    /// `objectIDs`: the objects deleted, updated or inserted, for
    /// ``ManagedObjectContext/mergeChanges(fromRemoteContextSave:into:)``.
    case objectIDs([ManagedObjectID])

    /// The count, when the result is one.
    public var count: Int? {
        if case .count(let n) = self { return n }
        return nil
    }

    /// The object IDs, when the result holds them.
    public var objectIDs: [ManagedObjectID]? {
        if case .objectIDs(let ids) = self { return ids }
        return nil
    }
}

/// The result kinds a batch request can ask for (Core Data's `NSBatchDeleteRequestResultType`,
/// `NSBatchUpdateRequestResultType`, `NSBatchInsertRequestResultType`).
public enum BatchResultType: Sendable, Hashable {
    /// Only whether it succeeded (Core Data's default).
    case statusOnly
    /// The number of rows changed.
    case count
    /// The IDs of the objects changed.
    case objectIDs
}

/// Deletes objects straight in the store, without loading them (Core Data's
/// `NSBatchDeleteRequest`).
///
/// Runs `SELECT 0, t0.Z_PK FROM ZT t0 WHERE …` (the fetch's own SQL) for the keys, applies
/// the delete rules of the entity's relationships in SQL as Core Data's batch delete does
/// (Cascade deletes the destinations, Nullify clears their inverse foreign keys and fails on
/// a required one, Deny refuses when destinations exist), then
/// `DELETE FROM ZT WHERE Z_PK IN (SELECT * FROM _Z_intarray0)`, all in one transaction.
/// Validation does not run. Contexts are not told: merge the result with
/// ``ManagedObjectContext/mergeChanges(fromRemoteContextSave:into:)``.
///
/// ```swift
/// var fetch = FetchRequest(entityName: "Recipe")
/// fetch.predicate = try FLPredicate(format: "prepTime > 120")
/// var delete = BatchDeleteRequest(fetchRequest: fetch)
/// delete.resultType = .objectIDs
/// let ids = try context.execute(delete).objectIDs ?? []
/// ManagedObjectContext.mergeChanges(fromRemoteContextSave: [.deleted: ids], into: [context])
/// ```
public struct BatchDeleteRequest: Sendable {
    /// The entity whose objects are deleted.
    public var entityName: String
    /// Which objects: nil deletes them all (ignored when ``objectIDs`` is set).
    public var predicate: FLPredicate?
    /// Whether objects of sub-entities are deleted too.
    public var includesSubentities: Bool = true
    /// Specific objects, all of ``entityName`` (or its sub-entities).
    public var objectIDs: [ManagedObjectID]?
    /// What ``ManagedObjectContext/execute(_:)-(BatchDeleteRequest)`` returns.
    public var resultType: BatchResultType = .statusOnly

    /// Deletes what a fetch request would fetch (its entity, predicate and
    /// `includesSubentities`; sort, limit and offset do not apply).
    public init(fetchRequest: FetchRequest) {
        self.entityName = fetchRequest.entityName
        self.predicate = fetchRequest.predicate
        self.includesSubentities = fetchRequest.includesSubentities
    }

    /// Deletes every object of an entity that matches a predicate.
    public init(entityName: String, predicate: FLPredicate? = nil) {
        self.entityName = entityName
        self.predicate = predicate
    }

    /// Deletes specific objects, all of one entity (mixing entities is an error when the
    /// request runs, as in Core Data).
    public init(objectIDs: [ManagedObjectID]) {
        self.entityName = objectIDs.first?.entityName ?? ""
        self.objectIDs = objectIDs
    }
}

/// Sets attributes straight in the store, without loading the objects (Core Data's
/// `NSBatchUpdateRequest`).
///
/// Each value of ``propertiesToUpdate`` is an expression: a constant, or a computation over
/// the row's own attributes (`FLExpression(format: "prepTime + 5")`, `now()`); key paths
/// through relationships are refused, as in Core Data. Every updated row's `Z_OPT` is
/// bumped (`Z_OPT = Z_OPT+1`). Validation does not run.
///
/// ```swift
/// var update = BatchUpdateRequest(entityName: "Recipe")
/// update.predicate = try FLPredicate(format: "type.name == 'Dessert'")
/// update.propertiesToUpdate = ["prepTime": try FLExpression(format: "prepTime * 2")]
/// update.resultType = .count
/// let count = try context.execute(update).count
/// ```
public struct BatchUpdateRequest: Sendable {
    /// The entity whose objects are updated.
    public var entityName: String
    /// Which objects: nil updates them all.
    public var predicate: FLPredicate?
    /// Whether objects of sub-entities are updated too.
    public var includesSubentities: Bool = true
    /// Attribute name → new value (a constant expression or one computed from the row).
    public var propertiesToUpdate: [String: FLExpression] = [:]
    /// What ``ManagedObjectContext/execute(_:)-(BatchUpdateRequest)`` returns (Core Data's
    /// `statusOnlyResultType`, `updatedObjectsCountResultType`, `updatedObjectIDsResultType`).
    public var resultType: BatchResultType = .statusOnly

    /// Creates an update of an entity's objects.
    public init(entityName: String) {
        self.entityName = entityName
    }

    /// Sets one attribute to a constant (a Swift value: String, Int, Double, Bool, Date,
    /// Data, UUID, URL, Decimal, or nil).
    /// - Throws: ``BatchRequestError`` when the value is of no type a predicate can hold.
    public mutating func set(_ key: String, to value: Any?) throws {
        guard let constant = FLValue(converting: value) else {
            throw BatchRequestError(entity: entityName, key: key, "the value \(String(describing: value).prefix(40)) (\(value.map { "\(type(of: $0))" } ?? "nil")) cannot be stored")
        }
        propertiesToUpdate[key] = .constant(constant)
    }
}

/// Inserts rows straight into the store (Core Data's `NSBatchInsertRequest`): from an array
/// of dictionaries or from a handler that fills one dictionary at a time.
///
/// Keys are attribute names (relationships cannot be set, as in Core Data); missing keys
/// take the model's default. When the entity has uniqueness constraints, a row whose
/// constrained values already exist is decided by the merge policy, as in Core Data's log:
///
/// - no constraint: `INSERT INTO ZQUAKE(Z_PK, Z_ENT, Z_OPT, ZCODE, …) VALUES(?, …)`;
/// - constraint, `.error` (and the store-trump policies): `INSERT OR IGNORE INTO …` — the
///   stored row stays;
/// - constraint, `.mergeByPropertyObjectTrump` or `.overwrite`: `INSERT INTO … VALUES(…)
///   ON CONFLICT(ZCODE) DO UPDATE SET Z_OPT = Z_OPT+1 , ZPLACE = excluded.ZPLACE , …` — an
///   upsert.
///
/// ``conflictResolution`` overrides the policy (`.fail` makes a duplicate an error).
public struct BatchInsertRequest {
    /// How a row that repeats a uniqueness constraint's values is handled.
    public enum ConflictResolution: Sendable, Hashable {
        /// A plain `INSERT`: a duplicate fails the whole request (``BatchRequestError`` naming
        /// the row and values); nothing is written.
        case fail
        /// `INSERT OR IGNORE`: the stored row stays, the new one is dropped.
        case ignore
        /// `ON CONFLICT(…) DO UPDATE SET …`: the stored row takes the new values.
        case upsert
    }

    /// The entity inserted.
    public var entityName: String
    /// The rows, when given at once.
    public var objects: [[String: Any]]?
    /// Called until it returns true (Core Data's `dictionaryHandler`): fill the dictionary
    /// with one row and return false, or return true when there are no more rows (the
    /// dictionary is then not used).
    public var dictionaryHandler: ((inout [String: Any]) -> Bool)?
    /// What ``ManagedObjectContext/execute(_:)-(BatchInsertRequest)`` returns.
    public var resultType: BatchResultType = .statusOnly
    /// How duplicates of a uniqueness constraint are handled; nil lets the executing
    /// context's merge policy decide, as Core Data does.
    public var conflictResolution: ConflictResolution?

    /// Inserts rows given as dictionaries (attribute name → value).
    public init(entityName: String, objects: [[String: Any]]) {
        self.entityName = entityName
        self.objects = objects
    }

    /// Inserts the rows a handler produces, one call per row.
    public init(entityName: String, dictionaryHandler: @escaping (inout [String: Any]) -> Bool) {
        self.entityName = entityName
        self.dictionaryHandler = dictionaryHandler
    }
}

/// Why a batch request was refused or failed: the entity, the property and, for inserts, the
/// row involved. Nothing was written.
public struct BatchRequestError: Error, Sendable, CustomStringConvertible, Equatable {
    /// The entity of the request.
    public var entityName: String
    /// The property involved, if any.
    public var key: String?
    /// The row of a batch insert (0-based), if any.
    public var row: Int?
    /// A sentence saying what is wrong.
    public var message: String

    /// Creates an error.
    public init(entity: String, key: String? = nil, row: Int? = nil, _ message: String) {
        self.entityName = entity
        self.key = key
        self.row = row
        self.message = message
    }

    public var description: String {
        var subject = entityName
        if let key { subject += ".\(key)" }
        if let row { subject += " (row \(row + 1))" }
        return "\(subject): \(message)"
    }
}

/// The kinds of change ``ManagedObjectContext/mergeChanges(fromRemoteContextSave:into:)``
/// takes (Core Data's `NSInsertedObjectsKey`, `NSUpdatedObjectsKey`, `NSDeletedObjectsKey`).
public enum RemoteChangeKey: Sendable, Hashable {
    /// Objects inserted.
    case inserted
    /// Objects updated.
    case updated
    /// Objects deleted.
    case deleted
}
