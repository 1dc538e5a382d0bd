import FaultlineModel
import FaultlinePredicate
import FaultlineSQL
import Foundation
import Testing

@testable import Faultline

/// Golden tests of ``PredicateSQL``: exact SQL text and binds (suites nested below).
@Suite("Predicate → SQL")
enum PredicateSQLTests {}

// MARK: - Models from the reference logs

/// Apress "WordList": Word (text, length, wordCategory) → WordCategory (firstLetter, words).
private func wordListModel() throws -> ManagedObjectModel {
    try ManagedObjectModel(entities: [
        EntityDescription(name: "Word", attributes: [
            .init(name: "length", type: .integer16), .init(name: "text", type: .string),
        ], relationships: [.init(name: "wordCategory", destination: "WordCategory", inverse: "words")]),
        EntityDescription(name: "WordCategory", attributes: [.init(name: "firstLetter", type: .string)],
                          relationships: [.init(name: "words", destination: "Word", inverse: "wordCategory", toMany: true)]),
    ])
}

/// A recipe book covering every relationship kind.
private func recipeModel() throws -> ManagedObjectModel {
    try ManagedObjectModel(entities: [
        EntityDescription(name: "Recipe", attributes: [
            .init(name: "name", type: .string), .init(name: "rating", type: .integer32),
            .init(name: "price", type: .double), .init(name: "created", type: .date),
            .init(name: "isFavorite", type: .boolean), .init(name: "uuid", type: .uuid),
            .init(name: "scratch", type: .string, isTransient: true),
        ], relationships: [
            .init(name: "author", destination: "Author", inverse: "recipes"),
            .init(name: "ingredients", destination: "Ingredient", inverse: "recipe", toMany: true),
            .init(name: "tags", destination: "Tag", inverse: "recipes", toMany: true),
        ]),
        EntityDescription(name: "Author", attributes: [.init(name: "name", type: .string)],
                          relationships: [
                            .init(name: "recipes", destination: "Recipe", inverse: "author", toMany: true),
                            .init(name: "publisher", destination: "Publisher", inverse: "authors"),
                          ]),
        EntityDescription(name: "Publisher", attributes: [.init(name: "name", type: .string)],
                          relationships: [.init(name: "authors", destination: "Author", inverse: "publisher", toMany: true)]),
        EntityDescription(name: "Ingredient", attributes: [
            .init(name: "name", type: .string), .init(name: "amount", type: .double),
        ], relationships: [.init(name: "recipe", destination: "Recipe", inverse: "ingredients")]),
        EntityDescription(name: "Tag", attributes: [.init(name: "name", type: .string)],
                          relationships: [.init(name: "recipes", destination: "Recipe", inverse: "tags", toMany: true)]),
    ])
}

/// Composes a fetch the way Core Data prints it (only the three fixed columns).
private func fetchSQL(_ mapping: SchemaMapping, _ entity: String, _ format: String, _ args: Any?...,
                      sort: [FLSortDescriptor] = [], includesSubentities: Bool = true) throws -> (String, [SQLValue]) {
    var generator = try PredicateSQL(mapping: mapping, entityName: entity)
    let predicate = format.isEmpty ? nil : try FLPredicate(format: format, arguments: args)
    let whereText = try generator.whereClause(predicate, includesSubentities: includesSubentities)
    let orderText = try generator.orderByClause(sort)
    let table = mapping.entity(entity)?.table ?? "?"
    let first = mapping.model.entity(named: entity)?.hasSubentities == true ? "t0.Z_ENT" : "0"
    var sql = "SELECT " + (generator.needsDistinct ? "DISTINCT " : "") + "\(first), t0.Z_PK, t0.Z_OPT FROM \(table) t0"
    sql += generator.joins
    if let whereText { sql += " WHERE " + whereText }
    if let orderText { sql += " ORDER BY " + orderText }
    return (sql, generator.arguments)
}

/// The WHERE fragment only.
private func whereSQL(_ mapping: SchemaMapping, _ entity: String, _ format: String, _ args: Any?...) throws -> (String, [SQLValue]) {
    var generator = try PredicateSQL(mapping: mapping, entityName: entity)
    let text = try generator.whereClause(FLPredicate(format: format, arguments: args)) ?? ""
    return (text, generator.arguments)
}

private func sqlError(_ mapping: SchemaMapping, _ entity: String, _ format: String, _ args: Any?...) -> String? {
    do {
        var generator = try PredicateSQL(mapping: mapping, entityName: entity)
        _ = try generator.whereClause(FLPredicate(format: format, arguments: args))
        return nil
    } catch {
        return "\(error)"
    }
}

extension PredicateSQLTests {
    @Suite("verbatim examples from the reference logs")
    struct ReferenceLogs {
        @Test func countThroughToOne() throws {
            // L-COUNT-2 (Apress): … FROM ZWORD t0 JOIN ZWORDCATEGORY t1 ON t0.ZWORDCATEGORY = t1.Z_PK WHERE  t1.ZFIRSTLETTER = ?
            let mapping = SchemaMapping(model: try wordListModel())
            let (sql, args) = try fetchSQL(mapping, "Word", "wordCategory.firstLetter == \"s\"")
            #expect(sql == "SELECT 0, t0.Z_PK, t0.Z_OPT FROM ZWORD t0 JOIN ZWORDCATEGORY t1 ON t0.ZWORDCATEGORY = t1.Z_PK WHERE  t1.ZFIRSTLETTER = ?")
            #expect(args == [.text("s")])
        }

