import Faultline
import FaultlineModel
import FaultlineSQL
import FaultlineTestSupport
import Foundation
import Testing

/// The migration fixtures (`StorePopulator`, `StoreSnapshot`, `StoreRowCounts`) on every model
/// of the corpus and on hand-made models with every feature they handle.
@Suite struct StorePopulatorTests {
    /// One model to populate: a label for messages and how to load it.
    struct ModelSource: CustomStringConvertible {
        var label: String
        var url: URL
        var version: String?
        var description: String { label }
        func load() throws -> ManagedObjectModel { try ManagedObjectModel(contentsOf: url, version: version) }
    }

    /// Every version of every `.xcdatamodeld` in `corpus/models` (and Tavant's), and the
    /// compiled models.
    static func corpusModels(_ corpus: URL) throws -> [ModelSource] {
        var sources: [ModelSource] = []
        let models = corpus.appendingPathComponent("models")
        var bundles = try FileManager.default.contentsOfDirectory(atPath: models.path)
            .filter { $0.hasSuffix(".xcdatamodeld") }.sorted()
            .map { models.appendingPathComponent($0) }
        bundles.append(corpus.appendingPathComponent("stores/tavant-ios7/Model.xcdatamodeld"))
        for bundle in bundles {
            let versions = try FileManager.default.contentsOfDirectory(atPath: bundle.path)
                .filter { $0.hasSuffix(".xcdatamodel") }.sorted()
            for version in versions {
                let name = String(version.dropLast(".xcdatamodel".count))
                sources.append(ModelSource(label: "\(bundle.lastPathComponent)/\(name)", url: bundle, version: name))
            }
        }
        for compiled in ["Contacts.mom", "Contacts.xcdatamodel", "RestKitCoreData.momd"] {
            sources.append(ModelSource(label: "compiled/\(compiled)", url: corpus.appendingPathComponent("compiled/\(compiled)")))
        }
        return sources
    }

    /// Populates a new store from `model`, then checks it closed and reopened: the snapshot
    /// read back is what was inserted, the raw row counts agree, SQLite finds it intact, and it
    /// opens with the same model. Returns the populator's result.
    @discardableResult
    static func populateAndCheck(_ model: ManagedObjectModel, label: String, options: StorePopulator.Options = .init()) throws -> StorePopulator.Result {
        let folder = try TestSupport.temporaryDirectory("faultline-populate")
        let url = folder.appendingPathComponent("Populated.sqlite")
        let result = try StorePopulator(model: model, options: options).populate(storeAt: url)

        // Every non-abstract entity got its objects.
        let concrete = model.entities.filter { !$0.isAbstract }.map(\.name)
        #expect(result.insertedCounts == Dictionary(uniqueKeysWithValues: concrete.map { ($0, options.objectsPerEntity) }), "\(label)")

        // Reopened with the same model: the version hashes match (a mismatch throws).
        let store = try SQLiteStore(url: url, model: model)
        #expect(store.warnings.isEmpty, "\(label): \(store.warnings)")
        let hashes = try SQLiteStore.versionHashes(at: url)
        #expect(hashes == model.entityVersionHashesByName, "\(label)")
        #expect(try store.connection.scalar("PRAGMA integrity_check")?.string == "ok", "\(label)")

        // Read back through the object graph: exactly what was inserted.
        let read = try StoreSnapshot(store: store)
        let differences = read.differences(from: result.expected)
        #expect(differences.isEmpty, "\(label): \(differences.prefix(10).joined(separator: "\n"))")
        #expect(read == result.expected, "\(label)")
        #expect(read.counts == result.insertedCounts, "\(label)")

        // Every relationship of every object is filled, except where the populator said not.
        let partly = Set(result.partlyFilled.map { "\($0.entity).\($0.relationship)" })
        for (name, entity) in read.entities {
            for (_, object) in entity.objects {
                for relationship in entity.relationshipNames where object.relationships[relationship, default: []].isEmpty {
                    let declared = model.entity(named: name).map { model.inheritanceChain(of: $0) } ?? []
                    let excused = declared.contains { partly.contains("\($0.name).\(relationship)") }
                    #expect(excused, "\(label): \(name).\(relationship) is empty")
                }
            }
        }

        // Counted in SQL, without the object graph.
        let rows = try StoreRowCounts.read(storeAt: url)
        #expect(rows.filter { $0.value > 0 } == result.insertedCounts, "\(label)")
        return result
    }

