import Foundation

/// Prints predicates and expressions in Apple's canonical `predicateFormat` form.
///
/// Rules: `==`/`!=`, uppercase keywords, options as `[cd]`, strings in double quotes,
/// booleans as `1`/`0` (as `NSNumber` prints them), `nil`, dates as
/// `CAST(<seconds since 2001>, "NSDate")`, aggregates as `{1, 2}`, functions as
/// `lowercase:(name)` / `now()`, arithmetic infix with the fewest parentheses that
/// re-parse to the same tree, nested `AND`/`OR` in parentheses.
enum FLPrinter {
    static func predicate(_ p: FLPredicate) -> String {
        switch p.node {
        case .constant(let b):
            return b ? "TRUEPREDICATE" : "FALSEPREDICATE"
        case .comparison(let c):
            return comparison(c)
        case .and(let items):
            return items.map(compoundChild).joined(separator: " AND ")
        case .or(let items):
            return items.map(compoundChild).joined(separator: " OR ")
        case .not(let inner):
            return "NOT " + compoundChild(inner)
        }
    }

    static func compoundChild(_ p: FLPredicate) -> String {
        switch p.node {
        case .and, .or: return "(" + predicate(p) + ")"
        default: return predicate(p)
        }
    }

    static func comparison(_ c: FLComparison) -> String {
        var s = ""
        switch c.modifier {
        case .direct: break
        case .any: s = "ANY "
        case .all: s = "ALL "
        }
        s += expression(c.left) + " " + c.op.symbol + c.options.suffix + " " + expression(c.right)
        return s
    }

    // MARK: Expressions

    /// Precedence level of an expression as printed: 1 additive, 2 multiplicative,
    /// 3 power, 4 unary (negative constants), 5 postfix/primary.
    static func level(_ e: FLExpression) -> Int {
        switch e.node {
        case .function(let name, let args) where args.count == 2:
            return FunctionTable.infix[name]?.level ?? 5
        case .constant(let v):
            switch v {
            case .int(let i) where i < 0: return 4
            case .double(let d) where d < 0 || (d == 0 && d.sign == .minus): return 4
            case .decimal(let d) where d < 0: return 4
            default: return 5
            }
        case .assignment: return 0
        default:
            return 5
        }
    }

    static func wrapped(_ e: FLExpression, below minimum: Int) -> String {
        let s = expression(e)
        return level(e) < minimum ? "(" + s + ")" : s
    }

    static func expression(_ e: FLExpression) -> String {
        switch e.node {
        case .constant(let v):
            return constant(v)
        case .evaluatedObject:
            return "SELF"
        case .variable(let v):
            return "$" + v
        case .keyPath(let p):
            return keyPath(p)
        case .member(let base, let p):
            return wrapped(base, below: 5) + "." + keyPath(p)
        case .function(let name, let args):
            if args.count == 2, let op = FunctionTable.infix[name] {
                let power = op.level == 3
                let left = wrapped(args[0], below: power ? op.level + 1 : op.level)
                let right = wrapped(args[1], below: power ? op.level : op.level + 1)
                return left + " " + op.symbol + " " + right
            }
            let list = args.map(expression).joined(separator: ", ")
            return name.hasSuffix(":") ? name + "(" + list + ")" : name + "()"
        case .customFunction(let receiver, let selector, let args):
            return "FUNCTION(" + ([expression(receiver), string(selector)] + args.map(expression)).joined(separator: ", ") + ")"
        case .aggregate(let items):
            return "{" + items.map(expression).joined(separator: ", ") + "}"
        case .subquery(let collection, let variable, let p):
            return "SUBQUERY(" + expression(collection) + ", $" + variable + ", " + predicate(p) + ")"
        case .conditional(let p, let a, let b):
            return "TERNARY(" + predicate(p) + ", " + expression(a) + ", " + expression(b) + ")"
        case .cast(let value, let type):
            return "CAST(" + expression(value) + ", " + string(type) + ")"
        case .index(let base, let index):
            let b = wrapped(base, below: 5)
            switch index {
            case .first: return b + "[FIRST]"
            case .last: return b + "[LAST]"
            case .size: return b + "[SIZE]"
            case .expression(let x): return b + "[" + expression(x) + "]"
            }
        case .assignment(let variable, let value):
            return "$" + variable + " := " + expression(value)
        case .fetch(let a, let b, let c):
            return "FETCH(" + [a, b, c].map(expression).joined(separator: ", ") + ")"
        case .anyKey:
            return "ANYKEY"
        }
    }

