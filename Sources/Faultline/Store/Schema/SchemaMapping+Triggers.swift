import FaultlineModel
import FaultlinePredicate
import Foundation

extension SchemaMapping {
    /// The R-tree index of a location attribute, in Core Data's text: a transient attribute
    /// whose userInfo key `_NSLocationAttributeDerivedComponents` names the attributes it is
    /// made of (`latitude, longitude`) gets the virtual table `Z_RT_<Entity>_<attribute>`
    /// (`USING RTREE`, a `_MIN`/`_MAX` column pair per component; SQLite adds its `_rowid`,
    /// `_node` and `_parent` tables) and three triggers that keep it in step with the
    /// entity's table. The text is the one in Photos' stores (macOS 10.15 and 16, two
    /// components each); for another number of components the spacing of the first pair is
    /// kept as Apple writes it and the rest follow the same pattern (inferred).
    func locationIndexStatements(_ attribute: AttributeDescription, of entity: EntityDescription) -> [String] {
        guard let spec = attribute.userInfo["_NSLocationAttributeDerivedComponents"], let mapping = self.entity(entity.name) else { return [] }
        let components = spec.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        let columns = components.compactMap { mapping.attributeColumns[$0] }
        guard !columns.isEmpty, columns.count == components.count else { return [] }
        let name = "Z_RT_\(entity.name)_\(attribute.name)"
        let table = mapping.table
        let boxColumns = columns.flatMap { ["\($0)_MIN", "\($0)_MAX"] }
        let columnList = "(Z_PK, \(boxColumns.joined(separator: ", ")))"
        // `NEW.ZLATITUDE ,NEW.ZLATITUDE, NEW.ZLONGITUDE, NEW.ZLONGITUDE`: Apple's spacing.
        let values = columns.enumerated().map { i, column in
            i == 0 ? "NEW.\(column) ,NEW.\(column)" : "NEW.\(column), NEW.\(column)"
        }.joined(separator: ", ")
        let insert = "INTO \(name) \(columnList) VALUES (NEW.Z_PK, \(values)) ;"
        return [
            "CREATE VIRTUAL TABLE \(name) USING RTREE (Z_PK INTEGER PRIMARY KEY, \(boxColumns.map { "\($0) FLOAT" }.joined(separator: ", ")))",
            "CREATE TRIGGER \(name)_INSERT AFTER INSERT ON \(table) FOR EACH ROW BEGIN INSERT OR REPLACE \(insert) END",
            "CREATE TRIGGER \(name)_UPDATE AFTER UPDATE ON \(table) FOR EACH ROW BEGIN DELETE FROM \(name) WHERE Z_PK = NEW.Z_PK ; INSERT \(insert) END",
            "CREATE TRIGGER \(name)_DELETE AFTER DELETE ON \(table) FOR EACH ROW BEGIN DELETE FROM \(name) WHERE Z_PK = OLD.Z_PK ; END",
        ]
    }

    /// The tables SQLite's R-tree module creates beside a `Z_RT_` virtual table; they are in
    /// `sqlite_master` of a store, never in Core Data's own statements.
    public static func isRTreeShadowTable(_ name: String) -> Bool {
        name.hasPrefix("Z_RT_") && (name.hasSuffix("_rowid") || name.hasSuffix("_node") || name.hasSuffix("_parent"))
    }

