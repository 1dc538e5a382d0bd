import Foundation

/// A regular expression in ICU's syntax (the one `NSPredicate`'s `MATCHES` uses), matched
/// against a whole string, that never answers "no match" when it could not decide.
///
/// Patterns in the regular subset of the syntax run on a linear-time engine (a Thompson NFA
/// simulated as a Pike VM over Unicode scalars, no backtracking): `(a+)+c|a*b` on thirty `a`s
/// and a `b` takes microseconds. Patterns outside that subset (backreferences, lookaround,
/// atomic groups, possessive quantifiers, inline flags, `\b`, POSIX and nested sets, …) run on
/// `NSRegularExpression` (ICU) with a step budget; when ICU spends the budget, ``matches(_:)``
/// throws instead of reporting the "no match" ICU would give. See Documentation/Reliability.md.
///
/// ```swift
/// let regex = try FLRegex("(a+)+c|a*b")
/// try regex.matches(String(repeating: "a", count: 30) + "b")   // true
/// try FLRegex("(a)\\1").matches("aa")                           // true (ICU, within budget)
/// ```
public final class FLRegex: @unchecked Sendable {  // immutable after init; NSRegularExpression is thread-safe
    /// The pattern as given.
    public let pattern: String
    /// Whether letters match regardless of case (`MATCHES[c]`).
    public let caseInsensitive: Bool
    /// The linear-time program, or nil when the pattern needs ICU.
    private let program: FLRegexProgram?
    /// Why the pattern needs ICU, when it does.
    let fallbackReason: String?
    /// ICU's compiled form of `\A(?:pattern)\z`: the validity check for every pattern, the
    /// engine for patterns outside the linear subset and, with `[c]`, for text holding
    /// characters whose full case folding is more than one character (`ß`, `ﬁ`, `İ`…).
    private let icu: NSRegularExpression

    /// ICU match callbacks a fallback match may take before it is reported as undecided. ICU
    /// calls back once every 10,000 backtracking state saves, so this is 500,000 steps
    /// (a few milliseconds). ICU itself gives up silently (no error, "no match") after a
    /// pattern-dependent amount of work, measured between 150 and 6,000 callbacks; the budget
    /// stays well below it so that every "no match" it lets through is a real one.
    public static let fallbackStepBudget = 50

    /// The most instructions a compiled pattern may have; counted repetition expands
    /// (`(a{1000}){1000}` would be a million), and past this the pattern is refused.
    public static let maximumProgramSize = 20_000

    /// Compiles a pattern.
    ///
    /// - Throws: ``PredicateEvaluationError`` when the pattern is invalid (ICU does not accept
    ///   it) or too large for the linear-time engine.
    public init(_ pattern: String, caseInsensitive: Bool = false) throws {
        self.pattern = pattern
        self.caseInsensitive = caseInsensitive
        do {
            icu = try NSRegularExpression(pattern: "\\A(?:" + pattern + ")\\z", options: caseInsensitive ? [.caseInsensitive] : [])
        } catch {
            throw PredicateEvaluationError("invalid regular expression \"\(pattern)\" for MATCHES")
        }
        var parser = FLRegexParser(pattern: pattern)
        let node: FLRegexNode
        do {
            node = try parser.parse()
        } catch let unsupported as FLRegexParser.Unsupported {
            program = nil
            fallbackReason = unsupported.reason
            return
        }
        if caseInsensitive, node.hasLiteral(where: { FLCaseFolding.isSpecial($0) }) {
            program = nil
            fallbackReason = "a character whose case folding is several characters, with [c]"
            return
        }
        let size = node.programSize
        guard size <= Self.maximumProgramSize else {
            throw PredicateEvaluationError(
                "regular expression too large: \"\(FLRegex.preview(pattern))\" for MATCHES would compile to \(size >= Int.max / 4 ? "too many" : String(size)) instructions (the limit is \(Self.maximumProgramSize)); write the repetition with fewer counted copies")
        }
        program = FLRegexProgram(node, caseInsensitive: caseInsensitive)
        fallbackReason = nil
    }

    /// A compiled pattern from a process-wide cache (256 most recent patterns per option).
    public static func cached(_ pattern: String, caseInsensitive: Bool = false) throws -> FLRegex {
        try FLRegexCache.shared.regex(pattern, caseInsensitive: caseInsensitive)
    }

    /// Whether the pattern matches the whole text.
    ///
    /// - Throws: ``PredicateEvaluationError`` when the answer could not be decided (a pattern
    ///   outside the linear subset on which ICU spent ``fallbackStepBudget``).
    public func matches(_ text: String) throws -> Bool {
        if let program, !(caseInsensitive && FLCaseFolding.containsSpecial(text)) {
            return program.matches(text)
        }
        return try icuMatches(text)
    }

