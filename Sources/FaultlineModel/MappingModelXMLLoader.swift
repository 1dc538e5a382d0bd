import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// Reads Xcode's `xcmapping.xml`: a Core Data XML store of Xcode's editing objects — one
/// `XDDEVMAPPINGMODEL` (the two models' recorded paths and copies of them in Xcode's own
/// editing format, which are not read), an `XDDEVENTITYMAPPING` per entity mapping, an
/// `XDDEVATTRIBUTEMAPPING` / `XDDEVRELATIONSHIPMAPPING` per property mapping.
///
/// The file holds only what the author set; what Xcode's compiler adds is worked out here from
/// the two models, as `Documentation/Migration.md` ("Mapping models") describes: names
/// (`<Source>To<Destination>`), types (add, remove, copy, transform), the default source
/// expression, `$source.<name>` for attributes, and relationship expressions through the
/// mapping of the related entity.
enum MappingModelXMLLoader {
    /// One `<object>` of the file.
    struct Object {
        var id: String
        var type: String
        var line: Int
        var attributes: [String: String] = [:]
        var relationships: [String: [String]] = [:]

        func string(_ name: String) -> String? {
            guard let s = attributes[name]?.trimmingCharacters(in: .whitespacesAndNewlines), !s.isEmpty else { return nil }
            return s
        }

        func data(_ name: String) -> Data? {
            guard let s = attributes[name], !s.isEmpty else { return nil }
            return Data(base64Encoded: s, options: .ignoreUnknownCharacters)
        }

        func bool(_ name: String) -> Bool? {
            guard let s = string(name) else { return nil }
            return s == "1" || s.uppercased() == "YES" || s.lowercased() == "true"
        }
    }

    static func load(url: URL, sourceModel: ManagedObjectModel?, destinationModel: ManagedObjectModel?) throws -> MappingModel {
        let data = try ModelFileLoader.readFile(url)
        var folder = url.deletingLastPathComponent()
        if folder.pathExtension.lowercased() != "xcmappingmodel" { folder = url }
        return try load(data: data, file: url.path, folder: folder, sourceModel: sourceModel, destinationModel: destinationModel)
    }

    static func load(data: Data, file: String, folder: URL?, sourceModel: ManagedObjectModel?, destinationModel: ManagedObjectModel?) throws -> MappingModel {
        let objects = try parse(data: data, file: file)
        let roots = objects.values.filter { $0.type == "XDDEVMAPPINGMODEL" }
        guard let root = roots.first else {
            throw ModelError(.malformed, "no XDDEVMAPPINGMODEL object: not an Xcode mapping model", file: file)
        }
        guard roots.count == 1 else {
            throw ModelError(.malformed, "\(roots.count) XDDEVMAPPINGMODEL objects (lines \(roots.map(\.line).sorted().map(String.init).joined(separator: ", "))): expected one", file: file)
        }
        let source = try sourceModel ?? findModel(recorded: root.string("sourcemodelpath"), role: "source", folder: folder, file: file)
        let destination = try destinationModel ?? findModel(recorded: root.string("destinationmodelpath"), role: "destination", folder: folder, file: file)

        var mappingObjects: [Object] = []
        for id in root.relationships["entitymappings"] ?? [] {
            guard let object = objects[id], object.type == "XDDEVENTITYMAPPING" else {
                throw ModelError(.malformed, "the mapping model lists entity mapping \(id), which is not an XDDEVENTITYMAPPING object of the file", file: file, line: root.line)
            }
            mappingObjects.append(object)
        }
        // In the order the author gave them (`mappingnumber`), the file's order on a tie.
        mappingObjects = mappingObjects.enumerated().sorted {
            let a = Int($0.element.string("mappingnumber") ?? "") ?? Int.max, b = Int($1.element.string("mappingnumber") ?? "") ?? Int.max
            return a != b ? a < b : $0.offset < $1.offset
        }.map(\.element)

        // Names first: relationship expressions refer to other mappings by name.
        let names = mappingObjects.map { object -> String in
            if let name = object.string("name") { return name }
            switch (object.string("sourcename"), object.string("destinationname")) {
            case let (s?, d?): return "\(s)To\(d)"
            case let (nil, d?): return d
            case let (s?, nil): return s
            case (nil, nil): return "Mapping\(object.string("mappingnumber") ?? object.id)"
            }
        }
        var seen: [String: Int] = [:]
        for (object, name) in zip(mappingObjects, names) {
            if let line = seen[name] {
                throw ModelError(.malformed, "two entity mappings are named \(name) (lines \(line) and \(object.line))", file: file, line: object.line)
            }
            seen[name] = object.line
        }
        // Source entity → the first mapping that carries it over (for relationship expressions).
        var mappingForSourceEntity: [String: String] = [:]
        for (object, name) in zip(mappingObjects, names) {
            if let s = object.string("sourcename"), object.string("destinationname") != nil, mappingForSourceEntity[s] == nil {
                mappingForSourceEntity[s] = name
            }
        }

        var mappings: [MappingModel.EntityMapping] = []
        for (object, name) in zip(mappingObjects, names) {
            mappings.append(
                try entityMapping(
                    object, name: name, objects: objects, source: source, destination: destination,
                    mappingForSourceEntity: mappingForSourceEntity, file: file))
        }
        var model = MappingModel(entityMappings: mappings, sourceDescription: file)
        model.recordedSourceModelPath = root.string("sourcemodelpath")
        model.recordedDestinationModelPath = root.string("destinationmodelpath")
        return model
    }

