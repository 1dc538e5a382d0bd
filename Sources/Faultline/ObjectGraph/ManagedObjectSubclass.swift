import FaultlineModel
import Foundation

/// A ``ManagedObject`` subclass for one entity, with typed properties: what `faultline
/// generate` writes from a model (Xcode's "Class Definition" codegen), or a class written by
/// hand the same way.
///
/// Register the classes with the coordinator before making contexts
/// (``PersistentStoreCoordinator/registerClasses(_:)``); from then on every object of the
/// entity is an instance of the class — fetched, reached through a relationship, inserted or
/// made in a child context — and its typed properties read and write the object's value
/// slots through the same change tracking, undo, faults and validation as
/// ``ManagedObject/value(forKey:)``, by slot number rather than by name.
///
/// ```swift
/// final class Recipe: ManagedObject, ManagedObjectSubclass {
///     class var entityName: String { "Recipe" }
///     class var managedProperties: [ManagedPropertyDeclaration] {
///         [.attribute("name", .string), .toMany("ingredients", Ingredient.self)]
///     }
///     var name: String? {
///         get { attributeValue(at: 0, named: "name") }
///         set { setAttributeValue(newValue, at: 0, named: "name") }
///     }
///     var ingredients: Set<Ingredient> {
///         get { Set(toManyValue(at: 1, named: "ingredients") as [Ingredient]) }
///         set { setToManyValue(Array(newValue), at: 1, named: "ingredients") }
///     }
/// }
/// ```
///
/// The `at:` numbers are positions in ``managedProperties``: a subclass for a sub-entity lists
/// its superclass's properties first, in the same order, then its own, so the superclass's
/// accessors work on the subclass's objects too.
public protocol ManagedObjectSubclass: ManagedObject {
    /// The name of the entity whose objects are instances of this class.
    static var entityName: String { get }
    /// The properties the class has typed accessors for: the superclass's first (for a class
    /// of a sub-entity), then its own; accessors name a property by its position here.
    static var managedProperties: [ManagedPropertyDeclaration] { get }
    /// The model property a Swift key path of the class stands for (`\Recipe.name` → `name`),
    /// for `#Predicate` and sort descriptors; nil for a key path that is no model property.
    static func propertyName(for keyPath: AnyKeyPath) -> String?
}

extension ManagedObjectSubclass {
    /// No key paths known: classes written by hand may leave this out (typed predicates over
    /// them then name no property and fail with an error saying so).
    public static func propertyName(for keyPath: AnyKeyPath) -> String? { nil }

    /// Inserts a new object of the class into a context (Core Data's `init(context:)`): it gets
    /// a temporary ID, the model's default values and empty to-many relationships, and its
    /// ``ManagedObject/awakeFromInsert()`` runs.
    ///
    /// - Throws: ``ManagedObjectError`` (`cannotInsert`) when the class is not registered with
    ///   the context's coordinator, or its entity is abstract.
    public init(context: ManagedObjectContext) throws {
        context.checkAccess()
        let entity = try context.insertableEntity(named: Self.entityName)
        guard let binding = context.classBinding(for: entity.name), binding.type == Self.self else {
            throw ManagedObjectError(
                .cannotInsert, entity: Self.entityName,
                "class \(Self.self) is not registered for entity \(Self.entityName): call registerClasses on the coordinator before making the context")
        }
        self.init(entity: entity, objectID: context.temporaryID(for: entity.name), context: nil, isFault: false)
        contextLink = context.link
        classSlots = binding.slots
        context.finishInsert(self)
    }

    /// Fetches the objects of the class's entity (and sub-entities) that a request finds, as
    /// instances of the class.
    ///
    /// - Throws: as ``ManagedObjectContext/fetch(_:)-(FetchRequest)``, and ``FetchRequestError`` when the
    ///   request is for another entity.
    public static func fetch(_ request: FetchRequest, in context: ManagedObjectContext) throws -> [Self] {
        guard request.entityName == entityName else {
            throw FetchRequestError("\(Self.self).fetch: the request is for entity \(request.entityName), not \(entityName)")
        }
        guard context.classBindings[entityName]?.type == Self.self else {
            throw FetchRequestError("class \(Self.self) is not registered for entity \(entityName): call registerClasses on the coordinator before making the context")
        }
        return try context.fetch(request).compactMap { $0 as? Self }
    }

