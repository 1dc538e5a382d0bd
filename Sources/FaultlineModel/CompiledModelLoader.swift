import Foundation

extension ManagedObjectModel {
    /// Loads the model a Core Data SQLite store caches in `Z_MODELCACHE.Z_CONTENT`: raw
    /// DEFLATE data holding an `NSKeyedArchiver` archive of the model. An uncompressed
    /// archive (`bplist00…`) is accepted too.
    ///
    /// ```swift
    /// let blob: Data = …  // SELECT Z_CONTENT FROM Z_MODELCACHE
    /// let model = try ManagedObjectModel(storeModelCacheBlob: blob)
    /// model.entityVersionHashesByName == storeMetadata["NSStoreModelVersionHashes"]
    /// ```
    ///
    /// - Parameter source: names the origin (a store path) in errors and ``sourceDescription``.
    /// - Throws: ``ModelError`` (`.malformed`) when the data does not inflate or is not a
    ///   model archive.
    public convenience init(storeModelCacheBlob blob: Data, source: String = "Z_MODELCACHE") throws {
        let archiveData: Data
        if BinaryPropertyList.isBinary(blob) {
            archiveData = blob
        } else {
            do {
                archiveData = try Inflate.raw(blob)
            } catch let failure as Inflate.Failure {
                throw ModelError(.malformed, "model cache does not inflate: \(failure.message)", file: source)
            }
        }
        try self.init(compiledModelData: archiveData, source: source)
    }

    /// Loads a compiled model (`.mom` contents: a binary `NSKeyedArchiver` archive of an
    /// `NSManagedObjectModel`).
    ///
    /// - Throws: ``ModelError`` (`.malformed`) when the data is not a model archive.
    public convenience init(compiledModelData data: Data, source: String = "compiled model") throws {
        let parts = try CompiledModelLoader.decode(data: data, file: source)
        try self.init(
            entities: parts.entities,
            fetchRequestTemplates: parts.templates,
            configurations: parts.configurations,
            versionIdentifiers: parts.versionIdentifiers,
            sourceDescription: source
        )
    }
}

/// Reads `NSKeyedArchiver` archives of `NSManagedObjectModel` (compiled `.mom` files and
/// store model caches) by walking the archive; no Apple class is instantiated.
enum CompiledModelLoader {
    struct Parts {
        var entities: [EntityDescription] = []
        var templates: [FetchRequestTemplate] = []
        var configurations: [String: [String]] = [:]
        var versionIdentifiers: [String] = []
    }

    /// `_P` bits (see the reference notes, §5.1).
    private enum PropertyFlag {
        static let optional = 0x002
        static let readOnly = 0x004
        static let transient = 0x008
        static let spotlight = 0x100
        static let externalRecord = 0x200
        static let ordered = 0x400
        static let cloudEncryption = 0x800
    }

    /// `NSFlagsKey` bits of attributes, found from the corpus hashes.
    private enum AttributeFlag {
        static let externalBinaryStorage = 0x04
        static let preserveAfterDeletion = 0x10
    }

    static func decode(data: Data, file: String) throws -> Parts {
        let archive: KeyedArchive
        do {
            archive = try KeyedArchive(data: data)
        } catch let failure as KeyedArchive.Failure {
            throw ModelError(.malformed, "not a compiled model: \(failure.message)", file: file)
        }
        let reader = Reader(archive: archive, file: file)
        return try reader.model()
    }

    private struct Reader {
        let archive: KeyedArchive
        let file: String
        var predicates: ArchivedPredicateDecoder { ArchivedPredicateDecoder(archive: archive) }

        init(archive: KeyedArchive, file: String) {
            self.archive = archive
            self.file = file
        }

        func fail(_ message: String) -> ModelError {
            ModelError(.malformed, message, file: file)
        }

