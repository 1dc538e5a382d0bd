import Foundation
import Testing

@testable import FaultlinePredicate

/// Parses `input`, checks the canonical text, and checks that the canonical text parses
/// back to the same tree and prints the same again.
private func roundTrip(
    _ input: String, _ expected: String, _ arguments: [Any?] = [],
    sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let p = try FLPredicate(format: input, arguments: arguments)
    #expect(p.predicateFormat == expected, "input: \(input)", sourceLocation: sourceLocation)
    let again = try FLPredicate(format: p.predicateFormat)
    #expect(again == p, "re-parse of \(p.predicateFormat)", sourceLocation: sourceLocation)
    #expect(again.predicateFormat == expected, sourceLocation: sourceLocation)
}

private func expression(_ input: String, _ expected: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let e = try FLExpression(format: input)
    #expect(e.description == expected, "input: \(input)", sourceLocation: sourceLocation)
    let again = try FLExpression(format: e.description)
    #expect(again == e, "re-parse of \(e.description)", sourceLocation: sourceLocation)
}

private func syntaxError(_ input: String, _ arguments: [Any?] = []) -> PredicateSyntaxError? {
    do {
        _ = try FLPredicate(format: input, arguments: arguments)
        return nil
    } catch let e as PredicateSyntaxError {
        return e
    } catch {
        return nil
    }
}

