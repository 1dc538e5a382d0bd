import Foundation

/// Recursive-descent parser for the format language (grammar and precedence per the
/// project's predicate-language reference: OR < AND < NOT < comparison; `+ -` < `* /` <
/// `**` (right-associative) < unary minus < postfix `.` `[ ]`).
struct Parser {
    var tokens: [Token]
    var i = 0
    let source: String
    var depth = 0
    /// Index of each "(" token → index of its matching ")" token.
    var matchingParen: [Int: Int] = [:]

    /// Set while parsing a ``ParseTemplate`` (arguments as slots) when the parse looked at an
    /// argument's value (`-%@` and `CAST(%@, …)` fold constants): the tree then depends on the
    /// arguments, and the format gets no template.
    var inspectedArgumentSlot = false

    static let maxDepth = 200

    /// A parser of a format string with its arguments substituted (the format lexed once,
    /// see ``LexedFormats``).
    init(source: String, arguments: [Any?]) throws {
        let entry = LexedFormats.shared.entry(for: source)
        var lexer = Lexer(source, arguments: arguments)
        self.init(source: source, tokens: try lexer.substituted(entry.tokens), matchingParen: entry.matchingParen)
    }

    /// A parser of tokens already substituted.
    init(source: String, tokens: [Token], matchingParen: [Int: Int]) {
        self.source = source
        self.tokens = tokens
        self.matchingParen = matchingParen
    }

    // MARK: Entry points

    mutating func parsePredicateToEnd() throws -> FLPredicate {
        let p = try parseOr()
        try expectEnd(afterPredicate: true)
        if FLNestingDepth.depth(of: p) > FLNestingDepth.maximum { throw tooDeep() }
        return p
    }

    mutating func parseExpressionToEnd() throws -> FLExpression {
        let e = try parseExpression()
        try expectEnd(afterPredicate: false)
        if FLNestingDepth.depth(of: e) > FLNestingDepth.maximum { throw tooDeep() }
        return e
    }

    func tooDeep() -> PredicateSyntaxError {
        PredicateSyntaxError(
            formatString: source,
            message: "the format string is nested too deeply (more than \(FLNestingDepth.maximum) levels of predicates and expressions)",
            column: 1)
    }

    mutating func expectEnd(afterPredicate: Bool) throws {
        guard !atEnd else { return }
        if afterPredicate, comparisonOperatorAhead() {
            throw error("comparisons cannot be chained; combine them with AND")
        }
        if isPunct(.rparen) { throw error("unbalanced ')'") }
        throw error("unexpected \(describe(current)) after the end of the \(afterPredicate ? "predicate" : "expression")")
    }

    // MARK: Token helpers

    /// The current token, lent in place (a `switch` over it copies no payload it does not bind).
    var current: Token {
        _read { yield tokens[min(i, tokens.count - 1)] }
    }

    // Token tests that look at the current token in place (no copy of its payload).
    func isPunct(_ p: Punct) -> Bool {
        if case .punct(let q) = tokens[min(i, tokens.count - 1)].kind { return q == p }
        return false
    }

    func isKeyword(_ k: Keyword) -> Bool {
        if case .keyword(let q) = tokens[min(i, tokens.count - 1)].kind { return q == k }
        return false
    }

    var atEnd: Bool {
        if case .eof = tokens[min(i, tokens.count - 1)].kind { return true }
        return false
    }
    func peekKind(_ offset: Int = 1) -> TokenKind { tokens[min(i + offset, tokens.count - 1)].kind }

    mutating func advance() { if i < tokens.count - 1 { i += 1 } }

    func error(_ message: String, at token: Token? = nil) -> PredicateSyntaxError {
        PredicateSyntaxError(formatString: source, message: message, column: (token ?? current).column)
    }

    func describe(_ t: Token) -> String {
        switch t.kind {
        case .identifier(let s): return "identifier '\(s)'"
        case .keyword(let k): return "keyword '\(k.rawValue)'"
        case .selector(let s): return "function '\(s)'"
        case .string: return "string literal"
        case .number: return "number"
        case .variable(let v): return "variable '$\(v)'"
        case .collectionOperator(let s): return "'\(s)'"
        case .argument, .formatSpecifier: return "format argument"
        case .lexError: return "a syntax error"
        case .keyPathArgument: return "'%K' argument"
        case .punct(let p): return "'\(p.rawValue)'"
        case .eof: return "end of input"
        }
    }

