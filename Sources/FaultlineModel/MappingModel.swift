import Foundation

/// A Core Data mapping model (`NSMappingModel`): how to turn a store made with one model
/// version into a store of another, entity mapping by entity mapping, for a heavyweight
/// migration (see `Documentation/Migration.md`, "Mapping models").
///
/// Loaded from Xcode's source form (an `.xcmappingmodel` folder holding `xcmapping.xml`) or
/// from the compiled form (`.cdm`, a keyed archive of `NSMappingModel`). Expressions are kept
/// as NSExpression format text (`$source.name`, `FUNCTION($manager, "…", "Mapping",
/// $source.items)`): this module does not depend on the predicate engine; the migrator in
/// `Faultline` parses and evaluates them.
///
/// ```swift
/// let mapping = try MappingModel(contentsOf: URL(fileURLWithPath: "Moody 4-Moody 5.xcmappingmodel"),
///                                sourceModel: v4, destinationModel: v5)
/// mapping.entityMappings.map(\.name)   // ["MoodToMood", "CountryToCountry"]
/// ```
public struct MappingModel: Sendable, Hashable {
    /// The entity mappings, in the order they run.
    public var entityMappings: [EntityMapping]
    /// Where the mapping model was read from (a path), for messages.
    public var sourceDescription: String?
    /// The source model's path as Xcode recorded it in `xcmapping.xml` (nil for `.cdm`).
    public var recordedSourceModelPath: String?
    /// The destination model's path as Xcode recorded it in `xcmapping.xml` (nil for `.cdm`).
    public var recordedDestinationModelPath: String?

    /// A mapping model made in code.
    public init(entityMappings: [EntityMapping], sourceDescription: String? = nil) {
        self.entityMappings = entityMappings
        self.sourceDescription = sourceDescription
    }

    /// The entity mapping with `name` (`NSMappingModel.entityMappingsByName`).
    public func entityMapping(named name: String) -> EntityMapping? {
        entityMappings.first { $0.name == name }
    }

    /// The names of the custom migration policy classes the mappings name (other than the
    /// default `NSEntityMigrationPolicy`), by entity mapping name: code Faultline cannot run.
    public var customPolicyClassNames: [String: String] {
        var out: [String: String] = [:]
        for mapping in entityMappings {
            if let name = mapping.customPolicyClassName { out[mapping.name] = name }
        }
        return out
    }
}

extension MappingModel {
    /// How one entity's instances map (`NSEntityMapping`).
    public struct EntityMapping: Sendable, Hashable {
        /// `NSEntityMappingType`, with Apple's raw values.
        public enum MappingType: Int, Sendable, Hashable, CustomStringConvertible {
            /// `NSUndefinedEntityMappingType`.
            case undefined = 0
            /// `NSCustomEntityMappingType`: the migration policy does the work.
            case custom = 1
            /// `NSAddEntityMappingType`: a new entity; no source instances.
            case add = 2
            /// `NSRemoveEntityMappingType`: the source entity has no destination.
            case remove = 3
            /// `NSCopyEntityMappingType`: the entity did not change.
            case copy = 4
            /// `NSTransformEntityMappingType`: the entity changed; values go through the expressions.
            case transform = 5

            public var description: String {
                switch self {
                case .undefined: "undefined"
                case .custom: "custom"
                case .add: "add"
                case .remove: "remove"
                case .copy: "copy"
                case .transform: "transform"
                }
            }
        }

        /// The mapping's name (`ContinentToContinent`), which relationship expressions refer to.
        public var name: String
        /// The mapping type.
        public var mappingType: MappingType
        /// The source entity's name (nil for an add mapping).
        public var sourceEntityName: String?
        /// The source entity's version hash, when recorded (compiled models record it).
        public var sourceEntityVersionHash: Data?
        /// The destination entity's name (nil for a remove mapping).
        public var destinationEntityName: String?
        /// The destination entity's version hash, when recorded.
        public var destinationEntityVersionHash: Data?
        /// The expression giving the source instances, as format text; usually
        /// `FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", "X",
        /// "TRUEPREDICATE"), $manager.sourceContext, NO)`.
        public var sourceExpression: String?
        /// The migration policy class (`entityMigrationPolicyClassName`), nil when none is set.
        public var entityMigrationPolicyClassName: String?
        /// One mapping per destination attribute.
        public var attributeMappings: [PropertyMapping]
        /// One mapping per destination relationship.
        public var relationshipMappings: [PropertyMapping]
        /// The mapping's user info.
        public var userInfo: [String: String]

        /// A mapping made in code.
        public init(
            name: String, mappingType: MappingType, sourceEntityName: String?, destinationEntityName: String?,
            sourceEntityVersionHash: Data? = nil, destinationEntityVersionHash: Data? = nil,
            sourceExpression: String? = nil, entityMigrationPolicyClassName: String? = nil,
            attributeMappings: [PropertyMapping] = [], relationshipMappings: [PropertyMapping] = [], userInfo: [String: String] = [:]
        ) {
            self.name = name
            self.mappingType = mappingType
            self.sourceEntityName = sourceEntityName
            self.destinationEntityName = destinationEntityName
            self.sourceEntityVersionHash = sourceEntityVersionHash
            self.destinationEntityVersionHash = destinationEntityVersionHash
            self.sourceExpression = sourceExpression
            self.entityMigrationPolicyClassName = entityMigrationPolicyClassName
            self.attributeMappings = attributeMappings
            self.relationshipMappings = relationshipMappings
            self.userInfo = userInfo
        }

