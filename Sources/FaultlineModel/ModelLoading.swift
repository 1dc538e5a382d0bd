import Foundation

extension ManagedObjectModel {
    /// Loads a model from a file, choosing the reader by what the path is.
    ///
    /// - `Foo.xcdatamodeld`: the current version (from `.xccurrentversion`), or `version`
    ///   (`"Foo 2"`, with or without `.xcdatamodel`).
    /// - `Foo.xcdatamodel` (a folder) or its `contents` file: Xcode 4+ XML.
    /// - `Foo.momd`: the compiled version named by `VersionInfo.plist`
    ///   (`NSManagedObjectModel_CurrentVersionName`), or `version`; `.omo` files are ignored.
    /// - `Foo.mom`: a compiled model (binary `NSKeyedArchiver` archive).
    ///
    /// - Throws: ``ModelError`` naming the file (and for XML the line) when the path cannot
    ///   be read, is in an unsupported format, or is malformed.
    public convenience init(contentsOf url: URL, version: String? = nil) throws {
        let loaded = try ModelFileLoader.load(url: url, version: version)
        try self.init(
            entities: loaded.entities,
            fetchRequestTemplates: Array(loaded.fetchRequestTemplates.values).sorted { $0.name < $1.name },
            configurations: loaded.configurations,
            versionIdentifiers: loaded.versionIdentifiers,
            sourceDescription: loaded.sourceDescription
        )
    }
}

extension ManagedObjectModel {
    /// Loads the `contents` XML of an `.xcdatamodel` from memory, as
    /// ``init(contentsOf:version:)`` loads the file; for the fuzz targets in `Fuzz/`.
    ///
    /// - Throws: ``ModelError`` naming `file` (and the line) when the XML is malformed.
    @_spi(Fuzzing) public static func loadingXMLContents(_ data: Data, file: String = "contents") throws -> ManagedObjectModel {
        try XMLModelLoader.load(data: data, file: file)
    }

    /// Parses bytes as a binary property list when they start like one (`bplist00`), and
    /// drops the result; for the fuzz targets in `Fuzz/` (the reader itself is not API).
    @_spi(Fuzzing) public static func parsingBinaryPropertyList(_ data: Data) {
        if BinaryPropertyList.isBinary(data) { _ = try? BinaryPropertyList.parse(data) }
    }
}

