import Foundation

/// How the entities and properties of one model version map onto the next, as Core Data's
/// lightweight migration infers it (`NSMappingModel.inferredMappingModel(forSourceModel:destinationModel:)`),
/// with every difference and whether Core Data can infer it.
///
/// The mapping is pure and deterministic: it reads the two models only. An executor walks it
/// destination-first: each ``InferredEntityMapping`` gives a destination entity and the source
/// entity its rows come from (nil for a new entity), and for each destination attribute and
/// relationship the source property its values come from (nil for a new one).
///
/// Elements are matched as Core Data matches them: by *renaming identifier*, which is the
/// element's `renamingIdentifier` (XML `elementID`) or, when it has none, its name. A
/// destination element whose renaming identifier names an unmatched source element is
/// matched to it too (the identifier "names the source element").
///
/// ```swift
/// let old = try ManagedObjectModel(contentsOf: bundle, version: "Notes 2")
/// let new = try ManagedObjectModel(contentsOf: bundle, version: "Notes 3")
/// let mapping = new.inferredMapping(from: old)
/// if !mapping.isInferable { print(mapping.problems.joined(separator: "\n")) }
/// for entity in mapping.entityMappings {
///     print(entity.destination.name, "←", entity.source?.name ?? "(new)")
/// }
/// ```
public struct InferredMapping: Sendable, Hashable {
    /// One mapping per destination entity, sorted by destination entity name.
    public let entityMappings: [InferredEntityMapping]
    /// The source entities no destination entity maps from, sorted by name.
    public let removedEntities: [EntityDescription]
    /// Every change, entities sorted by name (removed ones among them), entity-level changes
    /// first, then property changes sorted by property name. A property change is listed
    /// once, under the entity that declares the property.
    public let changes: [ModelChange]
    /// The source model's entity version hashes (what a store made by it records).
    public let sourceVersionHashes: [String: Data]
    /// The destination model's entity version hashes.
    public let destinationVersionHashes: [String: Data]

    /// Why Core Data cannot infer this mapping, one sentence per change it cannot infer, in
    /// the order of ``changes``; empty when it can.
    public var problems: [String] {
        var seen: Set<String> = []
        return changes.compactMap(\.problem).filter { seen.insert($0).inserted }
    }

    /// Whether Core Data's lightweight migration can infer the whole mapping.
    public var isInferable: Bool { changes.allSatisfy(\.isInferable) }

    /// Whether a store made by the source model needs migrating to be opened with the
    /// destination model: some entity's version hash differs, or only one side has it.
    public var requiresMigration: Bool { sourceVersionHashes != destinationVersionHashes }

    /// The mapping of a destination entity, by its destination name.
    public func entityMapping(forDestination name: String) -> InferredEntityMapping? {
        entityMappings.first { $0.destination.name == name }
    }

    /// The mapping fed by a source entity, by its source name; nil when the entity was removed.
    public func entityMapping(forSource name: String) -> InferredEntityMapping? {
        entityMappings.first { $0.source?.name == name }
    }

    /// Works out the mapping from `source` to `destination`.
    public init(source: ManagedObjectModel, destination: ManagedObjectModel) {
        self = MappingInference(source: source, destination: destination).run()
    }

    init(entityMappings: [InferredEntityMapping], removedEntities: [EntityDescription], changes: [ModelChange], sourceVersionHashes: [String: Data], destinationVersionHashes: [String: Data]) {
        self.entityMappings = entityMappings
        self.removedEntities = removedEntities
        self.changes = changes
        self.sourceVersionHashes = sourceVersionHashes
        self.destinationVersionHashes = destinationVersionHashes
    }
}

