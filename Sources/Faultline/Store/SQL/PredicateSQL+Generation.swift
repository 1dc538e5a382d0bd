import FaultlineModel
import FaultlinePredicate
import FaultlineSQL
import Foundation

extension PredicateSQL {
    /// An operand of a comparison after translation.
    enum Operand {
        /// A constant, bound once the other side's type is known.
        case constant(FLValue)
        /// SQL text (with its binds) and what it holds.
        case sql(Piece, ValueKind)
        /// A to-many relationship (for membership tests: `x IN toMany`, `toMany CONTAINS x`).
        case toMany(Base, RelationshipDescription)
        /// A list of operands (`{a, b}` with non-constant elements).
        case list([Operand])
    }

    /// What a SQL operand holds, to bind the other side correctly.
    enum ValueKind: Equatable {
        case attribute(AttributeType)
        case object
        case number
        case string
    }

    /// How a to-many relationship is stored.
    enum ToManyHop {
        /// A foreign key in the destination table (`ZITEM.ZORDER`).
        case foreignKey(table: String, column: String, destination: EntityDescription)
        /// A many-to-many join table.
        case joinTable(table: String, near: String, far: String, destination: EntityDescription)

        var destination: EntityDescription {
            switch self {
            case .foreignKey(_, _, let d), .joinTable(_, _, _, let d): return d
            }
        }
    }

    mutating func allocateAlias() -> String {
        defer { nextAlias += 1 }
        return "t\(nextAlias)"
    }

    func unimplemented(_ context: Context) -> PredicateSQLError {
        PredicateSQLError("unimplemented SQL generation for predicate : (\(context.display))")
    }

    // MARK: - Predicates

    mutating func predicate(_ p: FLPredicate, _ context: Context) throws -> Piece {
        switch p.node {
        case .constant(let b):
            return Piece(b ? " 1 = 1" : " 0 = 1")
        case .and(let items):
            var pieces: [Piece] = []
            for item in items { pieces.append(try predicate(item, context)) }
            return Piece.join(pieces, " AND ", parenthesized: true)
        case .or(let items):
            var inner = context
            inner.outerJoins = true
            var pieces: [Piece] = []
            for item in items { pieces.append(try predicate(item, inner)) }
            return Piece.join(pieces, " OR ", parenthesized: true)
        case .not(let inner):
            if case .comparison(let c) = inner.node, c.modifier == .any {
                return try none(c, context)
            }
            var ctx = context
            ctx.outerJoins = true
            ctx.negated = true
            let piece = try predicate(inner, ctx)
            return Piece("NOT (" + piece.text + ")", piece.arguments)
        case .comparison(let c):
            var ctx = context
            ctx.subject = .comparison(c, negated: false)
            switch c.modifier {
            case .direct: return try comparison(c, ctx, anyJoin: false)
            case .any:
                if context.negated {
                    // Under NOT a join would test rows; count matching elements instead.
                    return try quantified(c, ctx, countCondition: " > ?", negateInner: false)
                }
                return try comparison(c, ctx, anyJoin: true)
            case .all:
                return try quantified(c, ctx, countCondition: " = ?", negateInner: true)
            }
        }
    }

    /// `NONE toMany.x op y` (parsed as `NOT (ANY …)`).
    mutating func none(_ c: FLComparison, _ context: Context) throws -> Piece {
        var ctx = context
        ctx.subject = .comparison(c, negated: true)
        // Core Data's shape for `NONE toMany != nil`: LEFT OUTER JOIN … WHERE NOT ( t1.X IS NOT NULL).
        if c.op == .notEqualTo, c.right.constantValue == .null, case .keyPath(let path) = c.left.node {
            let components = PredicateSQL.keyPathComponents(path)
            if let last = components.last, !last.hasPrefix("@") {
                var probe = ctx
                probe.outerJoins = true
                let current = scopes[scopes.count - 1].base
                let resolved = try resolveKeyPath(components[...], from: current, probe,
                                                  anyJoin: false, allowToMany: true, display: path)
                if case .toMany(let base, let rel) = resolved {
                    let key = try expandToMany(base, rel, outer: true)
                    return Piece("NOT (" + key.text + " IS NOT NULL)")
                }
            }
        }
        return try quantified(c, ctx, countCondition: " = ?", negateInner: false)
    }

