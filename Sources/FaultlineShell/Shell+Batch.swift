import Faultline
import FaultlineModel
import FaultlinePredicate
import Foundation

/// The batch commands, which change the store straight in SQL (Core Data's batch requests)
/// and need a writable session:
///
/// - `delete all Entity [where PREDICATE]` (`BatchDeleteRequest`, delete rules applied);
/// - `update all Entity set key = value, … [where PREDICATE]` (`BatchUpdateRequest`; a
///   value is a constant or an expression over the row, such as `prepTime + 5`);
/// - `insert all Entity from FILE.json|FILE.csv [policy error|ignore|upsert]`
///   (`BatchInsertRequest`: a JSON array of objects, or a CSV file with a header row;
///   columns matched to attributes by name, values converted by type).
///
/// Each reports its counts; the session's context merges the changes (registered objects
/// are refreshed, deleted ones dropped).
extension Shell {
    /// Whether a line is a batch command (`delete all …`, `update all …`, `insert all …`).
    static func isBatchCommand(_ command: String, _ rest: String) -> Bool {
        guard ["delete", "update", "insert"].contains(command) else { return false }
        let (word, _) = splitFirstWord(rest)
        return word.lowercased() == "all" || command == "update"
    }

    /// Runs `delete all`, `update all` or `insert all`.
    func runBatchCommand(_ command: String, _ rest: String) throws {
        let (all, body) = Shell.splitFirstWord(rest)
        guard all.lowercased() == "all" else {
            throw ShellError("\(command) all changes the store directly, as in: \(command) all \(examples.entity)\(command == "update" ? " set \(examples.key) = \"x\"" : "")")
        }
        if coordinator.store.isReadOnly {
            throw ShellError("\(command) all writes to the store and this session is read-only: open it with --write, or run .write on")
        }
        let merged: SaveNotification?
        switch command {
        case "delete": merged = try batchDelete(body)
        case "update": merged = try batchUpdate(body)
        default: merged = try batchInsert(body)
        }
        if let merged { context.mergeChanges(fromContextDidSave: merged) }
    }

    /// The entity and predicate of `Entity [where PREDICATE]`; any other clause is refused.
    private func batchTarget(_ text: String, command: String) throws -> (String, FLPredicate?) {
        let parsed = try FetchCommand.parse(text, examples: examples)
        guard parsed.sort.isEmpty, parsed.limit == nil, parsed.offset == nil, parsed.batch == nil, parsed.prefetch.isEmpty, parsed.show.isEmpty else {
            throw ShellError("\(command) all takes an entity and an optional where clause only")
        }
        guard coordinator.model.entity(named: parsed.entity) != nil else {
            throw ShellError("entity \(parsed.entity) not found in the model; entities: \(coordinator.model.entities.map(\.name).joined(separator: ", "))")
        }
        return (parsed.entity, try parsed.predicate.map { try FLPredicate(format: $0) })
    }

    private func batchDelete(_ text: String) throws -> SaveNotification? {
        let (entity, predicate) = try batchTarget(text, command: "delete")
        var request = BatchDeleteRequest(entityName: entity, predicate: predicate)
        request.resultType = .count
        let count = try context.execute(request).count ?? 0
        let changes = context.lastBatchChanges
        let cascaded = (changes?.deletedObjectIDs.count ?? 0) - count
        let updated = changes?.updatedObjectIDs.count ?? 0
        var line = "deleted \(count) \(entity) object\(count == 1 ? "" : "s")"
        var extra: [String] = []
        if cascaded > 0 { extra.append("\(cascaded) more deleted") }
        if updated > 0 { extra.append("\(updated) updated") }
        if !extra.isEmpty { line += " (by delete rules: \(extra.joined(separator: ", ")))" }
        results.write(line)
        return changes
    }

