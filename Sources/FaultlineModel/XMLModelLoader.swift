import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// Reads the Xcode 4+ `contents` XML of an `.xcdatamodel`.
enum XMLModelLoader {
    /// Parses `contents` XML data; `file` names the file in errors.
    static func load(data: Data, file: String) throws -> ManagedObjectModel {
        // Foundation's XMLParser stops the process (SIGILL) on an invalid UTF-8 byte in an
        // element or attribute name, so the bytes are checked first. Xcode writes UTF-8.
        if let bad = firstInvalidUTF8(data) {
            throw ModelError(
                .malformed, "not UTF-8: invalid byte 0x\(String(format: "%02X", bad.byte)) at column \(bad.column)",
                file: file, line: bad.line)
        }
        let delegate = Delegate(file: file)
        let parser = XMLParser(data: data)
        parser.delegate = delegate
        parser.shouldProcessNamespaces = false
        let ok = parser.parse()
        if let error = delegate.error { throw error }
        if !ok {
            let reason = parser.parserError.map { ($0 as NSError).localizedDescription } ?? "unknown XML error"
            throw ModelError(.malformed, "not well-formed XML (\(reason))", file: file, line: max(parser.lineNumber, 1))
        }
        if delegate.hasOpenElements {
            throw ModelError(.malformed, "the XML ends before its elements are closed (truncated file?)", file: file, line: max(parser.lineNumber, 1))
        }
        guard delegate.sawModel else {
            throw ModelError(.malformed, "no <model> element: not an Xcode data model", file: file, line: 1)
        }
        do {
            // Composite attributes name their element list by `composite="Type"`.
            let entities = delegate.entities.map { entity -> EntityDescription in
                var entity = entity
                for i in entity.declaredAttributes.indices {
                    if let name = entity.declaredAttributes[i].compositeName, let elements = delegate.composites[name] {
                        entity.declaredAttributes[i].compositeElements = elements
                    }
                }
                return entity
            }
            return try ManagedObjectModel(
                entities: entities,
                fetchRequestTemplates: delegate.templates,
                configurations: delegate.configurations,
                versionIdentifiers: delegate.versionIdentifiers,
                sourceDescription: file
            )
        } catch var error as ModelError {
            error.file = file
            if let entity = error.entityName { error.line = delegate.entityLines[entity] }
            throw error
        }
    }

