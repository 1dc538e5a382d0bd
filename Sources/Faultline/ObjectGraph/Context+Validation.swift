import FaultlineModel
import FaultlinePredicate
import Foundation

extension ManagedObjectContext {
    /// Checks every inserted and changed object against its model (required properties,
    /// minimum and maximum values, lengths and counts, patterns) and every deleted object
    /// against its Deny rules; throws one ``ObjectValidationError`` listing all failures.
    ///
    /// Each object validates itself: ``ManagedObject/validateForInsert()``,
    /// ``ManagedObject/validateForUpdate()`` or ``ManagedObject/validateForDelete()``, whose
    /// defaults check the model (and call ``ManagedObject/validateValue(_:forKey:)`` per
    /// property for instances of subclasses). An error other than ``ObjectValidationError``
    /// thrown by a subclass's method becomes a failure with code 1550 naming the object.
    public func validatePendingChanges() throws {
        var failures: [ObjectValidationError.Failure] = []
        let previous = link.validating
        link.validating = Unmanaged.passUnretained(self)
        defer { link.validating = previous }
        try touchedInSaveOrder().forEachBorrowed { object in
            do {
                if object.isDeleted {
                    // An inaccessible fault deleted is exempt: it no longer exists.
                    if !object.isInserted, !object.isInaccessible { try object.validateForDelete() }
                } else if object.isInserted {
                    try object.validateForInsert()
                } else if object.isUpdated {
                    try object.validateForUpdate()
                }
            } catch let error as ObjectValidationError {
                failures += error.failures
            } catch where type(of: object) != ManagedObject.self {
                failures.append(.init(code: .managedObjectValidation, entityName: object.entity.name, objectID: object.objectID, key: "", message: "\(error)"))
            }
        }
        guard failures.isEmpty else {
            throw ObjectValidationError(
                failures: failures.sorted {
                    ($0.entityName, $0.objectID.uriRepresentation, $0.key, $0.code.rawValue) < ($1.entityName, $1.objectID.uriRepresentation, $1.key, $1.code.rawValue)
                })
        }
    }

    /// The model's rules for an inserted or updated object, then (for an instance of a
    /// subclass) its ``ManagedObject/validateValue(_:forKey:)`` for each property: what
    /// ``ManagedObject/validateForInsert()`` and ``ManagedObject/validateForUpdate()`` do.
    func validateProperties(of object: ManagedObject) throws {
        var failures = try propertyFailures(object)
        if type(of: object) != ManagedObject.self, !object.isFault {
            let keyFailures = try keyValidationFailures(object)
            if !keyFailures.isEmpty { failures += keyFailures }
        }
        if !failures.isEmpty { throw ObjectValidationError(failures: failures) }
    }

    /// The Deny rules of a deleted object: what ``ManagedObject/validateForDelete()`` does.
    func validateDeletion(of object: ManagedObject) throws {
        let failures = try denyFailures(object)
        if !failures.isEmpty { throw ObjectValidationError(failures: failures) }
    }