    /// A fetch request for the class's entity (Core Data's generated `fetchRequest()`).
    public static func fetchRequest() -> FetchRequest { FetchRequest(entityName: entityName) }
}

/// One property a ``ManagedObjectSubclass`` has a typed accessor for, as registration checks
/// it against the model: the name, and the kind and type the accessor expects.
public struct ManagedPropertyDeclaration: Sendable, CustomStringConvertible {
    /// What the accessor reads and writes.
    public enum Kind: Sendable {
        /// An attribute of this type.
        case attribute(AttributeType)
        /// A to-one relationship whose destinations are instances of this class (registered
        /// for the relationship's destination entity, or a superclass of the one that is).
        case toOne(any ManagedObjectSubclass.Type)
        /// A to-many relationship to instances of this class; `ordered` as the model says.
        case toMany(any ManagedObjectSubclass.Type, ordered: Bool)
    }

    /// The model property's name.
    public var name: String
    /// The kind and type.
    public var kind: Kind

    /// A declaration; the static functions below read better.
    public init(name: String, kind: Kind) {
        self.name = name
        self.kind = kind
    }

    /// An attribute of a type.
    public static func attribute(_ name: String, _ type: AttributeType) -> Self {
        Self(name: name, kind: .attribute(type))
    }

    /// A to-one relationship whose destinations are instances of `destination`.
    public static func toOne(_ name: String, _ destination: any ManagedObjectSubclass.Type) -> Self {
        Self(name: name, kind: .toOne(destination))
    }

    /// A to-many relationship whose destinations are instances of `destination`.
    public static func toMany(_ name: String, _ destination: any ManagedObjectSubclass.Type, ordered: Bool = false) -> Self {
        Self(name: name, kind: .toMany(destination, ordered: ordered))
    }

    public var description: String {
        switch kind {
        case .attribute(let type): return "\(name): attribute \(type.xmlName)"
        case .toOne(let type): return "\(name): to-one \(type)"
        case .toMany(let type, let ordered): return "\(name): \(ordered ? "ordered " : "")to-many \(type)"
        }
    }
}

/// A Swift type that attribute values have in objects: what a typed accessor reads and
/// writes. Each conforming type stands for the attribute types listed in ``attributeTypes``.
///
/// The conformances are Faultline's own (the numeric types, `Bool`, `String`, `Date`, `Data`,
/// `UUID`, `URL`, `Decimal`); the underscored requirements read and write an object's slot
/// without casting, and are not meant to be implemented elsewhere.
public protocol ManagedAttributeValue {
    /// The attribute types whose values have this Swift type (`String` for String, `Int16` for
    /// Integer 16, `Data` for Binary and Transformable, …).
    static var attributeTypes: Set<AttributeType> { get }
    /// Reads the value of the class's property `index` (named `key`) of `object`.
    static func _managedValue(of object: ManagedObject, at index: Int, named key: String) -> Self?
    /// Sets the value of the class's property `index` (named `key`) of `object`.
    static func _setManagedValue(_ value: Self?, of object: ManagedObject, at index: Int, named key: String)
}

extension Int16: ManagedAttributeValue {
    /// Integer 16.
    public static var attributeTypes: Set<AttributeType> { [.integer16] }

    /// Reads the slot: no cast (in place in the row page when the object's values are the
    /// page's, see ``ManagedObject/typedAttribute(at:named:field:_:)``).
    public static func _managedValue(of object: ManagedObject, at index: Int, named key: String) -> Int16? {
        object.typedAttribute(at: index, named: key, field: (.int16, { $0.load(as: Int16.self) })) {
            if case .int16(let value) = $0.pointee { return value }
            return nil
        }
    }

    /// Writes the slot.
    public static func _setManagedValue(_ value: Int16?, of object: ManagedObject, at index: Int, named key: String) {
        object.setStoredAttribute(value.map { .int16($0) } ?? .none, at: index, named: key)
    }
}

extension Int32: ManagedAttributeValue {
    /// Integer 32.
    public static var attributeTypes: Set<AttributeType> { [.integer32] }