    /// Whether this pattern runs on the linear-time engine (for all texts without `[c]`; with
    /// `[c]`, for texts without characters whose full case folding is several characters).
    public var isLinear: Bool { program != nil }

    private func icuMatches(_ text: String) throws -> Bool {
        var matched = false, callbacks = 0, gaveUp = false
        let budget = Self.fallbackStepBudget
        icu.enumerateMatches(in: text, options: [.reportProgress], range: NSRange(text.startIndex..., in: text)) { result, flags, stop in
            if result != nil {
                matched = true
                stop.pointee = true
            } else if flags.contains(.progress) {
                callbacks += 1
                if callbacks >= budget {
                    gaveUp = true
                    stop.pointee = true
                }
            }
        }
        if matched { return true }
        if gaveUp {
            throw PredicateEvaluationError(
                "MATCHES could not decide whether \"\(FLRegex.preview(text))\" matches \"\(FLRegex.preview(pattern))\" (the regular expression engine gave up after about \(budget * 10_000) backtracking steps; \(fallbackReason ?? "the pattern") needs ICU's backtracking engine)")
        }
        return false
    }

    static func preview(_ s: String) -> String {
        s.count <= 60 ? s : String(s.prefix(60)) + "…"
    }
}

/// A thread-safe cache of compiled `MATCHES` patterns.
final class FLRegexCache: @unchecked Sendable {  // `cache` is only touched under `lock`
    static let shared = FLRegexCache()
    private let lock = NSLock()
    private struct Key: Hashable {
        var pattern: String
        var caseInsensitive: Bool
    }
    private var cache: [Key: FLRegex] = [:]

    func regex(_ pattern: String, caseInsensitive: Bool) throws -> FLRegex {
        let key = Key(pattern: pattern, caseInsensitive: caseInsensitive)
        if let r = lock.withLock({ cache[key] }) { return r }
        let r = try FLRegex(pattern, caseInsensitive: caseInsensitive)
        lock.withLock {
            if cache.count > 256 { cache.removeAll() }
            cache[key] = r
        }
        return r
    }
}

// MARK: - Syntax

/// A parsed pattern in the linear subset.
indirect enum FLRegexNode {
    case empty
    case scalar(UInt32)
    case set(FLRegexSet)
    case concat([FLRegexNode])
    case alternation([FLRegexNode])
    case repetition(FLRegexNode, min: Int, max: Int?)
    case assertion(FLRegexAssertion)
    /// `\Q…\E` while parsing; never in a parsed pattern.
    case quoted([FLRegexNode])

    /// Instructions the node compiles to, saturating instead of overflowing.
    var programSize: Int {
        func add(_ a: Int, _ b: Int) -> Int { a.addingReportingOverflow(b).overflow ? Int.max / 2 : min(a + b, Int.max / 2) }
        func mul(_ a: Int, _ b: Int) -> Int { a.multipliedReportingOverflow(by: b).overflow ? Int.max / 2 : min(a * b, Int.max / 2) }
        switch self {
        case .empty, .quoted: return 0
        case .scalar, .set, .assertion: return 1
        case .concat(let items): return items.reduce(0) { add($0, $1.programSize) }
        case .alternation(let items): return add(items.reduce(0) { add($0, $1.programSize) }, mul(2, items.count))
        case .repetition(let body, let low, let high):
            let b = max(1, body.programSize)  // an empty body still costs its iterations to compile
            if let high { return add(mul(low, b), mul(high - low, add(b, 1))) }
            return add(mul(low, b), add(b, 2))
        }
    }

    func hasLiteral(where test: (UInt32) -> Bool) -> Bool {
        switch self {
        case .scalar(let v): return test(v)
        case .set(let s): return s.hasLiteral(where: test)
        case .concat(let items), .alternation(let items): return items.contains { $0.hasLiteral(where: test) }
        case .repetition(let body, _, _): return body.hasLiteral(where: test)
        case .empty, .assertion, .quoted: return false
        }
    }
}

/// Zero-width assertions of the subset.
enum FLRegexAssertion: UInt8 {
    /// `^`, `\A`: the start of the text.
    case start
    /// `\z`: the end of the text.
    case end
    /// `$`, `\Z`: the end of the text, or before a line terminator (or CR LF) that ends it.
    case endBeforeFinalTerminator
}

/// A set of scalars: a class `[…]`, `.`, `\d`, `\p{Lu}`….
struct FLRegexSet {
    enum Item {
        case range(UInt32, UInt32)
        case digit(negated: Bool)
        case word(negated: Bool)
        case space(negated: Bool)
        case category([Unicode.GeneralCategory], negated: Bool)
        case notLineTerminator
    }
    var items: [Item]
    var negated: Bool

