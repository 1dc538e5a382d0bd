import Foundation

/// A value of a property list, as read by ``BinaryPropertyList``.
///
/// Unlike Foundation's `PropertyListSerialization`, this keeps keyed-archive object
/// references (`CF$UID`) as their own case, ``uid(_:)``, so an `NSKeyedArchiver` archive can
/// be walked exactly.
package indirect enum PropertyListValue: Sendable, Hashable {
    /// A string (ASCII or UTF-16 in the file).
    case string(String)
    /// An integer (up to 64 bits; 128-bit values keep their low 64 bits).
    case integer(Int64)
    /// A floating-point number.
    case real(Double)
    /// A Boolean.
    case bool(Bool)
    /// A date, as seconds since 2001-01-01 00:00 UTC.
    case date(Double)
    /// Raw bytes.
    case data(Data)
    /// A keyed-archive object reference (`CF$UID`): an index into `$objects`.
    case uid(Int)
    /// An array (also used for sets).
    case array([PropertyListValue])
    /// A dictionary with string keys.
    case dictionary([String: PropertyListValue])
    /// The binary-plist null object (rare).
    case null

    /// The string, if this is a string.
    package var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    /// The integer, if this is an integer (or a Boolean, as 0/1).
    package var integerValue: Int64? {
        switch self {
        case .integer(let i): i
        case .bool(let b): b ? 1 : 0
        default: nil
        }
    }

    /// The dictionary, if this is a dictionary.
    package var dictionaryValue: [String: PropertyListValue]? {
        if case .dictionary(let d) = self { return d }
        return nil
    }

    /// The array, if this is an array.
    package var arrayValue: [PropertyListValue]? {
        if case .array(let a) = self { return a }
        return nil
    }

    /// The bytes, if this is data.
    package var dataValue: Data? {
        if case .data(let d) = self { return d }
        return nil
    }
}