/// How one destination entity is fed: from which source entity, and property by property.
public struct InferredEntityMapping: Sendable, Hashable {
    /// The destination entity (inheritance resolved).
    public let destination: EntityDescription
    /// The source entity its instances come from; nil for an entity new in the destination.
    public let source: EntityDescription?
    /// One mapping per destination attribute, inherited ones included, sorted by name.
    public let attributes: [AttributeMapping]
    /// One mapping per destination relationship, inherited ones included, sorted by name.
    public let relationships: [RelationshipMapping]
    /// Source attributes (inherited ones included) no destination attribute maps from.
    public let removedAttributes: [AttributeDescription]
    /// Source relationships (inherited ones included) no destination relationship maps from.
    public let removedRelationships: [RelationshipDescription]
    /// The changes to the entity itself (added, renamed, parent, abstract, constraints,
    /// indexes, version hash modifier); property changes are in the property mappings.
    public let entityChanges: [ModelChange]
    /// The changes listed for this entity in ``InferredMapping/changes``: its own, then those
    /// of the properties it declares (inherited ones are listed under their entity), sorted
    /// by property name, removed ones included.
    public internal(set) var changes: [ModelChange] = []

    /// Whether the entity maps from a source entity of another name.
    public var isRenamed: Bool { source.map { $0.name != destination.name } ?? false }
    /// The source entity's version hash (nil for a new entity).
    public var sourceVersionHash: Data? { source?.versionHash }
    /// The destination entity's version hash.
    public var destinationVersionHash: Data { destination.versionHash }
    /// Whether the entity's version hash changed (always true for a new entity).
    public var versionHashChanged: Bool { sourceVersionHash != destinationVersionHash }

    /// The mapping of a destination attribute, by name.
    public func attribute(named name: String) -> AttributeMapping? { attributes.first { $0.destination.name == name } }
    /// The mapping of a destination relationship, by name.
    public func relationship(named name: String) -> RelationshipMapping? { relationships.first { $0.destination.name == name } }

    /// Every change of this entity and of the properties it maps (inherited ones included),
    /// removed properties last.
    public var allChanges: [ModelChange] {
        var out = entityChanges
        out += attributes.flatMap(\.changes)
        out += relationships.flatMap(\.changes)
        out += removedAttributes.map { ModelChange(.attribute(entity: destination.name, name: $0.name), .removed) }
        out += removedRelationships.map { ModelChange(.relationship(entity: destination.name, name: $0.name), .removed) }
        return out
    }
}

/// How one destination attribute is fed.
public struct AttributeMapping: Sendable, Hashable {
    /// The destination attribute.
    public let destination: AttributeDescription
    /// The source attribute its values come from; nil for a new attribute (it starts with
    /// its default value, or nil).
    public let source: AttributeDescription?
    /// Whether the destination entity inherits the attribute from a parent entity.
    public let isInherited: Bool
    /// What changed (empty when the attribute is the same).
    public let changes: [ModelChange]

    /// Whether the attribute maps from a source attribute of another name.
    public var isRenamed: Bool { source.map { $0.name != destination.name } ?? false }
}

/// How one destination relationship is fed.
public struct RelationshipMapping: Sendable, Hashable {
    /// The destination relationship.
    public let destination: RelationshipDescription
    /// The source relationship its destinations come from; nil for a new relationship.
    public let source: RelationshipDescription?
    /// Whether the destination entity inherits the relationship from a parent entity.
    public let isInherited: Bool
    /// What changed (empty when the relationship is the same).
    public let changes: [ModelChange]

    /// Whether the relationship maps from a source relationship of another name.
    public var isRenamed: Bool { source.map { $0.name != destination.name } ?? false }
}

extension ManagedObjectModel {
    /// The mapping Core Data would infer to migrate a store made by `source` to this model.
    public func inferredMapping(from source: ManagedObjectModel) -> InferredMapping {
        InferredMapping(source: source, destination: self)
    }
}

// MARK: - Inference

/// Matches elements by renaming identifier, then compares each matched pair.
struct MappingInference {
    let source: ManagedObjectModel
    let destination: ManagedObjectModel

    /// The numeric types between which lightweight migration converts values.
    static let numericTypes: Set<AttributeType> = [.integer16, .integer32, .integer64, .decimal, .double, .float]