    /// Reads the slot: no cast (in place in the row page when the object's values are the
    /// page's, see ``ManagedObject/typedAttribute(at:named:field:_:)``).
    public static func _managedValue(of object: ManagedObject, at index: Int, named key: String) -> Int32? {
        object.typedAttribute(at: index, named: key, field: (.int32, { $0.load(as: Int32.self) })) {
            if case .int32(let value) = $0.pointee { return value }
            return nil
        }
    }

    /// Writes the slot.
    public static func _setManagedValue(_ value: Int32?, of object: ManagedObject, at index: Int, named key: String) {
        object.setStoredAttribute(value.map { .int32($0) } ?? .none, at: index, named: key)
    }
}

extension Int64: ManagedAttributeValue {
    /// Integer 64.
    public static var attributeTypes: Set<AttributeType> { [.integer64] }

    /// Reads the slot: no cast (in place in the row page when the object's values are the
    /// page's, see ``ManagedObject/typedAttribute(at:named:field:_:)``).
    public static func _managedValue(of object: ManagedObject, at index: Int, named key: String) -> Int64? {
        object.typedAttribute(at: index, named: key, field: (.int64, { $0.load(as: Int64.self) })) {
            if case .int64(let value) = $0.pointee { return value }
            return nil
        }
    }

    /// Writes the slot.
    public static func _setManagedValue(_ value: Int64?, of object: ManagedObject, at index: Int, named key: String) {
        object.setStoredAttribute(value.map { .int64($0) } ?? .none, at: index, named: key)
    }
}

extension Bool: ManagedAttributeValue {
    /// Boolean.
    public static var attributeTypes: Set<AttributeType> { [.boolean] }

    /// Reads the slot: no cast (in place in the row page when the object's values are the
    /// page's, see ``ManagedObject/typedAttribute(at:named:field:_:)``).
    public static func _managedValue(of object: ManagedObject, at index: Int, named key: String) -> Bool? {
        object.typedAttribute(at: index, named: key, field: (.bool, { $0.load(as: Bool.self) })) {
            if case .bool(let value) = $0.pointee { return value }
            return nil
        }
    }

    /// Writes the slot.
    public static func _setManagedValue(_ value: Bool?, of object: ManagedObject, at index: Int, named key: String) {
        object.setStoredAttribute(value.map { .bool($0) } ?? .none, at: index, named: key)
    }
}

extension Double: ManagedAttributeValue {
    /// Double.
    public static var attributeTypes: Set<AttributeType> { [.double] }

    /// Reads the slot: no cast (in place in the row page when the object's values are the
    /// page's, see ``ManagedObject/typedAttribute(at:named:field:_:)``).
    public static func _managedValue(of object: ManagedObject, at index: Int, named key: String) -> Double? {
        object.typedAttribute(at: index, named: key, field: (.double, { $0.load(as: Double.self) })) {
            if case .double(let value) = $0.pointee { return value }
            return nil
        }
    }

    /// Writes the slot.
    public static func _setManagedValue(_ value: Double?, of object: ManagedObject, at index: Int, named key: String) {
        object.setStoredAttribute(value.map { .double($0) } ?? .none, at: index, named: key)
    }
}

extension Float: ManagedAttributeValue {
    /// Float.
    public static var attributeTypes: Set<AttributeType> { [.float] }

    /// Reads the slot: no cast (in place in the row page when the object's values are the
    /// page's, see ``ManagedObject/typedAttribute(at:named:field:_:)``).
    public static func _managedValue(of object: ManagedObject, at index: Int, named key: String) -> Float? {
        object.typedAttribute(at: index, named: key, field: (.float, { $0.load(as: Float.self) })) {
            if case .float(let value) = $0.pointee { return value }
            return nil
        }
    }

    /// Writes the slot.
    public static func _setManagedValue(_ value: Float?, of object: ManagedObject, at index: Int, named key: String) {
        object.setStoredAttribute(value.map { .float($0) } ?? .none, at: index, named: key)
    }
}

extension String: ManagedAttributeValue {
    /// String, and Object ID attributes (which hold an object's URI as text).
    public static var attributeTypes: Set<AttributeType> { [.string, .objectID] }