    /// `ANY`/`ALL`/`NONE` as a correlated count over the first to-many of the left key path:
    /// `(SELECT COUNT(t1.Z_PK) FROM ZTAG t1 WHERE (t0.Z_PK = t1.ZITEM AND  t1.ZNAME = ?) ) = ?`.
    mutating func quantified(_ c: FLComparison, _ context: Context, countCondition: String, negateInner: Bool) throws -> Piece {
        let (base, path): (Base, String)
        switch c.left.node {
        case .keyPath(let p): (base, path) = (scopes[scopes.count - 1].base, p)
        case .member(let e, let p):
            guard case .variable(let v) = e.node, let b = variableBaseFor(v) else { throw unimplemented(context) }
            (base, path) = (b, p)
        default:
            throw PredicateSQLError("Unable to generate SQL for predicate (\(context.display)) (problem on LHS)")
        }
        let components = PredicateSQL.keyPathComponents(path)
        // Split at the first to-many: prefix (to-ones and the to-many) and the rest.
        var entity = base.entity
        var split: Int?
        for (i, name) in components.enumerated() {
            guard let rel = entity.relationship(named: name) else { break }
            if rel.isToMany { split = i; break }
            guard let next = mapping.model.entity(named: rel.destinationEntityName) else { break }
            entity = next
        }
        guard let split else {
            // No to-many: the quantifier changes nothing.
            var direct = c
            direct.modifier = .direct
            let piece = try comparison(direct, context, anyJoin: false)
            if countCondition == " > ?" || negateInner { return piece }
            return Piece("NOT (" + piece.text + ")", piece.arguments)
        }
        let prefix = components[...split]
        let rest = components[(split + 1)...]
        let resolved = try resolveKeyPath(prefix, from: base, context, anyJoin: false, allowToMany: true, display: path)
        guard case .toMany(let ownerBase, let rel) = resolved else { throw unimplemented(context) }
        let variable = "__quantified\(nextAlias)"
        let element: FLExpression = rest.isEmpty ? .variable(variable) : FLExpression(.member(.variable(variable), keyPath: rest.joined(separator: ".")))
        var inner = FLComparison(element, c.op, c.right, modifier: .direct, options: c.options)
        if restHasToMany(rel, Array(rest)) {
            inner.modifier = .any
        }
        var innerPredicate = FLPredicate(.comparison(inner))
        if negateInner { innerPredicate = .not(innerPredicate) }
        let count = try subselect(ownerBase, rel, variable: variable, predicate: innerPredicate, context)
        return Piece(count.text + countCondition, count.arguments + [.integer(0)])
    }

    func restHasToMany(_ rel: RelationshipDescription, _ rest: [String]) -> Bool {
        guard var entity = mapping.model.entity(named: rel.destinationEntityName) else { return false }
        for name in rest {
            guard let r = entity.relationship(named: name) else { return false }
            if r.isToMany { return true }
            guard let next = mapping.model.entity(named: r.destinationEntityName) else { return false }
            entity = next
        }
        return false
    }

    // MARK: - Comparisons