    private static func entityMapping(
        _ object: Object, name: String, objects: [String: Object], source: ManagedObjectModel, destination: ManagedObjectModel,
        mappingForSourceEntity: [String: String], file: String
    ) throws -> MappingModel.EntityMapping {
        let sourceName = object.string("sourcename")
        let destinationName = object.string("destinationname")
        let sourceEntity = try sourceName.map { n -> EntityDescription in
            guard let e = source.entity(named: n) else {
                throw ModelError(.invalidModel, "entity mapping \(name): the source model has no entity \(n)", file: file, line: object.line, entity: n)
            }
            return e
        }
        let destinationEntity = try destinationName.map { n -> EntityDescription in
            guard let e = destination.entity(named: n) else {
                throw ModelError(.invalidModel, "entity mapping \(name): the destination model has no entity \(n)", file: file, line: object.line, entity: n)
            }
            return e
        }
        let sourceHash = sourceName.flatMap { source.entityVersionHashesByName[$0] }
        let destinationHash = destinationName.flatMap { destination.entityVersionHashesByName[$0] }

        let policy = object.string("migrationpolicyclassname")
        var type: MappingModel.EntityMapping.MappingType
        switch object.string("mappingtypename")?.lowercased() ?? "undefined" {
        case "undefined":
            if sourceEntity == nil && destinationEntity == nil {
                throw ModelError(.malformed, "entity mapping \(name) names neither a source nor a destination entity", file: file, line: object.line)
            }
            if sourceEntity == nil { type = .add } else if destinationEntity == nil { type = .remove } else { type = sourceHash == destinationHash ? .copy : .transform }
        case "custom": type = .custom
        case "add": type = .add
        case "remove": type = .remove
        case "copy": type = .copy
        case "transform": type = .transform
        case let other:
            throw ModelError(.unsupportedFormat, "entity mapping \(name): unknown mapping type \(other)", file: file, line: object.line)
        }
        if type != .custom, let policy, policy != "NSEntityMigrationPolicy" { type = .custom }

        var sourceExpression: String?
        if let archived = object.data("sourceexpressiondata"), object.bool("autogenerateexpression") != true {
            sourceExpression = try archivedExpression(archived, what: "entity mapping \(name): the source expression", file: file, line: object.line)
        } else if let sourceName, type != .add {
            sourceExpression = MappingModel.EntityMapping.defaultSourceExpression(entityName: sourceName, predicate: object.string("sourcefilterpredicatestring") ?? "TRUEPREDICATE")
        }

        var attributes: [MappingModel.PropertyMapping] = []
        for id in object.relationships["attributemappings"] ?? [] {
            guard let p = objects[id], p.type == "XDDEVATTRIBUTEMAPPING" else {
                throw ModelError(.malformed, "entity mapping \(name) lists attribute mapping \(id), which is not an XDDEVATTRIBUTEMAPPING object of the file", file: file, line: object.line)
            }
            guard let propertyName = p.string("name") else {
                throw ModelError(.malformed, "entity mapping \(name): an attribute mapping has no name", file: file, line: p.line)
            }
            var expression: String?
            if let archived = p.data("valueexpressiondata") {
                expression = try archivedExpression(archived, what: "entity mapping \(name), attribute \(propertyName): the value expression", file: file, line: p.line)
            } else if let sourceEntity, sourceEntity.attribute(named: propertyName) != nil {
                expression = "$source.\(propertyName)"
            }
            attributes.append(MappingModel.PropertyMapping(name: propertyName, valueExpression: expression, userInfo: userInfo(p)))
        }

        var relationships: [MappingModel.PropertyMapping] = []
        for id in object.relationships["relationshipmappings"] ?? [] {
            guard let p = objects[id], p.type == "XDDEVRELATIONSHIPMAPPING" else {
                throw ModelError(.malformed, "entity mapping \(name) lists relationship mapping \(id), which is not an XDDEVRELATIONSHIPMAPPING object of the file", file: file, line: object.line)
            }
            guard let propertyName = p.string("name") else {
                throw ModelError(.malformed, "entity mapping \(name): a relationship mapping has no name", file: file, line: p.line)
            }
            var expression: String?
            if let archived = p.data("valueexpressiondata"), p.bool("autogenerateexpression") != true {
                expression = try archivedExpression(archived, what: "entity mapping \(name), relationship \(propertyName): the value expression", file: file, line: p.line)
            } else if let sourceEntity {
                // A key path and a mapping spelled out, else the source's relationship of the
                // same name through the mapping that carries its destination entity.
                var keyPath = p.string("sourcekeypath")
                var through = p.string("sourcemappingname")
                if keyPath == nil, let r = sourceEntity.relationship(named: propertyName) {
                    keyPath = "$source.\(propertyName)"
                    if through == nil { through = mappingForSourceEntity[r.destinationEntityName] }
                }
                if var keyPath, let through {
                    if !keyPath.hasPrefix("$") { keyPath = "$source." + keyPath }
                    expression = "FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \(quoted(through)), \(keyPath))"
                }
            }
            relationships.append(MappingModel.PropertyMapping(name: propertyName, valueExpression: expression, userInfo: userInfo(p)))
        }

        return MappingModel.EntityMapping(
            name: name, mappingType: type, sourceEntityName: sourceName, destinationEntityName: destinationName,
            sourceEntityVersionHash: sourceHash, destinationEntityVersionHash: destinationHash,
            sourceExpression: sourceExpression, entityMigrationPolicyClassName: policy,
            attributeMappings: attributes, relationshipMappings: relationships, userInfo: userInfo(object))
    }

