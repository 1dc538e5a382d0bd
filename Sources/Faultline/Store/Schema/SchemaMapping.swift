import FaultlineModel
import Foundation

/// How a model maps onto Core Data's SQLite tables: entity numbers, tables, columns,
/// foreign keys, join tables and indexes, following Core Data's own naming rules.
///
/// ```swift
/// let mapping = SchemaMapping(model: model)
/// mapping.entity("Location")?.table        // "ZLOCATION"
/// mapping.entity("Location")?.entityNumber // 2
/// ```
public struct SchemaMapping: Sendable {
    /// The model mapped.
    public let model: ManagedObjectModel
    /// Entity mappings by entity name.
    public internal(set) var entities: [String: EntityMapping] = [:]
    /// Entity names by `Z_ENT` number.
    public internal(set) var entityNames: [Int: String] = [:]
    /// Tables, one per inheritance root, in `Z_ENT` order of their roots.
    public internal(set) var tables: [TableMapping] = []
    /// Many-to-many join tables, in the order they were named.
    public internal(set) var joinTables: [JoinTableMapping] = []

    /// The mapping of an entity, if the model has it.
    public func entity(_ name: String) -> EntityMapping? { entities[name] }

    /// The table of an inheritance root.
    public func table(named name: String) -> TableMapping? {
        if let i = tablePositions[name], i < tables.count, tables[i].name == name { return tables[i] }
        return tables.first { $0.name == name }
    }

    /// Notes on how an existing store's schema differed from the computed one and what was
    /// used instead (empty for a computed mapping, or when the store matches exactly).
    public internal(set) var reconciliationNotes: [String] = []

    /// Computes the mapping Core Data would create for a model.
    public init(model: ManagedObjectModel) {
        self.init(model: model, entityNumbers: [:])
    }

    /// Computes the mapping with some entity numbers fixed (an existing store's `Z_ENT`s from
    /// `Z_PRIMARYKEY`); entities not in `entityNumbers` get Core Data's computed numbers.
    init(model: ManagedObjectModel, entityNumbers: [String: Int]) {
        self.model = model
        self.caseInsensitiveOrder = model.entities.sorted { a, b in
            let order = a.name.caseInsensitiveCompare(b.name)
            return order == .orderedSame ? a.name < b.name : order == .orderedAscending
        }
        numberEntities(fixed: entityNumbers)
        mapColumns()
        mapManyToMany()
        indexTables()
    }

    /// Entities sorted the way Core Data walks them: case-insensitively by name (sorted once,
    /// in `init`: the walks below use it for every table).
    let caseInsensitiveOrder: [EntityDescription]

    /// Positions in ``tables`` and ``joinTables`` by name, for ``table(named:)`` and
    /// ``joinTable(named:)``; a look-up checks the name at the position, so a stale entry
    /// only costs a scan.
    private var tablePositions: [String: Int] = [:]
    private var joinTablePositions: [String: Int] = [:]

    /// Records where each table and join table is, after the lists were built or changed.
    mutating func indexTables() {
        tablePositions = [:]
        for (i, table) in tables.enumerated() where tablePositions[table.name] == nil { tablePositions[table.name] = i }
        joinTablePositions = [:]
        for (i, join) in joinTables.enumerated() where joinTablePositions[join.name] == nil { joinTablePositions[join.name] = i }
    }

    private mutating func numberEntities(fixed: [String: Int]) {
        var next = 1
        func visit(_ entity: EntityDescription, superNumber: Int, table: String) {
            let number = fixed[entity.name] ?? next
            next += 1
            entities[entity.name] = EntityMapping(name: entity.name, entityNumber: number, superNumber: superNumber, table: table)
            entityNames[number] = entity.name
            let children = entity.subentityNames.compactMap { model.entity(named: $0) }.sorted { a, b in
                let order = a.name.caseInsensitiveCompare(b.name)
                return order == .orderedSame ? a.name < b.name : order == .orderedAscending
            }
            for child in children { visit(child, superNumber: number, table: table) }
        }
        for entity in caseInsensitiveOrder where entity.superentityName == nil {
            visit(entity, superNumber: 0, table: SchemaMapping.tableName(for: entity.name))
        }
        for entity in model.entities {
            let numbers = model.entityAndDescendants(of: entity).compactMap { entities[$0.name]?.entityNumber }
            entities[entity.name]?.subtreeNumbers = (numbers.min() ?? 0)...(numbers.max() ?? 0)
        }
        tables = []
        for entity in caseInsensitiveOrder where entity.superentityName == nil {
            let numbers = model.entityAndDescendants(of: entity).compactMap { entities[$0.name]?.entityNumber }
            tables.append(TableMapping(name: SchemaMapping.tableName(for: entity.name), rootEntity: entity.name, entityNumbers: numbers))
        }
    }

