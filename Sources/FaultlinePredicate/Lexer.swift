import Foundation

/// Reserved words of the format language (matched case-insensitively).
enum Keyword: String, CaseIterable, Sendable {
    case and = "AND", or = "OR", `in` = "IN", not = "NOT", all = "ALL", any = "ANY", some = "SOME"
    case none = "NONE", like = "LIKE", caseInsensitive = "CASEINSENSITIVE", ci = "CI"
    case matches = "MATCHES", contains = "CONTAINS", beginsWith = "BEGINSWITH", endsWith = "ENDSWITH"
    case between = "BETWEEN", null = "NULL", `nil` = "NIL", `self` = "SELF", `true` = "TRUE", yes = "YES"
    case `false` = "FALSE", no = "NO", first = "FIRST", last = "LAST", size = "SIZE", anyKey = "ANYKEY"
    case subquery = "SUBQUERY", fetch = "FETCH", cast = "CAST", truePredicate = "TRUEPREDICATE"
    case falsePredicate = "FALSEPREDICATE", utiConformsTo = "UTI-CONFORMS-TO", utiEquals = "UTI-EQUALS"
    // Contextual: keywords only when followed by "(".
    case function = "FUNCTION", ternary = "TERNARY"

    static let byName: [String: Keyword] = {
        var d: [String: Keyword] = [:]
        for k in Keyword.allCases { d[k.rawValue] = k }
        return d
    }()

    /// Whether an identifier spelled like this keyword must be written `#word` by the printer.
    static func isReserved(_ word: String) -> Bool {
        guard let k = byName[word.uppercased()] else { return false }
        return k != .function && k != .ternary
    }
}

enum Punct: String, Sendable {
    case eq = "==", ne = "!=", lt = "<", le = "<=", gt = ">", ge = ">="
    case andAnd = "&&", orOr = "||", bang = "!", plus = "+", minus = "-", star = "*", slash = "/"
    case power = "**", assign = ":=", lparen = "(", rparen = ")", lbrace = "{", rbrace = "}"
    case lbracket = "[", rbracket = "]", comma = ",", dot = "."
}

enum TokenKind: Equatable, Sendable {
    case identifier(String)
    case keyword(Keyword)
    case selector(String)
    case string(String)
    case number(FLValue)
    case variable(String)
    case collectionOperator(String)
    case argument(FLValue)
    case keyPathArgument(String)
    case punct(Punct)
    case eof
    /// Before substitution (the cached form of a format string): a `%` specifier waiting for
    /// its argument, and the syntax error that ended lexing.
    case formatSpecifier(FormatSpecifier)
    case lexError(PredicateSyntaxError)
}

/// A `%` specifier as written: what it converts and which argument it takes.
struct FormatSpecifier: Equatable, Sendable {
    /// `%@`, `%ld`, …: for messages.
    var spec: String
    /// The conversion character (`@`, `K`, `d`, …).
    var conversion: Character
    /// The argument of a positional specifier (`%2$@` → 1), else the next one.
    var explicitIndex: Int?
    /// Where the specifier starts (0-based).
    var start: Int
}

/// Format strings already lexed (before substitution), so that making the same predicate
/// with other arguments does not lex it again, nor (see ``ParseTemplate``) parse it again.
/// Bounded; shared by all threads.
final class LexedFormats: @unchecked Sendable {  // `entries` is only touched under `lock`
    static let shared = LexedFormats()
    private let lock = NSLock()
    /// A lexed format: its tokens and, for each "(" token, the index of its ")".
    struct Entry {
        var source: String
        var tokens: [Token]
        var matchingParen: [Int: Int]
        /// The format's predicate with its arguments left as slots, once worked out.
        var template: ParseTemplate.State = .unknown
    }

    private var entries: [FormatKey: Entry] = [:]
    private let limit = 512

    /// The entry of exactly this source (byte for byte), lexing it the first time.
    func entry(for source: String) -> Entry {
        let key = FormatKey(source)
        if let entry = lock.withLock({ entries[key] }) { return entry }
        var lexer = Lexer(source, arguments: [])
        let raw = lexer.lex()
        var matchingParen: [Int: Int] = [:]
        var stack: [Int] = []
        for (index, t) in raw.enumerated() {
            if t.kind == .punct(.lparen) { stack.append(index) }
            if t.kind == .punct(.rparen), let open = stack.popLast() { matchingParen[open] = index }
        }
        let entry = Entry(source: source, tokens: raw, matchingParen: matchingParen)
        store(entry)
        return entry
    }

