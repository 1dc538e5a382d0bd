import Faultline
import FaultlineModel
import FaultlinePredicate
import FaultlineSQL
import Foundation

/// The object commands: `fetch`, `count`, `$N…`, `show`, `explain fetch`, `refresh`.
extension Shell {
    func request(for command: FetchCommand) throws -> FetchRequest {
        guard session.model.entity(named: command.entity) != nil else {
            throw ShellError("entity \(command.entity) not found in the model; entities: \(session.model.entities.map(\.name).joined(separator: ", "))")
        }
        var request = FetchRequest(entityName: command.entity)
        if let text = command.predicate, let entity = session.model.entity(named: command.entity) {
            request.predicate = try parsePredicate(text, for: entity)
        }
        request.sortDescriptors = command.sort.map {
            FLSortDescriptor(key: $0.keyPath, ascending: $0.ascending, comparator: $0.selector.flatMap(FLSortDescriptor.Comparator.init(rawValue:)) ?? .compare)
        }
        request.fetchLimit = command.limit ?? 0
        request.fetchOffset = command.offset ?? 0
        request.fetchBatchSize = command.batch ?? 0
        request.relationshipKeyPathsForPrefetching = command.prefetch
        return request
    }

    /// Parses an NSPredicate format string; a syntax error shows the command line with a
    /// caret under the column where parsing stopped. Strings compared with Date, UUID and URI
    /// attributes of `entity` are read as those types (people type dates as the shell prints
    /// them: `date > "2026-11-05T00:00:00Z"`).
    func parsePredicate(_ text: String, for entity: EntityDescription) throws -> FLPredicate {
        do {
            let (format, arguments) = try bindingObjectReferences(in: text)
            return try FLPredicate(format: format, arguments: arguments).convertingStringLiterals(for: entity, in: session.model)
        } catch let error as PredicateSQLError {
            throw ShellError(error.message)
        } catch let error as PredicateSyntaxError {
            var message = error.description
            if let line = currentLine, let range = line.range(of: text) {
                let offset = line.distance(from: line.startIndex, to: range.lowerBound) + max(error.column - 1, 0)
                message += "\n  " + line + "\n  " + String(repeating: " ", count: offset) + "^"
            }
            throw ShellError(message)
        }
    }

    func fetch(_ command: FetchCommand) throws {
        guard let entity = session.model.entity(named: command.entity) else {
            _ = try request(for: command)  // throws the unknown-entity error
            return
        }
        statistics.fetchedEntity = entity
        for key in command.show { try checkKeyPath(key, from: entity) }
        let objects = try context.fetch(request(for: command))
        try printObjects(Array(objects), entity: entity, keys: command.show)
    }

    func count(_ command: FetchCommand) throws {
        let n = try context.count(for: request(for: command))
        results.write(String(n))
    }

    /// Prints objects as a numbered table, giving each a handle (the rows first, then the
    /// objects their values name). Without `keys`, the columns are the entity's stored
    /// attributes, then its to-one relationships, as many as fit the width; a fetch of an
    /// entity with sub-entities shows each row's entity.
    func printObjects(_ objects: [ManagedObject], entity: EntityDescription, keys: [String] = []) throws {
        let chosen = !keys.isEmpty
        let keys = chosen ? keys : Shell.defaultKeys(for: entity)
        let showsEntity = !entity.subentityNames.isEmpty
        let handles = objects.map { handle(for: $0) }
        var rows: [[Cell]] = []
        rows.reserveCapacity(objects.count)
        for (object, handle) in zip(objects, handles) {
            var row: [Cell] = [.reference("$\(handle)")]
            if showsEntity { row.append(.text(object.entity.name)) }
            for key in keys { row.append(cell(try object.value(forKeyPath: key, visiting: Shell.keyPathObjectLimit))) }
            rows.append(row)
        }
        var table = ResultTable(headers: ["#"] + (showsEntity ? ["entity"] : []) + keys, rows: rows)
        table.hasHandleColumn = true
        table.mayLeaveOutColumns = !chosen
        printTable(table)
    }

    static func defaultKeys(for entity: EntityDescription) -> [String] {
        entity.attributes.filter { !$0.isTransient }.map(\.name) + entity.relationships.filter(\.isToOne).map(\.name)
    }