    mutating func comparison(_ c: FLComparison, _ context: Context, anyJoin: Bool) throws -> Piece {
        let left = try operand(c.left, context, anyJoin: anyJoin, allowToMany: c.op == .contains)
        let right = try operand(c.right, context, anyJoin: false, allowToMany: c.op == .in)

        // Membership in a to-many relationship: `x IN toMany`, `toMany CONTAINS x`.
        if c.op == .in, case .toMany(let base, let rel) = right {
            return try membership(base, rel, value: c.left, context)
        }
        if c.op == .contains, case .toMany(let base, let rel) = left {
            return try membership(base, rel, value: c.right, context)
        }
        if case .toMany = left { throw PredicateSQLError("to-many key not allowed here") }
        if case .toMany = right { throw PredicateSQLError("to-many key not allowed here") }

        switch c.op {
        case .equalTo, .notEqualTo:
            let isEqual = c.op == .equalTo
            if case .constant(let v) = right, v.isNull {
                if case .constant(let l) = left, l.isNull { return Piece(isEqual ? " 1 = 1" : " 0 = 1") }
                let l = try sqlPiece(left, otherKind: nil, context)
                return Piece(l.text + (isEqual ? " IS NULL" : " IS NOT NULL"), l.arguments)
            }
            if case .constant(let v) = left, v.isNull {
                let r = try sqlPiece(right, otherKind: nil, context)
                return Piece(r.text + (isEqual ? " IS NULL" : " IS NOT NULL"), r.arguments)
            }
            if !stringOptions(c.options).isEmpty, isStringish(left) || isStringish(right) {
                return try stringCompare(c, left, right, context)
            }
            return try binary(left, isEqual ? " = " : " <> ", right, context)
        case .lessThan, .lessThanOrEqualTo, .greaterThan, .greaterThanOrEqualTo:
            if case .constant(let v) = right, v.isNull { throw PredicateSQLError("illegal comparison with NULL") }
            if case .constant(let v) = left, v.isNull { throw PredicateSQLError("can't use NULL on left hand side") }
            if !stringOptions(c.options).isEmpty, isStringish(left) || isStringish(right) {
                return try stringCompare(c, left, right, context)
            }
            return try binary(left, " " + c.op.symbol + " ", right, context)
        case .beginsWith, .endsWith, .contains:
            if c.op == .contains, case .constant(let v) = left, let items = constantItems(v) {
                return try inList(right, items.map { .constant($0) }, context)
            }
            if c.op == .contains, case .list(let items) = left { return try inList(right, items, context) }
            if c.op == .beginsWith, c.options.contains(.normalized), case .constant(.string(let prefix)) = right, !prefix.isEmpty {
                let l = try sqlPiece(left, otherKind: .string, context)
                var units = Array(prefix.utf16)
                units[units.count - 1] &+= 1
                let upper = String(decoding: units, as: UTF16.self)
                return Piece("(" + l.text + " >= ? AND " + l.text + " < ?)", l.arguments + [.text(prefix)] + l.arguments + [.text(upper)])
            }
            return try stringSearch(c.op, left, right, c.options, context)
        case .like, .matches:
            guard c.op == .like || c.op == .matches else { throw unimplemented(context) }
            let l = try sqlPiece(left, otherKind: .string, context)
            let r = try sqlPiece(right, otherKind: .string, context)
            let name = c.op == .like ? "NSCoreDataLike" : "NSCoreDataMatches"
            let opts = c.options.rawValue & 3
            return Piece(" \(name)(" + l.text + ", " + r.text + ", \(opts) )", l.arguments + r.arguments)
        case .in:
            if case .constant(let v) = right, let items = constantItems(v) {
                return try inList(left, items.map { .constant($0) }, context)
            }
            if case .list(let items) = right { return try inList(left, items, context) }
            // Substring: `x IN "text"` is `"text" CONTAINS x`.
            return try stringSearch(.contains, right, left, c.options, context)
        case .between:
            let bounds: [Operand]
            if case .constant(let v) = right, let items = constantItems(v), items.count == 2 {
                bounds = items.map { .constant($0) }
            } else if case .list(let items) = right, items.count == 2 {
                bounds = items
            } else {
                throw PredicateSQLError("Unable to generate SQL for predicate (\(context.display)) (problem on RHS)")
            }
            let l = try sqlPiece(left, otherKind: nil, context)
            let kind = kindOf(left)
            let low = try sqlPiece(bounds[0], otherKind: kind, context)
            let high = try sqlPiece(bounds[1], otherKind: kind, context)
            return Piece("(" + l.text + " BETWEEN " + low.text + " AND " + high.text + ")", l.arguments + low.arguments + high.arguments)
        case .utiConformsTo, .utiEquals:
            throw PredicateSQLError("Unknown/unsupported comparison predicate operator type")
        }
    }

    func stringOptions(_ options: FLComparison.Options) -> FLComparison.Options {
        options.intersection([.caseInsensitive, .diacriticInsensitive, .localeSensitive, .normalized])
    }

    func isStringish(_ o: Operand) -> Bool {
        switch o {
        case .constant(.string): return true
        case .sql(_, .attribute(let t)): return t == .string || t == .uri
        case .sql(_, .string): return true
        default: return false
        }
    }

    func kindOf(_ o: Operand) -> ValueKind? {
        if case .sql(_, let k) = o { return k }
        return nil
    }

    func constantItems(_ v: FLValue) -> [FLValue]? {
        switch v {
        case .array(let items): return items
        case .dictionary(let d): return d.keys.sorted().compactMap { d[$0] }
        default: return nil
        }
    }

    /// `left op right`, binding constants against the other side's type.
    mutating func binary(_ left: Operand, _ op: String, _ right: Operand, _ context: Context) throws -> Piece {
        let l = try sqlPiece(left, otherKind: kindOf(right), context)
        let r = try sqlPiece(right, otherKind: kindOf(left), context)
        return Piece(l.text + op + r.text, l.arguments + r.arguments)
    }