    /// `Z` + the name upper-cased (ASCII only, one UTF-16 unit at a time).
    public static func tableName(for entityName: String) -> String { "Z" + asciiUppercase(entityName) }

    static func asciiUppercase(_ s: String) -> String {
        String(decoding: s.utf16.map { (0x61...0x7A).contains($0) ? $0 - 0x20 : $0 }, as: UTF16.self)
    }

    private mutating func mapColumns() {
        // To-many relationships without an inverse, by the table of their destination (where
        // their hidden foreign key goes), in the order Core Data adds the columns.
        var hiddenByTable: [String: [(source: EntityDescription, relationship: RelationshipDescription)]] = [:]
        for source in caseInsensitiveOrder {
            for relationship in source.declaredRelationships.sorted(by: { $0.name < $1.name })
            where relationship.isToMany && relationship.inverseName == nil && !relationship.isTransient {
                guard let destination = model.entity(named: relationship.destinationEntityName) else { continue }
                let table = SchemaMapping.tableName(for: model.rootEntity(of: destination).name)
                hiddenByTable[table, default: []].append((source, relationship))
            }
        }
        for tableIndex in tables.indices {
            let table = tables[tableIndex]
            guard let root = model.entity(named: table.rootEntity) else { continue }
            var used: Set<String> = ["Z_PK", "Z_ENT", "Z_OPT"]
            var counters: [String: Int] = [:]
            func unique(_ base: String) -> String {
                if used.insert(base).inserted { return base }
                var n = counters[base, default: 0]
                while true {
                    n += 1
                    let candidate = base + String(n)
                    if used.insert(candidate).inserted {
                        counters[base] = n
                        return candidate
                    }
                }
            }
            var columns: [ColumnMapping] = [
                ColumnMapping(name: "Z_PK", sqlType: "INTEGER PRIMARY KEY", kind: .primaryKey, group: 0),
                ColumnMapping(name: "Z_ENT", sqlType: "INTEGER", kind: .entityKey, group: 0),
                ColumnMapping(name: "Z_OPT", sqlType: "INTEGER", kind: .optimisticLock, group: 0),
            ]
            var late: [ColumnMapping] = []
            let hierarchy = model.entityAndDescendants(of: root)
            for entity in hierarchy {
                for attribute in entity.declaredAttributes.sorted(by: { $0.name < $1.name }) where !attribute.isTransient {
                    let column = unique("Z" + SchemaMapping.asciiUppercase(attribute.name))
                    let type = SchemaMapping.sqlType(for: attribute.attributeType)
                    columns.append(ColumnMapping(name: column, sqlType: type, kind: .attribute(entity: entity.name, name: attribute.name), group: SchemaMapping.group(for: attribute.attributeType)))
                    for e in model.entityAndDescendants(of: entity) { entities[e.name]?.attributeColumns[attribute.name] = column }
                }
                for relationship in entity.declaredRelationships.sorted(by: { $0.name < $1.name }) where relationship.isToOne && !relationship.isTransient {
                    let fk = unique("Z" + SchemaMapping.asciiUppercase(relationship.name))
                    columns.append(ColumnMapping(name: fk, sqlType: "INTEGER", kind: .foreignKey(entity: entity.name, relationship: relationship.name), group: 1))
                    var entityColumn: String?
                    if let destination = model.entity(named: relationship.destinationEntityName), destination.hasSubentities,
                        let number = entities[destination.name]?.entityNumber
                    {
                        let name = unique("Z\(number)_" + SchemaMapping.asciiUppercase(relationship.name))
                        entityColumn = name
                        columns.append(ColumnMapping(name: name, sqlType: "INTEGER", kind: .foreignEntityKey(entity: entity.name, relationship: relationship.name), group: 1))
                    }
                    var orderColumn: String?
                    if let inverse = model.inverse(of: relationship), inverse.isToMany, inverse.isOrdered {
                        let name = unique("Z_FOK_" + SchemaMapping.asciiUppercase(relationship.name))
                        orderColumn = name
                        late.append(ColumnMapping(name: name, sqlType: "INTEGER", kind: .orderKey(entity: entity.name, relationship: relationship.name), group: 1))
                    }
                    for e in model.entityAndDescendants(of: entity) {
                        entities[e.name]?.toOneColumns[relationship.name] = ForeignKeyColumns(foreignKey: fk, entityColumn: entityColumn, orderColumn: orderColumn)
                    }
                }
            }
            // Hidden foreign keys: to-many relationships without an inverse, stored in the destination's table.
            for (source, relationship) in hiddenByTable[table.name] ?? [] {
                guard let number = entities[source.name]?.entityNumber else { continue }
                let name = unique("Z\(number)" + SchemaMapping.asciiUppercase(relationship.name))
                late.append(ColumnMapping(name: name, sqlType: "INTEGER", kind: .hiddenForeignKey(entity: source.name, relationship: relationship.name), group: 1))
                for e in model.entityAndDescendants(of: source) {
                    entities[e.name]?.hiddenForeignKeys[relationship.name] = HiddenForeignKey(table: table.name, column: name)
                }
            }
            columns += late
            // Stable sort by type group; the three fixed columns stay first.
            let sorted = columns.enumerated().sorted { a, b in
                a.element.group != b.element.group ? a.element.group < b.element.group : a.offset < b.offset
            }.map(\.element)
            tables[tableIndex].columns = sorted
        }
    }

