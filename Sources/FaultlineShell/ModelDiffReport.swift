import FaultlineModel
import Foundation

/// Renders what changed between two model versions (an ``InferredMapping``) and which
/// version of a model made a store (a ``ModelVersionMatch``), for `faultline diff`,
/// `faultline model --match` and the shell's open.
///
/// Every function is pure: same input, same text.
///
/// ```swift
/// let mapping = new.inferredMapping(from: old)
/// print(ModelDiffReport.text(mapping, oldName: "Notes 2", newName: "Notes 3"))
/// ```
public enum ModelDiffReport {
    // MARK: Diff

    /// A readable diff: a summary line, then per entity that differs its version hashes (hex)
    /// and changes, each change Core Data cannot infer marked with why; then the problems.
    public static func text(_ mapping: InferredMapping, oldName: String, newName: String) -> String {
        var out: [String] = ["Changes from \(oldName) to \(newName)"]
        let sections = entitySections(mapping)
        let unchanged = mapping.entityMappings.count - sections.filter { $0.status != "removed" }.count
        var counts: [String] = []
        for status in ["added", "removed", "renamed", "changed"] {
            let n = sections.filter { $0.status == status }.count
            if n > 0 { counts.append("\(n) \(status)") }
        }
        counts.append("\(unchanged) unchanged")
        out.append("entities: " + counts.joined(separator: ", "))
        if !mapping.requiresMigration {
            out.append("Every entity's version hash is equal: a store made by one opens with the other without migration.")
        } else if mapping.isInferable {
            out.append("Core Data can infer the mapping (lightweight migration).")
        } else {
            let n = mapping.problems.count
            out.append("Core Data cannot infer the mapping: \(n) \(n == 1 ? "change" : "changes") it cannot migrate (below).")
        }
        for section in sections {
            out.append("")
            out += section.lines
        }
        let problems = mapping.problems
        if !problems.isEmpty {
            out.append("")
            out.append("Not inferable:")
            out += problems.map { "  - \($0)" }
        }
        return out.joined(separator: "\n") + "\n"
    }

    /// The diff as JSON (pretty-printed, keys sorted): `inferable`, `requiresMigration`,
    /// `problems`, and per entity its status, source, hashes (hex), property map and changes.
    public static func json(_ mapping: InferredMapping, oldName: String, newName: String) -> String {
        var entities: [[String: Any]] = []
        for m in mapping.entityMappings {
            var e: [String: Any] = [
                "name": m.destination.name,
                "status": status(m),
                "newVersionHash": hex(m.destinationVersionHash),
                "changes": m.changes.map(changeJSON),
                "attributes": m.attributes.map { a -> [String: Any] in
                    ["name": a.destination.name, "from": a.source?.name ?? NSNull(), "inherited": a.isInherited]
                },
                "relationships": m.relationships.map { r -> [String: Any] in
                    ["name": r.destination.name, "from": r.source?.name ?? NSNull(), "inherited": r.isInherited]
                },
            ]
            e["source"] = m.source?.name ?? NSNull()
            e["oldVersionHash"] = m.sourceVersionHash.map(hex) ?? NSNull()
            if !m.removedAttributes.isEmpty { e["removedAttributes"] = m.removedAttributes.map(\.name) }
            if !m.removedRelationships.isEmpty { e["removedRelationships"] = m.removedRelationships.map(\.name) }
            entities.append(e)
        }
        for s in mapping.removedEntities {
            entities.append([
                "name": s.name, "status": "removed", "source": s.name, "oldVersionHash": hex(s.versionHash), "newVersionHash": NSNull(),
                "changes": [changeJSON(ModelChange(.entity(s.name), .removed))],
            ])
        }
        let root: [String: Any] = [
            "old": oldName,
            "new": newName,
            "inferable": mapping.isInferable,
            "requiresMigration": mapping.requiresMigration,
            "problems": mapping.problems,
            "entities": entities,
        ]
        guard let data = try? JSONSerialization.data(withJSONObject: root, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]) else {
            return "{}\n"
        }
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    /// Lower-case hex of a hash.
    public static func hex(_ data: Data) -> String {
        data.map { String(format: "%02x", $0) }.joined()
    }