        @Test func simpleComparison() throws {
            // S7: … FROM ZPERSON t0 WHERE t0.ZAGE > ?   (bind[0] = 18)
            let model = try ManagedObjectModel(entities: [EntityDescription(name: "Person", attributes: [
                .init(name: "age", type: .integer16), .init(name: "firstName", type: .string),
            ])])
            let (sql, args) = try fetchSQL(SchemaMapping(model: model), "Person", "age > %@", 18)
            #expect(sql == "SELECT 0, t0.Z_PK, t0.Z_OPT FROM ZPERSON t0 WHERE  t0.ZAGE > ?")
            #expect(args == [.integer(18)])
        }

        @Test func localizedStandardContains() throws {
            // L-STRING B: … FROM ZBOOK t0 WHERE  NSCoreDataStringSearch( t0.ZTITLE, ?, 417, 1) …  bind[0] = "Maui"
            let model = try ManagedObjectModel(entities: [EntityDescription(name: "Book", attributes: [.init(name: "title", type: .string)])])
            let (sql, args) = try fetchSQL(SchemaMapping(model: model), "Book", "title CONTAINS[cdl] %@", "Maui")
            #expect(sql == "SELECT 0, t0.Z_PK, t0.Z_OPT FROM ZBOOK t0 WHERE  NSCoreDataStringSearch( t0.ZTITLE, ?, 417, 1)")
            #expect(args == [.text("Maui")])
        }

        @Test func swiftDataOptionalChainAndSort() throws {
            // L-STRING A: WHERE (( t0.ZPLAYLIST IS NOT NULL AND  t0.ZPLAYLIST = ?) AND  t0.ZGROUP = ?) ORDER BY t0.ZNAME COLLATE NSCollateLocaleSensitive
            let model = try ManagedObjectModel(entities: [
                EntityDescription(name: "Channel", attributes: [.init(name: "group", type: .string), .init(name: "name", type: .string)],
                                  relationships: [.init(name: "playlist", destination: "Playlist", inverse: "channels")]),
                EntityDescription(name: "Playlist", relationships: [.init(name: "channels", destination: "Channel", inverse: "playlist", toMany: true)]),
            ])
            let mapping = SchemaMapping(model: model)
            let playlist = ManagedObjectID(entityName: "Playlist", storeIdentifier: "S", primaryKey: 7)
            let byName = [FLSortDescriptor(key: "name", comparator: .localizedCompare)]

            let (one, oneArgs) = try fetchSQL(mapping, "Channel", "playlist != nil AND playlist == %@", FLValue.object(FLObjectReference(playlist)), sort: byName)
            #expect(one == "SELECT 0, t0.Z_PK, t0.Z_OPT FROM ZCHANNEL t0 WHERE ( t0.ZPLAYLIST IS NOT NULL AND  t0.ZPLAYLIST = ?) ORDER BY t0.ZNAME COLLATE NSCollateLocaleSensitive ")
            #expect(oneArgs == [.integer(7)])

            let (two, _) = try fetchSQL(mapping, "Channel", "(playlist != nil AND playlist == %@) AND group == %@", FLValue.object(FLObjectReference(playlist)), "news")
            #expect(two.hasSuffix("WHERE (( t0.ZPLAYLIST IS NOT NULL AND  t0.ZPLAYLIST = ?) AND  t0.ZGROUP = ?)"))

            let (three, threeArgs) = try fetchSQL(mapping, "Channel", "((playlist != nil AND playlist == %@) AND name CONTAINS[cdl] %@) AND group == %@",
                                                  FLValue.object(FLObjectReference(playlist)), "Maui", "news")
            #expect(three.hasSuffix("… AND  NSCoreDataStringSearch( t0.ZNAME, ?, 417, 1)) AND  t0.ZGROUP = ?)".replacingOccurrences(of: "… ", with: "")))
            #expect(three == "SELECT 0, t0.Z_PK, t0.Z_OPT FROM ZCHANNEL t0 WHERE ((( t0.ZPLAYLIST IS NOT NULL AND  t0.ZPLAYLIST = ?) AND  NSCoreDataStringSearch( t0.ZNAME, ?, 417, 1)) AND  t0.ZGROUP = ?)")
            #expect(threeArgs == [.integer(7), .text("Maui"), .text("news")])

            var generator = try PredicateSQL(mapping: mapping, entityName: "Channel")
            let order = try generator.orderByClause([FLSortDescriptor(key: "name", comparator: .localizedCompare), FLSortDescriptor(key: "group")])
            #expect(order == "t0.ZNAME COLLATE NSCollateLocaleSensitive , t0.ZGROUP")
            // `self` and `objectID` sort by the primary key.
            let byKey = try generator.orderByClause([FLSortDescriptor(key: "self"), FLSortDescriptor(key: "objectID", ascending: false)])
            #expect(byKey == "t0.Z_PK, t0.Z_PK DESC")
        }

