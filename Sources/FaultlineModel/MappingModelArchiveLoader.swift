import Foundation

/// Reads compiled mapping models (`.cdm`): a binary `NSKeyedArchiver` archive whose root is an
/// `NSMappingModel` with its `NSEntityMappings` array, walked without instantiating any class.
///
/// The root key `NSEntityMappings` is reported by an independent reimplementation
/// (FreeCoreData); the keys of `NSEntityMapping` and `NSPropertyMapping` follow the public
/// property names with Core Data's `NS` prefix and are Faultline's reading: no Apple-compiled
/// `.cdm` was available to check them (Migration.md, "Mapping models"). Where two spellings
/// are plausible both are read; a mapping without a readable name is refused with the keys it
/// does have, so a file that differs says how.
enum MappingModelArchiveLoader {
    static func load(data: Data, file: String) throws -> MappingModel {
        guard BinaryPropertyList.isBinary(data) else {
            throw ModelError(.malformed, "not a compiled mapping model (expected a binary property list)", file: file)
        }
        let archive: KeyedArchive
        do {
            archive = try KeyedArchive(data: data)
        } catch let failure as KeyedArchive.Failure {
            throw ModelError(.malformed, "not a compiled mapping model: \(failure.message)", file: file)
        }
        guard let root = archive.object(archive.root) else {
            throw ModelError(.malformed, "not a compiled mapping model: the archive has no root object", file: file)
        }
        guard archive.classChain(of: archive.root).contains("NSMappingModel") else {
            throw ModelError(.malformed, "not a compiled mapping model: the archive holds an \(root.className)", file: file)
        }
        guard let items = archive.array(root["NSEntityMappings"]) else {
            throw ModelError(.malformed, "the mapping model has no NSEntityMappings array", file: file)
        }
        let decoder = ArchivedPredicateDecoder(archive: archive)
        var mappings: [MappingModel.EntityMapping] = []
        for (index, item) in items.enumerated() {
            guard let o = archive.object(item), archive.classChain(of: item).contains("NSEntityMapping") else {
                throw ModelError(.malformed, "entity mapping \(index + 1) of NSEntityMappings is not an NSEntityMapping", file: file)
            }
            guard let name = archive.string(o["NSMappingName"] ?? o["NSName"]) else {
                throw ModelError(
                    .unsupportedFormat,
                    "entity mapping \(index + 1) has no readable name (its keys: \(o.fields.keys.filter { $0 != "$class" }.sorted().joined(separator: ", ")))",
                    file: file)
            }
            let rawType = archive.int(o["NSMappingType"]) ?? 0
            guard let type = MappingModel.EntityMapping.MappingType(rawValue: rawType) else {
                throw ModelError(.unsupportedFormat, "entity mapping \(name): unknown mapping type \(rawType)", file: file)
            }
            func expression(_ key: String, _ what: String) throws -> String? {
                guard let ref = o[key] ?? nil, let text = decoder.expression(ref) else { return nil }
                guard !text.contains("<") else {
                    throw ModelError(.unsupportedFormat, "entity mapping \(name): \(what) is an archived expression of a kind Faultline does not read (\(text))", file: file)
                }
                return text
            }
            func properties(_ key: String, _ kind: String) throws -> [MappingModel.PropertyMapping] {
                var out: [MappingModel.PropertyMapping] = []
                for ref in archive.array(o[key]) ?? [] {
                    guard let p = archive.object(ref), let pname = archive.string(p["NSPropertyName"] ?? p["NSName"]) else {
                        throw ModelError(.malformed, "entity mapping \(name): a \(kind) mapping has no readable name", file: file)
                    }
                    var value: String?
                    if let ref = p["NSValueExpression"], let text = decoder.expression(ref) {
                        guard !text.contains("<") else {
                            throw ModelError(
                                .unsupportedFormat, "entity mapping \(name), \(kind) \(pname): the value expression is of a kind Faultline does not read (\(text))", file: file)
                        }
                        value = text
                    }
                    out.append(MappingModel.PropertyMapping(name: pname, valueExpression: value, userInfo: archive.stringDictionary(p["NSUserInfo"])))
                }
                return out
            }
            mappings.append(
                MappingModel.EntityMapping(
                    name: name, mappingType: type,
                    sourceEntityName: archive.string(o["NSSourceEntityName"]),
                    destinationEntityName: archive.string(o["NSDestinationEntityName"]),
                    sourceEntityVersionHash: hashData(archive, o["NSSourceEntityVersionHash"]),
                    destinationEntityVersionHash: hashData(archive, o["NSDestinationEntityVersionHash"]),
                    sourceExpression: try expression("NSSourceExpression", "the source expression"),
                    entityMigrationPolicyClassName: archive.string(o["NSEntityMigrationPolicyClassName"]),
                    attributeMappings: try properties("NSAttributeMappings", "attribute"),
                    relationshipMappings: try properties("NSRelationshipMappings", "relationship"),
                    userInfo: archive.stringDictionary(o["NSUserInfo"])))
        }
        return MappingModel(entityMappings: mappings, sourceDescription: file)
    }

    /// A version hash: inline data or an archived `NSData` (`NS.data`).
    private static func hashData(_ archive: KeyedArchive, _ ref: PropertyListValue?) -> Data? {
        guard let v = archive.resolve(ref) else { return nil }
        if let d = v.dataValue { return d }
        return v.dictionaryValue?["NS.data"]?.dataValue
    }
}
