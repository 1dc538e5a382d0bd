import FaultlineModel
import FaultlineTestSupport
import Foundation
import Testing

/// What the XML loader keeps of each model feature (reference §2), on the corpus models.
@Suite struct ModelContentTests {
    @Test(.enabled(if: Corpus.shouldRun, Corpus.skipMessage))
    func momcomModelKeepsEveryClassicFeature() throws {
        let corpus = try Corpus.required()
        let model = try ManagedObjectModel(contentsOf: corpus.appendingPathComponent("models/momcomTests.xcdatamodeld"))
        let abstract = try #require(model.entity(named: "AbstractEntity"))
        #expect(abstract.isAbstract && abstract.subentityNames == ["Entity"] && abstract.hasSubentities)
        let entity = try #require(model.entity(named: "Entity"))
        #expect(entity.superentityName == "AbstractEntity")
        #expect(entity.managedObjectClassName == "EntityClass")
        #expect(entity.renamingIdentifier == "myRenamingIdentifier")
        #expect(entity.versionHashModifier == "myVersionHashModifier")
        #expect(entity.userInfo == ["someKey": "randomValue"])
        #expect(entity.compoundIndexes == [["booleanAttribute", "dateAttribute"], ["decimalAttribute", "doubleAttribute"]])
        let binary = try #require(entity.attribute(named: "binaryAttribute"))
        #expect(binary.isTransient && binary.isOptional && binary.isIndexedBySpotlight && binary.isStoredInExternalRecord)
        #expect(binary.userInfo == ["binaryBar": "NO", "binaryBaz": "MAYBE", "binaryFoo": "YES"])
        let date = try #require(entity.attribute(named: "dateAttribute"))
        #expect(date.attributeType == .date)
        #expect(date.defaultDateTimeInterval == 388_411_200)
        #expect(date.minValueString == "284000400" && date.maxValueString == "602395200")
        let int16 = try #require(entity.attribute(named: "int16Attribute"))
        #expect(int16.attributeType == .integer16 && int16.minValueString == "-3" && int16.maxValueString == "9" && int16.defaultValueString == "0")
        #expect(entity.attribute(named: "transformableAttribute")?.valueTransformerName == "myValueTransformer")
        let others = try #require(entity.relationship(named: "otherEntities"))
        #expect(others.isToMany && others.minCount == 1 && others.maxCount == 9 && others.inverseName == "mainEntity")
        let main = try #require(model.entity(named: "OtherEntity")?.relationship(named: "mainEntity"))
        #expect(main.isToOne && main.minCount == 1 && main.maxCount == 1)
        let fetched = try #require(entity.fetchedProperties.first)
        #expect(fetched.name == "yesBooleans")
        #expect(fetched.fetchRequest.entityName == "Entity" && fetched.fetchRequest.predicateFormat == "booleanAttribute = YES")
        #expect(model.fetchRequestTemplates.keys.sorted() == ["FetchRequestDictionaries", "FetchRequestObjectIDs", "FetchRequestObjects"])
        let dictionaries = try #require(model.fetchRequestTemplates["FetchRequestDictionaries"])
        #expect(dictionaries.resultType == 2 && dictionaries.returnsDistinctResults && dictionaries.includesSubentities)
        let objects = try #require(model.fetchRequestTemplates["FetchRequestObjects"])
        #expect(objects.fetchLimit == 100 && objects.fetchBatchSize == 10 && !objects.includesSubentities)
        #expect(model.configurations == ["UnrelatedConfiguration": ["UnrelatedEntity"]])
        #expect(model.versionIdentifiers == [""])
        // Inherited hash chaining: the sub-entity hash changes with its parent.
        #expect(entity.versionHash != abstract.versionHash)
    }

    @Test(.enabled(if: Corpus.shouldRun, Corpus.skipMessage))
    func bookmarkModelKeepsIndexesConstraintsAndOrder() throws {
        let corpus = try Corpus.required()
        let model = try ManagedObjectModel(contentsOf: corpus.appendingPathComponent("models/Bookmark.xcdatamodeld"))
        let bookmark = try #require(model.entities.first { !$0.fetchIndexes.isEmpty })
        #expect(bookmark.fetchIndexes.allSatisfy { !$0.elements.isEmpty })
        #expect(model.entities.contains { !$0.uniquenessConstraints.isEmpty })
        #expect(model.entities.flatMap(\.relationships).contains { $0.isOrdered && $0.isToMany })
        #expect(model.entities.flatMap(\.attributes).contains { $0.attributeType == .uuid })
        #expect(model.entities.flatMap(\.attributes).contains { $0.attributeType == .transformable })
    }