    /// ` t0.ZX IN (?,?)` (empty list: never true).
    mutating func inList(_ left: Operand, _ items: [Operand], _ context: Context) throws -> Piece {
        let l = try sqlPiece(left, otherKind: nil, context)
        let kind = kindOf(left)
        var texts: [String] = []
        var args = l.arguments
        for item in items {
            if case .constant(let v) = item, v.isNull { continue }
            let p = try sqlPiece(item, otherKind: kind, context)
            texts.append(p.text)
            args += p.arguments
        }
        return Piece(l.text + " IN (" + texts.joined(separator: ",") + ")", args)
    }

    /// ` NSCoreDataStringSearch( t0.ZX, ?, flags, locale)`.
    mutating func stringSearch(_ op: FLComparison.Operator, _ left: Operand, _ right: Operand, _ options: FLComparison.Options, _ context: Context) throws -> Piece {
        let l = try sqlPiece(left, otherKind: .string, context)
        let r = try sqlPiece(right, otherKind: .string, context)
        let flags = PredicateSQL.stringSearchFlags(op, options)
        let locale = options.contains(.localeSensitive) ? 1 : 0
        return Piece(" NSCoreDataStringSearch(" + l.text + ", " + r.text + ", \(flags), \(locale))", l.arguments + r.arguments)
    }

    /// Option-bearing `==`, `!=`, `<`…: ` NSCoreDataStringCompare( t0.ZX, ?, op, flags, locale)`,
    /// true when `compare(left, right) op 0` with the `NSCoreDataStringSearch` flags.
    /// (Core Data registers a 5-argument function of this name; its argument layout is not
    /// documented, so this layout is Faultline's own.)
    mutating func stringCompare(_ c: FLComparison, _ left: Operand, _ right: Operand, _ context: Context) throws -> Piece {
        let l = try sqlPiece(left, otherKind: .string, context)
        let r = try sqlPiece(right, otherKind: .string, context)
        let flags = PredicateSQL.stringSearchFlags(.equalTo, c.options)
        let locale = c.options.contains(.localeSensitive) ? 1 : 0
        return Piece(" NSCoreDataStringCompare(" + l.text + ", " + r.text + ", \(c.op.rawValue), \(flags), \(locale))", l.arguments + r.arguments)
    }

    /// `x IN toMany` / `toMany CONTAINS x`: `ANY toMany == x` through a join (or a count
    /// under `NOT`).
    mutating func membership(_ base: Base, _ rel: RelationshipDescription, value: FLExpression, _ context: Context) throws -> Piece {
        if context.negated {
            let variable = "__member\(nextAlias)"
            let inner = FLPredicate.comparison(.variable(variable), .equalTo, value)
            let count = try subselect(base, rel, variable: variable, predicate: inner, context)
            return Piece(count.text + " > ?", count.arguments + [.integer(0)])
        }
        let key = try expandToMany(base, rel, outer: context.outerJoins)
        let right = try operand(value, context, anyJoin: false, allowToMany: false)
        return try binary(.sql(key, .object), " = ", right, context)
    }

    // MARK: - Operands

    mutating func operand(_ e: FLExpression, _ context: Context, anyJoin: Bool, allowToMany: Bool) throws -> Operand {
        switch e.node {
        case .constant(let v):
            return .constant(v)
        case .evaluatedObject:
            return .sql(Piece(" t0.Z_PK"), .object)
        case .variable(let name):
            if let alias = selectAliases[name] { return .sql(Piece(alias), .number) }
            guard let base = variableBaseFor(name) else {
                throw PredicateSQLError("Can't get value for '\(name)' in bindings (substitute variables before fetching)")
            }
            return .sql(Piece(" \(base.alias).Z_PK"), .object)
        case .keyPath(let path):
            let current = scopes[scopes.count - 1].base
            return try keyPathOperand(path, from: current, context, anyJoin: anyJoin, allowToMany: allowToMany)
        case .member(let baseExpression, let path):
            switch baseExpression.node {
            case .variable(let name):
                guard let base = variableBaseFor(name) else {
                    throw PredicateSQLError("Can't get value for '\(name)' in bindings (substitute variables before fetching)")
                }
                return try keyPathOperand(path, from: base, context, anyJoin: anyJoin, allowToMany: allowToMany)
            case .subquery(let collection, let variable, let p):
                guard path == "@count" else { throw unimplemented(context) }
                let owner = try operand(collection, context, anyJoin: false, allowToMany: true)
                guard case .toMany(let base, let rel) = owner else {
                    throw PredicateSQLError("Unable to generate SQL for predicate (\(context.display)) (SUBQUERY needs a to-many relationship)")
                }
                return .sql(try subselect(base, rel, variable: variable, predicate: p, context), .number)
            default:
                throw unimplemented(context)
            }
        case .aggregate(let items):
            var out: [Operand] = []
            for item in items { out.append(try operand(item, context, anyJoin: false, allowToMany: false)) }
            return .list(out)
        case .function(let name, let args):
            if args.allSatisfy({ $0.constantValue != nil }), !["random", "randomn:", "now"].contains(name) {
                if let v = try? e.value(with: nil), let c = FLValue(converting: v) { return .constant(c) }
            }
            var pieces: [Operand] = []
            for a in args { pieces.append(try operand(a, context, anyJoin: anyJoin, allowToMany: false)) }
            return try function(name, pieces, context)
        case .cast(let value, let type):
            if value.constantValue != nil, let v = try? e.value(with: nil), let c = FLValue(converting: v) { return .constant(c) }
            if type == "NSNumber" { return try operand(value, context, anyJoin: anyJoin, allowToMany: false) }
            throw unimplemented(context)
        case .subquery:
            throw PredicateSQLError("Unable to generate SQL for predicate (\(context.display)) (SUBQUERY must be followed by .@count)")
        case .customFunction, .conditional, .index, .assignment, .fetch, .anyKey:
            throw unimplemented(context)
        }
    }

