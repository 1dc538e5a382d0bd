import FaultlineModel
import FaultlinePredicate
import FaultlineSQL
import Foundation

/// Translates predicates and sort descriptors into the SQL text Core Data's SQLite store
/// generates: the `WHERE` fragment, the `JOIN`s it needs, the `ORDER BY` list, and the
/// bound values (never pasted into the text).
///
/// The fetched entity's table is `t0`; every join or correlated subselect takes the next
/// alias (`t1`, `t2`, …). Fragments keep Core Data's spacing: a column reference is written
/// with a leading space, so `WHERE ` + fragment gives `WHERE  t0.ZNAME = ?`.
///
/// Call ``whereClause(_:includesSubentities:)`` and ``orderByClause(_:)`` first, then read
/// ``joins``, ``needsDistinct`` and ``arguments``:
///
/// ```swift
/// var generator = try PredicateSQL(mapping: mapping, entityName: "Word")
/// let predicate = try FLPredicate(format: "wordCategory.firstLetter == %@", "s")
/// let whereText = try generator.whereClause(predicate)
/// let orderText = try generator.orderByClause([FLSortDescriptor(key: "text")])
/// var sql = "SELECT " + (generator.needsDistinct ? "DISTINCT " : "") + "0, t0.Z_PK, t0.Z_OPT FROM ZWORD t0"
/// sql += generator.joins                                  // " JOIN ZWORDCATEGORY t1 ON t0.ZWORDCATEGORY = t1.Z_PK"
/// if let whereText { sql += " WHERE " + whereText }      // " WHERE  t1.ZFIRSTLETTER = ?"
/// if let orderText { sql += " ORDER BY " + orderText }   // " ORDER BY t0.ZTEXT"
/// try statement.bind(generator.arguments)                 // [.text("s")]
/// ```
///
/// Shapes (Core Data's where known, see the SQL-log reference §4):
/// - `attr == x` → ` t0.ZATTR = ?`; `!=` → `<>`; `== nil` → ` t0.ZATTR IS NULL`.
/// - `AND`/`OR` → `(a AND b)`; `NOT p` → `NOT (p)`.
/// - to-one key paths → `JOIN ZDEST t1 ON t0.ZREL = t1.Z_PK` (`LEFT OUTER JOIN` under `OR`/`NOT`
///   or for nil tests, so rows without a destination are kept).
/// - `ANY toMany.attr == x` → a join per `ANY` (through the join table for many-to-many),
///   with `SELECT DISTINCT` (``needsDistinct``).
/// - `NONE`/`ALL` → a correlated `(SELECT COUNT(…) … ) = ?` bound to 0, except
///   `NONE toMany != nil`, which keeps Core Data's `LEFT OUTER JOIN … NOT ( t1.X IS NOT NULL)`.
/// - `toMany.@count`, `@sum/@avg/@min/@max`, `SUBQUERY(…).@count` → correlated subselects
///   `(SELECT COUNT(t1.Z_PK) FROM ZDEST t1 WHERE (t0.Z_PK = t1.ZINV) )`.
/// - `CONTAINS`/`BEGINSWITH`/`ENDSWITH` → ` NSCoreDataStringSearch( t0.ZX, ?, flags, locale)`,
///   `LIKE` → ` NSCoreDataLike( t0.ZX, ?, opts )`, `MATCHES` → ` NSCoreDataMatches( t0.ZX, ?, opts )`.
/// - dates are bound as seconds since 2001-01-01, booleans as 0/1, objects as their `Z_PK`.
public struct PredicateSQL {
    /// The schema mapping queried.
    public let mapping: SchemaMapping
    /// The fetched entity.
    public let entity: EntityDescription
    /// The fetched entity's mapping.
    public let entityMapping: EntityMapping

    /// The bound values, in the order their `?` appear in the `WHERE` text.
    public internal(set) var arguments: [SQLValue] = []
    /// Whether the joins can repeat rows of `t0`, so the SELECT needs `DISTINCT`
    /// (and a count needs `COUNT(DISTINCT t0.Z_PK)`).
    public internal(set) var needsDistinct = false
    /// Whether the predicate is known to be false (`FALSEPREDICATE`); Core Data then logs
    /// `logically false fetch request … short circuits.` and runs no SQL.
    public internal(set) var isLogicallyFalse = false