    /// The first byte that is not part of valid UTF-8, with its 1-based line and column
    /// (in bytes); nil when the data is valid UTF-8.
    static func firstInvalidUTF8(_ data: Data) -> (byte: UInt8, line: Int, column: Int)? {
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = data.makeIterator()
        var offset = 0
        var line = 1
        var lineStart = 0
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded):
                if encoded.count == 1, encoded.first == UInt8(ascii: "\n") {
                    line += 1
                    lineStart = offset + 1
                }
                offset += encoded.count
            case .error(let length):
                let index = data.index(data.startIndex, offsetBy: offset)
                _ = length
                return (data[index], line, offset - lineStart + 1)
            case .emptyInput:
                return nil
            }
        }
    }

    private final class Delegate: NSObject, XMLParserDelegate {
        let file: String
        var error: ModelError?
        var sawModel = false
        var entities: [EntityDescription] = []
        var entityLines: [String: Int] = [:]
        var templates: [FetchRequestTemplate] = []
        var configurations: [String: [String]] = [:]
        var versionIdentifiers: [String] = []
        /// Model-level composite attribute types (iOS 17): name → elements.
        var composites: [String: [AttributeDescription]] = [:]
        private var currentComposite: String?

        // Parse state.
        private var stack: [String] = []
        private var entity: EntityDescription?
        private var fetchedPropertyName: String?
        private var fetchedPropertyAttributes: [String: String] = [:]
        /// userInfo read before the fetched property's <fetchRequest> (which creates it).
        private var pendingFetchedPropertyUserInfo: [String: String] = [:]
        private var configurationName: String?
        private var currentConstraint: [String]?
        private var currentCompound: [String]?
        private var currentFetchIndex: FetchIndexDescription?
        private var userInfoTarget: (kind: String, name: String)?

        init(file: String) { self.file = file }

        func fail(_ parser: XMLParser, _ message: String) {
            guard error == nil else { return }
            error = ModelError(.malformed, message, file: file, line: parser.lineNumber)
            parser.abortParsing()
        }

        func bool(_ a: [String: String], _ key: String) -> Bool { a[key] == "YES" }

        /// An `<attribute>` element as a description (in an entity, or in a model-level composite).
        func makeAttribute(_ parser: XMLParser, _ a: [String: String], owner: String) -> AttributeDescription? {
            guard let attrName = a["name"], !attrName.isEmpty else { fail(parser, "<attribute> without a name"); return nil }
            let typeName = a["attributeType"] ?? "Undefined"
            guard let type = AttributeType(xmlName: typeName) else {
                fail(parser, "attribute \(owner).\(attrName): unknown attributeType \"\(typeName)\"")
                return nil
            }
            var attribute = AttributeDescription(
                name: attrName,
                type: type,
                isOptional: bool(a, "optional"),
                isTransient: bool(a, "transient"),
                defaultValueString: a["defaultValueString"],
                defaultDateTimeInterval: a["defaultDateTimeInterval"].flatMap(Double.init),
                allowsExternalBinaryDataStorage: bool(a, "allowsExternalBinaryDataStorage"),
                valueTransformerName: a["valueTransformerName"],
                valueClassName: a["customClassName"],
                preservesValueInHistoryOnDeletion: bool(a, "preserveAfterDeletion"),
                renamingIdentifier: a["elementID"],
                versionHashModifier: a["versionHashModifier"],
                minValueString: type == .date ? (a["minDateTimeInterval"] ?? a["minValueString"]) : a["minValueString"],
                maxValueString: type == .date ? (a["maxDateTimeInterval"] ?? a["maxValueString"]) : a["maxValueString"],
                regularExpressionString: a["regularExpressionString"],
                derivationExpression: bool(a, "derived") ? (a["derivationExpression"] ?? "") : nil,
                isIndexed: bool(a, "indexed"),
                isIndexedBySpotlight: bool(a, "spotlightIndexingEnabled"),
                isStoredInExternalRecord: bool(a, "storedInTruthFile"),
                allowsCloudEncryption: bool(a, "allowsCloudEncryption")
            )
            attribute.compositeName = a["composite"]
            attribute.usesScalarValueType = a["usesScalarValueType"].map { $0 == "YES" }
            return attribute
        }

        func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?, attributes a: [String: String] = [:]) {
            defer { stack.append(name) }
            let parent = stack.last
            switch name {
            case "model":
                guard stack.isEmpty else { return fail(parser, "nested <model> element") }
                if let type = a["type"], type != "com.apple.IDECoreDataModeler.DataModel" {
                    return fail(parser, "unknown model type \"\(type)\"")
                }
                sawModel = true
                if let v = a["userDefinedModelVersionIdentifier"] { versionIdentifiers = [v] }
            case "entity" where parent == "model":
                guard let entityName = a["name"], !entityName.isEmpty else { return fail(parser, "<entity> without a name") }
                entityLines[entityName] = parser.lineNumber
                entity = EntityDescription(
                    name: entityName,
                    managedObjectClassName: a["representedClassName"],
                    isAbstract: bool(a, "isAbstract"),
                    superentityName: a["parentEntity"],
                    renamingIdentifier: a["elementID"],
                    versionHashModifier: a["versionHashModifier"]
                )
            case "attribute" where parent == "entity":
                guard let attribute = makeAttribute(parser, a, owner: entity?.name ?? "?") else { return }
                entity?.declaredAttributes.append(attribute)
                userInfoTarget = ("attribute", attribute.name)
            case "composite" where parent == "model", "compositeAttribute" where parent == "model":
                guard let compositeName = a["name"], !compositeName.isEmpty else { return fail(parser, "<\(name)> without a name") }
                currentComposite = compositeName
                composites[compositeName] = []
            case "attribute" where parent == "composite" || parent == "compositeAttribute":
                guard let composite = currentComposite, let attribute = makeAttribute(parser, a, owner: composite) else { return }
                composites[composite, default: []].append(attribute)
            case "relationship" where parent == "entity":
                guard let relName = a["name"], !relName.isEmpty else { return fail(parser, "<relationship> without a name") }
                guard let destination = a["destinationEntity"] else {
                    return fail(parser, "relationship \(entity?.name ?? "?").\(relName) has no destinationEntity")
                }
                let ruleName = a["deletionRule"] ?? "Nullify"
                guard let rule = DeleteRule(xmlName: ruleName) else {
                    return fail(parser, "relationship \(entity?.name ?? "?").\(relName): unknown deletionRule \"\(ruleName)\"")
                }
                let toMany = bool(a, "toMany")
                entity?.declaredRelationships.append(RelationshipDescription(
                    name: relName,
                    destination: destination,
                    inverse: a["inverseName"],
                    inverseEntityName: a["inverseEntity"],
                    toMany: toMany,
                    ordered: bool(a, "ordered"),
                    deleteRule: rule,
                    isOptional: bool(a, "optional"),
                    isTransient: bool(a, "transient"),
                    minCount: a["minCount"].flatMap { Int($0) } ?? 0,
                    maxCount: a["maxCount"].flatMap { Int($0) } ?? (toMany ? 0 : 1),
                    renamingIdentifier: a["elementID"],
                    versionHashModifier: a["versionHashModifier"]
                ))
                if bool(a, "spotlightIndexingEnabled"), let i = entity?.declaredRelationships.indices.last {
                    entity?.declaredRelationships[i].isIndexedBySpotlight = true
                }
                userInfoTarget = ("relationship", relName)
            case "fetchedProperty" where parent == "entity":
                fetchedPropertyName = a["name"]
                fetchedPropertyAttributes = a
            case "fetchRequest":
                let template = FetchRequestTemplate(
                    name: a["name"] ?? "",
                    entityName: a["entity"] ?? "",
                    predicateFormat: a["predicateString"],
                    fetchLimit: a["fetchLimit"].flatMap { Int($0) } ?? 0,
                    fetchBatchSize: a["fetchBatchSize"].flatMap { Int($0) } ?? 0,
                    resultType: a["resultType"].flatMap { Int($0) } ?? 0,
                    includesSubentities: bool(a, "includeSubentities"),
                    includesPropertyValues: bool(a, "includePropertyValues"),
                    includesPendingChanges: bool(a, "includesPendingChanges"),
                    returnsObjectsAsFaults: bool(a, "returnObjectsAsFaults"),
                    returnsDistinctResults: bool(a, "returnDistinctResults")
                )
                if parent == "fetchedProperty", let fp = fetchedPropertyName {
                    let fa = fetchedPropertyAttributes
                    entity?.declaredFetchedProperties.append(FetchedPropertyDescription(
                        name: fp, fetchRequest: template, userInfo: pendingFetchedPropertyUserInfo, isOptional: bool(fa, "optional"),
                        renamingIdentifier: fa["elementID"], versionHashModifier: fa["versionHashModifier"]))
                } else if parent == "model" {
                    templates.append(template)
                }
            case "configuration" where parent == "model":
                configurationName = a["name"]
                if let c = configurationName { configurations[c] = [] }
            case "memberEntity":
                if let c = configurationName, let e = a["name"] { configurations[c, default: []].append(e) }
            case "uniquenessConstraint":
                currentConstraint = []
            case "constraint":
                if let v = a["value"] { currentConstraint?.append(v) }
            case "compoundIndex":
                currentCompound = []
            case "index":
                if let v = a["value"] { currentCompound?.append(v) }
            case "fetchIndex":
                currentFetchIndex = FetchIndexDescription(name: a["name"] ?? "", elements: [], partialIndexPredicate: a["partialIndexExpression"])
            case "fetchIndexElement":
                if let p = a["property"] ?? a["expression"] {
                    currentFetchIndex?.elements.append(.init(
                        property: p, type: a["type"] ?? "Binary", isAscending: a["order"] != "descending",
                        expression: a["property"] == nil ? a["expression"] : nil))
                }
            case "entry":
                guard let key = a["key"] else { return }
                let value = a["value"] ?? ""
                switch (parent, stack.dropLast().last) {
                case ("userInfo", "entity"):
                    entity?.userInfo[key] = value
                case ("userInfo", "attribute"):
                    if let i = entity?.declaredAttributes.indices.last { entity?.declaredAttributes[i].userInfo[key] = value }
                case ("userInfo", "relationship"):
                    if let i = entity?.declaredRelationships.indices.last { entity?.declaredRelationships[i].userInfo[key] = value }
                case ("userInfo", "fetchedProperty"):
                    if let i = entity?.declaredFetchedProperties.indices.last, entity?.declaredFetchedProperties[i].name == fetchedPropertyName {
                        entity?.declaredFetchedProperties[i].userInfo[key] = value
                    } else {
                        pendingFetchedPropertyUserInfo[key] = value
                    }
                default:
                    break
                }
            default:
                break
            }
        }

        /// Whether elements are still open at the end of the document (a truncated file).
        var hasOpenElements: Bool { !stack.isEmpty }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            guard stack.last == name else {
                return fail(parser, "</\(name)> does not close <\(stack.last ?? "nothing")>: not well-formed XML")
            }
            stack.removeLast()
            switch name {
            case "entity" where stack.last == "model":
                if let e = entity { entities.append(e) }
                entity = nil
            case "fetchedProperty":
                fetchedPropertyName = nil
                pendingFetchedPropertyUserInfo = [:]
            case "configuration":
                configurationName = nil
            case "composite", "compositeAttribute":
                currentComposite = nil
            case "uniquenessConstraint":
                if let c = currentConstraint, !c.isEmpty { entity?.uniquenessConstraints.append(c) }
                currentConstraint = nil
            case "compoundIndex":
                if let c = currentCompound, !c.isEmpty { entity?.compoundIndexes.append(c) }
                currentCompound = nil
            case "fetchIndex":
                if let f = currentFetchIndex { entity?.fetchIndexes.append(f) }
                currentFetchIndex = nil
            default:
                break
            }
        }
    }
}
