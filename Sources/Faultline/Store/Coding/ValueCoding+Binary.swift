import FaultlineModel
import FaultlineSQL
import Foundation

extension ValueCoding {
    /// The first byte of a column of a Binary attribute that allows external storage.
    public enum ExternalMarker: UInt8, Sendable {
        /// The bytes follow inline.
        case inline = 0x01
        /// An ASCII UUID follows, naming a file in `.<store>_SUPPORT/_EXTERNAL_DATA/`.
        case external = 0x02
    }

    /// Where Core Data keeps external binary data for a store: `.<name>_SUPPORT/_EXTERNAL_DATA`
    /// beside the store file, `<name>` being the file name without its extension.
    public static func externalDataFolder(forStoreAt url: URL) -> URL {
        let name = url.deletingPathExtension().lastPathComponent
        return url.deletingLastPathComponent()
            .appendingPathComponent(".\(name)_SUPPORT", isDirectory: true)
            .appendingPathComponent("_EXTERNAL_DATA", isDirectory: true)
    }

    /// Decodes the column of a Binary attribute with "Allows External Storage": `0x01` +
    /// the bytes, or `0x02` + an ASCII UUID naming a file under
    /// ``externalDataFolder(forStoreAt:)``, which is read. Other contents are returned as they are.
    ///
    /// - Throws: ``PersistentStoreError`` when the name is not a UUID (it could point outside the
    ///   folder) or the file cannot be read, naming the file.
    package static func decodeExternalBinary(_ value: SQLValue, storeURL: URL?) throws -> Data? {
        switch externalBinaryValue(value, storeURL: storeURL) {
        case let reference as ExternalBinaryDataReference: return try reference.load()
        case let data as Data: return data
        default: return nil
        }
    }

    /// The value of a Binary attribute with "Allows External Storage" without reading any
    /// file: the bytes behind `0x01` (or the column as it is, without a marker), or an
    /// ``ExternalBinaryDataReference`` for `0x02` + a name, whose file is read when the
    /// value is asked for (as Core Data does).
    package static func externalBinaryValue(_ value: SQLValue, storeURL: URL?) -> Any? {
        guard case .blob(let data) = value else { return decode(value, as: .binaryData) as? Data }
        guard let first = data.first, let marker = ExternalMarker(rawValue: first) else { return data }
        switch marker {
        case .inline:
            return Data(data.dropFirst())
        case .external:
            return ExternalBinaryDataReference(name: externalName(data), storeURL: storeURL)
        }
    }

    /// The name after the `0x02` marker of a column's bytes (up to a NUL, if any).
    private static func externalName(_ column: Data) -> String {
        String(decoding: column.dropFirst().prefix { $0 != 0 }, as: UTF8.self)
    }

    /// Encodes bytes for a Binary attribute with "Allows External Storage", kept inline
    /// (`0x01` + the bytes).
    package static func encodeExternalBinaryInline(_ data: Data?) -> SQLValue {
        guard let data else { return .null }
        return .blob(Data([ExternalMarker.inline.rawValue]) + data)
    }

    /// The column of a Binary attribute with "Allows External Storage" whose bytes live in
    /// the file `name` under ``externalDataFolder(forStoreAt:)``: `0x02` + the name in ASCII.
    public static func encodeExternalBinaryReference(_ name: String) -> SQLValue {
        .blob(Data([ExternalMarker.external.rawValue]) + Data(name.utf8))
    }

    /// The file a column of a Binary attribute with "Allows External Storage" names (`0x02` +
    /// an ASCII UUID), or nil when its bytes are inline, it is NULL, or the name is not a
    /// UUID (such a name is never used as a path, so its file is never removed).
    public static func externalReferenceName(_ value: SQLValue) -> String? {
        guard case .blob(let data) = value, data.first == ExternalMarker.external.rawValue else { return nil }
        let name = externalName(data)
        // A name is a UUID: never a path that could leave the folder.
        return UUID(uuidString: name) != nil ? name : nil
    }