    private func batchUpdate(_ text: String) throws -> SaveNotification? {
        // `Entity set a = 1, b = 2 where …`: the where clause is split off first.
        let parts = FetchCommand.splitClauses(text)
        guard let head = parts.first?.text else { throw ShellError("update all needs an entity") }
        let (entityName, setText) = Shell.splitFirstWord(head.trimmingCharacters(in: .whitespaces))
        let (setWord, assignmentText) = Shell.splitFirstWord(setText)
        guard !entityName.isEmpty, setWord.lowercased() == "set" else {
            throw ShellError("update all needs values, as in: update all \(examples.entity) set \(examples.key) = \"x\" where …")
        }
        let whereText = parts.dropFirst().map { ($0.keyword ?? "") + " " + $0.text }.joined(separator: " ")
        let (entity, predicate) = try batchTarget(entityName + " " + whereText, command: "update")
        guard let description = coordinator.model.entity(named: entity) else { throw ShellError("entity \(entity) not found in the model") }
        var request = BatchUpdateRequest(entityName: entity)
        request.predicate = predicate
        let assignments = try Shell.assignments(assignmentText)
        guard !assignments.isEmpty else { throw ShellError("update all needs at least one key = value") }
        for (key, valueText) in assignments {
            guard let attribute = description.attribute(named: key) else {
                if description.relationship(named: key) != nil { throw ShellError("\(entity).\(key) is a relationship: update all sets attributes only") }
                throw ShellError("keypath \(key) not found in entity \(entity)")
            }
            if let typed = try? Shell.parseValue(valueText), case .handle = typed {
                throw ShellError("\(entity).\(key): update all takes values, not objects")
            } else if let typed = try? Shell.parseValue(valueText) {
                try request.set(key, to: try Shell.batchValue(typed, for: attribute, entity: entity))
            } else {
                do {
                    request.propertiesToUpdate[key] = try FLExpression(format: valueText)
                } catch {
                    throw ShellError("\(entity).\(key): cannot read the value \(valueText): \(error)")
                }
            }
        }
        request.resultType = .count
        let count = try context.execute(request).count ?? 0
        results.write("updated \(count) \(entity) object\(count == 1 ? "" : "s")")
        return context.lastBatchChanges
    }

    private func batchInsert(_ text: String) throws -> SaveNotification? {
        let (entity, afterEntity) = Shell.splitFirstWord(text)
        let (fromWord, afterFrom) = Shell.splitFirstWord(afterEntity)
        guard !entity.isEmpty, fromWord.lowercased() == "from", !afterFrom.isEmpty else {
            throw ShellError("insert all needs a file, as in: insert all \(examples.entity) from rows.json [policy error|ignore|upsert]")
        }
        var path = afterFrom.trimmingCharacters(in: .whitespaces)
        var resolution = BatchInsertRequest.ConflictResolution.fail
        if let range = path.range(of: " policy ", options: [.caseInsensitive, .backwards]) {
            let name = path[range.upperBound...].trimmingCharacters(in: .whitespaces).lowercased()
            switch name {
            case "error": resolution = .fail
            case "ignore": resolution = .ignore
            case "upsert": resolution = .upsert
            default: throw ShellError("policy is error, ignore or upsert, not \(name)")
            }
            path = path[..<range.lowerBound].trimmingCharacters(in: .whitespaces)
        }
        if path.count >= 2, let first = path.first, first == "\"" || first == "'", path.last == first { path = String(path.dropFirst().dropLast()) }
        guard let description = coordinator.model.entity(named: entity) else {
            throw ShellError("entity \(entity) not found in the model; entities: \(coordinator.model.entities.map(\.name).joined(separator: ", "))")
        }
        let rows = try Shell.importRows(path: path, entity: description)
        var request = BatchInsertRequest(entityName: entity, objects: rows)
        request.conflictResolution = resolution
        request.resultType = .objectIDs
        do {
            _ = try context.execute(request)
        } catch let error as BatchRequestError {
            let row = error.row.map { " row \($0 + 1)" } ?? ""
            let column = error.key.map { ", column \($0)" } ?? ""
            throw ShellError("\(path)\(row)\(column): \(error.message)")
        }
        let changes = context.lastBatchChanges
        let inserted = changes?.insertedObjectIDs.count ?? 0, updated = changes?.updatedObjectIDs.count ?? 0
        let ignored = rows.count - inserted - updated
        results.write("inserted \(inserted) \(entity) object\(inserted == 1 ? "" : "s") from \(rows.count) row\(rows.count == 1 ? "" : "s")"
            + (updated > 0 ? ", updated \(updated)" : "") + (ignored > 0 ? ", ignored \(ignored) duplicate\(ignored == 1 ? "" : "s")" : ""))
        return changes
    }

