import FaultlineModel
import Foundation

extension SchemaMapping {
    /// The statements Core Data runs to create a store for this model, in its order:
    /// entity tables (each followed by the join tables it names), their indexes, then the
    /// metadata tables.
    public func createStatements() -> [String] {
        var statements: [String] = []
        var indexes: [String] = []
        var joinsByTable: [String: [JoinTableMapping]] = [:]
        for join in joinTables {
            if let table = entities[join.sourceEntity]?.table { joinsByTable[table, default: []].append(join) }
        }
        for table in tables {
            let columns = table.columns.map { "\($0.name) \($0.sqlType)" }.joined(separator: ", ")
            statements.append("CREATE TABLE \(table.name) ( \(columns) )")
            for join in joinsByTable[table.name] ?? [] {
                var columns = ["\(join.sourceColumn) INTEGER", "\(join.destinationColumn) INTEGER"]
                if let c = join.sourceOrderColumn { columns.append("\(c) INTEGER") }
                if let c = join.destinationOrderColumn { columns.append("\(c) INTEGER") }
                columns.append("PRIMARY KEY (\(join.sourceColumn), \(join.destinationColumn))")
                statements.append("CREATE TABLE \(join.name) ( \(columns.joined(separator: ", ")) )")
                indexes.append("CREATE INDEX \(join.name)_\(join.destinationColumn)_INDEX ON \(join.name) (\(join.destinationColumn), \(join.sourceColumn))")
            }
            // The root's userInfo key `_NSEntityOmitSubentityColumnIndex = YES` tells Core Data
            // not to index Z_ENT (Photos' GenericAsset has it).
            if table.entityNumbers.count > 1, model.entity(named: table.rootEntity)?.userInfo["_NSEntityOmitSubentityColumnIndex"] != "YES" {
                indexes.append("CREATE INDEX \(table.name)_Z_ENT_INDEX ON \(table.name) (Z_ENT)")
            }
            for entityName in table.entityNumbers.compactMap({ entityNames[$0] }) {
                guard let entity = model.entity(named: entityName), let mapping = self.entity(entityName) else { continue }
                for index in entity.fetchIndexes {
                    // A one-element index on a to-one relationship repeats the foreign key's own index.
                    if index.elements.count == 1, let only = index.elements.first, only.expression == nil,
                        mapping.toOneColumns[only.property] != nil
                    {
                        continue
                    }
                    let parts = index.elements.compactMap { element -> String? in
                        guard let column = indexColumn(element, in: mapping) else { return nil }
                        return "\(column) COLLATE BINARY \(element.isAscending ? "ASC" : "DESC")"
                    }
                    if !parts.isEmpty {
                        var sql = "CREATE INDEX Z_\(entityName)_\(index.name) ON \(table.name) (\(parts.joined(separator: ", ")))"
                        if let format = index.partialIndexPredicate, let condition = SchemaMapping.partialIndexWhere(format, in: mapping) {
                            sql += " WHERE " + condition
                        }
                        indexes.append(sql)
                    }
                }
                // Legacy compound indexes: a model that has fetch indexes already carries them
                // as `compoundIndex`, `compoundIndex1`, … fetch indexes.
                if entity.fetchIndexes.isEmpty {
                    for (i, properties) in entity.compoundIndexes.enumerated() {
                        let parts = properties.compactMap { name -> String? in
                            name == "entity" ? "Z_ENT" : mapping.attributeColumns[name] ?? mapping.toOneColumns[name]?.foreignKey
                        }.map { "\($0) COLLATE BINARY ASC" }
                        if !parts.isEmpty {
                            indexes.append("CREATE INDEX Z_\(entityName)_compoundIndex\(i == 0 ? "" : String(i)) ON \(table.name) (\(parts.joined(separator: ", ")))")
                        }
                    }
                }
                for properties in entity.uniquenessConstraints {
                    let columns = properties.compactMap { mapping.attributeColumns[$0] ?? mapping.toOneColumns[$0]?.foreignKey }
                    guard columns.count == properties.count else { continue }
                    let name = "Z_\(entityName)_UNIQUE_" + properties.joined(separator: "_")
                    indexes.append("CREATE UNIQUE INDEX \(name) ON \(table.name) (\(columns.map { "\($0) COLLATE BINARY ASC" }.joined(separator: ", ")))")
                }
            }
            for column in table.columns {
                switch column.kind {
                case .foreignKey, .hiddenForeignKey:
                    indexes.append("CREATE INDEX \(table.name)_\(column.name)_INDEX ON \(table.name) (\(column.name))")
                default:
                    break
                }
            }
        }
        statements += indexes
        // Per entity, as in Apple's stores: derived-attribute triggers, R-tree location
        // indexes, counter triggers.
        for number in entityNames.keys.sorted() {
            guard let name = entityNames[number], let entity = model.entity(named: name) else { continue }
            let declared = entity.declaredAttributes.sorted(by: { $0.name < $1.name })
            for attribute in declared { statements += derivedAttributeTriggers(attribute, of: entity) }
            for attribute in declared { statements += locationIndexStatements(attribute, of: entity) }
            for attribute in declared { statements += counterTriggers(attribute, of: entity) }
        }
        statements.append("CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)")
        statements.append("CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB)")
        statements.append("CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB)")
        return statements
    }

