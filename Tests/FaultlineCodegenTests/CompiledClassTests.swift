import Faultline
import FaultlineCodegen
import FaultlineTestSupport
import Foundation
import Testing

/// Generated code compiles in Swift 6 mode without a warning and works: for each model,
/// `swiftc -swift-version 6 -warnings-as-errors` builds the classes with the round-trip
/// program (`Tests/Fixtures/GeneratedClasses/RoundTrip.swift`) against the modules of this
/// test run, and the program opens a copy of a store with the classes registered, reads every
/// typed property of every object against `value(forKey:)`, changes the writable ones through
/// their typed setters, saves, and reads them back from a new coordinator.
///
/// The samples and the AllTypes test model, and models the generator was not written
/// against: the corpus's tavant store with its Xcode model, and Apple Photos' store with the
/// model it caches (53 entities, inheritance, ordered relationships, no scalar flags).
@Suite(.serialized, .enabled(if: GeneratedCode.compilerUnavailable == nil || TestSupport.isCI, "skipped: swiftc is not on the PATH"))
struct CompiledClassTests {
    static func expectClean(_ result: GeneratedCode.RoundTrip, entities: Int, _ name: String) {
        #expect(result.problems == 0, "\(name): \(result)")
        #expect(result.classes == entities, "\(name): \(result)")
        #expect(result.objects > 0 && result.values > 0 && result.changed > 0, "\(name): \(result)")
    }

    @Test(arguments: ["Recipes", "Inventory", "Books", "Triage"])
    func sampleClassesRoundTripTheSampleStore(_ sample: String) async throws {
        let folder = TestSupport.packageRoot.appendingPathComponent("Samples/\(sample)")
        let store = try GeneratedCode.copy(store: folder.appendingPathComponent("\(sample).sqlite"))
        let modelURL = GeneratedCode.sampleModel(sample)
        let model = try ManagedObjectModel(contentsOf: modelURL)
        let result = try await GeneratedCode.roundTrip(model: modelURL, store: store, generatedFrom: model, sourceName: modelURL.lastPathComponent)
        Self.expectClean(result, entities: model.entities.count, sample)
    }

    /// Every attribute type and optionality rule on a store written here, through KVC.
    @Test func allTypesRoundTripAStoreOfEveryType() async throws {
        let modelURL = GeneratedCode.modelRoot.appendingPathComponent("AllTypes.xcdatamodel")
        let model = try ManagedObjectModel(contentsOf: modelURL)
        let store = try TestSupport.temporaryDirectory("faultline-codegen-store").appendingPathComponent("AllTypes.sqlite")
        do {
            let context = ManagedObjectContext(coordinator: try PersistentStoreCoordinator(model: model, storeURL: store, options: .init(readOnly: false, createIfMissing: true)))
            let boss = try context.insertObject(entityName: "Employee")
            try boss.setValue("Ada", forKey: "name")
            try boss.setValue(Int32(1), forKey: "badge")
            let employee = try context.insertObject(entityName: "Employee")
            try employee.setValue("Grace", forKey: "name")
            try employee.setValue(Int16(41), forKey: "age")
            try employee.setValue(boss, forKey: "manager")
            let tag = try context.insertObject(entityName: "Tag")
            try tag.setValue("blue", forKey: "label")
            for (index, withValues) in [true, false].enumerated() {
                let sample = try context.insertObject(entityName: "Sample")
                try sample.setValue(Data([1, 2, 3]), forKey: "blob")
                try sample.setValue(Date(timeIntervalSinceReferenceDate: 1000 + Double(index)), forKey: "created")
                try sample.setValue(UUID(), forKey: "identifier")
                try sample.setValue(URL(string: "https://example.com/\(index)"), forKey: "link")
                try sample.setValue(employee, forKey: "owner")
                if withValues {
                    try sample.setValue("text", forKey: "default")
                    try sample.setValue(Int32(7), forKey: "int32Object")
                    try sample.setValue(Decimal(string: "3.75"), forKey: "optionalPrice")
                    try sample.setValue(Data([9]), forKey: "options")
                    try sample.setValue(Float(0.5), forKey: "weight")
                    try sample.setValue(Int32(3), forKey: "version")
                    try sample.addObject(tag, toRelationship: "tags")
                    for text in ["first", "second", "third"] {
                        let step = try context.insertObject(entityName: "Step")
                        try step.setValue(text, forKey: "text")
                        try sample.addObject(step, toRelationship: "steps")
                    }
                } else {
                    // Optional scalars without a value read their defaults.
                    try sample.setValue(nil, forKey: "int16Scalar")
                    try sample.setValue(nil, forKey: "version")
                }
            }
            _ = try context.insertObject(entityName: "Marker")
            try context.save()
        }
        let result = try await GeneratedCode.roundTrip(model: modelURL, store: store, generatedFrom: model, sourceName: modelURL.lastPathComponent)
        #expect(result.problems == 0, "\(result)")
        #expect(result.classes == 7 && result.objects == 9, "\(result)")
        #expect(result.defaulted >= 2, "\(result)")  // int16Scalar and version of the second sample
        #expect(result.changed > 20, "\(result)")
    }