        func model() throws -> Parts {
            guard let root = archive.object(archive.root) else { throw fail("archive has no root object") }
            guard root.className == "NSManagedObjectModel" else {
                throw fail("archive root is \(root.className), not NSManagedObjectModel")
            }
            var parts = Parts()
            guard let entityPairs = archive.dictionary(root["NSEntities"]) else {
                throw fail("model archive has no NSEntities dictionary")
            }
            for (_, ref) in entityPairs {
                guard let entity = archive.object(ref), entity.className == "NSEntityDescription" else {
                    throw fail("NSEntities holds something that is not an entity")
                }
                parts.entities.append(try self.entity(entity))
            }
            for (key, ref) in archive.dictionary(root["NSFetchRequestTemplates"]) ?? [] {
                guard let name = archive.string(key), let request = archive.object(ref) else { continue }
                parts.templates.append(fetchRequest(request, name: name))
            }
            parts.templates.sort { $0.name < $1.name }
            for ref in archive.array(root["NSVersionIdentifiers"]) ?? [] {
                if let s = archive.scalarText(ref) { parts.versionIdentifiers.append(s) }
            }
            parts.versionIdentifiers.sort()
            for (key, ref) in archive.dictionary(root["NSConfigurations"]) ?? [] {
                guard let name = archive.string(key) else { continue }
                let members = (archive.array(ref) ?? []).compactMap { archive.object($0).flatMap { archive.string($0["NSEntityName"]) } ?? archive.string($0) }
                parts.configurations[name] = members.sorted()
            }
            return parts
        }

        func propertyNames(of entity: KeyedArchive.Object) -> Set<String> {
            Set((archive.dictionary(entity["NSProperties"]) ?? []).compactMap { archive.string($0.key) })
        }

        func entity(_ o: KeyedArchive.Object) throws -> EntityDescription {
            guard let name = archive.string(o["NSEntityName"]), !name.isEmpty else { throw fail("an entity has no name") }
            let superentity = archive.object(o["NSSuperentity"])
            let superName = superentity.flatMap { archive.string($0["NSEntityName"]) }
            // Older archives repeat inherited properties in a sub-entity; newer ones use
            // `_NSPropertyDescriptionProxy`. Either way, a property is declared here only
            // when the superentity does not have it.
            let inherited = superentity.map(propertyNames(of:)) ?? []
            var entity = EntityDescription(
                name: name,
                managedObjectClassName: archive.string(o["NSClassNameForEntity"]),
                isAbstract: archive.bool(o["NSIsAbstract"]) ?? false,
                superentityName: superName,
                renamingIdentifier: archive.string(o["NSRenamingIdentifier"]),
                versionHashModifier: archive.string(o["NSVersionHashModifier"]),
                userInfo: archive.stringDictionary(o["NSUserInfo"])
            )
            for (key, ref) in archive.dictionary(o["NSProperties"]) ?? [] {
                guard let propertyName = archive.string(key) else { continue }
                if inherited.contains(propertyName) { continue }
                guard let property = archive.object(ref) else { continue }
                switch property.className {
                case "_NSPropertyDescriptionProxy":
                    continue
                case "NSAttributeDescription", "NSDerivedAttributeDescription", "NSCompositeAttributeDescription":
                    entity.declaredAttributes.append(try attribute(property, entity: name))
                case "NSRelationshipDescription":
                    entity.declaredRelationships.append(try relationship(property, entity: name))
                case "NSFetchedPropertyDescription":
                    entity.declaredFetchedProperties.append(fetchedProperty(property))
                default:
                    let chain = archive.classChain(of: ref)
                    if chain.contains("NSAttributeDescription") {
                        entity.declaredAttributes.append(try attribute(property, entity: name))
                    } else if chain.contains("NSRelationshipDescription") {
                        entity.declaredRelationships.append(try relationship(property, entity: name))
                    } else if chain.contains("NSFetchedPropertyDescription") {
                        entity.declaredFetchedProperties.append(fetchedProperty(property))
                    }
                    // Other property kinds (expression descriptions) are not entity storage.
                }
            }
            entity.declaredAttributes.sort { $0.name < $1.name }
            entity.declaredRelationships.sort { $0.name < $1.name }
            entity.declaredFetchedProperties.sort { $0.name < $1.name }
            entity.uniquenessConstraints = nameLists(o["NSUniqueTuples"])
            entity.compoundIndexes = nameLists(o["NSCompoundIndexes"])
            entity.fetchIndexes = (archive.array(o["NSFetchIndexDescriptions"]) ?? []).compactMap { archive.object($0) }.map(fetchIndex)
            return entity
        }

