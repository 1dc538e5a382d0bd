import Foundation

extension ManagedObjectModel {
    /// Whether a store written with `storeHashes` (its metadata's `NSStoreModelVersionHashes`)
    /// can be opened with this model without migration: the entities of the configuration
    /// (all entities when `configuration` is nil or unknown) and the store's entities are
    /// the same set, with byte-identical version hashes.
    ///
    /// This is Core Data's compatibility check; a mismatch is its error 134100
    /// ("The model used to open the store is incompatible with the one used to create the store").
    public func isCompatible(withStoreVersionHashes storeHashes: [String: Data], configuration: String? = nil) -> Bool {
        let names: [String]
        if let configuration, let members = configurations[configuration] {
            names = members
        } else {
            names = entities.map(\.name)
        }
        guard Set(names) == Set(storeHashes.keys) else { return false }
        return names.allSatisfy { entityVersionHashesByName[$0] == storeHashes[$0] }
    }

    /// The entities whose version hash differs from a store's (or that only one side has),
    /// sorted by name; empty when ``isCompatible(withStoreVersionHashes:configuration:)``.
    public func entitiesDiffering(fromStoreVersionHashes storeHashes: [String: Data]) -> [String] {
        let all = Set(entityVersionHashesByName.keys).union(storeHashes.keys)
        return all.filter { entityVersionHashesByName[$0] != storeHashes[$0] }.sorted()
    }

    /// The entity version hashes Apple's `momc` recorded in a `.momd` folder's
    /// `VersionInfo.plist` (`NSManagedObjectModel_VersionHashes`): version name → entity
    /// name → 32-byte hash. Lets a caller find which version matches a store without
    /// loading every `.mom`.
    ///
    /// - Throws: ``ModelError`` when the folder or its plist cannot be read.
    public static func recordedVersionHashes(inMomd url: URL) throws -> [String: [String: Data]] {
        try ModelFileLoader.momdInfo(url: url).versionHashes
    }
}
