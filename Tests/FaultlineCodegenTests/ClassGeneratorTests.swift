import FaultlineModel
import FaultlineTestSupport
import Foundation
import Testing

@testable import FaultlineCodegen

/// The generator's decisions (names, optionality, defaults) and its errors, and the two
/// commands that run it: `faultline generate` and the plugin's `faultline-generate`.
@Suite struct ClassGeneratorTests {
    /// A model from the entities of an `.xcdatamodel`'s XML.
    static func model(_ entities: String) throws -> ManagedObjectModel {
        let folder = try TestSupport.temporaryDirectory("faultline-codegen-model").appendingPathComponent("Test.xcdatamodel")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let xml = """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" sourceLanguage="Swift">
            \(entities)
            </model>
            """
        try xml.write(to: folder.appendingPathComponent("contents"), atomically: true, encoding: .utf8)
        return try ManagedObjectModel(contentsOf: folder)
    }

    static func problems(_ entities: String, swiftNames: [String: String] = [:]) throws -> [String] {
        let generator = try ClassGenerator(model: try model(entities), sourceName: "Test.xcdatamodel", swiftNames: swiftNames)
        do {
            _ = try generator.files()
            return []
        } catch let error as ClassGenerationError {
            return error.problems
        }
    }

    @Test func classNamesComeFromRepresentedClassNameWithoutItsModule() throws {
        let model = try Self.model(
            """
            <entity name="A" representedClassName="MyApp.Recipe"/>
            <entity name="B" representedClassName=".Tag"/>
            <entity name="C" representedClassName="NSManagedObject"/>
            <entity name="D"/>
            """)
        let names = model.entities.sorted { $0.name < $1.name }.map { ClassGenerator.className(of: $0) }
        #expect(names == ["Recipe", "Tag", "C", "D"])
        let files = try ClassGenerator(model: model, sourceName: "Test.xcdatamodel").files().map(\.name)
        #expect(files == ["C+Faultline.swift", "D+Faultline.swift", "Recipe+Faultline.swift", "Tag+Faultline.swift", "TestModel+Faultline.swift"])
    }

