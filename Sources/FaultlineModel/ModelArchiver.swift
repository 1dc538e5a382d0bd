import CFaultlineZlib
import Foundation

/// Writes a model as the keyed archive Core Data keeps in a store's `Z_MODELCACHE` (and in a
/// compiled `.mom`): an `NSKeyedArchiver` binary plist whose root is an
/// `NSManagedObjectModel`, with `NSEntityDescription`, `NSAttributeDescription` and
/// `NSRelationshipDescription` objects under the keys Core Data uses.
///
/// What it writes is what the model needs to be read back with the same entities, properties
/// and version hashes: names, classes, inheritance, attribute types, flags and defaults,
/// relationships with destinations, inverses, counts, delete rules and order, uniqueness
/// constraints, compound indexes, user info, version identifiers. Not written (no hash
/// depends on them): validation predicates, fetch request templates, fetched properties and
/// fetch indexes.
///
/// ```swift
/// let blob = try ModelArchiver.modelCacheBlob(for: model)   // for Z_MODELCACHE.Z_CONTENT
/// let back = try ManagedObjectModel(storeModelCacheBlob: blob)
/// ```
public enum ModelArchiver {
    /// The keyed archive of a model.
    ///
    /// - Throws: when the archive cannot be serialized (not expected for a valid model).
    public static func archive(_ model: ManagedObjectModel) throws -> Data {
        let graph = ArchivedModel(model)
        let archiver = NSKeyedArchiver(requiringSecureCoding: false)
        archiver.outputFormat = .binary
        archiver.encode(graph, forKey: NSKeyedArchiveRootObjectKey)
        archiver.finishEncoding()
        return try renamingClasses(in: archiver.encodedData)
    }

    /// Foundation on Linux writes Swift class names (`FaultlineModel.ArchivedEntity`) into the
    /// archive's class records and ignores `setClassName(_:for:)`; the records are rewritten
    /// with Core Data's class names and their superclass chains.
    private static func renamingClasses(in data: Data) throws -> Data {
        let names: [String: [String]] = [
            NSStringFromClass(ArchivedModel.self): ["NSManagedObjectModel", "NSObject"],
            NSStringFromClass(ArchivedEntity.self): ["NSEntityDescription", "NSObject"],
            NSStringFromClass(ArchivedAttribute.self): ["NSAttributeDescription", "NSPropertyDescription", "NSObject"],
            NSStringFromClass(ArchivedRelationship.self): ["NSRelationshipDescription", "NSPropertyDescription", "NSObject"],
        ]
        guard var root = try PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any],
            var objects = root["$objects"] as? [Any]
        else { throw ArchiveFailure(description: "the keyed archive has no $objects") }
        for (index, object) in objects.enumerated() {
            guard var record = object as? [String: Any], let name = record["$classname"] as? String, let chain = names[name] else { continue }
            record["$classname"] = chain[0]
            record["$classes"] = chain
            objects[index] = record
        }
        root["$objects"] = objects
        return try PropertyListSerialization.data(fromPropertyList: root, format: .binary, options: 0)
    }

    /// A failure writing an archive.
    struct ArchiveFailure: Error, CustomStringConvertible {
        let description: String
    }

    /// The archive compressed as raw deflate, as `Z_MODELCACHE.Z_CONTENT` holds it.
    public static func modelCacheBlob(for model: ManagedObjectModel) throws -> Data {
        try Deflate.raw(try archive(model))
    }
}

/// Raw DEFLATE (RFC 1951, no zlib header) compression.
enum Deflate {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static func raw(_ input: Data) throws -> Data {
        var stream = z_stream()
        guard faultline_deflateInit2(&stream, Z_BEST_COMPRESSION, -15) == Z_OK else { throw Failure(description: "zlib initialisation failed") }
        defer { deflateEnd(&stream) }
        var bytes = [UInt8](input)
        let bound = Int(deflateBound(&stream, uLong(bytes.count)))
        var output = [UInt8](repeating: 0, count: bound)
        let count = bytes.count
        let status: Int32 = bytes.withUnsafeMutableBufferPointer { inBuf in
            output.withUnsafeMutableBufferPointer { outBuf in
                stream.next_in = inBuf.baseAddress
                stream.avail_in = uInt(count)
                stream.next_out = outBuf.baseAddress
                stream.avail_out = uInt(bound)
                return deflate(&stream, Z_FINISH)
            }
        }
        guard status == Z_STREAM_END else { throw Failure(description: "deflate failed (zlib error \(status))") }
        return Data(output[0..<Int(stream.total_out)])
    }
}