        /// Lists of property names, where each element is a name or an archived property.
        func nameLists(_ ref: PropertyListValue?) -> [[String]] {
            (archive.array(ref) ?? []).map { list in
                (archive.array(list) ?? []).compactMap { item in
                    if let property = archive.object(item), let n = archive.string(property["NSPropertyName"]) { return n }
                    return archive.string(item)
                }
            }.filter { !$0.isEmpty }
        }

        func fetchIndex(_ o: KeyedArchive.Object) -> FetchIndexDescription {
            let elements = (archive.array(o["NSIndexElements"]) ?? []).compactMap { archive.object($0) }.map { e -> FetchIndexDescription.Element in
                let indexed = archive.object(e["NSIndexedProperty"])
                let expression = indexed.flatMap { $0.className == "NSExpressionDescription" ? predicates.expression($0["NSExpression"]) : nil }
                let property = archive.string(e["NSPropertyName"]) ?? indexed.flatMap { archive.string($0["NSPropertyName"]) } ?? ""
                return .init(
                    property: property,
                    type: archive.int(e["NSFetchIndexElementType"]) == 1 ? "RTree" : "Binary",
                    isAscending: archive.bool(e["NSAscending"]) ?? true,
                    expression: expression)
            }
            return FetchIndexDescription(
                name: archive.string(o["NSIndexName"]) ?? "",
                elements: elements,
                partialIndexPredicate: predicates.predicate(o["NSPartialIndexPredicate"]))
        }

        struct CommonFlags {
            var optional = false, readOnly = false, transient = false, spotlight = false
            var externalRecord = false, ordered = false, cloudEncryption = false
        }

        func flags(_ o: KeyedArchive.Object) -> CommonFlags {
            var f = CommonFlags()
            if let p = archive.int(o["_P"]), p != 0 {
                f.optional = p & PropertyFlag.optional != 0
                f.readOnly = p & PropertyFlag.readOnly != 0
                f.transient = p & PropertyFlag.transient != 0
                f.spotlight = p & PropertyFlag.spotlight != 0
                f.externalRecord = p & PropertyFlag.externalRecord != 0
                f.ordered = p & PropertyFlag.ordered != 0
                f.cloudEncryption = p & PropertyFlag.cloudEncryption != 0
            } else {
                f.optional = archive.bool(o["NSIsOptional"]) ?? false
                f.readOnly = archive.bool(o["NSIsReadOnly"]) ?? false
                f.transient = archive.bool(o["NSIsTransient"]) ?? false
                f.spotlight = archive.bool(o["NSIndexedBySpotlight"]) ?? false
                f.externalRecord = archive.bool(o["NSIsStoredInTruth"]) ?? false
                f.ordered = archive.bool(o["NSIsOrdered"]) ?? false
                f.cloudEncryption = archive.bool(o["NSAllowsCloudEncryption"]) ?? false
            }
            return f
        }

