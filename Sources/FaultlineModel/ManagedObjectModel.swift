import Foundation

/// A managed object model: the entities of an object graph and how they relate.
///
/// A model is immutable once made. Make one from Swift code, or load one with
/// ``ManagedObjectModel/init(contentsOf:version:)`` from an `.xcdatamodeld`, an
/// `.xcdatamodel`, or a compiled model.
///
/// ```swift
/// let model = try ManagedObjectModel(contentsOf: URL(fileURLWithPath: "Inventory.xcdatamodeld"))
/// print(model.entities.map(\.name))  // ["Asset", "Inventory", "Location"]
/// ```
public final class ManagedObjectModel: Sendable {
    /// The entities, sorted by name, with inheritance resolved.
    public let entities: [EntityDescription]
    /// The entities by name.
    public let entitiesByName: [String: EntityDescription]
    /// Fetch request templates, by name.
    public let fetchRequestTemplates: [String: FetchRequestTemplate]
    /// Configurations: name → names of member entities.
    public let configurations: [String: [String]]
    /// The model's version identifiers (Xcode's `userDefinedModelVersionIdentifier`).
    public let versionIdentifiers: [String]
    /// Where the model was loaded from, for messages; nil for a model built in code.
    public let sourceDescription: String?
    /// Core Data's version hash of every entity, by entity name: what a store's metadata
    /// records as `NSStoreModelVersionHashes`, and a `.momd`'s `VersionInfo.plist` as
    /// `NSManagedObjectModel_VersionHashes`.
    public let entityVersionHashesByName: [String: Data]
    /// A 32-byte hash of the whole model: SHA-256 over the entity version hashes, entities
    /// sorted by name. Equal for two models exactly when every entity hash is equal; it is
    /// the value Core Data stores (base64) as `NSStoreModelVersionChecksumKey` (see
    /// ``versionChecksum``).
    public let versionHash: Data

