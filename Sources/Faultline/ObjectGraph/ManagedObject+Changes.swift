import FaultlineModel
import Foundation

extension ManagedObject {
    /// Sets a property: an attribute value (type-checked against the attribute type), a
    /// to-one destination (a ``ManagedObject`` or nil) or a to-many's objects (an array or a
    /// set of ``ManagedObject``s). Relationship changes update the inverse on the other side.
    ///
    /// Values are converted to the attribute's Swift type (`Int` → `Int16` for Integer 16,
    /// when it fits; any integer or floating-point number for Double and Float); anything
    /// else is refused. Nil is accepted here; required properties are checked by `save()`.
    ///
    /// ```swift
    /// try inventory.setValue(3, forKey: "count")
    /// try inventory.setValue(asset, forKey: "asset")   // asset.inventories now holds inventory
    /// ```
    ///
    /// - Throws: ``ManagedObjectError`` naming the entity, object and key: unknown key,
    ///   wrong type, an integer out of range, an object of another context or entity.
    public func setValue(_ value: Any?, forKey key: String) throws {
        guard let context = managedObjectContext else {
            throw ManagedObjectError(.notInContext, entity: entity.name, objectID: objectID, key: key, "the object is not registered in a context")
        }
        try context.setValue(value, forKey: key, of: self)
    }

    /// Sets the value at a dotted key path (`asset.label`): follows to-one relationships to
    /// the last object, then sets its key.
    public func setValue(_ value: Any?, forKeyPath keyPath: String) throws {
        var keys = keyPath.split(separator: ".").map(String.init)
        guard let last = keys.popLast() else {
            throw ManagedObjectError(.unknownKey, entity: entity.name, objectID: objectID, key: keyPath, "empty key path")
        }
        var target: ManagedObject = self
        for key in keys {
            guard let relationship = target.entity.relationship(named: key), relationship.isToOne else {
                throw ManagedObjectError(
                    .unknownKey, entity: target.entity.name, objectID: target.objectID, key: key,
                    "key path \(keyPath): \(key) is not a to-one relationship of \(target.entity.name)")
            }
            guard let next = target.value(forKey: key) as? ManagedObject else {
                throw ManagedObjectError(.unknownKey, entity: target.entity.name, objectID: target.objectID, key: key, "key path \(keyPath): \(key) is nil")
            }
            target = next
        }
        try target.setValue(value, forKey: last)
    }

    /// Adds an object to a to-many relationship (at the end of an ordered one); the inverse
    /// is updated. Adding an object already there does nothing.
    public func addObject(_ object: ManagedObject, toRelationship key: String) throws {
        let context = try requireContext(key)
        let relationship = try context.toManyRelationship(key, of: self)
        try context.checkDestination(object, of: relationship, in: self)
        try context.recordingChanges { try context.addToMany(self, relationship, object) }
    }

    /// Removes an object from a to-many relationship; the inverse is updated.
    public func removeObject(_ object: ManagedObject, fromRelationship key: String) throws {
        let context = try requireContext(key)
        let relationship = try context.toManyRelationship(key, of: self)
        try context.recordingChanges { try context.removeFromToMany(self, relationship, object) }
    }

    /// Puts an object at a position of an ordered to-many relationship (moving it when it is
    /// already there); the inverse is updated.
    public func insertObject(_ object: ManagedObject, at index: Int, inRelationship key: String) throws {
        let context = try requireContext(key)
        let relationship = try context.toManyRelationship(key, of: self)
        try context.checkDestination(object, of: relationship, in: self)
        try context.recordingChanges {
            var ids = try context.relatedIDs(of: self, relationship).filter { $0 != object.objectID }
            ids.insert(object.objectID, at: max(0, min(index, ids.count)))
            try context.replaceToMany(self, relationship, with: ids.map { context.object(with: $0) })
        }
    }

    private func requireContext(_ key: String) throws -> ManagedObjectContext {
        guard let context = managedObjectContext else {
            throw ManagedObjectError(.notInContext, entity: entity.name, objectID: objectID, key: key, "the object is not registered in a context")
        }
        return context
    }