    private mutating func mapManyToMany() {
        var named: Set<String> = []
        for entity in caseInsensitiveOrder {
            for relationship in entity.relationships.sorted(by: { $0.name < $1.name }) where relationship.isToMany && !relationship.isTransient {
                guard let inverse = model.inverse(of: relationship), inverse.isToMany else { continue }
                guard let declaring = declaringEntity(of: relationship.name, in: entity),
                    let destinationDeclaring = model.entity(named: relationship.destinationEntityName).flatMap({ declaringEntity(of: inverse.name, in: $0) }),
                    let e = entities[declaring.name]?.entityNumber,
                    let d = entities[destinationDeclaring.name]?.entityNumber
                else { continue }
                let pairKey = [declaring.name + "." + relationship.name, destinationDeclaring.name + "." + inverse.name].sorted().joined(separator: "|")
                guard named.insert(pairKey).inserted else { continue }
                let reflexive = declaring.name == destinationDeclaring.name && relationship.name == inverse.name
                let tableName = "Z_\(e)" + SchemaMapping.asciiUppercase(relationship.name)
                let sourceColumn = "Z_\(e)" + SchemaMapping.asciiUppercase(inverse.name)
                let destinationColumn = reflexive ? "REFLEXIVE" : "Z_\(d)" + SchemaMapping.asciiUppercase(relationship.name)
                var join = JoinTableMapping(
                    name: tableName, sourceEntity: declaring.name, relationship: relationship.name,
                    destinationEntity: destinationDeclaring.name, inverseRelationship: inverse.name,
                    sourceColumn: sourceColumn, destinationColumn: destinationColumn)
                if inverse.isOrdered { join.sourceOrderColumn = reflexive ? "FOK_REFLEXIVE" : "Z_FOK_\(e)" + SchemaMapping.asciiUppercase(inverse.name) }
                if relationship.isOrdered && !reflexive { join.destinationOrderColumn = "Z_FOK_\(d)" + SchemaMapping.asciiUppercase(relationship.name) }
                joinTables.append(join)
                for x in model.entityAndDescendants(of: declaring) { entities[x.name]?.manyToMany[relationship.name] = join.name }
                for x in model.entityAndDescendants(of: destinationDeclaring) { entities[x.name]?.manyToMany[inverse.name] = join.name }
            }
        }
    }