    /// Reads the slot: no cast (in place in the row page when the object's values are the
    /// page's, see ``ManagedObject/typedAttribute(at:named:field:_:)``).
    public static func _managedValue(of object: ManagedObject, at index: Int, named key: String) -> String? {
        object.typedAttribute(at: index, named: key, field: (.string, { $0.assumingMemoryBound(to: String.self).pointee })) {
            if case .string(let value) = $0.pointee { return value }
            return nil
        }
    }

    /// Writes the slot.
    public static func _setManagedValue(_ value: String?, of object: ManagedObject, at index: Int, named key: String) {
        object.setStoredAttribute(value.map { .string($0) } ?? .none, at: index, named: key)
    }
}

extension Date: ManagedAttributeValue {
    /// Date.
    public static var attributeTypes: Set<AttributeType> { [.date] }

    /// Reads the slot: no cast (in place in the row page when the object's values are the
    /// page's, see ``ManagedObject/typedAttribute(at:named:field:_:)``).
    public static func _managedValue(of object: ManagedObject, at index: Int, named key: String) -> Date? {
        object.typedAttribute(at: index, named: key, field: (.date, { $0.load(as: Date.self) })) {
            if case .date(let value) = $0.pointee { return value }
            return nil
        }
    }

    /// Writes the slot.
    public static func _setManagedValue(_ value: Date?, of object: ManagedObject, at index: Int, named key: String) {
        object.setStoredAttribute(value.map { .date($0) } ?? .none, at: index, named: key)
    }
}

extension Data: ManagedAttributeValue {
    /// Binary, and Transformable (whose values are the archived bytes).
    public static var attributeTypes: Set<AttributeType> { [.binaryData, .transformable] }

    /// Reads the slot: no cast (in place in the row page when the object's values are the
    /// page's, see ``ManagedObject/typedAttribute(at:named:field:_:)``).
    public static func _managedValue(of object: ManagedObject, at index: Int, named key: String) -> Data? {
        object.typedAttribute(at: index, named: key, field: (.data, { $0.assumingMemoryBound(to: Data.self).pointee })) {
            if case .data(let value) = $0.pointee { return value }
            return nil
        }
    }

    /// Writes the slot.
    public static func _setManagedValue(_ value: Data?, of object: ManagedObject, at index: Int, named key: String) {
        object.setStoredAttribute(value.map { .data($0) } ?? .none, at: index, named: key)
    }
}

extension UUID: ManagedAttributeValue {
    /// UUID.
    public static var attributeTypes: Set<AttributeType> { [.uuid] }

    /// Reads the slot: no cast (in place in the row page when the object's values are the
    /// page's, see ``ManagedObject/typedAttribute(at:named:field:_:)``).
    public static func _managedValue(of object: ManagedObject, at index: Int, named key: String) -> UUID? {
        object.typedAttribute(at: index, named: key, field: (.uuid, { $0.load(as: UUID.self) })) {
            if case .uuid(let value) = $0.pointee { return value }
            return nil
        }
    }

    /// Writes the slot.
    public static func _setManagedValue(_ value: UUID?, of object: ManagedObject, at index: Int, named key: String) {
        object.setStoredAttribute(value.map { .uuid($0) } ?? .none, at: index, named: key)
    }
}

extension Decimal: ManagedAttributeValue {
    /// Decimal.
    public static var attributeTypes: Set<AttributeType> { [.decimal] }

    /// Reads the slot (boxed: no case of its own).
    public static func _managedValue(of object: ManagedObject, at index: Int, named key: String) -> Decimal? {
        object.storedAttribute(at: index, named: key).any as? Decimal
    }

    /// Writes the slot.
    public static func _setManagedValue(_ value: Decimal?, of object: ManagedObject, at index: Int, named key: String) {
        object.setStoredAttribute(value.map { StoredValue($0) } ?? .none, at: index, named: key)
    }
}

extension URL: ManagedAttributeValue {
    /// URI.
    public static var attributeTypes: Set<AttributeType> { [.uri] }

    /// Reads the slot (boxed: no case of its own).
    public static func _managedValue(of object: ManagedObject, at index: Int, named key: String) -> URL? {
        object.storedAttribute(at: index, named: key).any as? URL
    }

    /// Writes the slot.
    public static func _setManagedValue(_ value: URL?, of object: ManagedObject, at index: Int, named key: String) {
        object.setStoredAttribute(value.map { StoredValue($0) } ?? .none, at: index, named: key)
    }
}
