import FaultlineModel
import Foundation

extension SchemaMapping {
    /// The statements Core Data runs to create a store for this model, in its order:
    /// entity tables (each followed by the join tables it names), their indexes, then the
    /// metadata tables.
    public func createStatements() -> [String] {
        var statements: [String] = []
        var indexes: [String] = []
        for table in tables {
            let columns = table.columns.map { "\($0.name) \($0.sqlType)" }.joined(separator: ", ")
            statements.append("CREATE TABLE \(table.name) ( \(columns) )")
            let named = joinTables.filter { join in
                entities[join.sourceEntity]?.table == table.name
            }
            for join in named {
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
        statements.append("CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)")
        statements.append("CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB)")
        statements.append("CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB)")
        return statements
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