    /// Destination element index → source element index, by renaming identifier first, then
    /// by a destination renaming identifier that names an unmatched source element.
    static func match(destination: [(name: String, identifier: String?)], source: [(name: String, identifier: String?)]) -> [Int: Int] {
        func key(_ e: (name: String, identifier: String?)) -> String {
            if let id = e.identifier, !id.isEmpty { return id }
            return e.name
        }
        var byKey: [String: [Int]] = [:]
        for (i, s) in source.enumerated() { byKey[key(s), default: []].append(i) }
        var used: Set<Int> = []
        var result: [Int: Int] = [:]
        for (i, d) in destination.enumerated() {
            let candidates = (byKey[key(d)] ?? []).filter { !used.contains($0) }
            // Several source elements sharing an identifier: the one of the same name, then
            // the one named by the identifier, then the first.
            let pick = candidates.first { source[$0].name == d.name } ?? candidates.first { source[$0].name == key(d) } ?? candidates.first
            if let pick {
                result[i] = pick
                used.insert(pick)
            }
        }
        for (i, d) in destination.enumerated() where result[i] == nil {
            guard let id = d.identifier, !id.isEmpty else { continue }
            if let pick = source.indices.first(where: { !used.contains($0) && source[$0].name == id }) {
                result[i] = pick
                used.insert(pick)
            }
        }
        return result
    }

    func run() -> InferredMapping {
        // Entities.
        let dEntities = destination.entities
        let sEntities = source.entities
        let entityPairs = Self.match(
            destination: dEntities.map { ($0.name, $0.renamingIdentifier) },
            source: sEntities.map { ($0.name, $0.renamingIdentifier) })
        var sourceOf: [String: EntityDescription] = [:]  // destination entity name → source entity
        var destinationNameOf: [String: String] = [:]  // source entity name → destination entity name
        for (d, s) in entityPairs {
            sourceOf[dEntities[d].name] = sEntities[s]
            destinationNameOf[sEntities[s].name] = dEntities[d].name
        }
        // Properties: per matched entity, destination name → source property name, and the
        // reverse (source entity, source property) → destination property name.
        var propertyRenames: [String: [String: String]] = [:]  // source entity → source property → destination property
        var matched: [String: (attributes: [Int: Int], relationships: [Int: Int])] = [:]
        for e in dEntities {
            guard let s = sourceOf[e.name] else { continue }
            let a = Self.match(destination: e.attributes.map { ($0.name, $0.renamingIdentifier) }, source: s.attributes.map { ($0.name, $0.renamingIdentifier) })
            let r = Self.match(destination: e.relationships.map { ($0.name, $0.renamingIdentifier) }, source: s.relationships.map { ($0.name, $0.renamingIdentifier) })
            matched[e.name] = (a, r)
            var renames: [String: String] = [:]
            for (d, si) in a { renames[s.attributes[si].name] = e.attributes[d].name }
            for (d, si) in r { renames[s.relationships[si].name] = e.relationships[d].name }
            propertyRenames[s.name] = renames
        }
        let context = Context(source: source, destination: destination, sourceOf: sourceOf, destinationNameOf: destinationNameOf, propertyRenames: propertyRenames)

        var mappings: [InferredEntityMapping] = []
        var listed: [(name: String, changes: [ModelChange])] = []
        for e in dEntities {
            guard let s = sourceOf[e.name], let pairs = matched[e.name] else {
                let changes = [ModelChange(.entity(e.name), .added)]
                var attributes: [AttributeMapping] = []
                var relationships: [RelationshipMapping] = []
                let declared = Set(e.declaredAttributes.map(\.name) + e.declaredRelationships.map(\.name))
                // A new entity has no existing objects: each of its properties is simply added.
                for a in e.attributes {
                    let added = ModelChange(.attribute(entity: e.name, name: a.name), .added)
                    attributes.append(AttributeMapping(destination: a, source: nil, isInherited: !declared.contains(a.name), changes: [added]))
                }
                for r in e.relationships {
                    let added = ModelChange(.relationship(entity: e.name, name: r.name), .added)
                    relationships.append(RelationshipMapping(destination: r, source: nil, isInherited: !declared.contains(r.name), changes: [added]))
                }
                var mapping = InferredEntityMapping(destination: e, source: nil, attributes: attributes, relationships: relationships, removedAttributes: [], removedRelationships: [], entityChanges: [changes[0]])
                mapping.changes = changes
                mappings.append(mapping)
                listed.append((e.name, changes))
                continue
            }
            var mapping = context.entityMapping(destination: e, source: s, attributePairs: pairs.attributes, relationshipPairs: pairs.relationships)
            // List each property change once, under the entity that declares the property.
            let declaredS = Set(s.declaredAttributes.map(\.name) + s.declaredRelationships.map(\.name))
            var propertyChanges: [(String, ModelChange)] = []
            for a in mapping.attributes where !a.isInherited { propertyChanges += a.changes.map { (a.destination.name, $0) } }
            for r in mapping.relationships where !r.isInherited { propertyChanges += r.changes.map { (r.destination.name, $0) } }
            for a in mapping.removedAttributes where declaredS.contains(a.name) {
                propertyChanges.append((a.name, ModelChange(.attribute(entity: e.name, name: a.name), .removed)))
            }
            for r in mapping.removedRelationships where declaredS.contains(r.name) {
                propertyChanges.append((r.name, ModelChange(.relationship(entity: e.name, name: r.name), .removed)))
            }
            let sorted = propertyChanges.enumerated().sorted { ($0.element.0, $0.offset) < ($1.element.0, $1.offset) }.map(\.element.1)
            mapping.changes = mapping.entityChanges + sorted
            mappings.append(mapping)
            listed.append((e.name, mapping.changes))
        }
        let removed = sEntities.filter { destinationNameOf[$0.name] == nil }
        for s in removed { listed.append((s.name, [ModelChange(.entity(s.name), .removed)])) }
        let changes = listed.enumerated().sorted { ($0.element.name, $0.offset) < ($1.element.name, $1.offset) }.flatMap(\.element.changes)
        return InferredMapping(
            entityMappings: mappings, removedEntities: removed, changes: changes,
            sourceVersionHashes: source.entityVersionHashesByName, destinationVersionHashes: destination.entityVersionHashesByName)
    }

