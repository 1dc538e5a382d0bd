import FaultlineModel
import FaultlinePredicate
import FaultlineSQL
import Foundation

/// `WHERE` clauses compiled before, by the *shape* of their predicate: the predicate with its
/// constants reduced to their kind (`quantity == <int>`). Apps make most predicates from a few
/// format strings with other values each time; the SQL text of such a predicate is the same
/// every time, only its bound values change. So the first predicate of a shape is compiled
/// and its generator's state kept (text, joins, aliases), with where each bound value comes
/// from: a constant of the predicate (converted as ``PredicateSQL/bindValue(_:_:_:)`` does) or a
/// fixed value (`Z_ENT` numbers, the `0` of a count). The next predicates of that shape take
/// their values and skip compiling.
///
/// What is cached is checked, not assumed: the shape is compiled twice with two sets of
/// stand-in constants of the same kinds, and it is cached only when both give the same text and
/// joins and every bound value is either the same fixed value in both or exactly the stand-in
/// of one constant (a value computed from a constant, as `BEGINSWITH[n]`'s upper bound is, or a
/// compile that depends on a value, makes the shape uncacheable); then the real predicate's
/// compile must agree with the cached entry filled with its constants. Constants whose SQL can
/// depend on their value are not reduced to a kind at all (empty strings, objects, arrays,
/// functions and casts of constants, which are folded): predicates holding them are compiled
/// every time.
struct WhereClauseCache {
    /// The entity, whether sub-entities are included, and the predicate's shape, as bytes
    /// (see ``PredicateShape``).
    struct Key: Hashable {
        let bytes: [UInt8]
        let bytesHash: UInt64

        init(_ shape: PredicateShape) {
            bytes = shape.signature
            bytesHash = bytes.withUnsafeBytes { FLBytesHash.hash($0) }
        }

        func hash(into hasher: inout Hasher) { hasher.combine(bytesHash) }

        static func == (a: Key, b: Key) -> Bool { a.bytesHash == b.bytesHash && a.bytes == b.bytes }
    }

    /// Where a bound value comes from.
    enum Source: Equatable {
        case fixed(SQLValue)
        case constant(Int)
    }

    /// A compiled shape: the generator after ``PredicateSQL/whereClause(_:includesSubentities:)``
    /// (its ``PredicateSQL/arguments`` emptied), the clause, its joins, and its bound values'
    /// sources.
    final class Entry {
        let generator: PredicateSQL
        let text: String?
        let joins: String
        let sources: [Source]
        /// The last whole SELECT built around the clause (without sort descriptors or partial
        /// columns), and what else it depends on: the next fetch of the same kind reuses it.
        var select: (idsOnly: Bool, limit: Int, offset: Int, sql: String)?

        init(generator: PredicateSQL, text: String?, joins: String, sources: [Source]) {
            self.generator = generator
            self.text = text
            self.joins = joins
            self.sources = sources
        }
    }

    enum Slot {
        case compiled(Entry)
        case uncacheable
    }

    private var slots: [Key: Slot] = [:]
    private let limit = 512

    subscript(key: Key) -> Slot? {
        get { slots[key] }
        set {
            if slots.count >= limit, slots[key] == nil { slots.removeAll(keepingCapacity: true) }
            slots[key] = newValue
        }
    }
}

/// A compiled `WHERE` clause and what the statement around it needs.
struct CompiledWhere {
    /// The clause, without `WHERE` (nil when nothing filters).
    var text: String?
    /// The joins the clause needs (``PredicateSQL/joins``).
    var joins: String
    var needsDistinct: Bool
    var arguments: [SQLValue]
    /// The generator after the clause, to go on with (`ORDER BY`); nil when the clause came
    /// from the cache and it was not asked for.
    var generator: PredicateSQL?
    /// The cache's entry the clause came from, if it did.
    var entry: WhereClauseCache.Entry?

    init(_ generator: PredicateSQL, text: String?, keepingGenerator: Bool = true) {
        self.text = text
        joins = generator.joins
        needsDistinct = generator.needsDistinct
        arguments = generator.arguments
        self.generator = keepingGenerator ? generator : nil
        entry = nil
    }
}