    /// `$3`, `$3.key`, `$3.rel.key`, `$3.rel where PREDICATE` (the predicate is evaluated in
    /// memory over the related objects, as `NSSet.filtered(using:)`).
    func evaluate(_ text: String) throws {
        let parts = FetchCommand.splitClauses(text)
        guard let head = parts.first?.text.trimmingCharacters(in: .whitespaces) else { return }
        var filterText: String?
        for part in parts.dropFirst() {
            guard part.keyword == "where" else { throw ShellError("only 'where' may follow a key path, as in: $1.inventories where count > 1") }
            filterText = part.text.trimmingCharacters(in: .whitespaces)
        }
        // Parsed first (a syntax error comes before any fault fires), then read against the
        // destination entity once it is known.
        var filter = try filterText.map { text in
            let (format, arguments) = try bindingObjectReferences(in: text)
            return try FLPredicate(format: format, arguments: arguments)
        }
        let (object, keyPath) = try resolveHandle(head)
        if filter != nil && keyPath == nil { throw ShellError("'where' filters a to-many key path, as in: $1.inventories where count > 1") }
        guard let keyPath else {
            results.write(reference(to: object) + " " + object.description)
            return
        }
        let value = try object.value(forKeyPath: keyPath, visiting: Shell.keyPathObjectLimit)
        if let destination = value as? ManagedObject {
            let handle = self.handle(for: destination)
            results.write("$\(handle) \(destination.description)")
            return
        }
        if let objects = value as? [ManagedObject], let destination = objects.first?.entity ?? destinationEntity(ofKeyPath: keyPath, from: object.entity) {
            if let text = filterText { filter = try parsePredicate(text, for: destination) }
            let shown = try filter.map { predicate in try objects.filter { try predicate.evaluate(with: $0) } } ?? objects
            try printObjects(shown, entity: destination)
            return
        }
        if filter != nil { throw ShellError("'where' filters a to-many key path; \(keyPath) is not one") }
        if let values = value as? [Any?] {
            printTable(ResultTable(headers: [keyPath], rows: values.map { [cell($0)] }))
            return
        }
        results.write(cell(value).display)
    }

    /// The object of `$N` and the key path after it, checked against the model.
    func resolveHandle(_ text: String) throws -> (ManagedObject, String?) {
        let parts = text.split(separator: ".", maxSplits: 1).map(String.init)
        let object = try object(named: parts.first ?? text)
        guard parts.count > 1 else { return (object, nil) }
        try checkKeyPath(parts[1], from: object.entity)
        return (object, parts[1])
    }

    /// The object a handle (`$3`) or a pasted object URI (`x-coredata://<store>/Recipe/p3`,
    /// as the log and JSON output print them) names; a URI's object gets a handle.
    func object(named name: String) throws -> ManagedObject {
        if name.hasPrefix("x-coredata:") {
            let object = try object(forURI: name)
            _ = handle(for: object)
            return object
        }
        guard name.hasPrefix("$"), let n = Int(name.dropFirst()) else {
            throw ShellError("expected a handle such as $1 or an object URI such as x-coredata://\(coordinator.store.identifier)/\(session.model.entities.first?.name ?? "Entity")/p1, found \"\(name)\"")
        }
        guard n >= 1, n <= session.handles.count else {
            throw ShellError(session.handles.isEmpty
                ? "no object \(name); fetch objects first, they get handles $1, $2, …"
                : "no object \(name); handles are $1 to $\(session.handles.count)")
        }
        return session.handles[n - 1]
    }