    func store(_ entry: Entry) {
        let key = FormatKey(entry.source)
        lock.withLock {
            if entries.count >= limit, entries[key] == nil { entries.removeAll(keepingCapacity: true) }
            entries[key] = entry
        }
    }

    /// Records the template worked out for a format (a no-op if the entry was dropped since).
    func setTemplate(_ template: ParseTemplate.State, for source: String) {
        let key = FormatKey(source)
        lock.withLock { entries[key]?.template = template }
    }
}

/// A format string as a dictionary key: equal only to the same bytes (Swift's `String`
/// equality treats canonically equivalent texts, `é` and `e` + U+0301, as equal, and these
/// lex differently), hashed once over its UTF-8 bytes (``FLBytesHash``), which costs a
/// fraction of hashing the `String`.
struct FormatKey: Hashable {
    let source: String
    let bytesHash: UInt64

    init(_ source: String) {
        self.source = source
        if let hash = source.utf8.withContiguousStorageIfAvailable({ FLBytesHash.hash(UnsafeRawBufferPointer($0)) }) {
            bytesHash = hash
        } else {
            bytesHash = Array(source.utf8).withUnsafeBytes { FLBytesHash.hash($0) }
        }
    }

    func hash(into hasher: inout Hasher) { hasher.combine(bytesHash) }

    static func == (a: FormatKey, b: FormatKey) -> Bool {
        guard a.bytesHash == b.bytesHash, a.source.utf8.count == b.source.utf8.count else { return false }
        let fast = a.source.utf8.withContiguousStorageIfAvailable { x in
            b.source.utf8.withContiguousStorageIfAvailable { y in
                guard let p = x.baseAddress, let q = y.baseAddress else { return x.count == y.count }
                return memcmp(p, q, x.count) == 0
            }
        }
        if let fast, let equal = fast { return equal }
        return a.source.utf8.elementsEqual(b.source.utf8)
    }
}

struct Token: Sendable, Equatable {
    var kind: TokenKind
    /// 1-based column of the first character.
    var column: Int
}

/// Splits a format string into tokens, substituting `%` arguments as it goes.
struct Lexer {
    private(set) var chars: [Character] = []
    let source: String
    var pos = 0
    var arguments: [Any?]
    var nextArgument = 0

    init(_ source: String, arguments: [Any?]) {
        self.source = source
        self.arguments = arguments
    }

    func error(_ message: String, at index: Int) -> PredicateSyntaxError {
        PredicateSyntaxError(formatString: source, message: message, column: index + 1)
    }

    func peek(_ offset: Int = 0) -> Character? {
        let i = pos + offset
        return i < chars.count ? chars[i] : nil
    }

    // ASCII first: Unicode property look-ups cost more than the rest of lexing a word.
    static func isIdentStart(_ c: Character) -> Bool {
        if let a = c.asciiValue { return a == 95 || (a | 0x20) &- 97 < 26 }
        return c.isLetter
    }

    static func isIdentPart(_ c: Character) -> Bool {
        if let a = c.asciiValue { return a == 95 || (a | 0x20) &- 97 < 26 || a &- 48 < 10 }
        return c.isLetter || c.isNumber
    }

    static func isSpace(_ c: Character) -> Bool {
        if let a = c.asciiValue { return a == 32 || (a >= 9 && a <= 13) }
        return c.isWhitespace
    }

    /// The tokens of a lexed format with each `%` specifier replaced by its argument;
    /// lexing (which depends on the source only) is done once per format string,
    /// substitution every time.
    mutating func substituted(_ raw: [Token]) throws -> [Token] {
        var tokens = raw
        for i in tokens.indices {
            switch tokens[i].kind {
            case .formatSpecifier(let specifier): tokens[i] = try substitute(specifier)
            case .lexError(let error): throw error
            default: continue
            }
        }
        return tokens
    }

    /// The tokens of the source, `%` specifiers unsubstituted; a syntax error ends the list.
    mutating func lex() -> [Token] {
        chars = Array(source)
        pos = 0
        var tokens: [Token] = []
        while true {
            do {
                let t = try next()
                tokens.append(t)
                if t.kind == .eof { return tokens }
            } catch let error as PredicateSyntaxError {
                tokens.append(Token(kind: .lexError(error), column: pos + 1))
                return tokens
            } catch {
                tokens.append(Token(kind: .lexError(self.error("\(error)", at: pos)), column: pos + 1))
                return tokens
            }
        }
    }