    /// Creates a model from entities with their declared properties, resolving inheritance.
    ///
    /// - Throws: ``ModelError`` when a parent or destination entity does not exist, two
    ///   entities share a name, inheritance is cyclic, or an inverse does not point back.
    public init(
        entities: [EntityDescription],
        fetchRequestTemplates: [FetchRequestTemplate] = [],
        configurations: [String: [String]] = [:],
        versionIdentifiers: [String] = [],
        sourceDescription: String? = nil
    ) throws {
        var byName: [String: EntityDescription] = [:]
        var byTableName: [String: String] = [:]
        for entity in entities {
            guard byName[entity.name] == nil else {
                throw ModelError(.invalidModel, "entity \(entity.name) is declared twice", file: sourceDescription, entity: entity.name)
            }
            // Names become SQL identifiers (ZRECIPE, ZNAME, Z_1TAGS…): only the letters, digits
            // and underscores Xcode allows, so that no name can change the SQL around it.
            try Self.checkIdentifier(entity.name, "entity", entity: entity.name, file: sourceDescription)
            for property in entity.declaredAttributes.map(\.name) + entity.declaredRelationships.map(\.name) + entity.declaredFetchedProperties.map(\.name) {
                try Self.checkIdentifier(property, "property \(entity.name).\(property)", entity: entity.name, file: sourceDescription)
            }
            for index in entity.fetchIndexes {
                try Self.checkIdentifier(index.name, "fetch index \(entity.name).\(index.name)", entity: entity.name, file: sourceDescription)
            }
            // Tables are named by the upper-cased entity name: two names that differ only in
            // case would share one.
            if let other = byTableName[entity.name.uppercased()] {
                throw ModelError(.invalidModel, "entities \(other) and \(entity.name) differ only in case, so their tables would have one name", file: sourceDescription, entity: entity.name)
            }
            byTableName[entity.name.uppercased()] = entity.name
            byName[entity.name] = entity
        }
        // Parents exist; no cycles; chains no deeper than the limit (walks over them, and
        // each entity's inherited properties, grow with the depth).
        var children: [String: [String]] = [:]
        for entity in entities {
            var seen: Set<String> = [entity.name]
            var parent = entity.superentityName
            while let p = parent {
                guard let parentEntity = byName[p] else {
                    throw ModelError(.invalidModel, "entity \(entity.name): parent entity \(p) does not exist", file: sourceDescription, entity: entity.name)
                }
                guard seen.insert(p).inserted else {
                    throw ModelError(.invalidModel, "entity \(entity.name): inheritance cycle through \(p)", file: sourceDescription, entity: entity.name)
                }
                guard seen.count <= Self.maximumInheritanceDepth else {
                    throw ModelError(
                        .invalidModel, "entity \(entity.name): more than \(Self.maximumInheritanceDepth) levels of parent entities",
                        file: sourceDescription, entity: entity.name)
                }
                parent = parentEntity.superentityName
            }
            if let p = entity.superentityName { children[p, default: []].append(entity.name) }
        }
        func chain(_ name: String) -> [EntityDescription] {
            var result: [EntityDescription] = []
            var current = byName[name]
            while let c = current {
                result.insert(c, at: 0)
                current = c.superentityName.flatMap { byName[$0] }
            }
            return result
        }
        var resolved: [String: EntityDescription] = [:]
        for entity in entities {
            var copy = entity
            var attributes: [String: AttributeDescription] = [:]
            var relationships: [String: RelationshipDescription] = [:]
            var fetched: [String: FetchedPropertyDescription] = [:]
            for ancestor in chain(entity.name) {
                for a in ancestor.declaredAttributes {
                    var a = a
                    a.versionHash = VersionHashing.attributeHash(a)
                    attributes[a.name] = a
                }
                for r in ancestor.declaredRelationships {
                    var r = r
                    let ownInverse = r.inverseName == r.name && chain(r.destinationEntityName).contains { $0.name == ancestor.name }
                    r.versionHash = VersionHashing.relationshipHash(r, isOwnInverse: ownInverse)
                    relationships[r.name] = r
                }
                for f in ancestor.declaredFetchedProperties { fetched[f.name] = f }
            }
            copy.declaredAttributes = copy.declaredAttributes.compactMap { attributes[$0.name] }
            copy.declaredRelationships = copy.declaredRelationships.compactMap { relationships[$0.name] }
            copy.attributes = attributes.values.sorted { $0.name < $1.name }
            copy.relationships = relationships.values.sorted { $0.name < $1.name }
            copy.fetchedProperties = fetched.values.sorted { $0.name < $1.name }
            copy.subentityNames = (children[entity.name] ?? []).sorted()
            resolved[entity.name] = copy
        }
        // Destinations exist; inverses point back.
        for entity in resolved.values {
            for r in entity.declaredRelationships {
                guard let destination = resolved[r.destinationEntityName] else {
                    throw ModelError(.invalidModel, "relationship \(entity.name).\(r.name): destination entity \(r.destinationEntityName) does not exist", file: sourceDescription, entity: entity.name)
                }
                if let inverseName = r.inverseName {
                    guard let inverse = destination.relationship(named: inverseName) else {
                        throw ModelError(.invalidModel, "relationship \(entity.name).\(r.name): inverse \(r.destinationEntityName).\(inverseName) does not exist", file: sourceDescription, entity: entity.name)
                    }
                    if let back = inverse.inverseName, back != r.name {
                        throw ModelError(.invalidModel, "relationship \(entity.name).\(r.name): its inverse \(r.destinationEntityName).\(inverseName) names \(back) as its inverse", file: sourceDescription, entity: entity.name)
                    }
                }
            }
        }
        // Version hashes: a superentity's hash enters its sub-entities' hashes.
        var hashes: [String: Data] = [:]
        func hash(of name: String) -> Data {
            if let done = hashes[name] { return done }
            guard let entity = resolved[name] else { return Data() }
            let parentHash = entity.superentityName.map { hash(of: $0) }
            let h = VersionHashing.entityHash(entity, superentityHash: parentHash)
            hashes[name] = h
            return h
        }
        for name in resolved.keys.sorted() {
            _ = hash(of: name)
        }
        for (name, h) in hashes {
            resolved[name]?.versionHash = h
        }
        var modelHasher = SHA256Hasher()
        for name in hashes.keys.sorted(by: VersionHashing.utf8Less) {
            modelHasher.update(hashes[name] ?? Data())
        }
        self.entityVersionHashesByName = hashes
        self.versionHash = modelHasher.finalize()
        self.entities = resolved.values.sorted { $0.name < $1.name }
        self.entitiesByName = resolved
        var templates: [String: FetchRequestTemplate] = [:]
        for t in fetchRequestTemplates { templates[t.name] = t }
        self.fetchRequestTemplates = templates
        self.configurations = configurations
        self.versionIdentifiers = versionIdentifiers
        self.sourceDescription = sourceDescription
    }