    static func single(_ item: Item) -> FLRegexSet { FLRegexSet(items: [item], negated: false) }

    func hasLiteral(where test: (UInt32) -> Bool) -> Bool {
        items.contains { if case .range(let a, let b) = $0 { return a == b && test(a) } else { return false } }
    }

    /// Membership before negation.
    func containsPositive(_ v: UInt32) -> Bool {
        for item in items {
            switch item {
            case .range(let a, let b): if v >= a && v <= b { return true }
            case .digit(let n): if FLRegexSet.isDigit(v) != n { return true }
            case .word(let n): if FLRegexSet.isWord(v) != n { return true }
            case .space(let n): if FLRegexSet.isSpace(v) != n { return true }
            case .category(let cats, let n):
                if let s = Unicode.Scalar(v), cats.contains(s.properties.generalCategory) != n { return true }
            case .notLineTerminator: if !FLRegexSet.isLineTerminator(v) { return true }
            }
        }
        return false
    }

    /// Membership; with `caseInsensitive`, as ICU's case closure before negation.
    func contains(_ v: UInt32, caseInsensitive: Bool) -> Bool {
        if !caseInsensitive { return containsPositive(v) != negated }
        if containsPositive(v) { return !negated }
        for other in FLCaseFolding.equivalents(v) where other != v && containsPositive(other) { return !negated }
        return negated
    }

    /// ICU's line terminators (what `.` does not match, and what `$` may stand before).
    static func isLineTerminator(_ v: UInt32) -> Bool {
        (v >= 0x0A && v <= 0x0D) || v == 0x85 || v == 0x2028 || v == 0x2029
    }

    static func isDigit(_ v: UInt32) -> Bool {
        if v < 0x80 { return v >= 0x30 && v <= 0x39 }
        return Unicode.Scalar(v)?.properties.generalCategory == .decimalNumber
    }

    /// ICU's `\w`: Alphabetic, marks, decimal digits, connector punctuation, ZWNJ and ZWJ.
    static func isWord(_ v: UInt32) -> Bool {
        if v < 0x80 { return (v >= 0x30 && v <= 0x39) || (v | 0x20 >= 0x61 && v | 0x20 <= 0x7A) || v == 0x5F }
        if v == 0x200C || v == 0x200D { return true }
        guard let s = Unicode.Scalar(v) else { return false }
        if s.properties.isAlphabetic { return true }
        switch s.properties.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark, .decimalNumber, .connectorPunctuation: return true
        default: return false
        }
    }

    /// ICU's `\s`: White_Space.
    static func isSpace(_ v: UInt32) -> Bool {
        if v < 0x80 { return v == 0x20 || (v >= 0x09 && v <= 0x0D) }
        return Unicode.Scalar(v)?.properties.isWhitespace ?? false
    }
}

/// A recursive-descent parser for the linear subset of ICU's syntax. Anything it does not
/// know to be in the subset throws ``Unsupported`` (and the pattern goes to ICU, which also
/// reports invalid patterns); it never accepts a pattern ICU would read differently.
struct FLRegexParser {
    struct Unsupported: Error { var reason: String }

    private let s: [UInt32]
    private var i = 0
    private var depth = 0

    init(pattern: String) { s = pattern.unicodeScalars.map(\.value) }

    private func peek(_ offset: Int = 0) -> UInt32? { i + offset < s.count ? s[i + offset] : nil }
    private func unsupported(_ reason: String) -> Unsupported { Unsupported(reason: reason) }

    mutating func parse() throws -> FLRegexNode {
        let node = try alternation()
        if i < s.count { throw unsupported("an unbalanced ')'") }
        return node
    }

    private mutating func alternation() throws -> FLRegexNode {
        var branches = [try concatenation()]
        while peek() == 0x7C {  // |
            i += 1
            branches.append(try concatenation())
        }
        return branches.count == 1 ? branches[0] : .alternation(branches)
    }

    private mutating func concatenation() throws -> FLRegexNode {
        var items: [FLRegexNode] = []
        while let c = peek(), c != 0x7C, c != 0x29 {  // | )
            var atom = try self.atom()
            if case .quoted(let literal) = atom {
                // A quantifier after `\Q…\E` applies to the last quoted character, as ICU reads it.
                guard let last = literal.last else { continue }
                items += literal.dropLast()
                atom = last
            }
            items.append(try quantified(atom))
        }
        if items.isEmpty { return .empty }
        return items.count == 1 ? items[0] : .concat(items)
    }

