import Foundation

/// One value in an object's slot, typed: what ``ObjectValues`` holds instead of `Any?`, so a
/// decoded row, a typed accessor and a change comparison switch on a tag instead of casting
/// an existential (Core Data's row snapshots hold typed values the same way).
///
/// Each case holds exactly one Swift type, so converting from `Any` and back gives the same
/// value of the same type; types without a case of their own (Decimal, URL, external-data
/// references, anything a model-less entity holds) are kept boxed in ``other``. 24 bytes a
/// slot (an `Any?` takes 40), and no box for the common attribute types. The values of
/// ``FetchedRows`` are these too (typed row reads are inlined into their callers).
@usableFromInline
enum StoredValue {
    case none
    case int64(Int64)
    case int32(Int32)
    case int16(Int16)
    case bool(Bool)
    case double(Double)
    case float(Float)
    case date(Date)
    case string(String)
    case data(Data)
    case uuid(UUID)
    /// A to-one relationship's destination (or an objectID attribute's): 16 bytes, inline.
    case objectID(ManagedObjectID)
    /// A fired to-many relationship's destinations, in order.
    case objectIDs([ManagedObjectID])
    /// Any other value, boxed.
    case other(AnyValueBox)

    /// The value of an `Any?`, by its exact dynamic type.
    @inline(__always)
    init(_ value: Any?) {
        guard let value else {
            self = .none
            return
        }
        switch value {
        case let v as String: self = .string(v)
        case let v as Int64: self = .int64(v)
        case let v as Double: self = .double(v)
        case let v as Date: self = .date(v)
        case let v as Bool: self = .bool(v)
        case let v as ManagedObjectID: self = .objectID(v)
        case let v as [ManagedObjectID]: self = .objectIDs(v)
        case let v as Int32: self = .int32(v)
        case let v as Int16: self = .int16(v)
        case let v as Float: self = .float(v)
        case let v as Data: self = .data(v)
        case let v as UUID: self = .uuid(v)
        default: self = .other(AnyValueBox(value))
        }
    }

    /// The stored value of `value` when its dynamic type is exactly the Swift type of an
    /// attribute of `type` (`Int64` for an Integer 64, `String` for a String, `Data` for a
    /// Binary, …): what coercion to the attribute (``AttributeValues/coerce(_:to:of:)``) and
    /// ``init(_:)`` make of it, found by opening the existential and comparing its type instead
    /// of by dynamic casts (a cast to the attribute's type, then a chain of them to find the
    /// case: most of a `setValue(_:forKey:)`'s time). Nil for any other value (another type, a
    /// type that converts, an attribute type without a case of its own), which the caller
    /// coerces as before.
    static func ofExactType(_ value: Any, for type: AttributeType) -> StoredValue? {
        ofExactType(opened: value, for: type)
    }

    private static func ofExactType<T>(opened value: T, for type: AttributeType) -> StoredValue? {
        switch type {
        case .integer64: return T.self == Int64.self ? .int64(unsafeBitCast(value, to: Int64.self)) : nil
        case .integer32: return T.self == Int32.self ? .int32(unsafeBitCast(value, to: Int32.self)) : nil
        case .integer16: return T.self == Int16.self ? .int16(unsafeBitCast(value, to: Int16.self)) : nil
        case .boolean: return T.self == Bool.self ? .bool(unsafeBitCast(value, to: Bool.self)) : nil
        case .double: return T.self == Double.self ? .double(unsafeBitCast(value, to: Double.self)) : nil
        case .float: return T.self == Float.self ? .float(unsafeBitCast(value, to: Float.self)) : nil
        case .string: return T.self == String.self ? .string(unsafeBitCast(value, to: String.self)) : nil
        case .date: return T.self == Date.self ? .date(unsafeBitCast(value, to: Date.self)) : nil
        case .binaryData: return T.self == Data.self ? .data(unsafeBitCast(value, to: Data.self)) : nil
        case .uuid: return T.self == UUID.self ? .uuid(unsafeBitCast(value, to: UUID.self)) : nil
        case .undefined, .decimal, .uri, .transformable, .objectID, .composite: return nil
        }
    }

    /// The value as `Any?` (nil for ``none``). Inlined: called out of line, the value was
    /// copied for the call and destroyed after it (two more calls per value read by key).
    @usableFromInline
    var any: Any? {
        @inline(__always) get {
            switch self {
            case .none: return nil
            case .int64(let v): return v
            case .int32(let v): return v
            case .int16(let v): return v
            case .bool(let v): return v
            case .double(let v): return v
            case .float(let v): return v
            case .date(let v): return v
            case .string(let v): return v
            case .data(let v): return v
            case .uuid(let v): return v
            case .objectID(let v): return v
            case .objectIDs(let v): return v
            case .other(let box): return box.value
            }
        }
    }

    /// The value as a `T` when it is one (`any as? T`), by a type comparison for the
    /// common types (a typed read of a fetched row, specialised in the caller).
    @inlinable
    func value<T>(as type: T.Type) -> T? { withUnsafePointer(to: self) { Self.value(at: $0, as: type) } }

