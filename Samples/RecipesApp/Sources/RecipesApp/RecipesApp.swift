// The Recipes sample through typed classes: `Recipe`, `Ingredient` and `RecipeType` are
// generated at build time by the FaultlineGenerate plugin from Recipes.xcdatamodeld (this
// target's resource: a copy of Samples/Recipes's, which a test keeps equal), with
// `RecipesModel.classes` to register them.
//
//   swift run --package-path Samples/RecipesApp [RecipesApp] [STORE]
//
// Opens a temporary copy of Samples/Recipes/Recipes.sqlite (or STORE), fetches, edits through
// typed properties, observes the changes, saves, and reads the saved values back.

import Faultline
import Foundation

@main
struct RecipesApp {
    static func main() async {
        do {
            try await run()
        } catch {
            print("RecipesApp: error: \(error)")
            exit(1)
        }
    }

    static func run() async throws {
        // A copy of the sample store: the original stays as it is.
        let source = CommandLine.arguments.dropFirst().first.map { URL(fileURLWithPath: $0) } ?? sampleStore
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("RecipesApp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let storeURL = folder.appendingPathComponent("Recipes.sqlite")
        try FileManager.default.copyItem(at: source, to: storeURL)

        // The model this target ships, and the generated classes registered before any context.
        guard let modelURL = Bundle.module.url(forResource: "Recipes", withExtension: "xcdatamodeld") else {
            throw AppError("Recipes.xcdatamodeld is not among the target's resources")
        }
        let model = try ManagedObjectModel(contentsOf: modelURL)
        func open() throws -> ManagedObjectContext {
            let coordinator = try PersistentStoreCoordinator(model: model, storeURL: storeURL, options: .init(readOnly: false))
            try coordinator.registerClasses(RecipesModel.classes)
            return ManagedObjectContext(coordinator: coordinator)
        }
        let context = try open()

        // Fetch: recipes whose name starts with G, by name, as `Recipe` instances.
        // `#Predicate` is translated into the predicate the format string `name BEGINSWITH %@`
        // gives, so the fetch runs the same SQL.
        let prefix = "G"
        let recipes = try context.fetch(FetchDescriptor<Recipe>(
            predicate: #Predicate { $0.name.starts(with: prefix) }, sortBy: [SortDescriptor(\.name)]))
        print("fetched \(recipes.count) recipes starting with G:")
        for recipe in recipes {
            let ingredients = recipe.ingredients.sorted { ($0.displayOrder ?? 0) < ($1.displayOrder ?? 0) }.map(\.name)
            print("  \(recipe.name) (\(recipe.type?.name ?? "no type"), \(recipe.prepTime ?? "?")): \(ingredients.joined(separator: ", "))")
        }

        // Observe: the context's notifications, and its stream of events (object IDs).
        let observer = NotificationCenter.default.addObserver(forName: ManagedObjectContext.didSaveNotification, object: context, queue: nil) { note in
            guard let saved = ChangedObjects(note) else { return }
            let inserted = saved.inserted.map(label).sorted().joined(separator: ", ")
            let updated = saved.updated.map(label).sorted().joined(separator: ", ")
            print("did-save notification: inserted \(inserted); updated \(updated)")
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        let events = context.changes

        // Edit through typed properties: a changed attribute, a new object in a to-many
        // relationship, a new recipe with a to-one relationship.
        guard let guacamole = recipes.first(where: { $0.name == "Guacamole" }) else { throw AppError("no Guacamole in the store") }
        guacamole.prepTime = "20 minutes"
        let chili = try Ingredient(context: context)
        chili.name = "Jalapeño"
        chili.amount = "1"
        chili.displayOrder = Int16(guacamole.ingredients.count)
        guacamole.addToIngredients(chili)
        let gazpacho = try Recipe(context: context)
        gazpacho.name = "Gazpacho"
        gazpacho.prepTime = "30 minutes"
        gazpacho.type = try RecipeType.fetch(RecipeType.fetchRequest(), in: context).first { $0.name == "Soup" }
        print("before save: Guacamole has \(guacamole.ingredients.count) ingredients; Gazpacho is \(gazpacho.type?.name ?? "untyped")")

        try context.save()
        for await event in events {
            print("event \(event.kind.rawValue): \(event.inserted.count) inserted, \(event.updated.count) updated, \(event.deleted.count) deleted")
            if event.kind == .didSave { break }
        }

        // Read back in a new coordinator: the values came from the store.
        let reopened = try open()
        let names = ["Guacamole", "Gazpacho"]
        let again = FetchDescriptor<Recipe>(predicate: #Predicate { names.contains($0.name) }, sortBy: [SortDescriptor(\.name)])
        for recipe in try reopened.fetch(again) {
            let ingredients = recipe.ingredients.map(\.name).sorted()
            let list = ingredients.isEmpty ? "none" : ingredients.joined(separator: ", ")
            print("saved: \(recipe.name), \(recipe.prepTime ?? "?"), \(recipe.type?.name ?? "no type"), ingredients: \(list)")
        }
    }

    /// An object as its class and name: the notification's objects are instances of the
    /// generated classes.
    static func label(_ object: ManagedObject) -> String {
        switch object {
        case let recipe as Recipe: "Recipe \(recipe.name)"
        case let ingredient as Ingredient: "Ingredient \(ingredient.name)"
        case let type as RecipeType: "RecipeType \(type.name)"
        default: "\(object.objectID)"
        }
    }

    /// Samples/Recipes/Recipes.sqlite, beside this package.
    static var sampleStore: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../../Recipes/Recipes.sqlite").standardizedFileURL
    }
}

struct AppError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