    /// The seven triggers that keep a counter attribute up to date, in Core Data's text: an
    /// attribute whose userInfo key `NSTriggerKey` holds a predicate over one relationship
    /// (`(detectedFaces.hidden == NO) && (detectedFaces.assetVisible == YES)`) counts the
    /// related rows that satisfy it. Through a to-many (whose inverse is a to-one) the count is
    /// raised and lowered as related rows are inserted, changed, moved or deleted; through a
    /// to-one it is 1 while the related row satisfies the predicate, else 0. Each trigger
    /// reports the value it wrote through `NSCoreDataTriggerUpdateAffectedObjectValue`.
    ///
    /// The text is the one in Photos' stores (macOS 10.15: 8 counters, macOS 16: 2), where
    /// every predicate is an `AND` of `==`/`!=` comparisons with numbers or Booleans; a
    /// predicate of another shape gets no triggers (Core Data's text for it is not known).
    func counterTriggers(_ attribute: AttributeDescription, of entity: EntityDescription) -> [String] {
        guard let format = attribute.userInfo["NSTriggerKey"], let mapping = self.entity(entity.name),
            let column = mapping.attributeColumns[attribute.name],
            let predicate = try? FLPredicate(format: format),
            let terms = Self.counterTerms(predicate), let relationshipName = terms.first?.relationship,
            terms.allSatisfy({ $0.relationship == relationshipName }),
            let relationship = entity.relationship(named: relationshipName),
            let destination = self.entity(relationship.destinationEntityName)
        else { return [] }
        var conditionColumns: [String] = []
        var parts: [(column: String, comparison: String)] = []
        for term in terms {
            guard let c = destination.attributeColumns[term.attribute] else { return [] }
            if !conditionColumns.contains(c) { conditionColumns.append(c) }
            parts.append((c, term.comparison))
        }
        func condition(_ prefix: String) -> String { parts.map { "\(prefix)\($0.column) \($0.comparison)" }.joined(separator: " AND ") }
        let changed = conditionColumns.map { "NEW.\($0) != OLD.\($0)" }.joined(separator: " OR ")
        let updateOf = conditionColumns.joined(separator: ", ")
        let table = mapping.table, other = destination.table
        let prefix = "ZT_\(table)_\(column)_\(other)"
        let increment = "\(column) = IFNULL(\(column),0) + 1", decrement = "\(column) = MAX(0,IFNULL(\(column),0) - 1)"
        func report(_ condition: String) -> String {
            "SELECT NSCoreDataTriggerUpdateAffectedObjectValue('\(table)', Z_ENT, Z_PK, '\(column)', \(column)) FROM \(table) WHERE \(condition); END"
        }
        if relationship.isToOne {
            guard let fk = mapping.toOneColumns[relationship.name]?.foreignKey else { return [] }
            let count = "(SELECT COUNT(Z_PK) FROM \(other) WHERE"
            return [
                "CREATE TRIGGER \(prefix)_INSERT_INCREMENT AFTER INSERT ON \(other) FOR EACH ROW WHEN \(condition("NEW.")) BEGIN UPDATE \(table) SET \(increment) WHERE NEW.Z_PK = \(fk); \(report("\(fk) = NEW.Z_PK"))",
                "CREATE TRIGGER \(prefix)_UPDATE_INCREMENT AFTER UPDATE OF \(updateOf) ON \(other) FOR EACH ROW WHEN (\(condition("NEW."))) AND (\(changed)) BEGIN UPDATE \(table) SET \(increment) WHERE NEW.Z_PK = \(fk); \(report("\(fk) = NEW.Z_PK"))",
                "CREATE TRIGGER \(prefix)_UPDATE_DECREMENT AFTER UPDATE OF \(updateOf) ON \(other) FOR EACH ROW WHEN (\(condition("OLD."))) AND (\(changed)) BEGIN UPDATE \(table) SET \(decrement) WHERE OLD.Z_PK = \(fk); \(report("\(fk) = NEW.Z_PK"))",
                "CREATE TRIGGER \(prefix)_DELETE_DECREMENT AFTER DELETE ON \(other) FOR EACH ROW WHEN \(condition("OLD.")) BEGIN UPDATE \(table) SET \(decrement) WHERE OLD.Z_PK = \(fk); \(report("\(fk) = OLD.Z_PK"))",
                "CREATE TRIGGER \(prefix)_\(table)_INSERT_INCREMENT AFTER INSERT ON \(table) FOR EACH ROW BEGIN UPDATE \(table) SET \(column) = \(count) (Z_PK = NEW.\(fk)) AND (\(condition("")))) WHERE Z_PK = NEW.Z_PK; \(report("Z_PK = NEW.Z_PK"))",
                "CREATE TRIGGER \(prefix)_\(fk)_UPDATE_TO_NULL AFTER UPDATE OF \(fk) ON \(table) WHEN (NEW.\(fk) IS NULL AND OLD.\(fk) IS NOT NULL) BEGIN UPDATE \(table) SET \(column) = 0 WHERE Z_PK = NEW.Z_PK; \(report("Z_PK = NEW.Z_PK"))",
                "CREATE TRIGGER \(prefix)_\(fk)_UPDATE_INCREMENT AFTER UPDATE OF \(fk) ON \(table) WHEN ((NEW.\(fk) IS NOT NULL AND OLD.\(fk) IS NULL) OR (NEW.\(fk) != OLD.\(fk))) BEGIN UPDATE \(table) SET \(column) = \(count) Z_PK = NEW.\(fk) AND (\(condition("")))) WHERE Z_PK = NEW.Z_PK; \(report("Z_PK = NEW.Z_PK"))",
            ]
        }
        // Through a to-many: the related rows hold the foreign key of the inverse to-one.
        guard let inverse = model.inverse(of: relationship), inverse.isToOne,
            let fk = destination.toOneColumns[inverse.name]?.foreignKey
        else { return [] }
        let moved = "(NEW.\(fk) IS NOT NULL AND OLD.\(fk) IS NULL) OR (NEW.\(fk) != OLD.\(fk))"
        let movedAway = "(OLD.\(fk) IS NOT NULL AND NEW.\(fk) IS NULL) OR (NEW.\(fk) != OLD.\(fk))"
        return [
            "CREATE TRIGGER \(prefix)_INSERT_INCREMENT AFTER INSERT ON \(other) FOR EACH ROW WHEN \(condition("NEW.")) BEGIN UPDATE \(table) SET \(increment) WHERE NEW.\(fk) = Z_PK; \(report("Z_PK = NEW.\(fk)"))",
            "CREATE TRIGGER \(prefix)_UPDATE_INCREMENT AFTER UPDATE OF \(updateOf) ON \(other) FOR EACH ROW WHEN (\(condition("NEW."))) AND (\(changed)) AND (NEW.\(fk) == OLD.\(fk)) BEGIN UPDATE \(table) SET \(increment) WHERE NEW.\(fk) = Z_PK; \(report("Z_PK = NEW.\(fk)"))",
            "CREATE TRIGGER \(prefix)_UPDATE_DECREMENT AFTER UPDATE OF \(updateOf) ON \(other) FOR EACH ROW WHEN (\(condition("OLD."))) AND (\(changed)) AND (OLD.\(fk) == NEW.\(fk)) BEGIN UPDATE \(table) SET \(decrement) WHERE OLD.\(fk) = Z_PK; \(report("Z_PK = NEW.\(fk)"))",
            "CREATE TRIGGER \(prefix)_DELETE_DECREMENT AFTER DELETE ON \(other) FOR EACH ROW WHEN \(condition("OLD.")) BEGIN UPDATE \(table) SET \(decrement) WHERE OLD.\(fk) = Z_PK; \(report("Z_PK = OLD.\(fk)"))",
            "CREATE TRIGGER \(prefix)_\(table)_INSERT_INCREMENT AFTER INSERT ON \(table) FOR EACH ROW BEGIN UPDATE \(table) SET \(column) = (SELECT COUNT(Z_PK) FROM \(other) WHERE (\(fk) = NEW.Z_PK) AND (\(condition("")))) WHERE Z_PK = NEW.Z_PK; \(report("Z_PK = NEW.Z_PK"))",
            "CREATE TRIGGER \(prefix)_\(fk)_UPDATE_INCREMENT AFTER UPDATE OF \(fk) ON \(other) WHEN (\(condition("NEW."))) AND (\(moved)) BEGIN UPDATE \(table) SET \(increment) WHERE Z_PK = NEW.\(fk); \(report("Z_PK = NEW.\(fk)"))",
            "CREATE TRIGGER \(prefix)_\(fk)_UPDATE_DECREMENT AFTER UPDATE OF \(fk) ON \(other) WHEN (\(condition("OLD."))) AND (\(movedAway)) BEGIN UPDATE \(table) SET \(decrement) WHERE Z_PK = OLD.\(fk); \(report("Z_PK = OLD.\(fk)"))",
        ]
    }

