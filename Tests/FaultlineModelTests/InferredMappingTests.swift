import FaultlineModel
import FaultlineTestSupport
import Foundation
import Testing

/// The mapping Core Data would infer between two model versions, change kind by change kind.
@Suite struct InferredMappingTests {
    static func note(_ attributes: [AttributeDescription] = [], relationships: [RelationshipDescription] = [], name: String = "Note", renamingIdentifier: String? = nil) -> EntityDescription {
        EntityDescription(name: name, attributes: attributes, relationships: relationships, renamingIdentifier: renamingIdentifier)
    }

    static let title = AttributeDescription(name: "title", type: .string)

    static func mapping(_ old: [EntityDescription], _ new: [EntityDescription]) throws -> InferredMapping {
        try ManagedObjectModel(entities: new).inferredMapping(from: ManagedObjectModel(entities: old))
    }

    @Test func theSameModelHasNoChanges() throws {
        let m = try Self.mapping([Self.note([Self.title])], [Self.note([Self.title])])
        #expect(m.changes.isEmpty && m.isInferable && !m.requiresMigration)
        let e = try #require(m.entityMapping(forDestination: "Note"))
        #expect(e.source?.name == "Note" && !e.versionHashChanged && e.attribute(named: "title")?.source?.name == "title")
    }

    @Test func addedAttributes() throws {
        let optional = try Self.mapping([Self.note([Self.title])], [Self.note([Self.title, .init(name: "body", type: .string)])])
        #expect(optional.isInferable && optional.requiresMigration)
        #expect(optional.changes.map(\.description) == ["attribute Note.body: added"])
        #expect(optional.entityMapping(forDestination: "Note")?.attribute(named: "body")?.source == nil)

        let required = try Self.mapping([Self.note([Self.title])], [Self.note([Self.title, .init(name: "body", type: .string, isOptional: false)])])
        #expect(!required.isInferable)
        #expect(required.problems == ["attribute Note.body was added as non-optional without a default value, so existing objects would have no value"])

        let withDefault = try Self.mapping(
            [Self.note([Self.title])], [Self.note([Self.title, .init(name: "count", type: .integer32, isOptional: false, defaultValueString: "0")])])
        #expect(withDefault.isInferable)
        let transient = try Self.mapping([Self.note([Self.title])], [Self.note([Self.title, .init(name: "scratch", type: .string, isOptional: false, isTransient: true)])])
        #expect(transient.isInferable && !transient.requiresMigration)
    }

    @Test func aNewEntitysPropertiesNeedNoDefaults() throws {
        let m = try Self.mapping([Self.note([Self.title])], [Self.note([Self.title]), EntityDescription(name: "Tag", attributes: [.init(name: "name", type: .string, isOptional: false)])])
        #expect(m.isInferable)
        #expect(m.changes.map(\.description) == ["entity Tag: added"])
        #expect(m.entityMapping(forDestination: "Tag")?.source == nil)
    }

    @Test func removedElements() throws {
        let m = try Self.mapping([Self.note([Self.title, .init(name: "body", type: .string)]), EntityDescription(name: "Tag")], [Self.note([Self.title])])
        #expect(m.isInferable)
        #expect(m.changes.map(\.description) == ["attribute Note.body: removed", "entity Tag: removed"])
        #expect(m.removedEntities.map(\.name) == ["Tag"])
        #expect(m.entityMapping(forDestination: "Note")?.removedAttributes.map(\.name) == ["body"])
    }

    @Test func renamesFollowRenamingIdentifiers() throws {
        let old = [Self.note([Self.title])]
        let new = [Self.note([.init(name: "heading", type: .string, renamingIdentifier: "title")], name: "Memo", renamingIdentifier: "Note")]
        let m = try Self.mapping(old, new)
        #expect(m.isInferable)
        let e = try #require(m.entityMapping(forDestination: "Memo"))
        #expect(e.source?.name == "Note" && e.isRenamed)
        #expect(e.attribute(named: "heading")?.source?.name == "title")
        #expect(m.entityMapping(forSource: "Note")?.destination.name == "Memo")
        #expect(m.changes.map(\.description) == ["entity Memo: renamed from Note", "attribute Memo.heading: renamed from title"])
        #expect(m.removedEntities.isEmpty)
    }

