import FaultlineModel
import FaultlinePredicate
import FaultlineSQL
import Foundation
import FaultlineTestSupport
import Testing

@testable import Faultline


/// An in-memory object for evaluation: properties by name, and its primary key for `==`.
private final class Node: KeyValueCoding, FLPredicateArgumentConvertible {
    let pk: Int
    var values: [String: Any?] = [:]
    init(pk: Int) { self.pk = pk }
    func value(forKey key: String) -> Any? { values[key] ?? nil }
    var predicateValue: FLValue { .object(FLObjectReference(pk)) }
}

private let recipeNames = ["Crème brûlée", "Crepe", "crêpe Suzette", "Äpfel im Schlafrock", "apple pie", "Ramen", "RAMEN deluxe",
                           "Gâteau", "gateau basque", "Pho", "phở bò", "Tarte Tatin", "tarte au citron", "Pad thai", "Paella"]
private let authorNames = ["Ann", "ánn marie", "Bob", "Zoë", "zoe"]
private let tagNames = ["vegan", "Vegetarian", "quick", "spicy", "Süß", "sweet"]
private let ingredientNames = ["salt", "Sugar", "sucre", "flour", "Œuf", "egg", "butter", "crème fraîche"]
private let fragments = ["a", "e", "cr", "CR", "ê", "te", "pie", "ram", "é", "o", "x", "Tar"]

private func model() throws -> ManagedObjectModel {
    try ManagedObjectModel(entities: [
        EntityDescription(name: "Recipe", attributes: [
            .init(name: "name", type: .string), .init(name: "rating", type: .integer32),
            .init(name: "price", type: .double), .init(name: "created", type: .date), .init(name: "isFavorite", type: .boolean),
        ], relationships: [
            .init(name: "author", destination: "Author", inverse: "recipes"),
            .init(name: "ingredients", destination: "Ingredient", inverse: "recipe", toMany: true),
            .init(name: "tags", destination: "Tag", inverse: "recipes", toMany: true),
        ]),
        EntityDescription(name: "Author", attributes: [.init(name: "name", type: .string)], relationships: [
            .init(name: "recipes", destination: "Recipe", inverse: "author", toMany: true),
            .init(name: "publisher", destination: "Publisher", inverse: "authors"),
        ]),
        EntityDescription(name: "Publisher", attributes: [.init(name: "name", type: .string)],
                          relationships: [.init(name: "authors", destination: "Author", inverse: "publisher", toMany: true)]),
        EntityDescription(name: "Ingredient", attributes: [.init(name: "name", type: .string), .init(name: "amount", type: .double)],
                          relationships: [.init(name: "recipe", destination: "Recipe", inverse: "ingredients")]),
        EntityDescription(name: "Tag", attributes: [.init(name: "name", type: .string)],
                          relationships: [.init(name: "recipes", destination: "Recipe", inverse: "tags", toMany: true)]),
    ])
}

/// A seeded store and the same graph in memory.
private struct Fixture {
    let mapping: SchemaMapping
    let connection: Connection
    let recipes: [Node]