    /// An archived `NSExpression` (`valueexpressiondata`) as format text.
    static func archivedExpression(_ data: Data, what: String, file: String, line: Int) throws -> String {
        let archive: KeyedArchive
        do {
            archive = try KeyedArchive(data: data)
        } catch let failure as KeyedArchive.Failure {
            throw ModelError(.malformed, "\(what) is not a keyed archive: \(failure.message)", file: file, line: line)
        }
        guard let text = ArchivedPredicateDecoder(archive: archive).expression(archive.root), !text.contains("<") else {
            throw ModelError(.unsupportedFormat, "\(what) is an archived expression of a kind Faultline does not read", file: file, line: line)
        }
        return text
    }

    private static func userInfo(_ object: Object) -> [String: String] {
        guard let data = object.data("userinfodata"), let archive = try? KeyedArchive(data: data) else { return [:] }
        return archive.stringDictionary(archive.root)
    }

    /// The model at a path Xcode recorded (relative to the project), looked for from the
    /// mapping model's folder upwards.
    static func findModel(recorded: String?, role: String, folder: URL?, file: String) throws -> ManagedObjectModel {
        guard let recorded else {
            throw ModelError(.malformed, "the mapping model records no \(role) model path; pass the \(role) model", file: file)
        }
        var candidates: [URL] = []
        var directory = folder?.deletingLastPathComponent()
        var steps = 0
        while let d = directory, steps < 16 {
            candidates.append(d.appendingPathComponent(recorded))
            candidates.append(d.appendingPathComponent((recorded as NSString).lastPathComponent))
            // `Project/Models.xcdatamodeld/Models 2.xcdatamodel` next to the mapping model.
            let components = recorded.split(separator: "/")
            if components.count >= 2 { candidates.append(d.appendingPathComponent(components.suffix(2).joined(separator: "/"))) }
            if d.path == "/" { break }
            directory = d.deletingLastPathComponent()
            steps += 1
        }
        for candidate in candidates where FileManager.default.fileExists(atPath: candidate.path) {
            return try ManagedObjectModel(contentsOf: candidate)
        }
        throw ModelError(.unreadable, "the \(role) model \(recorded) was not found near the mapping model; pass the \(role) model", file: file)
    }