/// Picks the reader for a model path.
enum ModelFileLoader {
    static func load(url: URL, version: String?) throws -> ManagedObjectModel {
        let path = url.path
        let fm = FileManager.default
        var isDirectory: ObjCBool = false
        guard fm.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw ModelError(.unreadable, "no such file or folder", file: path)
        }
        let ext = url.pathExtension.lowercased()
        if isDirectory.boolValue {
            switch ext {
            case "xcdatamodeld":
                return try loadBundle(url: url, version: version)
            case "xcdatamodel":
                return try loadXcdatamodel(url: url)
            case "momd":
                return try loadMomd(url: url, version: version)
            default:
                if fm.fileExists(atPath: url.appendingPathComponent("VersionInfo.plist").path) {
                    return try loadMomd(url: url, version: version)
                }
                if fm.fileExists(atPath: url.appendingPathComponent("contents").path) {
                    return try loadXcdatamodel(url: url)
                }
                throw ModelError(.unsupportedFormat, "not a model: expected an .xcdatamodeld, .xcdatamodel, .momd or .mom", file: path)
            }
        }
        if url.lastPathComponent == "contents" {
            return try loadXML(url: url)
        }
        if url.lastPathComponent == "elements" || url.lastPathComponent == "layout" {
            return try loadXcdatamodel(url: url.deletingLastPathComponent())
        }
        if ext == "mom" {
            return try loadMom(url: url)
        }
        if ext == "omo" {
            throw ModelError(.unsupportedFormat, "an .omo (optimized model) is not read; load the .mom next to it or the .momd folder", file: path)
        }
        throw ModelError(.unsupportedFormat, "not a model: expected an .xcdatamodeld, .xcdatamodel, .momd or .mom", file: path)
    }

    static func readFile(_ url: URL) throws -> Data {
        try RegularFile.requireModelFile(url)
        do {
            return try Data(contentsOf: url)
        } catch {
            throw ModelError(.unreadable, "cannot read: \(error.localizedDescription)", file: url.path)
        }
    }

    /// A compiled model: a binary keyed archive.
    static func loadMom(url: URL) throws -> ManagedObjectModel {
        let data = try readFile(url)
        guard BinaryPropertyList.isBinary(data) else {
            throw ModelError(.malformed, "not a compiled model (expected a binary property list)", file: url.path)
        }
        return try ManagedObjectModel(compiledModelData: data, source: url.path)
    }

    /// What a `.momd` folder's `VersionInfo.plist` says.
    struct MomdInfo {
        /// Version names (without `.mom`), sorted.
        var versions: [String]
        /// `NSManagedObjectModel_CurrentVersionName`, if present.
        var current: String?
        /// `NSManagedObjectModel_VersionHashes`: version → entity → hash.
        var versionHashes: [String: [String: Data]]
    }

    static func momdInfo(url: URL) throws -> MomdInfo {
        let items: [String]
        do {
            items = try FileManager.default.contentsOfDirectory(atPath: url.path)
        } catch {
            throw ModelError(.unreadable, "cannot list: \(error.localizedDescription)", file: url.path)
        }
        var info = MomdInfo(versions: items.filter { $0.hasSuffix(".mom") }.map { String($0.dropLast(4)) }.sorted(), current: nil, versionHashes: [:])
        let plistURL = url.appendingPathComponent("VersionInfo.plist")
        if FileManager.default.fileExists(atPath: plistURL.path) {
            let data = try readFile(plistURL)
            let plist: PropertyListValue
            do {
                plist = try BinaryPropertyList.parse(data)
            } catch {
                throw ModelError(.malformed, "VersionInfo.plist is not a property list", file: plistURL.path)
            }
            guard let dict = plist.dictionaryValue else {
                throw ModelError(.malformed, "VersionInfo.plist is not a dictionary", file: plistURL.path)
            }
            info.current = dict["NSManagedObjectModel_CurrentVersionName"]?.stringValue
            for (version, value) in dict["NSManagedObjectModel_VersionHashes"]?.dictionaryValue ?? [:] {
                var hashes: [String: Data] = [:]
                for (entity, hash) in value.dictionaryValue ?? [:] {
                    if let d = hash.dataValue { hashes[entity] = d }
                }
                info.versionHashes[version] = hashes
            }
        }
        return info
    }

    /// A `.momd` folder: the current version's `.mom` (an `.omo` next to it is ignored).
    static func loadMomd(url: URL, version: String?) throws -> ManagedObjectModel {
        let info = try momdInfo(url: url)
        guard !info.versions.isEmpty else {
            throw ModelError(.unreadable, "no .mom versions inside", file: url.path)
        }
        var wanted = version ?? info.current ?? (info.versions.count == 1 ? info.versions[0] : "")
        if wanted.hasSuffix(".mom") { wanted = String(wanted.dropLast(4)) }
        guard info.versions.contains(wanted) else {
            let what = wanted.isEmpty ? "no current version named in VersionInfo.plist" : "no version named \"\(wanted)\""
            throw ModelError(
                .unreadable,
                "\(what); versions: \(info.versions.map { "\"\($0)\"" }.joined(separator: ", "))",
                file: url.path)
        }
        return try loadMom(url: url.appendingPathComponent(wanted + ".mom"))
    }

    static func loadXcdatamodel(url: URL) throws -> ManagedObjectModel {
        let contents = url.appendingPathComponent("contents")
        if FileManager.default.fileExists(atPath: contents.path) {
            return try loadXML(url: contents)
        }
        if FileManager.default.fileExists(atPath: url.appendingPathComponent("elements").path) {
            throw ModelError(
                .unsupportedFormat,
                "this is the pre-Xcode 4 model format (an 'elements' archive); open and save it in a current Xcode, or pass the compiled .mom/.momd",
                file: url.path)
        }
        throw ModelError(.unreadable, "no 'contents' file in this .xcdatamodel", file: url.path)
    }

    static func loadXML(url: URL) throws -> ManagedObjectModel {
        try XMLModelLoader.load(data: try readFile(url), file: url.path)
    }

    /// The version names of an `.xcdatamodeld` bundle, sorted, and the current one.
    static func bundleVersions(url: URL) throws -> (all: [String], current: String?) {
        let items: [String]
        do {
            items = try FileManager.default.contentsOfDirectory(atPath: url.path)
        } catch {
            throw ModelError(.unreadable, "cannot list: \(error.localizedDescription)", file: url.path)
        }
        let versions = items.filter { $0.hasSuffix(".xcdatamodel") }.map { String($0.dropLast(".xcdatamodel".count)) }.sorted()
        var current: String?
        let marker = url.appendingPathComponent(".xccurrentversion")
        if FileManager.default.fileExists(atPath: marker.path) {
            let data = try readFile(marker)
            guard
                let plist = try? PropertyListSerialization.propertyList(from: data, format: nil),
                let dict = plist as? [String: Any],
                let name = dict["_XCCurrentVersionName"] as? String
            else {
                throw ModelError(.malformed, "not a property list with _XCCurrentVersionName", file: marker.path)
            }
            current = name.hasSuffix(".xcdatamodel") ? String(name.dropLast(".xcdatamodel".count)) : name
        }
        return (versions, current ?? (versions.count == 1 ? versions.first : nil))
    }

    static func loadBundle(url: URL, version: String?) throws -> ManagedObjectModel {
        let (versions, current) = try bundleVersions(url: url)
        guard !versions.isEmpty else {
            throw ModelError(.unreadable, "no .xcdatamodel versions inside", file: url.path)
        }
        var wanted = version ?? current ?? versions[versions.count - 1]
        if wanted.hasSuffix(".xcdatamodel") { wanted = String(wanted.dropLast(".xcdatamodel".count)) }
        guard versions.contains(wanted) else {
            throw ModelError(
                .unreadable,
                "no version named \"\(wanted)\"; versions: \(versions.map { "\"\($0)\"" }.joined(separator: ", "))",
                file: url.path)
        }
        return try loadXcdatamodel(url: url.appendingPathComponent(wanted + ".xcdatamodel"))
    }
}
