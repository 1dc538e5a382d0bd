import FaultlineSQL
import Foundation

/// The SQL functions and collations Core Data registers on every connection, so stores whose
/// triggers call them work and Faultline's own SQL can use them.
public enum CoreDataFunctions {
    /// Registers the functions and collations on a connection.
    public static func register(on connection: Connection) throws {
        try connection.createFunction("NSCoreDataNow", argumentCount: 0, deterministic: false) { _ in
            .real(Date().timeIntervalSinceReferenceDate)
        }
        try connection.createCollation("NSCollateNoCase") { a, b in a.compare(b, options: [.caseInsensitive]) }
        try connection.createCollation("NSCollateNumericallyNoCase") { a, b in a.compare(b, options: [.caseInsensitive, .numeric]) }
        try connection.createCollation("NSCollateLocaleSensitive") { a, b in a.compare(b, options: [], range: nil, locale: Locale.current) }
        try connection.createCollation("NSCollateLocaleSensitiveNoCase") { a, b in a.compare(b, options: [.caseInsensitive], range: nil, locale: Locale.current) }
        try connection.createCollation("NSCollateFinderlike") { a, b in a.compare(b, options: [.caseInsensitive, .numeric, .widthInsensitive], range: nil, locale: Locale.current) }
    }
}