        @Test func countSubselectOneToMany() throws {
            // fatbobman: (SELECT COUNT(t1.Z_PK) FROM ZATTACHMENT t1 WHERE (t0.Z_PK = t1.ZITEM) ) > ?
            let model = try ManagedObjectModel(entities: [
                EntityDescription(name: "Item", relationships: [.init(name: "attachments", destination: "Attachment", inverse: "item", toMany: true)]),
                EntityDescription(name: "Attachment", relationships: [.init(name: "item", destination: "Item", inverse: "attachments")]),
            ])
            let (sql, args) = try whereSQL(SchemaMapping(model: model), "Item", "attachments.@count > 0")
            #expect(sql == "(SELECT COUNT(t1.Z_PK) FROM ZATTACHMENT t1 WHERE (t0.Z_PK = t1.ZITEM) ) > ?")
            #expect(args == [.integer(0)])
        }

        /// pgor/ManyAToManyB: ManyA.manyBs ↔ ManyB.manyAs through Z_1MANYBS(Z_1MANYAS, Z_2MANYBS).
        private func manyToManyModel() throws -> SchemaMapping {
            SchemaMapping(model: try ManagedObjectModel(entities: [
                EntityDescription(name: "ManyA", attributes: [.init(name: "name", type: .string)],
                                  relationships: [.init(name: "manyBs", destination: "ManyB", inverse: "manyAs", toMany: true)]),
                EntityDescription(name: "ManyB", attributes: [.init(name: "name", type: .string)],
                                  relationships: [.init(name: "manyAs", destination: "ManyA", inverse: "manyBs", toMany: true)]),
            ]))
        }

        @Test func countSubselectManyToMany() throws {
            // pgor: (SELECT COUNT(t1.Z_2MANYBS) FROM Z_1MANYBS t1 WHERE (t0.Z_PK = t1.Z_1MANYAS) ) = ?
            let (sql, args) = try whereSQL(try manyToManyModel(), "ManyA", "manyBs.@count == 0")
            #expect(sql == "(SELECT COUNT(t1.Z_2MANYBS) FROM Z_1MANYBS t1 WHERE (t0.Z_PK = t1.Z_1MANYAS) ) = ?")
            #expect(args == [.integer(0)])
            // And from the other side of the join table.
            let (back, _) = try whereSQL(try manyToManyModel(), "ManyB", "manyAs.@count == 0")
            #expect(back == "(SELECT COUNT(t1.Z_1MANYAS) FROM Z_1MANYBS t1 WHERE (t0.Z_PK = t1.Z_2MANYBS) ) = ?")
        }

        @Test func noneNotNilManyToMany() throws {
            // pgor: SELECT DISTINCT … LEFT OUTER JOIN Z_1MANYBS t1 ON t0.Z_PK = t1.Z_1MANYAS WHERE NOT ( t1.Z_2MANYBS IS NOT NULL)
            let (sql, args) = try fetchSQL(try manyToManyModel(), "ManyA", "NONE manyBs != nil")
            #expect(sql == "SELECT DISTINCT 0, t0.Z_PK, t0.Z_OPT FROM ZMANYA t0 LEFT OUTER JOIN Z_1MANYBS t1 ON t0.Z_PK = t1.Z_1MANYAS WHERE NOT ( t1.Z_2MANYBS IS NOT NULL)")
            #expect(args.isEmpty)
        }

        @Test func anyOverTwoManyToManyWithOr() throws {
            // L-M2M-ANY (2013): … LEFT OUTER JOIN Z_1E2A t1 ON t0.Z_PK = t1.Z_1E1A LEFT OUTER JOIN Z_1E2B t3 ON t0.Z_PK = t3.Z_1E1B
            // WHERE (t1.Z_2E2A = ? OR t3.Z_2E2B = ?). Modern Core Data adds DISTINCT and the leading spaces.
            let mapping = SchemaMapping(model: try ManagedObjectModel(entities: [
                EntityDescription(name: "Entity1", relationships: [
                    .init(name: "e2a", destination: "Entity2", inverse: "e1a", toMany: true),
                    .init(name: "e2b", destination: "Entity2", inverse: "e1b", toMany: true),
                ]),
                EntityDescription(name: "Entity2", relationships: [
                    .init(name: "e1a", destination: "Entity1", inverse: "e2a", toMany: true),
                    .init(name: "e1b", destination: "Entity1", inverse: "e2b", toMany: true),
                ]),
            ]))
            let a = FLValue.object(FLObjectReference(ManagedObjectID(entityName: "Entity2", storeIdentifier: "S", primaryKey: 3)))
            let (sql, args) = try fetchSQL(mapping, "Entity1", "ANY e2a == %@ OR ANY e2b == %@", a, a)
            #expect(sql == "SELECT DISTINCT 0, t0.Z_PK, t0.Z_OPT FROM ZENTITY1 t0 LEFT OUTER JOIN Z_1E2A t1 ON t0.Z_PK = t1.Z_1E1A LEFT OUTER JOIN Z_1E2B t3 ON t0.Z_PK = t3.Z_1E1B WHERE ( t1.Z_2E2A = ? OR  t3.Z_2E2B = ?)")
            #expect(args == [.integer(3), .integer(3)])
        }