    func variableBaseFor(_ name: String) -> Base? {
        for scope in scopes.reversed() where scope.variable == name { return scope.base }
        return nil
    }

    /// Functions with a SQL equivalent.
    mutating func function(_ name: String, _ args: [Operand], _ context: Context) throws -> Operand {
        func piece(_ i: Int, _ kind: ValueKind? = .number) throws -> Piece { try sqlPiece(args[i], otherKind: kind, context) }
        let arithmetic: [String: String] = [
            "add:to:": "+", "from:subtract:": "-", "multiply:by:": "*", "divide:by:": "/", "modulus:by:": "%",
        ]
        if let op = arithmetic[name], args.count == 2 {
            let kind = kindOf(args[0]) ?? kindOf(args[1]) ?? .number
            let a = try piece(0, kind), b = try piece(1, kind)
            return .sql(Piece("(" + a.text + " " + op + " " + b.text + ")", a.arguments + b.arguments), .number)
        }
        let unary: [String: (String, ValueKind)] = [
            "lowercase:": ("NSCoreDataToLower", .string), "uppercase:": ("NSCoreDataToUpper", .string),
            "canonical:": ("NSCoreDataCanonical", .string), "abs:": ("abs", .number), "length:": ("length", .number),
        ]
        if let (sqlName, kind) = unary[name], args.count == 1 {
            let a = try piece(0, kind == .string ? .string : .number)
            return .sql(Piece(" \(sqlName)(" + a.text + ")", a.arguments), kind)
        }
        if name == "now", args.isEmpty { return .sql(Piece(" NSCoreDataNow()"), .attribute(.date)) }
        throw unimplemented(context)
    }

    /// SQL text for an operand; constants become `?` with a bind.
    mutating func sqlPiece(_ o: Operand, otherKind: ValueKind?, _ context: Context) throws -> Piece {
        switch o {
        case .sql(let p, _): return p
        case .constant(let v): return Piece("?", [try bindValue(v, otherKind, context)])
        case .toMany: throw PredicateSQLError("to-many key not allowed here")
        case .list: throw PredicateSQLError("Unable to generate SQL for predicate (\(context.display)) (problem with an aggregate)")
        }
    }