    mutating func readIdentifier() -> String {
        let start = pos
        while let c = peek(), Lexer.isIdentPart(c) { pos += 1 }
        return String(chars[start..<pos])
    }

    mutating func next() throws -> Token {
        while let c = peek(), Lexer.isSpace(c) { pos += 1 }
        let start = pos
        guard let c = peek() else { return Token(kind: .eof, column: start + 1) }
        func tok(_ k: TokenKind) -> Token { Token(kind: k, column: start + 1) }
        func punct(_ p: Punct, _ length: Int) -> Token { pos += length; return tok(.punct(p)) }

        if Lexer.isIdentStart(c) {
            let word = readIdentifier()
            // Selector-style function names: `lowercase:`, `add:to:` (but not `$x :=`).
            if peek() == ":" && peek(1) != "=" {
                var sel = word + ":"
                pos += 1
                while true {
                    let save = pos
                    if let c2 = peek(), Lexer.isIdentStart(c2) {
                        let part = readIdentifier()
                        if peek() == ":" && peek(1) != "=" { sel += part + ":"; pos += 1; continue }
                    }
                    pos = save
                    break
                }
                return tok(.selector(sel))
            }
            let upper = word.uppercased()
            if upper == "UTI" {
                for (suffix, kw) in [("-CONFORMS-TO", Keyword.utiConformsTo), ("-EQUALS", .utiEquals)] {
                    let n = suffix.count
                    if pos + n <= chars.count, String(chars[pos..<pos + n]).uppercased() == suffix,
                       !(pos + n < chars.count && Lexer.isIdentPart(chars[pos + n])) {
                        pos += n
                        return tok(.keyword(kw))
                    }
                }
            }
            if let kw = Keyword.byName[upper] {
                if kw == .function || kw == .ternary {
                    var i = pos
                    while i < chars.count, chars[i].isWhitespace { i += 1 }
                    if i < chars.count, chars[i] == "(" { return tok(.keyword(kw)) }
                    return tok(.identifier(word))
                }
                return tok(.keyword(kw))
            }
            return tok(.identifier(word))
        }
        if c.isASCII, c.isNumber { return tok(.number(try readNumber())) }

        switch c {
        case "\"", "'":
            return tok(.string(try readString(quote: c)))
        case "#":
            pos += 1
            guard let c2 = peek(), Lexer.isIdentStart(c2) else {
                throw error("expected an identifier after '#'", at: start)
            }
            return tok(.identifier(readIdentifier()))
        case "$":
            pos += 1
            guard let c2 = peek(), Lexer.isIdentStart(c2) else {
                throw error("expected a variable name after '$'", at: start)
            }
            return tok(.variable(readIdentifier()))
        case "@":
            pos += 1
            guard let c2 = peek(), Lexer.isIdentStart(c2) else {
                throw error("expected a name after '@'", at: start)
            }
            return tok(.collectionOperator("@" + readIdentifier()))
        case "%":
            return try readFormatSpecifier()
        case "=":
            if peek(1) == "=" { return punct(.eq, 2) }
            if peek(1) == "<" { return punct(.le, 2) }
            if peek(1) == ">" { return punct(.ge, 2) }
            return punct(.eq, 1)
        case "!":
            return peek(1) == "=" ? punct(.ne, 2) : punct(.bang, 1)
        case "<":
            if peek(1) == "=" { return punct(.le, 2) }
            if peek(1) == ">" { return punct(.ne, 2) }
            return punct(.lt, 1)
        case ">":
            return peek(1) == "=" ? punct(.ge, 2) : punct(.gt, 1)
        case "&":
            if peek(1) == "&" { return punct(.andAnd, 2) }
            throw error("unexpected '&' (did you mean '&&'?)", at: start)
        case "|":
            if peek(1) == "|" { return punct(.orOr, 2) }
            throw error("unexpected '|' (did you mean '||'?)", at: start)
        case "*":
            return peek(1) == "*" ? punct(.power, 2) : punct(.star, 1)
        case ":":
            if peek(1) == "=" { return punct(.assign, 2) }
            throw error("unexpected ':'", at: start)
        case "+": return punct(.plus, 1)
        case "-": return punct(.minus, 1)
        case "/": return punct(.slash, 1)
        case "(": return punct(.lparen, 1)
        case ")": return punct(.rparen, 1)
        case "{": return punct(.lbrace, 1)
        case "}": return punct(.rbrace, 1)
        case "[": return punct(.lbracket, 1)
        case "]": return punct(.rbracket, 1)
        case ",": return punct(.comma, 1)
        case ".": return punct(.dot, 1)
        default:
            throw error("unexpected character '\(c)'", at: start)
        }
    }