    private func declaringEntity(of property: String, in entity: EntityDescription) -> EntityDescription? {
        for ancestor in model.inheritanceChain(of: entity) where ancestor.declaredRelationships.contains(where: { $0.name == property }) {
            return ancestor
        }
        return nil
    }

    /// The join table with this name.
    public func joinTable(named name: String) -> JoinTableMapping? {
        if let i = joinTablePositions[name], i < joinTables.count, joinTables[i].name == name { return joinTables[i] }
        return joinTables.first { $0.name == name }
    }

    /// The declared SQL type Core Data gives an attribute type.
    public static func sqlType(for type: AttributeType) -> String {
        switch type {
        case .integer16, .integer32, .integer64, .boolean: "INTEGER"
        case .decimal: "DECIMAL"
        case .double, .float: "FLOAT"
        case .date: "TIMESTAMP"
        case .string, .uri, .objectID: "VARCHAR"
        case .binaryData, .uuid, .transformable: "BLOB"
        case .undefined, .composite: "UNDEFINED"
        }
    }

    /// The DDL sort group of an attribute column. Verified on the corpus stores (202 tables):
    /// integers and Booleans (with foreign keys, `Z<n>_` and `Z_FOK_` columns) first; then
    /// floats, doubles and dates interleaved (Decimal assumed with them); then strings; then
    /// URIs (after every string, even a sub-entity's: `ZSHARE`); then Transformables (before
    /// binaries, even a sub-entity's: `ZMEMORY`, `ZGENERICALBUM`); then binary data (inline
    /// and external interleaved) and UUIDs (assumed; no corpus store has one).
    static func group(for type: AttributeType) -> Int {
        switch type {
        case .integer16, .integer32, .integer64, .boolean: 1
        case .decimal, .double, .float, .date: 2
        case .string, .objectID: 3
        case .uri: 4
        case .transformable: 5
        case .binaryData, .uuid: 6
        case .undefined, .composite: 7
        }
    }
}

/// Where one entity lives: its number, its table, and the column of each property.
public struct EntityMapping: Sendable, Hashable {
    /// The stored values, shared by all copies (see ``SharedFields``).
    struct Fields: Sendable, Hashable {
        var name: String = ""
        var entityNumber: Int = 0
        var superNumber: Int = 0
        var table: String = ""
        var subtreeNumbers: ClosedRange<Int> = 0...0
        var attributeColumns: [String: String] = [:]
        var toOneColumns: [String: ForeignKeyColumns] = [:]
        var hiddenForeignKeys: [String: HiddenForeignKey] = [:]
        var manyToMany: [String: String] = [:]
    }

    private var box = SharedFields(Fields())

    private mutating func update(_ change: (inout Fields) -> Void) { box = box.updated(change) }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.box.holdsSameFields(as: rhs.box) }

    public func hash(into hasher: inout Hasher) { hasher.combine(box.fields) }

    /// A mapping with no columns yet.
    public init(name: String, entityNumber: Int, superNumber: Int, table: String) {
        self.name = name
        self.entityNumber = entityNumber
        self.superNumber = superNumber
        self.table = table
    }

    /// The entity name.
    public var name: String {
        get { box.fields.name }
        set { update { $0.name = newValue } }
    }
    /// The `Z_ENT` number.
    public var entityNumber: Int {
        get { box.fields.entityNumber }
        set { update { $0.entityNumber = newValue } }
    }
    /// The parent's `Z_ENT`, 0 for a root.
    public var superNumber: Int {
        get { box.fields.superNumber }
        set { update { $0.superNumber = newValue } }
    }
    /// The table (the root entity's).
    public var table: String {
        get { box.fields.table }
        set { update { $0.table = newValue } }
    }
    /// The `Z_ENT` numbers of this entity and all its sub-entities (contiguous).
    public var subtreeNumbers: ClosedRange<Int> {
        get { box.fields.subtreeNumbers }
        set { update { $0.subtreeNumbers = newValue } }
    }
    /// Attribute name → column.
    public var attributeColumns: [String: String] {
        get { box.fields.attributeColumns }
        set { update { $0.attributeColumns = newValue } }
    }
    /// To-one relationship name → its foreign key columns.
    public var toOneColumns: [String: ForeignKeyColumns] {
        get { box.fields.toOneColumns }
        set { update { $0.toOneColumns = newValue } }
    }
    /// To-many without inverse → the hidden foreign key in the destination table.
    public var hiddenForeignKeys: [String: HiddenForeignKey] {
        get { box.fields.hiddenForeignKeys }
        set { update { $0.hiddenForeignKeys = newValue } }
    }
    /// Many-to-many relationship name → join table name.
    public var manyToMany: [String: String] {
        get { box.fields.manyToMany }
        set { update { $0.manyToMany = newValue } }
    }
}

