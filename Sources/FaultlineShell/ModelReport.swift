import FaultlineModel
import Foundation

/// Renders a managed object model for people and tools: a readable listing, the version
/// hashes, JSON, and entity-relationship diagrams (Graphviz DOT and Mermaid).
///
/// Every function is pure: same model in, same text out (entities and properties sorted by
/// name), so outputs can be compared in tests and diffs.
///
/// ```swift
/// let model = try ManagedObjectModel(contentsOf: URL(fileURLWithPath: "Inventory.xcdatamodeld"))
/// print(ModelReport.text(model))
/// print(ModelReport.hashes(model))   // "Asset 8ILMzYCn…="
/// ```
public enum ModelReport {
    // MARK: Text

    /// A readable listing: the entities with their parents, then per entity a table of its
    /// attributes (name, type, optional, default) and relationships (destination, to-one /
    /// to-many, inverse, delete rule). Inherited properties are marked with their entity.
    public static func text(_ model: ManagedObjectModel) -> String {
        var out: [String] = []
        let count = model.entities.count
        out.append("Model\(model.sourceDescription.map { " \($0)" } ?? ""): \(count) \(count == 1 ? "entity" : "entities")")
        out.append("")
        var overview: [[String]] = [["entity", "parent", "abstract", "class"]]
        for e in model.entities {
            overview.append([e.name, e.superentityName ?? "—", e.isAbstract ? "yes" : "no", e.managedObjectClassName ?? "NSManagedObject"])
        }
        out += table(overview, indent: "  ")
        for e in model.entities {
            out.append("")
            out += entitySection(model, e)
        }
        if !model.fetchRequestTemplates.isEmpty {
            out.append("")
            out.append("Fetch request templates")
            for t in model.fetchRequestTemplates.values.sorted(by: { $0.name < $1.name }) {
                out.append("  \(t.name): \(t.entityName)\(t.predicateFormat.map { " where \($0)" } ?? "")")
            }
        }
        if !model.configurations.isEmpty {
            out.append("")
            out.append("Configurations")
            for (name, members) in model.configurations.sorted(by: { $0.key < $1.key }) {
                out.append("  \(name): \(members.sorted().joined(separator: ", "))")
            }
        }
        return out.joined(separator: "\n") + "\n"
    }

    /// The listing of one entity (as in ``text(_:)``); an unknown name gives a line saying so.
    public static func text(_ model: ManagedObjectModel, entity name: String) -> String {
        guard let e = model.entity(named: name) else { return "no entity \(name)\n" }
        return entitySection(model, e).joined(separator: "\n") + "\n"
    }

    /// The heading and tables of one entity.
    static func entitySection(_ model: ManagedObjectModel, _ e: EntityDescription) -> [String] {
        var out: [String] = []
        var heading = "Entity \(e.name)"
        if let parent = e.superentityName { heading += " : \(parent)" }
        if e.isAbstract { heading += " (abstract)" }
        if !e.subentityNames.isEmpty { heading += "  sub-entities: \(e.subentityNames.joined(separator: ", "))" }
        out.append(heading)
        let declaredAttributes = Set(e.declaredAttributes.map(\.name))
        let declaredRelationships = Set(e.declaredRelationships.map(\.name))
        let owners = propertyOwners(model, e)
        if e.attributes.isEmpty {
            out.append("  (no attributes)")
        } else {
            var rows: [[String]] = [["attribute", "type", "optional", "default", ""]]
            for a in e.attributes {
                var notes: [String] = []
                if a.isTransient { notes.append("transient") }
                if let expression = a.derivationExpression { notes.append("derived: \(expression)") }
                if !declaredAttributes.contains(a.name) { notes.append("from \(owners[a.name] ?? "parent")") }
                rows.append([a.name, a.attributeType.xmlName, a.isOptional ? "yes" : "no", defaultText(a) ?? "—", notes.joined(separator: ", ")])
            }
            out += table(rows, indent: "  ")
        }
        if !e.relationships.isEmpty {
            var rows: [[String]] = [["relationship", "destination", "kind", "inverse", "delete rule", ""]]
            for r in e.relationships {
                var kind = r.isToMany ? "to-many" : "to-one"
                if r.isOrdered { kind += " ordered" }
                var notes: [String] = []
                if !r.isOptional { notes.append("required") }
                if r.isTransient { notes.append("transient") }
                if !declaredRelationships.contains(r.name) { notes.append("from \(owners[r.name] ?? "parent")") }
                rows.append([r.name, r.destinationEntityName, kind, r.inverseName ?? "—", r.deleteRule.xmlName, notes.joined(separator: ", ")])
            }
            out += table(rows, indent: "  ")
        }
        if !e.fetchedProperties.isEmpty {
            for f in e.fetchedProperties {
                out.append("  fetched \(f.name): \(f.fetchRequest.entityName)\(f.fetchRequest.predicateFormat.map { " where \($0)" } ?? "")")
            }
        }
        for c in e.uniquenessConstraints { out.append("  unique (\(c.joined(separator: ", ")))") }
        for i in e.fetchIndexes {
            let elements = i.elements.map { ($0.expression ?? $0.property) + ($0.isAscending ? "" : " desc") }
            out.append("  index \(i.name) (\(elements.joined(separator: ", ")))")
        }
        return out
    }