        @Test func toManyWithoutInverse() throws {
            // A to-many without inverse keeps its source's Z_PK in a hidden column of the destination table.
            let mapping = SchemaMapping(model: try ManagedObjectModel(entities: [
                EntityDescription(name: "Asset", attributes: [.init(name: "label", type: .string)],
                                  relationships: [.init(name: "inventories", destination: "Inventory", toMany: true)]),
                EntityDescription(name: "Inventory", attributes: [.init(name: "count", type: .integer32)]),
            ]))
            let column = try #require(mapping.entity("Asset")?.hiddenForeignKeys["inventories"]?.column)
            let (count, _) = try whereSQL(mapping, "Asset", "inventories.@count > 0")
            #expect(count == "(SELECT COUNT(t1.Z_PK) FROM ZINVENTORY t1 WHERE (t0.Z_PK = t1.\(column)) ) > ?")
            let (any, _) = try fetchSQL(mapping, "Asset", "ANY inventories.count > 3")
            #expect(any == "SELECT DISTINCT 0, t0.Z_PK, t0.Z_OPT FROM ZASSET t0 JOIN ZINVENTORY t1 ON t0.Z_PK = t1.\(column) WHERE  t1.ZCOUNT > ?")
        }

        @Test func constantOnTheLeft() throws {
            // objc.io / L-RANGE: (? <=  t0.ZLONGITUDE AND  t0.ZLONGITUDE <= ?)
            let model = try ManagedObjectModel(entities: [EntityDescription(name: "Stop", attributes: [.init(name: "longitude", type: .double)])])
            let (sql, args) = try whereSQL(SchemaMapping(model: model), "Stop", "(%@ <= longitude) AND (longitude <= %@)", 1.5, 2.5)
            #expect(sql == "(? <=  t0.ZLONGITUDE AND  t0.ZLONGITUDE <= ?)")
            #expect(args == [.real(1.5), .real(2.5)])
        }
    }
}

extension PredicateSQLTests {
    @Suite("operators")
    struct Operators {
        let mapping: SchemaMapping
        init() throws { mapping = SchemaMapping(model: try recipeModel()) }

