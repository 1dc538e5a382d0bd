/// The predefined functions of `NSExpression(forFunction:arguments:)`.
///
/// Keys are selector names; the value is the number of arguments, or `nil` for the
/// aggregate functions that take one collection or any number of values.
enum FunctionTable {
    static let arity: [String: Int?] = [
        "sum:": nil, "count:": nil, "min:": nil, "max:": nil, "average:": nil,
        "median:": nil, "mode:": nil, "stddev:": nil,
        "add:to:": 2, "from:subtract:": 2, "multiply:by:": 2, "divide:by:": 2,
        "modulus:by:": 2, "raise:toPower:": 2,
        "bitwiseAnd:with:": 2, "bitwiseOr:with:": 2, "bitwiseXor:with:": 2,
        "leftshift:by:": 2, "rightshift:by:": 2,
        "distanceToLocation:fromLocation:": 2, "objectFrom:withIndex:": 2,
        "sqrt:": 1, "log:": 1, "ln:": 1, "exp:": 1, "floor:": 1, "ceiling:": 1, "abs:": 1,
        "trunc:": 1, "uppercase:": 1, "lowercase:": 1, "randomn:": 1, "onesComplement:": 1,
        "noindex:": 1, "length:": 1, "canonical:": 1,
        "random": 0, "now": 0,
    ]

    /// Maps a call-style name (`now`, `sqrt`) to its selector (`now`, `sqrt:`).
    static func selector(forCallName name: String, argumentCount: Int) -> String? {
        if argumentCount == 0, arity[name] != nil { return name }
        if arity[name + ":"] != nil { return name + ":" }
        if arity[name] != nil { return name }
        return nil
    }

    /// Infix spelling and precedence of the arithmetic functions.
    static let infix: [String: (symbol: String, level: Int)] = [
        "add:to:": ("+", 1), "from:subtract:": ("-", 1),
        "multiply:by:": ("*", 2), "divide:by:": ("/", 2),
        "raise:toPower:": ("**", 3),
    ]
}