    /// The properties changed since the object was read or last saved, with their new
    /// values (nil for a property set to nil; objects for relationships). For an inserted
    /// object: every property set.
    public func changedValues() -> [String: Any?] {
        guard let context = managedObjectContext else { return [:] }
        var result: [String: Any?] = [:]
        for (key, value) in changedValueIDs() {
            result[key] = context.publicValue(value, forKey: key, of: self)
        }
        for key in pendingToMany.keys where result[key] == nil {
            result[key] = self.value(forKey: key)
        }
        return result
    }

    /// Whether a property's value differs from its committed one, compared in place.
    ///
    /// The two value sets are passed `inout`: passed by value, a stored property of a class is
    /// copied first (the callee could change the object), three references retained and
    /// released per comparison; an `inout` argument is borrowed where it lies.
    func valueDiffers(forKey key: String) -> Bool {
        if storage.layout === committed.layout, let slot = storage.layout.slot(of: key) { return valueDiffers(atSlot: slot) }
        return ObjectValues.differ(&storage, &committed, at: key)
    }

    /// ``valueDiffers(forKey:)`` by slot (the two value sets have one layout).
    func valueDiffers(atSlot slot: Int) -> Bool {
        ObjectValues.differ(&storage, &committed, atSlot: slot)
    }

    /// The slots written since the values and the committed ones were made from one source
    /// (``ObjectValues/writtenSlots(_:_:)``): a slot ``ObjectValues/mayDiffer(_:atSlot:)``
    /// rules out needs no ``valueDiffers(atSlot:)``.
    var writtenSlots: UInt32 { ObjectValues.writtenSlots(&storage, &committed) }

    /// Whether any value differs from its committed one, compared in place (see
    /// ``valueDiffers(forKey:)``).
    var valuesDiffer: Bool { ObjectValues.differ(&storage, &committed) }

    /// Changed properties with their stored values (IDs for relationships).
    func changedValueIDs() -> [String: Any?] {
        var result: [String: Any?] = [:]
        guard !isFault else { return result }
        for key in Set(storage.keys).union(committed.keys) {
            let value = storage[key]
            if !ManagedObject.valuesEqual(value, committed[key] ?? storage.layout.slot(of: key).flatMap(storage.emptyValue(at:))) {
                result[key] = .some(value)
            }
        }
        return result
    }

    /// The values of properties as last read from or saved to the store (nil entries for
    /// properties that were nil); all properties when `keys` is nil. Relationships give
    /// objects; a to-many whose fault never fired is left out.
    public func committedValues(forKeys keys: [String]?) -> [String: Any?] {
        guard let context = managedObjectContext, !isInserted else { return [:] }
        if isFault { context.fireFaultForRead(self) }
        let names = keys ?? (entity.attributes.map(\.name) + entity.relationships.map(\.name))
        var result: [String: Any?] = [:]
        for key in names {
            if let relationship = entity.relationship(named: key), relationship.isToMany, committed[key] == nil { continue }
            result[key] = context.publicValue(committed[key], forKey: key, of: self)
        }
        return result
    }
}

extension ManagedObjectContext {
    /// A stored value as users see it: IDs become objects.
    func publicValue(_ value: Any?, forKey key: String, of object: ManagedObject) -> Any? {
        switch value {
        case let id as ManagedObjectID: return self.object(with: id)
        case let ids as [ManagedObjectID]: return ids.map { self.object(with: $0) }
        case let reference as ExternalBinaryDataReference: return loadExternalData(reference, forKey: key, of: object)
        default: return value
        }
    }

    /// The bytes of an external binary data file, read now; a file that cannot be read gives
    /// nil and a `CoreData: error:` line in the SQL log naming it and the object.
    func loadExternalData(_ reference: ExternalBinaryDataReference, forKey key: String, of object: ManagedObject) -> Data? {
        do {
            return try reference.load()
        } catch {
            store.emit(.message(category: "error", text: "\(object.objectID.uriRepresentation) \(key): \(error)"))
            return nil
        }
    }
}

/// Attribute values: checking and converting what users set, and model defaults.
enum AttributeValues {
    /// Converts `value` to the Swift type the attribute's values have, or throws.
    static func coerce(_ value: Any, to attribute: AttributeDescription, of object: ManagedObject) throws -> Any {
        try coerce(value, to: attribute, entityName: object.entity.name, objectID: object.objectID)
    }