        func check(_ format: String, _ expected: String, _ expectedArgs: [SQLValue]? = nil, _ args: Any?...,
                   sourceLocation: SourceLocation = #_sourceLocation) throws {
            var generator = try PredicateSQL(mapping: mapping, entityName: "Recipe")
            let text = try generator.whereClause(FLPredicate(format: format, arguments: args)) ?? "<none>"
            #expect(text == expected, "\(format)", sourceLocation: sourceLocation)
            if let expectedArgs { #expect(generator.arguments == expectedArgs, "\(format)", sourceLocation: sourceLocation) }
        }

        @Test func comparisons() throws {
            try check("name == 'x'", " t0.ZNAME = ?", [.text("x")])
            try check("name != 'x'", " t0.ZNAME <> ?", [.text("x")])
            try check("rating < 3", " t0.ZRATING < ?", [.integer(3)])
            try check("rating <= 3", " t0.ZRATING <= ?")
            try check("rating > 3", " t0.ZRATING > ?")
            try check("rating >= 3", " t0.ZRATING >= ?")
            try check("name == nil", " t0.ZNAME IS NULL", [])
            try check("name != nil", " t0.ZNAME IS NOT NULL", [])
            try check("nil == name", " t0.ZNAME IS NULL", [])
            try check("isFavorite == YES", " t0.ZISFAVORITE = ?", [.integer(1)])
            try check("price > 2.5", " t0.ZPRICE > ?", [.real(2.5)])
            try check("rating == price", " t0.ZRATING =  t0.ZPRICE", [])
            try check("rating BETWEEN {1, 5}", "( t0.ZRATING BETWEEN ? AND ?)", [.integer(1), .integer(5)])
            try check("rating BETWEEN %@", "( t0.ZRATING BETWEEN ? AND ?)", [.integer(2), .integer(4)], [2, 4])
            try check("rating IN {1, 2, 3}", " t0.ZRATING IN (?,?,?)", [.integer(1), .integer(2), .integer(3)])
            try check("name IN %@", " t0.ZNAME IN (?,?)", [.text("a"), .text("b")], ["a", "b"])
            try check("rating IN {}", " t0.ZRATING IN ()", [])
        }

        @Test func datesUUIDsAndObjects() throws {
            try check("created > %@", " t0.ZCREATED > ?", [.real(100)], Date(timeIntervalSinceReferenceDate: 100))
            try check("created > %@", " t0.ZCREATED > ?", [.real(-978307200)], Date(timeIntervalSince1970: 0))
            try check("created > CAST(5, 'NSDate')", " t0.ZCREATED > ?", [.real(5)])
            let u = UUID(uuidString: "00112233-4455-6677-8899-AABBCCDDEEFF") ?? UUID()
            try check("uuid == %@", " t0.ZUUID = ?", [.blob(Data([0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0xFF]))], u)
            let author = FLValue.object(FLObjectReference(ManagedObjectID(entityName: "Author", storeIdentifier: "S", primaryKey: 9)))
            try check("author == %@", " t0.ZAUTHOR = ?", [.integer(9)], author)
            try check("author == nil", " t0.ZAUTHOR IS NULL", [])
            try check("SELF == %@", " t0.Z_PK = ?", [.integer(4)], FLValue.object(FLObjectReference(4)))
            try check("SELF IN %@", " t0.Z_PK IN (?,?)", [.integer(4), .integer(5)], [FLValue.object(FLObjectReference(4)), FLValue.object(FLObjectReference(5))])
        }

        @Test func stringOperators() throws {
            try check("name CONTAINS 'a'", " NSCoreDataStringSearch( t0.ZNAME, ?, 0, 0)", [.text("a")])
            try check("name CONTAINS[c] 'a'", " NSCoreDataStringSearch( t0.ZNAME, ?, 257, 0)")
            try check("name CONTAINS[d] 'a'", " NSCoreDataStringSearch( t0.ZNAME, ?, 384, 0)")
            try check("name CONTAINS[cd] 'a'", " NSCoreDataStringSearch( t0.ZNAME, ?, 385, 0)")
            try check("name CONTAINS[cdl] 'a'", " NSCoreDataStringSearch( t0.ZNAME, ?, 417, 1)")
            try check("name BEGINSWITH 'a'", " NSCoreDataStringSearch( t0.ZNAME, ?, 8, 0)")
            try check("name BEGINSWITH[c] 'a'", " NSCoreDataStringSearch( t0.ZNAME, ?, 265, 0)")
            try check("name ENDSWITH 'a'", " NSCoreDataStringSearch( t0.ZNAME, ?, 12, 0)")
            try check("name ENDSWITH[cd] 'a'", " NSCoreDataStringSearch( t0.ZNAME, ?, 397, 0)")
            try check("name CONTAINS[n] 'a'", " NSCoreDataStringSearch( t0.ZNAME, ?, 2, 0)")
            try check("name BEGINSWITH[n] 'ab'", "( t0.ZNAME >= ? AND  t0.ZNAME < ?)", [.text("ab"), .text("ac")])
            try check("name LIKE 'a*'", " NSCoreDataLike( t0.ZNAME, ?, 0 )", [.text("a*")])
            try check("name LIKE[c] 'a*'", " NSCoreDataLike( t0.ZNAME, ?, 1 )")
            try check("name LIKE[cd] 'a*'", " NSCoreDataLike( t0.ZNAME, ?, 3 )")
            try check("name MATCHES '[a-z]+'", " NSCoreDataMatches( t0.ZNAME, ?, 0 )", [.text("[a-z]+")])
            try check("name MATCHES[c] 'x'", " NSCoreDataMatches( t0.ZNAME, ?, 1 )")
            try check("'abc' IN name", " NSCoreDataStringSearch( t0.ZNAME, ?, 0, 0)", [.text("abc")])
            try check("name ==[c] 'x'", " NSCoreDataStringCompare( t0.ZNAME, ?, 4, 257, 0)", [.text("x")])
            try check("name <[cd] 'x'", " NSCoreDataStringCompare( t0.ZNAME, ?, 0, 385, 0)")
        }

        @Test func compounds() throws {
            try check("name == 'a' AND rating > 1", "( t0.ZNAME = ? AND  t0.ZRATING > ?)", [.text("a"), .integer(1)])
            try check("name == 'a' OR rating > 1", "( t0.ZNAME = ? OR  t0.ZRATING > ?)")
            try check("NOT name == 'a'", "NOT ( t0.ZNAME = ?)")
            try check("name == 'a' OR rating > 1 AND price < 2", "( t0.ZNAME = ? OR ( t0.ZRATING > ? AND  t0.ZPRICE < ?))")
            try check("TRUEPREDICATE", "<none>")
            try check("TRUEPREDICATE AND name == 'a'", " t0.ZNAME = ?")
            try check("FALSEPREDICATE OR name == 'a'", " t0.ZNAME = ?")
            try check("FALSEPREDICATE", " 0 = 1")
        }

        @Test func logicallyFalse() throws {
            var generator = try PredicateSQL(mapping: mapping, entityName: "Recipe")
            _ = try generator.whereClause(FLPredicate(format: "FALSEPREDICATE AND name == 'a'"))
            #expect(generator.isLogicallyFalse)
        }

        @Test func arithmeticAndFunctions() throws {
            try check("price * rating > 100", "( t0.ZPRICE *  t0.ZRATING) > ?", [.integer(100)])
            try check("price + 1 > 3", "( t0.ZPRICE + ?) > ?", [.integer(1), .integer(3)])
            try check("1 + 2 == rating", "? =  t0.ZRATING", [.integer(3)])
            try check("lowercase:(name) == 'x'", " NSCoreDataToLower( t0.ZNAME) = ?")
            try check("uppercase:(name) == 'X'", " NSCoreDataToUpper( t0.ZNAME) = ?")
            try check("canonical:(name) == 'x'", " NSCoreDataCanonical( t0.ZNAME) = ?")
            try check("created < now()", " t0.ZCREATED <  NSCoreDataNow()")
            try check("name.length > 3", " length(t0.ZNAME) > ?", [.integer(3)])
        }

        @Test func toOneJoins() throws {
            let (sql, args) = try fetchSQL(mapping, "Recipe", "author.name == 'Ann' AND author.publisher.name == 'P'")
            #expect(sql == "SELECT 0, t0.Z_PK, t0.Z_OPT FROM ZRECIPE t0 JOIN ZAUTHOR t1 ON t0.ZAUTHOR = t1.Z_PK JOIN ZPUBLISHER t2 ON t1.ZPUBLISHER = t2.Z_PK WHERE ( t1.ZNAME = ? AND  t2.ZNAME = ?)")
            #expect(args == [.text("Ann"), .text("P")])
            let (or, _) = try fetchSQL(mapping, "Recipe", "author.name == 'Ann' OR name == 'x'")
            #expect(or == "SELECT 0, t0.Z_PK, t0.Z_OPT FROM ZRECIPE t0 LEFT OUTER JOIN ZAUTHOR t1 ON t0.ZAUTHOR = t1.Z_PK WHERE ( t1.ZNAME = ? OR  t0.ZNAME = ?)")
        }

        @Test func anyJoins() throws {
            let (oneToMany, args) = try fetchSQL(mapping, "Recipe", "ANY ingredients.name == 'salt'")
            #expect(oneToMany == "SELECT DISTINCT 0, t0.Z_PK, t0.Z_OPT FROM ZRECIPE t0 JOIN ZINGREDIENT t1 ON t0.Z_PK = t1.ZRECIPE WHERE  t1.ZNAME = ?")
            #expect(args == [.text("salt")])
            let (manyToMany, _) = try fetchSQL(mapping, "Recipe", "ANY tags.name BEGINSWITH[c] 'veg'")
            #expect(manyToMany == "SELECT DISTINCT 0, t0.Z_PK, t0.Z_OPT FROM ZRECIPE t0 JOIN Z_4TAGS t1 ON t0.Z_PK = t1.Z_4RECIPES JOIN ZTAG t2 ON t1.Z_5TAGS = t2.Z_PK WHERE  NSCoreDataStringSearch( t2.ZNAME, ?, 265, 0)")
            let (member, memberArgs) = try fetchSQL(mapping, "Recipe", "%@ IN tags", FLValue.object(FLObjectReference(ManagedObjectID(entityName: "Tag", storeIdentifier: "S", primaryKey: 2))))
            #expect(member == "SELECT DISTINCT 0, t0.Z_PK, t0.Z_OPT FROM ZRECIPE t0 JOIN Z_4TAGS t1 ON t0.Z_PK = t1.Z_4RECIPES WHERE  t1.Z_5TAGS = ?")
            #expect(memberArgs == [.integer(2)])
            let (viaToOne, _) = try fetchSQL(mapping, "Ingredient", "ANY recipe.tags.name == 'x'")
            #expect(viaToOne == "SELECT DISTINCT 0, t0.Z_PK, t0.Z_OPT FROM ZINGREDIENT t0 JOIN ZRECIPE t1 ON t0.ZRECIPE = t1.Z_PK JOIN Z_4TAGS t2 ON t1.Z_PK = t2.Z_4RECIPES JOIN ZTAG t3 ON t2.Z_5TAGS = t3.Z_PK WHERE  t3.ZNAME = ?")
        }

        @Test func noneAndAll() throws {
            try check("NONE ingredients.name == 'salt'",
                      "(SELECT COUNT(t1.Z_PK) FROM ZINGREDIENT t1 WHERE (t0.Z_PK = t1.ZRECIPE AND  t1.ZNAME = ?) ) = ?", [.text("salt"), .integer(0)])
            try check("ALL ingredients.amount > 1",
                      "(SELECT COUNT(t1.Z_PK) FROM ZINGREDIENT t1 WHERE (t0.Z_PK = t1.ZRECIPE AND NOT ( t1.ZAMOUNT > ?)) ) = ?", [.integer(1), .integer(0)])
            try check("NONE tags.name == 'x'",
                      "(SELECT COUNT(t2.Z_PK) FROM Z_4TAGS t1 JOIN ZTAG t2 ON t1.Z_5TAGS = t2.Z_PK WHERE (t0.Z_PK = t1.Z_4RECIPES AND  t2.ZNAME = ?) ) = ?")
            try check("NOT (ANY ingredients.name == 'a' OR name == 'b')",
                      "NOT (((SELECT COUNT(t1.Z_PK) FROM ZINGREDIENT t1 WHERE (t0.Z_PK = t1.ZRECIPE AND  t1.ZNAME = ?) ) > ? OR  t0.ZNAME = ?))")
        }

        @Test func collectionOperators() throws {
            try check("ingredients.@count > 2", "(SELECT COUNT(t1.Z_PK) FROM ZINGREDIENT t1 WHERE (t0.Z_PK = t1.ZRECIPE) ) > ?", [.integer(2)])
            try check("ingredients.@sum.amount > 2", "(SELECT total(t1.ZAMOUNT) FROM ZINGREDIENT t1 WHERE (t0.Z_PK = t1.ZRECIPE) ) > ?")
            try check("ingredients.@avg.amount > 2", "(SELECT AVG(t1.ZAMOUNT) FROM ZINGREDIENT t1 WHERE (t0.Z_PK = t1.ZRECIPE) ) > ?")
            try check("ingredients.@min.amount > 2", "(SELECT MIN(t1.ZAMOUNT) FROM ZINGREDIENT t1 WHERE (t0.Z_PK = t1.ZRECIPE) ) > ?")
            try check("ingredients.@max.amount > 2", "(SELECT MAX(t1.ZAMOUNT) FROM ZINGREDIENT t1 WHERE (t0.Z_PK = t1.ZRECIPE) ) > ?")
            try check("tags.@count == 0", "(SELECT COUNT(t1.Z_5TAGS) FROM Z_4TAGS t1 WHERE (t0.Z_PK = t1.Z_4RECIPES) ) = ?")
            try check("author.recipes.@count > 1", "(SELECT COUNT(t2.Z_PK) FROM ZRECIPE t2 WHERE (t1.Z_PK = t2.ZAUTHOR) ) > ?")
        }

        @Test func subqueries() throws {
            try check("SUBQUERY(ingredients, $i, $i.amount > 2 AND $i.name BEGINSWITH 's').@count > 0",
                      "(SELECT COUNT(t1.Z_PK) FROM ZINGREDIENT t1 WHERE (t0.Z_PK = t1.ZRECIPE AND ( t1.ZAMOUNT > ? AND  NSCoreDataStringSearch( t1.ZNAME, ?, 8, 0))) ) > ?",
                      [.integer(2), .text("s"), .integer(0)])
            try check("SUBQUERY(ingredients, $i, $i.amount > 2).@count != 0",
                      "(SELECT COUNT(t1.Z_PK) FROM ZINGREDIENT t1 WHERE (t0.Z_PK = t1.ZRECIPE AND  t1.ZAMOUNT > ?) ) <> ?")
            try check("SUBQUERY(tags, $t, $t.name == 'x').@count > 0",
                      "(SELECT COUNT(t2.Z_PK) FROM Z_4TAGS t1 JOIN ZTAG t2 ON t1.Z_5TAGS = t2.Z_PK WHERE (t0.Z_PK = t1.Z_4RECIPES AND  t2.ZNAME = ?) ) > ?")
            try check("SUBQUERY(ingredients, $i, $i.recipe.author.name == 'Ann').@count > 0",
                      "(SELECT COUNT(t1.Z_PK) FROM ZINGREDIENT t1 JOIN ZRECIPE t2 ON t1.ZRECIPE = t2.Z_PK JOIN ZAUTHOR t3 ON t2.ZAUTHOR = t3.Z_PK WHERE (t0.Z_PK = t1.ZRECIPE AND  t3.ZNAME = ?) ) > ?")
            try check("SUBQUERY(ingredients, $i, ANY $i.recipe.tags.name == 'x').@count > 0",
                      "(SELECT COUNT(DISTINCT t1.Z_PK) FROM ZINGREDIENT t1 JOIN ZRECIPE t2 ON t1.ZRECIPE = t2.Z_PK JOIN Z_4TAGS t3 ON t2.Z_PK = t3.Z_4RECIPES JOIN ZTAG t4 ON t3.Z_5TAGS = t4.Z_PK WHERE (t0.Z_PK = t1.ZRECIPE AND  t4.ZNAME = ?) ) > ?")
        }

        @Test func errorsUseCoreDataWording() throws {
            #expect(sqlError(mapping, "Recipe", "foo == 1") == "keypath foo not found in entity Recipe")
            #expect(sqlError(mapping, "Recipe", "author.foo == 1") == "keypath author.foo not found in entity Recipe")
            #expect(sqlError(mapping, "Recipe", "scratch == 'x'") == "keypath scratch not found in entity Recipe")
            #expect(sqlError(mapping, "Recipe", "ingredients.name == 'x'") == "to-many key not allowed here")
            #expect(sqlError(mapping, "Recipe", "ingredients == nil") == "to-many key not allowed here")
            #expect(sqlError(mapping, "Recipe", "FUNCTION(SELF, 'x:', name) == 1") == #"unimplemented SQL generation for predicate : (FUNCTION(SELF, "x:", name) == 1)"#)
            #expect(sqlError(mapping, "Recipe", "TERNARY(rating > 1, 1, 0) == 1") == "unimplemented SQL generation for predicate : (TERNARY(rating > 1, 1, 0) == 1)")
            #expect(sqlError(mapping, "Recipe", "rating < nil") == "illegal comparison with NULL")
            #expect(sqlError(mapping, "Recipe", "nil < rating") == "can't use NULL on left hand side")
            #expect(sqlError(mapping, "Recipe", "name UTI-EQUALS 'x'") == "Unknown/unsupported comparison predicate operator type")
            #expect(sqlError(mapping, "Recipe", "name == $NAME")?.hasPrefix("Can't get value for 'NAME' in bindings") == true)
            #expect(sqlError(mapping, "Nope", "name == 1") == "entity Nope not found in the model")
        }
    }
}

extension PredicateSQLTests {
    @Suite("inheritance and sorting")
    struct InheritanceAndSorting {
        /// objc.io Moody: abstract GeographicRegion with Continent and Country.
        func regions() throws -> SchemaMapping {
            SchemaMapping(model: try ManagedObjectModel(entities: [
                EntityDescription(name: "GeographicRegion", isAbstract: true, attributes: [.init(name: "updatedAt", type: .date), .init(name: "name", type: .string)]),
                EntityDescription(name: "Continent", superentityName: "GeographicRegion"),
                EntityDescription(name: "Country", superentityName: "GeographicRegion",
                                  relationships: [.init(name: "continent", destination: "Continent")]),
            ]))
        }

