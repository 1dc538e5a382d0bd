import Faultline
import FaultlineModel
import Foundation

/// The commands that change the object graph: `insert`, `set`, `add`, `remove`, `delete`,
/// `save`, `rollback`, `undo`, `redo`, `changes`.
extension Shell {
    /// A value typed in a command: a string, number, boolean, nil, date (a quoted ISO 8601
    /// string where the attribute is a Date) or a handle.
    enum TypedValue {
        case string(String)
        case integer(Int)
        case double(Double)
        case bool(Bool)
        case null
        case handle(String)
    }

    func runChangeCommand(_ command: String, _ rest: String) throws {
        let hadChanges = context.hasChanges
        defer { noteReadOnlyChange(hadChanges: hadChanges) }
        switch command {
        case "insert": try insert(rest)
        case "set": try set(rest)
        case "add": try addOrRemove(rest, adding: true)
        case "remove": try addOrRemove(rest, adding: false)
        case "delete":
            let (object, keyPath) = try resolveHandle(rest)
            guard keyPath == nil else { throw ShellError("delete takes an object, as in: delete $3") }
            context.delete(object)
            results.write("\(reference(to: object)) is deleted (written by the next save)")
        case "save": try save()
        case "rollback":
            context.rollback()
            results.write("rolled back: the context holds no unsaved changes")
        case "undo":
            guard context.canUndo else { throw ShellError("nothing to undo") }
            context.undo()
            results.write("undone")
        case "redo":
            guard context.canRedo else { throw ShellError("nothing to redo") }
            context.redo()
            results.write("redone")
        case "changes": try showChanges()
        default: throw ShellError("unknown command \"\(command)\"; try .help")
        }
    }

    /// `insert Entity key = value, …`.
    private func insert(_ rest: String) throws {
        let (entityName, assignments) = Shell.splitFirstWord(rest)
        guard !entityName.isEmpty else { throw ShellError("insert needs an entity, as in: insert \(examples.entity) \(examples.key) = \"Attic\"") }
        let object = try context.insertObject(entityName: entityName)
        do {
            for (key, text) in try Shell.assignments(assignments) {
                try assign(text, to: key, of: object)
            }
        } catch {
            context.delete(object)
            throw error
        }
        let handle = self.handle(for: object)
        results.write("$\(handle) \(object.description)")
    }

    /// `set $3.key = value`, `set $3.rel = $5`, `set $3.rel.key = value`.
    private func set(_ rest: String) throws {
        guard let equals = Shell.topLevelIndex(of: "=", in: rest) else {
            throw ShellError("set needs a key path and a value, as in: set $3.\(examples.key) = \"Attic\"")
        }
        let target = rest[..<equals].trimmingCharacters(in: .whitespaces)
        let text = rest[rest.index(after: equals)...].trimmingCharacters(in: .whitespaces)
        let (object, keyPath) = try resolveHandle(target)
        guard let keyPath else { throw ShellError("set needs a key after the handle, as in: set $3.\(examples.key) = \"Attic\"") }
        var components = keyPath.split(separator: ".").map(String.init)
        let key = components.removeLast()
        var owner = object
        for component in components {
            guard let next = owner.value(forKey: component) as? ManagedObject else {
                throw ShellError("\(target): \(component) is not a to-one relationship with an object")
            }
            owner = next
        }
        try assign(text, to: key, of: owner)
        results.write("\(reference(to: owner)).\(key) = \(cell(owner.value(forKey: key)).display)")
    }