    mutating func accept(_ p: Punct) -> Bool {
        if isPunct(p) { advance(); return true }
        return false
    }

    mutating func accept(_ k: Keyword) -> Bool {
        if isKeyword(k) { advance(); return true }
        return false
    }

    mutating func expect(_ p: Punct, _ context: String) throws {
        guard accept(p) else {
            throw error("expected '\(p.rawValue)' \(context), found \(describe(current))")
        }
    }

    mutating func enter() throws {
        depth += 1
        if depth > Parser.maxDepth { throw error(tooDeep().message) }
    }

    // MARK: Predicates

    mutating func parseOr() throws -> FLPredicate {
        try enter(); defer { depth -= 1 }
        var items = [try parseAnd()]
        while accept(.or) || accept(.orOr) { items.append(try parseAnd()) }
        return items.count == 1 ? items[0] : FLPredicate(.or(items))
    }

    mutating func parseAnd() throws -> FLPredicate {
        var items = [try parseNot()]
        while accept(.and) || accept(.andAnd) { items.append(try parseNot()) }
        return items.count == 1 ? items[0] : FLPredicate(.and(items))
    }

    mutating func parseNot() throws -> FLPredicate {
        try enter(); defer { depth -= 1 }
        if accept(.not) || accept(.bang) { return FLPredicate(.not(try parseNot())) }
        if accept(.truePredicate) { return .truePredicate }
        if accept(.falsePredicate) { return .falsePredicate }
        if isPunct(.lparen), parenthesisedPredicateAhead() {
            advance()
            let p = try parseOr()
            try expect(.rparen, "to close the parenthesised predicate")
            return p
        }
        return try parseComparison()
    }

    /// Decides whether the "(" at the cursor opens a sub-predicate (`(a == 1 OR b == 2)`)
    /// or an expression (`(a + b) > 3`) by looking at the token after the matching ")".
    func parenthesisedPredicateAhead() -> Bool {
        guard let close = matchingParen[i] else { return true }
        let after = tokens[min(close + 1, tokens.count - 1)].kind
        switch after {
        case .punct(let p):
            switch p {
            case .eq, .ne, .lt, .le, .gt, .ge, .plus, .minus, .star, .slash, .power, .dot, .lbracket:
                return false
            default:
                return true
            }
        case .keyword(let k):
            switch k {
            case .in, .like, .matches, .contains, .beginsWith, .endsWith, .between, .utiConformsTo, .utiEquals:
                return false
            case .not:
                if case .keyword(let k2) = tokens[min(close + 2, tokens.count - 1)].kind, Parser.negatableOperators.contains(k2) {
                    return false
                }
                return true
            default:
                return true
            }
        default:
            return true
        }
    }

    static let negatableOperators: Set<Keyword> = [.in, .like, .matches, .contains, .beginsWith, .endsWith, .between]

    func comparisonOperatorAhead() -> Bool {
        switch current.kind {
        case .punct(let p): return [.eq, .ne, .lt, .le, .gt, .ge].contains(p)
        case .keyword(let k):
            return [.in, .like, .matches, .contains, .beginsWith, .endsWith, .between, .utiConformsTo, .utiEquals].contains(k)
        default: return false
        }
    }

