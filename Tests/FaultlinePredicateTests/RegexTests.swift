import Foundation
import FaultlineTestSupport
import Testing

@testable import FaultlinePredicate

/// `MATCHES`: the linear-time engine against ICU (`NSRegularExpression`), the fallback and
/// its step budget, and the size limit.
@Suite struct RegexTests {
    /// ICU's whole-string answer, or nil when ICU reports progress (it spent at least 10,000
    /// backtracking steps: a case the differential test leaves out) or rejects the pattern.
    static func icu(_ pattern: String, _ text: String, caseInsensitive: Bool) -> Bool? {
        guard let regex = try? NSRegularExpression(pattern: "\\A(?:" + pattern + ")\\z", options: caseInsensitive ? [.caseInsensitive] : []) else { return nil }
        return icu(regex, text)
    }

    static func icu(_ regex: NSRegularExpression, _ text: String) -> Bool? {
        var matched = false, slow = false
        regex.enumerateMatches(in: text, options: [.reportProgress], range: NSRange(text.startIndex..., in: text)) { result, flags, stop in
            if result != nil { matched = true; stop.pointee = true }
            if flags.contains(.progress) { slow = true; stop.pointee = true }
        }
        return slow ? nil : matched
    }


    static let atoms = [
        "a", "b", "c", "A", ".", "\\d", "\\w", "\\s", "\\W", "\\D", "\\S", "[ab]", "[^a]", "[a-c]", "[^a-cA]", "[\\d_]",
        "\\p{Lu}", "\\P{L}", "[\\p{Ll}1]", "é", "\\u00e9", "\\x41", "\\x{212A}", "\\.", "\\n", "\\t", " ", "_", "1", "K", "ſ", "ß",
        "\\Qa.\\E", "[-a]", "[a-]", "[^-b]", "[a-c-]", "[+-]", "[\\w-]", "^", "$", "\\z", "\\Z", "\\A", "()", "[\\-a]", "[.*]",
    ]
    static let quantifiers = ["", "", "", "*", "+", "?", "{2}", "{1,}", "{0,2}", "*?", "+?", "??", "{1,3}?"]
    static let textScalars: [String] = ["a", "b", "c", "A", "B", "1", " ", "\n", "\r", "é", "e\u{301}", "K", "\u{212A}", "ſ", "s", "S", "_", ".", "ß", "٣"]

    static func pattern(_ r: inout SeededRandom, depth: Int = 0) -> String {
        var out = ""
        for _ in 0..<(1 + r.below(4)) {
            let atom: String
            if depth < 3, r.below(5) == 0 {
                var inner = pattern(&r, depth: depth + 1)
                if r.below(2) == 0 { inner += "|" + pattern(&r, depth: depth + 1) }
                atom = (r.below(2) == 0 ? "(" : "(?:") + inner + ")"
            } else {
                atom = r.pick(atoms)
            }
            out += atom + (atom == "^" || atom == "$" || atom.hasPrefix("\\") && atom.count == 2 && "AzZ".contains(atom.last ?? " ") ? "" : r.pick(quantifiers))
        }
        if r.below(6) == 0 { out += "|" + pattern(&r, depth: depth + 1) }
        return out
    }

    @Test func theLinearEngineAgreesWithICUOnGeneratedPatterns() throws {
        var r = SeededRandom(state: 0xFA17_11E5)
        var compared = 0, linear = 0, patterns = 0
        var disagreements: [String] = []
        var reasons: [String: Int] = [:]
        for _ in 0..<1500 {
            let p = Self.pattern(&r)
            for caseInsensitive in [false, true] {
                guard let icuRegex = try? NSRegularExpression(pattern: "\\A(?:" + p + ")\\z", options: caseInsensitive ? [.caseInsensitive] : []) else {
                    #expect(throws: PredicateEvaluationError.self) { try FLRegex(p, caseInsensitive: caseInsensitive) }
                    continue
                }
                let regex = try FLRegex(p, caseInsensitive: caseInsensitive)
                patterns += 1
                guard regex.isLinear else { reasons[regex.fallbackReason ?? "?", default: 0] += 1; continue }
                linear += 1
                for _ in 0..<24 {
                    let text = (0..<r.below(7)).map { _ in r.pick(Self.textScalars) }.joined()
                    guard let expected = Self.icu(icuRegex, text) else { continue }
                    compared += 1
                    if try regex.matches(text) != expected, disagreements.count < 20 {
                        disagreements.append("\(caseInsensitive ? "[c] " : "")\(p) on \(text.debugDescription): ICU \(expected)")
                    }
                }
            }
        }
        #expect(disagreements == [])
        #expect(compared > 40_000)
        #expect(Double(linear) > 0.9 * Double(patterns), "\(linear) of \(patterns) patterns ran on the linear engine; the others: \(reasons)")
    }