    /// The four triggers that keep a derived attribute up to date in the store, for a
    /// derivation through a to-one relationship (`relationship.attribute`), in Core Data's
    /// text (as in Photos' stores, macOS 10.15 and 16): `SOURCE_INSERT`/`SOURCE_UPDATE` on the
    /// entity's table copy the value when a row is inserted or its foreign key changes;
    /// `PARAMETER_INSERT`/`PARAMETER_UPDATE` on the destination's table copy it to every row
    /// that points at a new or changed destination. Each then reports the new value through
    /// `NSCoreDataDATrigger…AffectedObjectValue`, so that objects in memory can follow.
    ///
    /// Other derivations (`@count`, `now()`, functions, attributes of the entity itself) get
    /// no triggers here: no store we hold shows the text Core Data writes for them, and
    /// Faultline does not guess DDL.
    func derivedAttributeTriggers(_ attribute: AttributeDescription, of entity: EntityDescription) -> [String] {
        guard let expression = attribute.derivationExpression, let mapping = self.entity(entity.name),
            let column = mapping.attributeColumns[attribute.name]
        else { return [] }
        let path = expression.trimmingCharacters(in: .whitespaces).split(separator: ".").map(String.init)
        guard path.count == 2, let relationship = entity.relationship(named: path[0]), relationship.isToOne,
            let foreignKey = mapping.toOneColumns[path[0]]?.foreignKey,
            let destination = self.entity(relationship.destinationEntityName),
            let sourceColumn = destination.attributeColumns[path[1]]
        else { return [] }
        let table = mapping.table, other = destination.table
        let prefix = "Z_DA_\(table)_\(entity.name)_\(attribute.name)"
        let otherPrefix = "Z_DA_\(other)_\(entity.name)_\(attribute.name)"
        let copy = "UPDATE \(table) SET \(column) = (SELECT \(sourceColumn) FROM \(other) WHERE Z_PK = NEW.\(foreignKey)) WHERE Z_PK = NEW.Z_PK;"
        let spread = "UPDATE \(table) SET \(column) = NEW.\(sourceColumn) WHERE \(foreignKey) = NEW.Z_PK;"
        func report(_ function: String, _ condition: String) -> String {
            "SELECT \(function)('\(table)', Z_ENT, Z_PK, '\(attribute.name)', \(column)) FROM \(table) WHERE \(condition); END"
        }
        let inserted = "NSCoreDataDATriggerInsertUpdatedAffectedObjectValue", updated = "NSCoreDataDATriggerUpdatedAffectedObjectValue"
        return [
            "CREATE TRIGGER \(prefix)_SOURCE_INSERT AFTER INSERT ON \(table) FOR EACH ROW BEGIN \(copy) \(report(inserted, "Z_PK = NEW.Z_PK"))",
            "CREATE TRIGGER \(prefix)_SOURCE_UPDATE AFTER UPDATE OF \(foreignKey) ON \(table) FOR EACH ROW BEGIN \(copy) \(report(updated, "Z_PK = NEW.Z_PK"))",
            "CREATE TRIGGER \(otherPrefix)_PARAMETER_INSERT AFTER INSERT ON \(other) FOR EACH ROW BEGIN \(spread) \(report(inserted, "\(foreignKey) = NEW.Z_PK"))",
            "CREATE TRIGGER \(otherPrefix)_PARAMETER_UPDATE AFTER UPDATE OF \(sourceColumn) ON \(other) FOR EACH ROW BEGIN \(spread) \(report(updated, "\(foreignKey) = NEW.Z_PK"))",
        ]
    }

    /// The `Z_FOK_` position of the object at `index` of an ordered to-many list when the
    /// list is written: 2048, 3072, 4096, … (a step of 1024 from 2048, as in every Core
    /// Data-written ordered relationship of the Photos stores; the gaps leave room to insert).
    public static func orderKey(at index: Int) -> Int64 {
        2048 + 1024 * Int64(index)
    }

    /// The column of a fetch index element: a property's column, `Z_ENT` for the `entity`
    /// key-path expression Core Data uses in compound indexes.
    func indexColumn(_ element: FetchIndexDescription.Element, in mapping: EntityMapping) -> String? {
        if let expression = element.expression {
            let keyPath = expression.trimmingCharacters(in: .whitespaces)
            if keyPath == "entity" { return "Z_ENT" }
            // The object itself (`SELF`, an evaluated-object expression) is its primary key.
            if keyPath == "SELF" { return "Z_PK" }
            return mapping.attributeColumns[keyPath] ?? mapping.toOneColumns[keyPath]?.foreignKey
        }
        return mapping.attributeColumns[element.property] ?? mapping.toOneColumns[element.property]?.foreignKey
    }
}