    /// Throws unless `name` is a letter or underscore followed by letters, digits and
    /// underscores (ASCII), at most 255 of them.
    static func checkIdentifier(_ name: String, _ what: String, entity: String, file: String?) throws {
        let bytes = Array(name.utf8)
        func isLetter(_ b: UInt8) -> Bool { (b >= 65 && b <= 90) || (b >= 97 && b <= 122) || b == 95 }
        guard let first = bytes.first, isLetter(first), bytes.count <= 255, bytes.allSatisfy({ isLetter($0) || ($0 >= 48 && $0 <= 57) }) else {
            let shown = name.count > 60 ? String(name.prefix(60)) + "…" : name
            throw ModelError(
                .invalidModel, "\(what): \"\(shown)\" is not a name Core Data accepts (a letter or _, then letters, digits and _, at most 255)",
                file: file, entity: entity)
        }
    }

    /// The deepest inheritance a model may have (an entity and its parents); deeper models
    /// are refused with ``ModelError``.
    public static let maximumInheritanceDepth = 64

    /// The entity with this name, if any.
    public func entity(named name: String) -> EntityDescription? {
        entitiesByName[name]
    }

    /// The chain of ancestors of an entity, root first, the entity itself last.
    public func inheritanceChain(of entity: EntityDescription) -> [EntityDescription] {
        var result: [EntityDescription] = [entity]
        var current = entity.superentityName.flatMap { entitiesByName[$0] }
        while let c = current {
            result.insert(c, at: 0)
            current = c.superentityName.flatMap { entitiesByName[$0] }
        }
        return result
    }

    /// The root of an entity's inheritance tree (the entity itself when it has no parent).
    public func rootEntity(of entity: EntityDescription) -> EntityDescription {
        inheritanceChain(of: entity).first ?? entity
    }

    /// The entity and all its sub-entities, pre-order, children sorted by name.
    public func entityAndDescendants(of entity: EntityDescription) -> [EntityDescription] {
        var result = [entity]
        for child in entity.subentityNames.sorted(by: { $0.caseInsensitiveCompare($1) == .orderedAscending }) {
            if let c = entitiesByName[child] { result += entityAndDescendants(of: c) }
        }
        return result
    }

    /// The inverse of a relationship, if it has one.
    public func inverse(of relationship: RelationshipDescription) -> RelationshipDescription? {
        guard let inverseName = relationship.inverseName else { return nil }
        return entitiesByName[relationship.destinationEntityName]?.relationship(named: inverseName)
    }
}

/// An error loading or building a model: what went wrong, and the file and line when known.
public struct ModelError: Error, Sendable, CustomStringConvertible, Equatable {
    /// The kind of problem.
    public enum Code: Sendable, Equatable {
        /// The path does not exist or cannot be read.
        case unreadable
        /// The file is not in a format Faultline reads (for example Xcode 3's `elements`).
        case unsupportedFormat
        /// The file is malformed (bad XML, bad archive).
        case malformed
        /// The model's content is inconsistent (missing entity, bad inverse).
        case invalidModel
    }

    /// The kind of problem.
    public var code: Code
    /// A sentence saying what is wrong.
    public var message: String
    /// The file involved, if any.
    public var file: String?
    /// The 1-based line in `file`, if known.
    public var line: Int?
    /// The entity the problem is in, if any.
    public var entityName: String?

    /// Creates an error.
    public init(_ code: Code, _ message: String, file: String? = nil, line: Int? = nil, entity: String? = nil) {
        self.entityName = entity
        self.code = code
        self.message = message
        self.file = file
        self.line = line
    }

    public var description: String {
        switch (file, line) {
        case let (file?, line?): "\(file):\(line): \(message)"
        case let (file?, nil): "\(file): \(message)"
        default: message
        }
    }
}