    /// What the comparisons need to know about the whole matching.
    struct Context {
        let source: ManagedObjectModel
        let destination: ManagedObjectModel
        let sourceOf: [String: EntityDescription]
        let destinationNameOf: [String: String]
        let propertyRenames: [String: [String: String]]

        func hasDefault(_ a: AttributeDescription) -> Bool {
            a.defaultValueString != nil || a.defaultDateTimeInterval != nil
        }

        /// A property name of a source entity, in destination terms.
        func renamed(_ property: String, in sourceEntity: String) -> String {
            propertyRenames[sourceEntity]?[property] ?? property
        }

        /// A source entity name, in destination terms (itself when it was removed).
        func renamedEntity(_ name: String) -> String { destinationNameOf[name] ?? name }

        func addedAttribute(_ a: AttributeDescription, entity: String) -> ModelChange {
            let element = ModelChange.Element.attribute(entity: entity, name: a.name)
            if !a.isTransient && !a.isOptional && !hasDefault(a) && !a.isDerived {
                return ModelChange(element, .added, problem: "attribute \(entity).\(a.name) was added as non-optional without a default value, so existing objects would have no value")
            }
            return ModelChange(element, .added)
        }

        func addedRelationship(_ r: RelationshipDescription, entity: String) -> ModelChange {
            let element = ModelChange.Element.relationship(entity: entity, name: r.name)
            if !r.isTransient && ((!r.isOptional && r.isToOne) || r.minCount > 0) {
                return ModelChange(element, .added, note: "required: existing objects have no destination until one is set")
            }
            return ModelChange(element, .added)
        }

