import Foundation
import Testing

@testable import FaultlinePredicate

/// A format string parsed before is made again from its template (``ParseTemplate``): the
/// trees and errors must be those a parse gives. Each test uses format strings of its own
/// (the template cache is shared by the whole process).
@Suite("Parse templates")
struct ParseTemplateTests {
    private func isReady(_ format: String) -> Bool {
        if case .ready = LexedFormats.shared.entry(for: format).template { return true }
        return false
    }

    private func isUnusable(_ format: String) -> Bool {
        if case .unusable = LexedFormats.shared.entry(for: format).template { return true }
        return false
    }

    /// The tree a parse gives, without the template.
    private func parsed(_ format: String, _ arguments: [Any?]) throws -> FLPredicate {
        var parser = try Parser(source: format, arguments: arguments)
        return try parser.parsePredicateToEnd()
    }

    @Test func aFormatMadeAgainGivesTheTreeOfItsArguments() throws {
        let format = "templateA.name BEGINSWITH[c] %@ AND templateA.score > %@ AND templateA.tags IN %@"
        let first = try FLPredicate(format: format, "ca", 2.5, ["x", "y"])
        #expect(isReady(format))
        let second = try FLPredicate(format: format, "do", 7, [1, 2, 3])
        #expect(first.predicateFormat == #"templateA.name BEGINSWITH[c] "ca" AND templateA.score > 2.5 AND templateA.tags IN {"x", "y"}"#)
        #expect(second.predicateFormat == #"templateA.name BEGINSWITH[c] "do" AND templateA.score > 7 AND templateA.tags IN {1, 2, 3}"#)
        // A literal aggregate with arguments in it, and arguments of every conversion.
        let aggregate = "templateB IN {%@, 1, %d} OR templateB == %f OR templateB == %s"
        _ = try FLPredicate(format: aggregate, "a", 2, 3.5, "s")
        let again = try FLPredicate(format: aggregate, nil, 4, 1, "t")
        #expect(isReady(aggregate))
        #expect(again.predicateFormat == #"templateB IN {nil, 1, 4} OR templateB == 1 OR templateB == "t""#)
        #expect(again == (try parsed(aggregate, [nil, 4, 1, "t"])))
        #expect(second == (try parsed(format, ["do", 7, [1, 2, 3]])))
    }

    @Test func argumentErrorsAreThoseOfAParse() throws {
        let format = "templateC == %d AND templateD == %@"
        _ = try FLPredicate(format: format, 1, "x")
        #expect(isReady(format))
        for arguments: [Any?] in [["x", "y"], [1]] {
            var fromTemplate: PredicateSyntaxError?
            do { _ = try FLPredicate(format: format, arguments: arguments) } catch let e as PredicateSyntaxError { fromTemplate = e }
            var fromParse: PredicateSyntaxError?
            do {
                var parser = try Parser(source: format, arguments: arguments)
                _ = try parser.parsePredicateToEnd()
            } catch let e as PredicateSyntaxError { fromParse = e }
            #expect(fromTemplate != nil && fromTemplate == fromParse)
        }
    }

    @Test func formatsWhoseTreeDependsOnTheirArgumentsAreParsedEveryTime() throws {
        // `-%@` folds a number, not a key path's value; `CAST(%@, "NSDate")` folds a number.
        let negated = "templateE == -%@"
        #expect(try FLPredicate(format: negated, 5).predicateFormat == "templateE == -5")
        #expect(isUnusable(negated))
        #expect(try FLPredicate(format: negated, "a").predicateFormat == #"templateE == "a" * -1"#)
        let cast = #"templateF < CAST(%@, "NSDate")"#
        let date = try FLPredicate(format: cast, 0)
        #expect(date == FLPredicate.comparison(.keyPath("templateF"), .lessThan, .constant(.date(Date(timeIntervalSinceReferenceDate: 0)))))
        #expect(isUnusable(cast))
        // `%K` names a key path: the tree's shape.
        let keyed = "%K == 1"
        #expect(try FLPredicate(format: keyed, "SELF") == FLPredicate.comparison(.evaluatedObject, .equalTo, .constant(.int(1))))
        #expect(try FLPredicate(format: keyed, "templateG") == FLPredicate.comparison(.keyPath("templateG"), .equalTo, .constant(.int(1))))
        #expect(isUnusable(keyed))
    }

    @Test func canonicallyEquivalentFormatsAreKeptApart() throws {
        // `é` and `e` + U+0301 are equal Strings but lex differently (the combining mark is
        // not part of an identifier).
        let composed = "templateH == 'caf\u{E9}'"
        let decomposed = "templateH == 'cafe\u{301}'"
        #expect(FormatKey(composed) != FormatKey(decomposed))
        let a = try FLPredicate(format: composed)
        let b = try FLPredicate(format: decomposed)
        #expect(a.predicateFormat.unicodeScalars.count != b.predicateFormat.unicodeScalars.count)
        #expect(try FLPredicate(format: composed) == a)
        #expect(try FLPredicate(format: decomposed) == b)
    }
}