    private mutating func quantified(_ atom: FLRegexNode) throws -> FLRegexNode {
        var node = atom
        var quantifiers = 0
        while let c = peek() {
            var low = 0, high: Int? = nil
            switch c {
            case 0x2A: i += 1  // *
            case 0x2B: low = 1; i += 1  // +
            case 0x3F: high = 1; i += 1  // ?
            case 0x7B:  // {
                guard let (l, h) = try interval() else { return node }
                low = l; high = h
            default: return node
            }
            if case .assertion = atom { throw unsupported("a quantified anchor") }
            if case .empty = atom { throw unsupported("a quantifier without an operand") }
            quantifiers += 1
            if quantifiers > 1 { throw unsupported("a repeated quantifier") }
            if peek() == 0x3F { i += 1 }  // lazy: the same yes/no answer for a whole-string match
            else if peek() == 0x2B { throw unsupported("a possessive quantifier") }
            node = .repetition(node, min: low, max: high)
        }
        return node
    }

    /// `{n}`, `{n,}`, `{n,m}`; nil (no interval) leaves `{` for ICU to judge.
    private mutating func interval() throws -> (Int, Int?)? {
        var j = i + 1
        func number() -> Int? {
            var value = 0, digits = 0
            while j < s.count, s[j] >= 0x30, s[j] <= 0x39 {
                value = value * 10 + Int(s[j] - 0x30)
                digits += 1; j += 1
                if digits > 7 { return nil }
            }
            return digits == 0 ? nil : value
        }
        guard let low = number() else { throw unsupported("a '{' that is not an interval") }
        var high: Int? = low
        if j < s.count, s[j] == 0x2C {
            j += 1
            high = nil
            if j < s.count, s[j] != 0x7D {
                guard let h = number() else { throw unsupported("a malformed interval") }
                high = h
            }
        }
        guard j < s.count, s[j] == 0x7D else { throw unsupported("a malformed interval") }
        if let high, high < low { throw unsupported("an interval whose maximum is below its minimum") }
        i = j + 1
        return (low, high)
    }

    private mutating func atom() throws -> FLRegexNode {
        guard let c = peek() else { throw unsupported("an unexpected end") }
        switch c {
        case 0x28:  // (
            i += 1
            if peek() == 0x3F {  // (?
                guard peek(1) == 0x3A else { throw unsupported("a '(?' group (lookaround, atomic, named or flags)") }
                i += 2
            }
            depth += 1
            if depth > 100 { throw unsupported("groups nested more than 100 deep") }
            let inner = try alternation()
            depth -= 1
            guard peek() == 0x29 else { throw unsupported("an unclosed group") }
            i += 1
            // A group is an atom even when empty: `()*` is valid.
            if case .empty = inner { return .concat([]) }
            return inner
        case 0x5B: return .set(try characterClass())
        case 0x2E: i += 1; return .set(.single(.notLineTerminator))
        case 0x5E: i += 1; return .assertion(.start)
        case 0x24: i += 1; return .assertion(.endBeforeFinalTerminator)
        case 0x5C: return try escape(inClass: false)
        case 0x2A, 0x2B, 0x3F: throw unsupported("a quantifier without an operand")
        case 0x7B, 0x7D, 0x5D: throw unsupported("a literal brace or bracket")
        default:
            i += 1
            return .scalar(c)
        }
    }

    /// An escape, after `\`: a literal, a set, or an assertion. In a class, only literals
    /// and sets.
    private mutating func escape(inClass: Bool) throws -> FLRegexNode {
        i += 1
        guard let c = peek() else { throw unsupported("a trailing backslash") }
        i += 1
        switch c {
        case 0x64: return .set(.single(.digit(negated: false)))  // d
        case 0x44: return .set(.single(.digit(negated: true)))  // D
        case 0x77: return .set(.single(.word(negated: false)))  // w
        case 0x57: return .set(.single(.word(negated: true)))  // W
        case 0x73: return .set(.single(.space(negated: false)))  // s
        case 0x53: return .set(.single(.space(negated: true)))  // S
        case 0x74: return .scalar(0x09)  // t
        case 0x6E: return .scalar(0x0A)  // n
        case 0x72: return .scalar(0x0D)  // r
        case 0x66: return .scalar(0x0C)  // f
        case 0x65: return .scalar(0x1B)  // e
        case 0x61: return .scalar(0x07)  // a
        case 0x75: return .scalar(try hex(exactly: 4))  // u
        case 0x55: return .scalar(try hex(exactly: 8))  // U
        case 0x78:  // x
            if peek() == 0x7B {
                i += 1
                let start = i
                while i < s.count, s[i] != 0x7D { i += 1 }
                guard peek() == 0x7D, i > start, i - start <= 6 else { throw unsupported("a malformed \\x{…}") }
                let digits = s[start..<i]
                i += 1
                return .scalar(try scalarValue(digits))
            }
            return .scalar(try hex(exactly: 2))
        case 0x70, 0x50:  // p P
            return .set(.single(try property(negated: c == 0x50)))
        case 0x51:  // Q
            if inClass { throw unsupported("\\Q in a class") }
            var literal: [FLRegexNode] = []
            while i < s.count, !(s[i] == 0x5C && peek(1) == 0x45) {
                literal.append(.scalar(s[i]))
                i += 1
            }
            if i < s.count { i += 2 }
            if literal.isEmpty, let q = peek(), q == 0x2A || q == 0x2B || q == 0x3F || q == 0x7B { throw unsupported("a quantifier after an empty \\Q\\E") }
            return .quoted(literal)
        case 0x41 where !inClass: return .assertion(.start)  // A
        case 0x7A where !inClass: return .assertion(.end)  // z
        case 0x5A where !inClass: return .assertion(.endBeforeFinalTerminator)  // Z
        default:
            // Escaped ASCII punctuation and symbols are themselves; letters, digits
            // (backreferences, octal) and everything else are ICU's to read.
            let isPunctuation = (c >= 0x21 && c <= 0x2F) || (c >= 0x3A && c <= 0x40) || (c >= 0x5B && c <= 0x60) || (c >= 0x7B && c <= 0x7E)
            guard isPunctuation else {
                let name = "\\" + (Unicode.Scalar(c).map { String($0) } ?? "?")
                throw unsupported(c >= 0x30 && c <= 0x39 ? "the backreference or octal escape \(name)" : "the escape \(name)")
            }
            return .scalar(c)
        }
    }