        func attribute(_ o: KeyedArchive.Object, entity: String) throws -> AttributeDescription {
            let name = archive.string(o["NSPropertyName"]) ?? ""
            let code = archive.int(o["NSAttributeType"]) ?? 0
            guard let type = AttributeType(rawValue: code) else {
                throw fail("attribute \(entity).\(name) has an unknown attribute type \(code)")
            }
            let f = flags(o)
            let attributeFlags = archive.int(o["NSFlagsKey"]) ?? 0
            var defaultText: String?
            var defaultInterval: Double?
            if let value = archive.resolve(o["NSDefaultValue"]) {
                if let dict = value.dictionaryValue, case .real(let t)? = dict["NS.time"] {
                    defaultInterval = t
                    defaultText = formatNumber(t)
                } else if let dict = value.dictionaryValue, let text = Self.foundationValueText(dict, archive: archive) {
                    defaultText = text
                } else if let text = archive.scalarText(value) {
                    defaultText = type == .boolean ? ((Int(text) ?? (text == "YES" ? 1 : 0)) != 0 ? "YES" : "NO") : text
                }
            }
            // Validation predicates with their warnings (min/max/regex settings).
            let rules = (archive.array(o["NSValidationPredicates"]) ?? []).map { predicates.predicate($0) ?? "" }
            let warnings = (archive.array(o["NSValidationWarnings"]) ?? []).map { archive.scalarText($0) ?? "" }
            var validation: [ValidationRule] = []
            var minValue: String?, maxValue: String?, regex: String?
            for (i, rule) in rules.enumerated() where !rule.isEmpty {
                validation.append(ValidationRule(predicateFormat: rule, warning: i < warnings.count ? warnings[i] : ""))
                let pieces = rule.components(separatedBy: " ")
                guard pieces.count == 3 else { continue }
                let subject = pieces[0], op = pieces[1], bound = pieces[2]
                guard ["SELF", "length", "SELF.length", "timeIntervalSinceReferenceDate"].contains(subject) else { continue }
                switch op {
                case ">=": minValue = bound
                case "<=": maxValue = bound
                case "MATCHES": regex = bound.count >= 2 ? String(bound.dropFirst().dropLast()) : bound
                default: break
                }
            }
            return AttributeDescription(
                name: name,
                type: type,
                isOptional: f.optional,
                isTransient: f.transient,
                defaultValueString: defaultText,
                defaultDateTimeInterval: defaultInterval,
                allowsExternalBinaryDataStorage: attributeFlags & AttributeFlag.externalBinaryStorage != 0,
                valueTransformerName: archive.string(o["NSValueTransformerName"]),
                valueClassName: archive.string(o["NSAttributeValueClassName"]),
                preservesValueInHistoryOnDeletion: attributeFlags & AttributeFlag.preserveAfterDeletion != 0,
                renamingIdentifier: archive.string(o["NSRenamingIdentifier"]),
                versionHashModifier: archive.string(o["NSVersionHashModifier"]),
                userInfo: archive.stringDictionary(o["NSUserInfo"]),
                isReadOnly: f.readOnly,
                minValueString: minValue,
                maxValueString: maxValue,
                regularExpressionString: regex,
                derivationExpression: o.className == "NSDerivedAttributeDescription" ? (predicates.expression(o["NSDerivationExpression"]) ?? "") : nil,
                filteringPredicateFormat: predicates.predicate(o["NSFilteringPredicate"]),
                validationPredicates: validation,
                isIndexed: archive.bool(o["NSIsIndexed"]) ?? false,
                isIndexedBySpotlight: f.spotlight,
                isStoredInExternalRecord: f.externalRecord,
                allowsCloudEncryption: f.cloudEncryption
            )
        }