    /// The JOIN text for the `FROM` clause, each with a leading space
    /// (` JOIN ZWORDCATEGORY t1 ON t0.ZWORDCATEGORY = t1.Z_PK`); empty when none.
    public var joins: String { scopes[0].joinText }

    /// The query levels being generated: the fetch itself, then nested subselects.
    var scopes: [Scope]
    var nextAlias = 1
    /// The aliases of the to-many joined last by an `ANY` (join table, destination, and the
    /// destination join still to add after a join table).
    var lastToMany: (joinAlias: String, destinationAlias: String, pending: (String, String, Bool)?)?
    /// Variables a `HAVING` predicate may name, with the SQL alias of the value selected for
    /// each (`count` → `__var0`); see `PredicateSQL+Select.swift`.
    var selectAliases: [String: String] = [:]

    /// Creates a generator for fetches of one entity.
    /// - Throws: ``PredicateSQLError`` when the model has no such entity.
    public init(mapping: SchemaMapping, entityName: String) throws {
        guard let entity = mapping.model.entity(named: entityName), let em = mapping.entity(entityName) else {
            throw PredicateSQLError("entity \(entityName) not found in the model")
        }
        self.mapping = mapping
        self.entity = entity
        self.entityMapping = em
        self.scopes = [Scope(entity: entity, alias: "t0", variable: nil)]
    }

    // MARK: - Public entry points

    /// The `WHERE` fragment for a predicate plus the `Z_ENT` filter the entity needs, or nil
    /// when nothing filters (no predicate or `TRUEPREDICATE`, and no filter).
    ///
    /// Binds are appended to ``arguments``. The fragment does not include the keyword:
    /// write `" WHERE " + fragment`. With both a predicate and a `Z_ENT` filter the result is
    /// `( <predicate> AND  t0.Z_ENT = ?)`.
    ///
    /// - Parameters:
    ///   - predicate: the fetch predicate, if any.
    ///   - includesSubentities: `FetchRequest.includesSubentities`.
    /// - Throws: ``PredicateSQLError`` with Core Data's wording for predicates its SQL store
    ///   rejects (`keypath foo not found in entity Recipe`, `to-many key not allowed here`, …).
    public mutating func whereClause(_ predicate: FLPredicate?, includesSubentities: Bool = true) throws -> String? {
        var parts: [Piece] = []
        if let predicate {
            do {
                try FLNestingDepth.check(predicate)
            } catch {
                throw PredicateSQLError("the predicate is nested too deeply for SQL (more than \(FLNestingDepth.maximum) levels of predicates and expressions)")
            }
            let simplified = PredicateSQL.fold(predicate)
            switch simplified.node {
            case .constant(true): break
            case .constant(false):
                isLogicallyFalse = true
                parts.append(Piece(" 0 = 1"))
            default:
                parts.append(try self.predicate(simplified, Context()))
            }
        }
        if let filter = entityFilter(includesSubentities: includesSubentities) { parts.append(filter) }
        guard !parts.isEmpty else { return nil }
        let result = parts.count == 1 ? parts[0] : Piece.join(parts, " AND ", parenthesized: true)
        arguments += result.arguments
        return result.text
    }