    init(seed: UInt64) throws {
        let mapping = SchemaMapping(model: try model())
        let connection = try Connection(path: ":memory:", mode: .inMemory)
        try CoreDataFunctions.register(on: connection)
        for statement in mapping.createStatements() { try connection.execute(statement) }
        var random = SeededRandom(state: seed)

        func insert(_ entity: String, _ pk: Int, _ values: [String: SQLValue]) throws {
            guard let em = mapping.entity(entity) else { return }
            var columns = ["Z_PK", "Z_ENT", "Z_OPT"]
            var args: [SQLValue] = [.integer(Int64(pk)), .integer(Int64(em.entityNumber)), .integer(1)]
            for (key, value) in values.sorted(by: { $0.key < $1.key }) {
                guard let column = em.attributeColumns[key] ?? em.toOneColumns[key]?.foreignKey else { continue }
                columns.append(column)
                args.append(value)
            }
            let marks = Array(repeating: "?", count: columns.count).joined(separator: ", ")
            try connection.execute("INSERT INTO \(em.table)(\(columns.joined(separator: ", "))) VALUES(\(marks))", args)
        }

        var publishers: [Node] = []
        for (i, name) in ["Penguin", "Ørbit", "acme"].enumerated() {
            let p = Node(pk: i + 1)
            p.values["name"] = name
            publishers.append(p)
            try insert("Publisher", p.pk, ["name": .text(name)])
        }
        var authors: [Node] = []
        for (i, name) in authorNames.enumerated() {
            let a = Node(pk: i + 1)
            a.values["name"] = name
            let publisher: Node? = i == 0 ? nil : random.pick(publishers)
            a.values["publisher"] = publisher
            authors.append(a)
            try insert("Author", a.pk, ["name": .text(name), "publisher": publisher.map { .integer(Int64($0.pk)) } ?? .null])
        }
        var tags: [Node] = []
        for (i, name) in tagNames.enumerated() {
            let t = Node(pk: i + 1)
            t.values["name"] = name
            tags.append(t)
            try insert("Tag", t.pk, ["name": .text(name)])
        }
        var recipes: [Node] = []
        var ingredientPK = 1
        let join = mapping.joinTables.first { $0.relationship == "tags" || $0.inverseRelationship == "tags" }
        for i in 0..<40 {
            let r = Node(pk: i + 1)
            let name = recipeNames[i % recipeNames.count] + (i >= recipeNames.count ? " \(i)" : "")
            let rating = random.int(0...5)
            let price = Double(random.int(0...400)) / 8
            let created = Date(timeIntervalSinceReferenceDate: Double(random.int(0...1000)) * 86400)
            let favorite = random.chance(30)
            let author = random.pick(authors)
            r.values = ["name": name, "rating": rating, "price": price, "created": created, "isFavorite": favorite, "author": author]
            try insert("Recipe", r.pk, ["name": .text(name), "rating": .integer(Int64(rating)), "price": .real(price),
                                        "created": .real(created.timeIntervalSinceReferenceDate), "isFavorite": .integer(favorite ? 1 : 0),
                                        "author": .integer(Int64(author.pk))])
            var ingredients: [Node] = []
            for _ in 0..<random.int(0...4) {
                let n = Node(pk: ingredientPK)
                ingredientPK += 1
                let iname = random.pick(ingredientNames)
                let amount = Double(random.int(1...40)) / 4
                n.values = ["name": iname, "amount": amount, "recipe": r]
                ingredients.append(n)
                try insert("Ingredient", n.pk, ["name": .text(iname), "amount": .real(amount), "recipe": .integer(Int64(r.pk))])
            }
            r.values["ingredients"] = ingredients
            var recipeTags: [Node] = []
            for t in tags where random.chance(25) {
                recipeTags.append(t)
                if let join {
                    let recipeIsSource = join.sourceEntity == "Recipe"
                    let (rc, tc) = recipeIsSource ? (join.sourceColumn, join.destinationColumn) : (join.destinationColumn, join.sourceColumn)
                    try connection.execute("INSERT INTO \(join.name)(\(rc), \(tc)) VALUES(?, ?)", [.integer(Int64(r.pk)), .integer(Int64(t.pk))])
                }
            }
            r.values["tags"] = recipeTags
            recipes.append(r)
        }
        for a in authors { a.values["recipes"] = recipes.filter { ($0.values["author"] ?? nil) as? Node === a } }
        self.mapping = mapping
        self.connection = connection
        self.recipes = recipes
    }

    /// The primary keys SQL selects for a predicate.
    func sqlKeys(_ predicate: FLPredicate) throws -> Set<Int> {
        var generator = try PredicateSQL(mapping: mapping, entityName: "Recipe")
        let whereText = try generator.whereClause(predicate)
        var sql = "SELECT " + (generator.needsDistinct ? "DISTINCT " : "") + "t0.Z_PK FROM ZRECIPE t0" + generator.joins
        if let whereText { sql += " WHERE " + whereText }
        return Set(try connection.query(sql, generator.arguments).compactMap { $0[0].int64.map(Int.init) })
    }

