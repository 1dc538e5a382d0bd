import FaultlineModel
import FaultlineTestSupport
import Foundation
import Testing

/// Loaders chosen by path, every corpus model, and clean errors for bad input.
@Suite struct LoaderTests {
    /// Every version of every `.xcdatamodeld` under corpus/models (and the stores' one).
    @Test(.enabled(if: Corpus.shouldRun, Corpus.skipMessage))
    func everyCorpusModelVersionLoads() throws {
        let corpus = try Corpus.required()
        var loaded: [String] = []
        for folder in ["models", "stores/tavant-ios7"] {
            let dir = corpus.appendingPathComponent(folder)
            for name in try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() where name.hasSuffix(".xcdatamodeld") {
                let bundle = dir.appendingPathComponent(name)
                let versions = try FileManager.default.contentsOfDirectory(atPath: bundle.path).filter { $0.hasSuffix(".xcdatamodel") }.sorted()
                #expect(!versions.isEmpty, "\(name) has versions")
                for version in versions {
                    let model = try ManagedObjectModel(contentsOf: bundle, version: version)
                    #expect(!model.entities.isEmpty, "\(name)/\(version)")
                    #expect(model.entityVersionHashesByName.count == model.entities.count)
                    #expect(model.entities.allSatisfy { $0.versionHash.count == 32 })
                    loaded.append("\(name)/\(version)")
                }
                _ = try ManagedObjectModel(contentsOf: bundle)  // the current version
            }
        }
        #expect(loaded.count == 21, "loaded \(loaded)")
    }

    @Test(.enabled(if: Corpus.shouldRun, Corpus.skipMessage))
    func compiledModelsLoad() throws {
        let corpus = try Corpus.required()
        let restKit = try ManagedObjectModel(contentsOf: corpus.appendingPathComponent("compiled/RestKitCoreData.momd"))
        #expect(restKit.entities.map(\.name) == ["RKSearchWord", "RKSearchableManagedObject"])
        let searchable = try #require(restKit.entity(named: "RKSearchableManagedObject"))
        #expect(searchable.isAbstract)
        let word = try #require(restKit.entity(named: "RKSearchWord"))
        #expect(word.attribute(named: "word")?.attributeType == .string)
        #expect(word.attribute(named: "word")?.isIndexed == true)
        // The .mom itself, and the .momd's named version.
        let mom = try ManagedObjectModel(contentsOf: corpus.appendingPathComponent("compiled/RestKitCoreData.momd/RestKitCoreData.mom"))
        #expect(mom.entityVersionHashesByName == restKit.entityVersionHashesByName)
        let named = try ManagedObjectModel(contentsOf: corpus.appendingPathComponent("compiled/RestKitCoreData.momd"), version: "RestKitCoreData")
        #expect(named.versionHash == restKit.versionHash)
        #expect(restKit.versionIdentifiers == [""])
    }