extension SQLiteStore {
    /// A fetch's `WHERE` clause (see ``WhereClauseCache``): from the cache when a predicate of
    /// the same shape was compiled before, else compiled now (and the shape recorded). With
    /// `forSorting`, the result holds the generator to go on with.
    ///
    /// - Throws: ``FetchRequestError`` as ``PredicateSQL/whereClause(_:includesSubentities:)``.
    func compiledWhereClause(for request: FetchRequest, forSorting: Bool) throws -> CompiledWhere {
        guard let predicate = request.predicate,
            let shape = PredicateShape(predicate, entityName: request.entityName, includesSubentities: request.includesSubentities)
        else {
            var generator = try predicateSQL(for: request.entityName)
            let text = try translatingPredicateErrors { try generator.whereClause(request.predicate, includesSubentities: request.includesSubentities) }
            return CompiledWhere(generator, text: text)
        }
        let key = WhereClauseCache.Key(shape)
        let cached = whereClauseCache[key]
        if case .compiled(let entry)? = cached {
            let arguments = PredicateSQL.arguments(entry.sources, constants: shape.constants)
            var compiled = CompiledWhere(entry.generator, text: entry.text, joins: entry.joins, arguments: arguments)
            compiled.entry = entry
            if forSorting {
                var generator = entry.generator
                generator.arguments = arguments
                compiled.generator = generator
            }
            return compiled
        }
        let base = try predicateSQL(for: request.entityName)
        var generator = base
        let text = try translatingPredicateErrors { try generator.whereClause(predicate, includesSubentities: request.includesSubentities) }
        if cached == nil {
            var slot = WhereClauseCache.Slot.uncacheable
            if let entry = PredicateSQL.record(shape, base: base, includesSubentities: request.includesSubentities),
                entry.text == text, entry.joins == generator.joins, entry.generator.nextAlias == generator.nextAlias,
                entry.generator.needsDistinct == generator.needsDistinct,
                PredicateSQL.arguments(entry.sources, constants: shape.constants) == generator.arguments
            {
                slot = .compiled(entry)
            }
            whereClauseCache[key] = slot
        }
        return CompiledWhere(generator, text: text)
    }
}

extension CompiledWhere {
    fileprivate init(_ generator: PredicateSQL, text: String?, joins: String, arguments: [SQLValue]) {
        self.text = text
        self.joins = joins
        needsDistinct = generator.needsDistinct
        self.arguments = arguments
        self.generator = nil
        self.entry = nil
    }
}

extension PredicateSQL {
    /// The bound values of a cached clause for a predicate's constants.
    static func arguments(_ sources: [WhereClauseCache.Source], constants: [FLValue]) -> [SQLValue] {
        var arguments: [SQLValue] = []
        arguments.reserveCapacity(sources.count)
        for source in sources {
            switch source {
            case .fixed(let value): arguments.append(value)
            case .constant(let index): arguments.append(Self.cachedBindValue(constants[index]))
            }
        }
        return arguments
    }

    /// ``bindValue(_:_:_:)`` for the kinds of constants a cached shape holds (which it binds
    /// without looking at the other side: a string compared with a UUID or Date attribute
    /// makes its shape uncacheable).
    static func cachedBindValue(_ value: FLValue) -> SQLValue {
        switch value {
        case .null: return .null
        case .bool(let b): return .integer(b ? 1 : 0)
        case .int(let i): return .integer(Int64(i))
        case .double(let d): return .real(d)
        case .string(let s): return .text(s)
        case .date(let d): return .real(d.timeIntervalSinceReferenceDate)
        default: return .null  // not in a cached shape (see PredicateShape)
        }
    }

    /// Compiles a shape twice with stand-in constants and keeps it if both agree (see
    /// ``WhereClauseCache``); nil when the shape is uncacheable.
    static func record(_ shape: PredicateShape, base: PredicateSQL, includesSubentities: Bool) -> WhereClauseCache.Entry? {
        guard shape.constants.count <= 0xFFFF else { return nil }
        var runs: [(generator: PredicateSQL, text: String?)] = []
        for run in 0..<2 {
            var generator = base
            let standIns = shape.constants.indices.map { StandIn.value(for: shape.constants[$0], run: run, index: $0) }
            guard let predicate = shape.replacingConstants(with: standIns),
                let text = try? generator.whereClause(predicate, includesSubentities: includesSubentities)
            else { return nil }
            runs.append((generator, text))
        }
        let (a, b) = (runs[0], runs[1])
        guard a.text == b.text, a.generator.joins == b.generator.joins, a.generator.nextAlias == b.generator.nextAlias,
            a.generator.needsDistinct == b.generator.needsDistinct, a.generator.isLogicallyFalse == b.generator.isLogicallyFalse,
            a.generator.arguments.count == b.generator.arguments.count
        else { return nil }
        var sources: [WhereClauseCache.Source] = []
        for (x, y) in zip(a.generator.arguments, b.generator.arguments) {
            switch (StandIn.index(of: x, run: 0), StandIn.index(of: y, run: 1)) {
            case let (i?, j?) where i == j && i < shape.constants.count: sources.append(.constant(i))
            case (nil, nil) where x == y: sources.append(.fixed(x))
            default: return nil
            }
        }
        var generator = a.generator
        generator.arguments = []
        return WhereClauseCache.Entry(generator: generator, text: a.text, joins: generator.joins, sources: sources)
    }
}