    /// Case-insensitive literals and classes for every cased character of the Basic
    /// Multilingual Plane and the Deseret–Adlam planes: the fold tables against ICU's.
    @Test func caseFoldingAgreesWithICU() throws {
        var disagreements: [String] = []
        var checked = 0
        for v: UInt32 in 0x41...0x1FFFF {
            guard let s = Unicode.Scalar(v), s.properties.changesWhenCaseMapped, !FLCaseFolding.isSpecial(v),
                  let age = s.properties.age, age.major < 15 else { continue }
            let others = Set(FLCaseFolding.equivalents(v) + [s.properties.lowercaseMapping, s.properties.uppercaseMapping].compactMap {
                $0.unicodeScalars.count == 1 ? $0.unicodeScalars.first?.value : nil
            } + [v + 1, v - 1])
            for pattern in [String(format: "\\x{%X}", v), String(format: "[\\x{%X}]", v), String(format: "[^\\x{%X}]", v)] {
                let regex = try FLRegex(pattern, caseInsensitive: true)
                let icuRegex = try NSRegularExpression(pattern: "\\A(?:" + pattern + ")\\z", options: [.caseInsensitive])
                for w in others {
                    guard let t = Unicode.Scalar(w), !FLCaseFolding.isSpecial(w), let age = t.properties.age, age.major < 15 else { continue }
                    let text = String(Character(t))
                    guard text.unicodeScalars.count == 1, let expected = Self.icu(icuRegex, text) else { continue }
                    checked += 1
                    if try regex.matches(text) != expected, disagreements.count < 20 {
                        disagreements.append(String(format: "%@ on U+%04X: ICU %@", pattern, w, expected ? "true" : "false"))
                    }
                }
            }
        }
        #expect(disagreements == [])
        #expect(checked > 10_000)
    }

    /// `.`, `\d`, `\w`, `\s` and general categories, one scalar at a time, over a sample of
    /// characters assigned before Unicode 15 (ICU's data and the standard library's may differ
    /// for newer ones).
    @Test func characterClassesAgreeWithICU() throws {
        let patterns = [".", "\\d", "\\w", "\\s", "\\D", "\\W", "\\S", "\\p{L}", "\\p{Lu}", "\\p{Ll}", "\\p{M}", "\\p{Nd}", "\\p{N}", "\\p{P}", "\\p{S}", "\\p{Z}", "\\p{Cc}", "\\p{Cf}", "[^\\p{L}\\d]"]
        let compiled = try patterns.map { (try FLRegex($0), try NSRegularExpression(pattern: "\\A(?:" + $0 + ")\\z")) }
        var disagreements: [String] = []
        var v: UInt32 = 0
        while v < 0x30000 {
            defer { v += v < 0x3000 ? 1 : 13 }
            // U+0295 is Lo from Unicode 16 (the standard library), Ll before (ICU's data).
            guard v != 0x295, let s = Unicode.Scalar(v), let age = s.properties.age, age.major < 15 else { continue }
            let text = String(String.UnicodeScalarView([s]))
            for (index, (regex, icuRegex)) in compiled.enumerated() {
                guard let expected = Self.icu(icuRegex, text) else { continue }
                if try regex.matches(text) != expected, disagreements.count < 20 {
                    disagreements.append(String(format: "%@ on U+%04X: ICU %@", patterns[index], v, expected ? "true" : "false"))
                }
            }
        }
        #expect(disagreements == [])
    }