    @Test(.enabled(if: Corpus.shouldRun, Corpus.skipMessage))
    func everyCorpusModelVersionIsPopulated() throws {
        let corpus = try Corpus.required()
        let sources = try Self.corpusModels(corpus)
        // 3 Bookmark, 1 EmployeeDirectory, 9 Mastodon, 1 Moody, 4 VersionedModel, 2 momcom,
        // Tavant's, and the three compiled models.
        #expect(sources.count == 24)
        var failures: [String] = []
        var partlyFilled: [String] = []
        var skipped: [String] = []
        for source in sources {
            let model = try source.load()
            do {
                let result = try Self.populateAndCheck(model, label: source.label)
                partlyFilled += result.partlyFilled.map { "\(source.label): \($0)" }
                skipped += result.skipped.map { "\(source.label): \($0)" }
            } catch {
                failures.append("\(source.label): \(error)")
            }
        }
        // Every model of the corpus can be populated.
        #expect(failures == [], "\(failures.joined(separator: "\n"))")
        // RestKit's RKSearchWord.searchableManagedObjects points at the abstract
        // RKSearchableManagedObject, which has no sub-entity in RestKit's own model (apps add
        // them): there is nothing to point at.
        #expect(partlyFilled == ["compiled/RestKitCoreData.momd: RKSearchWord.searchableManagedObjects: 5 of 5 objects empty"])
        // Only transient attributes are left unset (Mastodon's, EmployeeDirectory's fullName,
        // momcom's binaryAttribute): no stored attribute has a type the library cannot store.
        #expect(skipped.count == 40)
        #expect(skipped.allSatisfy { $0.hasSuffix(": transient: never stored") }, "\(skipped)")
    }

    // MARK: Hand-made models

