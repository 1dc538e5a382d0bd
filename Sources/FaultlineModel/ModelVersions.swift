import Foundation

/// One version of a versioned model (an `.xcdatamodel` in an `.xcdatamodeld`, a `.mom` in a
/// `.momd`), with the entity version hashes a store made by it records.
///
/// ```swift
/// let versions = try ManagedObjectModel.versions(at: URL(fileURLWithPath: "Moody.xcdatamodeld"))
/// if let match = ManagedObjectModel.matchVersion(storeVersionHashes: hashes, in: versions), match.isExact {
///     print("store made by version `\(match.version.name)` (of \(match.version.count))")
/// }
/// ```
public struct ModelVersion: Sendable, Hashable {
    /// The version name (`Moody 3`), without `.xcdatamodel` / `.mom`.
    public let name: String
    /// The 1-based position in version order (`Moody`, `Moody 2`, …, `Moody 10`).
    public let position: Int
    /// How many versions the model has.
    public let count: Int
    /// Whether this is the current version (`.xccurrentversion`, or the `.momd`'s
    /// `NSManagedObjectModel_CurrentVersionName`).
    public let isCurrent: Bool
    /// The model file or bundle the version is in.
    public let url: URL
    /// Every entity's version hash, by entity name.
    public let entityVersionHashes: [String: Data]

    /// Creates a version.
    public init(name: String, position: Int, count: Int, isCurrent: Bool, url: URL, entityVersionHashes: [String: Data]) {
        self.name = name
        self.position = position
        self.count = count
        self.isCurrent = isCurrent
        self.url = url
        self.entityVersionHashes = entityVersionHashes
    }

    /// Loads the model of this version.
    ///
    /// - Throws: ``ModelError`` when the file cannot be read.
    public func loadModel() throws -> ManagedObjectModel {
        try ManagedObjectModel(contentsOf: url, version: count > 1 || isBundle ? name : nil)
    }

    private var isBundle: Bool { ["xcdatamodeld", "momd"].contains(url.pathExtension.lowercased()) }
}

/// Which version of a model made a store: the version whose entity hashes equal the
/// store's `NSStoreModelVersionHashes`, or else the nearest one.
public struct ModelVersionMatch: Sendable, Hashable {
    /// How one entity differs between the store and the version.
    public struct Difference: Sendable, Hashable, CustomStringConvertible {
        /// The entity name.
        public let entity: String
        /// The store's hash for it (nil: the store has no such entity).
        public let storeHash: Data?
        /// The version's hash for it (nil: the version has no such entity).
        public let modelHash: Data?

        /// `Note (changed)`, `Tag (only in the store)`, `Folder (only in the model)`.
        public var description: String {
            switch (storeHash, modelHash) {
            case (_?, nil): "\(entity) (only in the store)"
            case (nil, _?): "\(entity) (only in the model)"
            default: "\(entity) (changed)"
            }
        }
    }

    /// The matching (or nearest) version.
    public let version: ModelVersion
    /// Whether every entity hash is equal and both sides have the same entities.
    public var isExact: Bool { differences.isEmpty }
    /// The entities that differ, sorted by name; empty for an exact match.
    public let differences: [Difference]

    /// Creates a match.
    public init(version: ModelVersion, differences: [Difference]) {
        self.version = version
        self.differences = differences
    }
}

extension ManagedObjectModel {
    /// The versions of a model, in version order: every `.xcdatamodel` of an `.xcdatamodeld`,
    /// every `.mom` of a `.momd` (hashes from `VersionInfo.plist` when `momc` recorded them,
    /// else computed from the `.mom`), or the one version of any other model file.
    ///
    /// Version order is by name with a trailing number compared as a number (Xcode names
    /// versions `Model`, `Model 2`, …, `Model 10`).
    ///
    /// - Throws: ``ModelError`` naming the file that cannot be read.
    public static func versions(at url: URL) throws -> [ModelVersion] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw ModelError(.unreadable, "no such file or folder", file: url.path)
        }
        let ext = url.pathExtension.lowercased()
        var names: [String]
        var current: String?
        var hashes: [String: [String: Data]] = [:]
        if isDirectory.boolValue && ext == "xcdatamodeld" {
            (names, current) = try ModelFileLoader.bundleVersions(url: url)
            for name in names {
                hashes[name] = try ModelFileLoader.loadBundle(url: url, version: name).entityVersionHashesByName
            }
        } else if isDirectory.boolValue && (ext == "momd" || FileManager.default.fileExists(atPath: url.appendingPathComponent("VersionInfo.plist").path)) {
            let info = try ModelFileLoader.momdInfo(url: url)
            names = info.versions
            current = info.current ?? (names.count == 1 ? names.first : nil)
            for name in names {
                if let recorded = info.versionHashes[name] ?? info.versionHashes[name + ".mom"] {
                    hashes[name] = recorded
                } else {
                    hashes[name] = try ModelFileLoader.loadMom(url: url.appendingPathComponent(name + ".mom")).entityVersionHashesByName
                }
            }
        } else {
            let model = try ManagedObjectModel(contentsOf: url)
            var named = url
            if named.lastPathComponent == "contents" { named.deleteLastPathComponent() }
            let name = named.deletingPathExtension().lastPathComponent
            return [ModelVersion(name: name, position: 1, count: 1, isCurrent: true, url: url, entityVersionHashes: model.entityVersionHashesByName)]
        }
        guard !names.isEmpty else { throw ModelError(.unreadable, "no model versions inside", file: url.path) }
        names.sort(by: versionOrder)
        return names.enumerated().map { i, name in
            ModelVersion(name: name, position: i + 1, count: names.count, isCurrent: name == current, url: url, entityVersionHashes: hashes[name] ?? [:])
        }
    }

    /// The version that made a store (its entity hashes equal `storeVersionHashes`), or
    /// else the nearest version: the fewest differing entities, the later version on a tie.
    /// Nil only when `versions` is empty.
    public static func matchVersion(storeVersionHashes: [String: Data], in versions: [ModelVersion]) -> ModelVersionMatch? {
        var best: ModelVersionMatch?
        for version in versions {
            let names = Set(version.entityVersionHashes.keys).union(storeVersionHashes.keys)
            let differences = names.filter { version.entityVersionHashes[$0] != storeVersionHashes[$0] }.sorted().map {
                ModelVersionMatch.Difference(entity: $0, storeHash: storeVersionHashes[$0], modelHash: version.entityVersionHashes[$0])
            }
            if let b = best, b.differences.count < differences.count { continue }
            best = ModelVersionMatch(version: version, differences: differences)
        }
        return best
    }

    /// Xcode's version order: by name, a trailing ` N` compared as a number (no number = 1).
    static func versionOrder(_ a: String, _ b: String) -> Bool {
        func split(_ s: String) -> (String, Int) {
            let digits = s.reversed().prefix { $0.isASCII && $0.isNumber }
            guard !digits.isEmpty, digits.count < 10, digits.count < s.count else { return (s, 1) }
            let base = String(s.dropLast(digits.count))
            let trimmed = base.hasSuffix(" ") ? String(base.dropLast()) : base
            return (trimmed, Int(String(digits.reversed())) ?? 1)
        }
        let (ba, na) = split(a), (bb, nb) = split(b)
        if ba != bb { return ba < bb }
        if na != nb { return na < nb }
        return a < b
    }
}