    @Test(.enabled(if: Corpus.shouldRun, Corpus.skipMessage))
    func modelCacheDetailsSurvive() throws {
        let corpus = try Corpus.required()
        let store = try CorpusStores.read(corpus: corpus, relativePath: "photos-16.0.0-beta/Photos.sqlite")
        let model = try ManagedObjectModel(storeModelCacheBlob: try #require(store.modelCache))
        #expect(model.entities.count == 74)
        let node = try #require(model.entity(named: "GraphNode"))
        #expect(node.attribute(named: "primaryLabelCode")?.derivationExpression == "primaryLabel.code")
        #expect(node.uniquenessConstraints.contains(["uuid"]))
        let album = try #require(model.entity(named: "Album"))
        #expect(album.superentityName == "GenericAlbum")
        #expect(model.inheritanceChain(of: album).map(\.name) == ["GenericAlbum", "Album"])
        #expect(album.declaredAttributes.count + album.declaredRelationships.count < album.attributes.count + album.relationships.count)
        let person = try #require(model.entity(named: "Person"))
        #expect(person.relationship(named: "mergeCandidates")?.inverseName == "mergeCandidates")
        #expect(model.entities.contains { !$0.fetchIndexes.isEmpty })
        // Archived predicates come back as format text.
        let asset = try #require(model.entity(named: "Asset"))
        let prefetch = try #require(asset.fetchIndexes.first { $0.name == "forCPLThumbnailPrefetch" })
        #expect(prefetch.partialIndexPredicate == "thumbnailIndex == -1 AND cloudLocalState == 1")
        #expect(prefetch.elements.map(\.property) == ["thumbnailIndex", "cloudLocalState", "dateCreated", "adjustmentsState"])
        let unable = try #require(asset.fetchIndexes.first { $0.name == "forUnableToUploadAlbum" })
        #expect(unable.partialIndexPredicate == "cloudLocalState == 2 OR cloudLocalState == 4")
        #expect(unable.elements.contains { $0.expression == "SELF" })
        let older = try CorpusStores.read(corpus: corpus, relativePath: "photos-10.15.1/Photos.sqlite")
        let model10 = try ManagedObjectModel(storeModelCacheBlob: try #require(older.modelCache))
        let orientation = try #require(model10.entity(named: "Asset")?.attribute(named: "orientation"))
        #expect(orientation.validationPredicates.map(\.predicateFormat).contains("SELF <= 8"))
        #expect(orientation.maxValueString == "8")
        let keyword = try #require(model10.entity(named: "Keyword"))
        #expect(keyword.versionHashModifier == "11066")
    }

    @Test(.enabled(if: Corpus.shouldRun, Corpus.skipMessage))
    func xcode3FormatIsRefusedWithTheFileName() throws {
        let corpus = try Corpus.required()
        let url = corpus.appendingPathComponent("models/xcode3-format/Data Model.xcdatamodel")
        let error = #expect(throws: ModelError.self) { try ManagedObjectModel(contentsOf: url) }
        #expect(error?.code == .unsupportedFormat)
        #expect(error?.file?.hasSuffix("Data Model.xcdatamodel") == true)
        #expect(error?.description.contains("Xcode 4") == true)
        let direct = #expect(throws: ModelError.self) { try ManagedObjectModel(contentsOf: url.appendingPathComponent("elements")) }
        #expect(direct?.code == .unsupportedFormat)
    }

    @Test func malformedXMLNamesFileAndLine() throws {
        let dir = try TestSupport.temporaryDirectory("faultline-model")
        defer { try? FileManager.default.removeItem(at: dir) }
        let model = dir.appendingPathComponent("Bad.xcdatamodel")
        try FileManager.default.createDirectory(at: model, withIntermediateDirectories: true)
        let contents = model.appendingPathComponent("contents")
        try Data("<?xml version=\"1.0\"?>\n<model type=\"com.apple.IDECoreDataModeler.DataModel\">\n<entity name=\"A\">\n<attribute name=\"x\" attributeType=\"Strin\"/>\n</entity>\n</model>\n".utf8).write(to: contents)
        let error = #expect(throws: ModelError.self) { try ManagedObjectModel(contentsOf: model) }
        #expect(error?.file == contents.path)
        #expect(error?.line == 4)
        #expect(error?.message.contains("Strin") == true)

        try Data("<?xml version=\"1.0\"?>\n<model>\n<entity name=\"A\">\n</model>\n".utf8).write(to: contents)
        let broken = #expect(throws: ModelError.self) { try ManagedObjectModel(contentsOf: model) }
        #expect(broken?.code == .malformed)
        #expect(broken?.line != nil)

        try Data("<?xml version=\"1.0\"?>\n<model>\n<entity name=\"A\">\n".utf8).write(to: contents)
        let truncated = #expect(throws: ModelError.self) { try ManagedObjectModel(contentsOf: model) }
        #expect(truncated?.code == .malformed)

        try Data("<?xml version=\"1.0\"?>\n<model>\n<entity name=\"A\">\n<relationship name=\"r\" destinationEntity=\"Missing\"/>\n</entity>\n</model>\n".utf8).write(to: contents)
        let invalid = #expect(throws: ModelError.self) { try ManagedObjectModel(contentsOf: model) }
        #expect(invalid?.code == .invalidModel)
        #expect(invalid?.line == 3, "the line of the entity")
        #expect(invalid?.file == contents.path)
    }

    @Test func invalidUTF8IsAnErrorNamingLineAndColumnNotACrash() throws {
        // XMLParser stopped the process (SIGILL) on such a byte in a name.
        let dir = try TestSupport.temporaryDirectory("faultline-model")
        defer { try? FileManager.default.removeItem(at: dir) }
        let model = dir.appendingPathComponent("Bad.xcdatamodel")
        try FileManager.default.createDirectory(at: model, withIntermediateDirectories: true)
        let contents = model.appendingPathComponent("contents")
        let cases: [([UInt8], Int, Int)] = [
            (Array("<?xml version=\"1.0\"?><model><entity na".utf8) + [0xED] + Array("me=\"A\"/></model>".utf8), 1, 39),
            (Array("<?xml version=\"1.0\"?>\n<model>\n<entity name=\"A\" ".utf8) + [0xC3, 0x28] + Array("=\"1\"/></model>".utf8), 3, 18),
            (Array("<?xml version=\"1.0\"?>\n<mo".utf8) + [0xF0, 0x9F, 0x98] + Array("del/>".utf8), 2, 4),
            (Array("<?xml version=\"1.0\"?>\n<model><entity name=\"".utf8) + [0xFF] + Array("\"/></model>".utf8), 2, 22),
        ]
        for (bytes, line, column) in cases {
            try Data(bytes).write(to: contents)
            let error = #expect(throws: ModelError.self) { try ManagedObjectModel(contentsOf: model) }
            #expect(error?.code == .malformed)
            #expect(error?.line == line)
            #expect(error?.message.contains("not UTF-8") == true && error?.message.contains("column \(column)") == true, "\(error?.message ?? "")")
        }
    }

    @Test func badCompiledInputThrows() throws {
        let dir = try TestSupport.temporaryDirectory("faultline-model")
        defer { try? FileManager.default.removeItem(at: dir) }
        let mom = dir.appendingPathComponent("Bad.mom")
        try Data("bplist00 this is not a plist".utf8).write(to: mom)
        let error = #expect(throws: ModelError.self) { try ManagedObjectModel(contentsOf: mom) }
        #expect(error?.code == .malformed)
        #expect(error?.file == mom.path)
        try Data("hello".utf8).write(to: mom)
        #expect(throws: ModelError.self) { try ManagedObjectModel(contentsOf: mom) }

        // A .momd whose VersionInfo names a missing version.
        let momd = dir.appendingPathComponent("M.momd")
        try FileManager.default.createDirectory(at: momd, withIntermediateDirectories: true)
        let info: [String: Any] = ["NSManagedObjectModel_CurrentVersionName": "Nope"]
        try PropertyListSerialization.data(fromPropertyList: info, format: .xml, options: 0).write(to: momd.appendingPathComponent("VersionInfo.plist"))
        try Data("x".utf8).write(to: momd.appendingPathComponent("M.mom"))
        let missing = #expect(throws: ModelError.self) { try ManagedObjectModel(contentsOf: momd) }
        #expect(missing?.message.contains("Nope") == true)

        #expect(throws: ModelError.self) { try ManagedObjectModel(storeModelCacheBlob: Data([0xff, 0xfe, 0x00, 0x13])) }
        #expect(throws: ModelError.self) { try ManagedObjectModel(storeModelCacheBlob: Data()) }
    }

    /// Truncated and corrupted archives fail with an error, never a crash.
    @Test(.enabled(if: Corpus.shouldRun, Corpus.skipMessage))
    func corruptedArchivesNeverCrash() throws {
        let corpus = try Corpus.required()
        let original = try Data(contentsOf: corpus.appendingPathComponent("compiled/Contacts.mom"))
        var seed: UInt64 = 0x2545_F491_4F6C_DD1D
        func next() -> Int {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int(truncatingIfNeeded: seed >> 33)
        }
        var failures = 0
        for cut in stride(from: 0, to: original.count, by: 97) {
            if (try? ManagedObjectModel(compiledModelData: original.prefix(cut))) == nil { failures += 1 }
        }
        for _ in 0..<300 {
            var bytes = [UInt8](original)
            for _ in 0..<(1 + next() % 4) {
                let i = next() % bytes.count
                bytes[i] = UInt8(truncatingIfNeeded: next())
            }
            _ = try? ManagedObjectModel(compiledModelData: Data(bytes))
        }
        #expect(failures > 0)
    }

    @Test func unknownPathsAreReported() {
        let error = #expect(throws: ModelError.self) {
            try ManagedObjectModel(contentsOf: URL(fileURLWithPath: "/nonexistent/Model.momd"))
        }
        #expect(error?.code == .unreadable)
        #expect(error?.file == "/nonexistent/Model.momd")
    }
}