    /// The object of an object URI of the open store: a stored one (`…/Recipe/p3`, checked to
    /// exist), or a new one this session holds (`x-coredata:///Recipe/t…`).
    func object(forURI uri: String) throws -> ManagedObject {
        let body = uri.dropFirst("x-coredata://".count)
        let parts = body.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard uri.hasPrefix("x-coredata://"), parts.count == 3 else {
            throw ShellError("\(uri) is not an object URI such as x-coredata://\(coordinator.store.identifier)/Entity/p1")
        }
        let (store, entityName, key) = (parts[0], parts[1], parts[2])
        if store.isEmpty, key.hasPrefix("t") {
            guard let object = context.registeredObjects.values.first(where: { $0.objectID.uriRepresentation == uri }) else {
                throw ShellError("\(uri): no new object of this session has that temporary ID")
            }
            return object
        }
        guard store.caseInsensitiveCompare(coordinator.store.identifier) == .orderedSame else {
            throw ShellError("\(uri) names an object of another store (\(store)); this store is \(coordinator.store.identifier)")
        }
        guard session.model.entity(named: entityName) != nil else {
            throw ShellError("\(uri): entity \(entityName) not found in the model; entities: \(session.model.entities.map(\.name).joined(separator: ", "))")
        }
        guard key.hasPrefix("p"), let primaryKey = Int64(key.dropFirst()), primaryKey > 0 else {
            throw ShellError("\(uri): \(key) is not a primary key such as p3")
        }
        let id = ManagedObjectID(entityName: entityName, storeIdentifier: coordinator.store.identifier, primaryKey: primaryKey)
        guard let object = try? context.existingObject(with: id) else {
            throw ShellError("\(uri): the store has no \(entityName) with primary key \(primaryKey)")
        }
        return object
    }

    /// Handles (`$3`) and pasted object URIs written in a predicate, outside string literals,
    /// become `%@` arguments bound to their objects: `recipe == $1`, `self IN {$1, $2}`.
    /// A text that has `%` arguments of its own is left alone (the shell has none to give).
    func bindingObjectReferences(in text: String) throws -> (String, [Any?]) {
        let chars = Array(text)
        var quote: Character?
        var escaped = false
        for c in chars {
            if let q = quote {
                if escaped { escaped = false } else if c == "\\" { escaped = true } else if c == q { quote = nil }
            } else if c == "\"" || c == "'" {
                quote = c
            } else if c == "%" {
                return (text, [])
            }
        }
        var out = ""
        var arguments: [Any?] = []
        var i = 0
        quote = nil
        escaped = false
        func startsToken(_ i: Int) -> Bool { i == 0 || !(chars[i - 1].isLetter || chars[i - 1].isNumber || chars[i - 1] == "_" || chars[i - 1] == "$") }
        while i < chars.count {
            let c = chars[i]
            if let q = quote {
                if escaped { escaped = false } else if c == "\\" { escaped = true } else if c == q { quote = nil }
                out.append(c)
                i += 1
                continue
            }
            if c == "\"" || c == "'" { quote = c }
            if c == "$", startsToken(i), i + 1 < chars.count, chars[i + 1].isASCII, chars[i + 1].isNumber {
                var j = i + 1
                while j < chars.count, chars[j].isASCII, chars[j].isNumber { j += 1 }
                if j == chars.count || !(chars[j].isLetter || chars[j] == "_") {
                    arguments.append(try object(named: String(chars[i..<j])))
                    out += "%@"
                    i = j
                    continue
                }
            }
            if c == "x", startsToken(i), String(chars[i..<min(i + 11, chars.count)]) == "x-coredata:" {
                var j = i
                while j < chars.count, !(chars[j].isWhitespace || ",)}".contains(chars[j])) { j += 1 }
                arguments.append(try object(named: String(chars[i..<j])))
                out += "%@"
                i = j
                continue
            }
            out.append(c)
            i += 1
        }
        return (out, arguments)
    }

    /// `show $3`: every attribute, and every relationship with its fault state.
    func show(_ rest: String) throws {
        if rest.contains(".") || rest.lowercased().contains(" where ") {
            try evaluate(rest)
            return
        }
        let (object, _) = try resolveHandle(rest)
        let wasFault = object.isFault
        var rows: [[Cell]] = []
        for attribute in object.entity.attributes {
            var kind = attribute.attributeType.xmlName
            if attribute.isTransient { kind += ", transient" }
            rows.append([.text(attribute.name), .text(kind), cell(object.value(forKey: attribute.name))])
        }
        for relationship in object.entity.relationships {
            let arrow = relationship.isToMany ? "to-many \(relationship.destinationEntityName)" : "to-one \(relationship.destinationEntityName)"
            if relationship.isToMany {
                if object.hasFault(forRelationshipNamed: relationship.name) {
                    rows.append([.text(relationship.name), .text(arrow + ", fault"), .fault])
                } else {
                    let ids = object.objectIDs(forRelationshipNamed: relationship.name)
                    rows.append([.text(relationship.name), .text(arrow + ", \(ids.count) \(ids.count == 1 ? "object" : "objects")"), .list(ids.map { cell(context.object(with: $0)) })])
                }
            } else if let id = object.objectIDs(forRelationshipNamed: relationship.name).first {
                let destination = context.object(with: id)
                rows.append([.text(relationship.name), .text(arrow + (destination.isFault ? ", fault" : "")), cell(destination)])
            } else {
                rows.append([.text(relationship.name), .text(arrow), .null])
            }
        }
        results.write("\(reference(to: object)) \(object.objectID.uriRepresentation)\(wasFault ? " (was a fault; fired now)" : "")")
        printTable(ResultTable(headers: ["property", "type", "value"], rows: rows), noun: "property", plural: "properties")
    }