    // MARK: Hashes

    /// One line per entity, sorted by name: the entity name and its Core Data version hash
    /// in base64 (`Asset 8ILMzYCnYe8uGzdLHqnxo6RUX+ifEi9tjcRr4dRZL24=`).
    public static func hashes(_ model: ManagedObjectModel) -> String {
        model.entityVersionHashesByName
            .sorted { $0.key < $1.key }
            .map { "\($0.key) \($0.value.base64EncodedString())\n" }
            .joined()
    }

    // MARK: JSON

    /// The whole model as JSON (pretty-printed, keys sorted): entities with their declared
    /// properties, indexes, constraints and version hashes; templates; configurations.
    public static func json(_ model: ManagedObjectModel) -> String {
        var root: [String: Any] = [
            "entities": model.entities.map { entityJSON($0) },
            "versionHash": model.versionHash.base64EncodedString(),
            "versionIdentifiers": model.versionIdentifiers,
            "configurations": model.configurations.mapValues { $0.sorted() },
            "fetchRequestTemplates": model.fetchRequestTemplates.values.sorted(by: { $0.name < $1.name }).map { fetchRequestJSON($0) },
        ]
        if let source = model.sourceDescription { root["source"] = source }
        guard let data = try? JSONSerialization.data(withJSONObject: root, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]) else {
            return "{}\n"
        }
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    private static func entityJSON(_ e: EntityDescription) -> [String: Any] {
        var d: [String: Any] = [
            "name": e.name,
            "abstract": e.isAbstract,
            "subentities": e.subentityNames,
            "attributes": e.declaredAttributes.sorted(by: { $0.name < $1.name }).map { attributeJSON($0) },
            "relationships": e.declaredRelationships.sorted(by: { $0.name < $1.name }).map { relationshipJSON($0) },
            "versionHash": e.versionHash.base64EncodedString(),
        ]
        if let v = e.managedObjectClassName { d["className"] = v }
        if let v = e.superentityName { d["parent"] = v }
        if let v = e.renamingIdentifier { d["renamingIdentifier"] = v }
        if let v = e.versionHashModifier { d["versionHashModifier"] = v }
        if !e.userInfo.isEmpty { d["userInfo"] = e.userInfo }
        if !e.uniquenessConstraints.isEmpty { d["uniquenessConstraints"] = e.uniquenessConstraints }
        if !e.compoundIndexes.isEmpty { d["compoundIndexes"] = e.compoundIndexes }
        if !e.fetchIndexes.isEmpty {
            d["fetchIndexes"] = e.fetchIndexes.map { i -> [String: Any] in
                var index: [String: Any] = [
                    "name": i.name,
                    "elements": i.elements.map { el -> [String: Any] in
                        var element: [String: Any] = ["property": el.property, "type": el.type, "ascending": el.isAscending]
                        if let x = el.expression { element["expression"] = x }
                        return element
                    },
                ]
                if let p = i.partialIndexPredicate { index["partialIndexPredicate"] = p }
                return index
            }
        }
        if !e.declaredFetchedProperties.isEmpty {
            d["fetchedProperties"] = e.declaredFetchedProperties.map { f -> [String: Any] in
                ["name": f.name, "fetchRequest": fetchRequestJSON(f.fetchRequest)]
            }
        }
        return d
    }