    mutating func parseComparison() throws -> FLPredicate {
        var modifier = FLComparison.Modifier.direct
        var negateAll = false
        if accept(.any) || accept(.some) {
            modifier = .any
        } else if accept(.all) {
            modifier = .all
        } else if accept(.none) {
            modifier = .any
            negateAll = true
        }
        if atEnd {
            throw error(modifier == .direct && !negateAll ? "expected a predicate" : "expected an expression")
        }
        let left = try parseExpression()
        let opToken = current
        var negate = false
        if isKeyword(.not), case .keyword(let k) = peekKind(), Parser.negatableOperators.contains(k) {
            advance()
            negate = true
        }
        let op: FLComparison.Operator
        switch current.kind {
        case .punct(.eq): op = .equalTo
        case .punct(.ne): op = .notEqualTo
        case .punct(.lt): op = .lessThan
        case .punct(.le): op = .lessThanOrEqualTo
        case .punct(.gt): op = .greaterThan
        case .punct(.ge): op = .greaterThanOrEqualTo
        case .keyword(.in): op = .in
        case .keyword(.contains): op = .contains
        case .keyword(.beginsWith): op = .beginsWith
        case .keyword(.endsWith): op = .endsWith
        case .keyword(.like): op = .like
        case .keyword(.matches): op = .matches
        case .keyword(.between): op = .between
        case .keyword(.utiConformsTo): op = .utiConformsTo
        case .keyword(.utiEquals): op = .utiEquals
        default:
            if atEnd { throw error("expected a comparison operator") }
            throw error("expected a comparison operator, found \(describe(current))", at: opToken)
        }
        advance()
        var options: FLComparison.Options = []
        if isPunct(.lbracket) {
            advance()
            guard case .identifier(let letters) = current.kind else {
                throw error("expected comparison options such as [c], [d] or [cd]")
            }
            for ch in letters.lowercased() {
                switch ch {
                case "c": options.insert(.caseInsensitive)
                case "d": options.insert(.diacriticInsensitive)
                case "n": options.insert(.normalized)
                case "l": options.insert(.localeSensitive)
                default: throw error("unknown comparison option '\(ch)' (expected c, d, n or l)")
                }
            }
            advance()
            try expect(.rbracket, "after comparison options")
        }
        if atEnd { throw error("expected an expression") }
        let right = try parseExpression()
        if comparisonOperatorAhead() { throw error("comparisons cannot be chained; combine them with AND") }
        var p = FLPredicate(.comparison(FLComparison(left, op, right, modifier: modifier, options: options)))
        if negate { p = FLPredicate(.not(p)) }
        if negateAll { p = FLPredicate(.not(p)) }
        return p
    }

    // MARK: Expressions

    mutating func parseExpression() throws -> FLExpression {
        try enter()
        // Each operator of a chain nests the tree one level deeper: it counts as a level.
        var levels = 1
        defer { depth -= levels }
        var left = try parseMultiplicative()
        while true {
            if isPunct(.plus) || isPunct(.minus) {
                try enter()
                levels += 1
            }
            if accept(.plus) {
                left = .function("add:to:", [left, try parseMultiplicative()])
            } else if accept(.minus) {
                left = .function("from:subtract:", [left, try parseMultiplicative()])
            } else {
                return left
            }
        }
    }

    mutating func parseMultiplicative() throws -> FLExpression {
        var levels = 0
        defer { depth -= levels }
        var left = try parsePower()
        while true {
            if isPunct(.star) || isPunct(.slash) {
                try enter()
                levels += 1
            }
            if accept(.star) {
                left = .function("multiply:by:", [left, try parsePower()])
            } else if accept(.slash) {
                left = .function("divide:by:", [left, try parsePower()])
            } else {
                return left
            }
        }
    }

    mutating func parsePower() throws -> FLExpression {
        try enter(); defer { depth -= 1 }
        let base = try parseUnary()
        if accept(.power) { return .function("raise:toPower:", [base, try parsePower()]) }
        return base
    }

    mutating func parseUnary() throws -> FLExpression {
        try enter(); defer { depth -= 1 }
        if accept(.minus) {
            let operand = try parseUnary()
            if ParseTemplate.isSlot(operand) { inspectedArgumentSlot = true }
            switch operand.node {
            case .constant(.int(let v)) where v != Int.min: return .constant(.int(-v))
            case .constant(.double(let v)): return .constant(.double(-v))
            case .constant(.decimal(let v)): return .constant(.decimal(-v))
            default: return .function("multiply:by:", [operand, .constant(.int(-1))])
            }
        }
        return try parsePostfix()
    }