    /// Every `<object>` by id.
    static func parse(data: Data, file: String) throws -> [String: Object] {
        if let bad = XMLModelLoader.firstInvalidUTF8(data) {
            throw ModelError(.malformed, "not UTF-8: invalid byte 0x\(String(format: "%02X", bad.byte)) at column \(bad.column)", file: file, line: bad.line)
        }
        let delegate = Delegate(file: file)
        let parser = XMLParser(data: data)
        parser.delegate = delegate
        let ok = parser.parse()
        if let error = delegate.error { throw error }
        if !ok {
            let reason = parser.parserError.map { ($0 as NSError).localizedDescription } ?? "unknown XML error"
            throw ModelError(.malformed, "not well-formed XML (\(reason))", file: file, line: max(parser.lineNumber, 1))
        }
        guard delegate.sawDatabase else {
            throw ModelError(.malformed, "no <database> element: not an Xcode mapping model", file: file, line: 1)
        }
        return delegate.objects
    }

    private final class Delegate: NSObject, XMLParserDelegate {
        let file: String
        var error: ModelError?
        var sawDatabase = false
        var objects: [String: Object] = [:]
        private var current: Object?
        private var attributeName: String?
        private var text = ""
        private var depth = 0

        init(file: String) { self.file = file }

        func fail(_ parser: XMLParser, _ message: String) {
            guard error == nil else { return }
            error = ModelError(.malformed, message, file: file, line: parser.lineNumber)
            parser.abortParsing()
        }

        func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?, attributes a: [String: String] = [:]) {
            depth += 1
            guard depth <= 64 else { return fail(parser, "elements nested more than 64 deep") }
            switch name {
            case "database":
                sawDatabase = true
            case "object":
                guard let id = a["id"], let type = a["type"] else { return fail(parser, "an <object> without id or type") }
                guard objects[id] == nil else { return fail(parser, "two objects with id \(id)") }
                current = Object(id: id, type: type.uppercased(), line: parser.lineNumber)
            case "attribute" where current != nil:
                guard let n = a["name"] else { return fail(parser, "an <attribute> without a name") }
                attributeName = n.lowercased()
                text = ""
            case "relationship" where current != nil:
                guard let n = a["name"] else { return fail(parser, "a <relationship> without a name") }
                let ids = (a["idrefs"] ?? "").split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" }).map(String.init)
                current?.relationships[n.lowercased()] = ids
            default:
                break
            }
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            if attributeName != nil { text += string }
        }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            depth -= 1
            switch name {
            case "attribute":
                if let n = attributeName { current?.attributes[n] = text }
                attributeName = nil
            case "object":
                if let object = current { objects[object.id] = object }
                current = nil
            default:
                break
            }
        }
    }
}
