import FaultlineModel
import FaultlineSQL
import Foundation

/// Converts attribute values between Swift and SQLite the way Core Data stores them.
///
/// Integers and Booleans are INTEGER; Float and Double REAL; Date is seconds since
/// 2001-01-01 (whole seconds come back as INTEGER); String and URI TEXT; Binary, UUID
/// (16 bytes) and Transformable BLOB; Decimal is stored as its text.
package enum ValueCoding {
    /// Seconds between 1970-01-01 and 2001-01-01, Core Data's reference date.
    package static let referenceDateOffset: Double = 978_307_200

    /// Decodes a column value for an attribute type; NULL gives nil.
    package static func decode(_ value: SQLValue, as type: AttributeType) -> Any? {
        if case .null = value { return nil }
        switch type {
        case .integer16: return value.int64.map { Int16(truncatingIfNeeded: $0) }
        case .integer32: return value.int64.map { Int32(truncatingIfNeeded: $0) }
        case .integer64: return value.int64
        case .boolean: return value.int64.map { $0 != 0 }
        case .double: return value.double
        case .float: return value.double.map { Float($0) }
        case .decimal:
            switch value {
            case .text(let s): return Decimal(string: s, locale: Locale(identifier: "en_US_POSIX"))
            case .integer(let i): return Decimal(i)
            // The column's NUMERIC affinity stores the text as a REAL (15 significant digits):
            // its shortest decimal is the value written. A double no Decimal holds (an
            // infinity, 1e300) reads as no value, never as NaN.
            case .real(let d): return Decimal(shortestRepresentationOf: d)
            default: return nil
            }
        case .date: return value.double.map { Date(timeIntervalSinceReferenceDate: $0) }
        case .string, .objectID:
            switch value {
            case .text(let s): return s
            case .integer(let i): return String(i)
            case .real(let d): return SQLValue.format(d)
            case .blob(let d): return String(decoding: d, as: UTF8.self)
            case .null: return nil
            }
        case .uri: return value.string.flatMap { URL(string: $0) }
        case .uuid:
            guard let data = value.data, data.count == 16 else { return value.string.flatMap(UUID.init(uuidString:)) }
            let b = [UInt8](data)
            return UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]))
        case .binaryData, .transformable, .composite, .undefined:
            switch value {
            case .blob(let d): return d
            case .text(let s): return Data(s.utf8)
            default: return value.double
            }
        }
    }

    /// ``encode(_:as:)`` of a slot's typed value: the common types without boxing.
    static func encode(_ stored: StoredValue, as type: AttributeType) -> SQLValue {
        switch (stored, type) {
        case (.none, _): return .null
        case (.string(let v), .string): return .text(v)
        case (.int64(let v), .integer64): return .integer(v)
        case (.int32(let v), .integer32): return .integer(Int64(v))
        case (.int16(let v), .integer16): return .integer(Int64(v))
        case (.bool(let v), .boolean): return .integer(v ? 1 : 0)
        case (.double(let v), .double): return .real(v)
        case (.date(let v), .date): return .real(v.timeIntervalSinceReferenceDate)
        default: return encode(stored.any, as: type)
        }
    }

    /// Encodes a Swift value for a column of an attribute type; nil gives NULL.
    package static func encode(_ value: Any?, as type: AttributeType) -> SQLValue {
        guard let value else { return .null }
        // The type the attribute holds first: one cast instead of a chain of them.
        switch type {
        case .string: if let v = value as? String { return .text(v) }
        case .integer64: if let v = value as? Int64 { return .integer(v) }
        case .integer32: if let v = value as? Int32 { return .integer(Int64(v)) }
        case .integer16: if let v = value as? Int16 { return .integer(Int64(v)) }
        case .boolean: if let v = value as? Bool { return .integer(v ? 1 : 0) }
        case .double: if let v = value as? Double { return .real(v) }
        case .date: if let v = value as? Date { return .real(v.timeIntervalSinceReferenceDate) }
        default: break
        }
        switch value {
        case let v as Bool: return .integer(v ? 1 : 0)
        case let v as Int: return type == .double || type == .float ? .real(Double(v)) : .integer(Int64(v))
        case let v as Int16: return .integer(Int64(v))
        case let v as Int32: return .integer(Int64(v))
        case let v as Int64: return type == .double || type == .float ? .real(Double(v)) : .integer(v)
        case let v as Double:
            if type.isInteger, let i = Int64(exactly: v) { return .integer(i) }
            return .real(v)
        case let v as Float: return .real(Double(v))
        case let v as Decimal: return .text(NSDecimalNumber(decimal: v).stringValue)
        case let v as String: return .text(v)
        case let v as Date: return .real(v.timeIntervalSinceReferenceDate)
        case let v as URL: return .text(v.absoluteString)
        case let v as UUID:
            let u = v.uuid
            return .blob(Data([u.0, u.1, u.2, u.3, u.4, u.5, u.6, u.7, u.8, u.9, u.10, u.11, u.12, u.13, u.14, u.15]))
        case let v as Data: return .blob(v)
        case let v as SQLValue: return v
        default: return .text(String(describing: value))
        }
    }
}