    @Test func aRenamingIdentifierIsACanonicalNameAcrossVersions() throws {
        // Version 2 renamed `title` to `heading` (identifier `title`); version 3 renames it
        // again to `caption`, keeping the identifier: 2 → 3 and 1 → 3 both map it.
        let v1 = [Self.note([Self.title])]
        let v2 = [Self.note([.init(name: "heading", type: .string, renamingIdentifier: "title")])]
        let v3 = [Self.note([.init(name: "caption", type: .string, renamingIdentifier: "title")])]
        #expect(try Self.mapping(v2, v3).entityMapping(forDestination: "Note")?.attribute(named: "caption")?.source?.name == "heading")
        #expect(try Self.mapping(v1, v3).entityMapping(forDestination: "Note")?.attribute(named: "caption")?.source?.name == "title")
        // Without the identifier, a new name is a removal and an addition.
        let plain = try Self.mapping(v1, [Self.note([.init(name: "caption", type: .string)])])
        #expect(plain.changes.map(\.description) == ["attribute Note.caption: added", "attribute Note.title: removed"])
    }

    @Test func typeChanges() throws {
        let text = try Self.mapping([Self.note([Self.title])], [Self.note([.init(name: "title", type: .integer64)])])
        #expect(!text.isInferable)
        #expect(text.problems == ["attribute Note.title changed type from String to Integer 64, which lightweight migration does not convert"])
        let numeric = try Self.mapping([Self.note([.init(name: "n", type: .integer16)])], [Self.note([.init(name: "n", type: .integer32)])])
        #expect(numeric.isInferable && numeric.requiresMigration)
        #expect(numeric.changes.map(\.description) == ["attribute Note.n: type Integer 16 → Integer 32"])
    }

    @Test func optionality() throws {
        let required = try Self.mapping([Self.note([Self.title])], [Self.note([.init(name: "title", type: .string, isOptional: false)])])
        #expect(required.problems == ["attribute Note.title became non-optional without a default value"])
        let withDefault = try Self.mapping([Self.note([Self.title])], [Self.note([.init(name: "title", type: .string, isOptional: false, defaultValueString: "untitled")])])
        #expect(withDefault.isInferable)
        #expect(withDefault.changes.map(\.summary) == ["became non-optional", "default none → \"untitled\""])
        let relaxed = try Self.mapping([Self.note([.init(name: "title", type: .string, isOptional: false)])], [Self.note([Self.title])])
        #expect(relaxed.isInferable)
    }

    @Test func transientAndFlags() throws {
        let toTransient = try Self.mapping([Self.note([Self.title])], [Self.note([.init(name: "title", type: .string, isTransient: true)])])
        #expect(toTransient.isInferable && toTransient.changes.map(\.summary) == ["became transient"])
        let toStored = try Self.mapping(
            [Self.note([.init(name: "title", type: .string, isOptional: false, isTransient: true)])], [Self.note([.init(name: "title", type: .string, isOptional: false)])])
        #expect(toStored.problems == ["attribute Note.title became stored as non-optional without a default value, so existing objects would have no value"])
        let modifier = try Self.mapping([Self.note([Self.title])], [Self.note([.init(name: "title", type: .string, versionHashModifier: "2")])])
        #expect(modifier.isInferable && modifier.requiresMigration)
        #expect(modifier.changes.map(\.summary) == ["version hash modifier none → \"2\""])
        let external = try Self.mapping(
            [Self.note([.init(name: "photo", type: .binaryData)])], [Self.note([.init(name: "photo", type: .binaryData, allowsExternalBinaryDataStorage: true)])])
        #expect(external.isInferable && external.changes.map(\.kindName) == ["externalStorageChanged"])
    }

    static func folders(_ notes: RelationshipDescription, _ folder: RelationshipDescription) -> [EntityDescription] {
        [EntityDescription(name: "Folder", relationships: [notes]), EntityDescription(name: "Note", relationships: [folder])]
    }