    /// Lifecycle methods go in a subclass of a generated class, registered in its place:
    /// objects of the entity are then instances of the subclass everywhere.
    @Test func aSubclassOfAGeneratedClassAddsLifecycleMethods() async throws {
        let folder = try TestSupport.temporaryDirectory("faultline-codegen")
        let modelURL = GeneratedCode.sampleModel("Recipes")
        let files = try GeneratedCode.files(for: modelURL)
        try GeneratedFile.write(files, to: folder)
        let main = #"""
            import Faultline
            import Foundation

            final class RecipeObject: Recipe {
                override func awakeFromInsert() { prepTime = "unknown" }
                override func willSave() { if name.isEmpty { name = "Untitled" } }
            }

            let store = URL(fileURLWithPath: CommandLine.arguments[1])
            let model = try ManagedObjectModel(contentsOf: URL(fileURLWithPath: CommandLine.arguments[2]))
            let coordinator = try PersistentStoreCoordinator(model: model, storeURL: store, options: .init(readOnly: false))
            try coordinator.registerClasses([RecipeObject.self, Ingredient.self, RecipeType.self])
            let context = ManagedObjectContext(coordinator: coordinator)
            let new = try RecipeObject(context: context)
            let ginger = try RecipeObject.fetch(RecipeObject.fetchRequest(), in: context).first { $0.name.hasPrefix("Ginger") }
            new.type = ginger?.type
            try context.save()
            let viaType = ginger?.type?.recipes.allSatisfy { $0 is RecipeObject } ?? false
            let viaIngredient = ginger?.ingredients.first?.recipe is RecipeObject
            print(new.name, new.prepTime ?? "-", viaType, viaIngredient, RecipeObject.propertyName(for: \RecipeObject.prepTime) ?? "-")
            """#
        try main.write(to: folder.appendingPathComponent("main.swift"), atomically: true, encoding: .utf8)
        let executable = folder.appendingPathComponent("subclass")
        let sources = files.map { folder.appendingPathComponent($0.name) } + [folder.appendingPathComponent("main.swift")]
        let compiled = try await GeneratedCode.compile(sources, module: "Subclass", executable: executable)
        try #require(compiled.status == 0, "\(compiled.output)")
        let store = try GeneratedCode.copy(store: TestSupport.packageRoot.appendingPathComponent("Samples/Recipes/Recipes.sqlite"))
        let run = try await TestSupport.run(executable, [store.path, modelURL.path])
        #expect(run.stdout == "Untitled unknown true true prepTime\n", "\(run.stderr)")
    }

    /// A held-out model: an Xcode 5 model and its store, from the corpus.
    @Test(.enabled(if: Corpus.shouldRun, Corpus.skipMessage))
    func heldOutXcodeModelRoundTripsItsStore() async throws {
        let corpus = try Corpus.required()
        let store = try Corpus.copyStore("tavant-ios7/Model.sqlite", from: corpus)
        let modelURL = corpus.appendingPathComponent("stores/tavant-ios7/Model.xcdatamodeld")
        let model = try ManagedObjectModel(contentsOf: modelURL)
        let result = try await GeneratedCode.roundTrip(model: modelURL, store: store, generatedFrom: model, sourceName: modelURL.lastPathComponent)
        Self.expectClean(result, entities: 2, "tavant-ios7")
    }

    /// A held-out model: Apple Photos' own, as its store caches it (compiled: no scalar
    /// flags); its two `version` attributes need no rename (the row version is `rowVersion`).
    @Test(.enabled(if: Corpus.shouldRun, Corpus.skipMessage))
    func heldOutPhotosModelRoundTripsItsStore() async throws {
        let corpus = try Corpus.required()
        let store = try Corpus.copyStore("photos-10.15.1/Photos.sqlite", from: corpus)
        let model = try #require(try SQLiteStore.cachedModel(at: store))
        let result = try await GeneratedCode.roundTrip(model: nil, store: store, generatedFrom: model, sourceName: "Photos.sqlite", swiftNames: [:])
        Self.expectClean(result, entities: 53, "photos-10.15.1")
        #expect(result.objects > 300 && result.values > 5000, "\(result)")
    }

    /// The other corpus models' classes compile (type-checked, warnings as errors).
    @Test(.enabled(if: Corpus.shouldRun, Corpus.skipMessage))
    func everyOtherCorpusModelCompiles() async throws {
        let corpus = try Corpus.required()
        var models: [(name: String, model: ManagedObjectModel, renames: [String: String])] = []
        for name in ["Bookmark", "EmployeeDirectory", "MastodonCoreData", "Moody", "VersionedModel", "momcomTests"] {
            let url = corpus.appendingPathComponent("models/\(name).xcdatamodeld")
            models.append((url.lastPathComponent, try ManagedObjectModel(contentsOf: url), [:]))
        }
        for name in ["Contacts.mom", "RestKitCoreData.momd"] {
            models.append((name, try ManagedObjectModel(contentsOf: corpus.appendingPathComponent("compiled/\(name)")), [:]))
        }
        for name in ["CLSBusinessCategoryCache.POI", "CLSContactCache", "CLSLocationCache", "CLSPublicEventCache"] {
            let store = try Corpus.copyStore("photoanalysis-14.6.0/\(name).sqlite", from: corpus)
            models.append((name + ".sqlite", try #require(try SQLiteStore.cachedModel(at: store)), [:]))
        }
        for (name, model, renames) in models {
            let folder = try TestSupport.temporaryDirectory("faultline-codegen")
            let files = try ClassGenerator(model: model, sourceName: name, swiftNames: renames).files()
            try GeneratedFile.write(files, to: folder)
            let compiled = try await GeneratedCode.compile(files.map { folder.appendingPathComponent($0.name) }, module: "Generated", executable: nil)
            #expect(compiled.status == 0, "\(name):\n\(compiled.output)")
        }
    }
}
