import Foundation

/// Reads the ISO 8601 dates and date-times the shell prints and people type:
/// `2026-11-05`, `2026-11-05T14:00`, `2026-11-05T14:00:00`, `2026-11-05 14:00:00.250`,
/// each optionally followed by `Z` or an offset (`+01:00`, `-0800`, `+01`). A date or
/// date-time without a zone is read as UTC, the zone the shell prints in.
public enum FLDateLiteral {
    /// The forms accepted, for error messages.
    public static let expectedForm = "an ISO 8601 date or date-time such as 2026-11-05, 2026-11-05T14:00:00Z or 2026-11-05T14:00:00+01:00"

    /// The date, or nil when `text` is not one of the accepted forms or names no real day or time.
    public static func parse(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        var i = 0
        func number(_ digits: Int) -> Int? {
            guard i + digits <= bytes.count else { return nil }
            var value = 0
            for b in bytes[i..<(i + digits)] {
                guard b >= 48, b <= 57 else { return nil }
                value = value * 10 + Int(b - 48)
            }
            i += digits
            return value
        }
        func accept(_ c: Character) -> Bool {
            guard i < bytes.count, bytes[i] == c.asciiValue else { return false }
            i += 1
            return true
        }
        guard let year = number(4), accept("-"), let month = number(2), accept("-"), let day = number(2) else { return nil }
        var hour = 0, minute = 0, second = 0
        var fraction = 0.0
        var offset = 0
        if i < bytes.count {
            guard accept("T") || accept(" ") || accept("t") else { return nil }
            guard let h = number(2), accept(":"), let m = number(2) else { return nil }
            hour = h
            minute = m
            if accept(":") {
                guard let s = number(2) else { return nil }
                second = s
                if accept(".") || accept(",") {
                    let start = i
                    while i < bytes.count, bytes[i] >= 48, bytes[i] <= 57 { i += 1 }
                    guard i > start, let f = Double("0." + String(decoding: bytes[start..<i], as: UTF8.self)) else { return nil }
                    fraction = f
                }
            }
            if accept("Z") || accept("z") {
                offset = 0
            } else if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") {
                let sign = bytes[i] == UInt8(ascii: "-") ? -1 : 1
                i += 1
                guard let oh = number(2), oh <= 23 else { return nil }
                var om = 0
                if i < bytes.count {
                    _ = accept(":")
                    guard let m = number(2), m <= 59 else { return nil }
                    om = m
                }
                offset = sign * (oh * 3600 + om * 60)
            }
        }
        guard i == bytes.count, (1...12).contains(month), (1...31).contains(day), hour <= 23, minute <= 59, second <= 60 else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        guard let utc = TimeZone(identifier: "UTC") else { return nil }
        calendar.timeZone = utc
        let components = DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        // Reject days that do not exist (2026-02-30) instead of rolling them over.
        guard let date = calendar.date(from: components), calendar.component(.day, from: date) == day else { return nil }
        return date.addingTimeInterval(fraction - Double(offset))
    }
}