        func entityMapping(destination e: EntityDescription, source s: EntityDescription, attributePairs: [Int: Int], relationshipPairs: [Int: Int]) -> InferredEntityMapping {
            let element = ModelChange.Element.entity(e.name)
            var entityChanges: [ModelChange] = []
            if s.name != e.name { entityChanges.append(ModelChange(element, .renamed(from: s.name))) }
            // Parent, in destination terms.
            let oldParent = s.superentityName.map(renamedEntity)
            if oldParent != e.superentityName {
                entityChanges.append(ModelChange(element, .parentChanged(from: s.superentityName, to: e.superentityName), problem: mergeProblem(e)))
            }
            if s.isAbstract != e.isAbstract {
                entityChanges.append(ModelChange(
                    element, .abstractChanged(from: s.isAbstract, to: e.isAbstract),
                    problem: e.isAbstract ? "entity \(e.name) became abstract, so its existing instances could not be kept" : nil))
            }
            let oldConstraints = constraintTexts(s.uniquenessConstraints, sourceEntity: s.name)
            let newConstraints = constraintTexts(e.uniquenessConstraints, sourceEntity: nil)
            if oldConstraints != newConstraints {
                let added = newConstraints.filter { !oldConstraints.contains($0) }
                entityChanges.append(ModelChange(
                    element, .uniquenessConstraintsChanged(from: oldConstraints, to: newConstraints),
                    note: added.isEmpty ? nil : "existing objects must already be unique on \(added.map { "(\($0))" }.joined(separator: ", "))"))
            }
            let oldIndexes = indexTexts(s, sourceEntity: s.name)
            let newIndexes = indexTexts(e, sourceEntity: nil)
            if oldIndexes != newIndexes {
                entityChanges.append(ModelChange(element, .indexesChanged(from: oldIndexes, to: newIndexes)))
            }
            if (s.versionHashModifier ?? "") != (e.versionHashModifier ?? "") {
                entityChanges.append(ModelChange(element, .versionHashModifierChanged(from: s.versionHashModifier, to: e.versionHashModifier)))
            }

            let declared = Set(e.declaredAttributes.map(\.name) + e.declaredRelationships.map(\.name))
            let matchedSourceAttributes = Set(attributePairs.values)
            let matchedSourceRelationships = Set(relationshipPairs.values)
            // A property that changed kind: an unmatched destination property whose
            // identifier matches an unmatched source property of the other kind.
            func identifier(_ name: String, _ rid: String?) -> String { (rid?.isEmpty == false ? rid : nil) ?? name }
            let unmatchedSourceAttributes = Dictionary(
                s.attributes.indices.filter { !matchedSourceAttributes.contains($0) }.map { (identifier(s.attributes[$0].name, s.attributes[$0].renamingIdentifier), s.attributes[$0].name) },
                uniquingKeysWith: { a, _ in a })
            let unmatchedSourceRelationships = Dictionary(
                s.relationships.indices.filter { !matchedSourceRelationships.contains($0) }.map { (identifier(s.relationships[$0].name, s.relationships[$0].renamingIdentifier), s.relationships[$0].name) },
                uniquingKeysWith: { a, _ in a })

            var attributes: [AttributeMapping] = []
            for (i, a) in e.attributes.enumerated() {
                let old = attributePairs[i].map { s.attributes[$0] }
                var changes: [ModelChange]
                if let old {
                    changes = attributeChanges(old, a, entity: e.name)
                } else if let was = unmatchedSourceRelationships[identifier(a.name, a.renamingIdentifier)] {
                    var change = addedAttribute(a, entity: e.name)
                    change.kind = .propertyKindChanged(fromAttribute: false)
                    change.note = "added as a new attribute; the relationship \(s.name).\(was) is removed and its values are not carried over"
                    changes = [change]
                } else {
                    changes = [addedAttribute(a, entity: e.name)]
                }
                attributes.append(AttributeMapping(destination: a, source: old, isInherited: !declared.contains(a.name), changes: changes))
            }
            var relationships: [RelationshipMapping] = []
            for (i, r) in e.relationships.enumerated() {
                let old = relationshipPairs[i].map { s.relationships[$0] }
                var changes: [ModelChange]
                if let old {
                    changes = relationshipChanges(old, r, entity: e.name)
                } else if let was = unmatchedSourceAttributes[identifier(r.name, r.renamingIdentifier)] {
                    var change = addedRelationship(r, entity: e.name)
                    change.kind = .propertyKindChanged(fromAttribute: true)
                    change.note = "added as a new relationship; the attribute \(s.name).\(was) is removed and its values are not carried over"
                    changes = [change]
                } else {
                    changes = [addedRelationship(r, entity: e.name)]
                }
                relationships.append(RelationshipMapping(destination: r, source: old, isInherited: !declared.contains(r.name), changes: changes))
            }
            return InferredEntityMapping(
                destination: e, source: s, attributes: attributes, relationships: relationships,
                removedAttributes: s.attributes.indices.filter { !matchedSourceAttributes.contains($0) }.map { s.attributes[$0] },
                removedRelationships: s.relationships.indices.filter { !matchedSourceRelationships.contains($0) }.map { s.relationships[$0] },
                entityChanges: entityChanges)
        }