    private static func attributeJSON(_ a: AttributeDescription) -> [String: Any] {
        var d: [String: Any] = [
            "name": a.name,
            "type": a.attributeType.xmlName,
            "optional": a.isOptional,
            "versionHash": a.versionHash.base64EncodedString(),
        ]
        if a.isTransient { d["transient"] = true }
        if a.isReadOnly { d["readOnly"] = true }
        if a.isIndexed { d["indexed"] = true }
        if a.allowsExternalBinaryDataStorage { d["allowsExternalBinaryDataStorage"] = true }
        if a.preservesValueInHistoryOnDeletion { d["preservesValueInHistoryOnDeletion"] = true }
        if a.isIndexedBySpotlight { d["indexedBySpotlight"] = true }
        if a.allowsCloudEncryption { d["allowsCloudEncryption"] = true }
        if let v = defaultText(a) { d["default"] = v }
        if let v = a.minValueString { d["min"] = v }
        if let v = a.maxValueString { d["max"] = v }
        if let v = a.regularExpressionString { d["regularExpression"] = v }
        if let v = a.valueTransformerName { d["valueTransformerName"] = v }
        if let v = a.valueClassName { d["valueClassName"] = v }
        if let v = a.derivationExpression { d["derivationExpression"] = v }
        if let v = a.renamingIdentifier { d["renamingIdentifier"] = v }
        if let v = a.versionHashModifier { d["versionHashModifier"] = v }
        if !a.userInfo.isEmpty { d["userInfo"] = a.userInfo }
        return d
    }

    private static func relationshipJSON(_ r: RelationshipDescription) -> [String: Any] {
        var d: [String: Any] = [
            "name": r.name,
            "destination": r.destinationEntityName,
            "toMany": r.isToMany,
            "optional": r.isOptional,
            "minCount": r.minCount,
            "maxCount": r.maxCount,
            "deleteRule": r.deleteRule.xmlName,
            "versionHash": r.versionHash.base64EncodedString(),
        ]
        if r.isOrdered { d["ordered"] = true }
        if r.isTransient { d["transient"] = true }
        if let v = r.inverseName { d["inverse"] = v }
        if let v = r.renamingIdentifier { d["renamingIdentifier"] = v }
        if let v = r.versionHashModifier { d["versionHashModifier"] = v }
        if !r.userInfo.isEmpty { d["userInfo"] = r.userInfo }
        return d
    }

    private static func fetchRequestJSON(_ t: FetchRequestTemplate) -> [String: Any] {
        var d: [String: Any] = ["name": t.name, "entity": t.entityName, "resultType": t.resultType]
        if let p = t.predicateFormat { d["predicate"] = p }
        if t.fetchLimit != 0 { d["fetchLimit"] = t.fetchLimit }
        if t.fetchBatchSize != 0 { d["fetchBatchSize"] = t.fetchBatchSize }
        if t.fetchOffset != 0 { d["fetchOffset"] = t.fetchOffset }
        if !t.sortDescriptors.isEmpty {
            d["sortDescriptors"] = t.sortDescriptors.map { ["keyPath": $0.keyPath, "ascending": $0.ascending] as [String: Any] }
        }
        return d
    }

    // MARK: Diagrams

    /// A Graphviz (DOT) entity-relationship diagram: one record per entity listing its own
    /// attributes, one edge per relationship pair (labelled with both names; a crow's foot
    /// for to-many ends), and dashed hollow-arrow edges from sub-entities to parents.
    public static func dot(_ model: ManagedObjectModel) -> String {
        var out = ["digraph \"\(dotEscape(modelName(model)))\" {", "  rankdir=LR;", "  node [shape=record, fontname=\"Helvetica\", fontsize=10];", "  edge [fontname=\"Helvetica\", fontsize=9];"]
        for e in model.entities {
            let attributes = e.declaredAttributes.sorted(by: { $0.name < $1.name }).map { a in
                recordEscape("\(a.name)\(a.isOptional ? "?" : ""): \(a.attributeType.xmlName)") + "\\l"
            }.joined()
            let title = recordEscape(e.isAbstract ? "«abstract» \(e.name)" : e.name)
            out.append("  \"\(dotEscape(e.name))\" [label=\"{\(title)|\(attributes)}\"];")
        }
        for e in model.entities {
            if let parent = e.superentityName {
                out.append("  \"\(dotEscape(e.name))\" -> \"\(dotEscape(parent))\" [style=dashed, arrowhead=empty];")
            }
        }
        for (e, r, inverse) in relationshipPairs(model) {
            let head = r.isToMany ? "crow" : "tee"
            let tail = inverse.map { $0.isToMany ? "crow" : "tee" } ?? "none"
            let label = inverse.map { "\(r.name) / \($0.name)" } ?? r.name
            out.append("  \"\(dotEscape(e.name))\" -> \"\(dotEscape(r.destinationEntityName))\" [label=\"\(dotEscape(label))\", dir=both, arrowhead=\(head), arrowtail=\(tail)];")
        }
        out.append("}")
        return out.joined(separator: "\n") + "\n"
    }