    /// Converts a constant to the value Core Data binds (dates as seconds since 2001,
    /// booleans as 0/1, objects as their primary key, UUIDs as 16 bytes).
    func bindValue(_ v: FLValue, _ kind: ValueKind?, _ context: Context) throws -> SQLValue {
        switch v {
        case .null: return .null
        case .bool(let b): return .integer(b ? 1 : 0)
        case .int(let i): return .integer(Int64(i))
        case .double(let d): return .real(d)
        case .decimal(let d): return .real(NSDecimalNumber(decimal: d).doubleValue)
        case .string(let s):
            switch kind {
            case .attribute(.uuid):
                if let u = UUID(uuidString: s) { return ValueCoding.encode(u, as: .uuid) }
                throw PredicateSQLError("Unable to generate SQL for predicate (\(context.display)): a UUID attribute cannot be compared with the string \"\(s)\", which is not a UUID")
            case .attribute(.date):
                // A Date column holds seconds since 2001: compared with text, SQLite would
                // silently answer as if every date were smaller.
                throw PredicateSQLError(
                    "Unable to generate SQL for predicate (\(context.display)): a Date attribute cannot be compared with the string \"\(s)\" (pass a date, write CAST(\"\(s)\", \"NSDate\"), or convert strings with convertingStringLiterals(for:in:))")
            default:
                return .text(s)
            }
        case .date(let d): return .real(d.timeIntervalSinceReferenceDate)
        case .data(let d): return .blob(d)
        case .uuid(let u): return ValueCoding.encode(u, as: .uuid)
        case .url(let u): return .text(u.absoluteString)
        case .object(let ref):
            if let id = ref.base as? ManagedObjectID { return .integer(id.primaryKey) }
            if let object = ref.base as? ManagedObject {
                guard !object.objectID.isTemporaryID else {
                    throw PredicateSQLError("Unable to generate SQL for predicate (\(context.display)): \(object.objectID.uriRepresentation) is not saved yet, so no row can refer to it")
                }
                return .integer(object.objectID.primaryKey)
            }
            if let i = ref.base as? Int { return .integer(Int64(i)) }
            if let i = ref.base as? Int64 { return .integer(i) }
            throw PredicateSQLError("Unable to generate SQL for predicate (\(context.display)) (unsupported object \(ref))")
        case .array, .dictionary:
            throw PredicateSQLError("Unable to generate SQL for predicate (\(context.display)) (problem on RHS)")
        }
    }

    // MARK: - Key paths

    mutating func keyPathOperand(_ path: String, from base: Base, _ context: Context, anyJoin: Bool, allowToMany: Bool) throws -> Operand {
        let components = PredicateSQL.keyPathComponents(path)
        switch try resolveKeyPath(components[...], from: base, context, anyJoin: anyJoin, allowToMany: allowToMany, display: path) {
        case .column(let text, let type): return .sql(Piece(text), .attribute(type))
        case .object(let text, _): return .sql(Piece(text), .object)
        case .toMany(let b, let rel): return .toMany(b, rel)
        case .collection(let piece, let type): return .sql(piece, type.map { .attribute($0) } ?? .number)
        }
    }

    /// Walks a key path from a base row, adding joins for to-one hops (and for to-many hops
    /// when `anyJoin`), and checks every key against the model.
    mutating func resolveKeyPath(_ components: ArraySlice<String>, from start: Base, _ context: Context,
                                 anyJoin: Bool, allowToMany: Bool, display: String) throws -> Resolved {
        var base = start
        var i = components.startIndex
        let outer = context.outerJoins
        func notFound() -> PredicateSQLError {
            PredicateSQLError("keypath \(display) not found in entity \(start.entity.name)")
        }
        while i < components.endIndex {
            let name = components[i]
            let isLast = i == components.endIndex - 1
            guard let baseMapping = mapping.entity(base.entity.name) else { throw notFound() }
            if let attribute = base.entity.attribute(named: name), !attribute.isTransient,
               let column = baseMapping.attributeColumns[name] {
                let text = " \(base.alias).\(column)"
                if isLast { return .column(text, attribute.attributeType) }
                if i + 1 == components.endIndex - 1, components[i + 1] == "length",
                   attribute.attributeType == .string || attribute.attributeType == .uri {
                    return .column(" length(\(base.alias).\(column))", .integer64)
                }
                throw notFound()
            }
            guard let rel = base.entity.relationship(named: name), !rel.isTransient,
                  let destination = mapping.model.entity(named: rel.destinationEntityName) else {
                throw notFound()
            }
            if rel.isToOne {
                guard let fk = baseMapping.toOneColumns[name]?.foreignKey else { throw notFound() }
                if isLast { return .object(" \(base.alias).\(fk)", destination) }
                base = toOneJoin(base, rel, fk: fk, destination: destination, outer: outer)
                i += 1
                continue
            }
            // To-many.
            let next = isLast ? nil : components[i + 1]
            if let op = next, op.hasPrefix("@") {
                let rest = components[(i + 2)...]
                return .collection(try aggregate(base, rel, op: op, rest: Array(rest), context, display: display), nil)
            }
            if anyJoin {
                let key = try expandToMany(base, rel, outer: outer)
                if isLast { return .object(key.text, destination) }
                base = try toManyDestination(base, rel)
                i += 1
                continue
            }
            if isLast && allowToMany { return .toMany(base, rel) }
            throw PredicateSQLError("to-many key not allowed here")
        }
        return .object(" \(base.alias).Z_PK", base.entity)
    }