/// Stand-in constants for recording a shape: values of the same kind as the real ones, that
/// no fixed value and no other stand-in equals once bound.
enum StandIn {
    private static let integerBase: Int64 = 0x5EED_F00D_0000_0000
    private static let realBits: UInt64 = 0x7FE5_EED0_0000_0000  // a huge finite double

    static func value(for constant: FLValue, run: Int, index: Int) -> FLValue {
        let tag = run << 16 | index
        switch constant {
        case .null: return .null
        // Booleans bind as 0 or 1, which cannot tell constants apart: an integer stands in
        // (the compiler treats both alike; it only binds them differently).
        case .bool, .int: return .int(Int(integerBase) | tag)
        case .double: return .double(Double(bitPattern: realBits | UInt64(tag)))
        case .date: return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: realBits | UInt64(tag))))
        case .string: return .string("\u{1}faultline-stand-in-\(run)-\(index)")
        default: return constant
        }
    }

    /// The index of the constant whose stand-in of `run` a bound value is, if it is one.
    static func index(of value: SQLValue, run: Int) -> Int? {
        let tag: Int
        switch value {
        case .integer(let i):
            guard i & ~0xFFFF_FFFF == integerBase else { return nil }
            tag = Int(i & 0xFFFF_FFFF)
        case .real(let d):
            guard d.bitPattern & ~0xFFFF_FFFF == realBits else { return nil }
            tag = Int(d.bitPattern & 0xFFFF_FFFF)
        case .text(let s):
            let prefix = "\u{1}faultline-stand-in-\(run)-"
            guard s.hasPrefix(prefix), let i = Int(s.dropFirst(prefix.count)) else { return nil }
            return i
        default:
            return nil
        }
        guard tag >> 16 == run else { return nil }
        return tag & 0xFFFF
    }
}

/// A predicate reduced to its shape: a signature of everything its SQL can depend on but
/// the values of its constants (their kinds stay), and those constants in order. nil for a
/// predicate with a constant whose SQL depends on its value, or a form the SQL store does not
/// compile (those are compiled every time, and fail as they do).
///
/// The signature is bytes: a letter per node, strings (key paths, names) as their length and
/// UTF-8 bytes, so that no two shapes share a signature.
struct PredicateShape {
    /// The shape.
    private(set) var signature: [UInt8] = []
    /// The constants, in the order of the walk.
    private(set) var constants: [FLValue] = []
    private let predicate: FLPredicate

    /// Deeper trees are compiled every time (the compiler checks their depth).
    private static let maximumDepth = 32

    /// The shape of a predicate of a fetch of `entityName` (which the signature starts with).
    init?(_ predicate: FLPredicate, entityName: String, includesSubentities: Bool) {
        self.predicate = predicate
        signature.reserveCapacity(64)
        add(entityName)
        signature.append(includesSubentities ? 1 : 0)
        guard add(predicate, depth: 0) else { return nil }
    }

    private mutating func mark(_ letter: Unicode.Scalar) {
        signature.append(UInt8(ascii: letter))
    }

    /// A string: its length (one byte below 255, else 255 and eight bytes), then its bytes.
    private mutating func add(_ text: String) {
        let count = text.utf8.count
        if count < 255 {
            signature.append(UInt8(count))
        } else {
            signature.append(255)
            withUnsafeBytes(of: UInt64(count).littleEndian) { signature.append(contentsOf: $0) }
        }
        if text.utf8.withContiguousStorageIfAvailable({ signature.append(contentsOf: $0) }) == nil {
            signature.append(contentsOf: text.utf8)
        }
    }

    private mutating func add(_ p: FLPredicate, depth: Int) -> Bool {
        guard depth < Self.maximumDepth else { return false }
        switch p.node {
        case .constant(let b):
            mark(b ? "T" : "F")
            return true
        case .comparison(let c):
            // The operator and options as one byte each (their raw values are small).
            guard (0..<64).contains(c.op.rawValue), (0..<64).contains(c.options.rawValue) else { return false }
            mark("C")
            signature.append(UInt8(c.op.rawValue))
            signature.append(UInt8(c.options.rawValue))
            switch c.modifier {
            case .direct: mark("d")
            case .any: mark("y")
            case .all: mark("l")
            }
            return add(c.left, depth: depth + 1) && add(c.right, depth: depth + 1)
        case .and(let items), .or(let items):
            if case .and = p.node { mark("A") } else { mark("O") }
            for item in items where !add(item, depth: depth + 1) { return false }
            mark(")")
            return true
        case .not(let inner):
            mark("N")
            return add(inner, depth: depth + 1)
        }
    }

