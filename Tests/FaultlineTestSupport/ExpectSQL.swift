import Testing

/// Expects the SQL statements a test saw to be `expected`, in order, and when they are not,
/// records one issue showing the difference line by line (GRDB's `assertEqualSQL`):
///
/// ```
/// SQL differs: 1 statement expected and missing (-), 1 run and not expected (+)
///   BEGIN EXCLUSIVE
/// - UPDATE ZLOCATION SET ZLABEL = ?, Z_OPT = ? WHERE Z_PK = ? AND Z_OPT = ?
/// + UPDATE ZLOCATION SET Z_OPT = ? WHERE Z_PK = ? AND Z_OPT = ?
///   COMMIT
/// ```
///
/// - Parameters:
///   - actual: The statements run, usually a recorder's `sql` (or a slice or filter of it).
///   - expected: The golden statements.
///   - comment: What is being compared, shown before the difference.
///   - sourceLocation: Where the issue is reported; the caller's line by default.
public func expectSQL(
    _ actual: some Collection<String>, _ expected: [String], _ comment: Comment? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    guard let message = sqlDifference(actual, expected, comment) else { return }
    Issue.record(Comment(rawValue: message), sourceLocation: sourceLocation)
}

/// The message ``expectSQL(_:_:_:sourceLocation:)`` records, or nil when the lists are equal.
public func sqlDifference(_ actual: some Collection<String>, _ expected: [String], _ comment: Comment? = nil) -> String? {
    let actual = Array(actual)
    guard actual != expected else { return nil }
    var message = LineDiff.summary(expected: expected, actual: actual, noun: "statement") + "\n"
    message += LineDiff.render(expected: expected, actual: actual)
    if let comment { message = "\(comment.rawValue)\n" + message }
    return message
}

/// A line-by-line difference of two lists of lines, as `diff -u` shows one without its headers:
/// `  ` for a line in both, `- ` for an expected line that is missing, `+ ` for an actual line
/// that was not expected. Lines are matched by a longest common subsequence, so one changed
/// statement among many shows as one `-` and one `+`.
public enum LineDiff {
    /// One line of a difference.
    public enum Line: Equatable, Sendable {
        /// In both lists.
        case same(String)
        /// Expected, missing from the actual list.
        case missing(String)
        /// In the actual list, not expected.
        case extra(String)
    }

    /// The lines of both lists in order, each marked as in both, missing or extra.
    public static func lines(expected: [String], actual: [String]) -> [Line] {
        // lengths[i][j]: the longest common subsequence of expected[i...] and actual[j...].
        let n = expected.count, m = actual.count
        var lengths = [[Int]](repeating: [Int](repeating: 0, count: m + 1), count: n + 1)
        for i in stride(from: n - 1, through: 0, by: -1) {
            for j in stride(from: m - 1, through: 0, by: -1) {
                lengths[i][j] = expected[i] == actual[j] ? lengths[i + 1][j + 1] + 1 : max(lengths[i + 1][j], lengths[i][j + 1])
            }
        }
        var result: [Line] = []
        var i = 0, j = 0
        while i < n || j < m {
            if i < n, j < m, expected[i] == actual[j] {
                result.append(.same(expected[i]))
                i += 1
                j += 1
            } else if j == m || (i < n && lengths[i + 1][j] >= lengths[i][j + 1]) {
                result.append(.missing(expected[i]))  // missing lines first, as `diff` lists them
                i += 1
            } else {
                result.append(.extra(actual[j]))
                j += 1
            }
        }
        return result
    }

    /// The difference as text, one line per line, marked `  `, `- ` or `+ `.
    public static func render(expected: [String], actual: [String]) -> String {
        lines(expected: expected, actual: actual).map { line in
            switch line {
            case .same(let text): "  " + text
            case .missing(let text): "- " + text
            case .extra(let text): "+ " + text
            }
        }.joined(separator: "\n")
    }

    /// A one-line count of the difference: `SQL differs: 1 statement expected and missing (-),
    /// 2 run and not expected (+)`.
    static func summary(expected: [String], actual: [String], noun: String) -> String {
        let lines = lines(expected: expected, actual: actual)
        let missing = lines.filter { if case .missing = $0 { true } else { false } }.count
        let extra = lines.filter { if case .extra = $0 { true } else { false } }.count
        func counted(_ count: Int) -> String { "\(count) \(noun)\(count == 1 ? "" : "s")" }
        var parts: [String] = []
        if missing > 0 { parts.append("\(counted(missing)) expected and missing (-)") }
        if extra > 0 { parts.append("\(missing > 0 ? "\(extra)" : counted(extra)) run and not expected (+)") }
        return "SQL differs: " + parts.joined(separator: ", ")
    }
}