    /// Every attribute type with bounds, a pattern, a uniqueness constraint across an
    /// inheritance tree, ordered and unordered to-manys, many-to-many, relationships that are
    /// their own inverse, a self-relationship, one-to-one, a required to-many with counts and
    /// no inverse, a transient attribute.
    static func kitchenSinkModel() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(
                name: "Node", isAbstract: true,
                attributes: [
                    .init(name: "name", type: .string, isOptional: false),
                    .init(name: "code", type: .integer16, minValueString: "1", maxValueString: "200"),
                ],
                relationships: [
                    .init(name: "parent", destination: "Folder", inverse: "children"),
                    .init(name: "friends", destination: "Node", inverse: "friends", toMany: true),
                    .init(name: "tags", destination: "Tag", inverse: "nodes", toMany: true),
                ],
                uniquenessConstraints: [["name"], ["code"]]),
            EntityDescription(
                name: "Folder", superentityName: "Node",
                relationships: [.init(name: "children", destination: "Node", inverse: "parent", toMany: true, ordered: true)]),
            EntityDescription(
                name: "Leaf", superentityName: "Node",
                attributes: [
                    .init(name: "small", type: .integer16, isOptional: false),
                    .init(name: "medium", type: .integer32, minValueString: "-5", maxValueString: "1000000"),
                    .init(name: "large", type: .integer64, isOptional: false),
                    .init(name: "price", type: .decimal, isOptional: false),
                    .init(name: "ratio", type: .double, minValueString: "-1.5", maxValueString: "2.5"),
                    .init(name: "weight", type: .float, isOptional: false),
                    .init(name: "flag", type: .boolean, isOptional: false),
                    .init(name: "when", type: .date, minValueString: "0", maxValueString: "86400000"),
                    .init(name: "blob", type: .binaryData, isOptional: false),
                    .init(name: "photo", type: .binaryData, allowsExternalBinaryDataStorage: true),
                    .init(name: "identifier", type: .uuid, isOptional: false),
                    .init(name: "link", type: .uri),
                    .init(name: "payload", type: .transformable, valueTransformerName: "NSSecureUnarchiveFromData"),
                    .init(name: "slug", type: .string, minValueString: "3", maxValueString: "12", regularExpressionString: "[a-z]+[0-9]*"),
                    .init(name: "scratch", type: .string, isTransient: true),
                ],
                relationships: [.init(name: "badge", destination: "Badge", inverse: "leaf")]),
            EntityDescription(
                name: "Badge",
                attributes: [.init(name: "label", type: .string)],
                relationships: [.init(name: "leaf", destination: "Leaf", inverse: "badge", isOptional: false)]),
            EntityDescription(
                name: "Tag",
                attributes: [.init(name: "title", type: .string, isOptional: false)],
                relationships: [
                    .init(name: "nodes", destination: "Node", inverse: "tags", toMany: true, ordered: true),
                    .init(name: "twin", destination: "Tag", inverse: "twin"),
                ]),
            EntityDescription(
                name: "Note",
                attributes: [.init(name: "text", type: .string)],
                relationships: [.init(name: "leaves", destination: "Leaf", toMany: true, isOptional: false, minCount: 1, maxCount: 4)]),
        ])
    }

    @Test func theKitchenSinkModelIsPopulatedAndReadBack() throws {
        let model = try Self.kitchenSinkModel()
        let result = try Self.populateAndCheck(model, label: "kitchen sink")
        #expect(result.skipped.map(\.description) == ["Leaf.scratch: transient: never stored"])
        // Five of ten Nodes pair off as twins, but a Tag has five: one is left alone.
        #expect(result.partlyFilled.map(\.description) == ["Tag.twin: 1 of 5 objects empty"])

        let expected = result.expected
        let leaves = try #require(expected.entities["Leaf"]).objects.values
        for leaf in leaves {
            guard case .string(let slug)? = leaf.attributes["slug"] else { Issue.record("slug"); continue }
            #expect((3...12).contains(slug.utf16.count) && slug.range(of: "^[a-z]+[0-9]*$", options: .regularExpression) != nil, "\(slug)")
            if case .integer(let medium)? = leaf.attributes["medium"] { #expect((-5...1_000_000).contains(medium)) }
            if case .double(let ratio)? = leaf.attributes["ratio"] { #expect(ratio >= -1.5 && ratio <= 2.5) }
            #expect(leaf.attributes.count == 16)  // 2 inherited + 14 stored
            #expect(leaf.relationships["badge"]?.count == 1)
        }
        // Names are unique across Folder and Leaf, which share ZNODE.
        let names = ["Folder", "Leaf"].flatMap { expected.entities[$0]?.objects.values.compactMap { $0.attributes["name"] } ?? [] }
        #expect(Set(names).count == 10)
        // Ordered to-manys are not in key order.
        let orders = expected.entities["Folder"]?.objects.values.compactMap { $0.relationships["children"] } ?? []
        #expect(orders.contains { $0 != $0.sorted() })
        // A relationship that is its own inverse holds both directions.
        for (key, node) in ["Folder", "Leaf"].flatMap({ name in expected.entities[name]?.objects.map { (StoreSnapshot.ObjectKey(entity: name, primaryKey: $0.key), $0.value) } ?? [] }) {
            for friend in node.relationships["friends"] ?? [] {
                #expect(expected[friend]?.relationships["friends"]?.contains(key) == true)
            }
            #expect(node.relationships["friends"]?.contains(key) == false)
        }
    }

    @Test func theSameSeedMakesTheSameStoreAndAnotherSeedAnother() throws {
        let model = try Self.kitchenSinkModel()
        let folder = try TestSupport.temporaryDirectory("faultline-populate")
        let one = try StorePopulator(model: model).populate(storeAt: folder.appendingPathComponent("One.sqlite"))
        let two = try StorePopulator(model: model).populate(storeAt: folder.appendingPathComponent("Two.sqlite"))
        #expect(one.expected == two.expected, "\(two.expected.compare(with: one.expected))")
        let other = try StorePopulator(model: model, options: .init(seed: 42)).populate(storeAt: folder.appendingPathComponent("Other.sqlite"))
        #expect(other.expected != one.expected)
        #expect(other.expected.counts == one.expected.counts)
        #expect(throws: StorePopulator.PopulationError.self) {
            _ = try StorePopulator(model: model).populate(storeAt: folder.appendingPathComponent("One.sqlite"))
        }
    }

    @Test func largeBinaryValuesGoToExternalFilesAndReadBack() throws {
        let model = try Self.kitchenSinkModel()
        let result = try Self.populateAndCheck(model, label: "external data", options: .init(objectsPerEntity: 4, externalBinaryDataSize: 200_000))
        let files = try FileManager.default.contentsOfDirectory(
            at: ValueCoding.externalDataFolder(forStoreAt: result.storeURL), includingPropertiesForKeys: nil)
        // Leaves are ordinals 4…7 of ZNODE (after four Folders): the odd ones, 5 and 7.
        #expect(files.count == 2)
        let photos = result.expected.entities["Leaf"]?.objects.values.compactMap { object -> Int? in
            if case .data(let bytes)? = object.attributes["photo"] { return bytes.count }
            return nil
        }
        #expect(photos?.filter { $0 == 200_000 }.count == 2)
    }

    @Test func transformableValuesAreKeyedArchivesFoundationReads() throws {
        let data = StorePopulator.keyedArchive(of: "Leaf.payload 3 ü")
        #expect(data == StorePopulator.keyedArchive(of: "Leaf.payload 3 ü"))
        let read = try NSKeyedUnarchiver.unarchivedObject(ofClass: NSString.self, from: data)
        #expect(read.map { String($0) } == "Leaf.payload 3 ü")
    }

    @Test func theInventorySampleIsPopulated() throws {
        let model = try ManagedObjectModel(contentsOf: TestSupport.inventoryFolder.appendingPathComponent("Inventory.xcdatamodeld"))
        let result = try Self.populateAndCheck(model, label: "Inventory", options: .init(objectsPerEntity: 12, seed: 7))
        #expect(result.partlyFilled.isEmpty)
    }

    @Test func aModelThatCannotBePopulatedNamesTheEntityAndProperty() throws {
        let folder = try TestSupport.temporaryDirectory("faultline-populate")
        func failure(_ entities: [EntityDescription]) throws -> String? {
            let url = folder.appendingPathComponent("\(UUID().uuidString).sqlite")
            do {
                _ = try StorePopulator(model: try ManagedObjectModel(entities: entities)).populate(storeAt: url)
                return nil
            } catch let error as StorePopulator.PopulationError {
                return error.description
            }
        }
        #expect(try failure([
            EntityDescription(name: "A", attributes: [.init(name: "n", type: .integer16, minValueString: "10", maxValueString: "5")])
        ]) == "cannot populate A.n: no integer lies between the minimum 10 and maximum 5")
        #expect(try failure([
            EntityDescription(name: "A", attributes: [.init(name: "n", type: .integer16, minValueString: "1", maxValueString: "3")], uniquenessConstraints: [["n"]])
        ]) == "cannot populate A.n: a uniqueness constraint needs more distinct values than 1...3 holds")
        #expect(try failure([
            EntityDescription(name: "A", attributes: [.init(name: "s", type: .string, regularExpressionString: "[A-Z]{2}-[0-9]{3}")])
        ]) == "cannot populate A.s: no generated string fits the pattern [A-Z]{2}-[0-9]{3} with length 0...")
        #expect(try failure([
            EntityDescription(name: "A", attributes: [.init(name: "u", type: .undefined, isOptional: false)])
        ]) == "cannot populate A.u: required, but Undefined attributes have no stored type")
        // Ten Bs (five of them Cs) cannot each have their own one of five As.
        #expect(try failure([
            EntityDescription(name: "A", relationships: [.init(name: "b", destination: "B", inverse: "a", isOptional: false)]),
            EntityDescription(name: "B", relationships: [.init(name: "a", destination: "A", inverse: "b", isOptional: false)]),
            EntityDescription(name: "C", superentityName: "B"),
        ]) == "cannot populate A.b: no assignment of 10 B objects to 5 A objects satisfies (to-one, required), inverse B.a (to-one, required)")
    }

    @Test func decimalsSetFromDoublesKeepTheirDigitsAcrossASave() throws {
        let model = try ManagedObjectModel(entities: [EntityDescription(name: "Price", attributes: [.init(name: "amount", type: .decimal)])])
        let folder = try TestSupport.temporaryDirectory("faultline-populate")
        let url = folder.appendingPathComponent("Prices.sqlite")
        let store = try SQLiteStore(url: url, model: model, options: .init(readOnly: false, createIfMissing: true))
        let context = ManagedObjectContext(coordinator: PersistentStoreCoordinator(store: store))
        let price = try context.insertObject(entityName: "Price")
        try price.setValue(0.1, forKey: "amount")
        #expect(price.value(forKey: "amount") as? Decimal == Decimal(string: "0.1"))
        try context.save()
        let read = try StoreSnapshot(storeAt: url, model: model)
        #expect(read.entities["Price"]?.objects.values.first?.attributes["amount"] == .decimal(try #require(Decimal(string: "0.1"))))
    }

    // MARK: Comparing snapshots

    @Test func comparisonsFindChangedValuesMissingObjectsAndMovedRelationships() throws {
        let model = try Self.kitchenSinkModel()
        let folder = try TestSupport.temporaryDirectory("faultline-populate")
        let url = folder.appendingPathComponent("Store.sqlite")
        let result = try StorePopulator(model: model, options: .init(objectsPerEntity: 3)).populate(storeAt: url)
        let before = result.expected
        let badge = try #require(before.keys.first { $0.entity == "Badge" })
        let tag = try #require(before.keys.first { $0.entity == "Tag" })
        do {
            let connection = try Connection(path: url.path, mode: .readWrite)
            try connection.execute("UPDATE ZBADGE SET ZLABEL = ? WHERE Z_PK = ?", ["changed", .integer(badge.primaryKey)])
            try connection.execute("DELETE FROM ZTAG WHERE Z_PK = ?", [.integer(tag.primaryKey)])
        }
        let after = try StoreSnapshot(storeAt: url, model: model)
        let comparison = after.compare(with: before)
        let oldLabel = before[badge]?.attributes["label"] ?? .null
        #expect(comparison.mismatches.contains(.valueChanged(badge, property: "label", old: oldLabel, new: .string("changed"))))
        #expect(comparison.mismatches.contains(.missingObject(tag)))
        #expect(comparison.addedEntities.isEmpty && comparison.removedEntities.isEmpty)
        #expect(comparison.addedProperties.isEmpty && comparison.removedProperties.isEmpty)
        // The deleted tag's twin still names it: the join rows outlive the row.
        #expect(!comparison.isMatch)
        #expect(after.compare(with: after).isMatch)
        #expect(try StoreRowCounts.read(storeAt: url)["Tag"] == 2)
    }

    @Test func renamesMapOldNamesAndUnmatchedPropertiesAreListedApart() throws {
        let model = try Self.kitchenSinkModel()
        let folder = try TestSupport.temporaryDirectory("faultline-populate")
        let old = try StorePopulator(model: model, options: .init(objectsPerEntity: 2)).populate(storeAt: folder.appendingPathComponent("Old.sqlite")).expected

        // The "new" snapshot: Tag renamed Label, Badge.label renamed caption, Note.text
        // removed and Note.summary added.
        var new = old
        func renameTargets(_ object: inout StoreSnapshot.Object) {
            for (name, keys) in object.relationships {
                object.relationships[name] = keys.map { $0.entity == "Tag" ? StoreSnapshot.ObjectKey(entity: "Label", primaryKey: $0.primaryKey) : $0 }
            }
        }
        for name in new.entities.keys {
            for key in new.entities[name]?.objects.keys.map({ $0 }) ?? [] { renameTargets(&new.entities[name]!.objects[key]!) }
        }
        new.entities["Label"] = new.entities.removeValue(forKey: "Tag")
        var badge = try #require(new.entities["Badge"])
        badge.attributeNames = ["caption"]
        for key in badge.objects.keys { badge.objects[key]!.attributes["caption"] = badge.objects[key]!.attributes.removeValue(forKey: "label") }
        new.entities["Badge"] = badge
        var note = try #require(new.entities["Note"])
        note.attributeNames = ["summary"]
        for key in note.objects.keys { note.objects[key]!.attributes = ["summary": .null] }
        new.entities["Note"] = note

        let renames = StoreSnapshot.Renames(entities: ["Tag": "Label"], properties: ["Badge": ["label": "caption"]])
        let comparison = new.compare(with: old, renames: renames)
        #expect(comparison.isMatch, "\(comparison)")
        #expect(comparison.removedProperties == ["Note": ["text"]])
        #expect(comparison.addedProperties == ["Note": ["summary"]])
        #expect(comparison.addedEntities.isEmpty && comparison.removedEntities.isEmpty)

        let unmapped = new.compare(with: old)
        #expect(unmapped.addedEntities == ["Label"])
        #expect(unmapped.removedEntities == ["Tag": 2])
        #expect(unmapped.removedProperties["Badge"] == ["label"])
        #expect(!unmapped.isMatch)  // Node.tags now names Label objects
    }
}