    private mutating func add(_ e: FLExpression, depth: Int) -> Bool {
        guard depth < Self.maximumDepth else { return false }
        switch e.node {
        case .constant(let value):
            switch value {
            case .null: mark("n")
            case .bool: mark("b")
            case .int: mark("i")
            case .double: mark("r")
            case .date: mark("t")
            case .string(let s) where !s.isEmpty: mark("s")
            default: return false
            }
            constants.append(value)
            return true
        case .evaluatedObject:
            mark("S")
            return true
        case .variable(let name):
            mark("V")
            add(name)
            return true
        case .keyPath(let path):
            mark("K")
            add(path)
            return true
        case .member(let base, let path):
            mark("M")
            add(path)
            return add(base, depth: depth + 1)
        case .function(let name, let arguments):
            // Functions of constants only are folded into a constant by the compiler.
            guard arguments.contains(where: { $0.constantValue == nil }) else { return false }
            mark("f")
            add(name)
            for argument in arguments where !add(argument, depth: depth + 1) { return false }
            mark(")")
            return true
        case .aggregate(let items):
            mark("g")
            for item in items where !add(item, depth: depth + 1) { return false }
            mark(")")
            return true
        case .subquery(let collection, let variable, let predicate):
            mark("Q")
            add(variable)
            return add(collection, depth: depth + 1) && add(predicate, depth: depth + 1)
        case .cast(let value, let type):
            guard value.constantValue == nil else { return false }
            mark("c")
            add(type)
            return add(value, depth: depth + 1)
        case .customFunction, .conditional, .index, .assignment, .fetch, .anyKey:
            return false
        }
    }

    /// The predicate with its constants replaced, in the order of ``constants``.
    func replacingConstants(with values: [FLValue]) -> FLPredicate? {
        var next = 0
        return Self.replacing(predicate, values, &next)
    }

    private static func replacing(_ p: FLPredicate, _ values: [FLValue], _ next: inout Int) -> FLPredicate? {
        switch p.node {
        case .constant: return p
        case .comparison(var c):
            guard let left = replacing(c.left, values, &next), let right = replacing(c.right, values, &next) else { return nil }
            c.left = left
            c.right = right
            return FLPredicate(.comparison(c))
        case .and(let items), .or(let items):
            var replaced: [FLPredicate] = []
            for item in items {
                guard let r = replacing(item, values, &next) else { return nil }
                replaced.append(r)
            }
            if case .and = p.node { return FLPredicate(.and(replaced)) }
            return FLPredicate(.or(replaced))
        case .not(let inner):
            return replacing(inner, values, &next).map { FLPredicate(.not($0)) }
        }
    }

    private static func replacing(_ e: FLExpression, _ values: [FLValue], _ next: inout Int) -> FLExpression? {
        switch e.node {
        case .constant:
            guard next < values.count else { return nil }
            defer { next += 1 }
            return .constant(values[next])
        case .evaluatedObject, .variable, .keyPath:
            return e
        case .member(let base, let path):
            return replacing(base, values, &next).map { FLExpression(.member($0, keyPath: path)) }
        case .function(let name, let arguments):
            guard let replaced = replacing(arguments, values, &next) else { return nil }
            return .function(name, replaced)
        case .aggregate(let items):
            return replacing(items, values, &next).map { FLExpression(.aggregate($0)) }
        case .subquery(let collection, let variable, let predicate):
            guard let c = replacing(collection, values, &next), let p = replacing(predicate, values, &next) else { return nil }
            return FLExpression(.subquery(collection: c, variable: variable, predicate: p))
        case .cast(let value, let type):
            return replacing(value, values, &next).map { FLExpression(.cast($0, type: type)) }
        case .customFunction, .conditional, .index, .assignment, .fetch, .anyKey:
            return nil
        }
    }

    private static func replacing(_ items: [FLExpression], _ values: [FLValue], _ next: inout Int) -> [FLExpression]? {
        var replaced: [FLExpression] = []
        replaced.reserveCapacity(items.count)
        for item in items {
            guard let r = replacing(item, values, &next) else { return nil }
            replaced.append(r)
        }
        return replaced
    }
}

/// SQL text built from pieces and made a `String` once, with one allocation: appending to a
/// `String` piece by piece costs several times more.
struct SQLText {
    private var pieces: [String] = []

    init(pieces capacity: Int) { pieces.reserveCapacity(capacity) }

    mutating func append(_ piece: String) { pieces.append(piece) }

    var string: String {
        var count = 0
        for piece in pieces { count += piece.utf8.count }
        return String(unsafeUninitializedCapacity: count) { buffer in
            var end = 0
            for piece in pieces {
                let copied = piece.utf8.withContiguousStorageIfAvailable { bytes -> Int in
                    guard let source = bytes.baseAddress, let target = buffer.baseAddress else { return 0 }
                    (target + end).update(from: source, count: bytes.count)
                    return bytes.count
                }
                if let copied {
                    end += copied
                } else {
                    for byte in piece.utf8 {
                        buffer[end] = byte
                        end += 1
                    }
                }
            }
            return end
        }
    }
}
