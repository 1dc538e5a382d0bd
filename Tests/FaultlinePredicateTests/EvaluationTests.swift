import Foundation
import Testing

@testable import FaultlinePredicate

private struct Person: KeyValueCoding {
    var name: String
    var age: Int
    var nickname: String?
    var tags: [String]
    var friends: [Person] = []

    func value(forKey key: String) throws -> Any? {
        switch key {
        case "name": return name
        case "age": return age
        case "nickname": return nickname
        case "tags": return tags
        case "friends": return friends
        default: return nil
        }
    }
}

private struct Plain {
    var title: String
    var score: Double
}

private let ann = Person(name: "Ann", age: 41, nickname: nil, tags: ["red", "blue"],
                         friends: [Person(name: "Bob", age: 30, tags: []), Person(name: "Céline", age: 25, tags: ["x"])])

private func eval(_ format: String, _ object: Any?, _ args: Any?..., variables: [String: Any?] = [:]) throws -> Bool {
    try FLPredicate(format: format, arguments: args).evaluate(with: object, variables: variables)
}

@Suite("In-memory evaluation")
struct EvaluationTests {
    @Test func numericEqualityAcrossTypes() throws {
        let d: [String: Any] = ["i": 1, "d": 1.0, "b": true, "f": Float(2.5), "n": NSNumber(value: 3), "dec": Decimal(string: "1.5") as Any]
        #expect(try eval("i == 1.0", d))
        #expect(try eval("d == 1", d))
        #expect(try eval("b == 1", d))
        #expect(try eval("b == YES", d))
        #expect(try eval("f == 2.5", d))
        #expect(try eval("n == 3", d))
        #expect(try eval("dec == 1.5", d))
        #expect(try eval("dec < 2", d))
        #expect(try eval("i != 2", d))
        #expect(try !eval("i == '1'", d))
    }

    @Test func nilHandling() throws {
        let d: [String: Any?] = ["a": nil, "b": 3]
        #expect(try eval("a == nil", d))
        #expect(try eval("missing == nil", d))
        #expect(try !eval("b == nil", d))
        #expect(try eval("b != nil", d))
        #expect(try !eval("a > 1", d))
        #expect(try !eval("a < 1", d))
        #expect(try !eval("a CONTAINS 'x'", d))
        #expect(try !eval("a BEGINSWITH 'x'", d))
        #expect(try eval("nickname == nil", ann))
    }

    @Test func stringOptions() throws {
        let d = ["s": "Crème Brûlée"]
        #expect(try eval("s == 'Crème Brûlée'", d))
        #expect(try !eval("s == 'crème brûlée'", d))
        #expect(try eval("s ==[c] 'CRÈME BRÛLÉE'", d))
        #expect(try !eval("s ==[c] 'creme brulee'", d))
        #expect(try eval("s ==[cd] 'creme brulee'", d))
        #expect(try eval("s BEGINSWITH 'Crè'", d))
        #expect(try !eval("s BEGINSWITH 'cre'", d))
        #expect(try eval("s BEGINSWITH[cd] 'cre'", d))
        #expect(try eval("s ENDSWITH[d] 'Brulee'", d))
        #expect(try eval("s CONTAINS[cd] 'ME BR'", d))
        #expect(try !eval("s CONTAINS ''", d))
        #expect(try eval("s CONTAINS[n] 'me'", d))
        #expect(try eval("'rûl' IN s", d))
        #expect(try eval("s < 'D'", d))
        #expect(try eval("s >[c] 'crd'", d))
        #expect(try eval("s CONTAINS[cdl] 'BRULEE'", d))
    }