    static func keyPath(_ path: String) -> String {
        path.split(separator: ".", omittingEmptySubsequences: false).map { component -> String in
            let c = String(component)
            return Keyword.isReserved(c) ? "#" + c : c
        }.joined(separator: ".")
    }

    // MARK: Constants

    static func constant(_ v: FLValue) -> String {
        switch v {
        case .null: return "nil"
        case .bool(let b): return b ? "1" : "0"
        case .int(let i): return String(i)
        case .double(let d): return number(d)
        case .decimal(let d): return d.description
        case .string(let s): return string(s)
        case .date(let d): return "CAST(" + String(format: "%f", d.timeIntervalSinceReferenceDate) + ", \"NSDate\")"
        case .data(let d): return "CAST(" + string(d.base64EncodedString()) + ", \"NSData\")"
        case .uuid(let u): return "CAST(" + string(u.uuidString) + ", \"NSUUID\")"
        case .url(let u): return "CAST(" + string(u.absoluteString) + ", \"NSURL\")"
        case .array(let items): return "{" + items.map(constant).joined(separator: ", ") + "}"
        case .dictionary(let d):
            return "{" + d.keys.sorted().compactMap { d[$0] }.map(constant).joined(separator: ", ") + "}"
        case .object(let r): return r.description
        }
    }

    /// Numbers print like `NSNumber.description`: `3`, `2.5`, `1e+20`.
    static func number(_ d: Double) -> String {
        if d.isNaN { return "nan" }
        // `inf` would read back as a key path, and `-0` as the integer 0: these spellings read
        // back as the same double.
        if d.isInfinite { return d < 0 ? "-1e999" : "1e999" }
        if d == d.rounded(), abs(d) < 1e16 {
            if d == 0 { return d.sign == .minus ? "-0.0" : "0" }
            return String(Int(d))
        }
        let s = "\(d)"
        if let e = s.firstIndex(of: "e") {
            let mantissa = s[..<e]
            var exponent = String(s[s.index(after: e)...])
            if !exponent.hasPrefix("-") && !exponent.hasPrefix("+") { exponent = "+" + exponent }
            return mantissa + "e" + exponent
        }
        return s
    }

    /// A double-quoted string literal with `\"`, `\\`, `\n`, `\t`, `\r` escaped.
    ///
    /// The lexer reads characters (grapheme clusters), so a combining mark right after
    /// something the printer wrote itself (the opening quote, an escape) would fuse with it:
    /// such a mark is written as a `\uXXXX` escape too.
    static func string(_ s: String) -> String {
        var out = "\""
        var afterPrinterText = true
        for c in s.unicodeScalars {
            let wasAfterPrinterText = afterPrinterText
            afterPrinterText = true
            switch c {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            default:
                if c.value < 0x20 || c.value == 0x7F || (wasAfterPrinterText && c.value <= 0xFFFF && extendsAPreviousCharacter(c)) {
                    out += String(format: "\\u%04X", c.value)
                } else {
                    out.unicodeScalars.append(c)
                    afterPrinterText = false
                }
            }
        }
        return out + "\""
    }

    /// Whether a scalar joins the character before it (a combining mark, a joiner, a variation selector).
    static func extendsAPreviousCharacter(_ c: Unicode.Scalar) -> Bool {
        guard !c.isASCII else { return false }
        var probe = "0"
        probe.unicodeScalars.append(c)
        return probe.count == 1
    }
}
