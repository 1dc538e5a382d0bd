import Faultline
import FaultlineSQL
import FaultlineTestSupport
import Foundation
import Testing

// Hand-written classes for the Recipes, Inventory and Books samples, with the key-path table
// `faultline generate` writes (`propertyName(for:)`), for #Predicate and FetchDescriptor.

final class TypedRecipe: ManagedObject, ManagedObjectSubclass {
    class var entityName: String { "Recipe" }
    class var managedProperties: [ManagedPropertyDeclaration] {
        [
            .attribute("name", .string), .attribute("overview", .string), .attribute("prepTime", .string),
            .toMany("ingredients", TypedIngredient.self), .toOne("type", TypedRecipeType.self),
        ]
    }
    static func propertyName(for keyPath: AnyKeyPath) -> String? {
        let table: [AnyKeyPath: String] = [
            \TypedRecipe.name: "name", \TypedRecipe.overview: "overview", \TypedRecipe.prepTime: "prepTime",
            \TypedRecipe.ingredients: "ingredients", \TypedRecipe.type: "type",
        ]
        return table[keyPath]
    }
    var name: String {
        get { attributeValue(at: 0, named: "name") ?? "" }
        set { setAttributeValue(newValue, at: 0, named: "name") }
    }
    var overview: String? {
        get { attributeValue(at: 1, named: "overview") }
        set { setAttributeValue(newValue, at: 1, named: "overview") }
    }
    var prepTime: String? {
        get { attributeValue(at: 2, named: "prepTime") }
        set { setAttributeValue(newValue, at: 2, named: "prepTime") }
    }
    var ingredients: Set<TypedIngredient> {
        get { Set(toManyValue(at: 3, named: "ingredients") as [TypedIngredient]) }
        set { setToManyValue(Array(newValue), at: 3, named: "ingredients") }
    }
    var type: TypedRecipeType? {
        get { toOneValue(at: 4, named: "type") }
        set { setToOneValue(newValue, at: 4, named: "type") }
    }
    /// A computed property: no model property, so predicates cannot use it.
    var shout: String { name.uppercased() }
}

final class TypedIngredient: ManagedObject, ManagedObjectSubclass {
    class var entityName: String { "Ingredient" }
    class var managedProperties: [ManagedPropertyDeclaration] {
        [.attribute("amount", .string), .attribute("displayOrder", .integer16), .attribute("name", .string), .toOne("recipe", TypedRecipe.self)]
    }
    static func propertyName(for keyPath: AnyKeyPath) -> String? {
        let table: [AnyKeyPath: String] = [
            \TypedIngredient.amount: "amount", \TypedIngredient.displayOrder: "displayOrder",
            \TypedIngredient.name: "name", \TypedIngredient.recipe: "recipe",
        ]
        return table[keyPath]
    }
    var amount: String? {
        get { attributeValue(at: 0, named: "amount") }
        set { setAttributeValue(newValue, at: 0, named: "amount") }
    }
    var displayOrder: Int16 {
        get { attributeValue(at: 1, named: "displayOrder") ?? 0 }
        set { setAttributeValue(newValue, at: 1, named: "displayOrder") }
    }
    var name: String {
        get { attributeValue(at: 2, named: "name") ?? "" }
        set { setAttributeValue(newValue, at: 2, named: "name") }
    }
    var recipe: TypedRecipe? {
        get { toOneValue(at: 3, named: "recipe") }
        set { setToOneValue(newValue, at: 3, named: "recipe") }
    }
}

final class TypedRecipeType: ManagedObject, ManagedObjectSubclass {
    class var entityName: String { "RecipeType" }
    class var managedProperties: [ManagedPropertyDeclaration] {
        [.attribute("name", .string), .toMany("recipes", TypedRecipe.self)]
    }
    static func propertyName(for keyPath: AnyKeyPath) -> String? {
        let table: [AnyKeyPath: String] = [\TypedRecipeType.name: "name", \TypedRecipeType.recipes: "recipes"]
        return table[keyPath]
    }
    var name: String {
        get { attributeValue(at: 0, named: "name") ?? "" }
        set { setAttributeValue(newValue, at: 0, named: "name") }
    }
    var recipes: Set<TypedRecipe> {
        get { Set(toManyValue(at: 1, named: "recipes") as [TypedRecipe]) }
        set { setToManyValue(Array(newValue), at: 1, named: "recipes") }
    }
}

final class TypedStock: ManagedObject, ManagedObjectSubclass {
    class var entityName: String { "Inventory" }
    class var managedProperties: [ManagedPropertyDeclaration] {
        [.attribute("count", .integer16), .attribute("date", .date), .toOne("asset", TypedAsset.self)]
    }
    static func propertyName(for keyPath: AnyKeyPath) -> String? {
        let table: [AnyKeyPath: String] = [\TypedStock.count: "count", \TypedStock.date: "date", \TypedStock.asset: "asset"]
        return table[keyPath]
    }
    var count: Int16 {
        get { attributeValue(at: 0, named: "count") ?? 0 }
        set { setAttributeValue(newValue, at: 0, named: "count") }
    }
    var date: Date? {
        get { attributeValue(at: 1, named: "date") }
        set { setAttributeValue(newValue, at: 1, named: "date") }
    }
    var asset: TypedAsset? {
        get { toOneValue(at: 2, named: "asset") }
        set { setToOneValue(newValue, at: 2, named: "asset") }
    }
}

