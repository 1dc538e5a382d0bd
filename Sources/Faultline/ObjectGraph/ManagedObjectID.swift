import Foundation

/// The identity of a managed object: its store, entity and primary key.
///
/// Object IDs are values that may cross between contexts and threads; objects may not.
/// A saved object's URI is Core Data's `x-coredata://<store UUID>/<Entity>/p<Z_PK>`; an
/// unsaved object has a temporary ID, `x-coredata:///<Entity>/t<UUID><number>`.
public struct ManagedObjectID: Sendable, Hashable, CustomStringConvertible {
    /// The entity name.
    public let entityName: String
    /// The store UUID (empty for temporary IDs).
    public let storeIdentifier: String
    /// The primary key (`Z_PK`); 0 for a temporary ID.
    public let primaryKey: Int64
    /// The number of a temporary ID (0 for a permanent one): unique in the process.
    private let temporaryNumber: UInt64

    /// The temporary identifier of an unsaved object, as Core Data makes them: a UUID chosen
    /// once per process followed by a counter (`3F2A…-9C1D42`).
    public var temporaryIdentifier: String? {
        temporaryNumber == 0 ? nil : TemporaryIDs.prefix + String(temporaryNumber)
    }

    /// A permanent ID for a stored row.
    public init(entityName: String, storeIdentifier: String, primaryKey: Int64) {
        self.entityName = entityName
        self.storeIdentifier = storeIdentifier
        self.primaryKey = primaryKey
        self.temporaryNumber = 0
    }

    /// A new temporary ID for an unsaved object.
    public init(temporaryFor entityName: String) {
        self.entityName = entityName
        self.storeIdentifier = ""
        self.primaryKey = 0
        self.temporaryNumber = TemporaryIDs.next()
    }

    /// Whether the ID is temporary (the object was never saved).
    public var isTemporaryID: Bool { temporaryNumber != 0 }

    /// Core Data's URI form.
    public var uriRepresentation: String {
        if let temporaryIdentifier { return "x-coredata:///\(entityName)/t\(temporaryIdentifier)" }
        return "x-coredata://\(storeIdentifier)/\(entityName)/p\(primaryKey)"
    }

    /// Hashes the key and the temporary number only: IDs are hashed for every object a
    /// context registers, and one word is the cheapest to hash. Equality still compares the
    /// entity and the store; IDs of different entities with the same key share a hash (a
    /// store has few entities, so few collide).
    public func hash(into hasher: inout Hasher) {
        hasher.combine(UInt64(bitPattern: primaryKey) ^ (temporaryNumber &* 0x9E37_79B9_7F4A_7C15))
    }

    /// Core Data's description: `0x… <x-coredata://…>`, here without an address.
    public var description: String { "<\(uriRepresentation)>" }
}

/// Object IDs encode and decode (as SwiftData's `PersistentIdentifier` does), so a `#Predicate`
/// can capture one: `#Predicate<Ingredient> { $0.recipe?.objectID == recipeID }`. A temporary
/// ID decodes to the same ID only in the process that made it.
extension ManagedObjectID: Codable {}

/// The source of temporary IDs: one UUID per process and a counter.
private enum TemporaryIDs {
    static let prefix = UUID().uuidString
    private static let lock = NSLock()
    nonisolated(unsafe) private static var counter: UInt64 = 0  // only touched under `lock`

    static func next() -> UInt64 {
        lock.withLock {
            counter += 1
            return counter
        }
    }
}