    /// A subclass's per-key validation: every property of an inserted object, the changed
    /// ones of an updated object (values read from the store were valid when saved; an
    /// unfired to-many fault is not loaded to be checked).
    private func keyValidationFailures(_ object: ManagedObject) throws -> [ObjectValidationError.Failure] {
        var failures: [ObjectValidationError.Failure] = []
        let layout = object.storage.layout
        // Compared and asked without taking references (or making an empty dictionary).
        let sameLayout = object.storage.layoutReference.toOpaque() == object.committed.layoutReference.toOpaque()
        let noPending = object.extras?.pendingToMany.isEmpty ?? true
        for slot in 0..<layout.count {
            // A slot of an updated object written on neither side is unchanged: skipped first,
            // by the written mask alone. The mask is read for each slot, not once: a
            // subclass's check may set other keys.
            if sameLayout, noPending, !object.isInserted, !ObjectValues.mayDiffer(object.writtenSlots, atSlot: slot) { continue }
            if layout.kinds[slot] == .toMany, object.storage[stored: slot].isNone { continue }
            // Unchanged slots of an updated object are skipped without touching the key.
            if !object.isInserted, noPending || object.pendingToMany[layout.names[slot]] == nil,
                sameLayout ? !object.valueDiffers(atSlot: slot) : !object.valueDiffers(forKey: layout.names[slot])
            {
                continue
            }
            let key = layout.names[slot]
            // The subclass's check; false when it failed (the failure noted).
            func validate(_ value: inout Any?) -> Bool {
                do {
                    try object.validateValue(&value, forKey: key)
                    return true
                } catch let error as ObjectValidationError {
                    failures += error.failures
                } catch {
                    failures.append(.init(code: .managedObjectValidation, entityName: object.entity.name, objectID: object.objectID, key: key, message: "\(error)"))
                }
                return false
            }
            // An attribute of a common type is its slot's value (what value(forKey:) gives
            // for a loaded object), and a value of its type left as it was compares typed
            // (values of type `Any?` are copied and destroyed through the runtime: the slot's
            // value is boxed again rather than kept). So is an empty to-one of a loaded
            // object (nil, what value(forKey:) gives after loading the context). Anything
            // else goes through value(forKey:), and objects compare by identity as
            // AnyHashable, arrays of them element by element.
            let kind = layout.kinds[slot]
            if kind == .attribute || (kind == .toOne && !object.isFault && object.storage[stored: slot].isNone),
                object.partialKeys == nil, let stored = simple(object.storage[stored: slot])
            {
                var value = stored.any
                guard validate(&value), !stored.holdsSame(&value) else { continue }
                if !ManagedObject.valuesEqual(stored.any, value) { try object.setValue(value, forKey: key) }
            } else {
                let original = object.value(forKey: key)
                var value = original
                guard validate(&value) else { continue }
                if !ManagedObject.valuesEqual(original, value) { try object.setValue(value, forKey: key) }
            }
        }
        return failures
    }

    /// A slot's value when it is of a common type (compared as stored), nil for the others.
    private func simple(_ stored: StoredValue) -> StoredValue? {
        switch stored {
        case .other, .objectID, .objectIDs: return nil
        default: return stored
        }
    }

    private func denyFailures(_ object: ManagedObject) throws -> [ObjectValidationError.Failure] {
        var failures: [ObjectValidationError.Failure] = []
        for relationship in object.entity.relationships where relationship.deleteRule == .deny {
            let remaining = try relatedIDs(of: object, relationship).filter { !(registry[$0]?.isDeleted ?? false) }
            if !remaining.isEmpty {
                failures.append(
                    .init(
                        code: .relationshipDeniedDelete, entityName: object.entity.name, objectID: object.objectID, key: relationship.name,
                        message: "cannot delete: relationship \(relationship.name) (delete rule Deny) still holds \(remaining.count) object\(remaining.count == 1 ? "" : "s")"))
            }
        }
        return failures
    }

