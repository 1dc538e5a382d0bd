import FaultlineModel
import FaultlineTestSupport
import Foundation
import Testing

/// Version hashes byte-identical to Apple's, checked against every Apple-written artifact
/// in the corpus.
@Suite struct VersionHashTests {
    @Test(.enabled(if: Corpus.shouldRun, Corpus.skipMessage))
    func restKitMomdMatchesVersionInfoPlist() throws {
        let corpus = try Corpus.required()
        let momd = corpus.appendingPathComponent("compiled/RestKitCoreData.momd")
        let model = try ManagedObjectModel(contentsOf: momd)
        let plist = try BinaryPropertyList.parse(Data(contentsOf: momd.appendingPathComponent("VersionInfo.plist")))
        let current = try #require(plist.dictionaryValue?["NSManagedObjectModel_CurrentVersionName"]?.stringValue)
        let table = try #require(plist.dictionaryValue?["NSManagedObjectModel_VersionHashes"]?.dictionaryValue?[current]?.dictionaryValue)
        var expected: [String: Data] = [:]
        for (k, v) in table { expected[k] = v.dataValue }
        #expect(expected.count == 2)
        #expect(model.entityVersionHashesByName == expected, "mismatched: \(hashMismatches(model, expected))")
        #expect(model.entity(named: "RKSearchWord")?.versionHash.base64EncodedString() == "8ILMzYCnYe8uGzdLHqnxo6RUX+ifEi9tjcRr4dRZL24=")
        let recorded = try ManagedObjectModel.recordedVersionHashes(inMomd: momd)
        #expect(recorded[current] == expected)
        #expect(model.isCompatible(withStoreVersionHashes: expected))
    }

    @Test(.enabled(if: Corpus.shouldRun, Corpus.skipMessage))
    func everyStoreModelCacheReproducesItsMetadataHashes() throws {
        let corpus = try Corpus.required()
        var checked = 0
        for path in try CorpusStores.storePaths(corpus: corpus) {
            let store = try CorpusStores.read(corpus: corpus, relativePath: path)
            guard let blob = store.modelCache else { continue }
            let model = try ManagedObjectModel(storeModelCacheBlob: blob, source: path)
            let expected = CorpusStores.hashes(store.metadata)
            #expect(!expected.isEmpty, "\(path): no NSStoreModelVersionHashes")
            #expect(hashMismatches(model, expected).isEmpty, "\(path): entities with other hashes: \(hashMismatches(model, expected))")
            if let digest = store.metadata["NSStoreModelVersionHashesDigest"]?.stringValue {
                #expect(model.versionHashesDigest.base64EncodedString() == digest, "\(path): NSStoreModelVersionHashesDigest")
            }
            #expect(model.isCompatible(withStoreVersionHashes: expected), "\(path)")
            #expect(model.entitiesDiffering(fromStoreVersionHashes: expected).isEmpty)
            if let checksum = store.metadata["NSStoreModelVersionChecksumKey"]?.stringValue {
                #expect(model.versionChecksum == checksum, "\(path): NSStoreModelVersionChecksumKey")
            }
            checked += 1
        }
        #expect(checked == 6, "stores with a model cache")
    }

    @Test(.enabled(if: Corpus.shouldRun, Corpus.skipMessage))
    func xmlModelOfTavantStoreReproducesItsMetadataHashes() throws {
        let corpus = try Corpus.required()
        let store = try CorpusStores.read(corpus: corpus, relativePath: "tavant-ios7/Model.sqlite")
        let model = try ManagedObjectModel(contentsOf: corpus.appendingPathComponent("stores/tavant-ios7/Model.xcdatamodeld"))
        let expected = CorpusStores.hashes(store.metadata)
        #expect(expected.count == 2)
        #expect(model.entityVersionHashesByName == expected, "mismatched: \(hashMismatches(model, expected))")
    }

    @Test(.enabled(if: Corpus.shouldRun, Corpus.skipMessage))
    func compiledContactsEqualsItsXMLSource() throws {
        let corpus = try Corpus.required()
        let compiled = try ManagedObjectModel(contentsOf: corpus.appendingPathComponent("compiled/Contacts.mom"))
        let xml = try ManagedObjectModel(contentsOf: corpus.appendingPathComponent("compiled/Contacts.xcdatamodel"))
        #expect(compiled.entityVersionHashesByName.count == 2)
        #expect(compiled.entityVersionHashesByName == xml.entityVersionHashesByName)
        #expect(compiled.versionHash == xml.versionHash)
        for entity in xml.entities {
            let other = try #require(compiled.entity(named: entity.name))
            #expect(other.attributes.map(\.name) == entity.attributes.map(\.name))
            #expect(other.relationships.map(\.name) == entity.relationships.map(\.name))
            for a in entity.attributes {
                let b = try #require(other.attribute(named: a.name))
                #expect(a.attributeType == b.attributeType && a.isOptional == b.isOptional && a.userInfo == b.userInfo, "\(entity.name).\(a.name)")
                #expect(a.versionHash == b.versionHash)
            }
            for r in entity.relationships {
                let s = try #require(other.relationship(named: r.name))
                #expect(r.destinationEntityName == s.destinationEntityName && r.inverseName == s.inverseName, "\(entity.name).\(r.name)")
                #expect(r.minCount == s.minCount && r.maxCount == s.maxCount && r.isOrdered == s.isOrdered && r.deleteRule == s.deleteRule)
                #expect(r.userInfo == s.userInfo)
            }
        }
        #expect(compiled.fetchRequestTemplates["fetchTheDucks"]?.predicateFormat == "lastName LIKE \"Duck*\"")
        #expect(compiled.versionIdentifiers == xml.versionIdentifiers)
    }