    /// `add $5 to $3.rel`, `remove $5 from $3.rel`.
    private func addOrRemove(_ rest: String, adding: Bool) throws {
        let word = adding ? " to " : " from "
        guard let range = rest.range(of: word) else {
            throw ShellError(adding ? "add needs an object and a to-many, as in: add $5 to $3.inventories" : "remove needs an object and a to-many, as in: remove $5 from $3.inventories")
        }
        let (member, memberPath) = try resolveHandle(rest[..<range.lowerBound].trimmingCharacters(in: .whitespaces))
        guard memberPath == nil else { throw ShellError("\(adding ? "add" : "remove") takes an object, as in: \(adding ? "add $5 to $3.inventories" : "remove $5 from $3.inventories")") }
        let (owner, keyPath) = try resolveHandle(rest[range.upperBound...].trimmingCharacters(in: .whitespaces))
        guard let keyPath, !keyPath.contains(".") else { throw ShellError("name the to-many relationship of the object, as in: $3.inventories") }
        if adding {
            try owner.addObject(member, toRelationship: keyPath)
        } else {
            try owner.removeObject(member, fromRelationship: keyPath)
        }
        results.write("\(reference(to: owner)).\(keyPath) \(adding ? "now holds" : "no longer holds") \(reference(to: member))")
    }

    /// Sets one key from typed text, converting it for the attribute's type.
    private func assign(_ text: String, to key: String, of object: ManagedObject) throws {
        let value = try Shell.parseValue(text)
        if let relationship = object.entity.relationship(named: key) {
            switch value {
            case .null:
                guard relationship.isToOne else { throw ShellError("\(key) is a to-many relationship: use add and remove") }
                try object.setValue(nil, forKey: key)
            case .handle(let handle):
                guard relationship.isToOne else { throw ShellError("\(key) is a to-many relationship: use add \(handle) to \(reference(to: object)).\(key)") }
                let (destination, path) = try resolveHandle(handle)
                guard path == nil else { throw ShellError("\(key) needs an object such as $5") }
                try object.setValue(destination, forKey: key)
            default:
                throw ShellError("\(key) is a relationship: give an object such as $5, or nil")
            }
            return
        }
        guard let attribute = object.entity.attribute(named: key) else {
            throw ShellError("keypath \(key) not found in entity \(object.entity.name)")
        }
        let converted: Any?
        switch value {
        case .null: converted = nil
        case .integer(let i): converted = i
        case .double(let d): converted = d
        case .bool(let b): converted = b
        case .handle(let h): throw ShellError("\(key) is an attribute: \(h) is an object")
        case .string(let s):
            switch attribute.attributeType {
            case .date:
                // The reader predicates use: a day that does not exist (2026-02-30) is refused.
                guard let date = FLDateLiteral.parse(s) else {
                    throw ShellError("\(key) is a Date: write it as \"2026-11-22T10:00:00Z\" (ISO 8601)")
                }
                converted = date
            case .uuid:
                guard let uuid = UUID(uuidString: s) else { throw ShellError("\(key) is a UUID: \"\(s)\" is not one") }
                converted = uuid
            case .uri:
                guard let url = URL(string: s) else { throw ShellError("\(key) is a URI: \"\(s)\" is not one") }
                converted = url
            case .decimal:
                guard let decimal = Decimal(string: s, locale: Locale(identifier: "en_US_POSIX")) else { throw ShellError("\(key) is a Decimal: \"\(s)\" is not a number") }
                converted = decimal
            default:
                converted = s
            }
        }
        do {
            try object.setValue(converted, forKey: key)
        } catch let error as ManagedObjectError {
            throw ShellError(error.description)
        }
    }

    /// `save`: writes the changes in one transaction; handles keep pointing at the same
    /// objects, whose temporary IDs become permanent.
    private func save() throws {
        guard context.hasChanges else {
            results.write("nothing to save")
            return
        }
        // Delete rules are applied first (as the save would), so the counts and the list of
        // what they reached are what is written.
        try context.processPendingChanges()
        let inserted = context.insertedObjects.count, updated = context.updatedObjects.count, deleted = context.deletedObjects.count
        let effects = deleteRuleEffects()
        try context.save()
        session.handleByID = Dictionary(uniqueKeysWithValues: session.handles.enumerated().map { ($1.objectID, $0 + 1) })
        results.write("saved: \(inserted) inserted, \(updated) updated, \(deleted) deleted")
        if !effects.isEmpty {
            results.write("by delete rules:\n" + effects.map { "  \($0.object) \($0.effect)" }.joined(separator: "\n"))
        }
    }