    @Test func like() throws {
        let d = ["s": "Cake", "p": "a*b?c"]
        #expect(try eval("s LIKE 'C*'", d))
        #expect(try eval("s LIKE 'C?ke'", d))
        #expect(try !eval("s LIKE 'c*'", d))
        #expect(try eval("s LIKE[c] 'c*E'", d))
        #expect(try eval("s LIKE '*'", d))
        #expect(try !eval("s LIKE '?'", d))
        #expect(try eval("s LIKE 'Cake'", d))
        #expect(try eval(#"p LIKE 'a\\*b\\?c'"#, d))
        #expect(try !eval(#"s LIKE 'C\\*'"#, d))
        #expect(try eval("s LIKE[cd] 'ÇÂKÉ'", d))
    }

    @Test func matches() throws {
        let d = ["s": "abc123"]
        #expect(try eval("s MATCHES '[a-z]+[0-9]+'", d))
        #expect(try !eval("s MATCHES '[a-z]+'", d))
        #expect(try !eval("s MATCHES 'ABC.*'", d))
        #expect(try eval("s MATCHES[c] 'ABC.*'", d))
        #expect(try eval("s MATCHES 'abc1|x.*'", ["s": "xyz"]))
        #expect(throws: PredicateEvaluationError.self) { try eval("s MATCHES '('", d) }
    }

    @Test func membershipAndBetween() throws {
        let d: [String: Any] = ["n": 3, "s": "b", "list": [1, 2, 3], "set": Set(["x", "y"]), "dict": ["k": 5]]
        #expect(try eval("n IN {1, 2, 3}", d))
        #expect(try eval("n IN %@", d, [3.0, 4.0]))
        #expect(try !eval("n IN {}", d))
        #expect(try eval("s IN {'a', 'B'}", d) == false)
        #expect(try eval("s IN[c] {'a', 'B'}", d))
        #expect(try eval("list CONTAINS 2", d))
        #expect(try eval("set CONTAINS 'y'", d))
        #expect(try eval("dict CONTAINS 5", d))
        #expect(try eval("5 IN dict", d))
        #expect(try eval("n BETWEEN {1, 3}", d))
        #expect(try eval("n BETWEEN %@", d, [3, 10]))
        #expect(try !eval("n BETWEEN {4, 10}", d))
        #expect(try eval("s BETWEEN {'a', 'c'}", d))
    }

    @Test func quantifiers() throws {
        #expect(try eval("ANY tags == 'red'", ann))
        #expect(try !eval("ANY tags == 'green'", ann))
        #expect(try eval("ALL tags.length == 3 OR ALL tags.length >= 3", ann))
        #expect(try eval("NONE tags == 'green'", ann))
        #expect(try !eval("NONE tags == 'red'", ann))
        #expect(try eval("ANY friends.age < 26", ann))
        #expect(try eval("ALL friends.age < 31", ann))
        #expect(try eval("ANY friends.name BEGINSWITH[cd] 'ce'", ann))
        let empty = Person(name: "E", age: 1, tags: [])
        #expect(try eval("ALL tags == 'x'", empty))
        #expect(try !eval("ANY tags == 'x'", empty))
        #expect(try eval("NONE tags == 'x'", empty))
        #expect(throws: PredicateEvaluationError.self) { try eval("ANY name == 'x'", ann) }
    }

    @Test func collectionOperators() throws {
        let order: [String: Any] = ["items": [["price": 2.5, "qty": 2], ["price": 10, "qty": 1], ["price": 1, "qty": 5]]]
        #expect(try eval("items.@count == 3", order))
        #expect(try eval("items.@sum.price == 13.5", order))
        #expect(try eval("items.@avg.price == 4.5", order))
        #expect(try eval("items.@min.price == 1", order))
        #expect(try eval("items.@max.qty == 5", order))
        #expect(try eval("@sum.price == 13.5 AND @count == 3", order["items"] ?? nil))
        #expect(try eval("friends.@count == 2 AND tags.@count == 2", ann))
        #expect(try eval("friends.@distinctUnionOfObjects.age CONTAINS 30", ann))
        #expect(try eval("name.length == 3", ann))
        #expect(try FLExpression(format: "@count").value(with: [1, 2, 3]) as? Int == 3)
        #expect(try FLExpression(format: "@sum.self").value(with: [1, 2, 3]) as? Int == 6)
    }

