import Faultline
import FaultlineModel
import FaultlinePredicate
import Foundation

/// The forms of `fetch` beyond objects:
///
/// - `fetch Entity ids [where …] [sort by …] [limit N]`: object IDs (handles, no values), with
///   Core Data's keys-only SELECT (`SELECT 0, t0.Z_PK FROM …`);
/// - `fetch Entity [where …] values KEYPATH|FUNC(KEYPATH) [as NAME], … [group by KEYPATH, …]
///   [having PREDICATE] [distinct] [sort by …] [limit N] [batch N]`: dictionaries, one row each
///   (`fetch Recipe values type.name as type, count(name), average(prepTime) group by type.name`);
///   FUNC is `count`, `sum`, `min`, `max`, `average` (or `avg`); `count(*)` counts objects; a
///   value without `as` is named by its key path, or by its function (`count`, then
///   `count_name` if that is taken); `having` names values by `$NAME` or as written
///   (`having count(name) > 1`);
/// - `fetch Entity … properties KEY, …`: managed objects fetched with only those properties.
struct ValuesCommand {
    enum Kind: Equatable {
        case ids, values, properties
    }

    /// One value of `values`: what was written, its expression and its name.
    struct Value {
        var text: String
        var property: FetchProperty
        var name: String
    }

    var kind: Kind
    var fetch: FetchCommand
    var values: [Value] = []
    var groupBy: [String] = []
    var having: String?
    var distinct = false
    var properties: [String] = []

    /// The words that start this command's clauses, after the fetch's own.
    static let keywords = ["ids", "values", "group by", "having", "distinct", "properties"]
    /// Function names and Core Data's selectors.
    static let functions = ["count": "count:", "sum": "sum:", "min": "min:", "max": "max:", "average": "average:", "avg": "average:"]

    /// Parses the text after `fetch `; nil when it has none of ``keywords`` (a plain fetch).
    static func parse(_ text: String, examples: Examples) throws -> ValuesCommand? {
        let parts = FetchCommand.splitClauses(text, keywords: FetchCommand.clauses + keywords)
        guard parts.contains(where: { keywords.contains($0.keyword ?? "") }) else { return nil }
        var base = parts.first?.text ?? ""
        var kinds: [Kind] = []
        var command = ValuesCommand(kind: .values, fetch: FetchCommand(entity: ""))
        var valuesText: String?
        for part in parts.dropFirst() {
            let body = part.text.trimmingCharacters(in: .whitespaces)
            switch part.keyword {
            case "ids":
                guard body.isEmpty else { throw ShellError("'ids' stands alone, as in: fetch \(examples.entity) ids where \(examples.key) != nil") }
                kinds.append(.ids)
            case "distinct":
                guard body.isEmpty else { throw ShellError("'distinct' stands alone, after the values, as in: fetch \(examples.entity) values \(examples.key) distinct") }
                command.distinct = true
            case "values":
                guard !body.isEmpty else { throw ShellError("'values' needs key paths or functions, as in: values \(examples.key), count(\(examples.key))") }
                kinds.append(.values)
                valuesText = body
            case "group by":
                command.groupBy = splitList(body)
                guard !command.groupBy.isEmpty else { throw ShellError("'group by' needs key paths, as in: group by \(examples.key)") }
            case "having":
                guard !body.isEmpty else { throw ShellError("'having' needs a predicate, as in: having count > 1") }
                command.having = body
            case "properties":
                command.properties = splitList(body)
                guard !command.properties.isEmpty else { throw ShellError("'properties' needs keys, as in: properties \(examples.key)") }
                kinds.append(.properties)
            case let keyword?:
                base += " \(keyword) \(part.text)"
            case nil:
                break
            }
        }
        guard kinds.count == 1, let kind = kinds.first else {
            throw ShellError("a fetch returns one kind of result: 'ids', 'values …' or 'properties …', not \(kinds.map { "'\($0)'" }.joined(separator: " and "))")
        }
        command.kind = kind
        command.fetch = try FetchCommand.parse(base, examples: examples)
        if kind != .values, command.distinct || !command.groupBy.isEmpty || command.having != nil {
            throw ShellError("'group by', 'having' and 'distinct' work on values, as in: fetch \(examples.entity) values \(examples.key), count(\(examples.key)) group by \(examples.key)")
        }
        if command.having != nil && command.groupBy.isEmpty {
            throw ShellError("'having' filters groups: add 'group by KEYPATH'")
        }
        if !command.fetch.show.isEmpty && kind != .properties {
            throw ShellError("'show' picks the columns of objects; values are their own columns")
        }
        if let valuesText { command.values = try parseValues(valuesText) }
        return command
    }