        /// The format text of the source expression Core Data uses for all instances of an entity.
        public static func defaultSourceExpression(entityName: String, predicate: String = "TRUEPREDICATE") -> String {
            "FETCH(FUNCTION($manager, \"fetchRequestForSourceEntityNamed:predicateString:\", \(quoted(entityName)), \(quoted(predicate))), $manager.sourceContext, NO)"
        }

        /// The policy class when it is custom code: set, and not `NSEntityMigrationPolicy` itself.
        public var customPolicyClassName: String? {
            guard let name = entityMigrationPolicyClassName?.trimmingCharacters(in: .whitespaces), !name.isEmpty,
                name != "NSEntityMigrationPolicy"
            else { return nil }
            return name
        }

        /// An attribute mapping by destination attribute name.
        public func attributeMapping(named name: String) -> PropertyMapping? { attributeMappings.first { $0.name == name } }
        /// A relationship mapping by destination relationship name.
        public func relationshipMapping(named name: String) -> PropertyMapping? { relationshipMappings.first { $0.name == name } }
    }

    /// How one destination property gets its value (`NSPropertyMapping`).
    public struct PropertyMapping: Sendable, Hashable {
        /// The destination property's name.
        public var name: String
        /// The value expression as format text (`$source.firstName`); nil leaves the property
        /// at its default value.
        public var valueExpression: String?
        /// The mapping's user info.
        public var userInfo: [String: String]

        /// A property mapping.
        public init(name: String, valueExpression: String?, userInfo: [String: String] = [:]) {
            self.name = name
            self.valueExpression = valueExpression
            self.userInfo = userInfo
        }
    }

}

/// Quotes a string for NSPredicate format text.
func quoted(_ s: String) -> String {
    "\"" + s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
}

extension MappingModel {
    /// Loads a mapping model, choosing the reader by what the path is:
    ///
    /// - `Foo.xcmappingmodel` (a folder) or its `xcmapping.xml`: Xcode's source form. It
    ///   records only what the author set, so the source and destination models are needed to
    ///   work out mapping types, version hashes and the expressions Xcode generates (`$source.x`
    ///   for an attribute the source entity has). When they are not given, the models at the
    ///   paths the file records are looked for in the folders above the mapping model.
    /// - `Foo.cdm`: a compiled mapping model (binary keyed archive); the models are not needed
    ///   (when given, the recorded version hashes are checked against them).
    ///
    /// - Throws: ``ModelError`` naming the file, and the entity mapping and property when one
    ///   is at fault.
    public init(contentsOf url: URL, sourceModel: ManagedObjectModel? = nil, destinationModel: ManagedObjectModel? = nil) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw ModelError(.unreadable, "no such file or folder", file: url.path)
        }
        if isDirectory.boolValue {
            let xml = url.appendingPathComponent("xcmapping.xml")
            guard FileManager.default.fileExists(atPath: xml.path) else {
                throw ModelError(.unsupportedFormat, "not a mapping model: the folder has no xcmapping.xml", file: url.path)
            }
            self = try MappingModelXMLLoader.load(url: xml, sourceModel: sourceModel, destinationModel: destinationModel)
            return
        }
        if url.lastPathComponent == "xcmapping.xml" || url.pathExtension.lowercased() == "xml" {
            self = try MappingModelXMLLoader.load(url: url, sourceModel: sourceModel, destinationModel: destinationModel)
            return
        }
        let data = try ModelFileLoader.readFile(url)
        self = try MappingModelArchiveLoader.load(data: data, file: url.path)
        if let sourceModel, let destinationModel {
            try checkVersionHashes(sourceModel: sourceModel, destinationModel: destinationModel)
        }
    }

    /// Loads a compiled mapping model (`.cdm` contents) from memory.
    ///
    /// - Throws: ``ModelError`` (`.malformed`) naming `source`.
    public init(compiledMappingData data: Data, source: String = "compiled mapping model") throws {
        self = try MappingModelArchiveLoader.load(data: data, file: source)
    }

    /// Loads `xcmapping.xml` from memory with the two models it maps between.
    ///
    /// - Throws: ``ModelError`` naming `file`.
    public init(xcmappingXML data: Data, file: String = "xcmapping.xml", sourceModel: ManagedObjectModel, destinationModel: ManagedObjectModel) throws {
        self = try MappingModelXMLLoader.load(data: data, file: file, folder: nil, sourceModel: sourceModel, destinationModel: destinationModel)
    }

    /// Checks every recorded version hash against the models: a mapping model made for other
    /// versions is refused (`NSMappingModel(from:forSourceModel:destinationModel:)` only
    /// returns a mapping model whose hashes match).
    ///
    /// - Throws: ``ModelError`` (`.invalidModel`) naming the entity mapping and entity.
    public func checkVersionHashes(sourceModel: ManagedObjectModel, destinationModel: ManagedObjectModel) throws {
        for mapping in entityMappings {
            if let name = mapping.sourceEntityName, let hash = mapping.sourceEntityVersionHash,
                sourceModel.entityVersionHashesByName[name] != hash
            {
                throw ModelError(
                    .invalidModel,
                    "entity mapping \(mapping.name): the source model's entity \(name) is not the version the mapping model was made for (its version hash differs)",
                    file: sourceDescription, entity: name)
            }
            if let name = mapping.destinationEntityName, let hash = mapping.destinationEntityVersionHash,
                destinationModel.entityVersionHashesByName[name] != hash
            {
                throw ModelError(
                    .invalidModel,
                    "entity mapping \(mapping.name): the destination model's entity \(name) is not the version the mapping model was made for (its version hash differs)",
                    file: sourceDescription, entity: name)
            }
        }
    }
}