    @Test func subquery() throws {
        #expect(try eval("SUBQUERY(friends, $f, $f.age > 26).@count == 1", ann))
        #expect(try eval("SUBQUERY(friends, $f, $f.age > 26 AND $f.name BEGINSWITH 'B').@count > 0", ann))
        #expect(try eval("SUBQUERY(friends, $f, ANY $f.tags == 'x').@count == 1", ann))
        #expect(try eval("SUBQUERY(friends, $f, $f.age > 100).@count == 0", ann))
        #expect(try eval("SUBQUERY(friends, $f, SUBQUERY($f.tags, $t, $t == 'x').@count > 0)[SIZE] == 1", ann))
    }

    @Test func functionsAndArithmetic() throws {
        let d: [String: Any] = ["a": 6, "b": 4, "x": 2.5, "s": "MiXed"]
        #expect(try eval("a + b == 10", d))
        #expect(try eval("a - b == 2", d))
        #expect(try eval("a * b == 24", d))
        #expect(try eval("a / b == 1.5", d))
        #expect(try eval("a ** 2 == 36", d))
        #expect(try eval("-a == -6", d))
        #expect(try eval("modulus:by:(a, b) == 2", d))
        #expect(try eval("x * 2 == 5", d))
        #expect(try eval("sqrt(16) == 4", d))
        #expect(try eval("abs(-3) == 3", d))
        #expect(try eval("floor(2.7) == 2 AND ceiling(2.1) == 3 AND trunc(-2.7) == -2", d))
        #expect(try eval("sum:({1, 2, 3}) == 6 AND average:({1, 2, 3}) == 2 AND count:({1, 2}) == 2", d))
        #expect(try eval("min:({3, 1, 2}) == 1 AND max:({3, 1, 2}) == 3 AND median:({1, 5, 2}) == 2", d))
        #expect(try eval("lowercase:(s) == 'mixed' AND uppercase:(s) == 'MIXED'", d))
        #expect(try eval("canonical:('Crème') == 'creme'", d))
        #expect(try eval("bitwiseAnd:with:(a, 3) == 2 AND bitwiseOr:with:(a, 1) == 7 AND leftshift:by:(1, 3) == 8", d))
        #expect(try eval("now() > CAST(0, 'NSDate')", d))
        #expect(try eval("TERNARY(a > 5, 'big', 'small') == 'big'", d))
        #expect(try eval("CAST('42', 'NSNumber') == 42", d))
        #expect(try eval("CAST(a, 'NSString') == '6'", d))
        #expect(try eval("{1, a, 3}[1] == 6 AND {1, 2}[FIRST] == 1 AND {1, 2}[LAST] == 2 AND {1, 2}[SIZE] == 2", d))
        #expect(try eval("{a, b} CONTAINS 4", d))
    }

    @Test func dates() throws {
        let d: [String: Any] = ["when": Date(timeIntervalSinceReferenceDate: 1000)]
        #expect(try eval("when == %@", d, Date(timeIntervalSinceReferenceDate: 1000)))
        #expect(try eval("when > %@", d, Date(timeIntervalSinceReferenceDate: 999)))
        #expect(try eval("when == CAST(1000, 'NSDate')", d))
        #expect(try eval("when BETWEEN {CAST(0, 'NSDate'), CAST(2000, 'NSDate')}", d))
    }