    /// Splits a comma list outside quotes and parentheses.
    static func splitList(_ text: String) -> [String] {
        var items: [String] = []
        var current = ""
        var depth = 0
        var quote: Character?
        for c in text {
            if let q = quote {
                current.append(c)
                if c == q { quote = nil }
                continue
            }
            switch c {
            case "\"", "'": quote = c
            case "(", "{": depth += 1
            case ")", "}": depth -= 1
            case "," where depth == 0:
                items.append(current.trimmingCharacters(in: .whitespaces))
                current = ""
                continue
            default: break
            }
            current.append(c)
        }
        items.append(current.trimmingCharacters(in: .whitespaces))
        return items.filter { !$0.isEmpty }
    }

    /// `KEYPATH|FUNC(ARG) [as NAME]`, comma-separated.
    static func parseValues(_ text: String) throws -> [Value] {
        var values: [Value] = []
        var names: Set<String> = []
        for item in splitList(text) {
            var expressionText = item
            var name: String?
            if let range = item.range(of: " as ", options: [.caseInsensitive, .backwards]) {
                expressionText = String(item[..<range.lowerBound]).trimmingCharacters(in: .whitespaces)
                name = String(item[range.upperBound...]).trimmingCharacters(in: .whitespaces)
                guard let n = name, !n.isEmpty, n.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) else {
                    throw ShellError("a name after 'as' is one word of letters, digits and _, found \"\(name ?? "")\" in \(item)")
                }
            }
            var value = try parseValue(expressionText)
            if let name {
                value.name = name
            } else if case .expression = value.property, names.contains(value.name) {
                value.name += "_" + (argumentText(expressionText) ?? "").replacingOccurrences(of: ".", with: "_")
            }
            guard names.insert(value.name).inserted else { throw ShellError("two values are named \(value.name); name one with 'as NAME'") }
            if case .expression(var description) = value.property {
                description.name = value.name
                value.property = .expression(description)
            } else if name != nil, case .keyPath(let path) = value.property {
                value.property = .expression(ExpressionDescription(name: value.name, expression: .keyPath(path)))
            }
            values.append(value)
        }
        return values
    }

    /// `names` standing alone in a predicate (outside quotes, not after `$` or `.`, not
    /// before `.` or `(`) get a `$`: `n > 1` → `$n > 1`.
    static func markingVariables(_ names: Set<String>, in text: String) -> String {
        guard !names.isEmpty else { return text }
        let chars = Array(text)
        var out = ""
        var i = 0
        var quote: Character?
        func isWord(_ c: Character) -> Bool { c.isLetter || c.isNumber || c == "_" }
        while i < chars.count {
            let c = chars[i]
            if let q = quote {
                out.append(c)
                if c == "\\", i + 1 < chars.count { out.append(chars[i + 1]); i += 2; continue }
                if c == q { quote = nil }
                i += 1
                continue
            }
            if c == "\"" || c == "'" { quote = c; out.append(c); i += 1; continue }
            if isWord(c) {
                var j = i
                while j < chars.count, isWord(chars[j]) { j += 1 }
                let word = String(chars[i..<j])
                let before = i > 0 ? chars[i - 1] : " "
                let after = j < chars.count ? chars[j] : " "
                if names.contains(word), before != "$", before != ".", after != ".", after != "(" { out.append("$") }
                out += word
                i = j
                continue
            }
            out.append(c)
            i += 1
        }
        return out
    }

    /// The text inside `FUNC(…)`, or nil.
    static func argumentText(_ text: String) -> String? {
        guard let open = text.firstIndex(of: "("), text.hasSuffix(")") else { return nil }
        return String(text[text.index(after: open)..<text.index(before: text.endIndex)]).trimmingCharacters(in: .whitespaces)
    }

    static func parseValue(_ text: String) throws -> Value {
        if let open = text.firstIndex(of: "("), let argument = argumentText(text) {
            let function = String(text[..<open]).trimmingCharacters(in: .whitespaces).lowercased()
            guard let selector = functions[function] else {
                throw ShellError("unknown function \(function)( in \(text); the store computes count, sum, min, max and average")
            }
            let expression: FLExpression
            if argument == "*" {
                expression = .evaluatedObject
            } else {
                do {
                    expression = try FLExpression(format: argument)
                } catch let error as PredicateSyntaxError {
                    throw ShellError("\(text): \(error.description)")
                }
            }
            let type: AttributeType = function == "count" ? .integer64 : .undefined
            return Value(text: text, property: .expression(ExpressionDescription(name: function == "avg" ? "average" : function,
                expression: .function(selector, [expression]), expressionResultType: type)), name: function == "avg" ? "average" : function)
        }
        guard !text.isEmpty, text.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "." || $0 == "@" }) else {
            throw ShellError("expected a key path or FUNC(KEYPATH) in values, found \"\(text)\"")
        }
        return Value(text: text, property: .keyPath(text), name: text)
    }
}

