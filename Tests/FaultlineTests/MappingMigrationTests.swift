import Faultline
import FaultlineTestSupport
import Foundation
import Testing

/// Mapping models (`.xcmappingmodel`, `.cdm`) and the heavyweight migration that applies them.
@Suite struct MappingMigrationTests {
    static let fixtures = TestSupport.packageRoot.appendingPathComponent("Tests/Fixtures/MappingModels")

    static func moody(_ version: Int) throws -> ManagedObjectModel {
        try ManagedObjectModel(contentsOf: fixtures.appendingPathComponent("Moody.xcdatamodeld"), version: "Moody \(version)")
    }

    static func people(_ version: Int) throws -> ManagedObjectModel {
        try ManagedObjectModel(contentsOf: fixtures.appendingPathComponent("People.xcdatamodeld"), version: "People \(version)")
    }

    static func peopleMapping() throws -> MappingModel {
        try MappingModel(contentsOf: fixtures.appendingPathComponent("People1ToPeople2.cdm"))
    }

    static func through(_ mapping: String, _ keyPath: String) -> String {
        "FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"\(mapping)\", \(keyPath))"
    }

    /// The files of a folder, names only.
    static func listing(_ folder: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
    }

    // MARK: Loading

    @Test func loadsXcodesXMLWithAnArchivedValueExpression() throws {
        let url = Self.fixtures.appendingPathComponent("Moody 4-Moody 5.xcmappingmodel")
        let mapping = try MappingModel(contentsOf: url, sourceModel: Self.moody(4), destinationModel: Self.moody(5))
        #expect(mapping.entityMappings.map(\.name) == ["MoodToMood", "CountryToCountry"])
        #expect(mapping.recordedSourceModelPath == "Migrations/Moody.xcdatamodeld/Moody 4.xcdatamodel")
        let country = try #require(mapping.entityMapping(named: "CountryToCountry"))
        #expect(country.mappingType == .transform && country.sourceEntityName == "Country" && country.destinationEntityName == "Country")
        #expect(country.sourceEntityVersionHash == (try Self.moody(4)).entityVersionHashesByName["Country"])
        #expect(country.sourceExpression == "FETCH(FUNCTION($manager, \"fetchRequestForSourceEntityNamed:predicateString:\", \"Country\", \"TRUEPREDICATE\"), $manager.sourceContext, NO)")
        #expect(country.attributeMapping(named: "isoContinent")?.valueExpression == "$source.continent.numericISO3166Code")
        #expect(country.attributeMapping(named: "updatedAt")?.valueExpression == "$source.updatedAt")
        #expect(country.relationshipMapping(named: "moods")?.valueExpression == Self.through("MoodToMood", "$source.moods"))
        #expect(country.customPolicyClassName == nil)
        let mood = try #require(mapping.entityMapping(named: "MoodToMood"))
        #expect(mood.relationshipMapping(named: "country")?.valueExpression == Self.through("CountryToCountry", "$source.country"))

        // Without the models: found at the paths the file records, near the mapping model.
        let found = try MappingModel(contentsOf: url)
        #expect(found == mapping)
    }

    @Test func loadsRelationshipKeyPathsAndIgnoresOrphanedPropertyMappings() throws {
        let mapping = try MappingModel(
            contentsOf: Self.fixtures.appendingPathComponent("Moody 2-Moody 3.xcmappingmodel/xcmapping.xml"),
            sourceModel: Self.moody(2), destinationModel: Self.moody(3))
        #expect(mapping.entityMappings.map(\.name) == ["MoodToMood", "CountryToCountry", "ContinentToContinent"])
        let continent = try #require(mapping.entityMapping(named: "ContinentToContinent"))
        #expect(continent.relationshipMapping(named: "moods")?.valueExpression == Self.through("MoodToMood", "$source.countries.@distinctUnionOfSets.moods"))
        #expect(continent.relationshipMappings.count == 2)
        let mood = try #require(mapping.entityMapping(named: "MoodToMood"))
        #expect(mood.relationshipMapping(named: "continent")?.valueExpression == Self.through("ContinentToContinent", "$source.country.continent"))
    }

    @Test func loadsACustomPolicyAndAnAddMapping() throws {
        let mapping = try MappingModel(
            contentsOf: Self.fixtures.appendingPathComponent("Moody 5-Moody 6.xcmappingmodel"), sourceModel: Self.moody(5), destinationModel: Self.moody(6))
        #expect(mapping.customPolicyClassNames == ["CountryToCountry": "Migrations.Country5ToCountry6Policy"])
        #expect(mapping.entityMapping(named: "CountryToCountry")?.mappingType == .custom)
        let continent = try #require(mapping.entityMapping(named: "Continent"))
        #expect(continent.mappingType == .add && continent.sourceEntityName == nil && continent.sourceExpression == nil)
    }

