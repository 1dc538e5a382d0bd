import Foundation

/// A change the object graph refuses: an unknown key, a value of the wrong type, an object
/// of another context. Thrown at once by the call that tried it.
///
/// ```swift
/// try asset.setValue(12, forKey: "label")
/// // Asset.label (x-coredata:///Asset/t…): expected a String for attribute type String, got Int
/// ```
public struct ManagedObjectError: Error, Sendable, CustomStringConvertible, Equatable {
    /// The kind of problem.
    public enum Code: Sendable, Equatable {
        /// The entity has no property with this key.
        case unknownKey
        /// The value's type does not fit the attribute or relationship.
        case typeMismatch
        /// The related object belongs to another context (or to none).
        case otherContext
        /// A to-many operation on a to-one relationship, or the reverse.
        case notToMany
        /// The entity is unknown or abstract, so no object of it can be inserted.
        case cannotInsert
        /// The object was deleted, or is not registered in a context.
        case notInContext
        /// The property is read-only (a derived attribute).
        case readOnly
    }

    /// The kind of problem.
    public var code: Code
    /// The entity of the object changed.
    public var entityName: String
    /// The object changed (nil when there is none yet).
    public var objectID: ManagedObjectID?
    /// The property involved, if any.
    public var key: String?
    /// A sentence saying what is wrong.
    public var message: String

    /// Creates an error.
    public init(_ code: Code, entity: String, objectID: ManagedObjectID? = nil, key: String? = nil, _ message: String) {
        self.code = code
        self.entityName = entity
        self.objectID = objectID
        self.key = key
        self.message = message
    }

    public var description: String {
        var subject = entityName
        if let key { subject += ".\(key)" }
        if let objectID { subject += " (\(objectID.uriRepresentation))" }
        return "\(subject): \(message)"
    }
}

/// Why a save failed validation: every problem found, each with its entity, object and key.
/// Nothing was written.
///
/// Codes are Core Data's (`NSValidationMissingMandatoryPropertyError` = 1570, …); the error as
/// a whole is `NSValidationMultipleErrorsError` (1560) when it holds more than one failure.
public struct ObjectValidationError: Error, Sendable, CustomStringConvertible, Equatable {
    /// One failed rule.
    public struct Failure: Sendable, Hashable, CustomStringConvertible {
        /// Core Data's validation error codes.
        public enum Code: Int, Sendable, Hashable {
            /// An object's own validation (``ManagedObject/validateValue(_:forKey:)`` or a
            /// `validateFor…` override) threw: Core Data's `NSManagedObjectValidationError`.
            case managedObjectValidation = 1550
            /// A required attribute or to-one is nil.
            case missingMandatoryProperty = 1570
            /// A to-many has fewer objects than its minimum.
            case relationshipLacksMinimumCount = 1580
            /// A to-many has more objects than its maximum.
            case relationshipExceedsMaximumCount = 1590
            /// A deleted object still has objects in a relationship whose delete rule is Deny.
            case relationshipDeniedDelete = 1600
            /// A number above the maximum.
            case numberTooLarge = 1610
            /// A number below the minimum.
            case numberTooSmall = 1620
            /// A date after the maximum.
            case dateTooLate = 1630
            /// A date before the minimum.
            case dateTooSoon = 1640
            /// A string longer than the maximum length.
            case stringTooLong = 1660
            /// A string shorter than the minimum length.
            case stringTooShort = 1670
            /// A string not matching the attribute's regular expression.
            case stringPatternMatching = 1680
        }

        /// The rule broken.
        public var code: Code
        /// The entity of the object.
        public var entityName: String
        /// The object.
        public var objectID: ManagedObjectID
        /// The property.
        public var key: String
        /// A sentence saying what is wrong.
        public var message: String

        public var description: String { "\(entityName).\(key) (\(objectID.uriRepresentation)): \(message)" }
    }

    /// Every failure, in a stable order (entity, object, key).
    public var failures: [Failure]

    /// Core Data's code: the single failure's, or 1560 (multiple errors).
    public var code: Int { failures.count == 1 ? failures[0].code.rawValue : 1560 }

    public var description: String {
        "validation failed (\(failures.count) error\(failures.count == 1 ? "" : "s")):\n" + failures.map { "  " + $0.description }.joined(separator: "\n")
    }
}