        /// Text of archived `NSDecimalNumber`, `NSUUID` and `NSURL` values (attribute defaults).
        static func foundationValueText(_ dict: [String: PropertyListValue], archive: KeyedArchive) -> String? {
            if let mantissa = dict["NS.mantissa"]?.dataValue {
                // NSDecimalNumber: little-endian mantissa words, a base-10 exponent and a sign.
                var digits: UInt64 = 0
                for (i, byte) in mantissa.prefix(8).enumerated() { digits |= UInt64(byte) << UInt64(8 * i) }
                let exponent = Int(dict["NS.exponent"]?.integerValue ?? 0)
                let negative = (dict["NS.negative"]?.integerValue ?? 0) != 0
                guard abs(exponent) < 128 else { return nil }
                let value = Decimal(sign: negative ? .minus : .plus, exponent: exponent, significand: Decimal(digits))
                return "\(value)"
            }
            if let bytes = dict["NS.uuidbytes"]?.dataValue, bytes.count == 16 {
                let b = [UInt8](bytes)
                let uuid = UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]))
                return uuid.uuidString
            }
            if dict["NS.relative"] != nil {
                let relative = archive.string(dict["NS.relative"]) ?? ""
                if let base = archive.string(dict["NS.base"]), !base.isEmpty {
                    return URL(string: relative, relativeTo: URL(string: base))?.absoluteString ?? relative
                }
                return relative
            }
            return nil
        }

        func relationship(_ o: KeyedArchive.Object, entity: String) throws -> RelationshipDescription {
            let name = archive.string(o["NSPropertyName"]) ?? ""
            let destinationObject = archive.object(o["NSDestinationEntity"])
            guard let destination = archive.string(o["_NSDestinationEntityName"]) ?? destinationObject.flatMap({ archive.string($0["NSEntityName"]) }) else {
                throw fail("relationship \(entity).\(name) has no destination entity")
            }
            let inverseObject = archive.object(o["NSInverseRelationship"])
            let inverse = archive.string(o["_NSInverseRelationshipName"]) ?? inverseObject.flatMap { archive.string($0["NSPropertyName"]) }
            let inverseEntity = inverseObject.flatMap { archive.object($0["NSEntity"]) }.flatMap { archive.string($0["NSEntityName"]) }
            let f = flags(o)
            let maxCount = archive.int(o["NSMaxCount"]) ?? 0
            var r = RelationshipDescription(
                name: name,
                destination: destination,
                inverse: inverse,
                inverseEntityName: inverse == nil ? nil : (inverseEntity ?? destination),
                toMany: maxCount != 1,
                ordered: f.ordered,
                deleteRule: DeleteRule(rawValue: archive.int(o["NSDeleteRule"]) ?? 1) ?? .nullify,
                isOptional: f.optional,
                isTransient: f.transient,
                minCount: archive.int(o["NSMinCount"]) ?? 0,
                maxCount: maxCount,
                renamingIdentifier: archive.string(o["NSRenamingIdentifier"]),
                versionHashModifier: archive.string(o["NSVersionHashModifier"]),
                userInfo: archive.stringDictionary(o["NSUserInfo"])
            )
            r.isReadOnly = f.readOnly
            r.isIndexedBySpotlight = f.spotlight
            return r
        }

        func fetchedProperty(_ o: KeyedArchive.Object) -> FetchedPropertyDescription {
            let name = archive.string(o["NSPropertyName"]) ?? ""
            // The key is not documented; take `NSFetchRequest`, else any field holding a fetch request.
            let requestObject = archive.object(o["NSFetchRequest"])
                ?? o.fields.keys.sorted().lazy.compactMap { archive.object(o[$0]) }.first { archive.classChain(of: .uid($0.index)).contains("NSFetchRequest") }
            let request = requestObject.map { fetchRequest($0, name: name) } ?? FetchRequestTemplate(name: name, entityName: "")
            return FetchedPropertyDescription(
                name: name,
                fetchRequest: request,
                userInfo: archive.stringDictionary(o["NSUserInfo"]),
                isOptional: flags(o).optional,
                renamingIdentifier: archive.string(o["NSRenamingIdentifier"]),
                versionHashModifier: archive.string(o["NSVersionHashModifier"]))
        }

        func fetchRequest(_ o: KeyedArchive.Object, name: String) -> FetchRequestTemplate {
            let entityName = archive.object(o["NSEntity"]).flatMap { archive.string($0["NSEntityName"]) }
                ?? archive.string(o["NSEntityName"]) ?? archive.string(o["NSEntity"]) ?? ""
            var t = FetchRequestTemplate(
                name: name,
                entityName: entityName,
                predicateFormat: predicates.predicate(o["NSPredicate"]),
                fetchLimit: archive.int(o["NSFetchLimit"]) ?? 0,
                fetchBatchSize: archive.int(o["NSBatchSize"]) ?? 0,
                resultType: archive.int(o["NSResultType"]) ?? 0
            )
            t.fetchOffset = archive.int(o["NSFetchOffset"]) ?? 0
            t.sortDescriptors = (archive.array(o["NSSortDescriptors"]) ?? []).compactMap { archive.object($0) }.compactMap { sd in
                guard let key = archive.string(sd["NSKey"]) else { return nil }
                return .init(keyPath: key, ascending: archive.bool(sd["NSAscending"]) ?? true)
            }
            return t
        }
    }
}