    @Test func anchorsAndLineTerminatorsAsICU() throws {
        let texts = ["a", "a\n", "a\r\n", "a\r", "a\n\n", "a\u{2028}", "a\u{85}", "\n", "", "a\u{0B}", "a\n\r"]
        for p in ["a$", "a\\Z", "a\\z", "^a", "a$\\n?", "a$\\s*", "a\\Z\\s*", "(a|$)*", "a.", ".*", "a\\r?$\\n"] {
            for caseInsensitive in [false, true] {
                let regex = try FLRegex(p, caseInsensitive: caseInsensitive)
                #expect(regex.isLinear, "\(p)")
                for t in texts {
                    #expect(try regex.matches(t) == Self.icu(p, t, caseInsensitive: caseInsensitive), "\(p) on \(t.debugDescription)")
                }
            }
        }
    }

    @Test func edgeCasesOfTheSyntaxAsICU() throws {
        let patterns = ["|a", "a|", "(|a)", "()", "(?:)", "a{0}", "a{0,0}", "(a|)+", "(a*)*", "(a*)+b", "x{3,}", "a{2,3}?b", "\\Qa*\\E+",
                        "\\Q\\E", "[\\]]", "[\\[]", "[a\\-z]", "\\u0041\\U00000042", "\\x{1F600}", "[\\x{1F600}-\\x{1F64F}]+", "😀.", "\\p{L}+\\P{L}",
                        "[^\\s]", "[\\S\\d]", "\\$\\^\\|", "[*+?{}()|$.]+", "\\e\\a\\f", "\\x41{2}", "a#b c", "(?:a|b)*?c"]
        let texts = ["", "a", "aa", "b", "ab", "aab", "xxx", "xxxx", "a*", "a*a*", "a|b", "]", "[", "-", "AB", "😀", "😀x", "😀😃", "ab1", "a ", "$^|",
                     "*+?{}()|$.", "\u{1B}\u{07}\u{0C}", "AA", "a#b c", "abac"]
        for p in patterns {
            for caseInsensitive in [false, true] {
                let regex = try FLRegex(p, caseInsensitive: caseInsensitive)
                #expect(regex.isLinear, "\(p): \(regex.fallbackReason ?? "")")
                for t in texts {
                    #expect(try regex.matches(t) == Self.icu(p, t, caseInsensitive: caseInsensitive), "\(p) on \(t.debugDescription)")
                }
            }
        }
    }

    @Test func theDefectsPatternIsDecidedInLinearTime() throws {
        let regex = try FLRegex("(a+)+c|a*b")
        #expect(regex.isLinear)
        let start = Date()
        #expect(try regex.matches(String(repeating: "a", count: 30) + "b"))
        #expect(try !regex.matches(String(repeating: "a", count: 30) + "c!"))
        #expect(try regex.matches(String(repeating: "a", count: 5000) + "c"))
        #expect(try FLRegex("(x+x+)+y").matches(String(repeating: "x", count: 10_000)) == false)
        #expect(Date().timeIntervalSince(start) < 2)
        // The same through predicate evaluation.
        let predicate = try FLPredicate(format: "label MATCHES %@", arguments: ["(a+)+c|a*b"])
        #expect(try predicate.evaluate(with: ["label": String(repeating: "a", count: 30) + "b"]))
    }