/// Why a save failed optimistic locking: rows changed or deleted in the store since this
/// context read them. The transaction was rolled back and nothing was written.
///
/// Core Data's `NSManagedObjectMergeError` (133020).
public struct MergeConflictError: Error, Sendable, CustomStringConvertible, Equatable {
    /// Core Data's code for merge conflicts.
    public static let code = 133020

    /// Every object in conflict.
    public var conflicts: [MergeConflict]

    public var description: String {
        "merge conflict (\(conflicts.count) object\(conflicts.count == 1 ? "" : "s") changed in the store since read):\n"
            + conflicts.map { "  " + $0.description }.joined(separator: "\n")
    }
}

/// One object whose row changed in the store since the context read it.
public struct MergeConflict: Sendable, Hashable, CustomStringConvertible {
    /// The object.
    public var objectID: ManagedObjectID
    /// The row version (`Z_OPT`) the context read.
    public var objectVersion: Int64
    /// The row version now in the store; nil when the row was deleted.
    public var storeVersion: Int64?

    /// Creates a conflict record.
    public init(objectID: ManagedObjectID, objectVersion: Int64, storeVersion: Int64?) {
        self.objectID = objectID
        self.objectVersion = objectVersion
        self.storeVersion = storeVersion
    }

    public var description: String {
        "\(objectID.entityName) \(objectID.uriRepresentation): read at version \(objectVersion), store has "
            + (storeVersion.map { "version \($0)" } ?? "no row (deleted)")
    }
}

/// How a save resolves merge conflicts (Core Data's merge policies).
public enum MergePolicy: Sendable, Hashable {
    /// Fail with ``MergeConflictError`` (Core Data's default, `NSErrorMergePolicy`).
    case error
    /// The store wins: the conflicting objects' changes are dropped and their values reloaded
    /// (`NSRollbackMergePolicy`).
    case rollback
    /// The object wins: each conflicting object is written whole over the store's row
    /// (`NSOverwriteMergePolicy`).
    case overwrite
    /// Property by property: changed properties keep the object's value, the others take the
    /// store's (`NSMergeByPropertyObjectTrumpMergePolicy`).
    case mergeByPropertyObjectTrump
    /// Property by property: properties changed in the store take the store's value, the
    /// others keep the object's (`NSMergeByPropertyStoreTrumpMergePolicy`).
    case mergeByPropertyStoreTrump
}

/// What a save wrote: the permanent IDs of the objects inserted, updated and deleted.
public struct SaveNotification: Sendable, Hashable {
    /// Objects inserted (permanent IDs).
    public var insertedObjectIDs: [ManagedObjectID]
    /// Objects updated.
    public var updatedObjectIDs: [ManagedObjectID]
    /// Objects deleted.
    public var deletedObjectIDs: [ManagedObjectID]
}

/// A save that would break a uniqueness constraint of the model (Core Data's
/// `NSManagedObjectConstraintMergeError`, 133021): nothing was written, the context keeps
/// its changes.
public struct ConstraintConflictError: Error, Sendable, CustomStringConvertible, Equatable {
    /// Core Data's code for constraint conflicts.
    public static let code = 133021

    /// The entity whose constraint was broken.
    public var entityName: String
    /// The constraint: the properties whose values must be unique together.
    public var constraint: [String]
    /// The object whose row could not be written.
    public var objectID: ManagedObjectID
    /// The objects that already hold those values (in the store, or saved just before in the
    /// same save); empty when they could not be found.
    public var conflictingObjectIDs: [ManagedObjectID]
    /// The values, as they would be written, by property.
    public var values: [String: String]

    /// Creates the error.
    public init(entityName: String, constraint: [String], objectID: ManagedObjectID, conflictingObjectIDs: [ManagedObjectID], values: [String: String]) {
        self.entityName = entityName
        self.constraint = constraint
        self.objectID = objectID
        self.conflictingObjectIDs = conflictingObjectIDs
        self.values = values
    }

    public var description: String {
        let shown = constraint.map { "\($0) = \(values[$0] ?? "nil")" }.joined(separator: ", ")
        let others = conflictingObjectIDs.isEmpty ? "another object" : conflictingObjectIDs.map(\.uriRepresentation).joined(separator: ", ")
        return "constraint conflict (uniqueness constraint of \(entityName) on \(constraint.joined(separator: ", "))): "
            + "\(objectID.uriRepresentation) has \(shown), as \(others) already has; nothing was written"
    }
}