    /// A Mermaid `erDiagram`: one block per entity with its own attributes, one line per
    /// relationship pair with crow's-foot cardinalities, and dotted `inherits` lines from
    /// sub-entities to parents.
    public static func mermaid(_ model: ManagedObjectModel) -> String {
        var out = ["erDiagram"]
        for e in model.entities {
            let attributes = e.declaredAttributes.sorted(by: { $0.name < $1.name })
            if attributes.isEmpty {
                out.append("    \(mermaidName(e.name))")
                continue
            }
            out.append("    \(mermaidName(e.name)) {")
            for a in attributes {
                let type = a.attributeType.xmlName.replacingOccurrences(of: " ", with: "")
                var line = "        \(type) \(mermaidName(a.name))"
                if !a.isOptional { line += " \"required\"" }
                out.append(line)
            }
            out.append("    }")
        }
        for (e, r, inverse) in relationshipPairs(model) {
            // Left marker: how many of `e` per destination (from the inverse); right: how
            // many destinations per `e`.
            let left: String
            if let inverse {
                left = inverse.isToMany ? (inverse.minCount > 0 ? "}|" : "}o") : (inverse.isOptional ? "|o" : "||")
            } else {
                left = "}o"
            }
            let right = r.isToMany ? (r.minCount > 0 ? "|{" : "o{") : (r.isOptional ? "o|" : "||")
            let label = inverse.map { "\(r.name) / \($0.name)" } ?? r.name
            out.append("    \(mermaidName(e.name)) \(left)--\(right) \(mermaidName(r.destinationEntityName)) : \"\(label.replacingOccurrences(of: "\"", with: "'"))\"")
        }
        for e in model.entities {
            if let parent = e.superentityName {
                out.append("    \(mermaidName(e.name)) |o..|| \(mermaidName(parent)) : \"inherits\"")
            }
        }
        return out.joined(separator: "\n") + "\n"
    }

    // MARK: Helpers

    /// Each declared relationship once: a relationship and its inverse are drawn as one
    /// pair, from the side that sorts first.
    private static func relationshipPairs(_ model: ManagedObjectModel) -> [(EntityDescription, RelationshipDescription, RelationshipDescription?)] {
        var pairs: [(EntityDescription, RelationshipDescription, RelationshipDescription?)] = []
        for e in model.entities {
            for r in e.declaredRelationships.sorted(by: { $0.name < $1.name }) {
                let inverse = model.inverse(of: r)
                if let inverse {
                    let me = (e.name, r.name), other = (r.destinationEntityName, inverse.name)
                    // Draw once: skip the side that sorts second (a reflexive self-inverse is drawn once).
                    if other < me { continue }
                }
                pairs.append((e, r, inverse))
            }
        }
        return pairs
    }

    /// Which ancestor declares each inherited property of an entity.
    private static func propertyOwners(_ model: ManagedObjectModel, _ e: EntityDescription) -> [String: String] {
        var owners: [String: String] = [:]
        for ancestor in model.inheritanceChain(of: e).dropLast() {
            for a in ancestor.declaredAttributes { owners[a.name] = ancestor.name }
            for r in ancestor.declaredRelationships { owners[r.name] = ancestor.name }
        }
        return owners
    }

    private static func defaultText(_ a: AttributeDescription) -> String? {
        if a.attributeType == .date, let t = a.defaultDateTimeInterval {
            let formatter = ISO8601DateFormatter()
            formatter.timeZone = TimeZone(identifier: "UTC")
            return formatter.string(from: Date(timeIntervalSinceReferenceDate: t))
        }
        return a.defaultValueString
    }

    private static func modelName(_ model: ManagedObjectModel) -> String {
        guard let source = model.sourceDescription else { return "Model" }
        var url = URL(fileURLWithPath: source)
        if url.lastPathComponent == "contents" { url.deleteLastPathComponent() }
        let name = url.deletingPathExtension().lastPathComponent
        return name.isEmpty ? "Model" : name
    }

    private static func table(_ rows: [[String]], indent: String) -> [String] {
        guard let columns = rows.map(\.count).max() else { return [] }
        var widths = [Int](repeating: 0, count: columns)
        for row in rows {
            for (i, cell) in row.enumerated() { widths[i] = max(widths[i], cell.count) }
        }
        return rows.map { row in
            var line = indent
            for (i, cell) in row.enumerated() {
                line += i == row.count - 1 ? cell : cell.padding(toLength: widths[i] + 2, withPad: " ", startingAt: 0)
            }
            while line.hasSuffix(" ") { line.removeLast() }
            return line
        }
    }

    private static func dotEscape(_ s: String) -> String {
        s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
    }

    private static func recordEscape(_ s: String) -> String {
        var out = ""
        for ch in s {
            if "{}|<>\"\\".contains(ch) { out.append("\\") }
            out.append(ch)
        }
        return out
    }

    private static func mermaidName(_ s: String) -> String {
        let allowed = s.unicodeScalars.allSatisfy { CharacterSet.alphanumerics.contains($0) || $0 == "_" || $0 == "-" }
        return allowed && !s.isEmpty ? s : "\"\(s.replacingOccurrences(of: "\"", with: "'"))\""
    }
}

