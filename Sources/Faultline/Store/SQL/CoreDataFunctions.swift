import FaultlinePredicate
import FaultlineSQL
import Foundation

/// The SQL functions and collations Core Data registers on every connection, so stores whose
/// triggers call them work and Faultline's own SQL can use them.
///
/// The string functions implement the predicate operators with the same rules as in-memory
/// evaluation (`FLComparison.compare(_:_:_:options:)` in FaultlinePredicate), so a fetch and
/// `FLPredicate.evaluate(with:)` select the same objects. Any NULL argument gives NULL.
/// A comparison that cannot be decided (a `MATCHES` pattern `FLRegex`
/// cannot decide on a value, an invalid pattern) raises an SQL error, so the statement fails
/// with its message instead of leaving the row out.
///
/// | function | arguments |
/// | --- | --- |
/// | `NSCoreDataStringSearch` | value, pattern, CFString flags (1 case, 2 literal, 8 anchored, 12 anchored backwards, 0x20 localized, 0x80 diacritics, 0x100 width), locale flag |
/// | `NSCoreDataLike`, `NSCoreDataMatches` | value, pattern, options (1 `[c]`, 2 `[d]`) |
/// | `NSCoreDataStringCompare` | value, other, operator number (0…5), flags as above, locale flag (Faultline's layout) |
/// | `NSCoreDataToUpper`, `NSCoreDataToLower`, `NSCoreDataCanonical` | value |
/// | `NSCoreDataNow` | — (seconds since 2001-01-01) |
public enum CoreDataFunctions {
    /// Registers the functions and collations on a connection; the trigger helpers append
    /// what the store's triggers report to `reports` (when given).
    package static func register(on connection: Connection, reports: TriggerReports? = nil) throws {
        // Called by triggers stored in the file (`Z_DA_` derived attributes, `ZT_` counters) as
        // `SELECT f('ZTABLE', Z_ENT, Z_PK, 'name', value) FROM …`: a row's value that the
        // trigger changed, so that objects in memory can follow. The name is the property
        // (`Z_DA_`) or the column (`ZT_`). They return NULL.
        for name in ["NSCoreDataDATriggerInsertUpdatedAffectedObjectValue", "NSCoreDataDATriggerUpdatedAffectedObjectValue",
                     "NSCoreDataTriggerUpdateAffectedObjectValue"] {
            try connection.createFunction(name, argumentCount: -1, deterministic: false) { args in
                if args.count >= 5, case .text(let table) = args[0], let entity = args[1].int64, let key = args[2].int64,
                    case .text(let property) = args[3]
                {
                    reports?.append(TriggerReport(table: table, entityNumber: Int(entity), primaryKey: key, name: property, value: args[4]))
                }
                return .null
            }
        }
        try connection.createFunction("NSCoreDataNow", argumentCount: 0, deterministic: false) { _ in
            .real(Date().timeIntervalSinceReferenceDate)
        }
        try connection.createFunction("NSCoreDataStringSearch", argumentCount: 4, fastPath: asciiStringSearch) { args in
            guard let text = string(args[0]), let pattern = string(args[1]), let flags = args[2].int64 else { return .null }
            let op: FLComparison.Operator = flags & 0xC == 0xC ? .endsWith : (flags & 0x8 != 0 ? .beginsWith : .contains)
            return try result(FLComparison.compare(text, op, pattern, options: options(fromSearchFlags: flags)))
        }
        try connection.createFunction("NSCoreDataLike", argumentCount: 3) { args in
            guard let text = string(args[0]), let pattern = string(args[1]) else { return .null }
            return try result(FLComparison.compare(text, .like, pattern, options: FLComparison.Options(rawValue: Int(args[2].int64 ?? 0) & 3)))
        }
        try connection.createFunction("NSCoreDataMatches", argumentCount: 3) { args in
            guard let text = string(args[0]), let pattern = string(args[1]) else { return .null }
            return try result(FLComparison.compare(text, .matches, pattern, options: FLComparison.Options(rawValue: Int(args[2].int64 ?? 0) & 3)))
        }
        try connection.createFunction("NSCoreDataStringCompare", argumentCount: 5) { args in
            guard let a = string(args[0]), let b = string(args[1]), let raw = args[2].int64,
                  let op = FLComparison.Operator(rawValue: Int(raw)), let flags = args[3].int64 else { return .null }
            return try result(FLComparison.compare(a, op, b, options: options(fromSearchFlags: flags)))
        }
        try connection.createFunction("NSCoreDataToUpper", argumentCount: 1) { args in
            string(args[0]).map { .text($0.uppercased()) } ?? .null
        }
        try connection.createFunction("NSCoreDataToLower", argumentCount: 1) { args in
            string(args[0]).map { .text($0.lowercased()) } ?? .null
        }
        try connection.createFunction("NSCoreDataCanonical", argumentCount: 1) { args in
            string(args[0]).map { .text($0.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)) } ?? .null
        }
        try connection.createCollation("NSCollateNoCase") { a, b in a.compare(b, options: [.caseInsensitive]) }
        try connection.createCollation("NSCollateNumericallyNoCase") { a, b in a.compare(b, options: [.caseInsensitive, .numeric]) }
        try connection.createCollation("NSCollateLocaleSensitive") { a, b in a.compare(b, options: [], range: nil, locale: Locale.current) }
        try connection.createCollation("NSCollateLocaleSensitiveNoCase") { a, b in a.compare(b, options: [.caseInsensitive], range: nil, locale: Locale.current) }
        try connection.createCollation("NSCollateFinderlike") { a, b in a.compare(b, options: [.caseInsensitive, .numeric, .widthInsensitive], range: nil, locale: Locale.current) }
    }

    /// `NSCoreDataStringSearch` on ASCII text, on the bytes as SQLite holds them: the same
    /// answers as the general path without making strings. For ASCII, case folding is A–Z to
    /// a–z, and diacritic, width and locale flags change nothing; an empty pattern matches
    /// nothing. Nil (the general path) for non-ASCII text and for the literal flag (2).
    static func asciiStringSearch(_ args: FunctionArguments) -> SQLValue? {
        guard args.count == 4, args.isText(0), args.isText(1), let flags = args.integer(2), flags & ~0x1AD == 0 else { return nil }
        let caseInsensitive = flags & 0x1 != 0
        let anchored = flags & 0x8 != 0
        let backwards = flags & 0x4 != 0
        return args.withUTF8(0) { text in
            args.withUTF8(1) { pattern in
                guard isASCII(text), isASCII(pattern) else { return nil }
                if pattern.isEmpty { return .integer(0) }
                if pattern.count > text.count { return .integer(0) }
                @inline(__always) func equalAt(_ offset: Int) -> Bool {
                    for i in 0..<pattern.count {
                        var a = text[offset + i], b = pattern[i]
                        if caseInsensitive {
                            if a &- 65 < 26 { a |= 0x20 }
                            if b &- 65 < 26 { b |= 0x20 }
                        }
                        if a != b { return false }
                    }
                    return true
                }
                let found: Bool
                if anchored {
                    found = equalAt(backwards ? text.count - pattern.count : 0)
                } else {
                    found = (0...(text.count - pattern.count)).contains { equalAt($0) }
                }
                return .integer(found ? 1 : 0)
            }
        }
    }

    private static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        for byte in bytes where byte >= 0x80 { return false }
        return true
    }

    /// The predicate options encoded in `NSCoreDataStringSearch` flags.
    public static func options(fromSearchFlags flags: Int64) -> FLComparison.Options {
        if flags & 0x2 != 0 { return .normalized }
        var options: FLComparison.Options = []
        if flags & 0x1 != 0 { options.insert(.caseInsensitive) }
        if flags & 0x80 != 0 { options.insert(.diacriticInsensitive) }
        if flags & 0x20 != 0 { options.insert(.localeSensitive) }
        return options
    }

    private static func string(_ value: SQLValue) -> String? {
        switch value {
        case .null: return nil
        case .text(let s): return s
        case .integer(let i): return String(i)
        case .real(let d): return SQLValue.format(d)
        case .blob(let d): return String(decoding: d, as: UTF8.self)
        }
    }

    private static func result(_ b: Bool) -> SQLValue { .integer(b ? 1 : 0) }
}

/// A value a store trigger changed and reported through a trigger helper function.
public struct TriggerReport: Sendable, Hashable {
    /// The table of the changed row (`ZASSET`).
    public var table: String
    /// The row's `Z_ENT`.
    public var entityNumber: Int
    /// The row's `Z_PK`.
    public var primaryKey: Int64
    /// The property (derived-attribute triggers) or column (counter triggers) that changed.
    public var name: String
    /// The new value.
    public var value: SQLValue
}

/// The reports of a connection's triggers, collected while a save runs.
public final class TriggerReports: @unchecked Sendable {  // `list` is only touched under `lock`
    private let lock = NSLock()
    private var list: [TriggerReport] = []

    /// An empty collection.
    public init() {}

    /// Adds a report.
    func append(_ report: TriggerReport) { lock.withLock { list.append(report) } }

    /// Returns the reports so far and forgets them.
    public func drain() -> [TriggerReport] {
        lock.withLock {
            defer { list.removeAll() }
            return list
        }
    }
}