    @Test func relationshipChanges() throws {
        let toOne = RelationshipDescription(name: "folder", destination: "Folder", inverse: "notes")
        let notes = RelationshipDescription(name: "notes", destination: "Note", inverse: "folder", toMany: true)
        let base = Self.folders(notes, toOne)
        // to-one → to-many (a many-to-many now): inferable.
        let many = try Self.mapping(base, Self.folders(notes, .init(name: "folder", destination: "Folder", inverse: "notes", toMany: true)))
        #expect(many.isInferable)
        #expect(many.changes.map(\.description) == ["relationship Note.folder: to-one → to-many"])
        // to-many → to-one: not.
        let one = try Self.mapping(base, Self.folders(.init(name: "notes", destination: "Note", inverse: "folder"), toOne))
        #expect(one.problems == ["relationship Folder.notes changed from to-many to to-one, which would drop all but one destination"])
        // Unordered → ordered, delete rule: inferable.
        let ordered = try Self.mapping(base, Self.folders(.init(name: "notes", destination: "Note", inverse: "folder", toMany: true, ordered: true, deleteRule: .cascade), toOne))
        #expect(ordered.isInferable)
        #expect(ordered.changes.map(\.summary) == ["to-many → ordered to-many", "delete rule Nullify → Cascade"])
        // A renamed inverse is not an inverse change.
        let renamed = try Self.mapping(
            base,
            Self.folders(.init(name: "notes", destination: "Note", inverse: "parent", toMany: true), .init(name: "parent", destination: "Folder", inverse: "notes", renamingIdentifier: "folder")))
        #expect(renamed.changes.map(\.description) == ["relationship Note.parent: renamed from folder"])
        // A required to-one added: inferable, with a caveat.
        let required = try Self.mapping(base, base.map { e in
            var e = e
            if e.name == "Note" { e.declaredRelationships.append(.init(name: "owner", destination: "Folder", isOptional: false)) }
            return e
        })
        #expect(required.isInferable)
        #expect(required.changes.first?.note == "required: existing objects have no destination until one is set")
    }

    @Test func relationshipDestinationChange() throws {
        let old = [EntityDescription(name: "A"), EntityDescription(name: "B"), EntityDescription(name: "Note", relationships: [.init(name: "link", destination: "A")])]
        let new = [EntityDescription(name: "A"), EntityDescription(name: "B"), EntityDescription(name: "Note", relationships: [.init(name: "link", destination: "B")])]
        let m = try Self.mapping(old, new)
        let change = try #require(m.changes.first)
        #expect(change.description == "relationship Note.link: destination A → B")
        #expect(change.note == "destinations are kept only where they map to B; it was A (from A)")
        // The destination entity renamed: no change.
        let renamed = try Self.mapping(old, [
            EntityDescription(name: "Anchor", renamingIdentifier: "A"), EntityDescription(name: "B"),
            EntityDescription(name: "Note", relationships: [.init(name: "link", destination: "Anchor")]),
        ])
        #expect(renamed.changes.map(\.description) == ["entity Anchor: renamed from A"])
    }

    @Test func entityHierarchy() throws {
        let thing = EntityDescription(name: "Thing", attributes: [.init(name: "name", type: .string)])
        let old = [thing, EntityDescription(name: "Note"), EntityDescription(name: "Tag")]
        // A new parent entity over one entity: inferable.
        let item = EntityDescription(name: "Item", attributes: [.init(name: "name", type: .string)])
        let parent = try Self.mapping(old, [thing, item, EntityDescription(name: "Note", superentityName: "Item"), EntityDescription(name: "Tag")])
        #expect(parent.isInferable)
        #expect(parent.changes.map(\.description) == ["entity Item: added", "entity Note: parent none → Item"])
        #expect(parent.entityMapping(forDestination: "Note")?.attribute(named: "name").map { $0.source == nil && $0.isInherited } == true)
        // An existing entity as the new parent takes in another hierarchy: its rows would share
        // the parent's table and collide on their keys, so not inferable.
        let existing = try Self.mapping(old, [thing, EntityDescription(name: "Note", superentityName: "Thing"), EntityDescription(name: "Tag")])
        #expect(!existing.isInferable)
        #expect(existing.problems == ["entity Note joins the hierarchy of Thing, which would merge the separate source hierarchies of Note, Thing; lightweight migration cannot merge entity hierarchies"])
        // Two separate hierarchies under one parent: not.
        let merged = try Self.mapping(old, [thing, EntityDescription(name: "Note", superentityName: "Thing"), EntityDescription(name: "Tag", superentityName: "Thing")])
        #expect(!merged.isInferable)
        #expect(merged.problems.first?.contains("lightweight migration cannot merge entity hierarchies") == true)
        // Concrete → abstract: not; abstract → concrete: inferable.
        let abstract = try Self.mapping(old, [EntityDescription(name: "Thing", isAbstract: true, attributes: [.init(name: "name", type: .string)]), EntityDescription(name: "Note"), EntityDescription(name: "Tag")])
        #expect(abstract.problems == ["entity Thing became abstract, so its existing instances could not be kept"])
    }