    // MARK: Values

    /// A typed shell value converted for an attribute (strings become dates, UUIDs, URLs
    /// and decimals where the attribute wants them).
    static func batchValue(_ value: TypedValue, for attribute: AttributeDescription, entity: String) throws -> Any? {
        switch value {
        case .null: return nil
        case .integer(let i): return attribute.attributeType == .double || attribute.attributeType == .float ? Double(i) : i
        case .double(let d): return d
        case .bool(let b): return b
        case .handle(let h): throw ShellError("\(entity).\(attribute.name) is an attribute: \(h) is an object")
        case .string(let s): return try convertText(s, for: attribute, entity: entity, strict: false)
        }
    }

    /// Text (a CSV cell, a JSON string) converted for an attribute's type; `strict` also
    /// reads numbers and booleans from text (CSV cells are all text).
    static func convertText(_ s: String, for attribute: AttributeDescription, entity: String, strict: Bool) throws -> Any? {
        func fail(_ expected: String) -> ShellError { ShellError("\(attribute.name) is \(expected): \"\(s.prefix(40))\" is not one") }
        switch attribute.attributeType {
        case .date:
            guard let date = FLDateLiteral.parse(s) else { throw ShellError("\(attribute.name) is a Date: write it as \"2026-11-22T10:00:00Z\" (ISO 8601), not \"\(s.prefix(40))\"") }
            return date
        case .uuid:
            guard let uuid = UUID(uuidString: s) else { throw fail("a UUID") }
            return uuid
        case .uri:
            guard let url = URL(string: s) else { throw fail("a URI") }
            return url
        case .decimal:
            guard let decimal = Decimal(string: s, locale: Locale(identifier: "en_US_POSIX")) else { throw fail("a Decimal") }
            return decimal
        case .integer16 where strict, .integer32 where strict, .integer64 where strict:
            guard let i = Int(s.trimmingCharacters(in: .whitespaces)) else { throw fail("an integer") }
            return i
        case .double where strict, .float where strict:
            guard let d = Double(s.trimmingCharacters(in: .whitespaces)) else { throw fail("a number") }
            return d
        case .boolean where strict:
            switch s.lowercased() {
            case "true", "yes", "1": return true
            case "false", "no", "0": return false
            default: throw fail("a Bool (true or false)")
            }
        case .binaryData, .transformable:
            guard let data = Data(base64Encoded: s) else { throw fail("Data (write it in base64)") }
            return data
        default:
            return s
        }
    }