    /// The primary keys in-memory evaluation selects.
    func memoryKeys(_ predicate: FLPredicate) throws -> Set<Int> {
        Set(try recipes.filter { try predicate.evaluate(with: $0) }.map(\.pk))
    }
}

/// Builds random predicates from atoms whose SQL and in-memory meanings agree
/// (`negatable` atoms never meet NULL, so `NOT` means the same in SQLite's three-valued logic).
private struct PredicateFactory {
    var random: SeededRandom

    mutating func atom(negatable: Bool) -> String {
        var atoms: [String] = [
            "rating > \(random.int(0...5))", "rating == \(random.int(0...5))", "rating != \(random.int(0...5))",
            "rating BETWEEN {\(random.int(0...2)), \(random.int(2...5))}", "rating IN {\(random.int(0...5)), \(random.int(0...5))}",
            "price < \(Double(random.int(0...400)) / 8)", "price * rating > \(random.int(0...100))",
            "isFavorite == \(random.pick(["YES", "NO"]))",
            "created > CAST(\(random.int(0...1000) * 86400), 'NSDate')",
            "name BEGINSWITH\(opts()) '\(random.pick(fragments))'", "name CONTAINS\(opts()) '\(random.pick(fragments))'",
            "name ENDSWITH\(opts()) '\(random.pick(fragments))'", "name LIKE\(likeOpts()) '\(random.pick(["*a*", "?r*", "cr*", "*E", "*\u{EA}*", "Tarte*"]))'",
            "name MATCHES\(likeOpts()) '\(random.pick(["[A-Z].*", ".*e.*", "cr.*", "p.* .*"]))'",
            "name ==\(opts()) '\(random.pick(recipeNames))'", "name <\(opts()) '\(random.pick(recipeNames))'",
            "'\(random.pick(["pie", "tar", "e"]))' IN name",
            "author.name BEGINSWITH\(opts()) '\(random.pick(["a", "Z", "b"]))'",
            "author == %@", "%@ IN tags",
            "ANY ingredients.name CONTAINS\(opts()) '\(random.pick(["s", "cr", "œ", "E"]))'",
            "ANY tags.name ==\(opts()) '\(random.pick(tagNames))'", "ANY ingredients.amount > \(random.int(0...10))",
            "NONE tags.name BEGINSWITH\(opts()) '\(random.pick(["s", "v", "q"]))'", "ALL ingredients.amount > \(random.int(0...5))",
            "ingredients.@count > \(random.int(0...3))", "tags.@count == \(random.int(0...2))",
            "ingredients.@sum.amount > \(random.int(0...15))",
            "SUBQUERY(ingredients, $i, $i.amount > \(random.int(0...8)) AND $i.name CONTAINS\(opts()) '\(random.pick(["s", "e", "u"]))').@count > 0",
            "SUBQUERY(tags, $t, $t.name BEGINSWITH\(opts()) 's').@count == \(random.int(0...1))",
            "lowercase:(name) BEGINSWITH '\(random.pick(["c", "p", "t"]))'",
        ]
        if !negatable {
            atoms += [
                "author.publisher == nil", "author.publisher.name ==\(opts()) '\(random.pick(["penguin", "orbit", "acme"]))'",
                "ingredients.@avg.amount > \(random.int(0...8))", "ingredients.@max.amount < \(random.int(0...8))",
            ]
        }
        return random.pick(atoms)
    }

    mutating func opts() -> String { random.pick(["", "", "[c]", "[d]", "[cd]", "[cdl]", "[n]"]) }
    mutating func likeOpts() -> String { random.pick(["", "[c]", "[d]", "[cd]"]) }