// MARK: The archived objects
//
// NSObject subclasses that encode themselves under Core Data's keys; the archiver writes them
// with Core Data's class names. They exist only while an archive is written.

final class ArchivedModel: NSObject, NSCoding {
    let entities: [String: ArchivedEntity]
    let versionIdentifiers: [String]

    init(_ model: ManagedObjectModel) {
        var byName: [String: ArchivedEntity] = [:]
        for entity in model.entities { byName[entity.name] = ArchivedEntity(entity) }
        // Links between entities and between inverse relationships are object references.
        for entity in model.entities {
            guard let archived = byName[entity.name] else { continue }
            archived.superentity = entity.superentityName.flatMap { byName[$0] }
            archived.subentities = entity.subentityNames.compactMap { byName[$0] }
        }
        for archived in byName.values {
            for relationship in archived.relationships {
                relationship.entity = archived
                relationship.destination = byName[relationship.relationship.destinationEntityName]
                if let inverseName = relationship.relationship.inverseName {
                    relationship.inverse = relationship.destination?.relationships.first { $0.relationship.name == inverseName }
                }
            }
            for attribute in archived.attributes { attribute.entity = archived }
        }
        self.entities = byName
        self.versionIdentifiers = model.versionIdentifiers
    }

    func encode(with coder: NSCoder) {
        coder.encode(NSDictionary(dictionary: entities), forKey: "NSEntities")
        coder.encode(NSArray(array: versionIdentifiers), forKey: "NSVersionIdentifiers")
    }

    init?(coder: NSCoder) { nil }
}

final class ArchivedEntity: NSObject, NSCoding {
    let entity: EntityDescription
    let attributes: [ArchivedAttribute]
    let relationships: [ArchivedRelationship]
    var superentity: ArchivedEntity?
    var subentities: [ArchivedEntity] = []

    init(_ entity: EntityDescription) {
        self.entity = entity
        self.attributes = entity.declaredAttributes.map(ArchivedAttribute.init)
        self.relationships = entity.declaredRelationships.map(ArchivedRelationship.init)
    }

    func encode(with coder: NSCoder) {
        coder.encode(entity.name as NSString, forKey: "NSEntityName")
        if let name = entity.managedObjectClassName { coder.encode(name as NSString, forKey: "NSClassNameForEntity") }
        coder.encode(entity.isAbstract, forKey: "NSIsAbstract")
        if let superentity { coder.encode(superentity, forKey: "NSSuperentity") }
        var subs: [String: ArchivedEntity] = [:]
        for sub in subentities { subs[sub.entity.name] = sub }
        coder.encode(NSDictionary(dictionary: subs), forKey: "NSSubentities")
        var properties: [String: NSObject] = [:]
        for attribute in attributes { properties[attribute.attribute.name] = attribute }
        for relationship in relationships { properties[relationship.relationship.name] = relationship }
        coder.encode(NSDictionary(dictionary: properties), forKey: "NSProperties")
        coder.encode(NSDictionary(dictionary: entity.userInfo), forKey: "NSUserInfo")
        if let id = entity.renamingIdentifier { coder.encode(id as NSString, forKey: "NSRenamingIdentifier") }
        if let modifier = entity.versionHashModifier { coder.encode(modifier as NSString, forKey: "NSVersionHashModifier") }
        if !entity.uniquenessConstraints.isEmpty {
            coder.encode(NSArray(array: entity.uniquenessConstraints.map { NSArray(array: $0) }), forKey: "NSUniqueTuples")
        }
        if !entity.compoundIndexes.isEmpty {
            coder.encode(NSArray(array: entity.compoundIndexes.map { NSArray(array: $0) }), forKey: "NSCompoundIndexes")
        }
    }

    init?(coder: NSCoder) { nil }
}

final class ArchivedAttribute: NSObject, NSCoding {
    let attribute: AttributeDescription
    weak var entity: ArchivedEntity?