    mutating func readNumber() throws -> FLValue {
        let start = pos
        if peek() == "0", let p = peek(1), "xXoObB".contains(p) {
            let radix: Int
            switch p {
            case "x", "X": radix = 16
            case "o", "O": radix = 8
            default: radix = 2
            }
            pos += 2
            var digits = ""
            while let c = peek(), c.isHexDigit || c == "_" {
                if c != "_" { digits.append(c) }
                pos += 1
            }
            guard !digits.isEmpty, let v = Int(digits, radix: radix) else {
                if digits.isEmpty { throw error("expected digits after '0\(p)'", at: pos) }
                if let u = UInt64(digits, radix: radix) { return .double(Double(u)) }
                throw error("invalid base-\(radix) number '0\(p)\(digits)'", at: start)
            }
            if let c = peek(), Lexer.isIdentPart(c) {
                throw error("invalid character '\(c)' in number", at: pos)
            }
            return .int(v)
        }
        var text = ""
        var isFloat = false
        while let c = peek(), c.isASCII, c.isNumber { text.append(c); pos += 1 }
        if peek() == ".", let d = peek(1), d.isASCII, d.isNumber {
            isFloat = true
            text.append("."); pos += 1
            while let c = peek(), c.isASCII, c.isNumber { text.append(c); pos += 1 }
        }
        if let e = peek(), e == "e" || e == "E" {
            var look = 1
            if let s = peek(1), s == "+" || s == "-" { look = 2 }
            if let d = peek(look), d.isASCII, d.isNumber {
                isFloat = true
                for _ in 0..<look { text.append(chars[pos]); pos += 1 }
                while let c = peek(), c.isASCII, c.isNumber { text.append(c); pos += 1 }
            }
        }
        if let c = peek(), Lexer.isIdentPart(c) {
            throw error("invalid character '\(c)' in number", at: pos)
        }
        if !isFloat, let i = Int(text) { return .int(i) }
        guard let d = Double(text) else { throw error("invalid number '\(text)'", at: start) }
        return .double(d)
    }

    mutating func readString(quote: Character) throws -> String {
        let start = pos
        pos += 1
        var s = ""
        while true {
            guard let c = peek() else { throw error("unterminated string literal", at: start) }
            pos += 1
            if c == quote { return s }
            if c != "\\" { s.append(c); continue }
            guard let e = peek() else { throw error("unterminated string literal", at: start) }
            pos += 1
            switch e {
            case "n": s.append("\n")
            case "t": s.append("\t")
            case "r": s.append("\r")
            case "0", "1", "2", "3", "4", "5", "6", "7":
                var digits = String(e)
                while digits.count < 3, let d = peek(), "01234567".contains(d) { digits.append(d); pos += 1 }
                guard let v = UInt32(digits, radix: 8), let scalar = Unicode.Scalar(v) else {
                    throw error("invalid octal escape", at: pos - 1)
                }
                s.unicodeScalars.append(scalar)
            case "x", "X", "u", "U":
                let want = (e == "x" || e == "X") ? 2 : 4
                var digits = ""
                while digits.count < want, let d = peek(), d.isHexDigit { digits.append(d); pos += 1 }
                guard digits.count == want, let v = UInt32(digits, radix: 16), let scalar = Unicode.Scalar(v) else {
                    throw error("invalid '\\\(e)' escape (expected \(want) hex digits)", at: pos)
                }
                s.unicodeScalars.append(scalar)
            default:
                s.append(e) // \" \' \\ and any other escaped character stand for themselves
            }
        }
    }

    mutating func takeArgument(_ spec: String, at start: Int) throws -> Any? {
        guard nextArgument < arguments.count else {
            throw error("missing argument for '\(spec)' (only \(arguments.count) given)", at: start)
        }
        defer { nextArgument += 1 }
        return arguments[nextArgument]
    }

