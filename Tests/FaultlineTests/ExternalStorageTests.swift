import Faultline
import FaultlineModel
import FaultlineSQL
import FaultlineTestSupport
import Foundation
import Testing

/// Binary attributes with "Allows External Storage": small values inline behind `0x01`,
/// large ones in `.<store>_SUPPORT/_EXTERNAL_DATA/<UUID>` named by `0x02` + the UUID, files
/// written with the save and removed when no committed row names them.
@Suite struct ExternalStorageTests {
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(name: "Photo", attributes: [
                AttributeDescription(name: "title", type: .string),
                AttributeDescription(name: "image", type: .binaryData, allowsExternalBinaryDataStorage: true),
                AttributeDescription(name: "thumbnail", type: .binaryData),
            ])
        ])
    }

    /// A new store in a fresh folder, with a threshold of 16 bytes.
    static func open(_ folder: URL) throws -> (ManagedObjectContext, SQLiteStore) {
        let store = try SQLiteStore(
            url: folder.appendingPathComponent("Photos.sqlite"), model: try model(),
            options: .init(readOnly: false, createIfMissing: true, externalBinaryDataThreshold: 16))
        return (ManagedObjectContext(coordinator: PersistentStoreCoordinator(store: store)), store)
    }

    static func column(_ store: SQLiteStore, _ object: ManagedObject) throws -> SQLValue? {
        try store.connection.scalar("SELECT ZIMAGE FROM ZPHOTO WHERE Z_PK = ?", [.integer(object.objectID.primaryKey)])
    }

    static func files(_ folder: URL) -> [String] {
        let external = ValueCoding.externalDataFolder(forStoreAt: folder.appendingPathComponent("Photos.sqlite"))
        return ((try? FileManager.default.contentsOfDirectory(atPath: external.path)) ?? []).sorted()
    }

    /// A new photo whose image (`count` bytes of `byte`) is saved, in a new store in a fresh
    /// folder; the folder is removed by the caller.
    static func savedPhoto(byte: UInt8, count: Int = 100) throws -> (folder: URL, context: ManagedObjectContext, store: SQLiteStore, photo: ManagedObject) {
        let folder = try TestSupport.temporaryDirectory()
        let (context, store) = try open(folder)
        let photo = try context.insertObject(entityName: "Photo")
        try photo.setValue(Data(repeating: byte, count: count), forKey: "image")
        try context.save()
        return (folder, context, store, photo)
    }

    @Test func smallValuesStayInlineAndLargeOnesGoToAFileThatReadsBack() throws {
        let folder = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (context, store) = try Self.open(folder)
        let small = try context.insertObject(entityName: "Photo")
        try small.setValue(Data("tiny".utf8), forKey: "image")
        let large = try context.insertObject(entityName: "Photo")
        let bytes = Data((0..<1000).map { UInt8($0 % 251) })
        try large.setValue(bytes, forKey: "image")
        try large.setValue(bytes, forKey: "thumbnail")  // no external storage: always inline, no marker
        try context.save()

        #expect(try Self.column(store, small) == .blob(Data([0x01]) + Data("tiny".utf8)))
        let files = Self.files(folder)
        #expect(files.count == 1)
        let name = try #require(files.first)
        #expect(UUID(uuidString: name) != nil && name == name.uppercased())
        #expect(try Self.column(store, large) == .blob(Data([0x02]) + Data(name.utf8)))
        #expect(try store.connection.scalar("SELECT ZTHUMBNAIL FROM ZPHOTO WHERE Z_PK = ?", [.integer(large.objectID.primaryKey)]) == .blob(bytes))
        let external = ValueCoding.externalDataFolder(forStoreAt: folder.appendingPathComponent("Photos.sqlite"))
        #expect(try Data(contentsOf: external.appendingPathComponent(name)) == bytes)

        // Another coordinator, read-only, sees the bytes, not the markers.
        let reader = ManagedObjectContext(coordinator: try PersistentStoreCoordinator(
            model: try Self.model(), storeURL: folder.appendingPathComponent("Photos.sqlite")))
        var request = FetchRequest(entityName: "Photo")
        request.sortDescriptors = [FLSortDescriptor(key: "self")]
        let photos = try reader.fetch(request)
        #expect(photos.map { $0.value(forKey: "image") as? Data } == [Data("tiny".utf8), bytes])
    }

    @Test func replacedAndDeletedValuesLoseTheirFilesOnlyOnceTheSaveCommits() throws {
        let (folder, context, store, photo) = try Self.savedPhoto(byte: 7)
        defer { try? FileManager.default.removeItem(at: folder) }
        let first = Self.files(folder)
        #expect(first.count == 1)

        // A new large value: a new file, the old one removed.
        try photo.setValue(Data(repeating: 8, count: 200), forKey: "image")
        try context.save()
        let second = Self.files(folder)
        #expect(second.count == 1 && second != first)

        // Another attribute changes: the file stays.
        try photo.setValue("Sunset", forKey: "title")
        try context.save()
        #expect(Self.files(folder) == second)

        // Small again: inline, and the file goes.
        try photo.setValue(Data("small".utf8), forKey: "image")
        try context.save()
        #expect(Self.files(folder).isEmpty)
        #expect(try Self.column(store, photo) == .blob(Data([0x01]) + Data("small".utf8)))

        // Deleted with its object.
        try photo.setValue(Data(repeating: 9, count: 300), forKey: "image")
        try context.save()
        #expect(Self.files(folder).count == 1)
        context.delete(photo)
        try context.save()
        #expect(Self.files(folder).isEmpty)
    }

    @Test func aSaveThatFailsLeavesNoFileBehind() throws {
        let (folder, a, _, photo) = try Self.savedPhoto(byte: 1)
        defer { try? FileManager.default.removeItem(at: folder) }
        let kept = Self.files(folder)

        // Another coordinator changes the row: a's next save conflicts and rolls back.
        let b = ManagedObjectContext(coordinator: try PersistentStoreCoordinator(
            model: try Self.model(), storeURL: folder.appendingPathComponent("Photos.sqlite"), options: .init(readOnly: false)))
        let theirs = b.object(with: photo.objectID)
        try theirs.setValue("Theirs", forKey: "title")
        try b.save()
        try photo.setValue(Data(repeating: 2, count: 100), forKey: "image")
        #expect(throws: MergeConflictError.self) { try a.save() }
        #expect(Self.files(folder) == kept, "the new value's file is removed and the committed one kept")
    }

    @Test func anInMemoryStoreKeepsEveryValueInline() throws {
        let store = try SQLiteStore(inMemoryWith: try Self.model())
        let context = ManagedObjectContext(coordinator: PersistentStoreCoordinator(store: store))
        let photo = try context.insertObject(entityName: "Photo")
        let bytes = Data(repeating: 3, count: 300_000)
        try photo.setValue(bytes, forKey: "image")
        try context.save()
        #expect(try Self.column(store, photo) == .blob(Data([0x01]) + bytes))
    }

    /// A reader on the store in `folder`, read-only, recording the SQL log's messages.
    static func reader(_ folder: URL) throws -> (ManagedObjectContext, LogMessages) {
        let coordinator = try PersistentStoreCoordinator(model: try model(), storeURL: folder.appendingPathComponent("Photos.sqlite"))
        let messages = LogMessages()
        coordinator.store.connection.addTraceObserver { event in
            if case .message(let category, let text) = event { messages.append("\(category): \(text)") }
        }
        return (ManagedObjectContext(coordinator: coordinator), messages)
    }

    @Test func filesAreReadWhenTheValueIsAskedForAndAMissingOneCostsOnlyItsValue() throws {
        let (folder, context, _, photo) = try Self.savedPhoto(byte: 4)
        defer { try? FileManager.default.removeItem(at: folder) }
        try photo.setValue("Dunes", forKey: "title")
        try context.save()
        let name = try #require(Self.files(folder).first)
        let external = ValueCoding.externalDataFolder(forStoreAt: folder.appendingPathComponent("Photos.sqlite"))

        // Fetched while the file is there, read after it is gone: the fetch did not read it.
        let (reader, messages) = try Self.reader(folder)
        let fetched = try #require(try reader.fetch(FetchRequest(entityName: "Photo")).first)
        try FileManager.default.removeItem(at: external.appendingPathComponent(name))
        #expect(fetched.value(forKey: "title") as? String == "Dunes", "the row's other values are there")
        #expect(fetched.value(forKey: "image") == nil)
        #expect(messages.lines.contains { $0.hasPrefix("error: x-coredata://") && $0.contains(" image: ") && $0.contains(name) })

        // Such an object can still be deleted.
        let (writer, _) = try Self.open(folder)
        let doomed = writer.object(with: photo.objectID)
        writer.delete(doomed)
        try writer.save()
        let (after, _) = try Self.reader(folder)
        #expect(try after.fetch(FetchRequest(entityName: "Photo")).isEmpty)
    }

    @Test func aNameThatIsNotAUUIDIsNeverUsedAsAPath() throws {
        let (folder, context, store, photo) = try Self.savedPhoto(byte: 5)
        defer { try? FileManager.default.removeItem(at: folder) }
        _ = context
        let secret = folder.appendingPathComponent("secret.txt")
        try Data("secret".utf8).write(to: secret)
        try store.connection.execute("UPDATE ZPHOTO SET ZIMAGE = ? WHERE Z_PK = ?", [.blob(Data([0x02]) + Data("../../secret.txt".utf8)), .integer(photo.objectID.primaryKey)])
        let (reader, messages) = try Self.reader(folder)
        let fetched = try #require(try reader.fetch(FetchRequest(entityName: "Photo")).first)
        #expect(fetched.value(forKey: "image") == nil)
        #expect(messages.lines.contains { $0.contains("the name is not a UUID") })
        #expect(throws: PersistentStoreError.self) {
            _ = try ValueCoding.decodeExternalBinary(.blob(Data([0x02]) + Data("../../secret.txt".utf8)), storeURL: folder.appendingPathComponent("Photos.sqlite"))
        }
    }

    @Test func anUnreadValueWrittenBackKeepsItsFile() throws {
        let (folder, context, _, photo) = try Self.savedPhoto(byte: 6)
        defer { try? FileManager.default.removeItem(at: folder) }
        let kept = Self.files(folder)
        // Another coordinator changes the row; this context overwrites every column, the
        // image among them, which it never read.
        let (other, _) = try Self.open(folder)
        try other.object(with: photo.objectID).setValue("Theirs", forKey: "title")
        try other.save()
        context.refresh(photo, mergeChanges: false)
        let (mine, _) = try Self.open(folder)
        let object = mine.object(with: photo.objectID)
        _ = object.value(forKey: "title")
        try other.object(with: photo.objectID).setValue("Theirs again", forKey: "title")
        try other.save()
        mine.mergePolicy = .overwrite
        try object.setValue("Mine", forKey: "title")
        try mine.save()
        #expect(Self.files(folder) == kept)
        #expect(object.value(forKey: "image") as? Data == Data(repeating: 6, count: 100))
    }
}

/// LogMessages of a SQL log, collected.
final class LogMessages: @unchecked Sendable {
    private(set) var lines: [String] = []
    func append(_ line: String) { lines.append(line) }
}