    @Test(.enabled(if: Corpus.shouldRun, Corpus.skipMessage))
    func mastodonVersionsDifferInHashes() throws {
        let corpus = try Corpus.required()
        let bundle = corpus.appendingPathComponent("models/MastodonCoreData.xcdatamodeld")
        let first = try ManagedObjectModel(contentsOf: bundle, version: "CoreData")
        let last = try ManagedObjectModel(contentsOf: bundle, version: "CoreData 9")
        #expect(first.versionHash != last.versionHash)
        #expect(first.entities.contains { $0.managedObjectClassName?.hasPrefix(".") == true })
        #expect(last.entities.contains { $0.uniquenessConstraints.contains { $0.count > 1 } })
    }

    @Test func entityAndDescendantsAndChains() throws {
        let model = try ManagedObjectModel(entities: [
            EntityDescription(name: "Root", isAbstract: true, attributes: [.init(name: "id", type: .uuid)]),
            EntityDescription(name: "B", superentityName: "Root", attributes: [.init(name: "b", type: .string)]),
            EntityDescription(name: "A", superentityName: "Root"),
            EntityDescription(name: "C", superentityName: "B"),
        ])
        let root = try #require(model.entity(named: "Root"))
        #expect(model.entityAndDescendants(of: root).map(\.name) == ["Root", "A", "B", "C"])
        let c = try #require(model.entity(named: "C"))
        #expect(model.inheritanceChain(of: c).map(\.name) == ["Root", "B", "C"])
        #expect(c.attributes.map(\.name) == ["b", "id"])
        #expect(c.declaredAttributes.isEmpty)
        #expect(model.entityVersionHashesByName.count == 4)
        #expect(Set(model.entityVersionHashesByName.values).count == 4)
    }
}

@Suite struct CompositeAttributeTests {
    @Test func aCompositeAttributeKeepsItsElements() throws {
        let xml = """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="">
                <entity name="Person" representedClassName="Person" syncable="YES">
                    <attribute name="home" optional="YES" attributeType="Composite" composite="Address"/>
                    <attribute name="name" optional="YES" attributeType="String"/>
                </entity>
                <composite name="Address">
                    <attribute name="city" optional="YES" attributeType="String"/>
                    <attribute name="postcode" attributeType="String"/>
                </composite>
            </model>
            """
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("composite-\(UUID().uuidString).xcdatamodel")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try xml.write(to: folder.appendingPathComponent("contents"), atomically: true, encoding: .utf8)
        let model = try ManagedObjectModel(contentsOf: folder)
        let home = try #require(model.entity(named: "Person")?.attribute(named: "home"))
        #expect(home.attributeType == .composite)
        #expect(home.compositeName == "Address")
        #expect(home.compositeElements.map(\.name) == ["city", "postcode"])
        #expect(home.compositeElements.map(\.isOptional) == [true, false])
    }
}

/// The model cache Faultline writes reads back to the same model: every corpus model and
/// every cached store model round-trips with equal version hashes.
@Suite struct ModelArchiverTests {
    @Test func theInventoryModelRoundTrips() throws {
        let url = TestSupport.inventoryFolder.appendingPathComponent("Inventory.xcdatamodeld")
        let model = try ManagedObjectModel(contentsOf: url)
        let back = try ManagedObjectModel(storeModelCacheBlob: try ModelArchiver.modelCacheBlob(for: model))
        #expect(back.entityVersionHashesByName == model.entityVersionHashesByName)
        #expect(back.entity(named: "Inventory")?.relationship(named: "asset")?.inverseName == "inventories")
        #expect(back.entity(named: "Inventory")?.attribute(named: "count")?.defaultValueString == "0")
    }

    @Test(.enabled(if: Corpus.shouldRun, Corpus.skipMessage))
    func everyCorpusModelRoundTripsWithEqualHashes() throws {
        let corpus = try Corpus.required()
        var checked = 0
        for folder in ["models", "compiled"] {
            let base = corpus.appendingPathComponent(folder)
            for name in try FileManager.default.contentsOfDirectory(atPath: base.path).sorted() where name != "xcode3-format" {
                let model = try ManagedObjectModel(contentsOf: base.appendingPathComponent(name))
                let back = try ManagedObjectModel(storeModelCacheBlob: try ModelArchiver.modelCacheBlob(for: model))
                #expect(back.entityVersionHashesByName == model.entityVersionHashesByName, "\(folder)/\(name)")
                #expect(back.entities.map(\.name) == model.entities.map(\.name), "\(folder)/\(name)")
                checked += 1
            }
        }
        #expect(checked >= 8)
    }
}