    mutating func predicate(depth: Int, negatable: Bool = false) -> String {
        if depth == 0 || random.chance(35) { return atom(negatable: negatable) }
        switch random.int(0...2) {
        case 0: return "(" + predicate(depth: depth - 1, negatable: negatable) + " AND " + predicate(depth: depth - 1, negatable: negatable) + ")"
        case 1: return "(" + predicate(depth: depth - 1, negatable: negatable) + " OR " + predicate(depth: depth - 1, negatable: negatable) + ")"
        default: return "NOT (" + predicate(depth: depth - 1, negatable: true) + ")"
        }
    }
}

extension PredicateSQLTests {
    @Suite("differential: SQL rows equal in-memory evaluation")
    struct Differential {
        @Test func generatedPredicatesSelectTheSameRows() throws {
            let fixture = try Fixture(seed: 2001)
            var factory = PredicateFactory(random: SeededRandom(state: 42))
            var nonTrivial = 0
            for _ in 0..<400 {
                let format = factory.predicate(depth: 3)
                let author = FLValue.object(FLObjectReference(factory.random.int(1...5)))
                let tag = FLValue.object(FLObjectReference(factory.random.int(1...6)))
                var args: [Any?] = []
                var scan = format[...]
                while let range = scan.range(of: "%@") {
                    let before = scan[..<range.lowerBound]
                    args.append(before.hasSuffix("author == ") ? author : tag)
                    scan = scan[range.upperBound...]
                }
                let predicate = try FLPredicate(format: format, arguments: args)
                if args.isEmpty {
                    // The canonical text re-parses to the same tree (parse → print → parse).
                    #expect(try FLPredicate(format: predicate.predicateFormat) == predicate, "\(predicate.predicateFormat)")
                }
                let sql = try fixture.sqlKeys(predicate)
                let memory = try fixture.memoryKeys(predicate)
                #expect(sql == memory, "\(predicate.predicateFormat): SQL-only \(sql.subtracting(memory).sorted()), memory-only \(memory.subtracting(sql).sorted())")
                if !memory.isEmpty && memory.count < fixture.recipes.count { nonTrivial += 1 }
            }
            #expect(nonTrivial > 150)
        }

        @Test func everyAtomAgreesAlone() throws {
            let fixture = try Fixture(seed: 7)
            var factory = PredicateFactory(random: SeededRandom(state: 9))
            for _ in 0..<200 {
                let format = factory.atom(negatable: false)
                guard !format.contains("%@") else { continue }
                let predicate = try FLPredicate(format: format)
                #expect(try fixture.sqlKeys(predicate) == fixture.memoryKeys(predicate), "\(format)")
                let negated = FLPredicate.not(predicate)
                if !format.contains("publisher"), !format.contains("@avg"), !format.contains("@max") {
                    #expect(try fixture.sqlKeys(negated) == fixture.memoryKeys(negated), "NOT \(format)")
                }
            }
        }

        @Test func sortOrderMatches() throws {
            let fixture = try Fixture(seed: 11)
            var generator = try PredicateSQL(mapping: fixture.mapping, entityName: "Recipe")
            let sorts = [FLSortDescriptor(key: "author.name", comparator: .caseInsensitiveCompare), FLSortDescriptor(key: "rating", ascending: false),
                         FLSortDescriptor(key: "name")]
            let order = try generator.orderByClause(sorts) ?? ""
            let sql = "SELECT t0.Z_PK FROM ZRECIPE t0" + generator.joins + " ORDER BY " + order + ", t0.Z_PK"
            let fromSQL = try fixture.connection.query(sql).compactMap { $0[0].int64.map(Int.init) }
            let inMemory = try fixture.recipes.sorted(by: sorts).map(\.pk)
            #expect(fromSQL == inMemory)
        }
    }
}

extension PredicateSQLTests {
    @Suite("Core Data's SQL functions")
    struct Functions {
        let connection: Connection

        init() throws {
            connection = try Connection(path: ":memory:", mode: .inMemory)
            try CoreDataFunctions.register(on: connection)
        }