    /// Reuses or adds `JOIN ZDEST tN ON base.ZREL = tN.Z_PK` in the current scope.
    mutating func toOneJoin(_ base: Base, _ rel: RelationshipDescription, fk: String, destination: EntityDescription, outer: Bool) -> Base {
        let key = base.pathKey + "." + rel.name
        let s = scopes.count - 1
        if let index = scopes[s].toOneJoins[key] {
            if outer { scopes[s].joins[index].outer = true }
            return Base(alias: scopes[s].joins[index].alias, entity: destination, pathKey: key)
        }
        let alias = allocateAlias()
        let table = mapping.entity(destination.name)?.table ?? SchemaMapping.tableName(for: destination.name)
        scopes[s].joins.append(Join(table: table, alias: alias, on: "\(base.alias).\(fk) = \(alias).Z_PK", outer: outer))
        scopes[s].toOneJoins[key] = scopes[s].joins.count - 1
        return Base(alias: alias, entity: destination, pathKey: key)
    }

    func hop(_ base: Base, _ rel: RelationshipDescription) throws -> ToManyHop {
        guard let destination = mapping.model.entity(named: rel.destinationEntityName),
              let destinationMapping = mapping.entity(destination.name),
              let baseMapping = mapping.entity(base.entity.name) else {
            throw PredicateSQLError("keypath \(rel.name) not found in entity \(base.entity.name)")
        }
        if let joinName = baseMapping.manyToMany[rel.name], let join = mapping.joinTable(named: joinName) {
            let lineage = mapping.model.inheritanceChain(of: base.entity).map(\.name)
            let forward = join.relationship == rel.name && lineage.contains(join.sourceEntity)
            return forward
                ? .joinTable(table: join.name, near: join.sourceColumn, far: join.destinationColumn, destination: destination)
                : .joinTable(table: join.name, near: join.destinationColumn, far: join.sourceColumn, destination: destination)
        }
        if let inverse = mapping.model.inverse(of: rel), inverse.isToOne,
           let fk = destinationMapping.toOneColumns[inverse.name]?.foreignKey {
            return .foreignKey(table: destinationMapping.table, column: fk, destination: destination)
        }
        if let hidden = baseMapping.hiddenForeignKeys[rel.name] {
            return .foreignKey(table: hidden.table, column: hidden.column, destination: destination)
        }
        throw PredicateSQLError("to-many key not allowed here")
    }

    /// Joins a to-many relationship for `ANY` and returns the destination key column:
    /// `t1.Z_PK` (foreign key in the destination) or `t1.Z_2TAGS` (join table; the alias
    /// after it is reserved for the destination table, as Core Data does).
    mutating func expandToMany(_ base: Base, _ rel: RelationshipDescription, outer: Bool) throws -> Piece {
        let s = scopes.count - 1
        scopes[s].hasToManyJoin = true
        if s == 0 { needsDistinct = true }
        switch try hop(base, rel) {
        case .foreignKey(let table, let column, _):
            let alias = allocateAlias()
            scopes[s].joins.append(Join(table: table, alias: alias, on: "\(base.alias).Z_PK = \(alias).\(column)", outer: outer))
            lastToMany = (alias, alias, nil)
            return Piece(" \(alias).Z_PK")
        case .joinTable(let table, let near, let far, let destination):
            let joinAlias = allocateAlias()
            let destinationAlias = allocateAlias()
            scopes[s].joins.append(Join(table: table, alias: joinAlias, on: "\(base.alias).Z_PK = \(joinAlias).\(near)", outer: outer))
            let destinationTable = mapping.entity(destination.name)?.table ?? ""
            lastToMany = (joinAlias, destinationAlias, (destinationTable, far, outer))
            return Piece(" \(joinAlias).\(far)")
        }
    }

    /// The destination row of the to-many just joined by ``expandToMany(_:_:outer:)``
    /// (adding the destination table after a join table).
    mutating func toManyDestination(_ base: Base, _ rel: RelationshipDescription) throws -> Base {
        guard let last = lastToMany, let destination = mapping.model.entity(named: rel.destinationEntityName) else {
            throw PredicateSQLError("to-many key not allowed here")
        }
        if let (table, far, outer) = last.pending {
            let s = scopes.count - 1
            scopes[s].joins.append(Join(table: table, alias: last.destinationAlias, on: "\(last.joinAlias).\(far) = \(last.destinationAlias).Z_PK", outer: outer))
        }
        return Base(alias: last.destinationAlias, entity: destination, pathKey: last.destinationAlias)
    }