    private mutating func hex(exactly count: Int) throws -> UInt32 {
        guard i + count <= s.count else { throw unsupported("a short hexadecimal escape") }
        let digits = s[i..<(i + count)]
        i += count
        return try scalarValue(digits)
    }

    private func scalarValue(_ digits: ArraySlice<UInt32>) throws -> UInt32 {
        var value: UInt32 = 0
        for d in digits {
            let v: UInt32
            switch d {
            case 0x30...0x39: v = d - 0x30
            case 0x41...0x46: v = d - 0x41 + 10
            case 0x61...0x66: v = d - 0x61 + 10
            default: throw unsupported("a malformed hexadecimal escape")
            }
            value = value &* 16 &+ v
            if value > 0x10FFFF { throw unsupported("a code point beyond U+10FFFF") }
        }
        // Surrogate code points never occur in a Swift string's scalars.
        guard Unicode.Scalar(value) != nil else { throw unsupported("a surrogate code point") }
        return value
    }

    private static let categories: [String: [Unicode.GeneralCategory]] = [
        "L": [.uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter],
        "Lu": [.uppercaseLetter], "Ll": [.lowercaseLetter], "Lt": [.titlecaseLetter], "Lm": [.modifierLetter], "Lo": [.otherLetter],
        "M": [.nonspacingMark, .spacingMark, .enclosingMark],
        "Mn": [.nonspacingMark], "Mc": [.spacingMark], "Me": [.enclosingMark],
        "N": [.decimalNumber, .letterNumber, .otherNumber],
        "Nd": [.decimalNumber], "Nl": [.letterNumber], "No": [.otherNumber],
        "P": [.connectorPunctuation, .dashPunctuation, .openPunctuation, .closePunctuation, .initialPunctuation, .finalPunctuation, .otherPunctuation],
        "Pc": [.connectorPunctuation], "Pd": [.dashPunctuation], "Ps": [.openPunctuation], "Pe": [.closePunctuation],
        "Pi": [.initialPunctuation], "Pf": [.finalPunctuation], "Po": [.otherPunctuation],
        "S": [.mathSymbol, .currencySymbol, .modifierSymbol, .otherSymbol],
        "Sm": [.mathSymbol], "Sc": [.currencySymbol], "Sk": [.modifierSymbol], "So": [.otherSymbol],
        "Z": [.spaceSeparator, .lineSeparator, .paragraphSeparator],
        "Zs": [.spaceSeparator], "Zl": [.lineSeparator], "Zp": [.paragraphSeparator],
        "Cc": [.control], "Cf": [.format], "Co": [.privateUse],
    ]

    /// `\p{Lu}` and the other general categories by their short names; any other property is
    /// ICU's.
    private mutating func property(negated: Bool) throws -> FLRegexSet.Item {
        guard peek() == 0x7B else { throw unsupported("a one-letter \\p") }
        let start = i + 1
        var j = start
        while j < s.count, s[j] != 0x7D { j += 1 }
        guard j < s.count else { throw unsupported("an unclosed \\p{") }
        let name = String(String.UnicodeScalarView(s[start..<j].compactMap(Unicode.Scalar.init)))
        guard let cats = Self.categories[name] else { throw unsupported("the property \\p{\(name)}") }
        i = j + 1
        return .category(cats, negated: negated)
    }

