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

    /// The decimal with the fewest digits that reads back as `value` (`3.258`, not
    /// `Decimal(3.258)`'s `3.257999999999999488`), or nil for an infinity, NaN or a double
    /// past Decimal's range.
    ///
    /// For doubles that stand for decimal text: SQLite keeps a Decimal attribute's text in a
    /// `DECIMAL` column (NUMERIC affinity) as a REAL with 15 significant digits, and Swift's
    /// shortest description of that double gives those digits back.
    public init?(shortestRepresentationOf value: Double) {
        guard value.isFinite else { return nil }
        guard let parsed = Decimal(string: "\(value)", locale: Locale(identifier: "en_US_POSIX")), !parsed.isNaN else {
            self.init(checking: value)
            return
        }
        self = parsed
    }
}