    @Test func variablesAndSubstitution() throws {
        let p = try FLPredicate(format: "age > $MIN AND name == $NAME")
        #expect(try p.evaluate(with: ann, variables: ["MIN": 40, "NAME": "Ann"]))
        #expect(throws: PredicateEvaluationError.self) { try p.evaluate(with: ann) }
        let bound = try p.substituting(["MIN": 40, "NAME": "Ann"])
        #expect(bound.predicateFormat == #"age > 40 AND name == "Ann""#)
        #expect(try bound.evaluate(with: ann))
        let partial = try p.substituting(["MIN": 1])
        #expect(partial.predicateFormat == "age > 1 AND name == $NAME")
        let sub = try FLPredicate(format: "SUBQUERY(friends, $x, $x.age > $x).@count > 0").substituting(["x": 5])
        #expect(sub.predicateFormat == "SUBQUERY(friends, $x, $x.age > $x).@count > 0")
    }

    @Test func reflectionAndDictionaries() throws {
        #expect(try eval("title BEGINSWITH 'Du' AND score > 3", Plain(title: "Dune", score: 4.5)))
        #expect(try eval("SELF == 3", 3))
        #expect(try eval("SELF BEGINSWITH 'a'", "abc"))
        #expect(try [1, 5, 10].filtered(by: FLPredicate(format: "SELF > 4")) == [5, 10])
        #expect(try eval("a.b.c == 1", ["a": ["b": ["c": 1]]]))
    }

    @Test func customFunction() throws {
        struct Doubler: FLCustomFunctionReceiver, KeyValueCoding {
            func perform(selector: String, arguments: [Any?]) throws -> Any? {
                guard selector == "double:", let n = arguments.first as? Int else { return nil }
                return n * 2
            }
            func value(forKey key: String) -> Any? { key == "n" ? 21 : nil }
        }
        #expect(try eval("FUNCTION(SELF, 'double:', n) == 42", Doubler()))
    }

    @Test func builtTreesWithWrongArityThrow() {
        #expect(throws: PredicateEvaluationError.self) { try FLExpression.function("add:to:", [.constant(.int(1))]).value(with: nil) }
        #expect(throws: PredicateEvaluationError.self) { try FLExpression.function("bogus:", []).value(with: nil) }
    }

    @Test func compoundShortCircuits() throws {
        #expect(try eval("TRUEPREDICATE OR ANY name == 'x'", ann))
        #expect(try !eval("FALSEPREDICATE AND ANY name == 'x'", ann))
        #expect(try eval("NOT (age < 10)", ann))
    }
}

@Suite("Sort descriptors")
struct SortDescriptorTests {
    @Test func sorts() throws {
        let rows: [[String: Any?]] = [["n": "b10"], ["n": "B2"], ["n": nil], ["n": "a"]]
        let plain = try rows.sorted(by: [FLSortDescriptor(key: "n")]).map { $0["n"] ?? nil }
        #expect(plain.map { $0 as? String } == [nil, "B2", "a", "b10"])
        let ci = try rows.sorted(by: [FLSortDescriptor(key: "n", comparator: .caseInsensitiveCompare)]).map { $0["n"] ?? nil }
        #expect(ci.map { $0 as? String } == [nil, "a", "b10", "B2"])
        let finder = try rows.sorted(by: [FLSortDescriptor(key: "n", ascending: false, comparator: .localizedStandardCompare)])
        #expect(finder.map { ($0["n"] ?? nil) as? String } == ["b10", "B2", "a", nil])
        #expect(FLSortDescriptor(key: "n", selector: "caseInsensitiveCompare:")?.comparator == .caseInsensitiveCompare)
        #expect(FLSortDescriptor(key: "n", selector: "bogus:") == nil)
        #expect(FLSortDescriptor(key: "n").description == "(n, ascending, compare:)")
    }

    @Test func multipleKeysAreStable() throws {
        let rows: [[String: Any]] = [["a": 1, "b": 2, "i": 0], ["a": 0, "b": 2, "i": 1], ["a": 1, "b": 1, "i": 2], ["a": 1, "b": 2, "i": 3]]
        let sorted = try rows.sorted(by: [FLSortDescriptor(key: "a"), FLSortDescriptor(key: "b", ascending: false)])
        #expect(sorted.map { $0["i"] as? Int } == [1, 0, 3, 2])
    }
}