    /// `[…]` with literals, ranges, escapes, a leading `^`, a first or last `-`; nested sets,
    /// set operations, POSIX names and other placements of `-`, `^`, `]`, `[` are ICU's.
    private mutating func characterClass() throws -> FLRegexSet {
        i += 1
        var set = FLRegexSet(items: [], negated: false)
        if peek() == 0x5E { set.negated = true; i += 1 }
        if peek() == 0x5D { throw unsupported("a class starting with ']'") }
        while true {
            guard let c = peek() else { throw unsupported("an unclosed class") }
            if c == 0x5D { i += 1; break }
            let low: UInt32
            switch c {
            case 0x2D where set.items.isEmpty || peek(1) == 0x5D:
                // A '-' first or last is itself: `[-a]`, `[a-z0-9._%+-]`.
                i += 1
                set.items.append(.range(c, c))
                continue
            case 0x5B, 0x5E, 0x2D: throw unsupported("'[', '^' or '-' inside a class")
            case 0x26 where peek(1) == 0x26: throw unsupported("'&&' in a class")
            case 0x5C:
                let e = try escape(inClass: true)
                switch e {
                case .scalar(let v): low = v
                case .set(let inner) where !inner.negated && inner.items.count == 1:
                    set.items.append(inner.items[0])
                    if peek() == 0x2D, peek(1) != 0x5D { throw unsupported("a range from a class escape") }
                    continue
                default: throw unsupported("an escape in a class")
                }
            default:
                i += 1
                low = c
            }
            if peek() == 0x2D, peek(1) != 0x5D {
                guard let next = peek(1), next != 0x5B, next != 0x2D, next != 0x5E else { throw unsupported("a '-' before '[', '-' or '^' in a class") }
                i += 1
                let high: UInt32
                if next == 0x5C {
                    guard case .scalar(let v) = try escape(inClass: true) else { throw unsupported("a range to a class escape") }
                    high = v
                } else {
                    i += 1
                    high = next
                }
                guard low <= high else { throw unsupported("a reversed range") }
                set.items.append(.range(low, high))
            } else {
                set.items.append(.range(low, low))
            }
        }
        if set.items.isEmpty { throw unsupported("an empty class") }
        return set
    }
}

// MARK: - Case folding

/// Simple case folding as ICU's case-insensitive matching uses it, from the standard
/// library's case mappings. Characters whose full folding differs from the simple one
/// (`ß`, ligatures, `İ`, `ı`…) are "special": a `[c]` match involving one goes to ICU.
enum FLCaseFolding {
    private struct Tables {
        var key: [UInt32: UInt32] = [:]
        var classes: [UInt32: [UInt32]] = [:]
        var special: Set<UInt32> = []
    }

    private static let tables: Tables = {
        var t = Tables()
        func single(_ s: String) -> Unicode.Scalar? {
            var it = s.unicodeScalars.makeIterator()
            guard let first = it.next(), it.next() == nil else { return nil }
            return first
        }
        for v: UInt32 in 0x80...0x1FFFF {
            guard let s = Unicode.Scalar(v), s.properties.changesWhenCaseMapped else { continue }
            let p = s.properties
            let lower = single(p.lowercaseMapping), upper = single(p.uppercaseMapping), title = single(p.titlecaseMapping)
            if lower == nil || upper == nil || title == nil || v == 0x130 || v == 0x131 {
                t.special.insert(v)
                continue
            }
            let u = upper ?? s
            let k = single(u.properties.lowercaseMapping) ?? u
            if k.value != v { t.key[v] = k.value }
        }
        // A character that lowercases to a special one folds as it does (ẞ to ß, i.e. "ss").
        for (v, k) in t.key where t.special.contains(k) { t.special.insert(v) }
        for v in t.special { t.key[v] = nil }
        for (v, k) in t.key { t.classes[k, default: [k]].append(v) }
        // ASCII letters join the classes of the non-ASCII characters that fold to them (K, ſ).
        for v: UInt32 in 0x41...0x5A {
            let k = v | 0x20
            if t.classes[k] != nil { t.classes[k]?.append(v) }
        }
        return t
    }()

    /// The fold key: equal keys, equal under case-insensitive matching.
    static func key(_ v: UInt32) -> UInt32 {
        if v < 0x80 { return v >= 0x41 && v <= 0x5A ? v | 0x20 : v }
        return tables.key[v] ?? v
    }

    /// Every scalar with the same fold key (including `v`).
    static func equivalents(_ v: UInt32) -> [UInt32] {
        let k = key(v)
        if let members = tables.classes[k] { return members }
        if v < 0x80, k != v { return [v, k] }
        if v >= 0x61 && v <= 0x7A { return [v, v - 0x20] }
        return [v]
    }