        /// Lightweight migration cannot merge entity hierarchies: the existing entities of a
        /// destination hierarchy, its root included, must come from one source hierarchy. A new
        /// entity may become the parent ("a new parent"); an existing root may not take in
        /// another existing hierarchy, whose rows would share its table and collide on their
        /// primary keys (Core Data migrates SQLite stores in place, by SQL; renumbering keys
        /// and every reference to them is not something it documents).
        func mergeProblem(_ e: EntityDescription) -> String? {
            let root = destination.rootEntity(of: e)
            var sourceRoots: Set<String> = []
            for member in destination.entityAndDescendants(of: root) {
                guard let s = sourceOf[member.name] else { continue }
                sourceRoots.insert(source.rootEntity(of: s).name)
            }
            guard sourceRoots.count > 1 else { return nil }
            return "entity \(e.name) joins the hierarchy of \(root.name), which would merge the separate source hierarchies of \(sourceRoots.sorted().joined(separator: ", ")); lightweight migration cannot merge entity hierarchies"
        }

        func constraintTexts(_ constraints: [[String]], sourceEntity: String?) -> [String] {
            constraints.filter { !$0.isEmpty }.map { c in
                c.map { property in sourceEntity.map { renamed(property, in: $0) } ?? property }.joined(separator: ",")
            }.sorted()
        }

        func indexTexts(_ entity: EntityDescription, sourceEntity: String?) -> [String] {
            func name(_ p: String) -> String { sourceEntity.map { renamed(p, in: $0) } ?? p }
            var out: [String] = []
            for a in entity.declaredAttributes where a.isIndexed { out.append("\(name(a.name)) (indexed)") }
            for c in entity.compoundIndexes where !c.isEmpty { out.append("compound(\(c.map(name).joined(separator: ", ")))") }
            for f in entity.fetchIndexes {
                let elements = f.elements.map { el in (el.expression ?? name(el.property)) + (el.isAscending ? "" : " desc") + (el.type == "Binary" ? "" : " \(el.type)") }
                var text = "\(f.name)(\(elements.joined(separator: ", ")))"
                if let p = f.partialIndexPredicate { text += " where \(p)" }
                out.append(text)
            }
            return out.sorted()
        }

        func attributeChanges(_ a: AttributeDescription, _ b: AttributeDescription, entity: String) -> [ModelChange] {
            let element = ModelChange.Element.attribute(entity: entity, name: b.name)
            let label = "attribute \(entity).\(b.name)"
            var out: [ModelChange] = []
            if a.name != b.name { out.append(ModelChange(element, .renamed(from: a.name))) }
            if a.attributeType != b.attributeType {
                let numeric = MappingInference.numericTypes.contains(a.attributeType) && MappingInference.numericTypes.contains(b.attributeType)
                out.append(ModelChange(
                    element, .typeChanged(from: a.attributeType, to: b.attributeType),
                    problem: numeric || b.isTransient ? nil : "\(label) changed type from \(a.attributeType.xmlName) to \(b.attributeType.xmlName), which lightweight migration does not convert"))
            }
            if a.isTransient != b.isTransient {
                let stored = !b.isTransient
                out.append(ModelChange(
                    element, .transientChanged(from: a.isTransient, to: b.isTransient),
                    problem: stored && !b.isOptional && !hasDefault(b) && !b.isDerived ? "\(label) became stored as non-optional without a default value, so existing objects would have no value" : nil))
            }
            if a.isOptional != b.isOptional {
                let required = !b.isOptional
                out.append(ModelChange(
                    element, .optionalityChanged(from: a.isOptional, to: b.isOptional),
                    problem: required && !b.isTransient && !hasDefault(b) && !b.isDerived ? "\(label) became non-optional without a default value" : nil))
            }
            let oldDefault = a.attributeType == .date ? a.defaultDateTimeInterval.map { String($0) } ?? a.defaultValueString : a.defaultValueString
            let newDefault = b.attributeType == .date ? b.defaultDateTimeInterval.map { String($0) } ?? b.defaultValueString : b.defaultValueString
            if oldDefault != newDefault { out.append(ModelChange(element, .defaultValueChanged(from: oldDefault, to: newDefault))) }
            if a.derivationExpression != b.derivationExpression || (a.isDerived && a.filteringPredicateFormat != b.filteringPredicateFormat) {
                out.append(ModelChange(element, .derivationChanged(from: a.derivationExpression, to: b.derivationExpression)))
            }
            if a.isReadOnly != b.isReadOnly { out.append(ModelChange(element, .readOnlyChanged(from: a.isReadOnly, to: b.isReadOnly))) }
            if a.allowsExternalBinaryDataStorage != b.allowsExternalBinaryDataStorage {
                out.append(ModelChange(element, .externalStorageChanged(from: a.allowsExternalBinaryDataStorage, to: b.allowsExternalBinaryDataStorage)))
            }
            if a.preservesValueInHistoryOnDeletion != b.preservesValueInHistoryOnDeletion {
                out.append(ModelChange(element, .preservesValueInHistoryChanged(from: a.preservesValueInHistoryOnDeletion, to: b.preservesValueInHistoryOnDeletion)))
            }
            if (a.versionHashModifier ?? "") != (b.versionHashModifier ?? "") {
                out.append(ModelChange(element, .versionHashModifierChanged(from: a.versionHashModifier, to: b.versionHashModifier)))
            }
            return out
        }