    mutating func parsePostfix() throws -> FLExpression {
        var levels = 0
        defer { depth -= levels }
        var e = try parsePrimary()
        while true {
            if isPunct(.dot) || isPunct(.lbracket) {
                try enter()
                levels += 1
            }
            if accept(.dot) {
                let segment: String
                switch current.kind {
                case .identifier(let s): segment = s
                case .keyword(let k): segment = k.rawValue.lowercased() == "self" ? "self" : tokenText(current)
                case .collectionOperator(let s): segment = s
                case .keyPathArgument(let s): segment = s
                default: throw error("expected a key after '.', found \(describe(current))")
                }
                advance()
                e = Parser.appendKeyPath(e, segment)
            } else if isPunct(.lbracket) {
                advance()
                let index: FLExpression.IndexKind
                if accept(.first) {
                    index = .first
                } else if accept(.last) {
                    index = .last
                } else if accept(.size) {
                    index = .size
                } else {
                    if isPunct(.rbracket) { throw error("expected an index") }
                    index = .expression(try parseExpression())
                }
                try expect(.rbracket, "to close the index")
                e = FLExpression(.index(e, index))
            } else {
                return e
            }
        }
    }

    /// The original spelling of a keyword token.
    func tokenText(_ t: Token) -> String {
        let chars = Array(source)
        var end = t.column - 1
        // Only a keyword spelled with dashes (`UTI-CONFORMS-TO`) reads on over them, as the lexer does.
        var dashed = false
        if case .keyword(let k) = t.kind { dashed = k.rawValue.contains("-") }
        while end < chars.count, Lexer.isIdentPart(chars[end]) || (dashed && chars[end] == "-") { end += 1 }
        return String(chars[(t.column - 1)..<end])
    }

    static func appendKeyPath(_ e: FLExpression, _ segment: String) -> FLExpression {
        switch e.node {
        case .keyPath(let p): return .keyPath(p + "." + segment)
        case .evaluatedObject: return .keyPath(segment)
        case .member(let base, let p): return FLExpression(.member(base, keyPath: p + "." + segment))
        default: return FLExpression(.member(e, keyPath: segment))
        }
    }

    mutating func parseArguments(closing: Punct, context: String) throws -> [FLExpression] {
        var args: [FLExpression] = []
        if accept(closing) { return args }
        repeat {
            args.append(try parseExpression())
        } while accept(.comma)
        try expect(closing, context)
        return args
    }

    mutating func parsePrimary() throws -> FLExpression {
        let t = current
        switch t.kind {
        case .number(let v), .argument(let v):
            advance()
            return .constant(v)
        case .string(let s):
            advance()
            return .constant(.string(s))
        case .keyPathArgument(let s):
            advance()
            return s.uppercased() == "SELF" ? .evaluatedObject : .keyPath(s)
        case .collectionOperator(let s):
            advance()
            return .keyPath(s)
        case .variable(let v):
            advance()
            if accept(.assign) { return FLExpression(.assignment(variable: v, value: try parseExpression())) }
            return .variable(v)
        case .identifier(let name):
            advance()
            if isPunct(.lparen) {
                advance()
                let args = try parseArguments(closing: .rparen, context: "to close the argument list of '\(name)'")
                guard let sel = FunctionTable.selector(forCallName: name, argumentCount: args.count) else {
                    throw error("unknown function '\(name)'", at: t)
                }
                try checkArity(sel, args.count, at: t)
                return .function(sel, args)
            }
            return .keyPath(name)
        case .selector(let sel):
            advance()
            guard FunctionTable.arity[sel] != nil else { throw error("unknown function '\(sel)'", at: t) }
            try expect(.lparen, "after the function name '\(sel)'")
            let args = try parseArguments(closing: .rparen, context: "to close the argument list of '\(sel)'")
            try checkArity(sel, args.count, at: t)
            return .function(sel, args)
        case .punct(.lbrace):
            advance()
            let items = try parseArguments(closing: .rbrace, context: "to close the aggregate")
            // `{1, 2}` made of constants is a constant collection, exactly like a `%@` array
            // argument, so both print as `{1, 2}` and re-parse to the same tree.
            let constants = items.compactMap(\.constantValue)
            if constants.count == items.count { return .constant(.array(constants)) }
            return FLExpression(.aggregate(items))
        case .punct(.lparen):
            advance()
            let e = try parseExpression()
            if comparisonOperatorAhead() || isKeyword(.and) || isKeyword(.or) {
                throw error("a predicate cannot be used as a value here; use TERNARY(predicate, a, b)")
            }
            try expect(.rparen, "to close the parenthesised expression")
            return e
        case .keyword(let k):
            advance()
            switch k {
            case .true, .yes: return .constant(.bool(true))
            case .false, .no: return .constant(.bool(false))
            case .null, .nil: return .constant(.null)
            case .self: return .evaluatedObject
            case .anyKey: return FLExpression(.anyKey)
            case .subquery: return try parseSubquery()
            case .function: return try parseCustomFunction()
            case .cast: return try parseCast()
            case .ternary: return try parseTernary()
            case .fetch:
                try expect(.lparen, "after FETCH")
                let a = try parseExpression()
                try expect(.comma, "in FETCH(request, context, countOnly)")
                let b = try parseExpression()
                try expect(.comma, "in FETCH(request, context, countOnly)")
                let c = try parseExpression()
                try expect(.rparen, "to close FETCH")
                return FLExpression(.fetch(a, b, c))
            default:
                throw error("expected an expression, found keyword '\(k.rawValue)' (write #\(tokenText(t).lowercased()) to use it as a key)", at: t)
            }
        case .eof:
            throw error("expected an expression")
        default:
            throw error("expected an expression, found \(describe(t))")
        }
    }