    static func isSpecial(_ v: UInt32) -> Bool { v >= 0x80 && tables.special.contains(v) }

    static func containsSpecial(_ text: String) -> Bool {
        for u in text.utf8 where u >= 0x80 {
            return text.unicodeScalars.contains { isSpecial($0.value) }
        }
        return false
    }
}

// MARK: - Program and Pike VM

/// A compiled pattern: instructions for a Thompson NFA, run as a Pike VM.
struct FLRegexProgram: Sendable {
    enum Op: UInt8 { case scalar, fold, set, split, jump, assert, match }
    struct Instruction: Sendable {
        var op: Op
        var a: Int32
        var b: Int32
    }

    private(set) var code: [Instruction] = []
    private(set) var sets: [FLRegexSet] = []
    /// ASCII membership of each set (bit per scalar below 128), options applied.
    private(set) var asciiBits: [(UInt64, UInt64)] = []
    let caseInsensitive: Bool
    /// Whether some assertion needs the text's length (`\z`, `$`, `\Z`).
    private(set) var needsEnd = false
    /// The scalars of a pattern made only of literals (case-sensitive), matched by comparison.
    private(set) var literal: [UInt32]?

    init(_ node: FLRegexNode, caseInsensitive: Bool) {
        self.caseInsensitive = caseInsensitive
        if !caseInsensitive, let scalars = Self.literalScalars(node) {
            literal = scalars
            return
        }
        emit(node)
        code.append(Instruction(op: .match, a: 0, b: 0))
    }

    private static func literalScalars(_ node: FLRegexNode) -> [UInt32]? {
        switch node {
        case .empty: return []
        case .scalar(let v): return [v]
        case .concat(let items):
            var out: [UInt32] = []
            for item in items {
                guard let part = literalScalars(item) else { return nil }
                out += part
            }
            return out
        default: return nil
        }
    }

    private mutating func emit(_ node: FLRegexNode) {
        switch node {
        case .empty, .quoted: break
        case .scalar(let v):
            if caseInsensitive {
                code.append(Instruction(op: .fold, a: Int32(bitPattern: FLCaseFolding.key(v)), b: 0))
            } else {
                code.append(Instruction(op: .scalar, a: Int32(bitPattern: v), b: 0))
            }
        case .set(let set):
            var lo: UInt64 = 0, hi: UInt64 = 0
            for v: UInt32 in 0..<128 where set.contains(v, caseInsensitive: caseInsensitive) {
                if v < 64 { lo |= 1 << UInt64(v) } else { hi |= 1 << UInt64(v - 64) }
            }
            sets.append(set)
            asciiBits.append((lo, hi))
            code.append(Instruction(op: .set, a: Int32(sets.count - 1), b: 0))
        case .concat(let items):
            for item in items { emit(item) }
        case .alternation(let branches):
            // split L1, next; L1: branch; jump end; next: split …; last branch
            var jumps: [Int] = []
            for (index, branch) in branches.enumerated() {
                if index < branches.count - 1 {
                    let split = code.count
                    code.append(Instruction(op: .split, a: Int32(split + 1), b: 0))
                    emit(branch)
                    jumps.append(code.count)
                    code.append(Instruction(op: .jump, a: 0, b: 0))
                    code[split].b = Int32(code.count)
                } else {
                    emit(branch)
                }
            }
            for j in jumps { code[j].a = Int32(code.count) }
        case .repetition(let body, let low, let high):
            for _ in 0..<low { emit(body) }
            if let high {
                var splits: [Int] = []
                for _ in 0..<(high - low) {
                    splits.append(code.count)
                    code.append(Instruction(op: .split, a: Int32(code.count + 1), b: 0))
                    emit(body)
                }
                for s in splits { code[s].b = Int32(code.count) }
            } else {
                // L: split body, end; body; jump L; end:
                let split = code.count
                code.append(Instruction(op: .split, a: Int32(split + 1), b: 0))
                emit(body)
                code.append(Instruction(op: .jump, a: Int32(split), b: 0))
                code[split].b = Int32(code.count)
            }
        case .assertion(let kind):
            if kind != .start { needsEnd = true }
            code.append(Instruction(op: .assert, a: Int32(kind.rawValue), b: 0))
        }
    }

