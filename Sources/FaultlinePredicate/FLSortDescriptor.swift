import Foundation

/// A sort key: a key path, a direction and a comparison selector (`NSSortDescriptor`).
///
/// Named `FLSortDescriptor` so it cannot collide with Foundation's `SortDescriptor`.
///
/// ```swift
/// let byName = FLSortDescriptor(key: "name", ascending: true, comparator: .localizedStandardCompare)
/// let sorted = try people.sorted(by: [byName])
/// ```
public struct FLSortDescriptor: Sendable, Hashable, CustomStringConvertible {
    /// The comparison selectors Core Data understands (and maps to SQLite collations).
    public enum Comparator: String, Sendable, Hashable, CaseIterable {
        /// `compare:`: numbers numerically, strings by Unicode scalar value.
        case compare = "compare:"
        /// `caseInsensitiveCompare:`
        case caseInsensitiveCompare = "caseInsensitiveCompare:"
        /// `localizedCompare:`
        case localizedCompare = "localizedCompare:"
        /// `localizedCaseInsensitiveCompare:`
        case localizedCaseInsensitiveCompare = "localizedCaseInsensitiveCompare:"
        /// `localizedStandardCompare:` (Finder-like: case-insensitive, numeric).
        case localizedStandardCompare = "localizedStandardCompare:"
    }

    /// The key path sorted on (`name`, `department.name`).
    public var key: String
    /// Ascending (the default) or descending.
    public var ascending: Bool
    /// How two values are compared.
    public var comparator: Comparator

    /// Creates a sort descriptor.
    public init(key: String, ascending: Bool = true, comparator: Comparator = .compare) {
        self.key = key
        self.ascending = ascending
        self.comparator = comparator
    }

    /// Creates a sort descriptor from a selector name such as `"caseInsensitiveCompare:"`.
    /// Returns nil for selectors Core Data cannot sort by.
    public init?(key: String, ascending: Bool = true, selector: String) {
        guard let c = Comparator(rawValue: selector) else { return nil }
        self.init(key: key, ascending: ascending, comparator: c)
    }

    /// `(name, ascending, caseInsensitiveCompare:)`, as `NSSortDescriptor` prints.
    public var description: String {
        "(\(key), \(ascending ? "ascending" : "descending"), \(comparator.rawValue))"
    }

    /// Compares two objects by this key. `nil` sorts before any value when ascending.
    /// - Throws: errors from ``KeyValueCoding``.
    public func compare(_ a: Any?, _ b: Any?) throws -> ComparisonResult {
        let x = FLCompare.normalize(try flValue(forKeyPath: key, of: a))
        let y = FLCompare.normalize(try flValue(forKeyPath: key, of: b))
        let r = FLSortDescriptor.compareValues(x, y, comparator)
        guard !ascending else { return r }
        switch r {
        case .orderedAscending: return .orderedDescending
        case .orderedDescending: return .orderedAscending
        case .orderedSame: return .orderedSame
        }
    }

    static func compareValues(_ x: Any?, _ y: Any?, _ comparator: Comparator) -> ComparisonResult {
        switch (x, y) {
        case (nil, nil): return .orderedSame
        case (nil, _): return .orderedAscending
        case (_, nil): return .orderedDescending
        default: break
        }
        if let s = FLStrings.string(x), let t = FLStrings.string(y) {
            switch comparator {
            case .compare: return s < t ? .orderedAscending : (s == t ? .orderedSame : .orderedDescending)
            case .caseInsensitiveCompare: return s.compare(t, options: [.caseInsensitive])
            case .localizedCompare: return s.compare(t, options: [], range: nil, locale: Locale.current)
            case .localizedCaseInsensitiveCompare: return s.compare(t, options: [.caseInsensitive], range: nil, locale: Locale.current)
            case .localizedStandardCompare:
                return s.compare(t, options: [.caseInsensitive, .numeric, .widthInsensitive], range: nil, locale: Locale.current)
            }
        }
        return FLCompare.order(x, y) ?? .orderedSame
    }
}

extension Sequence {
    /// The elements sorted by several sort descriptors (the first is the primary key); stable.
    /// - Throws: errors from ``KeyValueCoding``.
    public func sorted(by descriptors: [FLSortDescriptor]) throws -> [Element] {
        var failure: (any Error)?
        let indexed = Array(enumerated())
        let result = indexed.sorted { a, b in
            if failure != nil { return false }
            do {
                for d in descriptors {
                    let r = try d.compare(a.element, b.element)
                    if r != .orderedSame { return r == .orderedAscending }
                }
            } catch {
                failure = error
            }
            return a.offset < b.offset
        }
        if let failure { throw failure }
        return result.map(\.element)
    }
}