    @Test func aRepetitionThatWouldCompileTooLargeIsAnError() throws {
        let start = Date()
        for p in ["(a{1000}){1000}", "((a{0}){9999999}){9999999}", "a{1000000}", "(((a{100}){100}){100}){100}"] {
            #expect {
                try FLRegex(p)
            } throws: { error in
                "\(error)".contains("regular expression too large") && "\(error)".contains(String(p.prefix(8)))
            }
        }
        #expect(try FLRegex("[a-z]{1,255}").matches("abc"))
        let large = try FLRegex("[a-z]{1,900}")  // thread lists on the heap
        #expect(try large.matches(String(repeating: "q", count: 900)) && !large.matches(String(repeating: "q", count: 901)))
        #expect(Date().timeIntervalSince(start) < 1)
    }

    @Test func patternsOutsideTheSubsetUseICU() throws {
        let backreference = try FLRegex("(a+)\\1")
        #expect(!backreference.isLinear)
        #expect(try backreference.matches("aaaa"))
        #expect(try !backreference.matches("aaa"))
        let lookahead = try FLRegex("(?=.*\\d)\\w{3,}")
        #expect(try lookahead.matches("ab1") && !lookahead.matches("abc"))
        #expect(try FLRegex("\\bab\\b").matches("ab"))
        #expect(try FLRegex("(?i)ab").matches("AB"))
        #expect(try FLRegex("a*+b").matches("aab"))
        #expect(try FLRegex("[[:alpha:]]+").matches("abc"))
        // With [c], text holding a character whose full folding is several characters goes
        // to ICU, which folds it in full (as before).
        let folding = try FLRegex("stra(ss|x)e", caseInsensitive: true)
        #expect(folding.isLinear)
        #expect(try folding.matches("STRASSE"))
        #expect(try folding.matches("straße") == Self.icu("stra(ss|x)e", "straße", caseInsensitive: true))
    }

    @Test func aFallbackThatGivesUpIsAnErrorNamingThePattern() throws {
        let p = "(a+)+c|(x)\\2"
        let regex = try FLRegex(p)
        #expect(!regex.isLinear)
        let start = Date()
        #expect {
            try regex.matches(String(repeating: "a", count: 30) + "b")
        } throws: { error in
            let text = "\(error)"
            return error is PredicateEvaluationError && text.contains("MATCHES could not decide") && text.contains(p) && text.contains("gave up")
        }
        #expect(Date().timeIntervalSince(start) < 1)
        #expect(try regex.matches("xx"))
        #expect(try !regex.matches("aab"))
        let predicate = try FLPredicate(format: "label MATCHES %@", arguments: [p])
        #expect(throws: PredicateEvaluationError.self) { try predicate.evaluate(with: ["label": String(repeating: "a", count: 30) + "b"]) }
    }

    @Test func invalidPatternsKeepTheirError() throws {
        for p in ["(", "a{2,1}", "[a", "*a", "a\\", "(?<n>a", "\\k<x>"] {
            #expect {
                try FLRegex(p)
            } throws: { error in
                "\(error)" == "invalid regular expression \"\(p)\" for MATCHES"
            }
        }
    }

    /// Not a benchmark: a guard that the linear engine is not far slower than ICU on short
    /// strings (measured figures are in the commit message). Generous, as CI machines vary.
    @Test func shortStringsAreNotMuchSlowerThanICU() throws {
        let pattern = "[A-Z][a-z]+ [0-9]{2,4}|x.*"
        let texts = ["Garage 12", "Office 1234", "basement", "xylophone", "Jaye's Basement"]
        let regex = try FLRegex(pattern)
        let icuRegex = try NSRegularExpression(pattern: "\\A(?:" + pattern + ")\\z")
        func time(_ body: () throws -> Void) rethrows -> Double {
            let start = Date()
            for _ in 0..<2000 { try body() }
            return Date().timeIntervalSince(start)
        }
        var sink = 0
        let linear = try time { for t in texts where try regex.matches(t) { sink += 1 } }
        let icu = time { for t in texts where icuRegex.firstMatch(in: t, range: NSRange(t.startIndex..., in: t)) != nil { sink += 1 } }
        #expect(sink == 2 * 2000 * 3)
        // Under a sanitizer the linear engine (Swift, instrumented) runs several times slower
        // and ICU (a system library) does not, so the ratio says nothing there: scripts/
        // sanitize.sh sets these variables. (It failed once in CI under ASan: 0.213 s vs 0.206.)
        let environment = ProcessInfo.processInfo.environment
        guard environment["ASAN_OPTIONS"] == nil, environment["TSAN_OPTIONS"] == nil else { return }
        #expect(linear < icu * 10, "linear \(linear) s, ICU \(icu) s")
    }
}