    /// `explain fetch …`: the SQL, its bound values and SQLite's query plan, with a hint when
    /// the plan scans a whole table to filter or sort it.
    func explain(_ rest: String) throws {
        let (word, fetchText) = Shell.splitFirstWord(rest)
        guard word.lowercased() == "fetch" || word.lowercased() == "count" else {
            throw ShellError("explain works on a fetch, as in: explain fetch Inventory sort by date")
        }
        let request = try ValuesCommand.parse(fetchText, examples: examples).map { try self.request(for: $0) }
            ?? self.request(for: FetchCommand.parse(fetchText, examples: examples))
        let store = coordinator.store
        let (sql, arguments) = try store.sqlForFetch(request)
        results.write("sql: \(sql)")
        for (i, value) in arguments.enumerated() { results.write("bind[\(i)] = \(value)") }
        let plan = try store.queryPlan(sql, arguments)
        results.write("query plan:")
        for line in plan { results.write("  " + line) }
        for hint in Shell.planHints(plan, request: request) { results.write("hint: " + hint) }
    }

    static func planHints(_ plan: [String], request: FetchRequest) -> [String] {
        var hints: [String] = []
        if plan.contains(where: { $0.hasPrefix("SCAN t0") }) && request.fetchLimit == 0 {
            hints.append("SQLite reads every row of the table (SCAN t0); a predicate on an indexed attribute (Indexed in the model, or a fetch index) would let it seek instead")
        }
        if plan.contains(where: { $0.contains("USE TEMP B-TREE FOR ORDER BY") }) {
            let keys = request.sortDescriptors.map(\.key).joined(separator: ", ")
            hints.append("the sort (\(keys)) is done in a temporary b-tree after reading the rows; an index on the sort keys would give them in order")
        }
        return hints
    }

    /// `refresh $3`: turns the object back into a fault.
    func refresh(_ rest: String) throws {
        let (object, keyPath) = try resolveHandle(rest)
        guard keyPath == nil else { throw ShellError("refresh takes an object, as in: refresh $3") }
        if object.isInaccessible {
            results.write("\(reference(to: object)) has no row in the store (another writer deleted it): nothing to refresh")
            return
        }
        if object.hasChanges {
            try confirmLosingChanges("refresh \(rest)", summary: "\(reference(to: object)) is \(object.isInserted ? "new" : object.isDeleted ? "deleted" : "changed")")
        }
        context.refresh(object, mergeChanges: false)
        results.write("\(reference(to: object)) is a fault again")
    }