    /// The rows of a JSON (an array of objects) or CSV (a header row, then values) file, each
    /// value converted for the attribute its column names; errors name the row and column.
    static func importRows(path: String, entity: EntityDescription) throws -> [[String: Any]] {
        if let problem = RegularFile.problem(atPath: path) { throw ShellError("\(path): insert all reads a JSON or CSV file, and this is \(problem)") }
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch { throw ShellError("\(path): cannot read this file (\(error.localizedDescription))") }
        func attribute(_ column: String) throws -> AttributeDescription {
            guard let attribute = entity.attribute(named: column), !attribute.isTransient, !attribute.isDerived else {
                if entity.relationship(named: column) != nil { throw ShellError("\(column) is a relationship, which a batch insert cannot set") }
                throw ShellError("no stored attribute of \(entity.name) has this name")
            }
            return attribute
        }
        switch URL(fileURLWithPath: path).pathExtension.lowercased() {
        case "json":
            let parsed: Any
            do { parsed = try JSONSerialization.jsonObject(with: data) } catch { throw ShellError("\(path): not valid JSON (\(error.localizedDescription))") }
            guard let array = parsed as? [Any] else { throw ShellError("\(path): expected a JSON array of objects") }
            return try array.enumerated().map { index, item in
                guard let object = item as? [String: Any] else { throw ShellError("\(path) row \(index + 1): expected a JSON object") }
                var row: [String: Any] = [:]
                for (column, value) in object.sorted(by: { $0.key < $1.key }) {
                    do {
                        let attribute = try attribute(column)
                        switch value {
                        case is NSNull: continue
                        case let s as String: row[column] = try convertText(s, for: attribute, entity: entity.name, strict: false)
                        case let n as NSNumber:
                            // JSON numbers: a Bool only where the attribute is one.
                            if attribute.attributeType == .boolean { row[column] = n.boolValue }
                            else if [.integer16, .integer32, .integer64].contains(attribute.attributeType), let i = Int(exactly: n.doubleValue) { row[column] = i }
                            else if attribute.attributeType == .string { throw ShellError("\(column) is a String: \(n) is a number") }
                            else { row[column] = n.doubleValue }
                        default: throw ShellError("\(column): a JSON \(type(of: value)) is no attribute value")
                        }
                    } catch let error as ShellError {
                        throw ShellError("\(path) row \(index + 1), column \(column): \(error.message)")
                    }
                }
                return row
            }
        case "csv":
            guard let text = String(data: data, encoding: .utf8) else { throw ShellError("\(path): not UTF-8 text") }
            let records = CSVReader.records(text)
            guard let header = records.first else { return [] }
            let attributes = try header.map { column in
                do { return try attribute(column) } catch let error as ShellError { throw ShellError("\(path), column \(column): \(error.message)") }
            }
            return try records.dropFirst().enumerated().map { index, record in
                guard record.count == header.count else {
                    throw ShellError("\(path) row \(index + 1): \(record.count) values for \(header.count) columns")
                }
                var row: [String: Any] = [:]
                for (column, cell) in record.enumerated() where !cell.isEmpty {
                    do {
                        row[header[column]] = try convertText(cell, for: attributes[column], entity: entity.name, strict: true)
                    } catch let error as ShellError {
                        throw ShellError("\(path) row \(index + 1), column \(header[column]): \(error.message)")
                    }
                }
                return row
            }
        default:
            throw ShellError("\(path): insert all reads .json or .csv files")
        }
    }
}

/// RFC 4180 CSV: fields separated by commas, quoted with `"` (doubled inside), records by
/// CRLF or LF; empty lines are skipped. One pass, no recursion.
enum CSVReader {
    static func records(_ text: String) -> [[String]] {
        var records: [[String]] = []
        var record: [String] = []
        var field = ""
        var quoted = false
        var afterQuote = false
        var chars = text.unicodeScalars.makeIterator()
        var pending: Unicode.Scalar? = chars.next()
        func endRecord() {
            record.append(field)
            field = ""
            if !(record.count == 1 && record[0].isEmpty) { records.append(record) }
            record = []
        }
        while let c = pending {
            pending = chars.next()
            if quoted {
                if c == "\"" {
                    if pending == "\"" { field.unicodeScalars.append("\""); pending = chars.next() } else { quoted = false; afterQuote = true }
                } else {
                    field.unicodeScalars.append(c)
                }
                continue
            }
            switch c {
            case "\"" where field.isEmpty && !afterQuote: quoted = true
            case ",":
                record.append(field)
                field = ""
                afterQuote = false
            case "\r" where pending == "\n": continue
            case "\n", "\r":
                endRecord()
                afterQuote = false
            default: field.unicodeScalars.append(c)
            }
        }
        if !field.isEmpty || !record.isEmpty { endRecord() }
        return records
    }
}