        @Test func entityFilters() throws {
            let mapping = try regions()
            let (all, allArgs) = try fetchSQL(mapping, "GeographicRegion", "name == 'x'", sort: [FLSortDescriptor(key: "updatedAt", ascending: false)])
            #expect(all == "SELECT t0.Z_ENT, t0.Z_PK, t0.Z_OPT FROM ZGEOGRAPHICREGION t0 WHERE  t0.ZNAME = ? ORDER BY t0.ZUPDATEDAT DESC")
            #expect(allArgs == [.text("x")])
            let country = mapping.entity("Country")?.entityNumber ?? 0
            let (one, oneArgs) = try fetchSQL(mapping, "Country", "name == 'x'")
            #expect(one == "SELECT 0, t0.Z_PK, t0.Z_OPT FROM ZGEOGRAPHICREGION t0 WHERE ( t0.ZNAME = ? AND  t0.Z_ENT = ?)")
            #expect(oneArgs == [.text("x"), .integer(Int64(country))])
            let (bare, bareArgs) = try fetchSQL(mapping, "Country", "")
            #expect(bare == "SELECT 0, t0.Z_PK, t0.Z_OPT FROM ZGEOGRAPHICREGION t0 WHERE  t0.Z_ENT = ?")
            #expect(bareArgs == [.integer(Int64(country))])
            let (root, _) = try fetchSQL(mapping, "GeographicRegion", "", includesSubentities: false)
            #expect(root == "SELECT t0.Z_ENT, t0.Z_PK, t0.Z_OPT FROM ZGEOGRAPHICREGION t0 WHERE  t0.Z_ENT = ?")
        }

