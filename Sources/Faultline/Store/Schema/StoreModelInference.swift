import FaultlineModel
import FaultlineSQL
import Foundation

/// Builds a model for a store that has no `Z_MODELCACHE` and was opened without a model:
/// entities and inheritance from `Z_PRIMARYKEY`, properties from the tables.
///
/// Everything beyond the entity names is a guess, because the store does not record it:
///
/// - every column of a table is put on its root entity (sub-entities inherit it);
/// - a column `ZNAME` becomes the attribute `name` (lower-cased: the original case is lost),
///   typed from its declared SQL type (INTEGER → Integer 64, FLOAT → Double, TIMESTAMP →
///   Date, DECIMAL → Decimal, VARCHAR → String, BLOB → Binary Data);
/// - an INTEGER column with Core Data's foreign key index (`<TABLE>_<COLUMN>_INDEX`) becomes a
///   to-one relationship when its destination can be guessed: from a `Z<n>_<NAME>` entity
///   column, else an entity whose table-style name equals the column's, else the one entity
///   whose table-style name ends with it (`ZCATEGORY` → `FeedbackCategory`); otherwise it
///   stays an integer attribute;
/// - a hidden foreign key `Z<n><NAME>` becomes a to-many relationship without inverse on
///   entity `n`;
/// - a join table `Z_<n><NAME>` becomes a pair of inverse to-many relationships.
enum StoreModelInference {
    struct Result {
        var model: ManagedObjectModel
        var notes: [String]
    }

    private struct Entry {
        var number: Int
        var name: String
        var superNumber: Int
    }

    static func infer(connection: Connection, path: String) throws -> Result {
        do {
            return try inferThrowingSQL(connection: connection, path: path)
        } catch let error as SQLiteError {
            throw PersistentStoreError(.notAStore, "cannot infer a model: \(error.message)", path: path)
        } catch let error as ModelError {
            throw PersistentStoreError(.noModel, "cannot infer a model from the tables: \(error.message)", path: path)
        }
    }

    private static func inferThrowingSQL(connection: Connection, path: String) throws -> Result {
        guard try connection.tableExists("Z_PRIMARYKEY") else {
            throw PersistentStoreError(.notAStore, "not a Core Data store: it has no Z_PRIMARYKEY table", path: path)
        }
        var notes: [String] = []
        var entries: [Int: Entry] = [:]
        for row in try connection.query("SELECT Z_ENT, Z_NAME, Z_SUPER FROM Z_PRIMARYKEY ORDER BY Z_ENT") {
            guard let number = row[0].int64.map(Int.init), let name = row[1].string else { continue }
            // Ancillary entities (persistent history, CloudKit) are the framework's, not the model's.
            if number >= 16000 { continue }
            entries[number] = Entry(number: number, name: name, superNumber: Int(row[2].int64 ?? 0))
        }
        var indexed: Set<String> = []  // "TABLE.COLUMN" with Core Data's FK index
        for row in try connection.query("SELECT name, tbl_name FROM sqlite_master WHERE type = 'index'") {
            guard let name = row[0].string, let table = row[1].string, name.hasPrefix(table + "_"), name.hasSuffix("_INDEX") else { continue }
            let column = String(name.dropFirst(table.count + 1).dropLast("_INDEX".count))
            indexed.insert(table + "." + column)
        }
        let tableOwner: [String: Entry] = Dictionary(
            entries.values.filter { $0.superNumber == 0 }.map { (SchemaMapping.tableName(for: $0.name), $0) },
            uniquingKeysWith: { a, _ in a })
        let entityByUpperName: [String: Entry] = Dictionary(
            entries.values.map { (SchemaMapping.asciiUppercase($0.name), $0) }, uniquingKeysWith: { a, _ in a })

        var attributes: [String: [AttributeDescription]] = [:]
        var relationships: [String: [RelationshipDescription]] = [:]
        var taken: [String: Set<String>] = [:]  // property names per root entity
        func add(_ r: RelationshipDescription, to entity: String) {
            relationships[entity, default: []].append(r)
            taken[entity, default: []].insert(r.name)
        }

        for (table, owner) in tableOwner.sorted(by: { $0.key < $1.key }) {
            guard try connection.tableExists(table) else {
                notes.append("table \(table) of entity \(owner.name) is missing")
                continue
            }
            let columns = try connection.columns(ofTable: table)
            let names = Set(columns.map(\.name))
            for column in columns {
                let name = column.name
                if ["Z_PK", "Z_ENT", "Z_OPT"].contains(name) || name.hasPrefix("Z_FOK_") { continue }
                if entityColumnNumber(name) != nil { continue }
                guard name.hasPrefix("Z") else {
                    notes.append("\(table).\(name) does not follow Core Data's naming; left out")
                    continue
                }
                let type = column.declaredType.uppercased()
                let rest = String(name.dropFirst())
                if type == "INTEGER", indexed.contains(table + "." + name) {
                    if let (sourceNumber, relName) = hiddenForeignKey(rest), let source = entries[sourceNumber] {
                        let relationship = RelationshipDescription(name: relName.lowercased(), destination: owner.name, toMany: true)
                        if !(taken[source.name]?.contains(relationship.name) ?? false) {
                            add(relationship, to: source.name)
                            continue
                        }
                    }
                    let destination = names.compactMap { c -> Entry? in
                        guard let (n, rel) = entityColumn(c), rel == rest else { return nil }
                        return entries[n]
                    }.first ?? entityByUpperName[rest] ?? uniqueSuffixMatch(rest, in: entityByUpperName, owner: owner.name)
                    if let destination {
                        add(RelationshipDescription(name: rest.lowercased(), destination: destination.name), to: owner.name)
                        continue
                    }
                    notes.append("\(table).\(name) looks like a foreign key, but its destination cannot be guessed; read as an integer")
                }
                let attribute = AttributeDescription(name: rest.lowercased(), type: attributeType(forDeclared: type))
                guard !(taken[owner.name]?.contains(attribute.name) ?? false) else { continue }
                attributes[owner.name, default: []].append(attribute)
                taken[owner.name, default: []].insert(attribute.name)
            }
        }

        // Join tables: Z_<e><R> ( Z_<e><I>, Z_<d><R> | REFLEXIVE, … ).
        for row in try connection.query("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'Z\\_%' ESCAPE '\\' ORDER BY name") {
            guard let table = row[0].string, !["Z_PRIMARYKEY", "Z_METADATA", "Z_MODELCACHE"].contains(table),
                let (e, relName) = joinName(String(table.dropFirst(2))), let source = entries[e]
            else { continue }
            let columns = try connection.columns(ofTable: table).map(\.name).filter { !$0.hasPrefix("Z_FOK_") && $0 != "FOK_REFLEXIVE" }
            let rName = relName.lowercased()
            if columns.contains("REFLEXIVE") {
                add(RelationshipDescription(name: rName, destination: source.name, inverse: rName, toMany: true), to: source.name)
                continue
            }
            let parsed = columns.compactMap { c -> (Int, String)? in joinName(String(c.dropFirst(2))).flatMap { c.hasPrefix("Z_") ? $0 : nil } }
            guard parsed.count == 2, let destinationSide = parsed.first(where: { $0.1 == relName }),
                let sourceSide = parsed.first(where: { !($0.0 == destinationSide.0 && $0.1 == destinationSide.1) }),
                let destination = entries[destinationSide.0]
            else {
                notes.append("join table \(table) has columns Faultline cannot read as a many-to-many relationship")
                continue
            }
            let iName = sourceSide.1.lowercased()
            if taken[source.name]?.contains(rName) ?? false || taken[destination.name]?.contains(iName) ?? false { continue }
            add(RelationshipDescription(name: rName, destination: destination.name, inverse: iName, toMany: true), to: source.name)
            add(RelationshipDescription(name: iName, destination: source.name, inverse: rName, toMany: true), to: destination.name)
        }

        // Relationships must be declared on the entity that has them; columns were put on roots.
        let descriptions = entries.values.sorted { $0.number < $1.number }.map { entry in
            EntityDescription(
                name: entry.name,
                superentityName: entry.superNumber == 0 ? nil : entries[entry.superNumber]?.name,
                attributes: attributes[entry.name] ?? [],
                relationships: relationships[entry.name] ?? [])
        }
        let model = try ManagedObjectModel(entities: descriptions, sourceDescription: "\(path) (inferred from the tables)")
        return Result(model: model, notes: notes.map { "\(path): \($0)" })
    }