/// A reader for property lists: Apple's binary format (`bplist00`), written here from the
/// format's public description, and XML (through Foundation, which reads it correctly).
///
/// ```swift
/// let plist = try BinaryPropertyList.parse(data)
/// let hashes = plist.dictionaryValue?["NSStoreModelVersionHashes"]
/// ```
package enum BinaryPropertyList {
    /// An error reading a property list.
    package struct Error: Swift.Error, Sendable, CustomStringConvertible {
        /// What is wrong.
        package var message: String
        package var description: String { message }
    }

    /// Whether `data` starts with the binary property list header.
    package static func isBinary(_ data: Data) -> Bool {
        data.count >= 8 && data.prefix(8).elementsEqual("bplist00".utf8)
    }

    /// Parses a binary (`bplist00`) or XML property list.
    ///
    /// - Throws: ``Error`` when the data is truncated, inconsistent or not a property list.
    package static func parse(_ data: Data) throws -> PropertyListValue {
        if isBinary(data) {
            var reader = try Reader(bytes: [UInt8](data))
            return try reader.topObject()
        }
        let object: Any
        do {
            object = try PropertyListSerialization.propertyList(from: data, format: nil)
        } catch {
            throw Error(message: "not a property list")
        }
        return try convert(object, depth: 0)
    }

    private static func convert(_ object: Any, depth: Int) throws -> PropertyListValue {
        guard depth < 256 else { throw Error(message: "property list nested too deeply") }
        switch object {
        case let s as String: return .string(s)
        case let b as Bool: return .bool(b)
        case let i as Int: return .integer(Int64(i))
        case let i as Int64: return .integer(i)
        case let d as Double: return .real(d)
        case let d as Data: return .data(d)
        case let d as Date: return .date(d.timeIntervalSinceReferenceDate)
        case let a as [Any]: return .array(try a.map { try convert($0, depth: depth + 1) })
        case let d as [String: Any]:
            var out: [String: PropertyListValue] = [:]
            for (k, v) in d { out[k] = try convert(v, depth: depth + 1) }
            return .dictionary(out)
        case let n as NSNumber: return .real(n.doubleValue)
        default: throw Error(message: "unsupported value in property list")
        }
    }

    /// The binary format reader. Containers are materialized with a depth limit and a node
    /// budget, so self-referencing or exponentially shared structures fail instead of hanging.
    private struct Reader {
        let bytes: [UInt8]
        let offsetSize: Int
        let refSize: Int
        let objectCount: Int
        let top: Int
        let offsetTable: Int
        var budget: Int

        init(bytes: [UInt8]) throws {
            self.bytes = bytes
            guard bytes.count >= 8 + 32 else { throw Error(message: "binary property list is truncated") }
            let t = bytes.count - 32
            offsetSize = Int(bytes[t + 6])
            refSize = Int(bytes[t + 7])
            guard (1...8).contains(offsetSize), (1...8).contains(refSize) else {
                throw Error(message: "binary property list has a bad trailer")
            }
            func u64(_ at: Int) -> UInt64 { (0..<8).reduce(UInt64(0)) { $0 << 8 | UInt64(bytes[at + $1]) } }
            let count = u64(t + 8), topIndex = u64(t + 16), tableOffset = u64(t + 24)
            guard count > 0, count < UInt64(bytes.count), topIndex < count,
                tableOffset >= 8, tableOffset < UInt64(t),
                tableOffset + count * UInt64(offsetSize) <= UInt64(t)
            else { throw Error(message: "binary property list has a bad trailer") }
            objectCount = Int(count)
            top = Int(topIndex)
            offsetTable = Int(tableOffset)
            budget = max(100_000, objectCount * 64)
        }

        func uint(at: Int, size: Int) throws -> Int {
            guard size >= 1, size <= 8, at >= 0, at + size <= bytes.count else {
                throw Error(message: "binary property list is truncated")
            }
            var v: UInt64 = 0
            for i in 0..<size { v = v << 8 | UInt64(bytes[at + i]) }
            guard v <= UInt64(Int.max) else { throw Error(message: "binary property list offset out of range") }
            return Int(v)
        }

        func offset(ofObject index: Int) throws -> Int {
            guard index >= 0, index < objectCount else { throw Error(message: "binary property list object reference out of range") }
            let o = try uint(at: offsetTable + index * offsetSize, size: offsetSize)
            guard o >= 8, o < offsetTable else { throw Error(message: "binary property list object offset out of range") }
            return o
        }

        mutating func topObject() throws -> PropertyListValue {
            try object(top, depth: 0)
        }

        /// Reads the length of a container or string: the low nibble, or a following int.
        func length(marker: UInt8, at: Int) throws -> (count: Int, start: Int) {
            let low = Int(marker & 0x0F)
            if low != 0x0F { return (low, at + 1) }
            guard at + 1 < bytes.count else { throw Error(message: "binary property list is truncated") }
            let intMarker = bytes[at + 1]
            guard intMarker & 0xF0 == 0x10 else { throw Error(message: "binary property list has a bad length") }
            let size = 1 << Int(intMarker & 0x0F)
            guard size <= 8 else { throw Error(message: "binary property list has a bad length") }
            let n = try uint(at: at + 2, size: size)
            return (n, at + 2 + size)
        }

        mutating func object(_ index: Int, depth: Int) throws -> PropertyListValue {
            guard depth < 512 else { throw Error(message: "binary property list nested too deeply (cyclic?)") }
            budget -= 1
            guard budget > 0 else { throw Error(message: "binary property list too large or cyclic") }
            let at = try offset(ofObject: index)
            let marker = bytes[at]
            switch marker >> 4 {
            case 0x0:
                switch marker {
                case 0x00: return .null
                case 0x08: return .bool(false)
                case 0x09: return .bool(true)
                default: throw Error(message: "binary property list has an unknown object type")
                }
            case 0x1:
                let size = 1 << Int(marker & 0x0F)
                guard size <= 16, at + 1 + size <= bytes.count else { throw Error(message: "binary property list is truncated") }
                var v: UInt64 = 0
                // Integers of 16 bytes keep their low 64 bits.
                for i in max(0, size - 8)..<size { v = v << 8 | UInt64(bytes[at + 1 + i]) }
                if size < 8 { return .integer(Int64(v)) }
                return .integer(Int64(bitPattern: v))
            case 0x2:
                let size = 1 << Int(marker & 0x0F)
                guard size == 4 || size == 8 else { throw Error(message: "binary property list has a bad real") }
                return .real(try real(at: at + 1, size: size))
            case 0x3:
                guard marker == 0x33 else { throw Error(message: "binary property list has a bad date") }
                return .date(try real(at: at + 1, size: 8))
            case 0x4:
                let (n, start) = try length(marker: marker, at: at)
                guard start + n <= bytes.count, n >= 0 else { throw Error(message: "binary property list is truncated") }
                return .data(Data(bytes[start..<start + n]))
            case 0x5:
                let (n, start) = try length(marker: marker, at: at)
                guard start + n <= bytes.count else { throw Error(message: "binary property list is truncated") }
                return .string(String(decoding: bytes[start..<start + n], as: UTF8.self))
            case 0x6:
                let (n, start) = try length(marker: marker, at: at)
                guard n <= bytes.count / 2, start + 2 * n <= bytes.count else { throw Error(message: "binary property list is truncated") }
                var units: [UInt16] = []
                units.reserveCapacity(n)
                for i in 0..<n { units.append(UInt16(bytes[start + 2 * i]) << 8 | UInt16(bytes[start + 2 * i + 1])) }
                return .string(String(decoding: units, as: UTF16.self))
            case 0x8:
                let size = Int(marker & 0x0F) + 1
                return .uid(try uint(at: at + 1, size: size))
            case 0xA, 0xB, 0xC:
                let (n, start) = try length(marker: marker, at: at)
                guard n <= bytes.count, start + n * refSize <= bytes.count else { throw Error(message: "binary property list is truncated") }
                var items: [PropertyListValue] = []
                items.reserveCapacity(n)
                for i in 0..<n {
                    let ref = try uint(at: start + i * refSize, size: refSize)
                    items.append(try object(ref, depth: depth + 1))
                }
                return .array(items)
            case 0xD:
                let (n, start) = try length(marker: marker, at: at)
                guard n <= bytes.count, start + 2 * n * refSize <= bytes.count else { throw Error(message: "binary property list is truncated") }
                var dict: [String: PropertyListValue] = [:]
                for i in 0..<n {
                    let keyRef = try uint(at: start + i * refSize, size: refSize)
                    let valueRef = try uint(at: start + (n + i) * refSize, size: refSize)
                    guard case .string(let key) = try object(keyRef, depth: depth + 1) else {
                        throw Error(message: "binary property list has a dictionary key that is not a string")
                    }
                    dict[key] = try object(valueRef, depth: depth + 1)
                }
                return .dictionary(dict)
            default:
                throw Error(message: "binary property list has an unknown object type")
            }
        }

        func real(at: Int, size: Int) throws -> Double {
            guard at + size <= bytes.count else { throw Error(message: "binary property list is truncated") }
            var v: UInt64 = 0
            for i in 0..<size { v = v << 8 | UInt64(bytes[at + i]) }
            if size == 4 { return Double(Float(bitPattern: UInt32(truncatingIfNeeded: v))) }
            return Double(bitPattern: v)
        }
    }
}
