import Foundation

extension Decimal {
    /// The decimal for a double, or nil when there is none: Foundation's `Decimal(Double)`
    /// stops the process on an infinity or NaN, and gives NaN past Decimal's range (about
    /// 1e145, or below 1e-128).
    public init?(checking value: Double) {
        guard value.isFinite else { return nil }
        let converted = Decimal(value)
        guard !converted.isNaN else { return nil }
        self = converted
    }
}