    mutating func readFormatSpecifier() throws -> Token {
        let start = pos
        pos += 1
        if peek() == "%" { pos += 1; return Token(kind: .string("%"), column: start + 1) }
        // Optional positional index: %1$@
        var explicitIndex: Int?
        var look = 0
        var digits = ""
        while let d = peek(look), d.isASCII, d.isNumber { digits.append(d); look += 1 }
        if !digits.isEmpty, peek(look) == "$", let n = Int(digits), n >= 1 {
            explicitIndex = n - 1
            pos += look + 1
        }
        var length = ""
        while let c = peek(), "lhqzjtL".contains(c), length.count < 2 { length.append(c); pos += 1 }
        guard let conv = peek() else { throw error("incomplete format specifier '%'", at: start) }
        pos += 1
        let spec = "%" + length + String(conv)
        return Token(kind: .formatSpecifier(FormatSpecifier(spec: spec, conversion: conv, explicitIndex: explicitIndex, start: start)), column: start + 1)
    }

    /// The token a `%` specifier stands for, with its argument converted.
    mutating func substitute(_ specifier: FormatSpecifier) throws -> Token {
        let spec = specifier.spec, conv = specifier.conversion, explicitIndex = specifier.explicitIndex, start = specifier.start
        let arg: Any?
        if let explicitIndex {
            guard explicitIndex < arguments.count else {
                throw error("missing argument \(explicitIndex + 1) for '\(spec)'", at: start)
            }
            arg = arguments[explicitIndex]
        } else {
            arg = try takeArgument(spec, at: start)
        }
        let argNumber = (explicitIndex ?? (nextArgument - 1)) + 1
        func bad(_ what: String) -> PredicateSyntaxError {
            let t = flUnwrap(arg).map { String(describing: type(of: $0)) } ?? "nil"
            return error("argument \(argNumber) (\(t)) is not \(what) for '\(spec)'", at: start)
        }
        func tok(_ k: TokenKind) -> Token { Token(kind: k, column: start + 1) }
        switch conv {
        case "@":
            guard let v = FLValue(converting: arg) else { throw bad("a value that can appear in a predicate") }
            return tok(.argument(v))
        case "K":
            guard let v = flUnwrap(arg) else { throw bad("a key path string") }
            if let s = v as? String { return tok(.keyPathArgument(s)) }
            if let s = v as? Substring { return tok(.keyPathArgument(String(s))) }
            if let s = v as? NSString { return tok(.keyPathArgument(String(describing: s))) }
            throw bad("a key path string")
        case "d", "i", "u", "x", "X", "o", "D", "U", "O":
            guard let v = FLValue(converting: arg) else { throw bad("an integer") }
            switch v {
            case .int, .null: return tok(.argument(v))
            case .bool(let b): return tok(.argument(.int(b ? 1 : 0)))
            case .double(let d) where d.isFinite && abs(d) < 9.2e18: return tok(.argument(.int(Int(d))))
            case .decimal(let d): return tok(.argument(.int(NSDecimalNumber(decimal: d).intValue)))
            default: throw bad("an integer")
            }
        case "f", "F", "e", "E", "g", "G", "a", "A":
            guard let v = FLValue(converting: arg) else { throw bad("a number") }
            switch v {
            case .double, .null: return tok(.argument(v))
            case .int(let i): return tok(.argument(.double(Double(i))))
            case .bool(let b): return tok(.argument(.double(b ? 1 : 0)))
            case .decimal(let d): return tok(.argument(.double(NSDecimalNumber(decimal: d).doubleValue)))
            default: throw bad("a number")
            }
        case "s", "S":
            guard let v = FLValue(converting: arg) else { throw bad("a string") }
            if case .string = v { return tok(.argument(v)) }
            if case .null = v { return tok(.argument(v)) }
            throw bad("a string")
        case "c", "C":
            guard let v = FLValue(converting: arg) else { throw bad("a character") }
            switch v {
            case .string(let s) where s.count == 1: return tok(.argument(v))
            case .int(let i):
                guard let u = UInt32(exactly: i), let scalar = Unicode.Scalar(u) else { throw bad("a character") }
                return tok(.argument(.string(String(Character(scalar)))))
            default: throw bad("a character")
            }
        default:
            throw error("unsupported format specifier '\(spec)'", at: start)
        }
    }
}

/// A fast hash of bytes for the caches keyed by text (format strings, predicate shapes): 8
/// bytes at a time, multiply and shift; not for untrusted keys in long-lived tables (the
/// caches are small and bounded).
package enum FLBytesHash {
    package static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325 ^ UInt64(bytes.count)
        var i = 0
        while i + 8 <= bytes.count {
            h = (h ^ bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self)) &* 0x9E37_79B9_7F4A_7C15
            h ^= h >> 29
            i += 8
        }
        while i < bytes.count {
            h = (h ^ UInt64(bytes[i])) &* 0x100_0000_01b3
            i += 1
        }
        return h ^ (h >> 32)
    }
}