    private static func changeJSON(_ c: ModelChange) -> [String: Any] {
        var d: [String: Any] = ["kind": c.kindName, "summary": c.summary, "inferable": c.isInferable, "entity": c.element.entityName]
        switch c.element {
        case .entity: d["element"] = "entity"
        case .attribute(_, let name): d["element"] = "attribute"; d["property"] = name
        case .relationship(_, let name): d["element"] = "relationship"; d["property"] = name
        }
        if let p = c.problem { d["problem"] = p }
        if let n = c.note { d["note"] = n }
        return d
    }

    private static func status(_ m: InferredEntityMapping) -> String {
        if m.source == nil { return "added" }
        if m.isRenamed { return "renamed" }
        if !m.changes.isEmpty || m.versionHashChanged { return "changed" }
        return "unchanged"
    }

    private struct Section {
        var status: String
        var lines: [String]
    }

    /// The entities that differ, sorted by name (removed ones among them).
    private static func entitySections(_ mapping: InferredMapping) -> [(status: String, lines: [String])] {
        var sections: [(String, Int, Section)] = []
        for (i, m) in mapping.entityMappings.enumerated() {
            let st = status(m)
            guard st != "unchanged" else { continue }
            var heading = "entity \(m.destination.name)"
            switch st {
            case "added": heading += " (added)"
            case "renamed": heading += " (renamed from \(m.source?.name ?? "?"))"
            default: heading += m.versionHashChanged ? " (changed)" : " (changed; same version hash)"
            }
            var lines = [heading, "  version hash \(m.sourceVersionHash.map(hex) ?? "—") → \(hex(m.destinationVersionHash))"]
            for c in m.changes {
                if case .entity = c.element, case .added = c.kind { continue }
                if case .entity = c.element, case .renamed = c.kind { continue }
                lines.append("  " + changeLine(c))
            }
            if st == "changed" && m.changes.isEmpty {
                lines.append("  (no property differs: the version hash changed, as by a version hash modifier or flag not shown)")
            }
            sections.append((m.destination.name, i, Section(status: st, lines: lines)))
        }
        for (i, s) in mapping.removedEntities.enumerated() {
            sections.append((s.name, mapping.entityMappings.count + i, Section(status: "removed", lines: ["entity \(s.name) (removed)", "  version hash \(hex(s.versionHash)) → —"])))
        }
        return sections.sorted { ($0.0, $0.1) < ($1.0, $1.1) }.map { ($0.2.status, $0.2.lines) }
    }

    /// `attribute title: became non-optional — not inferable: …`.
    private static func changeLine(_ c: ModelChange) -> String {
        var line: String
        switch c.element {
        case .entity: line = c.summary
        case .attribute(_, let name): line = "attribute \(name): \(c.summary)"
        case .relationship(_, let name): line = "relationship \(name): \(c.summary)"
        }
        if c.problem != nil { line += "  [not inferable]" }
        if let note = c.note { line += "  (\(note))" }
        return line
    }

    // MARK: Version match

    /// `store made by version \`Moody 3\` (3 of 6)`, or the nearest version and the entities
    /// that differ when no version made the store.
    public static func versionMatch(_ match: ModelVersionMatch, modelName: String) -> String {
        let v = match.version
        let position = "(\(v.position) of \(v.count)\(v.isCurrent ? ", the current version" : ""))"
        if match.isExact {
            return "store made by version `\(v.name)` \(position)"
        }
        let total = Set(v.entityVersionHashes.keys).union(match.differences.map(\.entity)).count
        var lines = ["no version of \(modelName) made the store; nearest: version `\(v.name)` \(position), \(match.differences.count) of \(total) entities differ:"]
        for d in match.differences {
            lines.append("  \(d) store \(d.storeHash.map(hex) ?? "—"), model \(d.modelHash.map(hex) ?? "—")")
        }
        return lines.joined(separator: "\n")
    }
}