    /// What the delete rules of the deleted objects reach, with the rule and relationship
    /// that reached each: destinations deleted by `Cascade`, and destinations whose inverse
    /// loses the deleted object by `Nullify`. Call after `processPendingChanges()`.
    func deleteRuleEffects() -> [(object: String, effect: String)] {
        var effects: [(object: String, effect: String)] = []
        var seen: Set<String> = []
        let deleted = ordered(context.deletedObjects)
        for source in deleted {
            let values = source.committedValues(forKeys: source.entity.relationships.map(\.name))
            for relationship in source.entity.relationships.sorted(by: { $0.name < $1.name }) where relationship.deleteRule == .cascade || relationship.deleteRule == .nullify {
                let destinations: [ManagedObject]
                switch values[relationship.name] ?? nil {
                case let object as ManagedObject: destinations = [object]
                case let objects as [ManagedObject]: destinations = objects
                default: destinations = []
                }
                let via = "\(source.entity.name).\(relationship.name) of \(reference(to: source))"
                for destination in ordered(destinations) {
                    let name = "\(reference(to: destination)) \(destination.entity.name)"
                    if relationship.deleteRule == .cascade, destination.isDeleted, seen.insert(name).inserted {
                        effects.append((name, "deleted (cascade: \(via))"))
                    } else if relationship.deleteRule == .nullify, !destination.isDeleted, let inverse = context.coordinator.model.inverse(of: relationship) {
                        effects.append((name, "loses it from \(inverse.name) (nullify: \(via))"))
                    }
                }
            }
        }
        return effects
    }

    /// `changes`: what the next save would write, delete rules applied (each object a rule
    /// reached says which rule, relationship and deleted object).
    func showChanges() throws {
        try context.processPendingChanges()
        var reasons: [String: String] = [:]
        for effect in deleteRuleEffects() { reasons[effect.object, default: ""] += (reasons[effect.object] == nil ? "" : "; ") + effect.effect }
        var rows: [[Cell]] = []
        func add(_ objects: Set<ManagedObject>, _ kind: String) {
            for object in ordered(objects) {
                let values = object.changedValues().keys.sorted().map { key -> String in
                    "\(key) = \(cell(object.changedValues()[key] ?? nil).display)"
                }
                let reason = object.isInaccessible
                    ? "its row is gone from the store (another writer deleted it): the save only forgets it"
                    : reasons["\(reference(to: object)) \(object.entity.name)"]
                let change = object.isInaccessible ? "row gone" : kind == "deleted" && reason != nil ? "deleted by a delete rule" : kind
                let detail = kind == "deleted" ? (reason ?? "") : ([reason].compactMap { $0 } + values).joined(separator: "; ")
                rows.append([cell(object), .text(change), .text(object.entity.name), .text(detail)])
            }
        }
        add(context.insertedObjects, "inserted")
        add(context.updatedObjects, "updated")
        add(context.deletedObjects, "deleted")
        if rows.isEmpty {
            results.write("no unsaved changes")
            return
        }
        printTable(ResultTable(headers: ["object", "change", "entity", "values"], rows: rows), noun: "change")
    }

    /// Before a command that would drop the unsaved changes (`.open`, `.write off`, `refresh`
    /// of a changed object): on a terminal the person is asked; in a script the command is
    /// refused, so nothing is lost without a word.
    func confirmLosingChanges(_ action: String, summary: String? = nil) throws {
        guard let summary = summary ?? unsavedChangesSummary else { return }
        if let confirm, confirm("There are unsaved changes (\(summary)). \(action) and lose them? [y/N] ") { return }
        throw ShellError("there are unsaved changes (\(summary)): \(action) would lose them; save them (\(coordinator.store.isReadOnly ? ".write on, then save" : "save")) or drop them (rollback) first")
    }

