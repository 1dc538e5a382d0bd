import Faultline
import FaultlineTestSupport
import Foundation
import Testing

/// A save that breaks a uniqueness constraint, resolved by the context's merge policy as Core
/// Data's `NSMergePolicy` resolves an `NSConstraintConflict`.
@Suite struct ConstraintMergeTests {
    /// Tag (name unique, color) ↔ Note (title), many-to-many; a store holding Tag "red" (blue).
    static func store() throws -> (URL, ManagedObjectModel) {
        let folder = try TestSupport.temporaryDirectory("constraint-merge")
        let modelURL = folder.appendingPathComponent("Tags.xcdatamodel")
        try FileManager.default.createDirectory(at: modelURL, withIntermediateDirectories: true)
        try Data("""
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel">
                <entity name="Note" representedClassName="Note">
                    <attribute name="title" optional="YES" attributeType="String"/>
                    <relationship name="tags" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Tag" inverseName="notes" inverseEntity="Tag"/>
                </entity>
                <entity name="Tag" representedClassName="Tag">
                    <attribute name="name" optional="YES" attributeType="String"/>
                    <attribute name="color" optional="YES" attributeType="String"/>
                    <relationship name="notes" optional="YES" toMany="YES" deletionRule="Cascade" destinationEntity="Note" inverseName="tags" inverseEntity="Note"/>
                    <uniquenessConstraints><uniquenessConstraint><constraint value="name"/></uniquenessConstraint></uniquenessConstraints>
                </entity>
            </model>
            """.utf8).write(to: modelURL.appendingPathComponent("contents"))
        let model = try ManagedObjectModel(contentsOf: modelURL)
        let url = folder.appendingPathComponent("Tags.sqlite")
        let context = try Self.context(url, model, create: true)
        let red = try context.insertObject(entityName: "Tag")
        try red.setValue("red", forKey: "name")
        try red.setValue("blue", forKey: "color")
        let old = try context.insertObject(entityName: "Note")
        try old.setValue("old", forKey: "title")
        try old.setValue([red], forKey: "tags")
        try context.save()
        return (url, model)
    }

    static func context(_ url: URL, _ model: ManagedObjectModel, create: Bool = false) throws -> ManagedObjectContext {
        ManagedObjectContext(coordinator: PersistentStoreCoordinator(store: try SQLiteStore(url: url, model: model, options: .init(readOnly: false, createIfMissing: create))))
    }

    /// Inserts a duplicate "red" (green) with a new note tagged with it, saves under `policy`,
    /// and reads back the tags and the new note's tags.
    static func saveDuplicate(_ policy: MergePolicy) throws -> (tags: [[String]], noteTags: [String], error: Error?) {
        let (url, model) = try store()
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        let context = try Self.context(url, model)
        context.mergePolicy = policy
        let duplicate = try context.insertObject(entityName: "Tag")
        try duplicate.setValue("red", forKey: "name")
        try duplicate.setValue("green", forKey: "color")
        let note = try context.insertObject(entityName: "Note")
        try note.setValue("new", forKey: "title")
        try note.setValue([duplicate], forKey: "tags")
        var saveError: Error?
        do { try context.save() } catch { saveError = error }
        let check = try Self.context(url, model)
        var request = FetchRequest(entityName: "Tag")
        request.sortDescriptors = [FLSortDescriptor(key: "name", ascending: true)]
        let tags = try check.fetch(request).map { ["\($0.value(forKey: "name") ?? "nil")", "\($0.value(forKey: "color") ?? "nil")", "\(($0.value(forKey: "notes") as? [ManagedObject])?.count ?? 0)"] }
        var noteRequest = FetchRequest(entityName: "Note")
        noteRequest.predicate = try FLPredicate(format: "title == 'new'")
        let noteTags = try check.fetch(noteRequest).first.map { ($0.value(forKeyPath: "tags.color") as? [Any?] ?? []).map { "\($0 ?? "nil")" } } ?? []
        return (tags, noteTags, saveError)
    }

    @Test func objectTrumpMergesTheNewObjectIntoTheStoredOneWithItsValues() throws {
        for policy in [MergePolicy.mergeByPropertyObjectTrump, .overwrite] {
            let (tags, noteTags, error) = try Self.saveDuplicate(policy)
            #expect(error == nil, "\(policy): \(String(describing: error))")
            #expect(tags == [["red", "green", "2"]], "\(policy): one red tag, the new color, both notes")
            #expect(noteTags == ["green"], "\(policy)")
        }
    }

    @Test func storeTrumpAndRollbackKeepTheStoredValuesAndLinkToTheStoredObject() throws {
        for policy in [MergePolicy.mergeByPropertyStoreTrump, .rollback] {
            let (tags, noteTags, error) = try Self.saveDuplicate(policy)
            #expect(error == nil, "\(policy): \(String(describing: error))")
            #expect(tags == [["red", "blue", "2"]], "\(policy): one red tag, its stored color, both notes")
            #expect(noteTags == ["blue"], "\(policy)")
        }
    }

    @Test func theErrorPolicyReportsTheConflictAndWritesNothing() throws {
        let (tags, noteTags, error) = try Self.saveDuplicate(.error)
        #expect(error is ConstraintConflictError, "\(String(describing: error))")
        #expect(tags == [["red", "blue", "1"]])
        #expect(noteTags.isEmpty)
    }

    @Test func twoNewDuplicatesInOneSaveBecomeOne() throws {
        let (url, model) = try Self.store()
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        let context = try Self.context(url, model)
        context.mergePolicy = .mergeByPropertyObjectTrump
        for color in ["cyan", "teal"] {
            let tag = try context.insertObject(entityName: "Tag")
            try tag.setValue("sea", forKey: "name")
            try tag.setValue(color, forKey: "color")
        }
        try context.save()
        let check = try Self.context(url, model)
        var request = FetchRequest(entityName: "Tag")
        request.predicate = try FLPredicate(format: "name == 'sea'")
        #expect(try check.count(for: request) == 1)
    }
}