    func checkArity(_ sel: String, _ count: Int, at t: Token) throws {
        guard let entry = FunctionTable.arity[sel] else { return }
        if let n = entry {
            if n != count {
                throw error("function '\(sel)' takes \(n) argument\(n == 1 ? "" : "s"), not \(count)", at: t)
            }
        } else if count == 0 {
            throw error("function '\(sel)' needs at least one argument", at: t)
        }
    }

    mutating func parseSubquery() throws -> FLExpression {
        try expect(.lparen, "after SUBQUERY")
        let collection = try parseExpression()
        try expect(.comma, "after the SUBQUERY collection")
        guard case .variable(let v) = current.kind else {
            throw error("expected a variable such as $x as the second SUBQUERY argument")
        }
        advance()
        try expect(.comma, "after the SUBQUERY variable")
        let p = try parseOr()
        try expect(.rparen, "to close SUBQUERY")
        return FLExpression(.subquery(collection: collection, variable: v, predicate: p))
    }

    mutating func parseCustomFunction() throws -> FLExpression {
        try expect(.lparen, "after FUNCTION")
        let receiver = try parseExpression()
        try expect(.comma, "after the FUNCTION receiver")
        let selToken = current
        let selector: String
        switch current.kind {
        case .string(let s), .argument(.string(let s)): selector = s
        default: throw error("expected the selector name as a string, e.g. 'mySelector:'")
        }
        guard !selector.isEmpty else { throw error("the FUNCTION selector is empty", at: selToken) }
        advance()
        var args: [FLExpression] = []
        while accept(.comma) { args.append(try parseExpression()) }
        try expect(.rparen, "to close FUNCTION")
        return FLExpression(.customFunction(receiver: receiver, selector: selector, arguments: args))
    }

    mutating func parseCast() throws -> FLExpression {
        try expect(.lparen, "after CAST")
        let value = try parseExpression()
        try expect(.comma, "after the CAST value")
        let typeToken = current
        let type: String
        switch current.kind {
        case .string(let s), .argument(.string(let s)): type = s
        default: throw error("expected the CAST type as a string, e.g. \"NSDate\"")
        }
        advance()
        try expect(.rparen, "to close CAST")
        if ParseTemplate.isSlot(value) { inspectedArgumentSlot = true }
        if case .constant(let c) = value.node, let folded = try Parser.foldCast(c, type, error: { self.error($0, at: typeToken) }) {
            return .constant(folded)
        }
        return FLExpression(.cast(value, type: type))
    }