        func value(_ sql: String, _ args: [SQLValue] = []) throws -> SQLValue? { try connection.scalar(sql, args) }

        @Test func stringSearchFlags() throws {
            #expect(try value("SELECT NSCoreDataStringSearch('Crème Brûlée', 'BRULEE', 417, 1)") == .integer(1))
            #expect(try value("SELECT NSCoreDataStringSearch('Crème Brûlée', 'brûlée', 0, 0)") == .integer(0))
            #expect(try value("SELECT NSCoreDataStringSearch('Crème Brûlée', 'crè', 265, 0)") == .integer(1))
            #expect(try value("SELECT NSCoreDataStringSearch('Crème Brûlée', 'Crè', 8, 0)") == .integer(1))
            #expect(try value("SELECT NSCoreDataStringSearch('Crème Brûlée', 'Crè', 12, 0)") == .integer(0))
            #expect(try value("SELECT NSCoreDataStringSearch('Crème Brûlée', 'lee', 396, 0)") == .integer(1))
            #expect(try value("SELECT NSCoreDataStringSearch(NULL, 'x', 0, 0)") == .null)
            #expect(try value("SELECT NSCoreDataStringSearch('abc', '', 0, 0)") == .integer(0))
            #expect(CoreDataFunctions.options(fromSearchFlags: 417) == [.caseInsensitive, .diacriticInsensitive, .localeSensitive])
            #expect(CoreDataFunctions.options(fromSearchFlags: 10) == .normalized)
        }

        @Test func asciiStringSearchAgreesWithTheGeneralComparison() throws {
            // The byte-level path for ASCII operands answers as FLComparison does, for every
            // flag combination it takes; other flags and non-ASCII text take the general path.
            let texts = ["item 1234", "ITEM 12345", "Item", "", "a", "abcabc", "xItem 1234", "item 1234 ", "Brûlée"]
            let patterns = ["item 1234", "ITEM", "m 12", "34", "", "abc", "cab", "item 12345 and more", "rûl", "RÛL"]
            for flags: Int64 in [0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 0x81, 0x101, 265, 0x1AD, 0x1A5, 0x21, 0x180, 0x10A] {
                let op: FLComparison.Operator = flags & 0xC == 0xC ? .endsWith : (flags & 0x8 != 0 ? .beginsWith : .contains)
                for text in texts {
                    for pattern in patterns {
                        let expected = try FLComparison.compare(text, op, pattern, options: CoreDataFunctions.options(fromSearchFlags: flags))
                        let got = try value("SELECT NSCoreDataStringSearch(?, ?, ?, 0)", [.text(text), .text(pattern), .integer(flags)])
                        #expect(got == .integer(expected ? 1 : 0), "\(text) \(op) \(pattern) flags \(flags)")
                    }
                }
            }
        }

        @Test func likeMatchesCompareAndCase() throws {
            #expect(try value("SELECT NSCoreDataLike('Cake', 'c?K*', 1 )") == .integer(1))
            #expect(try value("SELECT NSCoreDataLike('Cake', 'c?K*', 0 )") == .integer(0))
            #expect(try value("SELECT NSCoreDataMatches('abc123', '[a-z]+[0-9]+', 0 )") == .integer(1))
            #expect(try value("SELECT NSCoreDataMatches('ABC', '[a-z]+', 1 )") == .integer(1))
            #expect(try value("SELECT NSCoreDataStringCompare('Éa', 'ea', 4, 385, 0)") == .integer(1))
            #expect(try value("SELECT NSCoreDataStringCompare('a', 'B', 0, 257, 0)") == .integer(1))
            #expect(try value("SELECT NSCoreDataToUpper('abc')") == .text("ABC"))
            #expect(try value("SELECT NSCoreDataToLower('ABC')") == .text("abc"))
            #expect(try value("SELECT NSCoreDataCanonical('Crème')") == .text("creme"))
            #expect(throws: (any Error).self) { try value("SELECT NSCoreDataMatches('a', '(', 0 )") }
        }
    }
}
