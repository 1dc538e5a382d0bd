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

    @Test func aMissingExternalFileIsAnErrorNamingIt() throws {
        let (folder, _, _, _) = try Self.savedPhoto(byte: 4)
        defer { try? FileManager.default.removeItem(at: folder) }
        let name = try #require(Self.files(folder).first)
        let external = ValueCoding.externalDataFolder(forStoreAt: folder.appendingPathComponent("Photos.sqlite"))
        try FileManager.default.removeItem(at: external.appendingPathComponent(name))
        let reader = ManagedObjectContext(coordinator: try PersistentStoreCoordinator(
            model: try Self.model(), storeURL: folder.appendingPathComponent("Photos.sqlite")))
        do {
            _ = try reader.fetch(FetchRequest(entityName: "Photo"))
            Issue.record("a missing external file was not reported")
        } catch let error as StoreError {
            #expect(error.description.contains(name))
        }
    }
}
