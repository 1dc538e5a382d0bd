import FaultlineModel
import FaultlineSQL
import Foundation

/// How an attribute's column decodes into a ``StoredValue``: object rows (`DecodePlan`) and
/// dictionary rows (`DictionaryRowReader`) decode their attribute columns this one way.
enum AttributeColumn: Equatable {
    case integer64, integer32, integer16, boolean, double, float, date, string
    /// Any other type: through ``ValueCoding/decode(_:as:)``.
    case converted(AttributeType)

    init(_ type: AttributeType) {
        switch type {
        case .integer16: self = .integer16
        case .integer32: self = .integer32
        case .integer64: self = .integer64
        case .boolean: self = .boolean
        case .double: self = .double
        case .float: self = .float
        case .date: self = .date
        case .string: self = .string
        default: self = .converted(type)
        }
    }

    /// The attribute type decoded.
    var attributeType: AttributeType {
        switch self {
        case .integer16: return .integer16
        case .integer32: return .integer32
        case .integer64: return .integer64
        case .boolean: return .boolean
        case .double: return .double
        case .float: return .float
        case .date: return .date
        case .string: return .string
        case .converted(let type): return type
        }
    }

    /// The value of `column` (nil is `.none`): read by the column's own storage class when it
    /// is the attribute's; a value stored with another class (TEXT in an integer column) is
    /// converted as ``ValueCoding`` does it.
    @inline(__always)
    func decode(_ column: ColumnValue) -> StoredValue {
        let storage = column.storageClass
        if storage == SQLValue.nullStorageClass { return .none }
        let isInteger = storage == SQLValue.integerStorageClass
        let isNumber = isInteger || storage == SQLValue.floatStorageClass
        switch self {
        case .integer64 where isInteger: return .int64(column.int64)
        case .integer32 where isInteger: return .int32(Int32(truncatingIfNeeded: column.int64))
        case .integer16 where isInteger: return .int16(Int16(truncatingIfNeeded: column.int64))
        case .boolean where isInteger: return .bool(column.int64 != 0)
        case .double where isNumber: return .double(column.double)
        case .float where isNumber: return .float(Float(column.double))
        case .date where isNumber: return .date(Date(timeIntervalSinceReferenceDate: column.double))
        case .string where storage == SQLValue.textStorageClass: return .string(column.text)
        default: return StoredValue(ValueCoding.decode(column.sqlValue, as: attributeType))
        }
    }
}
