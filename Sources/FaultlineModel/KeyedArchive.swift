import Foundation

/// A decoded `NSKeyedArchiver` archive: the `$objects` table, the root, and helpers that
/// follow `CF$UID` references and read the Foundation classes Core Data archives use.
///
/// Internal to the model loader; every accessor returns nil rather than trapping when the
/// archive does not have the expected shape.
struct KeyedArchive {
    /// One archived object: its index in `$objects`, class name and fields.
    struct Object {
        let index: Int
        let className: String
        let fields: [String: PropertyListValue]

        subscript(key: String) -> PropertyListValue? { fields[key] }
    }

    struct Failure: Error {
        let message: String
    }

    let objects: [PropertyListValue]
    let root: PropertyListValue

    init(data: Data) throws {
        let plist: PropertyListValue
        do {
            plist = try BinaryPropertyList.parse(data)
        } catch let error as BinaryPropertyList.Error {
            throw Failure(message: error.message)
        }
        guard let top = plist.dictionaryValue else { throw Failure(message: "not a keyed archive (top level is not a dictionary)") }
        guard let objects = top["$objects"]?.arrayValue, !objects.isEmpty else {
            throw Failure(message: "not a keyed archive (no $objects)")
        }
        guard let roots = top["$top"]?.dictionaryValue, let root = roots["root"] ?? roots.values.first else {
            throw Failure(message: "not a keyed archive (no $top root)")
        }
        if let archiver = top["$archiver"]?.stringValue, archiver != "NSKeyedArchiver" {
            throw Failure(message: "unknown archiver \(archiver)")
        }
        self.objects = objects
        self.root = root
    }

    /// Follows a UID reference (once); `$null` and out-of-range references become nil.
    func resolve(_ value: PropertyListValue?) -> PropertyListValue? {
        guard let value else { return nil }
        if case .uid(let i) = value {
            guard i > 0, i < objects.count else { return nil }  // 0 is "$null"
            let target = objects[i]
            if case .string("$null") = target { return nil }
            return target
        }
        return value
    }

    /// The class name of an archived object (`NSEntityDescription`), if it is one.
    func className(of value: PropertyListValue?) -> String? {
        guard let dict = resolve(value)?.dictionaryValue, let classRef = dict["$class"],
            let classDict = resolve(classRef)?.dictionaryValue
        else { return nil }
        return classDict["$classname"]?.stringValue
    }

    /// The class chain of an archived object (`["NSDerivedAttributeDescription", "NSAttributeDescription", …]`).
    func classChain(of value: PropertyListValue?) -> [String] {
        guard let dict = resolve(value)?.dictionaryValue, let classRef = dict["$class"],
            let classDict = resolve(classRef)?.dictionaryValue
        else { return [] }
        return classDict["$classes"]?.arrayValue?.compactMap(\.stringValue) ?? []
    }

    /// The archived object a value refers to.
    func object(_ value: PropertyListValue?) -> Object? {
        guard case .uid(let i)? = value, let dict = resolve(value)?.dictionaryValue, let name = className(of: value) else {
            return nil
        }
        return Object(index: i, className: name, fields: dict)
    }

    /// A string: inline, or an archived `NSString`/`NSMutableString`.
    func string(_ value: PropertyListValue?) -> String? {
        guard let v = resolve(value) else { return nil }
        if case .string(let s) = v { return s }
        if let dict = v.dictionaryValue, let s = dict["NS.string"]?.stringValue { return s }
        if let dict = v.dictionaryValue, let bytes = dict["NS.bytes"]?.dataValue { return String(decoding: bytes, as: UTF8.self) }
        return nil
    }

    /// An integer (inline number or Boolean).
    func int(_ value: PropertyListValue?) -> Int? {
        guard let v = resolve(value) else { return nil }
        switch v {
        case .integer(let i): return Int(truncatingIfNeeded: i)
        case .bool(let b): return b ? 1 : 0
        case .real(let d) where d.isFinite && abs(d) < 9e18: return Int(d)
        default: return nil
        }
    }

    /// A Boolean (inline Boolean or number).
    func bool(_ value: PropertyListValue?) -> Bool? {
        int(value).map { $0 != 0 }
    }

    /// The element references of an archived array or set (`NS.objects`).
    func array(_ value: PropertyListValue?) -> [PropertyListValue]? {
        guard let v = resolve(value) else { return nil }
        if case .array(let a) = v { return a }
        return v.dictionaryValue?["NS.objects"]?.arrayValue
    }

    /// The key/value references of an archived dictionary, including Core Data's
    /// `NSKnownKeysDictionary1` (keys in its `searchMapping`, values in `values`).
    func dictionary(_ value: PropertyListValue?) -> [(key: PropertyListValue, value: PropertyListValue)]? {
        guard let v = resolve(value), let dict = v.dictionaryValue else { return nil }
        if let keys = dict["NS.keys"]?.arrayValue, let values = dict["NS.objects"]?.arrayValue {
            return Array(zip(keys, values)).map { (key: $0.0, value: $0.1) }
        }
        if let mapping = resolve(dict["searchMapping"])?.dictionaryValue,
            let keys = array(mapping["keys"]), let values = array(dict["values"])
        {
            return Array(zip(keys, values)).map { (key: $0.0, value: $0.1) }
        }
        return nil
    }

    /// A string-keyed dictionary whose values are strings or numbers rendered as text
    /// (user info).
    func stringDictionary(_ value: PropertyListValue?) -> [String: String] {
        var out: [String: String] = [:]
        for (k, v) in dictionary(value) ?? [] {
            guard let key = string(k) else { continue }
            out[key] = scalarText(v) ?? listText(v) ?? ""
        }
        return out
    }

    /// An array of scalars as one text, items joined by `, ` (Photos keeps
    /// `_NSLocationAttributeDerivedComponents` as an array in older models and as the string
    /// `latitude, longitude` in newer ones); nil for anything else.
    func listText(_ value: PropertyListValue?) -> String? {
        guard let v = resolve(value), v.dictionaryValue?["NS.keys"] == nil, let items = array(v) else { return nil }
        let texts = items.compactMap(scalarText)
        return texts.count == items.count ? texts.joined(separator: ", ") : nil
    }

    /// A scalar rendered as text: strings, numbers, Booleans.
    func scalarText(_ value: PropertyListValue?) -> String? {
        guard let v = resolve(value) else { return nil }
        switch v {
        case .string(let s): return s
        case .integer(let i): return String(i)
        case .real(let d): return formatNumber(d)
        case .bool(let b): return b ? "YES" : "NO"
        default: return string(v)
        }
    }
}

/// Formats a double without a trailing `.0` when it is integral.
func formatNumber(_ d: Double) -> String {
    if d.isFinite, d == d.rounded(), abs(d) < 1e15 { return String(Int64(d)) }
    return String(d)
}