    /// The `ORDER BY` list for sort descriptors (without the keyword), or nil when empty.
    ///
    /// `t0.ZNAME`, `t0.ZNAME DESC`, `t1.ZNAME` through a to-one path (a `LEFT OUTER JOIN`
    /// is added to ``joins``), and string collations for the comparison selectors:
    /// `caseInsensitiveCompare:` → `COLLATE NSCollateNoCase `, `localizedCompare:` →
    /// `COLLATE NSCollateLocaleSensitive `, `localizedCaseInsensitiveCompare:` →
    /// `COLLATE NSCollateLocaleSensitiveNoCase `, `localizedStandardCompare:` →
    /// `COLLATE NSCollateFinderlike ` (the trailing space is Core Data's:
    /// `ORDER BY t0.ZNAME COLLATE NSCollateLocaleSensitive , t0.Z_PK`).
    ///
    /// - Throws: ``PredicateSQLError`` for unknown keys, to-many keys and `@count`.
    public mutating func orderByClause(_ sortDescriptors: [FLSortDescriptor]) throws -> String? {
        guard !sortDescriptors.isEmpty else { return nil }
        var items: [String] = []
        for sort in sortDescriptors {
            // `self` and `objectID` sort by the primary key, as Core Data does.
            if sort.key == "self" || sort.key == "objectID" {
                items.append("t0.Z_PK" + (sort.ascending ? "" : " DESC"))
                continue
            }
            let components = PredicateSQL.keyPathComponents(sort.key)
            var context = Context()
            context.outerJoins = true
            context.display = sort.key
            if components.contains(where: { $0.hasPrefix("@") }) { throw PredicateSQLError("to-many key not allowed here") }
            let root = scopes[0].base
            let resolved = try resolveKeyPath(components[...], from: root, context, anyJoin: false, allowToMany: false, display: sort.key)
            var text: String
            switch resolved {
            case .column(let t, _): text = t
            case .object(let t, _): text = t
            case .toMany, .collection: throw PredicateSQLError("to-many key not allowed here")
            }
            text = text.trimmingCharacters(in: .whitespaces)
            if let collation = PredicateSQL.collation(for: sort.comparator) { text += " COLLATE \(collation) " }
            if !sort.ascending { text += " DESC" }
            items.append(text)
        }
        return items.joined(separator: ", ")
    }

    /// The collation Core Data uses for a sort comparator, if any.
    public static func collation(for comparator: FLSortDescriptor.Comparator) -> String? {
        switch comparator {
        case .compare: return nil
        case .caseInsensitiveCompare: return "NSCollateNoCase"
        case .localizedCompare: return "NSCollateLocaleSensitive"
        case .localizedCaseInsensitiveCompare: return "NSCollateLocaleSensitiveNoCase"
        case .localizedStandardCompare: return "NSCollateFinderlike"
        }
    }

    /// The `NSCoreDataStringSearch` flags for an operator and options (reference §7.3):
    /// `[c]` 0x101, `[d]` 0x180, `[l]` 0x120, `[n]` replaces them with 0x002; BEGINSWITH adds 8,
    /// ENDSWITH 12. `CONTAINS[cdl]` is 417.
    public static func stringSearchFlags(_ op: FLComparison.Operator, _ options: FLComparison.Options) -> Int {
        var flags = 0
        if options.contains(.normalized) {
            flags = 0x002
        } else {
            if options.contains(.caseInsensitive) { flags |= 0x001 | 0x100 }
            if options.contains(.diacriticInsensitive) { flags |= 0x080 | 0x100 }
            if options.contains(.localeSensitive) { flags |= 0x020 | 0x100 }
        }
        switch op {
        case .beginsWith: flags += 0x008
        case .endsWith: flags += 0x00C
        default: break
        }
        return flags
    }

    // MARK: - Z_ENT filter

    func entityFilter(includesSubentities: Bool) -> Piece? {
        guard let table = mapping.table(named: entityMapping.table), table.entityNumbers.count > 1 else { return nil }
        let range = entityMapping.subtreeNumbers
        if !includesSubentities || range.lowerBound == range.upperBound {
            return Piece(" t0.Z_ENT = ?", [.integer(Int64(entityMapping.entityNumber))])
        }
        if range.count == table.entityNumbers.count { return nil }
        return Piece("( t0.Z_ENT >= ? AND  t0.Z_ENT <= ?)", [.integer(Int64(range.lowerBound)), .integer(Int64(range.upperBound))])
    }

    // MARK: - Folding constants

    /// Removes `TRUEPREDICATE`/`FALSEPREDICATE` from compounds where they decide nothing.
    static func fold(_ p: FLPredicate) -> FLPredicate {
        switch p.node {
        case .constant, .comparison: return p
        case .not(let inner):
            let f = fold(inner)
            if case .constant(let b) = f.node { return FLPredicate(.constant(!b)) }
            return FLPredicate(.not(f))
        case .and(let items):
            var kept: [FLPredicate] = []
            for item in items.map(fold) {
                if case .constant(let b) = item.node {
                    if !b { return .falsePredicate }
                    continue
                }
                kept.append(item)
            }
            return FLPredicate.and(kept)
        case .or(let items):
            var kept: [FLPredicate] = []
            for item in items.map(fold) {
                if case .constant(let b) = item.node {
                    if b { return .truePredicate }
                    continue
                }
                kept.append(item)
            }
            return FLPredicate.or(kept)
        }
    }
}