    @Test func namesThatCannotBeSwiftNamesAreErrorsNamingEntityAndProperty() throws {
        let problems = try Self.problems(
            """
            <entity name="Keyword" representedClassName="protocol"/>
            <entity name="Hider" representedClassName="Date"/>
            <entity name="First" representedClassName="Shared"/>
            <entity name="Second" representedClassName="Shared"/>
            <entity name="Thing">
                <attribute name="version" optional="YES" attributeType="Integer 32"/>
                <attribute name="description" optional="YES" attributeType="String"/>
                <attribute name="renamed" optional="YES" attributeType="String">
                    <userInfo><entry key="swiftName" value="self"/></userInfo>
                </attribute>
                <attribute name="addToTags" optional="YES" attributeType="String"/>
                <relationship name="tags" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Thing"/>
            </entity>
            """)
        #expect(problems.count == 3)  // class names first: the properties' problems wait for them
        #expect(problems.contains("entity Keyword: its class name protocol is not a Swift identifier; give the entity another class name (representedClassName)"))
        #expect(problems.contains { $0.hasPrefix("entity Hider: a class named Date would hide the type Date the generated code uses") })
        #expect(problems.contains { $0.hasPrefix("entities First and Second both have the class name Shared") })

        let properties = try Self.problems(
            """
            <entity name="Thing">
                <attribute name="Thing" optional="YES" attributeType="String"/>
                <attribute name="rowVersion" optional="YES" attributeType="Integer 32"/>
                <attribute name="description" optional="YES" attributeType="String"/>
                <attribute name="renamed" optional="YES" attributeType="String">
                    <userInfo><entry key="swiftName" value="self"/></userInfo>
                </attribute>
                <attribute name="addToTags" optional="YES" attributeType="String"/>
                <relationship name="tags" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Thing"/>
            </entity>
            """)
        let advice = "give it another Swift name: the user info key swiftName in the model, or --rename ENTITY.PROPERTY=NAME"
        #expect(
            properties == [
                "entity Thing, property Thing: Thing is the name of a type the generated code uses; \(advice)",
                "entity Thing, property description: description is already a member of ManagedObject or of the generated class; \(advice)",
                "entity Thing, property renamed: self (its swiftName in the model) cannot be a Swift property name; \(advice)",
                "entity Thing, property rowVersion: rowVersion is already a member of ManagedObject or of the generated class; \(advice)",
                "entity Thing, property addToTags: the class's helper addToTags(_:) for tags has that name; \(advice)",
            ])
        let error = ClassGenerationError(problems: properties)
        #expect(error.description.hasPrefix("cannot generate classes (5 problems):\n  entity Thing, property Thing"))
    }

    @Test func propertiesTakeSwiftNamesFromTheModelOrTheCaller() throws {
        let model = try Self.model(
            """
            <entity name="Thing">
                <attribute name="version" optional="YES" attributeType="Integer 32" usesScalarValueType="YES"/>
                <attribute name="entity" optional="YES" attributeType="String">
                    <userInfo><entry key="swiftName" value="entityLabel"/></userInfo>
                </attribute>
            </entity>
            """)
        let generator = try ClassGenerator(model: model, sourceName: "Test.xcdatamodel", swiftNames: ["Thing.version": "thingVersion"])
        let text = try generator.files()[0].contents
        #expect(text.contains("public var thingVersion: Int32 {\n        get { attributeValue(at: 1, named: \"version\") ?? 0 }"))
        #expect(text.contains("public var entityLabel: String? {"))
        #expect(text.contains("\\KeyPathRoot.thingVersion: \"version\","))
        // A name for a property the model lacks is an error, not ignored.
        let wrong = try ClassGenerator(model: model, sourceName: "Test.xcdatamodel", swiftNames: ["Thing.versoin": "v", "Nothing.x": "y"])
        let error = try #require(throws: ClassGenerationError.self) { try wrong.files() }
        #expect(
            error.problems == [
                "Swift name for Nothing.x: the model has no entity Nothing; write ENTITY.PROPERTY",
                "Swift name for Thing.versoin: entity Thing declares no property versoin",
            ])
    }

    @Test func modelTypeNamesComeFromTheFileName() throws {
        let model = try Self.model("<entity name=\"Thing\"/>")
        #expect(try ClassGenerator(model: model, sourceName: "Recipes.xcdatamodeld").modelTypeName == "RecipesModel")
        #expect(try ClassGenerator(model: model, sourceName: "CoreData 9.xcdatamodel").modelTypeName == "CoreData9Model")
        #expect(try ClassGenerator(model: model, sourceName: "my-store.mom").modelTypeName == "myStoreModel")
        #expect(try ClassGenerator(model: model, sourceName: "9lives.momd").modelTypeName == "_9livesModel")
        #expect(try ClassGenerator(model: model, sourceName: "DataModel.momd").modelTypeName == "DataModel")
        #expect(throws: ClassGenerationError.self) { try ClassGenerator(model: model, sourceName: "x", modelTypeName: "not a name") }
        #expect(throws: ClassGenerationError.self) { try ClassGenerator(model: model, sourceName: "x", modelTypeName: "Date") }
        let clash = try ClassGenerator(model: try Self.model("<entity name=\"Thing\" representedClassName=\"TestModel\"/>"), sourceName: "Test.xcdatamodel")
        #expect(throws: ClassGenerationError.self) { try clash.files() }
    }

    /// The optionality rules of Documentation/TypedModels.md, one attribute each.
    @Test func optionalityFollowsTheDocumentedRules() {
        func rule(_ type: AttributeType, optional: Bool, scalar: Bool? = nil, default text: String? = nil, interval: Double? = nil) -> String {
            var attribute = AttributeDescription(name: "a", type: type, isOptional: optional, defaultValueString: text, defaultDateTimeInterval: interval)
            attribute.usesScalarValueType = scalar
            let (isOptional, fallback) = ClassGenerator.optionality(of: attribute)
            return isOptional ? "optional" : "?? \(fallback ?? "-")"
        }
        // Numbers and Booleans: optional only when the model says so and they are not scalars.
        #expect(rule(.integer16, optional: true, scalar: false) == "optional")
        #expect(rule(.integer16, optional: true, scalar: true, default: "3") == "?? 3")
        #expect(rule(.integer32, optional: true) == "?? 0")  // unsaid (compiled models): a scalar
        #expect(rule(.integer64, optional: false, scalar: false, default: "5.0") == "?? 5")
        #expect(rule(.boolean, optional: false, scalar: true, default: "YES") == "?? true")
        #expect(rule(.double, optional: false, default: "2") == "?? 2.0")
        #expect(rule(.float, optional: false, default: "inf") == "?? 0.0")  // no literal: the empty value
        // Strings, Decimals, Binary: as the model says, else the default or the empty value.
        #expect(rule(.string, optional: true, default: "x") == "optional")
        #expect(rule(.string, optional: false) == "?? \"\"")
        #expect(rule(.decimal, optional: false, default: "-0.005") == "?? Decimal(sign: .minus, exponent: -3, significand: 5)")
        #expect(rule(.decimal, optional: false, default: "40") == "?? 40")
        #expect(rule(.binaryData, optional: false) == "?? Data()")
        #expect(rule(.transformable, optional: false) == "?? Data()")
        // Date, UUID: non-optional only with a default; URL never.
        #expect(rule(.date, optional: false) == "optional")
        #expect(rule(.date, optional: false, interval: -86400) == "?? Date(timeIntervalSinceReferenceDate: -86400.0)")
        #expect(rule(.uuid, optional: false) == "optional")
        #expect(rule(.uuid, optional: false, default: "00000000-0000-0000-0000-0000000000FF").hasSuffix("0x00, 0xFF))"))
        #expect(rule(.uri, optional: false, default: "https://example.com") == "optional")
    }

    @Test func literalsEscapeWhatSwiftStringsCannotHold() {
        #expect(SwiftLiterals.string("a\"b\\c\nd\te\u{0}f\u{7}g\u{2028}h\u{200B}é") == #""a\"b\\c\nd\te\0f\u{7}g\u{2028}h\u{200B}é""#)
        #expect(SwiftLiterals.string("\\(x)") == #""\\(x)""#)
        #expect(SwiftLiterals.comment("a\nb\r\u{2028}c\u{85}d") == "a b  c d")
        #expect(SwiftLiterals.decimal(Decimal(string: "123456789012345678901234567890.5")!) == nil)
        #expect(SwiftLiterals.floatingPoint(Double.nan) == nil)
        #expect(SwiftLiterals.floatingPoint(1e300) == "1e+300")
    }

    // MARK: The commands

    @Test func faultlineGenerateWritesChangedFilesAndRemovesStaleOnes() async throws {
        let folder = try TestSupport.temporaryDirectory("faultline-generate")
        let first = try await TestSupport.faultline(["generate", "Samples/Recipes/Recipes.xcdatamodeld", "--output", folder.path])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout == "4 files for 3 entities in \(folder.path): 4 written\n")
        // Generated files of entities since removed go; other files stay.
        try (GeneratedFile.headerPrefix + "Old.xcdatamodeld.\n").write(to: folder.appendingPathComponent("Old+Faultline.swift"), atomically: true, encoding: .utf8)
        try "// mine\n".write(to: folder.appendingPathComponent("Mine+Faultline.swift"), atomically: true, encoding: .utf8)
        let second = try await TestSupport.faultline(["generate", "Samples/Recipes/Recipes.xcdatamodeld", "-o", folder.path])
        #expect(second.stdout == "4 files for 3 entities in \(folder.path): 0 written, 4 unchanged, 1 removed (Old+Faultline.swift)\n")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        #expect(names == ["Ingredient+Faultline.swift", "Mine+Faultline.swift", "Recipe+Faultline.swift", "RecipeType+Faultline.swift", "RecipesModel+Faultline.swift"])
        let golden = GeneratedCode.goldenRoot.appendingPathComponent("Recipes/Recipe+Faultline.swift")
        #expect(try Data(contentsOf: folder.appendingPathComponent("Recipe+Faultline.swift")) == Data(contentsOf: golden))
    }

    @Test func faultlineGenerateSaysWhyItCannot() async throws {
        let folder = try TestSupport.temporaryDirectory("faultline-generate")
        let modelFolder = folder.appendingPathComponent("Clash.xcdatamodel")
        try FileManager.default.createDirectory(at: modelFolder, withIntermediateDirectories: true)
        try """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
            <entity name="Document"><attribute name="objectID" optional="YES" attributeType="Integer 32"/></entity>
        </model>
        """.write(to: modelFolder.appendingPathComponent("contents"), atomically: true, encoding: .utf8)
        let out = folder.appendingPathComponent("out")
        let refused = try await TestSupport.faultline(["generate", modelFolder.path, "-o", out.path])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("entity Document, property objectID: objectID is already a member of ManagedObject"))
        #expect(!FileManager.default.fileExists(atPath: out.path))  // nothing written
        let renamed = try await TestSupport.faultline(["generate", modelFolder.path, "-o", out.path, "--rename", "Document.objectID=documentNumber"])
        #expect(renamed.status == 0, "\(renamed.stderr)")
        #expect(try String(contentsOf: out.appendingPathComponent("Document+Faultline.swift"), encoding: .utf8).contains("public var documentNumber: Int32 {"))
        let badRename = try await TestSupport.faultline(["generate", modelFolder.path, "--rename", "version"])
        #expect(badRename.status != 0 && badRename.stderr.contains("--rename version: write ENTITY.PROPERTY=NAME"))
        let missing = try await TestSupport.faultline(["generate", "/nonexistent/Nothing.xcdatamodeld"])
        #expect(missing.status == 1 && missing.stderr.contains("/nonexistent/Nothing.xcdatamodeld"))
    }

    @Test func thePluginToolWritesOneFilePerModel() async throws {
        let tool = TestSupport.productsDirectory.appendingPathComponent("faultline-generate")
        let folder = try TestSupport.temporaryDirectory("faultline-generate")
        let model = GeneratedCode.sampleModel("Triage")
        let result = try await TestSupport.run(tool, [model.path, "--output", folder.path, "--single-file", "Triage+Faultline.swift"])
        #expect(result.status == 0, "\(result.stderr)")
        let generator = try ClassGenerator(model: try ManagedObjectModel(contentsOf: model), sourceName: model.lastPathComponent)
        let expected = try generator.singleFile(named: "Triage+Faultline.swift").contents
        #expect(try String(contentsOf: folder.appendingPathComponent("Triage+Faultline.swift"), encoding: .utf8) == expected)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["Triage+Faultline.swift"])
        // Errors name the model, in the form build logs show as the file's error.
        let missing = try await TestSupport.run(tool, ["/nonexistent/X.xcdatamodeld", "--output", folder.path])
        #expect(missing.status == 1 && missing.stderr.hasPrefix("/nonexistent/X.xcdatamodeld: error: "))
        let usage = try await TestSupport.run(tool, [model.path])
        #expect(usage.status == 1 && usage.stderr.contains("usage: faultline-generate MODEL --output DIR"))
    }
}