        func relationshipChanges(_ a: RelationshipDescription, _ b: RelationshipDescription, entity: String) -> [ModelChange] {
            let element = ModelChange.Element.relationship(entity: entity, name: b.name)
            let label = "relationship \(entity).\(b.name)"
            var out: [ModelChange] = []
            if a.name != b.name { out.append(ModelChange(element, .renamed(from: a.name))) }
            if renamedEntity(a.destinationEntityName) != b.destinationEntityName {
                let oldTarget = destinationNameOf[a.destinationEntityName].map { "\($0) (from \(a.destinationEntityName))" } ?? "\(a.destinationEntityName) (removed)"
                out.append(ModelChange(
                    element, .destinationChanged(from: a.destinationEntityName, to: b.destinationEntityName),
                    note: "destinations are kept only where they map to \(b.destinationEntityName); it was \(oldTarget)"))
            }
            let oldInverse = a.inverseName.map { renamed($0, in: a.destinationEntityName) }
            if oldInverse != b.inverseName { out.append(ModelChange(element, .inverseChanged(from: a.inverseName, to: b.inverseName))) }
            let oldKind = ModelChange.RelationshipKind(a), newKind = ModelChange.RelationshipKind(b)
            if oldKind != newKind {
                out.append(ModelChange(
                    element, .relationshipKindChanged(from: oldKind, to: newKind),
                    problem: oldKind != .toOne && newKind == .toOne ? "\(label) changed from \(oldKind) to to-one, which would drop all but one destination" : nil))
            } else if a.minCount != b.minCount || a.maxCount != b.maxCount {
                out.append(ModelChange(element, .countChanged(fromMin: a.minCount, fromMax: a.maxCount, toMin: b.minCount, toMax: b.maxCount)))
            }
            if a.isTransient != b.isTransient { out.append(ModelChange(element, .transientChanged(from: a.isTransient, to: b.isTransient))) }
            if a.isOptional != b.isOptional {
                out.append(ModelChange(
                    element, .optionalityChanged(from: a.isOptional, to: b.isOptional),
                    note: b.isOptional || b.isToMany ? nil : "existing objects without a destination fail validation until one is set"))
            }
            if a.deleteRule != b.deleteRule { out.append(ModelChange(element, .deleteRuleChanged(from: a.deleteRule, to: b.deleteRule))) }
            if a.isReadOnly != b.isReadOnly { out.append(ModelChange(element, .readOnlyChanged(from: a.isReadOnly, to: b.isReadOnly))) }
            if (a.versionHashModifier ?? "") != (b.versionHashModifier ?? "") {
                out.append(ModelChange(element, .versionHashModifierChanged(from: a.versionHashModifier, to: b.versionHashModifier)))
            }
            return out
        }
    }
}