    /// Folds `CAST(<number>, "NSDate")` and the printer's UUID/URL/Data forms into constants.
    static func foldCast(_ c: FLValue, _ type: String, error: (String) -> PredicateSyntaxError) throws -> FLValue? {
        switch (type, c) {
        case ("NSDate", .int(let v)): return .date(Date(timeIntervalSinceReferenceDate: Double(v)))
        case ("NSDate", .double(let v)): return .date(Date(timeIntervalSinceReferenceDate: v))
        case ("NSDate", .decimal(let v)):
            return .date(Date(timeIntervalSinceReferenceDate: NSDecimalNumber(decimal: v).doubleValue))
        case ("NSDate", .string(let s)):
            // Not in Foundation's NSPredicate (it casts numbers only): the dates the shell prints.
            guard let d = FLDateLiteral.parse(s) else { throw error("invalid date \"\(s)\": expected \(FLDateLiteral.expectedForm)") }
            return .date(d)
        case ("NSUUID", .string(let s)), ("UUID", .string(let s)):
            guard let u = UUID(uuidString: s) else { throw error("invalid UUID string \"\(s)\"") }
            return .uuid(u)
        case ("NSURL", .string(let s)), ("URL", .string(let s)):
            guard let u = URL(string: s) else { throw error("invalid URL string \"\(s)\"") }
            return .url(u)
        case ("NSData", .string(let s)), ("Data", .string(let s)):
            guard let d = Data(base64Encoded: s) else { throw error("invalid base64 data \"\(s)\"") }
            return .data(d)
        default:
            return nil
        }
    }

    mutating func parseTernary() throws -> FLExpression {
        try expect(.lparen, "after TERNARY")
        let p = try parseOr()
        try expect(.comma, "after the TERNARY condition")
        let a = try parseExpression()
        try expect(.comma, "after the TERNARY true value")
        let b = try parseExpression()
        try expect(.rparen, "to close TERNARY")
        return FLExpression(.conditional(p, then: a, else: b))
    }
}

// MARK: - Public constructors

extension FLPredicate {
    /// Parses a format string, substituting `%@`, `%K`, `%d`… from `arguments` in order.
    ///
    /// ```swift
    /// let p = try FLPredicate(format: "%K BEGINSWITH[cd] %@ AND age > %d", "name", "jo", 30)
    /// print(p) // name BEGINSWITH[cd] "jo" AND age > 30
    /// ```
    /// - Throws: ``PredicateSyntaxError`` with the column of the problem.
    public init(format: String, _ arguments: Any?...) throws {
        try self.init(format: format, arguments: arguments)
    }

    /// Parses a format string with an argument array (`NSPredicate(format:argumentArray:)`).
    /// - Throws: ``PredicateSyntaxError`` with the column of the problem.
    public init(format: String, arguments: [Any?]) throws {
        // A format seen before is lexed already, and usually parsed already too: its template
        // takes the arguments (converted as the parser would) without parsing again.
        let entry = LexedFormats.shared.entry(for: format)
        if case .ready(let template) = entry.template, let predicate = try template.predicate(format: format, arguments: arguments) {
            self = predicate
            return
        }
        var lexer = Lexer(format, arguments: arguments)
        var parser = Parser(source: format, tokens: try lexer.substituted(entry.tokens), matchingParen: entry.matchingParen)
        self = try parser.parsePredicateToEnd()
        if case .unknown = entry.template {
            LexedFormats.shared.setTemplate(ParseTemplate.state(for: entry, checkedAgainst: self, arguments: arguments), for: format)
        }
    }
}

extension FLExpression {
    /// Parses an expression format string (`NSExpression(format:)`), e.g. `"sum:({1, 2})"`
    /// or `"employees.@count * 2"`.
    /// - Throws: ``PredicateSyntaxError`` with the column of the problem.
    public init(format: String, _ arguments: Any?...) throws {
        try self.init(format: format, arguments: arguments)
    }

    /// Parses an expression format string with an argument array.
    /// - Throws: ``PredicateSyntaxError`` with the column of the problem.
    public init(format: String, arguments: [Any?]) throws {
        var parser = try Parser(source: format, arguments: arguments)
        self = try parser.parseExpressionToEnd()
    }
}
