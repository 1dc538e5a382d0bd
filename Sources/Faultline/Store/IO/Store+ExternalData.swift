import FaultlineModel
import FaultlineSQL
import Foundation

/// The bytes of a Binary attribute that Core Data keeps in a file of their own (`0x02` + the
/// file's UUID in the column). The file is read when the value is asked for, not when the
/// row is fetched, as Core Data does: a fetch of many large values reads none of them, and a
/// missing file only costs its own value.
public struct ExternalBinaryDataReference: Hashable, Sendable, CustomStringConvertible {
    /// The file's name: a UUID in Core Data's stores.
    public let name: String
    /// The file, or nil when it cannot be named: an in-memory store, or a name that is not a
    /// UUID (which could point outside the folder).
    public let file: URL?

    /// A reference to `name` in the external data folder of the store at `storeURL`.
    public init(name: String, storeURL: URL?) {
        self.name = name
        if let storeURL, UUID(uuidString: name) != nil {
            file = ValueCoding.externalDataFolder(forStoreAt: storeURL).appendingPathComponent(name)
        } else {
            file = nil
        }
    }

    /// Reads the bytes.
    ///
    /// - Throws: ``PersistentStoreError`` naming the file (or the bad name) when it cannot be read.
    public func load() throws -> Data {
        guard let file else {
            throw PersistentStoreError(.cannotOpen, "external binary data \"\(name)\" cannot be read: " + (UUID(uuidString: name) == nil ? "the name is not a UUID" : "the store has no file"))
        }
        do {
            return try Data(contentsOf: file)
        } catch {
            throw PersistentStoreError(.cannotOpen, "cannot read external binary data: \(error.localizedDescription)", path: file.path)
        }
    }

    /// `<external data UUID>`.
    public var description: String { "<external data \(name)>" }
}

/// A file of external binary data that a save writes (see
/// ``SQLiteStore/encodeExternalBinary(_:writes:)``).
struct ExternalDataWrite {
    /// The file's name: an uppercase UUID.
    var name: String
    /// Its bytes.
    var data: Data
}

extension SQLiteStore {
    /// The column value of a Binary attribute that allows external storage, Core Data's
    /// way: NULL, `0x01` + the bytes when they are at most ``externalBinaryDataThreshold``
    /// long, else `0x02` + the name of a new file, which is added to `writes` (the save
    /// writes it inside its transaction; see ``writeExternalFiles(_:)``). A value still
    /// unread in its file is written back as the same reference, its name added to `kept`.
    func encodeExternalBinary(_ value: Any?, writes: inout [ExternalDataWrite], kept: inout Set<String>) -> SQLValue {
        if let reference = value as? ExternalBinaryDataReference {
            kept.insert(reference.name)
            return ValueCoding.encodeExternalBinaryReference(reference.name)
        }
        guard case .blob(let data) = ValueCoding.encode(value, as: .binaryData) else { return .null }
        guard url != nil, data.count > externalBinaryDataThreshold else { return ValueCoding.encodeExternalBinaryInline(data) }
        let name = UUID().uuidString
        writes.append(ExternalDataWrite(name: name, data: data))
        return ValueCoding.encodeExternalBinaryReference(name)
    }

    /// The external files that `columns` of a row name now: read inside a save's
    /// transaction, before the row is changed or deleted, so the files can be removed once
    /// the change is committed.
    func externalReferences(table: String, primaryKey: Int64, columns: [String]) throws -> [String] {
        let statement = try connection.cachedStatement("SELECT \(columns.joined(separator: ", ")) FROM \(table) WHERE Z_PK = ?")
        defer { statement.reset() }
        try statement.bind([.integer(primaryKey)])
        guard try statement.step() else { return [] }
        return columns.indices.compactMap { ValueCoding.externalReferenceName(statement.value(at: $0)) }
    }

    /// Writes the files of a save into ``ValueCoding/externalDataFolder(forStoreAt:)``,
    /// creating it when needed.
    ///
    /// - Throws: ``PersistentStoreError`` naming the file that could not be written.
    func writeExternalFiles(_ writes: [ExternalDataWrite]) throws {
        guard let url, !writes.isEmpty else { return }
        let folder = ValueCoding.externalDataFolder(forStoreAt: url)
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw PersistentStoreError(.cannotWrite, "cannot create the external data folder: \(error.localizedDescription)", path: folder.path)
        }
        for write in writes {
            let file = folder.appendingPathComponent(write.name)
            do {
                try write.data.write(to: file, options: .atomic)
            } catch {
                throw PersistentStoreError(.cannotWrite, "cannot write external binary data: \(error.localizedDescription)", path: file.path)
            }
        }
    }

    /// Removes external data files by name: those of a save that did not commit, or those
    /// that committed rows no longer name. A file already gone is not an error.
    func removeExternalFiles<S: Sequence<String>>(_ names: S) {
        guard let url else { return }
        let folder = ValueCoding.externalDataFolder(forStoreAt: url)
        for name in names {
            try? FileManager.default.removeItem(at: folder.appendingPathComponent(name))
        }
    }

    /// The columns of an entity's Binary attributes that allow external storage (inherited
    /// ones included), cached per entity.
    func externalBinaryColumns(for entity: EntityDescription) -> [String: String] {
        if let cached = externalColumnsCache[entity.name] { return cached }
        var columns: [String: String] = [:]
        if let entityMapping = mapping.entity(entity.name) {
            for attribute in entity.attributes where attribute.usesExternalBinaryStorage {
                if let column = entityMapping.attributeColumns[attribute.name] { columns[attribute.name] = column }
            }
        }
        externalColumnsCache[entity.name] = columns
        return columns
    }
}