    /// Whether the program matches the whole text. Time O(text × program), no recursion.
    func matches(_ text: String) -> Bool {
        if let literal { return text.unicodeScalars.elementsEqual(literal.lazy.map { Unicode.Scalar($0) ?? " " }) }
        let scalars = text.unicodeScalars
        // For `\z`, `$`, `\Z`: the length, and where `$` may also succeed before the end.
        var length = -1, dollar = -1
        if needsEnd {
            length = scalars.count
            var tail = scalars.reversed().prefix(2).map(\.value)
            tail.reverse()
            if tail.count == 2, tail[0] == 0x0D, tail[1] == 0x0A {
                dollar = length - 2
            } else if let last = tail.last, FLRegexSet.isLineTerminator(last) {
                dollar = length - 1
            }
        }
        let n = code.count
        let capacity = 5 * n + 2
        // Small programs keep their thread lists on the stack; large ones on the heap, since
        // SQLite may call the function on a thread with a small stack.
        if capacity > 4096 {
            let base = UnsafeMutablePointer<Int32>.allocate(capacity: capacity)
            defer { base.deallocate() }
            return run(scalars, base, n, length, dollar)
        }
        return withUnsafeTemporaryAllocation(of: Int32.self, capacity: capacity) { buffer -> Bool in
            guard let base = buffer.baseAddress else { return false }
            return run(scalars, base, n, length, dollar)
        }
    }

    /// The simulation, with `5 n + 2` words of scratch space at `base`.
    private func run(_ scalars: String.UnicodeScalarView, _ base: UnsafeMutablePointer<Int32>, _ n: Int, _ length: Int, _ dollar: Int) -> Bool {
        base.initialize(repeating: 0, count: 5 * n + 2)
        // Two sparse sets (dense + sparse each) and a stack.
        var current = SparseSet(dense: base, sparse: base + n, count: 0)
        var next = SparseSet(dense: base + 2 * n, sparse: base + 3 * n, count: 0)
        let stack = base + 4 * n
        var position = 0
        addThread(&current, 0, position, length, dollar, stack)
        for scalar in scalars {
            if current.count == 0 { return false }
            let v = scalar.value
            let folded = caseInsensitive ? FLCaseFolding.key(v) : v
            next.count = 0
            position += 1
            for k in 0..<current.count {
                let pc = Int(current.dense[k])
                let inst = code[pc]
                let advance: Bool
                switch inst.op {
                case .scalar: advance = UInt32(bitPattern: inst.a) == v
                case .fold: advance = UInt32(bitPattern: inst.a) == folded
                case .set:
                    let index = Int(inst.a)
                    if v < 64 { advance = asciiBits[index].0 & (1 << UInt64(v)) != 0 }
                    else if v < 128 { advance = asciiBits[index].1 & (1 << UInt64(v - 64)) != 0 }
                    else { advance = sets[index].contains(v, caseInsensitive: caseInsensitive) }
                default: advance = false
                }
                if advance { addThread(&next, pc + 1, position, length, dollar, stack) }
            }
            swap(&current, &next)
        }
        for k in 0..<current.count where code[Int(current.dense[k])].op == .match { return true }
        return false
    }

    private struct SparseSet {
        var dense: UnsafeMutablePointer<Int32>
        var sparse: UnsafeMutablePointer<Int32>
        var count: Int

        @inline(__always) func contains(_ pc: Int) -> Bool {
            let k = Int(sparse[pc])
            return k >= 0 && k < count && Int(dense[k]) == pc
        }

        @inline(__always) mutating func insert(_ pc: Int) {
            sparse[pc] = Int32(count)
            dense[count] = Int32(pc)
            count += 1
        }
    }

    /// Adds `pc` and everything reachable from it without reading a scalar (splits, jumps,
    /// assertions that hold at `position`) to `set`.
    private func addThread(_ set: inout SparseSet, _ pc: Int, _ position: Int, _ length: Int, _ dollar: Int, _ stack: UnsafeMutablePointer<Int32>) {
        var top = 0
        if set.contains(pc) { return }
        set.insert(pc)
        stack[0] = Int32(pc)
        top = 1
        while top > 0 {
            top -= 1
            let pc = Int(stack[top])
            let inst = code[pc]
            var targets: (Int, Int) = (-1, -1)
            switch inst.op {
            case .jump: targets.0 = Int(inst.a)
            case .split: targets = (Int(inst.a), Int(inst.b))
            case .assert:
                let holds: Bool
                switch FLRegexAssertion(rawValue: UInt8(inst.a)) {
                case .start: holds = position == 0
                case .end: holds = position == length
                case .endBeforeFinalTerminator: holds = position == length || position == dollar
                case nil: holds = false
                }
                if holds { targets.0 = pc + 1 }
            default: continue
            }
            if targets.0 >= 0 && !set.contains(targets.0) {
                set.insert(targets.0)
                stack[top] = Int32(targets.0)
                top += 1
            }
            if targets.1 >= 0 && !set.contains(targets.1) {
                set.insert(targets.1)
                stack[top] = Int32(targets.1)
                top += 1
            }
        }
    }
}
