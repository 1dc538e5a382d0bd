import FaultlineModel
import Foundation

// Model default values as Swift expressions that cannot fail at run time: what a typed
// property of a non-optional attribute reads while the attribute has no value.

enum SwiftLiterals {
    /// A string literal: quotes, backslashes and control characters escaped.
    static func string(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case "\0": result += "\\0"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F || (0x80..<0xA0).contains(scalar.value)
                    || scalar.properties.generalCategory == .format || scalar.properties.generalCategory == .lineSeparator
                    || scalar.properties.generalCategory == .paragraphSeparator
                {
                    result += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result + "\""
    }

    /// Text from the model for a `//` comment: on one line (line breaks and other control
    /// characters become spaces), so that no model text can end the comment and become code.
    static func comment(_ text: String) -> String {
        String(
            String.UnicodeScalarView(
                text.unicodeScalars.map { scalar in
                    let category = scalar.properties.generalCategory
                    let breaks = category == .control || category == .lineSeparator || category == .paragraphSeparator || category == .format
                    return breaks ? " " : scalar
                }))
    }

    /// A floating-point literal (`0.0`, `1e-05`); nil for infinities and NaN, which have
    /// no literal.
    static func floatingPoint<F: BinaryFloatingPoint & LosslessStringConvertible>(_ value: F) -> String? {
        guard value.isFinite else { return nil }
        return "\(value)"
    }

    /// The expression of an attribute's default value, as the runtime reads the default
    /// (`ManagedObject.defaultValue(of:)`); nil when the model gives none, or one this type
    /// cannot write without a failable initializer (URL).
    static func defaultValue(of attribute: AttributeDescription) -> String? {
        let type = attribute.attributeType
        if type == .date, let seconds = attribute.defaultDateTimeInterval ?? attribute.defaultValueString.flatMap(Double.init) {
            return floatingPoint(seconds).map { "Date(timeIntervalSinceReferenceDate: \($0))" }
        }
        guard let text = attribute.defaultValueString else { return nil }
        switch type {
        case .integer16: return (Int16(text) ?? Double(text).flatMap { Int16(exactly: $0) }).map { "\($0)" }
        case .integer32: return (Int32(text) ?? Double(text).flatMap { Int32(exactly: $0) }).map { "\($0)" }
        case .integer64: return (Int64(text) ?? Double(text).flatMap { Int64(exactly: $0) }).map { "\($0)" }
        case .boolean: return ["yes", "true", "1"].contains(text.lowercased()) ? "true" : "false"
        case .double: return Double(text).flatMap(floatingPoint)
        case .float: return Float(text).flatMap(floatingPoint)
        case .decimal: return Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")).flatMap(decimal)
        case .string, .objectID: return string(text)
        case .uuid: return UUID(uuidString: text).map(uuid)
        default: return nil
        }
    }

    /// The empty value of a type that has one (`0`, `false`, `""`, `Data()`), for a
    /// non-optional attribute without a default; nil for Date, UUID and URL, which have none.
    static func emptyValue(of type: AttributeType) -> String? {
        switch type {
        case .integer16, .integer32, .integer64, .decimal: "0"
        case .double, .float: "0.0"
        case .boolean: "false"
        case .string, .objectID: "\"\""
        case .binaryData, .transformable: "Data()"
        case .date, .uuid, .uri, .undefined, .composite: nil
        }
    }

    /// A Decimal: an integer literal when it is a whole number that fits, else
    /// `Decimal(sign:exponent:significand:)`; nil when the significand does not fit 64 bits.
    static func decimal(_ value: Decimal) -> String? {
        guard value.isFinite else { return nil }
        let significandText = "\(value.significand.magnitude)"
        guard let significand = Int64(significandText) else { return nil }
        if value.exponent >= 0, value.exponent < 19, let whole = Int64("\(value)") { return "\(whole)" }
        let sign = value.sign == .minus ? ".minus" : ".plus"
        return "Decimal(sign: \(sign), exponent: \(value.exponent), significand: \(significand))"
    }

    /// `UUID(uuid: (0x12, …))`: the bytes, so no string is parsed at run time.
    static func uuid(_ value: UUID) -> String {
        let bytes = withUnsafeBytes(of: value.uuid) { Array($0) }
        return "UUID(uuid: (" + bytes.map { "0x" + String($0, radix: 16, uppercase: true).leftPadded(to: 2) }.joined(separator: ", ") + "))"
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String { count >= width ? self : String(repeating: "0", count: width - count) + self }
}