    @Test func loadsACompiledMappingModel() throws {
        let mapping = try Self.peopleMapping()
        #expect(mapping.entityMappings.map(\.name) == ["PersonToContact", "PetToAnimal", "Legacy", "Tag"])
        #expect(mapping.entityMappings.map(\.mappingType) == [.transform, .transform, .remove, .add])
        let person = try #require(mapping.entityMapping(named: "PersonToContact"))
        #expect(person.sourceEntityVersionHash == (try Self.people(1)).entityVersionHashesByName["Person"])
        #expect(person.destinationEntityVersionHash == (try Self.people(2)).entityVersionHashesByName["Contact"])
        #expect(person.sourceExpression == MappingModel.EntityMapping.defaultSourceExpression(entityName: "Person"))
        #expect(person.attributeMapping(named: "name")?.valueExpression == "$source.firstName")
        #expect(person.attributeMapping(named: "ageNextYear")?.valueExpression == "add:to:($source.age, 1)")
        #expect(person.relationshipMapping(named: "animals")?.valueExpression == Self.through("PetToAnimal", "$source.pets"))
        #expect(mapping.entityMapping(named: "Tag")?.attributeMapping(named: "label")?.valueExpression == nil)
        try mapping.checkVersionHashes(sourceModel: Self.people(1), destinationModel: Self.people(2))
        #expect(throws: ModelError.self) { try mapping.checkVersionHashes(sourceModel: Self.people(2), destinationModel: Self.people(2)) }
    }

    @Test func malformedFilesNameTheFile() throws {
        let folder = try TestSupport.temporaryDirectory("mapping-bad")
        let xml = folder.appendingPathComponent("xcmapping.xml")
        try Data("<database><object type=\"XDDEVENTITYMAPPING\" id=\"z1\"></object></database>".utf8).write(to: xml)
        let e1 = try #require(throws: ModelError.self) { try MappingModel(contentsOf: xml, sourceModel: Self.people(1), destinationModel: Self.people(2)) }
        #expect(e1.description.contains(xml.path) && e1.message.contains("XDDEVMAPPINGMODEL"))
        let cdm = folder.appendingPathComponent("Bad.cdm")
        try Data("not a plist".utf8).write(to: cdm)
        let e2 = try #require(throws: ModelError.self) { try MappingModel(contentsOf: cdm) }
        #expect(e2.file == cdm.path)
    }

    // MARK: Migrating

    @Test func migratesAPopulatedStoreWithTransformedValues() throws {
        let folder = try TestSupport.temporaryDirectory("mapping-people")
        let url = folder.appendingPathComponent("People.sqlite")
        let old = try Self.people(1), new = try Self.people(2)
        let populated = try StorePopulator(model: old).populate(storeAt: url)
        let before = try StoreSnapshot(storeAt: url, model: old)

        let migration = try MappingMigration(sourceModel: old, destinationModel: new, mappingModel: Self.peopleMapping())
        let result = try migration.migrateStore(at: url)
        #expect(result.createdCounts == ["PersonToContact": 5, "PetToAnimal": 5])
        #expect(try Self.listing(folder) == ["People.sqlite"])

        // Opens with the destination model (its version hashes are in the metadata).
        let store = try SQLiteStore(url: url, model: new)
        #expect(store.identifier == result.storeIdentifier)
        #expect(try SQLiteStore.versionHashes(at: url) == new.entityVersionHashesByName)
        let after = try StoreSnapshot(store: store)
        let renames = StoreSnapshot.Renames(
            entities: ["Person": "Contact", "Pet": "Animal"],
            properties: ["Person": ["firstName": "name", "pets": "animals"], "Pet": ["owner": "keeper"]])
        let comparison = after.compare(with: before, renames: renames)
        // Only `email` changed on purpose (uppercased); everything else kept its value.
        #expect(comparison.mismatches.allSatisfy { if case .valueChanged(_, "email", _, _) = $0 { true } else { false } }, "\(comparison)")
        #expect(comparison.removedEntities == ["Legacy": populated.insertedCounts["Legacy"] ?? 0])
        #expect(after.counts == ["Contact": 5, "Animal": 5])

        #expect(before.entities["Person"]?.objects.count == 5)
        for (key, object) in before.entities["Person"]?.objects ?? [:] {
            let contact = try #require(after[.init(entity: "Contact", primaryKey: key)])
            guard case .integer(let age) = object.attributes["age"], case .string(let email) = object.attributes["email"] else {
                Issue.record("Person#\(key) has no age or email")
                continue
            }
            #expect(contact.attributes["ageNextYear"] == .integer(age + 1))
            #expect(contact.attributes["email"] == .string(email.uppercased()))
            #expect(contact.attributes["createdBy"] == .string("migration"))
        }
    }