        @Test func sorting() throws {
            let mapping = SchemaMapping(model: try recipeModel())
            let (sql, _) = try fetchSQL(mapping, "Recipe", "", sort: [
                FLSortDescriptor(key: "author.name"), FLSortDescriptor(key: "name", ascending: false, comparator: .caseInsensitiveCompare),
            ])
            #expect(sql == "SELECT 0, t0.Z_PK, t0.Z_OPT FROM ZRECIPE t0 LEFT OUTER JOIN ZAUTHOR t1 ON t0.ZAUTHOR = t1.Z_PK ORDER BY t1.ZNAME, t0.ZNAME COLLATE NSCollateNoCase  DESC")
            let (joined, _) = try fetchSQL(mapping, "Recipe", "author.name == 'A'", sort: [FLSortDescriptor(key: "author.name")])
            #expect(joined == "SELECT 0, t0.Z_PK, t0.Z_OPT FROM ZRECIPE t0 LEFT OUTER JOIN ZAUTHOR t1 ON t0.ZAUTHOR = t1.Z_PK WHERE  t1.ZNAME = ? ORDER BY t1.ZNAME")
            var generator = try PredicateSQL(mapping: mapping, entityName: "Recipe")
            #expect(try generator.orderByClause([FLSortDescriptor(key: "name", comparator: .localizedStandardCompare)]) == "t0.ZNAME COLLATE NSCollateFinderlike ")
            #expect(try generator.orderByClause([FLSortDescriptor(key: "name", comparator: .localizedCaseInsensitiveCompare)]) == "t0.ZNAME COLLATE NSCollateLocaleSensitiveNoCase ")
            #expect(throws: PredicateSQLError("to-many key not allowed here")) { try generator.orderByClause([FLSortDescriptor(key: "ingredients.@count")]) }
            #expect(throws: PredicateSQLError("to-many key not allowed here")) { try generator.orderByClause([FLSortDescriptor(key: "ingredients.name")]) }
            #expect(throws: PredicateSQLError("keypath nope not found in entity Recipe")) { try generator.orderByClause([FLSortDescriptor(key: "nope")]) }
            #expect(try generator.orderByClause([]) == nil)
        }
    }
}

// MARK: - Depth limits on the Inventory sample

/// Deep predicate trees (issue: stack overflows in `PredicateSQL.operand`).
@Suite struct DeepPredicateSQLTests {
    @Test func aTreeBuiltTooDeepInCodeIsAnErrorNotACrash() throws {
        let (context, _) = try SaveTests.open(try SaveTests.copyOfInventory(), readOnly: true)
        var expression = FLExpression.constant(.int(1))
        for _ in 0..<5_000 { expression = .function("add:to:", [expression, .constant(.int(1))]) }
        var request = FetchRequest(entityName: "Inventory")
        request.predicate = .comparison(.keyPath("count"), .greaterThan, expression)
        for attempt in [{ _ = try context.fetch(request) }, { _ = try context.count(for: request) }] {
            do {
                try attempt()
                Issue.record("a tree too deep was run")
            } catch {
                #expect("\(error)".contains("nested too deeply for SQL"))
            }
        }
    }

    @Test func deepPredicatesFetchOnAPrivateQueueOrFailCleanly() throws {
        // Our walks are safe up to the limit on a dispatch thread's small stack; SQLite's own
        // parser stops at about 100 nested parentheses, with a clear error.
        let (main, _) = try SaveTests.open(try SaveTests.copyOfInventory(), readOnly: true)
        var deepest = 2
        while (try? FLPredicate(format: "count > " + Array(repeating: "0", count: deepest + 1).joined(separator: "+"))) != nil { deepest += 1 }
        let context = ManagedObjectContext(coordinator: main.coordinator, concurrencyType: .privateQueue)
        var request = FetchRequest(entityName: "Inventory")
        request.predicate = try FLPredicate(format: "count > " + Array(repeating: "0", count: 60).joined(separator: "+"))
        #expect(try context.performAndWait { try context.fetch(request).count } == 8)
        request.predicate = try FLPredicate(format: "count > " + Array(repeating: "0", count: deepest).joined(separator: "+"))
        #expect(throws: SQLiteError.self) { try context.performAndWait { try context.fetch(request) } }
    }
}