    @Test func constraintsAndIndexes() throws {
        let old = [EntityDescription(name: "Tag", attributes: [.init(name: "name", type: .string)])]
        let new = [EntityDescription(
            name: "Tag", attributes: [.init(name: "name", type: .string)], uniquenessConstraints: [["name"]],
            fetchIndexes: [.init(name: "byName", elements: [.init(property: "name", isAscending: false)])])]
        let m = try Self.mapping(old, new)
        #expect(m.isInferable && m.requiresMigration)
        #expect(m.changes.map(\.summary) == ["uniqueness constraints none → (name)", "indexes none → byName(name desc)"])
        #expect(m.changes.first?.note == "existing objects must already be unique on (name)")
        // Indexes alone do not change the version hash.
        let indexOnly = try Self.mapping(old, [EntityDescription(name: "Tag", attributes: [.init(name: "name", type: .string, isIndexed: true)])])
        #expect(!indexOnly.requiresMigration && indexOnly.changes.map(\.summary) == ["indexes none → name (indexed)"])
    }

    @Test func versionHashesOfBothSides() throws {
        let oldModel = try ManagedObjectModel(entities: [Self.note([Self.title])])
        let newModel = try ManagedObjectModel(entities: [Self.note([Self.title, .init(name: "body", type: .string)])])
        let e = try #require(newModel.inferredMapping(from: oldModel).entityMapping(forDestination: "Note"))
        #expect(e.sourceVersionHash == oldModel.entityVersionHashesByName["Note"])
        #expect(e.destinationVersionHash == newModel.entityVersionHashesByName["Note"])
        #expect(e.versionHashChanged)
    }

    @Test func inheritedPropertiesAreListedOnce() throws {
        let old = [EntityDescription(name: "Thing", attributes: [.init(name: "name", type: .string)]), EntityDescription(name: "Note", superentityName: "Thing")]
        let new = [EntityDescription(name: "Thing", attributes: [.init(name: "name", type: .string), .init(name: "created", type: .date)]), EntityDescription(name: "Note", superentityName: "Thing")]
        let m = try Self.mapping(old, new)
        #expect(m.changes.map(\.description) == ["attribute Thing.created: added"])
        let note = try #require(m.entityMapping(forDestination: "Note"))
        #expect(note.attribute(named: "created")?.isInherited == true)
        #expect(note.allChanges.map(\.description) == ["attribute Note.created: added"])
    }

    // MARK: Versions

    @Test func versionOrderComparesTrailingNumbers() throws {
        let folder = try TestSupport.temporaryDirectory("versions-order")
        let bundle = folder.appendingPathComponent("M.xcdatamodeld")
        for name in ["M", "M 2", "M 10", "M 9"] {
            let dir = bundle.appendingPathComponent("\(name).xcdatamodel")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            let xml = "<?xml version=\"1.0\"?><model type=\"com.apple.IDECoreDataModeler.DataModel\"><entity name=\"E\"><attribute name=\"v\(name.filter(\.isNumber))\" optional=\"YES\" attributeType=\"String\"/></entity></model>"
            try xml.write(to: dir.appendingPathComponent("contents"), atomically: true, encoding: .utf8)
        }
        let versions = try ManagedObjectModel.versions(at: bundle)
        #expect(versions.map(\.name) == ["M", "M 2", "M 9", "M 10"])
        #expect(versions.map(\.position) == [1, 2, 3, 4] && versions.allSatisfy { $0.count == 4 })
        // No .xccurrentversion and several versions: none is current.
        #expect(versions.allSatisfy { !$0.isCurrent })
        let nine = try #require(versions.first { $0.name == "M 9" })
        #expect(try nine.loadModel().entity(named: "E")?.attribute(named: "v9") != nil)
        let match = try #require(ManagedObjectModel.matchVersion(storeVersionHashes: nine.entityVersionHashes, in: versions))
        #expect(match.isExact && match.version.name == "M 9")
        // A store no version made: the nearest, with what differs.
        var hashes = nine.entityVersionHashes
        hashes["Gone"] = Data(repeating: 1, count: 32)
        let near = try #require(ManagedObjectModel.matchVersion(storeVersionHashes: hashes, in: versions))
        #expect(!near.isExact && near.version.name == "M 9")
        #expect(near.differences.map(\.description) == ["Gone (only in the store)"])
        // A tie goes to the later version.
        let tie = try #require(ManagedObjectModel.matchVersion(storeVersionHashes: ["E": Data(repeating: 2, count: 32)], in: versions))
        #expect(tie.version.name == "M 10" && tie.differences.map(\.description) == ["E (changed)"])
    }

    // MARK: Corpus