extension ModelReport {
    /// How a model differs from the one a store was made by: entity by entity (with both
    /// version hashes), and property by property when the store caches its model.
    public static func differences(model: ManagedObjectModel, modelName: String, storeHashes: [String: Data], storeModel: ManagedObjectModel?) -> String {
        let differing = model.entitiesDiffering(fromStoreVersionHashes: storeHashes)
        guard !differing.isEmpty else { return "\(modelName) is the version of the model that made the store: every entity's version hash matches." }
        var lines = ["The store was made by another version of the model than \(modelName): \(differing.count) of \(Set(storeHashes.keys).union(model.entityVersionHashesByName.keys).count) entities differ."]
        if storeModel == nil { lines.append("(The store caches no model, so only version hashes can be compared, not properties.)") }
        // Property by property: the mapping Core Data would infer from the store's model.
        let mapping = storeModel.map { model.inferredMapping(from: $0) }
        for name in differing {
            let mine = model.entityVersionHashesByName[name].map { $0.base64EncodedString() }
            let theirs = storeHashes[name].map { $0.base64EncodedString() }
            switch (mine, theirs) {
            case (let m?, nil): lines.append("entity \(name): only in the model (hash \(m))")
            case (nil, let t?): lines.append("entity \(name): only in the store (hash \(t))")
            default: lines.append("entity \(name): model hash \(mine ?? "-"), store hash \(theirs ?? "-")")
            }
            guard let entityMapping = mapping?.entityMapping(forDestination: name), entityMapping.source != nil else { continue }
            lines += propertyLines(entityMapping)
        }
        return lines.joined(separator: "\n")
    }

    /// The lines of ``differences(model:modelName:storeHashes:storeModel:)`` for one entity
    /// the store's model maps to the model: its own changes, then its attributes and
    /// relationships by name (`attribute color: only in the model (Integer 16)`).
    static func propertyLines(_ m: InferredEntityMapping) -> [String] {
        var lines: [String] = []
        for c in m.entityChanges {
            if case .renamed(let old) = c.kind { lines.append("  renamed: \(old) in the store"); continue }
            lines.append("  \(c.summary)\(c.problem.map { " (not inferable: \($0))" } ?? "")")
        }
        func text(_ changes: [ModelChange]) -> String {
            changes.map { $0.summary + ($0.problem.map { " (not inferable: \($0))" } ?? "") }.joined(separator: ", ")
        }
        var attributes: [(String, String)] = []
        for a in m.attributes where !a.changes.isEmpty {
            attributes.append((a.destination.name, a.source == nil ? "only in the model (\(a.destination.attributeType.xmlName))" : text(a.changes)))
        }
        for a in m.removedAttributes { attributes.append((a.name, "only in the store (\(a.attributeType.xmlName))")) }
        for (name, line) in attributes.sorted(by: { $0.0 < $1.0 }) { lines.append("  attribute \(name): \(line)") }
        var relationships: [(String, String)] = []
        for r in m.relationships where !r.changes.isEmpty {
            relationships.append((r.destination.name, r.source == nil ? "only in the model (→ \(r.destination.destinationEntityName))" : text(r.changes)))
        }
        for r in m.removedRelationships { relationships.append((r.name, "only in the store (→ \(r.destinationEntityName))")) }
        for (name, line) in relationships.sorted(by: { $0.0 < $1.0 }) { lines.append("  relationship \(name): \(line)") }
        return lines
    }
}