    /// Checks each step of a key path against the model, in Core Data's words; collection
    /// operators (`@count`, `@sum.KEY`, …) may follow a to-many relationship.
    func checkKeyPath(_ keyPath: String, from entity: EntityDescription) throws {
        var current: EntityDescription? = entity
        var throughToMany = false
        let keys = keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        for (index, key) in keys.enumerated() {
            if key.hasPrefix("@") {
                guard let op = FLCollectionOperator(rawValue: key) else {
                    throw ShellError("keypath \(keyPath): unknown collection operator \(key); operators are \(FLCollectionOperator.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                guard throughToMany else {
                    throw ShellError("keypath \(keyPath): \(key) needs a to-many relationship before it, as in \(examples.toMany ?? "items").\(key)")
                }
                if !op.takesKeyPath, index != keys.count - 1 { throw ShellError("keypath \(keyPath): \(key) ends a key path") }
                if op == .count || op == .sum || op == .avg || op == .min || op == .max { throughToMany = false }
                continue
            }
            guard let e = current else {
                throw ShellError("keypath \(keyPath): \(key) follows an attribute")
            }
            if let relationship = e.relationship(named: key) {
                current = session.model.entity(named: relationship.destinationEntityName)
                if relationship.isToMany { throughToMany = true }
            } else if e.attribute(named: key) != nil {
                current = nil
            } else {
                throw ShellError("keypath \(key) not found in entity \(e.name)")
            }
        }
    }

    func destinationEntity(ofKeyPath keyPath: String, from entity: EntityDescription) -> EntityDescription? {
        var current: EntityDescription? = entity
        for key in keyPath.split(separator: ".") {
            current = current?.relationship(named: String(key)).flatMap { session.model.entity(named: $0.destinationEntityName) }
        }
        return current
    }

    /// The handle number of an object, giving it the next one when it has none.
    func handle(for object: ManagedObject) -> Int {
        if let n = session.handleByID[object.objectID] { return n }
        session.handles.append(object)
        session.handleByID[object.objectID] = session.handles.count
        return session.handles.count
    }

    /// Objects in a stable order: those with handles by handle, then the others by entity and
    /// primary key (so handles given while listing them come out the same every time).
    func ordered(_ objects: some Sequence<ManagedObject>) -> [ManagedObject] {
        objects.sorted { a, b in
            let (x, y) = (session.handleByID[a.objectID] ?? .max, session.handleByID[b.objectID] ?? .max)
            if x != y { return x < y }
            if a.entity.name != b.entity.name { return a.entity.name < b.entity.name }
            if a.objectID.primaryKey != b.objectID.primaryKey { return a.objectID.primaryKey < b.objectID.primaryKey }
            return a.objectID.uriRepresentation < b.objectID.uriRepresentation
        }
    }

    /// How an object is referred to: its handle, given now when it has none.
    func reference(to object: ManagedObject) -> String {
        "$\(handle(for: object))"
    }

    /// A value as a typed cell: objects with handles and URIs, to-many values as lists,
    /// bytes as bytes; never Swift's own spelling of a value (`Optional(…)`, `[…]`).
    func cell(_ value: Any?) -> Cell {
        cell(value, depth: 0)
    }

    private func cell(_ value: Any?, depth: Int) -> Cell {
        guard let value else { return .null }
        // A value nested deeper than this (a Transformable archive of arrays in arrays) is
        // shown as its text.
        guard depth < FLNestingDepth.maximum else { return .text(String(describing: value)) }
        let mirror = Mirror(reflecting: value)
        if mirror.displayStyle == .optional {
            return mirror.children.first.map { cell($0.value, depth: depth + 1) } ?? .null
        }
        switch value {
        case let object as ManagedObject: return .object(handle: reference(to: object), uri: object.objectID.uriRepresentation)
        case let b as Bool: return .bool(b)
        case let i as Int: return .integer(Int64(i))
        case let i as Int16: return .integer(Int64(i))
        case let i as Int32: return .integer(Int64(i))
        case let i as Int64: return .integer(i)
        case let d as Double: return .real(d)
        case let f as Float: return .real(Double(f))
        case let d as Decimal: return .decimal(NSDecimalNumber(decimal: d).stringValue)
        case let date as Date: return .text(Shell.format(date))
        case let data as Data: return .binary(data)
        case let uuid as UUID: return .text(uuid.uuidString)
        case let url as URL: return .text(url.absoluteString)
        case let string as String: return .text(string)
        case let id as ManagedObjectID: return .object(handle: reference(to: context.object(with: id)), uri: id.uriRepresentation)
        case let objects as [ManagedObject]: return .list(objects.map { cell($0, depth: depth + 1) })
        case let values as [Any?]: return .list(values.map { cell($0, depth: depth + 1) })
        case let dictionary as [String: Any?]:
            return .map(dictionary.keys.sorted().map { Cell.Entry(key: $0, value: cell(dictionary[$0] ?? nil, depth: depth + 1)) })
        case let set as Set<AnyHashable>: return .list(set.map { cell($0.base, depth: depth + 1) }.sorted { $0.display < $1.display })
        case let number as NSNumber: return .real(number.doubleValue)
        default: return .text(String(describing: value))
        }
    }

    /// A date in ISO 8601, UTC, with fractions of a second only when it has them.
    static func format(_ date: Date) -> String {
        let seconds = date.timeIntervalSince1970
        let whole = seconds.rounded(.down)
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = whole == seconds ? [.withInternetDateTime] : [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }
}