    private func propertyFailures(_ object: ManagedObject) throws -> [ObjectValidationError.Failure] {
        var failures: [ObjectValidationError.Failure] = []
        func fail(_ code: ObjectValidationError.Failure.Code, _ key: String, _ message: String) {
            failures.append(.init(code: code, entityName: object.entity.name, objectID: object.objectID, key: key, message: message))
        }
        // A fault changed only in a to-many (kept from the other side) has its stored,
        // already valid values: only its relationship counts are checked.
        let loaded = !object.isFault
        // Attribute n is slot n of the entity's layout (attributes come first), unless names
        // repeat (an invalid model) or the values have another layout: then by name.
        let layout = object.entity.propertyLayout
        let bySlot = !layout.hasDuplicateNames && object.storage.layout === layout
        // By slot, only the attributes with a rule are looked at (the layout lists them).
        let attributes = bySlot && layout.validatedAttributeSlots.isEmpty ? [] : object.entity.attributes
        let checked = bySlot ? layout.validatedAttributeSlots : Array(attributes.indices)
        for index in checked where loaded {
            let attribute = attributes[index]
            if attribute.isDerived { continue }
            let stored = bySlot ? object.storage[stored: index] : StoredValue(object.storage[attribute.name])
            if stored.isNone {
                if !attribute.isOptional { fail(.missingMandatoryProperty, attribute.name, "\(attribute.name) is required") }
                continue
            }
            // Most attributes have no bounds and no pattern: nothing more to check.
            if attribute.minValueString == nil && attribute.maxValueString == nil && (attribute.regularExpressionString ?? "").isEmpty { continue }
            let key = attribute.name
            guard let value = stored.any else { continue }
            let minimum = attribute.minValueString.flatMap(Double.init)
            let maximum = attribute.maxValueString.flatMap(Double.init)
            switch value {
            case let text as String:
                let length = Double(text.utf16.count)
                if let minimum, length < minimum { fail(.stringTooShort, key, "\(key) is \(Int(length)) characters long, shorter than the minimum \(Int(minimum))") }
                if let maximum, length > maximum { fail(.stringTooLong, key, "\(key) is \(Int(length)) characters long, longer than the maximum \(Int(maximum))") }
                if let pattern = attribute.regularExpressionString, !pattern.isEmpty {
                    // The MATCHES engine (whole-string match, linear time, or an error when it
                    // cannot decide): a pattern that cannot be checked fails, saying why.
                    do {
                        if try !FLRegex.cached(pattern).matches(text) { fail(.stringPatternMatching, key, "\(key) \"\(text)\" does not match the pattern \(pattern)") }
                    } catch {
                        fail(.stringPatternMatching, key, "\(key) \"\(text)\" could not be checked against the pattern \(pattern): \(error)")
                    }
                }
            case let date as Date:
                let seconds = date.timeIntervalSinceReferenceDate
                if let minimum, seconds < minimum { fail(.dateTooSoon, key, "\(key) \(date) is before the minimum \(Date(timeIntervalSinceReferenceDate: minimum))") }
                if let maximum, seconds > maximum { fail(.dateTooLate, key, "\(key) \(date) is after the maximum \(Date(timeIntervalSinceReferenceDate: maximum))") }
            default:
                if let number = Self.number(value) {
                    if let minimum, number < minimum { fail(.numberTooSmall, key, "\(key) \(value) is below the minimum \(attribute.minValueString ?? "")") }
                    if let maximum, number > maximum { fail(.numberTooLarge, key, "\(key) \(value) is above the maximum \(attribute.maxValueString ?? "")") }
                }
            }
        }
        // Only the relationships with a rule (the layout lists them; most have none).
        let relationships = layout.validatedRelationships.isEmpty ? [] : object.entity.relationships
        for index in layout.validatedRelationships {
            let relationship = relationships[index]
            let key = relationship.name
            if relationship.isToOne {
                guard loaded else { continue }
                if !relationship.isOptional && object.storage[key] == nil { fail(.missingMandatoryProperty, key, "\(key) is required") }
                continue
            }
            guard !relationship.isOptional || relationship.minCount > 0 || relationship.maxCount > 0 else { continue }
            let count = try relatedIDs(of: object, relationship).count
            if count == 0 {
                if !relationship.isOptional { fail(.missingMandatoryProperty, key, "\(key) is required (it is empty)") }
                continue
            }
            if relationship.minCount > 0, count < relationship.minCount {
                fail(.relationshipLacksMinimumCount, key, "\(key) has \(count) object\(count == 1 ? "" : "s"), fewer than the minimum \(relationship.minCount)")
            }
            if relationship.maxCount > 0, count > relationship.maxCount {
                fail(.relationshipExceedsMaximumCount, key, "\(key) has \(count) objects, more than the maximum \(relationship.maxCount)")
            }
        }
        return failures
    }

    private static func number(_ value: Any) -> Double? {
        switch value {
        case is Bool: return nil
        case let v as any BinaryInteger: return Double(v)
        case let v as Double: return v
        case let v as Float: return Double(v)
        case let v as Decimal: return NSDecimalNumber(decimal: v).doubleValue
        default: return nil
        }
    }
}