    /// One comparison of a counter predicate: `relationship.attribute <op> <literal>`.
    struct CounterTerm {
        var relationship: String
        var attribute: String
        /// `== 0`, `!= 0`, `== 1` (Booleans are 0 and 1).
        var comparison: String
    }

    /// The comparisons of an `AND` of `rel.attr == / != number-or-Boolean`; nil for any
    /// other shape.
    static func counterTerms(_ predicate: FLPredicate) -> [CounterTerm]? {
        switch predicate.node {
        case .and(let parts):
            var terms: [CounterTerm] = []
            for part in parts {
                guard let more = counterTerms(part) else { return nil }
                terms += more
            }
            return terms
        case .comparison(let c):
            guard c.modifier == .direct, c.options.isEmpty, case .keyPath(let path) = c.left.node,
                case .constant(let value) = c.right.node
            else { return nil }
            let keys = path.split(separator: ".").map(String.init)
            guard keys.count == 2 else { return nil }
            let symbol: String
            switch c.op {
            case .equalTo: symbol = "=="
            case .notEqualTo: symbol = "!="
            default: return nil
            }
            let literal: String
            switch value {
            case .bool(let b): literal = b ? "1" : "0"
            case .int(let i): literal = String(i)
            default: return nil
            }
            return [CounterTerm(relationship: keys[0], attribute: keys[1], comparison: "\(symbol) \(literal)")]
        default:
            return nil
        }
    }
}
