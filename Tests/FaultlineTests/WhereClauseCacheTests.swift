import FaultlineModel
import FaultlinePredicate
import FaultlineSQL
import Foundation
import Testing

@testable import Faultline

/// The store's cache of compiled `WHERE` clauses (``WhereClauseCache``): a predicate of a
/// shape compiled before must give exactly the SQL, bound values and errors a store that
/// never saw it gives.
@Suite struct WhereClauseCacheTests {
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(
                name: "Recipe",
                attributes: [
                    .init(name: "name", type: .string), .init(name: "rating", type: .integer32),
                    .init(name: "price", type: .double), .init(name: "created", type: .date),
                    .init(name: "isFavorite", type: .boolean), .init(name: "uuid", type: .uuid),
                ],
                relationships: [
                    .init(name: "author", destination: "Author", inverse: "recipes"),
                    .init(name: "ingredients", destination: "Ingredient", inverse: "recipe", toMany: true),
                    .init(name: "tags", destination: "Tag", inverse: "recipes", toMany: true),
                ]),
            EntityDescription(
                name: "Author", attributes: [.init(name: "name", type: .string)],
                relationships: [.init(name: "recipes", destination: "Recipe", inverse: "author", toMany: true)]),
            EntityDescription(
                name: "Ingredient", attributes: [.init(name: "name", type: .string), .init(name: "amount", type: .double)],
                relationships: [.init(name: "recipe", destination: "Recipe", inverse: "ingredients")]),
            EntityDescription(
                name: "Tag", attributes: [.init(name: "name", type: .string)],
                relationships: [.init(name: "recipes", destination: "Recipe", inverse: "tags", toMany: true)]),
            EntityDescription(name: "Region", isAbstract: true, attributes: [.init(name: "name", type: .string), .init(name: "area", type: .double)]),
            EntityDescription(name: "Country", superentityName: "Region", relationships: [.init(name: "capital", destination: "City")]),
            EntityDescription(name: "City", superentityName: "Region"),
        ])
    }

    static func object(_ entity: String, _ key: Int64) -> FLValue {
        .object(FLObjectReference(ManagedObjectID(entityName: entity, storeIdentifier: "S", primaryKey: key)))
    }

    /// Formats and two argument lists of the same kinds each (the second with other values).
    static var cases: [(entity: String, format: String, first: [Any?], second: [Any?])] {
        [
            ("Recipe", "rating == %@", [1], [2]),
            ("Recipe", "rating == %@", [nil], [nil]),
            ("Recipe", "rating != %@ AND price > %@", [1, 2.5], [7, -1.5]),
            ("Recipe", "isFavorite == %@", [true], [false]),
            ("Recipe", "isFavorite == YES OR rating < 3", [], []),
            ("Recipe", "created > %@", [Date(timeIntervalSinceReferenceDate: 5)], [Date(timeIntervalSinceReferenceDate: 9)]),
            ("Recipe", "created > %@", ["2001-01-01"], ["2002-01-01"]),
            ("Recipe", "uuid == %@", ["9F0F5A5E-8D5C-4B8E-9A1F-2B3C4D5E6F70"], ["not a uuid"]),
            ("Recipe", "uuid == %@", [UUID(uuidString: "9F0F5A5E-8D5C-4B8E-9A1F-2B3C4D5E6F70")], [UUID(uuidString: "0F0F5A5E-8D5C-4B8E-9A1F-2B3C4D5E6F70")]),
            ("Recipe", "name BEGINSWITH[c] %@", ["ca"], ["do"]),
            ("Recipe", "name BEGINSWITH[n] %@", ["ca"], ["do"]),
            ("Recipe", "name BEGINSWITH[n] %@", ["ca"], [""]),
            ("Recipe", "name CONTAINS[cd] %@ OR name ENDSWITH %@", ["a", "b"], ["c", "d"]),
            ("Recipe", "name LIKE[c] %@ AND name MATCHES %@", ["a*", "b.*"], ["c?", "d+"]),
            ("Recipe", "name ==[c] %@", ["Ann"], ["Bob"]),
            ("Recipe", "name IN %@", [["a", "b"]], [["c"]]),
            ("Recipe", "rating BETWEEN %@", [[1, 5]], [[2, 3]]),
            ("Recipe", "rating BETWEEN {%@, %@}", [1, 5], [2, 3]),
            ("Recipe", "rating IN {%@, %@, 3}", [1, 5], [2, nil]),
            ("Recipe", "author.name == %@", ["Ann"], ["Bob"]),
            ("Recipe", "author.name == %@ OR name == %@", ["Ann", "x"], ["Bob", "y"]),
            ("Recipe", "NOT (author.name == %@)", ["Ann"], ["Bob"]),
            ("Recipe", "author == nil OR author.name == %@", ["Ann"], ["Bob"]),
            ("Recipe", "ANY ingredients.name == %@", ["salt"], ["pepper"]),
            ("Recipe", "ANY tags.name BEGINSWITH[c] %@", ["veg"], ["fr"]),
            ("Recipe", "ALL ingredients.amount > %@", [1.5], [2.5]),
            ("Recipe", "NONE ingredients.name == %@", ["salt"], ["pepper"]),
            ("Recipe", "NONE ingredients.name != nil", [], []),
            ("Recipe", "ingredients.@count == %@", [3], [4]),
            ("Recipe", "ingredients.@sum.amount > %@", [10], [20.5]),
            ("Recipe", "tags.@count > %@ AND ANY tags.name == %@", [1, "a"], [2, "b"]),
            ("Recipe", "SUBQUERY(ingredients, $i, $i.amount > %@ AND $i.name BEGINSWITH %@).@count > %@", [1.0, "s", 0], [2.0, "p", 1]),
            ("Recipe", "rating + 1 > %@", [3], [4]),
            ("Recipe", "rating * %@ > price", [2], [3]),
            ("Recipe", "abs:(%@) == rating", [-3], [4]),
            ("Recipe", "lowercase:(name) == %@", ["ann"], ["bob"]),
            ("Recipe", "SELF == %@", [Self.object("Recipe", 3)], [Self.object("Recipe", 4)]),
            ("Recipe", "%@ IN tags", [Self.object("Tag", 2)], [Self.object("Tag", 5)]),
            ("Recipe", "name == %@ AND TRUEPREDICATE", ["a"], ["b"]),
            ("Recipe", "name == %@ OR FALSEPREDICATE", ["a"], ["b"]),
            ("Recipe", "rating == %@", [1], ["one"]),
            ("Recipe", "nosuchkey == %@", [1], [2]),
            ("Recipe", "ingredients == %@", [1], [2]),
            ("Recipe", "$unbound == %@", [1], [2]),
            ("Region", "name == %@", ["Europe"], ["Asia"]),
            ("Country", "name == %@ AND area > %@", ["France", 1.0], ["Spain", 2.0]),
            ("Country", "capital.name == %@", ["Paris"], ["Madrid"]),
            ("City", "area < %@", [3], [4]),
        ]
    }

    /// The SQL of a fetch, or its error.
    static func compile(_ store: SQLiteStore, _ request: FetchRequest) -> String {
        do {
            let (sql, arguments) = try store.sqlForFetch(request)
            return sql + " " + arguments.map(\.description).joined(separator: ", ")
        } catch {
            return "error: \(error)"
        }
    }

    static func request(_ entity: String, _ format: String, _ arguments: [Any?], sort: [FLSortDescriptor] = [], subentities: Bool = true) throws -> FetchRequest {
        var request = FetchRequest(entityName: entity)
        request.predicate = try FLPredicate(format: format, arguments: arguments)
        request.sortDescriptors = sort
        request.includesSubentities = subentities
        return request
    }

    @Test func aCachedShapeCompilesAsANewStoreDoes() throws {
        let model = try Self.model()
        let warm = try SQLiteStore(inMemoryWith: model)
        for c in Self.cases {
            for subentities in [true, false] {
                for sort in [[], [FLSortDescriptor(key: "name")]] where c.entity == "Recipe" || sort.isEmpty {
                    let sortKeys = c.entity == "Recipe" && !sort.isEmpty ? [FLSortDescriptor(key: "author.name")] + sort : sort
                    for arguments in [c.first, c.second, c.first] {
                        let request = try Self.request(c.entity, c.format, arguments, sort: sortKeys, subentities: subentities)
                        let fresh = try SQLiteStore(inMemoryWith: model)
                        #expect(Self.compile(warm, request) == Self.compile(fresh, request), "\(c.entity): \(c.format) \(arguments)")
                    }
                }
            }
            // The statement around the clause: limits, keys only, counts, partial objects.
            let base = try Self.request(c.entity, c.format, c.second)
            var variants: [FetchRequest] = []
            for (limit, offset) in [(5, 0), (5, 2), (0, 3), (0, 0)] {
                var v = base
                v.fetchLimit = limit
                v.fetchOffset = offset
                variants.append(v)
            }
            var keys = base
            keys.includesPropertyValues = false
            var count = base
            count.resultType = .count
            var partial = base
            partial.propertiesToFetch = ["name"]
            variants += [keys, count, partial, base]
            for variant in variants {
                let fresh = try SQLiteStore(inMemoryWith: model)
                #expect(Self.compile(warm, variant) == Self.compile(fresh, variant), "\(c.entity): \(c.format) \(variant)")
            }
        }
    }

    @Test func shapesAreCachedOnlyWhenTheirValuesDoNotShapeTheSQL() throws {
        let store = try SQLiteStore(inMemoryWith: try Self.model())
        func slot(_ entity: String, _ format: String, _ arguments: [Any?]) throws -> WhereClauseCache.Slot? {
            let request = try Self.request(entity, format, arguments)
            _ = try? store.sqlForFetch(request)
            guard let predicate = request.predicate, let shape = PredicateShape(predicate, entityName: entity, includesSubentities: true) else { return nil }
            return store.whereClauseCache[WhereClauseCache.Key(shape)]
        }
        func shape(_ format: String, _ arguments: Any?...) throws -> PredicateShape? {
            PredicateShape(try FLPredicate(format: format, arguments: arguments), entityName: "Recipe", includesSubentities: true)
        }
        func isCompiled(_ s: WhereClauseCache.Slot?) -> Bool { if case .compiled? = s { true } else { false } }
        func isUncacheable(_ s: WhereClauseCache.Slot?) -> Bool { if case .uncacheable? = s { true } else { false } }
        #expect(isCompiled(try slot("Recipe", "rating == %@ AND author.name BEGINSWITH[c] %@", [1, "a"])))
        #expect(isCompiled(try slot("Recipe", "ingredients.@count == %@", [3])))
        #expect(isCompiled(try slot("Country", "area > %@", [3])))
        // The upper bound of BEGINSWITH[n] is computed from the value; a string for a UUID
        // or Date attribute is converted or refused by its value.
        #expect(isUncacheable(try slot("Recipe", "name BEGINSWITH[n] %@", ["ca"])))
        #expect(isUncacheable(try slot("Recipe", "uuid == %@", ["9F0F5A5E-8D5C-4B8E-9A1F-2B3C4D5E6F70"])))
        // A predicate that fails to compile is not recorded: it fails again each time.
        #expect(try slot("Recipe", "nosuchkey == %@", [1]) == nil)
        // Not reduced to a shape at all: folded functions, arrays, objects, empty strings.
        #expect(try shape("abs:(%@) == rating", -3) == nil)
        #expect(try shape("rating IN %@", [1, 2]) == nil)
        #expect(try shape("name == ''") == nil)
        #expect(try shape("SELF == %@", Self.object("Recipe", 3)) == nil)
    }

    @Test func bindingACachedConstantIsBindingItForTheCompiler() throws {
        let generator = try PredicateSQL(mapping: SchemaMapping(model: try Self.model()), entityName: "Recipe")
        let values: [FLValue] = [.null, .bool(true), .bool(false), .int(-4), .double(2.5), .string("x"), .date(Date(timeIntervalSinceReferenceDate: 12.5))]
        for value in values {
            #expect(PredicateSQL.cachedBindValue(value) == (try generator.bindValue(value, nil, PredicateSQL.Context())))
        }
    }
}