@Suite("Comparison operators")
struct ComparisonOperatorTests {
    @Test("equality and inequality spellings", arguments: [
        ("name = 'x'", #"name == "x""#),
        ("name == 'x'", #"name == "x""#),
        ("name != 'x'", #"name != "x""#),
        ("name <> 'x'", #"name != "x""#),
    ])
    func equality(_ input: String, _ expected: String) throws { try roundTrip(input, expected) }

    @Test("ordering spellings", arguments: [
        ("age < 3", "age < 3"), ("age <= 3", "age <= 3"), ("age =< 3", "age <= 3"),
        ("age > 3", "age > 3"), ("age >= 3", "age >= 3"), ("age => 3", "age >= 3"),
    ])
    func ordering(_ input: String, _ expected: String) throws { try roundTrip(input, expected) }

    @Test func operatorsAndRawValues() throws {
        let cases: [(String, FLComparison.Operator)] = [
            ("a < 1", .lessThan), ("a <= 1", .lessThanOrEqualTo), ("a > 1", .greaterThan),
            ("a >= 1", .greaterThanOrEqualTo), ("a == 1", .equalTo), ("a != 1", .notEqualTo),
            ("a MATCHES 'x'", .matches), ("a LIKE 'x'", .like), ("a BEGINSWITH 'x'", .beginsWith),
            ("a ENDSWITH 'x'", .endsWith), ("a IN {1}", .in), ("a CONTAINS 1", .contains),
            ("a BETWEEN {1, 2}", .between),
        ]
        for (input, op) in cases {
            let p = try FLPredicate(format: input)
            guard case .comparison(let c) = p.node else { Issue.record("not a comparison: \(input)"); continue }
            #expect(c.op == op)
        }
        #expect(FLComparison.Operator.contains.rawValue == 99)
        #expect(FLComparison.Operator.between.rawValue == 100)
        #expect(FLComparison.Operator.in.rawValue == 10)
    }

    @Test("string operators with options", arguments: [
        ("name CONTAINS 'a'", #"name CONTAINS "a""#),
        ("name contains[c] 'a'", #"name CONTAINS[c] "a""#),
        ("name BEGINSWITH[cd] 'a'", #"name BEGINSWITH[cd] "a""#),
        ("name ENDSWITH[d] 'a'", #"name ENDSWITH[d] "a""#),
        ("name LIKE[c] 'a*b?'", #"name LIKE[c] "a*b?""#),
        ("name MATCHES '[a-z]+'", #"name MATCHES "[a-z]+""#),
        ("name CONTAINS[cdl] 'Maui'", #"name CONTAINS[cdl] "Maui""#),
        ("name BEGINSWITH[n] 'a'", #"name BEGINSWITH[n] "a""#),
        ("name ==[c] 'a'", #"name ==[c] "a""#),
        ("name <[cd] 'a'", #"name <[cd] "a""#),
        ("name Like[DC] 'a'", #"name LIKE[cd] "a""#),
        ("name UTI-CONFORMS-TO 'public.image'", #"name UTI-CONFORMS-TO "public.image""#),
        ("name UTI-EQUALS 'public.jpeg'", #"name UTI-EQUALS "public.jpeg""#),
    ])
    func stringOperators(_ input: String, _ expected: String) throws { try roundTrip(input, expected) }

    @Test func optionBits() throws {
        let p = try FLPredicate(format: "name CONTAINS[cdnl] 'a'")
        guard case .comparison(let c) = p.node else { Issue.record("not a comparison"); return }
        #expect(c.options.rawValue == 15)
    }

    @Test("IN and BETWEEN", arguments: [
        ("age BETWEEN {1, 5}", "age BETWEEN {1, 5}"),
        ("name IN {'a', 'b'}", #"name IN {"a", "b"}"#),
        ("'a' IN names", #""a" IN names"#),
        ("names CONTAINS 'a'", #"names CONTAINS "a""#),
        ("name NOT IN {'a'}", #"NOT name IN {"a"}"#),
        ("name NOT CONTAINS 'a'", #"NOT name CONTAINS "a""#),
        ("age NOT BETWEEN {1, 2}", "NOT age BETWEEN {1, 2}"),
    ])
    func membership(_ input: String, _ expected: String) throws { try roundTrip(input, expected) }
}

@Suite("Compound predicates and quantifiers")
struct CompoundTests {
    @Test("AND OR NOT", arguments: [
        ("a == 1 AND b == 2", "a == 1 AND b == 2"),
        ("a == 1 && b == 2", "a == 1 AND b == 2"),
        ("a == 1 and b == 2 and c == 3", "a == 1 AND b == 2 AND c == 3"),
        ("a == 1 OR b == 2", "a == 1 OR b == 2"),
        ("a == 1 || b == 2", "a == 1 OR b == 2"),
        ("NOT a == 1", "NOT a == 1"),
        ("! a == 1", "NOT a == 1"),
        ("not (a == 1)", "NOT a == 1"),
        ("NOT (a == 1 AND b == 2)", "NOT (a == 1 AND b == 2)"),
        ("a == 1 OR b == 2 AND c == 3", "a == 1 OR (b == 2 AND c == 3)"),
        ("(a == 1 OR b == 2) AND c == 3", "(a == 1 OR b == 2) AND c == 3"),
        ("((a == 1))", "a == 1"),
        ("NOT NOT a == 1", "NOT NOT a == 1"),
    ])
    func compound(_ input: String, _ expected: String) throws { try roundTrip(input, expected) }

    @Test("constants", arguments: [
        ("TRUEPREDICATE", "TRUEPREDICATE"),
        ("falsepredicate", "FALSEPREDICATE"),
        ("TRUEPREDICATE AND a == 1", "TRUEPREDICATE AND a == 1"),
    ])
    func constants(_ input: String, _ expected: String) throws { try roundTrip(input, expected) }

    @Test("ANY SOME ALL NONE", arguments: [
        ("ANY tags.name == 'x'", #"ANY tags.name == "x""#),
        ("SOME tags.name == 'x'", #"ANY tags.name == "x""#),
        ("any tags.name == 'x'", #"ANY tags.name == "x""#),
        ("ALL tags.name BEGINSWITH[c] 'x'", #"ALL tags.name BEGINSWITH[c] "x""#),
        ("NONE tags.name == 'x'", #"NOT ANY tags.name == "x""#),
        ("NOT ANY tags.name == 'x'", #"NOT ANY tags.name == "x""#),
    ])
    func quantifiers(_ input: String, _ expected: String) throws { try roundTrip(input, expected) }

    @Test func noneIsNotAny() throws {
        let none = try FLPredicate(format: "NONE tags.name == 'x'")
        let notAny = try FLPredicate(format: "NOT (ANY tags.name == 'x')")
        #expect(none == notAny)
        guard case .not(let inner) = none.node, case .comparison(let c) = inner.node else {
            Issue.record("NONE should be NOT(ANY …)"); return
        }
        #expect(c.modifier == .any)
    }
}

@Suite("Expressions")
struct ExpressionTests {
    @Test("key paths and SELF", arguments: [
        ("name == 'x'", #"name == "x""#),
        ("department.name == 'x'", #"department.name == "x""#),
        ("SELF.name == 'x'", #"name == "x""#),
        ("SELF == %@", #"SELF == "x""#),
        ("self IN {1, 2}", "SELF IN {1, 2}"),
        ("#size == 3", "#size == 3"),
        ("a.#first == 3", "a.#first == 3"),
        ("#in == 1", "#in == 1"),
        ("index == 1", "index == 1"),
        ("Notes == 1", "Notes == 1"),
        ("ANDROID == 1", "ANDROID == 1"),
    ])
    func keyPaths(_ input: String, _ expected: String) throws {
        try roundTrip(input, expected, input.contains("%@") ? ["x"] : [])
    }

    @Test("collection operators", arguments: [
        ("employees.@count > 2", "employees.@count > 2"),
        ("@count > 2", "@count > 2"),
        ("expenses.@avg.amount < 200", "expenses.@avg.amount < 200"),
        ("items.@sum.price > 10", "items.@sum.price > 10"),
        ("@sum.items.price > 10", "@sum.items.price > 10"),
        ("items.@min.price > 1", "items.@min.price > 1"),
        ("items.@max.price > 1", "items.@max.price > 1"),
        ("items.@distinctUnionOfObjects.name CONTAINS 'a'", #"items.@distinctUnionOfObjects.name CONTAINS "a""#),
        ("name.length > 3", "name.length > 3"),
    ])
    func collectionOperators(_ input: String, _ expected: String) throws { try roundTrip(input, expected) }

    @Test("literals", arguments: [
        ("a == TRUE", "a == 1"),
        ("a == yes", "a == 1"),
        ("a == FALSE", "a == 0"),
        ("a == NO", "a == 0"),
        ("a == nil", "a == nil"),
        ("a == NULL", "a == nil"),
        ("a == 2.71828", "a == 2.71828"),
        ("a == 9.2e-5", "a == 9.2e-05"),
        ("a == 1e20", "a == 1e+20"),
        ("a == 0x1F", "a == 31"),
        ("a == 0o17", "a == 15"),
        ("a == 0b101", "a == 5"),
        ("a == -5", "a == -5"),
        ("a == -2.5", "a == -2.5"),
        (#"a == "it's""#, #"a == "it's""#),
        (#"a == 'say "hi"'"#, #"a == "say \"hi\"""#),
        (#"a == "tab\there""#, #"a == "tab\there""#),
        (#"a == "\x41\u00e9\101""#, #"a == "AéA""#),
        (#"a == 'back\\slash'"#, #"a == "back\\slash""#),
        ("a == CAST(0, 'NSDate')", #"a == CAST(0.000000, "NSDate")"#),
        ("a == CAST(-978307200.0, \"NSDate\")", #"a == CAST(-978307200.000000, "NSDate")"#),
        ("a == CAST('123', 'NSNumber')", #"a == CAST("123", "NSNumber")"#),
        ("a == CAST(b, 'NSString')", #"a == CAST(b, "NSString")"#),
    ])
    func literals(_ input: String, _ expected: String) throws { try roundTrip(input, expected) }

    @Test func typedConstantsRoundTrip() throws {
        let u = UUID(uuidString: "00112233-4455-6677-8899-AABBCCDDEEFF") ?? UUID()
        try roundTrip("id == %@", #"id == CAST("00112233-4455-6677-8899-AABBCCDDEEFF", "NSUUID")"#, [u])
        try roundTrip("url == %@", #"url == CAST("https://example.com/a", "NSURL")"#, [URL(string: "https://example.com/a")])
        try roundTrip("blob == %@", #"blob == CAST("AQI=", "NSData")"#, [Data([1, 2])])
        try roundTrip("d == %@", "d == 1.5", [Decimal(string: "1.5")])
    }

    @Test func builtPredicatesPrint() {
        let p = FLPredicate.and([
            .comparison(.keyPath("flag"), .equalTo, .constant(.bool(true))),
            .not(.comparison(.keyPath("tags.name"), .beginsWith, .constant(.string("a")), modifier: .any, options: [.caseInsensitive])),
        ])
        #expect(p.description == #"flag == 1 AND NOT ANY tags.name BEGINSWITH[c] "a""#)
        #expect(FLPredicate.and([]) == .truePredicate)
        #expect(FLPredicate.or([]) == .falsePredicate)
    }

    @Test func quotedSubstitutionsAreLiteral() throws {
        let p = try FLPredicate(format: "name LIKE '%@' AND k == '$x' AND n == \"%K\"")
        #expect(p.predicateFormat == #"name LIKE "%@" AND k == "$x" AND n == "%K""#)
    }

    @Test("arithmetic", arguments: [
        ("a + b > 3", "a + b > 3"),
        ("a - b * c > 3", "a - b * c > 3"),
        ("(a - b) * c > 3", "(a - b) * c > 3"),
        ("a - (b - c) > 3", "a - (b - c) > 3"),
        ("a / b / c > 3", "a / b / c > 3"),
        ("a ** 2 ** 3 > 3", "a ** 2 ** 3 > 3"),
        ("(a ** 2) ** 3 > 3", "(a ** 2) ** 3 > 3"),
        ("-a > 3", "a * -1 > 3"),
        ("a - -5 > 3", "a - -5 > 3"),
        ("(a + b) > 3", "a + b > 3"),
        ("price * quantity > 100", "price * quantity > 100"),
    ])
    func arithmetic(_ input: String, _ expected: String) throws { try roundTrip(input, expected) }

    @Test func arithmeticIsStoredAsFunctions() throws {
        let e = try FLExpression(format: "a + 2 * b")
        #expect(e == .function("add:to:", [.keyPath("a"), .function("multiply:by:", [.constant(.int(2)), .keyPath("b")])]))
    }

    @Test("functions", arguments: [
        ("lowercase:(name) == 'x'", #"lowercase:(name) == "x""#),
        ("uppercase:(name) == 'X'", #"uppercase:(name) == "X""#),
        ("canonical:(title) == 'x'", #"canonical:(title) == "x""#),
        ("sum:({1, 2, 3}) == 6", "sum:({1, 2, 3}) == 6"),
        ("add:to:(1, 2) == 3", "1 + 2 == 3"),
        ("sqrt(9) == 3", "sqrt:(9) == 3"),
        ("abs(-3) == 3", "abs:(-3) == 3"),
        ("date < now()", "date < now()"),
        ("random() < 1", "random() < 1"),
        ("modulus:by:(a, 2) == 0", "modulus:by:(a, 2) == 0"),
        ("count:(tags) > 1", "count:(tags) > 1"),
        ("average(1, 2, 3) == 2", "average:(1, 2, 3) == 2"),
        ("length:(name) > 1", "length:(name) > 1"),
        ("bitwiseAnd:with:(flags, 4) != 0", "bitwiseAnd:with:(flags, 4) != 0"),
    ])
    func functions(_ input: String, _ expected: String) throws { try roundTrip(input, expected) }

    @Test("SUBQUERY FUNCTION TERNARY FETCH ANYKEY", arguments: [
        ("SUBQUERY(tasks, $t, $t.done == NO AND $t.user == 'Alex').@count > 0",
         #"SUBQUERY(tasks, $t, $t.done == 0 AND $t.user == "Alex").@count > 0"#),
        ("subquery(employees, $e, $e.age > 30).@count == 0",
         "SUBQUERY(employees, $e, $e.age > 30).@count == 0"),
        ("SUBQUERY(a, $x, SUBQUERY($x.b, $y, $y.c == 1).@count > 0).@count > 0",
         "SUBQUERY(a, $x, SUBQUERY($x.b, $y, $y.c == 1).@count > 0).@count > 0"),
        ("FUNCTION(SELF, 'daysSince:', date) > 3", #"FUNCTION(SELF, "daysSince:", date) > 3"#),
        ("FUNCTION(name, 'length') > 3", #"FUNCTION(name, "length") > 3"#),
        ("TERNARY(a == nil, 'none', a) == 'x'", #"TERNARY(a == nil, "none", a) == "x""#),
        ("ternary(a > 1, 1, 0) == 1", "TERNARY(a > 1, 1, 0) == 1"),
        ("FETCH(r, c, NO) == 1", "FETCH(r, c, 0) == 1"),
        ("ANYKEY == 'x'", #"ANYKEY == "x""#),
        ("function == 1", "function == 1"),
        ("ternary == 1", "ternary == 1"),
    ])
    func special(_ input: String, _ expected: String) throws { try roundTrip(input, expected) }

    @Test("aggregates and indexes", arguments: [
        ("{1, 2, 3} CONTAINS a", "{1, 2, 3} CONTAINS a"),
        ("{} CONTAINS a", "{} CONTAINS a"),
        ("{a, b + 1} CONTAINS 3", "{a, b + 1} CONTAINS 3"),
        ("items[FIRST].name == 'x'", #"items[FIRST].name == "x""#),
        ("items[last] == 1", "items[LAST] == 1"),
        ("items[SIZE] == 3", "items[SIZE] == 3"),
        ("items[2] == 3", "items[2] == 3"),
        ("attrs['key'] == 3", #"attrs["key"] == 3"#),
        ("{1, 2}[FIRST] == 1", "{1, 2}[FIRST] == 1"),
    ])
    func aggregates(_ input: String, _ expected: String) throws { try roundTrip(input, expected) }

    @Test("variables and assignment", arguments: [
        ("name == $NAME", "name == $NAME"),
        ("$x.name == 1", "$x.name == 1"),
        ("($x := 3) == 3", "$x := 3 == 3"),
    ])
    func variables(_ input: String, _ expected: String) throws {
        let p = try FLPredicate(format: input)
        #expect(p.predicateFormat == expected)
    }

    @Test func expressionFormats() throws {
        try expression("employees.@count * 2", "employees.@count * 2")
        try expression("sum:({1, 2})", "sum:({1, 2})")
        try expression("now()", "now()")
        try expression("-x", "x * -1")
        try expression("$x", "$x")
        try expression("SELF", "SELF")
        try expression("'a'", #""a""#)
    }
}

@Suite("Format arguments")
struct ArgumentTests {
    @Test func objectArguments() throws {
        try roundTrip("name == %@", #"name == "Ann""#, ["Ann"])
        try roundTrip("age > %@", "age > 18", [18])
        try roundTrip("ratio > %@", "ratio > 0.5", [0.5])
        try roundTrip("flag == %@", "flag == 1", [true])
        try roundTrip("name == %@", "name == nil", [nil])
        try roundTrip("name == %@", "name == nil", [NSNull()])
        try roundTrip("name IN %@", #"name IN {"a", "b"}"#, [["a", "b"]])
        try roundTrip("age BETWEEN %@", "age BETWEEN {1, 5}", [[1, 5]])
        try roundTrip("date > %@", #"date > CAST(100.000000, "NSDate")"#, [Date(timeIntervalSinceReferenceDate: 100)])
        try roundTrip("date > %@", #"date > CAST(-978307200.000000, "NSDate")"#, [Date(timeIntervalSince1970: 0)])
    }

    @Test func aFormatLexedOnceTakesNewArgumentsEveryTime() throws {
        // The lexed form of a format string is kept; its arguments are substituted anew.
        let format = "name == %@ AND %K > %d AND tag IN %@"
        for i in 0..<3 {
            let p = try FLPredicate(format: format, arguments: ["n\(i)", "age\(i)", i, ["t\(i)"]])
            #expect(p.predicateFormat == #"name == "n\#(i)" AND age\#(i) > \#(i) AND tag IN {"t\#(i)"}"#)
        }
        #expect(throws: PredicateSyntaxError.self) { try FLPredicate(format: format, arguments: ["n"]) }
        // Canonically equivalent formats are different bytes: each keeps its own literal.
        let composed = try FLPredicate(format: "label == 'Caf\u{E9}'")
        let decomposed = try FLPredicate(format: "label == 'Cafe\u{301}'")
        #expect(composed.predicateFormat.utf8.count != decomposed.predicateFormat.utf8.count)
        #expect(decomposed.predicateFormat.unicodeScalars.contains("\u{301}"))
        // A lexing error after a missing argument: the earlier problem is reported, every time.
        for _ in 0..<2 {
            let error = try #require(syntaxError("a == %@ AND b == 'open", []))
            #expect(error.message.contains("missing argument"))
        }
    }

    @Test func keyPathArguments() throws {
        try roundTrip("%K == %@", #"firstName == "Adam""#, ["firstName", "Adam"])
        try roundTrip("%K LIKE %@", #"firstName LIKE "Adam""#, ["firstName", "Adam"])
        try roundTrip("%K.%K == 1", "a.b == 1", ["a", "b"])
        try roundTrip("%K == 1", "department.name == 1", ["department.name"])
    }

    @Test func printfArguments() throws {
        try roundTrip("a == %d", "a == 42", [42])
        try roundTrip("a == %i", "a == 42", [42])
        try roundTrip("a == %ld", "a == 42", [42])
        try roundTrip("a == %lld", "a == 42", [Int64(42)])
        try roundTrip("a == %u", "a == 42", [UInt(42)])
        try roundTrip("a == %f", "a == 1.5", [1.5])
        try roundTrip("a == %lf", "a == 2", [2])
        try roundTrip("a == %s", #"a == "x""#, ["x"])
        try roundTrip("a == %c", #"a == "x""#, ["x"])
        try roundTrip("a LIKE '100%%'", #"a LIKE "100%%""#)
        try roundTrip("a == %2$@ AND b == %1$@", "a == 2 AND b == 1", [1, 2])
    }

    @Test func percentOutsideString() throws {
        let p = try FLPredicate(format: "a == %%")
        #expect(p.predicateFormat == #"a == "%""#)
    }

    @Test func argumentErrors() {
        #expect(syntaxError("a == %@")?.message.contains("missing argument") == true)
        #expect(syntaxError("%K == 1", [3])?.message.contains("key path") == true)
        #expect(syntaxError("a == %d", ["x"])?.message.contains("integer") == true)
    }
}

@Suite("Syntax errors")
struct SyntaxErrorTests {
    @Test func missingExpression() throws {
        let e = try #require(syntaxError("name =="))
        #expect(e.description == #"Unable to parse the format string "name ==": expected an expression at column 8"#)
        #expect(e.column == 8)
        #expect(e.caretDiagnostic == "name ==\n       ^")
    }

    @Test("error columns", arguments: [
        ("", 1, "expected a predicate"),
        ("name", 5, "expected a comparison operator"),
        ("name 'x'", 6, "expected a comparison operator"),
        ("a == 1 AND", 11, "expected a predicate"),
        ("a == 1)", 7, "unbalanced ')'"),
        ("(a == 1", 8, "expected ')'"),
        ("a == 'abc", 6, "unterminated string literal"),
        ("a < b < c", 7, "comparisons cannot be chained"),
        ("a == 1 b == 2", 8, "unexpected identifier 'b'"),
        ("a ==[x] 1", 6, "unknown comparison option 'x'"),
        ("a == 0x", 8, "expected digits after '0x'"),
        ("a == 12abc", 8, "invalid character 'a' in number"),
        ("a == @", 6, "expected a name after '@'"),
        ("a == $", 6, "expected a variable name after '$'"),
        ("a & b", 3, "unexpected '&'"),
        ("a == bogus(1)", 6, "unknown function 'bogus'"),
        ("a == sqrt:(1, 2)", 6, "function 'sqrt:' takes 1 argument, not 2"),
        ("SUBQUERY(a, x, x == 1).@count > 0", 13, "expected a variable"),
        ("a == ?", 6, "unexpected character '?'"),
        ("a IN", 5, "expected an expression"),
        ("ANY", 4, "expected an expression"),
        ("a == 'x' AND AND", 14, "expected"),
        ("a == FIRST", 6, "found keyword 'FIRST'"),
    ])
    func columns(_ input: String, _ column: Int, _ fragment: String) throws {
        let e = try #require(syntaxError(input), "no error for \(input)")
        #expect(e.column == column, "\(e)")
        #expect(e.message.contains(fragment), "\(e)")
        #expect(e.description.hasPrefix("Unable to parse the format string \"\(input)\": "))
    }

    @Test func deepNestingIsAnErrorNotACrash() {
        let input = String(repeating: "(", count: 500) + "a == 1" + String(repeating: ")", count: 500)
        #expect(syntaxError(input)?.message.contains("nested too deeply") == true)
    }
}

@Suite("Keywords are case-insensitive")
struct KeywordCaseTests {
    @Test func mixedCase() throws {
        try roundTrip("name bEgInSwItH[C] 'a' aNd NoT age bEtWeEn {1, 2} oR aNy tags == nIl",
                      #"(name BEGINSWITH[c] "a" AND NOT age BETWEEN {1, 2}) OR ANY tags == nil"#)
    }
}

@Suite("Round trips of the reference examples")
struct ReferenceExampleTests {
    @Test("pSyntax and reference examples", arguments: [
        "name BEGINSWITH[cd] \"a\" AND ANY tags.name == \"x\"",
        "employees.@count > 2",
        "expenses.@avg.doubleValue < 200",
        "SUBQUERY(tasks, $t, $t.done == 0 AND $t.user == \"Alex\").@count > 0",
        "wordCategory.firstLetter == \"s\"",
        "b CONTAINS[cdl] \"ABC\"",
        "NOT ANY manyBs == nil",
        "ANY e2a == 1 OR ANY e2b == 2",
        "(1 <= longitude) AND (longitude <= 5)",
    ])
    func stable(_ input: String) throws {
        let p = try FLPredicate(format: input)
        let q = try FLPredicate(format: p.predicateFormat)
        #expect(p == q)
        #expect(p.predicateFormat == q.predicateFormat)
    }
}