    /// The one entity other than the column's own whose upper-cased name ends with `name`
    /// (`CATEGORY` in `ZFEEDBACKSUBCATEGORY` → `FeedbackCategory`), else the own entity when
    /// it is the only match.
    private static func uniqueSuffixMatch(_ name: String, in entities: [String: Entry], owner: String) -> Entry? {
        let matches = entities.values.filter { SchemaMapping.asciiUppercase($0.name).hasSuffix(name) }
        let others = matches.filter { $0.name != owner }
        if others.count == 1 { return others.first }
        return matches.count == 1 ? matches.first : nil
    }

    static func attributeType(forDeclared type: String) -> AttributeType {
        switch type {
        case "INTEGER": .integer64
        case "FLOAT", "REAL", "DOUBLE": .double
        case "TIMESTAMP": .date
        case "DECIMAL": .decimal
        case "VARCHAR", "TEXT": .string
        default: .binaryData
        }
    }

    /// `Z34_ASSET` → 34 (an entity-key column).
    static func entityColumnNumber(_ name: String) -> Int? { entityColumn(name)?.0 }

    /// `Z34_ASSET` → (34, "ASSET").
    static func entityColumn(_ name: String) -> (Int, String)? {
        guard name.hasPrefix("Z"), let underscore = name.firstIndex(of: "_") else { return nil }
        let digits = name[name.index(after: name.startIndex)..<underscore]
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let n = Int(digits) else { return nil }
        return (n, String(name[name.index(after: underscore)...]))
    }

    /// `3ASSETS` (after the `Z`) → (3, "ASSETS"): a hidden foreign key.
    static func hiddenForeignKey(_ rest: String) -> (Int, String)? { joinName(rest) }

    /// `26ASSETS` → (26, "ASSETS").
    static func joinName(_ s: String) -> (Int, String)? {
        let digits = s.prefix { $0.isASCII && $0.isNumber }
        guard !digits.isEmpty, let n = Int(digits), digits.count < s.count else { return nil }
        return (n, String(s.dropFirst(digits.count)))
    }
}