    /// After a change in a read-only session: says once that saving needs `.write on`.
    func noteReadOnlyChange(hadChanges: Bool) {
        guard !hadChanges, context.hasChanges, coordinator.store.isReadOnly else { return }
        logSink.write("faultline: note: this session is read-only; the change is kept, and saving it needs .write on (which keeps it)")
    }

    /// A line describing unsaved changes, or nil when there are none. Objects deleted because
    /// their row turned out gone (``ManagedObject/isInaccessible``) are not counted: no one
    /// made those changes here, and dropping them loses nothing.
    public var unsavedChangesSummary: String? {
        guard context.hasChanges else { return nil }
        let inserted = context.insertedObjects.count, updated = context.updatedObjects.count
        let deleted = context.deletedObjects.count { !$0.isInaccessible }
        if inserted + updated + deleted == 0 { return nil }
        return "\(inserted) inserted, \(updated) updated, \(deleted) deleted"
    }

    // MARK: Parsing

    /// `key = value, key = value` (commas inside quotes are part of the value).
    static func assignments(_ text: String) throws -> [(String, String)] {
        guard !text.trimmingCharacters(in: .whitespaces).isEmpty else { return [] }
        return try splitTopLevel(text, on: ",").map { part in
            guard let equals = topLevelIndex(of: "=", in: part) else {
                throw ShellError("expected key = value, found \"\(part.trimmingCharacters(in: .whitespaces))\"")
            }
            let key = part[..<equals].trimmingCharacters(in: .whitespaces)
            guard !key.isEmpty else { throw ShellError("expected a key before = in \"\(part.trimmingCharacters(in: .whitespaces))\"") }
            return (key, part[part.index(after: equals)...].trimmingCharacters(in: .whitespaces))
        }
    }

    /// Parses one typed value.
    static func parseValue(_ text: String) throws -> TypedValue {
        let t = text.trimmingCharacters(in: .whitespaces)
        guard let first = t.first else { throw ShellError("expected a value after =") }
        if first == "\"" || first == "'" {
            guard t.count >= 2, t.last == first else { throw ShellError("a string must end with \(first): \(t)") }
            var result = ""
            var escaped = false
            for c in t.dropFirst().dropLast() {
                if escaped {
                    switch c {
                    case "n": result.append("\n")
                    case "t": result.append("\t")
                    default: result.append(c)
                    }
                    escaped = false
                } else if c == "\\" {
                    escaped = true
                } else {
                    result.append(c)
                }
            }
            return .string(result)
        }
        switch t.lowercased() {
        case "nil", "null": return .null
        case "true", "yes": return .bool(true)
        case "false", "no": return .bool(false)
        default: break
        }
        if t.hasPrefix("$") || t.hasPrefix("x-coredata:") { return .handle(t) }
        if let i = Int(t) { return .integer(i) }
        if let d = Double(t) { return .double(d) }
        throw ShellError("cannot read the value \(t): write strings in quotes, numbers, true/false, nil, or a handle such as $3")
    }

    /// The parts of `text` between top-level `separator`s (outside quotes and brackets).
    static func splitTopLevel(_ text: String, on separator: Character) -> [String] {
        var parts: [String] = []
        var current = ""
        var quote: Character?
        var depth = 0
        for c in text {
            if let q = quote {
                current.append(c)
                if c == q { quote = nil }
                continue
            }
            switch c {
            case "\"", "'": quote = c
            case "(", "{", "[": depth += 1
            case ")", "}", "]": depth -= 1
            case separator where depth == 0:
                parts.append(current)
                current = ""
                continue
            default: break
            }
            current.append(c)
        }
        parts.append(current)
        return parts
    }

    /// The first top-level `character` (outside quotes), if any.
    static func topLevelIndex(of character: Character, in text: String) -> String.Index? {
        var quote: Character?
        for index in text.indices {
            let c = text[index]
            if let q = quote {
                if c == q { quote = nil }
            } else if c == "\"" || c == "'" {
                quote = c
            } else if c == character {
                return index
            }
        }
        return nil
    }
}