    /// ``coerce(_:to:of:)`` for a value that belongs to no object yet (a batch insert's row,
    /// a batch update's constant): errors name the entity and, if given, the object.
    static func coerce(_ value: Any, to attribute: AttributeDescription, entityName: String, objectID: ManagedObjectID?) throws -> Any {
        func mismatch(_ expected: String) -> ManagedObjectError {
            ManagedObjectError(
                .typeMismatch, entity: entityName, objectID: objectID, key: attribute.name,
                "expected \(expected) for attribute type \(attribute.attributeType.xmlName), got \(type(of: value)) \(String(describing: value).prefix(40))")
        }
        func integer<T: FixedWidthInteger>(_: T.Type) throws -> T {
            if let v = value as? T { return v }  // the attribute's own type: no conversion
            guard !(value is Bool), let v = value as? any BinaryInteger else { throw mismatch("an integer") }
            guard let result = T(exactly: v) else { throw mismatch("an integer in \(T.min)...\(T.max)") }
            return result
        }
        func floating() throws -> Double {
            switch value {
            case let v as Double: return v
            case is Bool: throw mismatch("a number")
            case let v as Float: return Double(v)
            case let v as any BinaryInteger: return Double(v)
            case let v as Decimal: return NSDecimalNumber(decimal: v).doubleValue
            default: throw mismatch("a number")
            }
        }
        switch attribute.attributeType {
        case .integer16: return try integer(Int16.self)
        case .integer32: return try integer(Int32.self)
        case .integer64: return try integer(Int64.self)
        case .boolean:
            guard let v = value as? Bool else { throw mismatch("a Bool") }
            return v
        case .double: return try floating()
        case .float: return Float(try floating())
        case .decimal:
            if let v = value as? Decimal { return v }
            if !(value is Bool), let v = value as? any BinaryInteger, let i = Int64(exactly: v) { return Decimal(i) }
            // The double's shortest decimal (0.1, not 0.1000000000000000055…), which is also
            // what reading the stored value back gives.
            guard let decimal = Decimal(shortestRepresentationOf: try floating()) else { throw mismatch("a number a Decimal can hold (finite, within about ±1e145)") }
            return decimal
        case .string:
            if let v = value as? String { return v }
            if let v = value as? Substring { return String(v) }
            throw mismatch("a String")
        case .date:
            guard let v = value as? Date else { throw mismatch("a Date") }
            return v
        case .binaryData, .transformable:
            if let v = value as? Data { return v }
            if let v = value as? [UInt8] { return Data(v) }
            throw mismatch("Data")
        case .uuid:
            guard let v = value as? UUID else { throw mismatch("a UUID") }
            return v
        case .uri:
            guard let v = value as? URL else { throw mismatch("a URL") }
            return v
        case .objectID:
            if let v = value as? ManagedObjectID { return v.uriRepresentation }
            if let v = value as? String { return v }
            throw mismatch("a ManagedObjectID")
        case .undefined, .composite:
            return value
        }
    }

    /// The model's default value of an attribute, converted to its Swift type.
    static func defaultValue(of attribute: AttributeDescription) -> Any? {
        if attribute.attributeType == .date, let seconds = attribute.defaultDateTimeInterval {
            return Date(timeIntervalSinceReferenceDate: seconds)
        }
        guard let text = attribute.defaultValueString else { return nil }
        switch attribute.attributeType {
        case .integer16: return Int16(text) ?? Double(text).flatMap { Int16(exactly: $0) }
        case .integer32: return Int32(text) ?? Double(text).flatMap { Int32(exactly: $0) }
        case .integer64: return Int64(text) ?? Double(text).flatMap { Int64(exactly: $0) }
        case .boolean: return ["yes", "true", "1"].contains(text.lowercased())
        case .double: return Double(text)
        case .float: return Float(text)
        case .decimal: return Decimal(string: text, locale: Locale(identifier: "en_US_POSIX"))
        case .string: return text
        case .uri: return URL(string: text)
        case .uuid: return UUID(uuidString: text)
        case .date: return Double(text).map { Date(timeIntervalSinceReferenceDate: $0) }
        default: return nil
        }
    }
}