    /// A readable description of a Transformable value's bytes when they are a property list
    /// or a plain `NSKeyedArchiver` archive of Foundation values (strings, numbers, dates,
    /// data, arrays, sets, dictionaries, UUIDs, URLs); nil otherwise. Other archived classes
    /// show as `<ClassName>`.
    ///
    /// ```swift
    /// ValueCoding.describeTransformable(data)  // "[\"a\", \"b\"]"
    /// ```
    public static func describeTransformable(_ data: Data) -> String? {
        guard let plist = try? BinaryPropertyList.parse(data) else { return nil }
        if let top = plist.dictionaryValue, let objects = top["$objects"]?.arrayValue,
            top["$archiver"]?.stringValue == "NSKeyedArchiver", let root = top["$top"]?.dictionaryValue?["root"]
        {
            return ArchiveDescriber(objects: objects).describe(root, depth: 0)
        }
        return ArchiveDescriber(objects: []).describe(plist, depth: 0)
    }
}

/// Renders keyed-archive objects of Foundation classes as text.
private struct ArchiveDescriber {
    let objects: [PropertyListValue]

    func resolve(_ value: PropertyListValue) -> PropertyListValue? {
        if case .uid(let i) = value {
            guard i > 0, i < objects.count else { return nil }
            if case .string("$null") = objects[i] { return nil }
            return objects[i]
        }
        return value
    }

    func className(_ dict: [String: PropertyListValue]) -> String? {
        guard let ref = dict["$class"], let cls = resolve(ref)?.dictionaryValue else { return nil }
        return cls["$classname"]?.stringValue
    }

    func describe(_ value: PropertyListValue, depth: Int) -> String {
        guard depth < 32 else { return "…" }
        guard let v = resolve(value) else { return "nil" }
        switch v {
        case .string(let s): return "\"\(s)\""
        case .integer(let i): return String(i)
        case .real(let d): return SQLValue.format(d)
        case .bool(let b): return b ? "true" : "false"
        case .date(let t): return ISO8601DateFormatter().string(from: Date(timeIntervalSinceReferenceDate: t))
        case .data(let d): return "<\(d.count) bytes>"
        case .uid: return "nil"
        case .null: return "nil"
        case .array(let items): return "[" + items.map { describe($0, depth: depth + 1) }.joined(separator: ", ") + "]"
        case .dictionary(let dict):
            if let name = className(dict) { return describeObject(dict, className: name, depth: depth) }
            let pairs = dict.keys.sorted().map { "\"\($0)\": " + describe(dict[$0] ?? .null, depth: depth + 1) }
            return "{" + pairs.joined(separator: ", ") + "}"
        }
    }

    func describeObject(_ dict: [String: PropertyListValue], className: String, depth: Int) -> String {
        if let s = dict["NS.string"] { return describe(s, depth: depth + 1) }
        if let bytes = dict["NS.bytes"]?.dataValue, className.contains("String") { return "\"\(String(decoding: bytes, as: UTF8.self))\"" }
        if case .real(let t)? = dict["NS.time"] { return describe(.date(t), depth: depth) }
        if let bytes = dict["NS.uuidbytes"]?.dataValue, bytes.count == 16 {
            let b = [UInt8](bytes)
            return UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])).uuidString
        }
        if let relative = dict["NS.relative"] { return describe(relative, depth: depth + 1) }
        if let data = dict["NS.data"] { return describe(data, depth: depth + 1) }
        if let keys = dict["NS.keys"]?.arrayValue, let values = dict["NS.objects"]?.arrayValue {
            let pairs = zip(keys, values).map { describe($0, depth: depth + 1) + ": " + describe($1, depth: depth + 1) }
            return "{" + pairs.joined(separator: ", ") + "}"
        }
        if let items = dict["NS.objects"]?.arrayValue {
            return "[" + items.map { describe($0, depth: depth + 1) }.joined(separator: ", ") + "]"
        }
        return "<\(className)>"
    }
}