    init(_ attribute: AttributeDescription) { self.attribute = attribute }

    func encode(with coder: NSCoder) {
        let a = attribute
        coder.encode(a.name as NSString, forKey: "NSPropertyName")
        if let entity { coder.encode(entity, forKey: "NSEntity") }
        coder.encode(a.attributeType.rawValue, forKey: "NSAttributeType")
        coder.encode(a.isOptional, forKey: "NSIsOptional")
        coder.encode(a.isTransient, forKey: "NSIsTransient")
        coder.encode(a.isReadOnly, forKey: "NSIsReadOnly")
        coder.encode(a.isIndexed, forKey: "NSIsIndexed")
        var flags = 0
        if a.allowsExternalBinaryDataStorage { flags |= 0x04 }
        if a.preservesValueInHistoryOnDeletion { flags |= 0x10 }
        coder.encode(flags, forKey: "NSFlagsKey")
        if let name = a.valueTransformerName { coder.encode(name as NSString, forKey: "NSValueTransformerName") }
        if let name = a.valueClassName { coder.encode(name as NSString, forKey: "NSAttributeValueClassName") }
        if let id = a.renamingIdentifier { coder.encode(id as NSString, forKey: "NSRenamingIdentifier") }
        if let modifier = a.versionHashModifier { coder.encode(modifier as NSString, forKey: "NSVersionHashModifier") }
        coder.encode(NSDictionary(dictionary: a.userInfo), forKey: "NSUserInfo")
        if let value = ArchivedAttribute.defaultValue(a) { coder.encode(value, forKey: "NSDefaultValue") }
    }

    /// The default value as the Foundation object Core Data archives.
    static func defaultValue(_ a: AttributeDescription) -> NSObject? {
        guard let text = a.defaultValueString else {
            return a.defaultDateTimeInterval.map { NSDate(timeIntervalSinceReferenceDate: $0) }
        }
        switch a.attributeType {
        case .integer16, .integer32, .integer64: return Int64(text).map { NSNumber(value: $0) }
        case .double, .float: return Double(text).map { NSNumber(value: $0) }
        case .boolean: return NSNumber(value: text == "YES" || text == "1" || text.lowercased() == "true")
        case .date: return Double(text).map { NSDate(timeIntervalSinceReferenceDate: $0) }
        case .string, .uri, .decimal, .uuid: return text as NSString
        default: return nil
        }
    }

    init?(coder: NSCoder) { nil }
}

final class ArchivedRelationship: NSObject, NSCoding {
    let relationship: RelationshipDescription
    weak var entity: ArchivedEntity?
    weak var destination: ArchivedEntity?
    weak var inverse: ArchivedRelationship?

    init(_ relationship: RelationshipDescription) { self.relationship = relationship }

    func encode(with coder: NSCoder) {
        let r = relationship
        coder.encode(r.name as NSString, forKey: "NSPropertyName")
        if let entity { coder.encode(entity, forKey: "NSEntity") }
        coder.encode(r.isOptional, forKey: "NSIsOptional")
        coder.encode(r.isTransient, forKey: "NSIsTransient")
        coder.encode(r.isReadOnly, forKey: "NSIsReadOnly")
        coder.encode(r.isOrdered, forKey: "NSIsOrdered")
        coder.encode(r.destinationEntityName as NSString, forKey: "_NSDestinationEntityName")
        if let destination { coder.encode(destination, forKey: "NSDestinationEntity") }
        if let inverseName = r.inverseName { coder.encode(inverseName as NSString, forKey: "_NSInverseRelationshipName") }
        if let inverse { coder.encode(inverse, forKey: "NSInverseRelationship") }
        coder.encode(r.minCount, forKey: "NSMinCount")
        coder.encode(r.maxCount, forKey: "NSMaxCount")
        coder.encode(r.deleteRule.rawValue, forKey: "NSDeleteRule")
        if let id = r.renamingIdentifier { coder.encode(id as NSString, forKey: "NSRenamingIdentifier") }
        if let modifier = r.versionHashModifier { coder.encode(modifier as NSString, forKey: "NSVersionHashModifier") }
        coder.encode(NSDictionary(dictionary: r.userInfo), forKey: "NSUserInfo")
    }

    init?(coder: NSCoder) { nil }
}
