import Faultline
import FaultlineModel
import Foundation

/// Tab completion for the shell, independent of the terminal: given the line up to the cursor,
/// the words that may complete the word being typed — commands, entity names, key paths
/// through relationships (`type.na` → `type.name`), predicate keywords and handles.
enum Completer {
    static let commands = ["fetch", "count", "show", "explain", "refresh", "migrate"]
    static let dotCommands = [".open", ".write", ".model", ".schema", ".history", ".sql", ".mode", ".headers", ".timer", ".echo", ".rows", ".faults",
                              ".stats", ".storm", ".read", ".output", ".once", ".log", ".raw", ".merge-policy", ".tables", ".indexes", ".print", ".show", ".bail",
                              ".help", ".quit"]
    static let clauses = ["where", "sort by", "limit", "offset", "batch", "prefetch", "show"] + ValuesCommand.keywords
    static let predicateWords = ["AND", "OR", "NOT", "BEGINSWITH", "CONTAINS", "ENDSWITH", "LIKE", "MATCHES", "IN", "BETWEEN",
                                 "ANY", "ALL", "NONE", "SOME", "SUBQUERY", "TRUEPREDICATE", "FALSEPREDICATE", "nil", "YES", "NO"]

    /// Completions of the last word of `line`.
    static func completions(line: String, model: ManagedObjectModel, handles: [ManagedObject]) -> [String] {
        let word = lastWord(of: line)
        let before = String(line.dropLast(word.count))
        let words = before.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        let candidates: [String]
        if words.isEmpty {
            candidates = word.hasPrefix("$") ? handleCompletions(word, model: model, handles: handles) : commands + dotCommands
        } else if word.hasPrefix("$") {
            candidates = handleCompletions(word, model: model, handles: handles)
        } else if let first = words.first?.lowercased(), ["fetch", "count", "explain"].contains(first) {
            let fetchWords = first == "explain" ? Array(words.dropFirst()) : words
            if fetchWords.count <= 1 {
                candidates = first == "explain" && fetchWords.isEmpty ? ["fetch", "count"] : model.entities.map(\.name)
            } else if let entity = model.entity(named: fetchWords[1]) {
                candidates = clauses + keyPaths(word, from: entity, model: model) + (before.lowercased().contains(" where ") ? predicateWords : [])
            } else {
                candidates = []
            }
        } else if let first = words.first?.lowercased(), [".model", ".schema"].contains(first) {
            candidates = model.entities.map(\.name)
        } else if words.first?.lowercased() == ".mode" {
            candidates = OutputMode.allCases.map(\.rawValue)
        } else if let first = words.first?.lowercased(), [".headers", ".timer", ".echo", ".write"].contains(first) {
            candidates = ["on", "off"]
        } else if words.first?.lowercased() == ".help" {
            candidates = commands + dotCommands
        } else {
            candidates = handleNames(handles)
        }
        return candidates.filter { $0.lowercased().hasPrefix(word.lowercased()) }
    }

    /// Whether a completed word may go on with `.`: a handle, or a key path that ends at a
    /// relationship (`type` → `type.name`). The terminal then adds no space after it.
    static func continuesWithDot(_ completion: String, line: String, model: ManagedObjectModel, handles: [ManagedObject]) -> Bool {
        var components = completion.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        var entity: EntityDescription?
        if let first = components.first, first.hasPrefix("$") {
            guard let n = Int(first.dropFirst()), n >= 1, n <= handles.count else { return false }
            if components.count == 1 { return true }
            entity = handles[n - 1].entity
            components.removeFirst()
        } else {
            // A key path of the entity the command names: `fetch Recipe … show ty` → `type`.
            let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
            let fetchWords = words.first?.lowercased() == "explain" ? Array(words.dropFirst()) : words
            guard fetchWords.count >= 2, ["fetch", "count"].contains(fetchWords[0].lowercased()) else { return false }
            entity = model.entity(named: fetchWords[1])
        }
        for component in components {
            guard let relationship = entity?.relationship(named: component) else { return false }
            entity = model.entity(named: relationship.destinationEntityName)
        }
        return entity != nil && !components.isEmpty
    }

    /// The word under completion: what follows the last space, quote, parenthesis or operator.
    static func lastWord(of line: String) -> String {
        let breaks: Set<Character> = [" ", "\t", "\"", "'", "(", ")", ",", "=", "<", ">", "!", "{", "}"]
        return String(line.reversed().prefix { !breaks.contains($0) }.reversed())
    }

    private static func handleNames(_ handles: [ManagedObject]) -> [String] {
        handles.indices.map { "$\($0 + 1)" }
    }

    private static func handleCompletions(_ word: String, model: ManagedObjectModel, handles: [ManagedObject]) -> [String] {
        guard let dot = word.firstIndex(of: ".") else { return handleNames(handles) }
        guard let n = Int(word[word.index(after: word.startIndex)..<dot]), n >= 1, n <= handles.count else { return [] }
        let prefix = String(word[...dot])
        return keyPaths(String(word[word.index(after: dot)...]), from: handles[n - 1].entity, model: model).map { prefix + $0 }
    }

    /// Key paths from an entity that extend `partial`: the properties after its last dot,
    /// following relationships for the part before it.
    static func keyPaths(_ partial: String, from entity: EntityDescription, model: ManagedObjectModel) -> [String] {
        var components = partial.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        components.removeLast()
        var current = entity
        for component in components {
            guard let relationship = current.relationship(named: component), let next = model.entity(named: relationship.destinationEntityName) else { return [] }
            current = next
        }
        let base = components.isEmpty ? "" : components.joined(separator: ".") + "."
        return (current.attributes.map(\.name) + current.relationships.map(\.name)).sorted().map { base + $0 }
    }
}

extension Shell {
    /// The completions of the last word of `line` (what Tab offers at the prompt).
    public func completions(for line: String) -> [String] {
        Completer.completions(line: line, model: coordinator.model, handles: session.handles)
    }
}
