import FaultlinePredicate
import Foundation

/// A parsed `fetch` or `count` command:
/// `fetch Entity [where PREDICATE] [sort by KEYPATH [asc|desc], …] [limit N] [offset N] [batch N]
/// [prefetch KEYPATH, …] [show KEYPATH, …]`.
struct FetchCommand: Equatable {
    var entity: String
    var predicate: String?
    var sort: [(keyPath: String, ascending: Bool, selector: String?)] = []
    var limit: Int?
    var offset: Int?
    var show: [String] = []
    var batch: Int?
    var prefetch: [String] = []

    static func == (a: FetchCommand, b: FetchCommand) -> Bool {
        a.entity == b.entity && a.predicate == b.predicate && a.limit == b.limit && a.offset == b.offset && a.show == b.show && a.batch == b.batch && a.prefetch == b.prefetch
            && a.sort.map(\.keyPath) == b.sort.map(\.keyPath) && a.sort.map(\.ascending) == b.sort.map(\.ascending)
            && a.sort.map(\.selector) == b.sort.map(\.selector)
    }

    /// The clause keywords, matched case-insensitively outside quotes and parentheses.
    static let clauses = ["where", "sort by", "order by", "limit", "offset", "batch", "prefetch", "show"]

    /// Parses the text after `fetch ` / `count `.
    static func parse(_ text: String, examples: Examples = Examples()) throws -> FetchCommand {
        let parts = splitClauses(text)
        guard let head = parts.first, head.keyword == nil else { throw ShellError("expected an entity name") }
        let entity = head.text.trimmingCharacters(in: .whitespaces)
        guard !entity.isEmpty else { throw ShellError("expected an entity name, as in: fetch \(examples.entity)") }
        guard entity.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "." }) else {
            throw ShellError("expected an entity name, found \"\(entity)\"; a predicate starts with 'where'")
        }
        var command = FetchCommand(entity: entity)
        for part in parts.dropFirst() {
            let body = part.text.trimmingCharacters(in: .whitespaces)
            switch part.keyword {
            case "where":
                guard !body.isEmpty else { throw ShellError("'where' needs a predicate, as in: where \(examples.key) BEGINSWITH \"C\"") }
                command.predicate = body
            case "sort by", "order by":
                for item in body.split(separator: ",") {
                    let words = item.split(separator: " ").map(String.init)
                    guard let key = words.first else { throw ShellError("'sort by' needs a key path") }
                    var ascending = true
                    var selector: String?
                    for word in words.dropFirst() {
                        switch word.lowercased() {
                        case "asc": ascending = true
                        case "desc": ascending = false
                        default:
                            let name = word.hasSuffix(":") ? word : word + ":"
                            guard FLSortDescriptor.Comparator(rawValue: name) != nil else {
                                throw ShellError("expected asc, desc or a comparison (\(FLSortDescriptor.Comparator.allCases.map(\.rawValue).joined(separator: ", "))) after \(key), found \(word)")
                            }
                            selector = name
                        }
                    }
                    command.sort.append((key, ascending, selector))
                }
            case "limit":
                guard let n = Int(body), n >= 0 else { throw ShellError("'limit' needs a whole number, found \"\(body)\"") }
                command.limit = n
            case "offset":
                guard let n = Int(body), n >= 0 else { throw ShellError("'offset' needs a whole number, found \"\(body)\"") }
                command.offset = n
            case "batch":
                guard let n = Int(body), n > 0 else { throw ShellError("'batch' needs a whole number above 0, found \"\(body)\"") }
                command.batch = n
            case "prefetch":
                command.prefetch = body.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
                guard !command.prefetch.isEmpty else { throw ShellError("'prefetch' needs relationship key paths, as in: prefetch asset, location") }
            case "show":
                command.show = body.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
                guard !command.show.isEmpty else { throw ShellError("'show' needs key paths, as in: show \(([examples.key] + [examples.relationship.map { "\($0).\(examples.destinationKey)" }].compactMap { $0 }).joined(separator: ", "))") }
            default:
                break
            }
        }
        return command
    }

    /// Splits text at clause keywords that stand outside quotes and parentheses.
    static func splitClauses(_ text: String, keywords: [String] = clauses) -> [(keyword: String?, text: String)] {
        var parts: [(keyword: String?, text: String)] = []
        var current = ""
        var keyword: String?
        var depth = 0
        var quote: Character?
        let chars = Array(text)
        var i = 0
        func atWordBoundary(_ index: Int) -> Bool {
            index == 0 || chars[index - 1] == " " || chars[index - 1] == "\t"
        }
        while i < chars.count {
            let c = chars[i]
            if let q = quote {
                current.append(c)
                if c == "\\", i + 1 < chars.count { current.append(chars[i + 1]); i += 2; continue }
                if c == q { quote = nil }
                i += 1
                continue
            }
            if c == "\"" || c == "'" { quote = c; current.append(c); i += 1; continue }
            if c == "(" || c == "{" { depth += 1 }
            if c == ")" || c == "}" { depth -= 1 }
            if depth == 0, atWordBoundary(i) {
                var matched: String?
                for clause in keywords {
                    let end = i + clause.count
                    guard end <= chars.count else { continue }
                    let word = String(chars[i..<end]).lowercased()
                    if word == clause, end == chars.count || chars[end] == " " || chars[end] == "\t" {
                        matched = clause
                        break
                    }
                }
                if let matched {
                    parts.append((keyword, current))
                    keyword = matched
                    current = ""
                    i += matched.count
                    continue
                }
            }
            current.append(c)
            i += 1
        }
        parts.append((keyword, current))
        return parts
    }
}
