import Foundation

/// String folding for the `[c]`, `[d]`, `[n]` options.
enum FLStrings {
    static func fold(_ s: String, _ options: FLComparison.Options) -> String {
        var fo: String.CompareOptions = []
        if options.contains(.caseInsensitive) { fo.insert(.caseInsensitive) }
        if options.contains(.diacriticInsensitive) { fo.insert(.diacriticInsensitive) }
        if fo.isEmpty { return s }
        fo.insert(.widthInsensitive)
        return s.folding(options: fo, locale: nil)
    }

    static func string(_ any: Any?) -> String? {
        switch flUnwrap(any) {
        case let s as String: return s
        case let s as Substring: return String(s)
        case let s as Character: return String(s)
        case let s as NSString: return String(describing: s)
        default: return nil
        }
    }

    /// `LIKE` matching: `*` is any run of characters, `?` exactly one, `\` escapes.
    static func like(_ text: String, _ pattern: String) -> Bool {
        let t = Array(text)
        var p: [(Character, Bool)] = [] // (char, isLiteral)
        var it = pattern.makeIterator()
        while let c = it.next() {
            if c == "\\", let n = it.next() { p.append((n, true)) } else { p.append((c, false)) }
        }
        var ti = 0, pi = 0
        var starP = -1, starT = 0
        while ti < t.count {
            if pi < p.count, !p[pi].1, p[pi].0 == "*" {
                starP = pi; starT = ti; pi += 1
            } else if pi < p.count, (!p[pi].1 && p[pi].0 == "?") || p[pi].0 == t[ti] {
                ti += 1; pi += 1
            } else if starP >= 0 {
                pi = starP + 1; starT += 1; ti = starT
            } else {
                return false
            }
        }
        while pi < p.count, !p[pi].1, p[pi].0 == "*" { pi += 1 }
        return pi == p.count
    }
}