    /// The value at `stored` as a `T` (``value(as:)``), read in place: the common types'
    /// payloads are taken without copying the value out first.
    @inlinable
    static func value<T>(at stored: UnsafePointer<StoredValue>, as type: T.Type) -> T? {
        switch stored.pointee {
        case .none: return nil
        case .int64(let v) where T.self == Int64.self: return unsafeBitCast(v, to: T.self)
        case .double(let v) where T.self == Double.self: return unsafeBitCast(v, to: T.self)
        case .string(let v) where T.self == String.self: return unsafeBitCast(v, to: T.self)
        case .bool(let v) where T.self == Bool.self: return unsafeBitCast(v, to: T.self)
        case .date(let v) where T.self == Date.self: return unsafeBitCast(v, to: T.self)
        case .int32(let v) where T.self == Int32.self: return unsafeBitCast(v, to: T.self)
        case .int16(let v) where T.self == Int16.self: return unsafeBitCast(v, to: T.self)
        case .float(let v) where T.self == Float.self: return unsafeBitCast(v, to: T.self)
        default: return stored.pointee.any as? T
        }
    }

    /// Destroys the `count` values at `base` (which stay allocated), calling destroy only
    /// for those that hold a reference: a generic `deinitialize(count:)` called the runtime's
    /// destroy for each value, numbers and dates too — in a page of 100,000 rows, half a
    /// million calls that do nothing.
    static func deinitialize(_ base: UnsafeMutablePointer<StoredValue>, count: Int) {
        for i in 0..<count {
            switch base[i] {
            case .none, .int64, .int32, .int16, .bool, .double, .float, .date: continue
            case .string, .data, .uuid, .objectID, .objectIDs, .other: (base + i).deinitialize(count: 1)
            }
        }
    }

    /// Whether there is no value.
    var isNone: Bool {
        if case .none = self { return true }
        return false
    }

    /// The object ID held, if any.
    var objectID: ManagedObjectID? {
        if case .objectID(let id) = self { return id }
        return nil
    }

    /// The object IDs held, if any.
    var objectIDs: [ManagedObjectID]? {
        if case .objectIDs(let ids) = self { return ids }
        return nil
    }

    /// Whether `value` is certainly this value: of this case's type exactly, and equal. False
    /// for ``other``, and for a value of another type even when a cast would convert it (an
    /// optional, a subclass): the caller then compares the slow way. The existential is opened,
    /// not cast (a dynamic cast costs more than the rest of a per-key validation).
    func holdsSame(_ value: inout Any?) -> Bool {
        // Taken out and put back, not copied: a copy of an `Any?` goes through the runtime.
        guard let taken = value.take() else { return isNone }
        let same = holdsSame(opened: taken)
        value = taken
        return same
    }

    private func holdsSame<T>(opened value: T) -> Bool {
        switch self {
        case .none, .other: return false
        case .int64(let x): return T.self == Int64.self && unsafeBitCast(value, to: Int64.self) == x
        case .int32(let x): return T.self == Int32.self && unsafeBitCast(value, to: Int32.self) == x
        case .int16(let x): return T.self == Int16.self && unsafeBitCast(value, to: Int16.self) == x
        case .bool(let x): return T.self == Bool.self && unsafeBitCast(value, to: Bool.self) == x
        case .double(let x): return T.self == Double.self && unsafeBitCast(value, to: Double.self) == x
        case .float(let x): return T.self == Float.self && unsafeBitCast(value, to: Float.self) == x
        case .date(let x): return T.self == Date.self && unsafeBitCast(value, to: Date.self) == x
        case .string(let x): return T.self == String.self && unsafeBitCast(value, to: String.self) == x
        case .data(let x): return T.self == Data.self && unsafeBitCast(value, to: Data.self) == x
        case .uuid(let x): return T.self == UUID.self && unsafeBitCast(value, to: UUID.self) == x
        case .objectID(let x): return T.self == ManagedObjectID.self && unsafeBitCast(value, to: ManagedObjectID.self) == x
        case .objectIDs(let x): return T.self == [ManagedObjectID].self && unsafeBitCast(value, to: [ManagedObjectID].self) == x
        }
    }

    /// Equality of stored values, as ``ManagedObject/valuesEqual(_:_:)`` for `Any`: same case
    /// and payload; boxed values compare as `AnyHashable` (unequal when not hashable).
    ///
    /// One switch on `a`, then `b` matched against that case alone: a switch over the pair
    /// copies both values into a tuple first (their references retained and released), which
    /// cost more than the comparison on a save's every changed slot.
    static func same(_ a: StoredValue, _ b: StoredValue) -> Bool {
        switch a {
        case .none:
            if case .none = b { return true }
        case .int64(let x):
            if case .int64(let y) = b { return x == y }
        case .int32(let x):
            if case .int32(let y) = b { return x == y }
        case .int16(let x):
            if case .int16(let y) = b { return x == y }
        case .bool(let x):
            if case .bool(let y) = b { return x == y }
        case .double(let x):
            if case .double(let y) = b { return x == y }
        case .float(let x):
            if case .float(let y) = b { return x == y }
        case .date(let x):
            if case .date(let y) = b { return x == y }
        case .string(let x):
            if case .string(let y) = b { return x == y }
        case .data(let x):
            if case .data(let y) = b { return x == y }
        case .uuid(let x):
            if case .uuid(let y) = b { return x == y }
        case .objectID(let x):
            if case .objectID(let y) = b { return x == y }
        case .objectIDs(let x):
            if case .objectIDs(let y) = b { return x == y }
        case .other(let x):
            if case .other(let y) = b { return ManagedObject.valuesEqual(x.value, y.value) }
        }
        return false
    }
}

/// A value of a type ``StoredValue`` has no case for.
@usableFromInline
final class AnyValueBox: @unchecked Sendable {
    // Values put in slots are the values objects hold; objects stay on their context's queue.
    let value: Any
    init(_ value: Any) { self.value = value }
}