/// The columns behind a to-one relationship.
public struct ForeignKeyColumns: Sendable, Hashable {
    /// The column holding the destination's `Z_PK`.
    public var foreignKey: String
    /// `Z<n>_REL`: the destination row's `Z_ENT`, when the destination has sub-entities.
    public var entityColumn: String?
    /// `Z_FOK_REL`: the position in the inverse ordered to-many.
    public var orderColumn: String?
}

/// A foreign key Core Data adds to the destination table of a to-many relationship without inverse.
public struct HiddenForeignKey: Sendable, Hashable {
    /// The destination table.
    public var table: String
    /// The column (`Z3ASSETS`).
    public var column: String
}

/// One column of an entity table.
public struct ColumnMapping: Sendable, Hashable {
    /// What a column holds.
    public enum Kind: Sendable, Hashable {
        /// `Z_PK`.
        case primaryKey
        /// `Z_ENT`.
        case entityKey
        /// `Z_OPT`.
        case optimisticLock
        /// An attribute's value.
        case attribute(entity: String, name: String)
        /// A to-one relationship's destination `Z_PK`.
        case foreignKey(entity: String, relationship: String)
        /// A to-one relationship's destination `Z_ENT`.
        case foreignEntityKey(entity: String, relationship: String)
        /// A position in an ordered to-many.
        case orderKey(entity: String, relationship: String)
        /// The source `Z_PK` of a to-many relationship without inverse.
        case hiddenForeignKey(entity: String, relationship: String)
    }

    /// The column name.
    public var name: String
    /// The declared SQL type.
    public var sqlType: String
    /// What it holds.
    public var kind: Kind
    /// Sort group in the DDL (0 fixed columns, 1 integers, 2 reals and dates, 3 strings, 4 URIs,
    /// 5 Transformables, 6 other blobs); see `SchemaMapping.group(for:)`.
    var group: Int
}

/// One entity table: an inheritance root and everything below it.
public struct TableMapping: Sendable, Hashable {
    /// The table name (`ZLOCATION`).
    public var name: String
    /// The root entity.
    public var rootEntity: String
    /// The `Z_ENT` numbers stored in the table.
    public var entityNumbers: [Int]
    /// The columns, in Core Data's DDL order.
    public var columns: [ColumnMapping] = []
}

/// A many-to-many join table.
public struct JoinTableMapping: Sendable, Hashable {
    /// The table name (`Z_1TAGS`).
    public var name: String
    /// The entity declaring the naming relationship.
    public var sourceEntity: String
    /// The naming relationship.
    public var relationship: String
    /// The entity declaring the inverse.
    public var destinationEntity: String
    /// The inverse relationship.
    public var inverseRelationship: String
    /// Holds the source row's `Z_PK` (`Z_<e><INVERSE>`).
    public var sourceColumn: String
    /// Holds the destination row's `Z_PK` (`Z_<d><RELATIONSHIP>`, or `REFLEXIVE`).
    public var destinationColumn: String
    /// Position of the source row inside the destination's ordered inverse.
    public var sourceOrderColumn: String?
    /// Position of the destination row inside the source's ordered relationship.
    public var destinationOrderColumn: String?
}