extension Shell {
    /// `fetch …` of any result: objects (the plain form), or ``ValuesCommand``'s forms.
    func fetchAnyResult(_ text: String) throws {
        guard let command = try ValuesCommand.parse(text, examples: examples) else {
            return try fetch(FetchCommand.parse(text, examples: examples))
        }
        guard let entity = session.model.entity(named: command.fetch.entity) else {
            _ = try request(for: command.fetch)  // throws the unknown-entity error
            return
        }
        statistics.fetchedEntity = entity
        let request = try request(for: command)
        switch command.kind {
        case .ids:
            let ids = try context.fetchObjectIDs(request)
            let rows: [[Cell]] = ids.map { id in
                let object = context.object(with: id)
                return [.reference("$\(handle(for: object))"), .text(id.uriRepresentation)]
            }
            var table = ResultTable(headers: ["#", "objectID"], rows: rows)
            table.hasHandleColumn = true
            printTable(table)
        case .properties:
            for key in command.fetch.show { try checkKeyPath(key, from: entity) }
            let objects = try context.fetch(request)
            try printObjects(Array(objects), entity: entity, keys: command.fetch.show.isEmpty ? command.properties : command.fetch.show)
        case .values:
            // With `batch N`, the keys first and each batch's values as the table reaches it.
            let rows = try context.fetchDictionaryBatches(request)
            let names = command.values.map(\.name)
            printTable(ResultTable(headers: names, rows: rows.map { row in names.map { cell(row[$0]) } }))
        }
    }

    /// The request of an `ids`, `values` or `properties` fetch (also for `explain fetch …`).
    func request(for command: ValuesCommand) throws -> FetchRequest {
        var request = try request(for: command.fetch)
        guard let entity = session.model.entity(named: command.fetch.entity) else { return request }
        switch command.kind {
        case .ids:
            request.resultType = .managedObjectID
            request.includesPropertyValues = false
        case .properties:
            for key in command.properties { try checkKeyPath(key, from: entity) }
            request.propertiesToFetch = command.properties.map(FetchProperty.keyPath)
        case .values:
            request.resultType = .dictionary
            request.propertiesToFetch = command.values.map { typed($0.property, in: entity) }
            request.returnsDistinctResults = command.distinct
            // A group named by a value's `as` name means that value's key path.
            let aliases = Dictionary(command.values.compactMap { value -> (String, String)? in
                if case .expression(let d) = value.property, case .keyPath(let path) = d.expression.node { return (value.name, path) }
                return nil
            }, uniquingKeysWith: { first, _ in first })
            if !command.groupBy.isEmpty { request.propertiesToGroupBy = command.groupBy.map { FetchProperty.keyPath(aliases[$0] ?? $0) } }
            request.sortDescriptors = request.sortDescriptors.map { sort in
                guard let path = aliases[sort.key] else { return sort }
                return FLSortDescriptor(key: path, ascending: sort.ascending, comparator: sort.comparator)
            }
            if var having = command.having {
                // `count(name) > 1` as written in the values means `$count > 1`.
                for value in command.values where value.text.contains("(") {
                    having = having.replacingOccurrences(of: value.text, with: "$" + value.name)
                }
                // And a computed value's name (`n > 1`) means `$n > 1`.
                let computed = Set(command.values.compactMap { value -> String? in
                    if case .expression(let d) = value.property, case .function = d.expression.node { return value.name }
                    return nil
                })
                having = ValuesCommand.markingVariables(computed, in: having)
                request.havingPredicate = try parsePredicate(having, for: entity)
            }
        }
        return request
    }

    /// An aggregate typed by what it reads: `min`/`max` keep the attribute's type (a date
    /// stays a date), `sum` of integers is an integer, `average` a double.
    func typed(_ property: FetchProperty, in entity: EntityDescription) -> FetchProperty {
        guard case .expression(var description) = property, description.expressionResultType == .undefined,
              case .function(let name, let arguments) = description.expression.node, arguments.count == 1 else { return property }
        var type: AttributeType?
        if case .keyPath(let path) = arguments[0].node {
            var current: EntityDescription? = entity
            let keys = path.split(separator: ".").map(String.init)
            for (i, key) in keys.enumerated() {
                guard let e = current else { break }
                if i == keys.count - 1 {
                    type = e.attribute(named: key)?.attributeType
                } else {
                    current = e.relationship(named: key).flatMap { session.model.entity(named: $0.destinationEntityName) }
                }
            }
        }
        switch name {
        case "min:", "max:": description.expressionResultType = type ?? .undefined
        case "sum:": description.expressionResultType = [.integer16, .integer32, .integer64].contains(type) ? .integer64 : (type == .decimal ? .decimal : .double)
        case "average:": description.expressionResultType = type == .decimal ? .decimal : .double
        default: break
        }
        return .expression(description)
    }
}