    @Test func migratesMoodyWithAKeyPathIntoAnotherEntity() throws {
        let folder = try TestSupport.temporaryDirectory("mapping-moody")
        let url = folder.appendingPathComponent("Moody.sqlite")
        let old = try Self.moody(4), new = try Self.moody(5)
        _ = try StorePopulator(model: old).populate(storeAt: url)
        let before = try StoreSnapshot(storeAt: url, model: old)
        let mapping = try MappingModel(contentsOf: Self.fixtures.appendingPathComponent("Moody 4-Moody 5.xcmappingmodel"), sourceModel: old, destinationModel: new)
        _ = try MappingMigration(sourceModel: old, destinationModel: new, mappingModel: mapping).migrateStore(at: url)

        let after = try StoreSnapshot(storeAt: url, model: new)
        let comparison = after.compare(with: before)
        #expect(comparison.isMatch, "\(comparison)")
        #expect(comparison.removedEntities.keys.sorted() == ["Continent"])
        #expect(before.entities["Country"]?.objects.isEmpty == false)
        for (key, country) in before.entities["Country"]?.objects ?? [:] {
            let continent = try #require(country.relationships["continent"]?.first)
            let code = before[continent]?.attributes["numericISO3166Code"]
            #expect(after[.init(entity: "Country", primaryKey: key)]?.attributes["isoContinent"] == code)
        }
    }

    @Test func aFailingExpressionLeavesTheStoreAsItWas() throws {
        let folder = try TestSupport.temporaryDirectory("mapping-fail")
        let url = folder.appendingPathComponent("People.sqlite")
        let old = try Self.people(1), new = try Self.people(2)
        _ = try StorePopulator(model: old).populate(storeAt: url)
        let bytes = try Data(contentsOf: url)
        let files = try Self.listing(folder)

        var mapping = try Self.peopleMapping()
        mapping.entityMappings[1].attributeMappings[0].valueExpression = "FUNCTION($manager, \"noSuchSelector:\", $source.name)"
        let migration = try MappingMigration(sourceModel: old, destinationModel: new, mappingModel: mapping)
        let error = try #require(throws: MappingMigrationError.self) { try migration.migrateStore(at: url) }
        #expect(error.entityMapping == "PetToAnimal" && error.property == "name")
        #expect(error.description.contains("noSuchSelector:") && error.sourceObject != nil)
        #expect(try Data(contentsOf: url) == bytes)
        #expect(try Self.listing(folder) == files)

        // An expression that does not parse is refused before any file is written.
        mapping.entityMappings[1].attributeMappings[0].valueExpression = "$source.name +"
        let parse = try #require(throws: MappingMigrationError.self) { try MappingMigration(sourceModel: old, destinationModel: new, mappingModel: mapping) }
        #expect(parse.entityMapping == "PetToAnimal" && parse.property == "name")
    }

    @Test func aCustomPolicyIsRefusedBeforeAnythingIsWritten() throws {
        let old = try Self.moody(5), new = try Self.moody(6)
        let mapping = try MappingModel(contentsOf: Self.fixtures.appendingPathComponent("Moody 5-Moody 6.xcmappingmodel"), sourceModel: old, destinationModel: new)
        let error = try #require(throws: MappingMigrationError.self) { try MappingMigration(sourceModel: old, destinationModel: new, mappingModel: mapping) }
        #expect(error.entityMapping == "CountryToCountry")
        #expect(error.message.contains("Migrations.Country5ToCountry6Policy"))

        // The default policy class is no custom code.
        var people = try Self.peopleMapping()
        people.entityMappings[0].entityMigrationPolicyClassName = "NSEntityMigrationPolicy"
        _ = try MappingMigration(sourceModel: Self.people(1), destinationModel: Self.people(2), mappingModel: people)
        people.entityMappings[0].entityMigrationPolicyClassName = "App.PersonPolicy"
        let custom = try #require(throws: MappingMigrationError.self) {
            try MappingMigration(sourceModel: Self.people(1), destinationModel: Self.people(2), mappingModel: people)
        }
        #expect(custom.entityMapping == "PersonToContact" && custom.message.contains("App.PersonPolicy"))
    }
}