    static func corpusModel(_ name: String) throws -> URL {
        try Corpus.required().appendingPathComponent("models").appendingPathComponent(name)
    }

    @Test(.enabled(if: Corpus.shouldRun, Corpus.skipMessage))
    func consecutiveVersionsOfTheCorpusBundles() throws {
        let expected: [String: Int] = ["Bookmark.xcdatamodeld": 3, "MastodonCoreData.xcdatamodeld": 9, "VersionedModel.xcdatamodeld": 4, "momcomTests.xcdatamodeld": 2]
        for (bundle, count) in expected.sorted(by: { $0.key < $1.key }) {
            let url = try Self.corpusModel(bundle)
            let versions = try ManagedObjectModel.versions(at: url)
            #expect(versions.count == count, "\(bundle)")
            #expect(versions.last?.isCurrent == true, "\(bundle): the last version is the current one")
            for (old, new) in zip(versions, versions.dropFirst()) {
                let source = try old.loadModel(), destination = try new.loadModel()
                let mapping = destination.inferredMapping(from: source)
                // Every entity of each side is accounted for exactly once.
                #expect(mapping.entityMappings.map(\.destination.name) == destination.entities.map(\.name))
                let fed = Set(mapping.entityMappings.compactMap(\.source?.name))
                #expect(fed.union(mapping.removedEntities.map(\.name)) == Set(source.entities.map(\.name)), "\(bundle) \(old.name) → \(new.name)")
                #expect(fed.isDisjoint(with: mapping.removedEntities.map(\.name)))
                // Equal hashes ⇔ no store-relevant difference reported for a kept entity.
                for e in mapping.entityMappings where e.source != nil && !e.versionHashChanged {
                    let relevant = e.allChanges.filter {
                        switch $0.kind {
                        case .indexesChanged, .defaultValueChanged, .deleteRuleChanged: false
                        case .added, .removed, .transientChanged: !(e.attribute(named: $0.element.propertyName ?? "")?.destination.isTransient ?? true)
                        default: true
                        }
                    }
                    #expect(relevant.isEmpty, "\(bundle) \(new.name) \(e.destination.name): \(relevant)")
                }
                #expect(mapping.requiresMigration == (source.entityVersionHashesByName != destination.entityVersionHashesByName))
                // The mapping of a version to itself is empty.
                #expect(source.inferredMapping(from: source).changes.isEmpty)
            }
        }
    }

    @Test(.enabled(if: Corpus.shouldRun, Corpus.skipMessage))
    func mastodonMigrationsAreInferableAndBookmarksFirstIsNot() throws {
        let mastodon = try ManagedObjectModel.versions(at: Self.corpusModel("MastodonCoreData.xcdatamodeld"))
        #expect(mastodon.map(\.name) == ["CoreData"] + (2...9).map { "CoreData \($0)" })
        for (old, new) in zip(mastodon, mastodon.dropFirst()) {
            let mapping = try new.loadModel().inferredMapping(from: old.loadModel())
            #expect(mapping.isInferable, "\(old.name) → \(new.name): \(mapping.problems)")
        }
        let bookmark = try ManagedObjectModel.versions(at: Self.corpusModel("Bookmark.xcdatamodeld"))
        let first = try bookmark[1].loadModel().inferredMapping(from: bookmark[0].loadModel())
        #expect(first.problems == ["attribute BookmarkManagedObject.id was added as non-optional without a default value, so existing objects would have no value"])
        // momcTests 2 adds one optional attribute.
        let momc = try ManagedObjectModel.versions(at: Self.corpusModel("momcomTests.xcdatamodeld"))
        let m = try momc[1].loadModel().inferredMapping(from: momc[0].loadModel())
        #expect(m.changes.map(\.description) == ["attribute UnrelatedEntity.birthday: added"])
    }

    @Test(.enabled(if: Corpus.shouldRun, Corpus.skipMessage))
    func aMomdsRecordedHashesAreItsVersions() throws {
        let momd = try Corpus.required().appendingPathComponent("compiled/RestKitCoreData.momd")
        let versions = try ManagedObjectModel.versions(at: momd)
        #expect(versions.count == 1 && versions[0].isCurrent)
        #expect(versions[0].entityVersionHashes == (try versions[0].loadModel().entityVersionHashesByName))
        // A compiled model records each element's renaming identifier as its name: matching a
        // compiled model with itself renames nothing.
        let model = try versions[0].loadModel()
        #expect(model.inferredMapping(from: model).changes.isEmpty)
    }
}