    /// `toMany.@count`, `toMany.@sum.attr`, … as a correlated subselect.
    mutating func aggregate(_ base: Base, _ rel: RelationshipDescription, op: String, rest: [String], _ context: Context, display: String) throws -> Piece {
        let h = try hop(base, rel)
        let alias = allocateAlias()
        switch op {
        case "@count":
            guard rest.isEmpty else { throw PredicateSQLError("keypath \(display) not found in entity \(base.entity.name)") }
            switch h {
            case .foreignKey(let table, let column, _):
                return Piece("(SELECT COUNT(\(alias).Z_PK) FROM \(table) \(alias) WHERE (\(base.alias).Z_PK = \(alias).\(column)) )")
            case .joinTable(let table, let near, let far, _):
                return Piece("(SELECT COUNT(\(alias).\(far)) FROM \(table) \(alias) WHERE (\(base.alias).Z_PK = \(alias).\(near)) )")
            }
        case "@sum", "@avg", "@min", "@max":
            let function = ["@sum": "total", "@avg": "AVG", "@min": "MIN", "@max": "MAX"][op] ?? "total"
            let destination = h.destination
            guard rest.count == 1, let attribute = destination.attribute(named: rest[0]), !attribute.isTransient,
                  let column = mapping.entity(destination.name)?.attributeColumns[rest[0]] else {
                throw PredicateSQLError("keypath \(display) not found in entity \(base.entity.name)")
            }
            switch h {
            case .foreignKey(let table, let fk, _):
                return Piece("(SELECT \(function)(\(alias).\(column)) FROM \(table) \(alias) WHERE (\(base.alias).Z_PK = \(alias).\(fk)) )")
            case .joinTable(let table, let near, let far, let d):
                let destinationAlias = allocateAlias()
                let destinationTable = mapping.entity(d.name)?.table ?? ""
                return Piece("(SELECT \(function)(\(destinationAlias).\(column)) FROM \(table) \(alias) JOIN \(destinationTable) \(destinationAlias) ON \(alias).\(far) = \(destinationAlias).Z_PK WHERE (\(base.alias).Z_PK = \(alias).\(near)) )")
            }
        default:
            throw PredicateSQLError("Unsupported function expression \(op) in \(display)")
        }
    }

    /// `SUBQUERY(toMany, $v, p).@count` as
    /// `(SELECT COUNT(t1.Z_PK) FROM ZDEST t1 WHERE (t0.Z_PK = t1.ZINV AND <p>) )`.
    mutating func subselect(_ base: Base, _ rel: RelationshipDescription, variable: String, predicate p: FLPredicate, _ context: Context) throws -> Piece {
        let h = try hop(base, rel)
        var from: String
        var correlation: String
        let elementAlias: String
        switch h {
        case .foreignKey(let table, let column, _):
            elementAlias = allocateAlias()
            from = "\(table) \(elementAlias)"
            correlation = "\(base.alias).Z_PK = \(elementAlias).\(column)"
        case .joinTable(let table, let near, let far, let d):
            let joinAlias = allocateAlias()
            elementAlias = allocateAlias()
            let destinationTable = mapping.entity(d.name)?.table ?? ""
            from = "\(table) \(joinAlias) JOIN \(destinationTable) \(elementAlias) ON \(joinAlias).\(far) = \(elementAlias).Z_PK"
            correlation = "\(base.alias).Z_PK = \(joinAlias).\(near)"
        }
        scopes.append(Scope(entity: h.destination, alias: elementAlias, variable: variable))
        defer { scopes.removeLast() }
        var inner = Context()
        inner.subject = context.subject
        let folded = PredicateSQL.fold(p)
        var condition: Piece?
        switch folded.node {
        case .constant(true): condition = nil
        default: condition = try predicate(folded, inner)
        }
        let scope = scopes[scopes.count - 1]
        from += scope.joinText
        let count = scope.hasToManyJoin ? "COUNT(DISTINCT \(elementAlias).Z_PK)" : "COUNT(\(elementAlias).Z_PK)"
        var text = "(SELECT \(count) FROM \(from) WHERE (\(correlation)"
        if let condition { text += " AND " + condition.text }
        text += ") )"
        return Piece(text, condition?.arguments ?? [])
    }
}