/// A predicate or sort descriptor the SQLite store cannot translate, in Core Data's words.
public struct PredicateSQLError: Error, Sendable, Hashable, CustomStringConvertible, LocalizedError {
    /// The message (`keypath foo not found in entity Recipe`).
    public var message: String

    /// Creates an error.
    public init(_ message: String) { self.message = message }

    /// The message.
    public var description: String { message }
    /// The message, for `localizedDescription`.
    public var errorDescription: String? { message }
}

// MARK: - Internal model

extension PredicateSQL {
    /// A fragment of SQL text with the values bound by its `?`s, in order.
    struct Piece {
        var text: String
        var arguments: [SQLValue] = []

        init(_ text: String, _ arguments: [SQLValue] = []) {
            self.text = text
            self.arguments = arguments
        }

        static func join(_ pieces: [Piece], _ separator: String, parenthesized: Bool) -> Piece {
            var p = Piece(pieces.map(\.text).joined(separator: separator), pieces.flatMap(\.arguments))
            if parenthesized { p.text = "(" + p.text + ")" }
            return p
        }
    }

    /// The components of a key path (`owner.name` → `owner`, `name`; empty ones kept), split
    /// on its UTF-8 bytes: the generic `split` costs more than the rest of resolving a path.
    static func keyPathComponents(_ path: String) -> [String] {
        // Non-ASCII: split on Characters, where a "." followed by a combining mark is not a dot.
        guard path.utf8.allSatisfy({ $0 < 0x80 }) else {
            return path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        }
        var result: [String] = []
        let utf8 = path.utf8
        var start = utf8.startIndex
        var i = start
        while i != utf8.endIndex {
            if utf8[i] == UInt8(ascii: ".") {
                result.append(String(path[start..<i]))
                start = utf8.index(after: i)
            }
            i = utf8.index(after: i)
        }
        result.append(String(path[start..<utf8.endIndex]))
        return result
    }

    /// Where generation is: under an `OR` or `NOT` joins must keep rows without a match.
    struct Context {
        /// Under `OR` or `NOT`: joins must be `LEFT OUTER`.
        var outerJoins = false
        /// Under `NOT`: `ANY` cannot use a join (it would test rows, not objects).
        var negated = false
        /// The comparison being translated, for error messages: printed only when one is made.
        var subject: Subject = .text("")

        /// What ``display`` shows.
        enum Subject {
            case text(String)
            case comparison(FLComparison, negated: Bool)
        }

        /// The comparison being translated, as text.
        var display: String {
            get {
                switch subject {
                case .text(let text): return text
                case .comparison(let c, let negated): return (negated ? "NOT " : "") + FLPredicate(.comparison(c)).predicateFormat
                }
            }
            set { subject = .text(newValue) }
        }
    }

    /// A join emitted in a `FROM` clause.
    struct Join {
        var table: String
        var alias: String
        var on: String
        var outer: Bool

        var text: String { " \(outer ? "LEFT OUTER JOIN" : "JOIN") \(table) \(alias) ON \(on)" }
    }

    /// An object row a key path starts from: a table alias and its entity.
    struct Base {
        var alias: String
        var entity: EntityDescription
        /// The joins path that reached it (for reusing to-one joins).
        var pathKey: String
    }

    /// The FROM-level state of one query level: the top-level fetch or a correlated subselect.
    struct Scope {
        var base: Base
        var variable: String?
        var joins: [Join] = []
        var toOneJoins: [String: Int] = [:]
        /// Whether a to-many join was added (rows may repeat).
        var hasToManyJoin = false

        init(entity: EntityDescription, alias: String, variable: String?) {
            self.base = Base(alias: alias, entity: entity, pathKey: alias)
            self.variable = variable
        }

        var joinText: String { joins.map(\.text).joined() }
    }

    /// What a key path resolves to.
    enum Resolved {
        /// An attribute column (` t0.ZNAME`) and its type.
        case column(String, AttributeType)
        /// An object key: `t0.Z_PK` for SELF or a foreign key for a to-one; the entity reached.
        case object(String, EntityDescription)
        /// A to-many relationship from a base (only valid under ANY/ALL/NONE, IN, @count…).
        case toMany(Base, RelationshipDescription)
        /// A value computed by a correlated subselect (`@count`, `@sum`…).
        case collection(Piece, AttributeType?)
    }
}
