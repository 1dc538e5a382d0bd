import Foundation
import Testing

@testable import FaultlinePredicate

/// Trees as deep as their input is long used to overflow the stack (exit 139) in every
/// recursive walk; now the parser refuses them and every walk checks trees built in code.
@Suite struct NestingDepthTests {
    static let operands = [2, 1_450, 5_000, 100_000]

    @Test(arguments: operands)
    func longArithmeticChainsAreRefusedNotCrashed(count: Int) throws {
        let format = "count > " + Array(repeating: "1", count: count).joined(separator: "+")
        do {
            _ = try FLPredicate(format: format)
            #expect(count == 2)
        } catch let error as PredicateSyntaxError {
            #expect(count > 2)
            #expect(error.message.contains("nested too deeply"))
        }
    }

    @Test(arguments: [2_519, 50_000])
    func longIndexChainsAreRefused(count: Int) {
        let format = "tags" + String(repeating: "[0]", count: count) + " == 1"
        #expect(throws: PredicateSyntaxError.self) { try FLPredicate(format: format) }
        #expect(throws: PredicateSyntaxError.self) { try FLExpression(format: "tags" + String(repeating: "[0]", count: count)) }
    }

    @Test func otherChainsAreRefusedToo() {
        for format in [
            "a == " + Array(repeating: "2", count: 3_000).joined(separator: " * "),
            "a == " + String(repeating: "-", count: 3_000) + "1",
            String(repeating: "NOT ", count: 3_000) + "a == 1",
            String(repeating: "(", count: 3_000) + "a == 1" + String(repeating: ")", count: 3_000),
            "a == " + String(repeating: "{", count: 3_000) + String(repeating: "}", count: 3_000),
            "a == " + String(repeating: "2 ** ", count: 3_000) + "2",
        ] {
            #expect(throws: PredicateSyntaxError.self, "\(format.prefix(20))") { try FLPredicate(format: format) }
        }
    }

    @Test func theDepthJustBelowTheLimitParsesAndWalks() throws {
        // A chain right at the limit works in every walk, on a secondary thread's small stack.
        var count = 2
        while (try? FLPredicate(format: "a > " + Array(repeating: "1", count: count + 1).joined(separator: "+"))) != nil { count += 1 }
        let format = "a > " + Array(repeating: "1", count: count).joined(separator: "+")
        let predicate = try FLPredicate(format: format)
        #expect(FLNestingDepth.depth(of: predicate) <= FLNestingDepth.maximum)
        #expect(count > 90)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            _ = predicate.predicateFormat
            _ = try? predicate.evaluate(with: ["a": 1_000])
            _ = try? predicate.substituting([:])
            _ = predicate == predicate
            done.signal()
        }
        // A secondary thread's 512 KiB; AddressSanitizer's frames (red zones around every
        // local) are several times larger, so a sanitized run gives the walk 4 MiB.
        let sanitized = ProcessInfo.processInfo.environment["ASAN_OPTIONS"] != nil
        thread.stackSize = (sanitized ? 4_096 : 512) * 1024
        thread.start()
        done.wait()
        #expect(try predicate.evaluate(with: ["a": 1_000]))
    }

    @Test func treesBuiltInCodeAreCheckedByEveryWalk() {
        var expression = FLExpression.constant(.int(1))
        for _ in 0..<5_000 { expression = .function("add:to:", [expression, .constant(.int(1))]) }
        let predicate = FLPredicate.comparison(.keyPath("a"), .greaterThan, expression)
        #expect(FLNestingDepth.depth(of: predicate) == FLNestingDepth.maximum + 1)  // counting stops early
        #expect(throws: PredicateEvaluationError.self) { try predicate.evaluate(with: ["a": 1]) }
        #expect(throws: PredicateEvaluationError.self) { try expression.value(with: nil) }
        #expect(throws: PredicateEvaluationError.self) { try predicate.substituting([:]) }
        #expect(throws: PredicateEvaluationError.self) { try [1, 2].filtered(by: predicate) }
        #expect(predicate.predicateFormat == FLNestingDepth.unprintable)
        #expect(expression.description == FLNestingDepth.unprintable)
    }
}