final class TypedAsset: ManagedObject, ManagedObjectSubclass {
    class var entityName: String { "Asset" }
    class var managedProperties: [ManagedPropertyDeclaration] { [.attribute("label", .string), .toMany("inventories", TypedStock.self)] }
    static func propertyName(for keyPath: AnyKeyPath) -> String? {
        let table: [AnyKeyPath: String] = [\TypedAsset.label: "label", \TypedAsset.inventories: "inventories"]
        return table[keyPath]
    }
    var label: String? {
        get { attributeValue(at: 0, named: "label") }
        set { setAttributeValue(newValue, at: 0, named: "label") }
    }
    var inventories: Set<TypedStock> { Set(toManyValue(at: 1, named: "inventories") as [TypedStock]) }
}

/// SwiftData's `Book` of the published log: a non-optional `title`.
final class TypedBook: ManagedObject, ManagedObjectSubclass {
    class var entityName: String { "Book" }
    class var managedProperties: [ManagedPropertyDeclaration] { [.attribute("title", .string)] }
    static func propertyName(for keyPath: AnyKeyPath) -> String? { keyPath == \TypedBook.title ? "title" : nil }
    var title: String { attributeValue(at: 0, named: "title") ?? "" }
}

/// A sub-entity's class (Triage's `Fracture`, whose parent `Injury` has no class), with a Boolean.
final class TypedFracture: ManagedObject, ManagedObjectSubclass {
    class var entityName: String { "Fracture" }
    class var managedProperties: [ManagedPropertyDeclaration] {
        [.attribute("patient", .string), .attribute("severity", .integer16), .attribute("isOpen", .boolean)]
    }
    static func propertyName(for keyPath: AnyKeyPath) -> String? {
        let table: [AnyKeyPath: String] = [\TypedFracture.patient: "patient", \TypedFracture.severity: "severity", \TypedFracture.isOpen: "isOpen"]
        return table[keyPath]
    }
    var patient: String { attributeValue(at: 0, named: "patient") ?? "" }
    var severity: Int16 { attributeValue(at: 1, named: "severity") ?? 0 }
    var isOpen: Bool { attributeValue(at: 2, named: "isOpen") ?? false }
}

/// A sample store copied to a temporary folder, its classes registered, its statements recorded.
func openTypedSample(_ name: String, _ classes: [any ManagedObjectSubclass.Type], register: Bool = true) throws -> (ManagedObjectContext, SQLStatements) {
    let folder = TestSupport.packageRoot.appendingPathComponent("Samples/\(name)")
    let copy = try TestSupport.temporaryDirectory("faultline-typed-predicates").appendingPathComponent("\(name).sqlite")
    try FileManager.default.copyItem(at: folder.appendingPathComponent("\(name).sqlite"), to: copy)
    let model = try ManagedObjectModel(contentsOf: folder.appendingPathComponent("\(name).xcdatamodeld"))
    let coordinator = try PersistentStoreCoordinator(model: model, storeURL: copy, options: .init(readOnly: false))
    if register { try coordinator.registerClasses(classes) }
    let statements = SQLStatements()
    coordinator.store.connection.addTraceObserver { event in
        if case .statement(let sql, let arguments) = event { statements.append(sql, arguments) }
    }
    return (ManagedObjectContext(coordinator: coordinator), statements)
}

let recipeClasses: [any ManagedObjectSubclass.Type] = [TypedRecipe.self, TypedIngredient.self, TypedRecipeType.self]

/// Expects a #Predicate to print as a format string, and a fetch with it to run the same SQL
/// with the same arguments and find the same objects as a fetch with the format string — the
/// objects for which Foundation's own evaluation of the predicate is true, and for which the
/// translated predicate is true in memory (as pending changes are matched). Returns the objects
/// found.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@discardableResult
func expectSameFetch<T: ManagedObjectSubclass>(
    _ predicate: Predicate<T>, _ format: String, _ arguments: Any?..., in context: ManagedObjectContext, _ statements: SQLStatements,
    sourceLocation: SourceLocation = #_sourceLocation
) throws -> [T] {
    let translated = try FLPredicate(predicate)
    let parsed = try FLPredicate(format: format, arguments: arguments)
    #expect(translated.description == parsed.description, sourceLocation: sourceLocation)
    // Swift's meaning (a force unwrap of nil counts as false: fetches do not trap) and the
    // in-memory evaluation pending changes go through, over every object of the entity.
    let all = try context.fetch(FetchDescriptor<T>())
    let bySwift = Set(all.filter { (try? predicate.evaluate($0)) == true }.map(\.objectID))
    let inMemory = Set(try all.filter { try translated.evaluate(with: $0) }.map(\.objectID))
    statements.removeAll()
    let typed = try context.fetch(FetchDescriptor(predicate: predicate))
    let typedSQL = statements.sql, typedArguments = statements.arguments
    statements.removeAll()
    var request = FetchRequest(entityName: T.entityName)
    request.predicate = parsed
    let plain = try context.fetch(request).map(\.objectID)
    #expect(typedSQL == statements.sql, sourceLocation: sourceLocation)
    #expect(typedArguments == statements.arguments, sourceLocation: sourceLocation)
    #expect(typed.map(\.objectID) == plain, sourceLocation: sourceLocation)
    #expect(Set(plain) == bySwift, "Swift's evaluation differs", sourceLocation: sourceLocation)
    #expect(Set(plain) == inMemory, "in-memory evaluation differs", sourceLocation: sourceLocation)
    return typed
}

