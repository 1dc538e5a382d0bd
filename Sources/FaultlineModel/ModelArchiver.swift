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
package enum ModelArchiver {
    /// The keyed archive of a model.
    ///
    /// The archive is written directly, without Foundation's `NSKeyedArchiver`: every
    /// entity and property gets its `$objects` slot up front and is then filled in by a
    /// loop, so time and stack depth stay linear in the model's size whatever the shape of
    /// its relationship graph (Foundation's archiver recurses along relationship →
    /// destination entity → its relationships, and compares archived dictionaries deeply
    /// to unique them).
    ///
    /// - Throws: never for a model built by ``ManagedObjectModel``; kept for callers that
    ///   treat archiving as fallible.
    package static func archive(_ model: ManagedObjectModel) throws -> Data {
        var writer = KeyedArchiveWriter()
        let root = ModelGraphEncoder(model: model).encode(into: &writer)
        return writer.data(root: root)
    }

    /// The archive compressed as raw deflate, as `Z_MODELCACHE.Z_CONTENT` holds it.
    package static func modelCacheBlob(for model: ManagedObjectModel) throws -> Data {
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


/// Encodes a model's object graph into a keyed archive under Core Data's class names and
/// keys: `NSManagedObjectModel` → `NSEntities` → `NSEntityDescription` → `NSProperties` →
/// `NSAttributeDescription` / `NSRelationshipDescription`, with entities and properties
/// referring to each other by UID (superentity, sub-entities, a property's entity, a
/// relationship's destination and inverse).
///
/// Every entity and declared property gets its slot before any is written, so a reference
/// is a dictionary look-up and the whole graph is written by one pass over the entities.
struct ModelGraphEncoder {
    let model: ManagedObjectModel

    private static let modelClass = ["NSManagedObjectModel", "NSObject"]
    private static let entityClass = ["NSEntityDescription", "NSObject"]
    private static let attributeClass = ["NSAttributeDescription", "NSPropertyDescription", "NSObject"]
    private static let relationshipClass = ["NSRelationshipDescription", "NSPropertyDescription", "NSObject"]

    /// Writes the graph; returns the UID of the root (the model).
    func encode(into w: inout KeyedArchiveWriter) -> Int {
        let root = w.reserve()
        var entityUIDs: [String: Int] = [:]
        var attributeUIDs: [String: [String: Int]] = [:]
        var relationshipUIDs: [String: [String: Int]] = [:]
        for entity in model.entities {
            entityUIDs[entity.name] = w.reserve()
            var attributes: [String: Int] = [:], relationships: [String: Int] = [:]
            for a in entity.declaredAttributes { attributes[a.name] = w.reserve() }
            for r in entity.declaredRelationships { relationships[r.name] = w.reserve() }
            attributeUIDs[entity.name] = attributes
            relationshipUIDs[entity.name] = relationships
        }

        var entityRefs: [String: PropertyListValue] = [:]
        for (name, uid) in entityUIDs { entityRefs[name] = .uid(uid) }
        w.set(root, classChain: Self.modelClass, fields: [
            "NSEntities": w.dictionary(entityRefs),
            "NSVersionIdentifiers": w.array(strings: model.versionIdentifiers),
        ])

        for entity in model.entities {
            guard let uid = entityUIDs[entity.name] else { continue }
            let attributes = attributeUIDs[entity.name] ?? [:]
            let relationships = relationshipUIDs[entity.name] ?? [:]
            var fields: [String: PropertyListValue] = [
                "NSEntityName": w.string(entity.name),
                "NSIsAbstract": .bool(entity.isAbstract),
            ]
            if let name = entity.managedObjectClassName { fields["NSClassNameForEntity"] = w.string(name) }
            if let superUID = entity.superentityName.flatMap({ entityUIDs[$0] }) { fields["NSSuperentity"] = .uid(superUID) }
            var subentities: [String: PropertyListValue] = [:]
            for name in entity.subentityNames { if let sub = entityUIDs[name] { subentities[name] = .uid(sub) } }
            fields["NSSubentities"] = w.dictionary(subentities)
            var properties: [String: PropertyListValue] = [:]
            for (name, propertyUID) in attributes { properties[name] = .uid(propertyUID) }
            for (name, propertyUID) in relationships { properties[name] = .uid(propertyUID) }
            fields["NSProperties"] = w.dictionary(properties)
            fields["NSUserInfo"] = w.dictionary(strings: entity.userInfo)
            if let id = entity.renamingIdentifier { fields["NSRenamingIdentifier"] = w.string(id) }
            if let modifier = entity.versionHashModifier { fields["NSVersionHashModifier"] = w.string(modifier) }
            if !entity.uniquenessConstraints.isEmpty {
                let lists = entity.uniquenessConstraints.map { w.array(strings: $0) }
                fields["NSUniqueTuples"] = w.array(lists)
            }
            if !entity.compoundIndexes.isEmpty {
                let lists = entity.compoundIndexes.map { w.array(strings: $0) }
                fields["NSCompoundIndexes"] = w.array(lists)
            }
            w.set(uid, classChain: Self.entityClass, fields: fields)

            for a in entity.declaredAttributes {
                guard let attributeUID = attributes[a.name] else { continue }
                w.set(attributeUID, classChain: Self.attributeClass, fields: attributeFields(a, entity: uid, writer: &w))
            }
            for r in entity.declaredRelationships {
                guard let relationshipUID = relationships[r.name] else { continue }
                var fields = propertyFields(name: r.name, entity: uid, writer: &w)
                fields["NSIsOptional"] = .bool(r.isOptional)
                fields["NSIsTransient"] = .bool(r.isTransient)
                fields["NSIsReadOnly"] = .bool(r.isReadOnly)
                fields["NSIsOrdered"] = .bool(r.isOrdered)
                fields["_NSDestinationEntityName"] = w.string(r.destinationEntityName)
                if let destination = entityUIDs[r.destinationEntityName] { fields["NSDestinationEntity"] = .uid(destination) }
                if let inverseName = r.inverseName {
                    fields["_NSInverseRelationshipName"] = w.string(inverseName)
                    // The inverse as an object when the destination declares it (an inherited
                    // inverse is named only).
                    if let inverse = relationshipUIDs[r.destinationEntityName]?[inverseName] { fields["NSInverseRelationship"] = .uid(inverse) }
                }
                fields["NSMinCount"] = .integer(Int64(r.minCount))
                fields["NSMaxCount"] = .integer(Int64(r.maxCount))
                fields["NSDeleteRule"] = .integer(Int64(r.deleteRule.rawValue))
                if let id = r.renamingIdentifier { fields["NSRenamingIdentifier"] = w.string(id) }
                if let modifier = r.versionHashModifier { fields["NSVersionHashModifier"] = w.string(modifier) }
                fields["NSUserInfo"] = w.dictionary(strings: r.userInfo)
                w.set(relationshipUID, classChain: Self.relationshipClass, fields: fields)
            }
        }
        return root
    }

    private func propertyFields(name: String, entity: Int, writer w: inout KeyedArchiveWriter) -> [String: PropertyListValue] {
        ["NSPropertyName": w.string(name), "NSEntity": .uid(entity)]
    }

    private func attributeFields(_ a: AttributeDescription, entity: Int, writer w: inout KeyedArchiveWriter) -> [String: PropertyListValue] {
        var fields = propertyFields(name: a.name, entity: entity, writer: &w)
        fields["NSAttributeType"] = .integer(Int64(a.attributeType.rawValue))
        fields["NSIsOptional"] = .bool(a.isOptional)
        fields["NSIsTransient"] = .bool(a.isTransient)
        fields["NSIsReadOnly"] = .bool(a.isReadOnly)
        fields["NSIsIndexed"] = .bool(a.isIndexed)
        var flags: Int64 = 0
        if a.allowsExternalBinaryDataStorage { flags |= 0x04 }
        if a.preservesValueInHistoryOnDeletion { flags |= 0x10 }
        fields["NSFlagsKey"] = .integer(flags)
        if let name = a.valueTransformerName { fields["NSValueTransformerName"] = w.string(name) }
        if let name = a.valueClassName { fields["NSAttributeValueClassName"] = w.string(name) }
        if let id = a.renamingIdentifier { fields["NSRenamingIdentifier"] = w.string(id) }
        if let modifier = a.versionHashModifier { fields["NSVersionHashModifier"] = w.string(modifier) }
        fields["NSUserInfo"] = w.dictionary(strings: a.userInfo)
        if let value = defaultValue(a, writer: &w) { fields["NSDefaultValue"] = value }
        return fields
    }

    /// The default value as the Foundation object Core Data archives: an `NSNumber`
    /// (integer, real or Boolean), an `NSString` or an `NSDate`.
    private func defaultValue(_ a: AttributeDescription, writer w: inout KeyedArchiveWriter) -> PropertyListValue? {
        // A date default is its interval; Xcode also writes the date as text beside it
        // (`2013-04-23 12:00:00 +0000`), which is not a number.
        if a.attributeType == .date || a.defaultValueString == nil, let interval = a.defaultDateTimeInterval {
            return w.date(timeIntervalSinceReferenceDate: interval)
        }
        guard let text = a.defaultValueString else { return nil }
        switch a.attributeType {
        case .integer16, .integer32, .integer64: return Int64(text).map { w.value(.integer($0)) }
        case .double, .float: return Double(text).map { w.value(.real($0)) }
        case .boolean: return w.value(.bool(text == "YES" || text == "1" || text.lowercased() == "true"))
        case .date: return Double(text).map { w.date(timeIntervalSinceReferenceDate: $0) }
        case .string, .uri, .decimal, .uuid: return w.string(text)
        default: return nil
        }
    }
}