    /// The rules that needed more than the published algorithm, each on a tiny model.
    @Test func derivedAttributeHashIsTheHashOfItsExpression() throws {
        let plain = try ManagedObjectModel(entities: [
            EntityDescription(name: "Node", attributes: [.init(name: "code", type: .integer32, derivationExpression: "label.code")],
                              relationships: [.init(name: "label", destination: "Label")]),
            EntityDescription(name: "Label", attributes: [.init(name: "code", type: .integer32)]),
        ])
        let attribute = try #require(plain.entity(named: "Node")?.attribute(named: "code"))
        #expect(attribute.versionHash == SHA256Hasher.hash(Array("label.code".utf8)))
        #expect(attribute.isDerived)
    }

    @Test func reflexiveRelationshipLeavesOutItsInverseName() throws {
        let model = try ManagedObjectModel(entities: [
            EntityDescription(name: "Person", relationships: [
                .init(name: "friends", destination: "Person", inverse: "friends", toMany: true),
                .init(name: "parent", destination: "Person", inverse: "children"),
                .init(name: "children", destination: "Person", inverse: "parent", toMany: true),
            ]),
        ])
        let person = try #require(model.entity(named: "Person"))
        let friends = try #require(person.relationship(named: "friends"))
        var expected = SHA256Hasher()
        var property = SHA256Hasher()
        property.update(Array("friends".utf8) + [1, 0])
        expected.update(property.finalize())
        expected.update(Array("Person".utf8) + [0, 0, 0, 0, 0, 0, 0, 0])
        #expect(friends.versionHash == expected.finalize())
        #expect(person.relationship(named: "parent")?.versionHash != person.relationship(named: "children")?.versionHash)
    }

    @Test func compatibilityNamesTheDifferingEntities() throws {
        let model = try ManagedObjectModel(entities: [
            EntityDescription(name: "A", attributes: [.init(name: "x", type: .string)]),
            EntityDescription(name: "B"),
        ], configurations: ["OnlyB": ["B"]])
        var hashes = model.entityVersionHashesByName
        #expect(model.isCompatible(withStoreVersionHashes: hashes))
        #expect(!model.isCompatible(withStoreVersionHashes: hashes, configuration: "OnlyB"))
        #expect(model.isCompatible(withStoreVersionHashes: ["B": hashes["B"] ?? Data()], configuration: "OnlyB"))
        hashes["A"] = Data(repeating: 0, count: 32)
        hashes["C"] = Data(repeating: 1, count: 32)
        #expect(!model.isCompatible(withStoreVersionHashes: hashes))
        #expect(model.entitiesDiffering(fromStoreVersionHashes: hashes) == ["A", "C"])
    }

    @Test func hashInputsAndNonInputs() throws {
        func hash(_ e: EntityDescription) throws -> Data {
            try #require(try ManagedObjectModel(entities: [e]).entityVersionHashesByName[e.name])
        }
        let base = EntityDescription(name: "A", attributes: [.init(name: "x", type: .string)])
        var renamedClass = base
        renamedClass.managedObjectClassName = "Other"
        renamedClass.userInfo = ["k": "v"]
        renamedClass.fetchIndexes = [.init(name: "byX", elements: [.init(property: "x")])]
        #expect(try hash(base) == hash(renamedClass), "class name, userInfo and indexes do not enter the hash")
        var modified = base
        modified.versionHashModifier = "2"
        #expect(try hash(base) != hash(modified))
        var constrained = base
        constrained.uniquenessConstraints = [["x"]]
        #expect(try hash(base) != hash(constrained))
        var transient = base
        transient.declaredAttributes.append(.init(name: "t", type: .string, isTransient: true))
        #expect(try hash(base) == hash(transient), "transient properties are skipped")
        var external = EntityDescription(name: "A", attributes: [.init(name: "x", type: .binaryData)])
        let before = try hash(external)
        external.declaredAttributes[0].allowsExternalBinaryDataStorage = true
        #expect(try hash(external) != before)
    }
}
