import Foundation

/// Writes an `NSKeyedArchiver` archive (format version 100000) without Foundation's
/// archiver: the caller reserves a `$objects` slot (a UID) for each object with an identity
/// and fills it in later, so objects that refer to each other in cycles are written by a
/// plain loop. Strings, numbers and Foundation collections are value objects: equal ones
/// share one slot, as Foundation's archiver shares equal objects.
///
/// The counterpart of ``KeyedArchive``, which reads what this writes.
struct KeyedArchiveWriter {
    /// `$objects`; slot 0 is `$null`.
    private(set) var objects: [PropertyListValue] = [.string("$null")]
    /// Value objects by content.
    private var shared: [PropertyListValue: Int] = [:]
    /// Class records by class name.
    private var classes: [String: Int] = [:]

    /// A new empty slot for an object to be filled in with ``set(_:className:fields:)``.
    mutating func reserve() -> Int {
        objects.append(.null)
        return objects.count - 1
    }

    /// Fills a reserved slot with an object of a class (given with its superclasses,
    /// `["NSEntityDescription", "NSObject"]`) and its encoded fields.
    mutating func set(_ uid: Int, classChain: [String], fields: [String: PropertyListValue]) {
        var record = fields
        record["$class"] = classReference(classChain)
        objects[uid] = .dictionary(record)
    }

    /// The class record of a class chain, written once per class.
    mutating func classReference(_ chain: [String]) -> PropertyListValue {
        let name = chain.first ?? "NSObject"
        if let known = classes[name] { return .uid(known) }
        objects.append(.dictionary(["$classname": .string(name), "$classes": .array(chain.map(PropertyListValue.string))]))
        classes[name] = objects.count - 1
        return .uid(objects.count - 1)
    }

    /// A value object (a string, number or Boolean; or a record of a Foundation value class
    /// whose fields refer only to already written objects), shared with an equal one.
    /// Reals are not shared, so `-0.0` and `0.0` stay apart.
    mutating func value(_ value: PropertyListValue) -> PropertyListValue {
        if case .real = value {
            objects.append(value)
            return .uid(objects.count - 1)
        }
        if let known = shared[value] { return .uid(known) }
        objects.append(value)
        shared[value] = objects.count - 1
        return .uid(objects.count - 1)
    }

    /// An `NSString`.
    mutating func string(_ s: String) -> PropertyListValue { value(.string(s)) }

    /// An `NSArray` of objects.
    mutating func array(_ items: [PropertyListValue]) -> PropertyListValue {
        value(.dictionary(["NS.objects": .array(items), "$class": classReference(["NSArray", "NSObject"])]))
    }

    /// An `NSArray` of strings.
    mutating func array(strings: [String]) -> PropertyListValue {
        let items = strings.map { string($0) }
        return array(items)
    }

    /// An `NSDictionary` with string keys; pairs are written sorted by key.
    mutating func dictionary(_ pairs: [String: PropertyListValue]) -> PropertyListValue {
        var keys: [PropertyListValue] = [], values: [PropertyListValue] = []
        keys.reserveCapacity(pairs.count)
        values.reserveCapacity(pairs.count)
        for (key, item) in pairs.sorted(by: { $0.key < $1.key }) {
            keys.append(string(key))
            values.append(item)
        }
        return value(.dictionary(["NS.keys": .array(keys), "NS.objects": .array(values), "$class": classReference(["NSDictionary", "NSObject"])]))
    }

    /// An `NSDictionary` of strings to strings (user info).
    mutating func dictionary(strings: [String: String]) -> PropertyListValue {
        var pairs: [String: PropertyListValue] = [:]
        for (key, item) in strings { pairs[key] = string(item) }
        return dictionary(pairs)
    }

    /// An `NSDate`.
    mutating func date(timeIntervalSinceReferenceDate t: Double) -> PropertyListValue {
        value(.dictionary(["NS.time": .real(t), "$class": classReference(["NSDate", "NSObject"])]))
    }

    /// The archive as a binary property list, with `root` as its root object.
    func data(root: Int) -> Data {
        BinaryPropertyList.data(
            .dictionary([
                "$archiver": .string("NSKeyedArchiver"),
                "$version": .integer(100_000),
                "$top": .dictionary(["root": .uid(root)]),
                "$objects": .array(objects),
            ]))
    }
}