/// `#Predicate` and `FetchDescriptor`: the translated predicates print as the equivalent format
/// strings and fetch with the same SQL, arguments and objects.
@Suite("Typed predicates: #Predicate as format strings, SQL and objects")
struct TypedPredicateTests {
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func theIssuesExampleFetchesWithCoreDatasSQL() throws {
        let (context, statements) = try openTypedSample("Recipes", recipeClasses)
        let limit = 4
        let descriptor = FetchDescriptor<TypedRecipe>(
            predicate: #Predicate { $0.name.starts(with: "G") && $0.ingredients.count < limit }, sortBy: [SortDescriptor(\.name)])
        #expect(try descriptor.fetchRequest().predicate?.description == "name BEGINSWITH \"G\" AND ingredients.@count < 4")
        statements.removeAll()
        let recipes = try context.fetch(descriptor)
        #expect(recipes.map(\.name) == ["Ginger Soy Chicken"])
        #expect(
            statements.sql == [
                "SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZINSTRUCTIONS, t0.ZNAME, t0.ZOVERVIEW, t0.ZPREPTIME, t0.ZTYPE FROM ZRECIPE t0 WHERE ( NSCoreDataStringSearch( t0.ZNAME, ?, 8, 0) AND (SELECT COUNT(t1.Z_PK) FROM ZINGREDIENT t1 WHERE (t0.Z_PK = t1.ZRECIPE) ) < ?) ORDER BY t0.ZNAME"
            ])
        #expect(statements.arguments == [[.text("G"), .integer(4)]])
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func localizedStandardContainsIsSwiftDatasStringSearch() throws {
        // The published SwiftData log (shared/reference coredata-sql-log-format.md, L-STRING B):
        // `WHERE  NSCoreDataStringSearch( t0.ZTITLE, ?, 417, 1)` with bind[0] = "Maui".
        let (context, statements) = try openTypedSample("Books", [TypedBook.self])
        let search = "EXPECT"
        let books = try expectSameFetch(#Predicate<TypedBook> { $0.title.localizedStandardContains(search) }, "title CONTAINS[cdl] %@", search, in: context, statements)
        #expect(books.map(\.title) == ["Great Expectations"])
        #expect(statements.sql == ["SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZAUTHOR, t0.ZCOPYRIGHT, t0.ZTITLE FROM ZBOOK t0 WHERE  NSCoreDataStringSearch( t0.ZTITLE, ?, 417, 1)"])
        #expect(statements.arguments == [[.text("EXPECT")]])
        // In memory too: `localizedStandardContains` ignores case and diacritics.
        let crepes = #Predicate<TypedBook> { $0.title.localizedStandardContains("CREPE") }
        #expect(try FLPredicate(crepes).evaluate(with: ["title": "Crêpes"]))
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func comparisonsAndLogic() throws {
        let (context, statements) = try openTypedSample("Recipes", recipeClasses)
        try expectSameFetch(#Predicate<TypedRecipe> { $0.name == "Guacamole" }, "name == %@", "Guacamole", in: context, statements)
        try expectSameFetch(#Predicate<TypedRecipe> { $0.name != "Guacamole" }, "name != \"Guacamole\"", in: context, statements)
        try expectSameFetch(#Predicate<TypedRecipe> { $0.name < "D" || $0.name >= "T" }, "name < \"D\" OR name >= \"T\"", in: context, statements)
        try expectSameFetch(#Predicate<TypedRecipe> { $0.name <= "C" }, "name <= \"C\"", in: context, statements)
        try expectSameFetch(#Predicate<TypedRecipe> { $0.name > "S" && !$0.name.contains("a") }, "name > \"S\" AND NOT name CONTAINS \"a\"", in: context, statements)
        let chained = #Predicate<TypedRecipe> { $0.name > "A" && $0.name < "M" && $0.name != "Focaccia" }
        try expectSameFetch(chained, "name > \"A\" AND name < \"M\" AND name != \"Focaccia\"", in: context, statements)
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func optionalChainingAndFlatMap() throws {
        let (context, statements) = try openTypedSample("Recipes", recipeClasses)
        // A key path through a to-one is just longer: nil when the destination is.
        let desserts = try expectSameFetch(#Predicate<TypedRecipe> { $0.type?.name == "Dessert" }, "type.name == \"Dessert\"", in: context, statements)
        #expect(desserts.count == 3)
        #expect(statements.sql.first?.contains("JOIN ZRECIPETYPE t1 ON t0.ZTYPE = t1.Z_PK WHERE  t1.ZNAME = ?") == true)
        try expectSameFetch(#Predicate<TypedRecipe> { $0.type.flatMap { $0.name } == nil }, "type.name == nil", in: context, statements)
        try expectSameFetch(#Predicate<TypedRecipe> { $0.type == nil }, "type == nil", in: context, statements)
        try expectSameFetch(#Predicate<TypedRecipe> { $0.type != nil }, "type != nil", in: context, statements)
        // Into a condition: the optional is tested (SwiftData's `IS NOT NULL AND` shape).
        let cake = try expectSameFetch(
            #Predicate<TypedRecipe> { $0.overview?.contains("cake") == true }, "overview != nil AND overview CONTAINS \"cake\"", in: context, statements)
        #expect(cake.map(\.name) == ["Chocolate Cake", "Crêpes Suzette"])  // pancakes
        #expect(statements.sql.first?.hasSuffix("WHERE ( t0.ZOVERVIEW IS NOT NULL AND  NSCoreDataStringSearch( t0.ZOVERVIEW, ?, 0, 0))") == true)
        try expectSameFetch(
            #Predicate<TypedRecipe> { $0.overview?.contains("cake") == false }, "overview != nil AND NOT overview CONTAINS \"cake\"", in: context, statements)
        try expectSameFetch(
            #Predicate<TypedRecipe> { $0.overview?.contains("cake") ?? true }, "(overview != nil AND overview CONTAINS \"cake\") OR overview == nil",
            in: context, statements)
        try expectSameFetch(
            #Predicate<TypedRecipe> { $0.overview?.contains("cake") != true }, "(overview != nil AND NOT overview CONTAINS \"cake\") OR overview == nil",
            in: context, statements)
        // `!` compares as the value does.
        try expectSameFetch(#Predicate<TypedRecipe> { $0.overview!.starts(with: "A") }, "overview BEGINSWITH \"A\"", in: context, statements)
        // Ingredients of a captured recipe, and through the to-one.
        let guacamole = try #require(desserts.first.map { _ in try context.fetch(FetchDescriptor<TypedRecipe>(predicate: #Predicate { $0.name == "Guacamole" })).first })
        let guac = try #require(guacamole)
        // An object ID through a to-one: SwiftData's published `( t0.ZPLAYLIST IS NOT NULL AND  t0.ZPLAYLIST = ?)`.
        let guacID = guac.objectID
        let ofGuac = try expectSameFetch(
            #Predicate<TypedIngredient> { $0.recipe?.objectID == guacID }, "recipe != nil AND recipe == %@", guac, in: context, statements)
        #expect(ofGuac.count == 4)
        #expect(statements.sql.first?.hasSuffix("WHERE ( t0.ZRECIPE IS NOT NULL AND  t0.ZRECIPE = ?)") == true)
        try expectSameFetch(#Predicate<TypedIngredient> { $0.recipe?.name == "Guacamole" }, "recipe.name == \"Guacamole\"", in: context, statements)
        try expectSameFetch(#Predicate<TypedIngredient> { $0.recipe?.type?.name == "Dessert" }, "recipe.type.name == \"Dessert\"", in: context, statements)
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func nilCoalescingAndTernariesSplitIntoConditions() throws {
        let (context, statements) = try openTypedSample("Recipes", recipeClasses)
        try expectSameFetch(
            #Predicate<TypedRecipe> { ($0.overview ?? "") == "" }, "(overview != nil AND overview == \"\") OR overview == nil", in: context, statements)
        try expectSameFetch(
            #Predicate<TypedRecipe> { ($0.prepTime ?? "soon") == "1 hour" }, "prepTime != nil AND prepTime == \"1 hour\"", in: context, statements)
        try expectSameFetch(#Predicate<TypedRecipe> { ($0.type == nil ? 0 : 1) == 1 }, "NOT type == nil", in: context, statements)
        let ternary = #Predicate<TypedIngredient> { ($0.amount == nil ? $0.displayOrder : 0) > 2 }
        try expectSameFetch(ternary, "amount == nil AND displayOrder > 2", in: context, statements)
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func stringMethods() throws {
        let (context, statements) = try openTypedSample("Recipes", recipeClasses)
        let crepes = try expectSameFetch(
            #Predicate<TypedRecipe> { $0.name.localizedStandardContains("crepe") }, "name CONTAINS[cdl] \"crepe\"", in: context, statements)
        #expect(crepes.map(\.name) == ["Crêpes Suzette"])
        #expect(statements.sql.first?.hasSuffix("WHERE  NSCoreDataStringSearch( t0.ZNAME, ?, 417, 1)") == true)
        try expectSameFetch(#Predicate<TypedRecipe> { $0.name.contains("Salad") }, "name CONTAINS \"Salad\"", in: context, statements)
        try expectSameFetch(#Predicate<TypedRecipe> { $0.name.starts(with: "Tar") }, "name BEGINSWITH \"Tar\"", in: context, statements)
        // Enum cases cannot be spelled inside #Predicate (it would make them key paths): capture them.
        let same = ComparisonResult.orderedSame, ascending = ComparisonResult.orderedAscending
        let pesto = try expectSameFetch(
            #Predicate<TypedRecipe> { $0.name.caseInsensitiveCompare("PESTO") == same }, "name ==[c] \"PESTO\"", in: context, statements)
        #expect(pesto.map(\.name) == ["Pesto"])
        try expectSameFetch(
            #Predicate<TypedRecipe> { $0.name.caseInsensitiveCompare("m") == ascending }, "name <[c] \"m\"", in: context, statements)
        try expectSameFetch(
            #Predicate<TypedRecipe> { $0.name.caseInsensitiveCompare("m") != ascending }, "name >=[c] \"m\"", in: context, statements)
        try expectSameFetch(
            #Predicate<TypedRecipe> { $0.name.localizedCompare("Pesto") == same }, "name ==[l] \"Pesto\"", in: context, statements)
        try expectSameFetch(
            #Predicate<TypedRecipe> { $0.name.localizedCompare("Pesto") != same }, "name !=[l] \"Pesto\"", in: context, statements)
        try expectSameFetch(#Predicate<TypedRecipe> { $0.name.count > 12 }, "name.length > 12", in: context, statements)
        try expectSameFetch(#Predicate<TypedRecipe> { $0.overview?.isEmpty == false }, "overview != nil AND NOT overview.length == 0", in: context, statements)
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func collectionsBecomeSubqueriesAndCounts() throws {
        let (context, statements) = try openTypedSample("Recipes", recipeClasses)
        let withFlour = try expectSameFetch(
            #Predicate<TypedRecipe> { $0.ingredients.contains { $0.name == "Flour" } },
            "SUBQUERY(ingredients, $_local_1, $_local_1.name == \"Flour\").@count != 0", in: context, statements)
        #expect(Set(withFlour.map(\.name)) == ["Chocolate Cake", "Crêpes Suzette", "Focaccia"])
        #expect(statements.sql.first?.hasSuffix("WHERE (SELECT COUNT(t1.Z_PK) FROM ZINGREDIENT t1 WHERE (t0.Z_PK = t1.ZRECIPE AND  t1.ZNAME = ?) ) <> ?") == true)
        let measured = try expectSameFetch(
            #Predicate<TypedRecipe> { $0.ingredients.allSatisfy { $0.amount != nil } },
            "SUBQUERY(ingredients, $_local_1, NOT $_local_1.amount != nil).@count == 0", in: context, statements)
        #expect(measured.count == 14)
        try expectSameFetch(
            #Predicate<TypedRecipe> { $0.ingredients.filter { $0.displayOrder > 2 }.count > 0 },
            "SUBQUERY(ingredients, $_local_1, $_local_1.displayOrder > 2).@count > 0", in: context, statements)
        try expectSameFetch(
            #Predicate<TypedRecipe> { $0.ingredients.filter { $0.name.starts(with: "S") }.isEmpty },
            "SUBQUERY(ingredients, $_local_1, $_local_1.name BEGINSWITH \"S\").@count == 0", in: context, statements)
        try expectSameFetch(#Predicate<TypedRecipe> { $0.ingredients.isEmpty }, "ingredients.@count == 0", in: context, statements)
        try expectSameFetch(#Predicate<TypedRecipe> { !$0.ingredients.isEmpty }, "NOT ingredients.@count == 0", in: context, statements)
        try expectSameFetch(#Predicate<TypedRecipe> { $0.ingredients.count == 2 }, "ingredients.@count == 2", in: context, statements)
        // Nested closures number their variables as Apple's conversion does.
        let nested = #Predicate<TypedRecipeType> { $0.recipes.contains { $0.ingredients.contains { $0.name == "Lime" } } }
        try expectSameFetch(
            nested, "SUBQUERY(recipes, $_local_1, SUBQUERY($_local_1.ingredients, $_local_2, $_local_2.name == \"Lime\").@count != 0).@count != 0",
            in: context, statements)
        // An inner closure may use the outer closure's element (not the fetched object).
        let sameName = #Predicate<TypedRecipeType> { $0.recipes.contains { r in r.ingredients.contains { $0.name == r.name } } }
        try expectSameFetch(
            sameName, "SUBQUERY(recipes, $_local_1, SUBQUERY($_local_1.ingredients, $_local_2, $_local_2.name == $_local_1.name).@count != 0).@count != 0",
            in: context, statements)
        // Membership: a captured collection, a relationship.
        let names = ["Pesto", "Emma", "Lemonade"]
        try expectSameFetch(#Predicate<TypedRecipe> { names.contains($0.name) }, "name IN %@", names, in: context, statements)
        let lime = try #require(try context.fetch(FetchDescriptor<TypedIngredient>(predicate: #Predicate { $0.name == "Lime" })).first)
        let limeID = lime.objectID
        let withLime = try expectSameFetch(
            #Predicate<TypedRecipe> { $0.ingredients.contains { $0.objectID == limeID } }, "SUBQUERY(ingredients, $_local_1, $_local_1 == %@).@count != 0", lime,
            in: context, statements)
        #expect(withLime.map(\.name) == ["Guacamole"])
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func arithmeticAndFoldedConstants() throws {
        let (context, statements) = try openTypedSample("Recipes", recipeClasses)
        let limit: Int16 = 2
        // `limit * 2` is computed in Swift: the SQL binds 4, not `? * ?`.
        let folded = #Predicate<TypedIngredient> { $0.displayOrder * 2 + 1 > limit * 2 }
        try expectSameFetch(folded, "displayOrder * 2 + 1 > 4", in: context, statements)
        #expect(statements.arguments.first == [.integer(2), .integer(1), .integer(4)])
        try expectSameFetch(#Predicate<TypedIngredient> { $0.displayOrder - 1 == limit }, "displayOrder - 1 == 2", in: context, statements)
        try expectSameFetch(#Predicate<TypedIngredient> { -$0.displayOrder < -2 }, "-displayOrder < -2", in: context, statements)
        try expectSameFetch(
            #Predicate<TypedIngredient> { $0.displayOrder / 2 == 1 }, "(displayOrder - modulus:by:(displayOrder, 2)) / 2 == 1", in: context, statements)
        try expectSameFetch(#Predicate<TypedIngredient> { $0.displayOrder % 2 == 1 }, "modulus:by:(displayOrder, 2) == 1", in: context, statements)
        try expectSameFetch(#Predicate<TypedIngredient> { (1...2).contains($0.displayOrder) }, "displayOrder BETWEEN {1, 2}", in: context, statements)
        try expectSameFetch(
            #Predicate<TypedIngredient> { (1..<3).contains($0.displayOrder) }, "displayOrder >= 1 AND displayOrder < 3", in: context, statements)
        let from: PartialRangeFrom<Int16> = 2...
        try expectSameFetch(#Predicate<TypedIngredient> { from.contains($0.displayOrder) }, "displayOrder >= 2", in: context, statements)
        // A flatMap over a captured optional binds its argument to the value.
        let maybe: String? = "Pesto", none: String? = nil
        try expectSameFetch(#Predicate<TypedRecipe> { r in maybe.flatMap { $0 == r.name } == true }, "\"Pesto\" == name", in: context, statements)
        #expect(try FLPredicate(#Predicate<TypedRecipe> { r in none.flatMap { $0 == r.name } == true }) == .falsePredicate)
        // A predicate that uses no input at all is a constant.
        #expect(try FLPredicate(#Predicate<TypedIngredient> { _ in limit > 1 }) == .truePredicate)
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func datesObjectsAndIdentifiers() throws {
        let (context, statements) = try openTypedSample("Inventory", [TypedStock.self, TypedAsset.self])
        let cutoff = Date(timeIntervalSinceReferenceDate: 815_925_600)
        let recent = try expectSameFetch(#Predicate<TypedStock> { $0.date! >= cutoff }, "date >= %@", cutoff, in: context, statements)
        #expect(recent.count == 5)
        #expect(statements.arguments.first == [.real(815_925_600)])
        try expectSameFetch(#Predicate<TypedStock> { ($0.date ?? cutoff) < cutoff }, "date != nil AND date < %@", cutoff, in: context, statements)
        try expectSameFetch(#Predicate<TypedStock> { $0.count > 3 && $0.asset?.label == "T-shirt" }, "count > 3 AND asset.label == \"T-shirt\"", in: context, statements)
        let bike = try #require(try context.fetch(FetchDescriptor<TypedAsset>(predicate: #Predicate { $0.label == "Bicycle" })).first)
        let bikeID = bike.objectID
        try expectSameFetch(#Predicate<TypedAsset> { $0.objectID == bikeID }, "SELF == %@", bike, in: context, statements)
        #expect(statements.sql.first?.hasSuffix("WHERE  t0.Z_PK = ?") == true)
        try expectSameFetch(#Predicate<TypedStock> { $0.asset?.objectID == bikeID }, "asset != nil AND asset == %@", bike, in: context, statements)
        let assets = try expectSameFetch(
            #Predicate<TypedAsset> { $0.inventories.contains { $0.count > 10 } }, "SUBQUERY(inventories, $_local_1, $_local_1.count > 10).@count != 0",
            in: context, statements)
        #expect(assets.compactMap(\.label).sorted() == ["Coffee Mug", "T-shirt"])
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func booleansAndSubEntities() throws {
        // SwiftData's `#Predicate { $0.visited }` logs ` t0.ZVISITED = ?` (useyourloaf.com,
        // "SwiftData Fetching Pending Changes"): a Boolean property is `== YES`.
        let (context, statements) = try openTypedSample("Triage", [TypedFracture.self])
        let open = try expectSameFetch(#Predicate<TypedFracture> { $0.isOpen }, "isOpen == YES", in: context, statements)
        #expect(open.map(\.patient) == ["D. Tanaka"])
        #expect(statements.sql.first?.hasSuffix("FROM ZINJURY t0 WHERE ( t0.ZISOPEN = ? AND  t0.Z_ENT = ?)") == true)
        #expect(statements.arguments.first == [.integer(1), .integer(4)])
        try expectSameFetch(#Predicate<TypedFracture> { !$0.isOpen }, "NOT isOpen == YES", in: context, statements)
        try expectSameFetch(#Predicate<TypedFracture> { $0.isOpen == false }, "isOpen == NO", in: context, statements)
        try expectSameFetch(#Predicate<TypedFracture> { $0.isOpen || $0.severity > 4 }, "isOpen == YES OR severity > 4", in: context, statements)
        let severe = 3
        try expectSameFetch(#Predicate<TypedFracture> { $0.isOpen == (severe > 2) }, "isOpen == YES", in: context, statements)
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func regularExpressionsMatchAnywhere() throws {
        let (context, statements) = try openTypedSample("Recipes", recipeClasses)
        let pattern = /Sal|Sou/
        try expectSameFetch(#Predicate<TypedRecipe> { $0.name.contains(pattern) }, "name MATCHES \".*(?:Sal|Sou).*\"", in: context, statements)
    }
}

/// What a FetchDescriptor adds to the predicate: sorting, window, properties, prefetching,
/// counts and identifiers, pending changes.
@Suite("FetchDescriptor: requests, options, counts, identifiers, pending changes")
struct FetchDescriptorTests {
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func sortDescriptorsAndWindow() throws {
        let (context, statements) = try openTypedSample("Recipes", recipeClasses)
        var descriptor = FetchDescriptor<TypedRecipe>(sortBy: [SortDescriptor(\.prepTime, order: .reverse), SortDescriptor(\.name)])
        descriptor.fetchLimit = 3
        descriptor.fetchOffset = 2
        let request = try descriptor.fetchRequest()
        #expect(request.sortDescriptors == [FLSortDescriptor(key: "prepTime", ascending: false), FLSortDescriptor(key: "name")])
        #expect(request.fetchLimit == 3 && request.fetchOffset == 2 && request.entityName == "Recipe")
        statements.removeAll()
        let recipes = try context.fetch(descriptor)
        #expect(statements.sql.first?.hasSuffix("FROM ZRECIPE t0 ORDER BY t0.ZPREPTIME DESC, t0.ZNAME  LIMIT 3 OFFSET 2") == true)
        var plain = FetchRequest(entityName: "Recipe")
        plain.sortDescriptors = request.sortDescriptors
        plain.fetchLimit = 3
        plain.fetchOffset = 2
        #expect(recipes.map(\.objectID) == (try context.fetch(plain)).map(\.objectID))
        #expect(try FLSortDescriptor(SortDescriptor(\TypedRecipe.name, comparator: .lexical)) == FLSortDescriptor(key: "name"))
        // nil is no limit, as in SwiftData; negative values are errors.
        descriptor.fetchLimit = nil
        descriptor.fetchOffset = nil
        #expect(try context.fetch(descriptor).count == 16)
        descriptor.fetchLimit = -1
        #expect(throws: FetchRequestError.self) { try context.fetch(descriptor) }
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func propertiesAndPrefetching() throws {
        let (context, statements) = try openTypedSample("Recipes", recipeClasses)
        var descriptor = FetchDescriptor<TypedRecipe>(predicate: #Predicate { $0.name == "Pesto" })
        descriptor.propertiesToFetch = [\.name, \.type]
        descriptor.relationshipKeyPathsForPrefetching = [\.ingredients]
        let request = try descriptor.fetchRequest()
        #expect(request.propertiesToFetch?.map(\.name) == ["name", "type"])
        #expect(request.relationshipKeyPathsForPrefetching == ["ingredients"])
        statements.removeAll()
        let pesto = try #require(try context.fetch(descriptor).first)
        #expect(statements.sql.first == "SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZNAME, t0.ZTYPE FROM ZRECIPE t0 WHERE  t0.ZNAME = ?")
        #expect(statements.sql.count == 2)  // the ingredients, prefetched
        #expect(pesto.ingredients.count == 3)
        // No to-many fault fired (reading a property outside propertiesToFetch loads the rest of the row).
        #expect(statements.sql.dropFirst(2).allSatisfy { !$0.contains("ZINGREDIENT") }, "\(statements.sql)")
        descriptor.propertiesToFetch = [\.shout]
        #expect(throws: PredicateTranslationError.self) { try descriptor.fetchRequest() }
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func countsAndIdentifiers() throws {
        let (context, statements) = try openTypedSample("Recipes", recipeClasses)
        let descriptor = FetchDescriptor<TypedRecipe>(predicate: #Predicate { $0.type?.name == "Dessert" })
        statements.removeAll()
        #expect(try context.fetchCount(descriptor) == 3)
        #expect(statements.sql == ["SELECT COUNT(DISTINCT t0.Z_PK) FROM ZRECIPE t0 JOIN ZRECIPETYPE t1 ON t0.ZTYPE = t1.Z_PK WHERE  t1.ZNAME = ?"])
        statements.removeAll()
        let ids = try context.fetchIdentifiers(descriptor)
        #expect(statements.sql == ["SELECT 0, t0.Z_PK FROM ZRECIPE t0 JOIN ZRECIPETYPE t1 ON t0.ZTYPE = t1.Z_PK WHERE  t1.ZNAME = ?"])
        #expect(ids.map(\.primaryKey).sorted() == [1, 2, 8])
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func pendingChangesAreMatchedWithTheTranslatedPredicate() throws {
        let (context, _) = try openTypedSample("Recipes", recipeClasses)
        let descriptor = FetchDescriptor<TypedRecipe>(predicate: #Predicate { $0.name.starts(with: "G") && $0.overview?.contains("dip") == true })
        #expect(try context.fetch(descriptor).map(\.name) == ["Guacamole"])
        let inserted = try TypedRecipe(context: context)
        inserted.name = "Green dip"
        inserted.overview = "A dip of peas."
        let guacamole = try #require(try context.fetch(descriptor).first { $0.name == "Guacamole" })
        guacamole.overview = "Avocado, lime."
        let found = try context.fetch(descriptor)
        #expect(found.map(\.name) == ["Green dip"])
        #expect(try context.fetchCount(descriptor) == 1)
        var storeOnly = descriptor
        storeOnly.includePendingChanges = false
        #expect(try context.fetch(storeOnly).map(\.name) == ["Guacamole"])
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func theClassMustBeRegistered() throws {
        let (context, _) = try openTypedSample("Recipes", recipeClasses, register: false)
        let error = try #require(throws: FetchRequestError.self) { try context.fetch(FetchDescriptor<TypedRecipe>()) }
        #expect(error.message == "class TypedRecipe is not registered for entity Recipe: call registerClasses on the coordinator before making the context")
        #expect(throws: FetchRequestError.self) { try context.fetchCount(FetchDescriptor<TypedRecipe>()) }
        // The request itself needs no registration: it is for the shell and for tests.
        #expect(try FetchDescriptor<TypedRecipe>(predicate: #Predicate { $0.name == "x" }).fetchRequest().predicate?.description == "name == \"x\"")
    }
}

/// Expressions with no Core Data form are errors naming them, never an in-memory filter.
@Suite("Typed predicates: what cannot be translated")
struct TypedPredicateErrorTests {
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    func message<T: ManagedObjectSubclass>(_ predicate: Predicate<T>) throws -> String {
        let error = try #require(throws: PredicateTranslationError.self) { try FLPredicate(predicate) }
        return error.message
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func keyPathsThatAreNoModelProperty() throws {
        #expect(
            try message(#Predicate<TypedRecipe> { $0.shout == "PESTO" })
                == "cannot translate \\TypedRecipe.<computed String> in #Predicate<TypedRecipe>: it is not a model property: TypedRecipe.propertyName(for:) does not know it (only the entity's attributes and relationships can be fetched on, not computed or transient Swift properties)"
        )
        let onString = try message(#Predicate<TypedRecipe> { $0.name.utf8.count > 3 })
        #expect(onString.hasPrefix("cannot translate \\String.<computed UTF8View> in #Predicate<TypedRecipe>: String is not a ManagedObjectSubclass"))
        // Sorting by one is an error too.
        let sort = try #require(throws: PredicateTranslationError.self) {
            try FetchDescriptor<TypedRecipe>(sortBy: [SortDescriptor(\.shout)]).fetchRequest()
        }
        #expect(sort.expression == "\\TypedRecipe.<computed String>")
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func subscriptsAndOuterReferences() throws {
        let ranks = ["Pesto": 1]
        let subscripted = try #require(throws: PredicateTranslationError.self) {
            try FLPredicate(#Predicate<TypedRecipe> { ranks[$0.name] == 1 })
        }
        #expect(subscripted.expression == "DictionaryKeySubscript")
        #expect(
            subscripted.message.hasPrefix(
                "cannot translate DictionaryKeySubscript in #Predicate<TypedRecipe>: DictionaryKeySubscript has no Core Data form. Subscripts cannot be fetched on"))
        let outer = try message(#Predicate<TypedRecipe> { recipe in recipe.ingredients.contains { $0.name == recipe.name } })
        #expect(
            outer.hasPrefix("cannot translate Variable in #Predicate<TypedRecipe>: the closure of contains(where:), allSatisfy or filter uses the fetched object"))
        let ascending = ComparisonResult.orderedAscending
        let localized = try message(#Predicate<TypedRecipe> { $0.name.localizedCompare("m") == ascending })
        #expect(localized.hasPrefix("cannot translate Equal in #Predicate<TypedRecipe>: localizedCompare can only be compared with .orderedSame here"))
        let overCaptured = try message(#Predicate<TypedRecipe> { recipe in ["a", "b"].contains { $0 == recipe.name } })
        #expect(overCaptured.contains("closures translate over relationships"))
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func failingCapturedValues() throws {
        let missing: Int16? = nil
        let unwrapped = try message(#Predicate<TypedIngredient> { $0.displayOrder > missing! })
        #expect(unwrapped.hasPrefix("cannot translate ForcedUnwrap in #Predicate<TypedIngredient>: evaluating the captured part ForcedUnwrap failed"))
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func deepPredicatesAreRefusedNotOverflowed() throws {
        // 150 `!` around one comparison, built in code (#Predicate source that deep would not compile).
        func negated(_ e: some StandardPredicateExpression<Bool>) -> any StandardPredicateExpression<Bool> {
            PredicateExpressions.Negation(e)
        }
        let deep = Predicate<TypedRecipe> { recipe in
            var e: any StandardPredicateExpression<Bool> = PredicateExpressions.Equal(
                lhs: PredicateExpressions.KeyPath(root: recipe, keyPath: \TypedRecipe.name), rhs: PredicateExpressions.Value("Pesto"))
            for _ in 0..<150 { e = negated(e) }
            return e
        }
        let error = try #require(throws: PredicateTranslationError.self) { try FLPredicate(deep) }
        #expect(error.message.contains("nests more than 100 expressions deep"))
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func tooManyCasesAreRefused() throws {
        // `a == (t1 ? (t2 ? … : …) : …)` seven levels deep: 128 cases once the comparison splits.
        func choose(
            _ test: some StandardPredicateExpression<Bool>, _ a: some StandardPredicateExpression<String>, _ b: some StandardPredicateExpression<String>
        ) -> any StandardPredicateExpression<String> {
            PredicateExpressions.Conditional(test: test, trueBranch: a, falseBranch: b)
        }
        func equal(_ a: some StandardPredicateExpression<String>, _ b: some StandardPredicateExpression<String>) -> any StandardPredicateExpression<Bool> {
            PredicateExpressions.Equal(lhs: a, rhs: b)
        }
        let many = Predicate<TypedRecipe> { recipe in
            let name = PredicateExpressions.KeyPath(root: recipe, keyPath: \TypedRecipe.name)
            func tree(_ depth: Int) -> any StandardPredicateExpression<String> {
                guard depth > 0 else { return name }
                return choose(equal(name, PredicateExpressions.Value("x\(depth)")), tree(depth - 1), tree(depth - 1))
            }
            return equal(tree(7), PredicateExpressions.Value("1 hour"))
        }
        let error = try #require(throws: PredicateTranslationError.self) { try FLPredicate(many) }
        #expect(error.message.hasSuffix("make more than 64 cases; split the predicate"))
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func nothingIsFetchedWhenTranslationFails() throws {
        let (context, statements) = try openTypedSample("Recipes", recipeClasses)
        statements.removeAll()
        #expect(throws: PredicateTranslationError.self) {
            try context.fetch(FetchDescriptor<TypedRecipe>(predicate: #Predicate { $0.shout == "PESTO" }))
        }
        #expect(statements.sql.isEmpty)
    }
}
