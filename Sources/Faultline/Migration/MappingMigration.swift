import FaultlineModel
import FaultlinePredicate
import FaultlineSQL
import Foundation

/// A heavyweight migration with a ``MappingModel``: what `NSMigrationManager` does with an
/// explicit mapping model, without custom code.
///
/// The store is migrated into a new file beside it (a hidden temporary name), in Core Data's
/// three stages, entity mapping by entity mapping in the mapping model's order:
///
/// 1. **Create**: the source instances (the mapping's source expression, usually a fetch of
///    the source entity without sub-entities) each get a destination instance whose
///    attributes are the attribute mappings' value expressions, evaluated with `$source`,
///    `$manager`, `$entityMapping` and `$entityPolicy`.
/// 2. **Relationships**: for each (source, destination) pair, the relationship mappings'
///    expressions, typically `FUNCTION($manager,
///    "destinationInstancesForEntityMappingNamed:sourceInstances:", "PetToAnimal",
///    $source.pets)`, with `$destination` bound too.
/// 3. **Validate** and save.
///
/// Then the new file replaces the old one with `rename(2)` (see ``migrateStore(at:)``).
/// Nothing is written before the mapping model has been checked: a custom migration policy
/// class, an unknown entity or property, or an expression that does not parse is refused
/// first, naming the entity mapping (and property).
///
/// ```swift
/// let mapping = try MappingModel(contentsOf: cdmURL)
/// let migration = try MappingMigration(sourceModel: v1, destinationModel: v2, mappingModel: mapping)
/// let result = try migration.migrateStore(at: storeURL)
/// result.createdCounts   // ["PersonToContact": 5, "PetToAnimal": 15]
/// ```
public struct MappingMigration {
    /// The model that made the store.
    public let sourceModel: ManagedObjectModel
    /// The model of the migrated store.
    public let destinationModel: ManagedObjectModel
    /// The mapping model.
    public let mappingModel: MappingModel
    /// The entity mappings, checked and with parsed expressions.
    let plans: [EntityPlan]

    /// What a migration did.
    public struct Result: Sendable {
        /// The migrated store (the URL that was passed in).
        public var storeURL: URL
        /// Destination instances created, by entity mapping name.
        public var createdCounts: [String: Int]
        /// The new store's `Z_UUID` (a new store has a new identifier, as with
        /// `NSMigrationManager`, whose destination is a new store).
        public var storeIdentifier: String
    }

    /// Checks the mapping model against the two models; no file is touched.
    ///
    /// - Throws: ``MappingMigrationError`` naming the entity mapping (and property): a custom
    ///   migration policy class (code Faultline cannot run), a mapping type it cannot apply, an
    ///   entity or property missing from its model, a version hash that does not match, an
    ///   expression that does not parse.
    public init(sourceModel: ManagedObjectModel, destinationModel: ManagedObjectModel, mappingModel: MappingModel) throws {
        self.sourceModel = sourceModel
        self.destinationModel = destinationModel
        self.mappingModel = mappingModel
        do {
            try mappingModel.checkVersionHashes(sourceModel: sourceModel, destinationModel: destinationModel)
        } catch let error as ModelError {
            throw MappingMigrationError(entityMapping: nil, property: nil, error.message, path: mappingModel.sourceDescription)
        }
        var plans: [EntityPlan] = []
        var names: Set<String> = []
        for mapping in mappingModel.entityMappings {
            guard names.insert(mapping.name).inserted else {
                throw MappingMigrationError(entityMapping: mapping.name, property: nil, "two entity mappings have this name", path: mappingModel.sourceDescription)
            }
            plans.append(try EntityPlan(mapping, source: sourceModel, destination: destinationModel, path: mappingModel.sourceDescription))
        }
        self.plans = plans
    }

    /// Migrates the store at `url` (made with ``sourceModel``) to ``destinationModel``.
    ///
    /// The new store is written to `.<name>.migrating-<UUID>.<ext>` beside it and saved; only
    /// then is the old store's `-wal` checkpointed into it (its content does not change), its
    /// `-shm` removed, and the new file renamed over the old one; external binary data
    /// (`.<name>_SUPPORT/_EXTERNAL_DATA`) follows. Until that rename the old store's content
    /// is untouched, and on any failure before it the temporary files are removed and the old
    /// store is as it was. The store must not be open elsewhere while it is migrated.
    ///
    /// - Throws: ``MappingMigrationError`` naming the entity mapping, property and source
    ///   object when an expression fails; ``PersistentStoreError`` when a store cannot be opened
    ///   (the store's version hashes must be the source model's); validation errors of the
    ///   new objects as a ``MappingMigrationError``.
    public func migrateStore(at url: URL) throws -> Result {
        let fm = FileManager.default
        guard fm.fileExists(atPath: url.path) else { throw PersistentStoreError(.fileNotFound, "no such store file", path: url.path) }
        let name = url.deletingPathExtension().lastPathComponent
        let ext = url.pathExtension.isEmpty ? "" : "." + url.pathExtension
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(name).migrating-\(UUID().uuidString)\(ext)")
        let run: (counts: [String: Int], identifier: String)
        do {
            run = try migrate(from: url, into: temporary)
        } catch {
            Self.removeStore(at: temporary)
            throw error
        }
        do {
            try Self.replace(url, with: temporary)
        } catch {
            Self.removeStore(at: temporary)
            throw error
        }
        return Result(storeURL: url, createdCounts: run.counts, storeIdentifier: run.identifier)
    }

    // MARK: The three stages

    private func migrate(from url: URL, into temporary: URL) throws -> (counts: [String: Int], identifier: String) {
        let sourceStore = try SQLiteStore(url: url, model: sourceModel)
        let sourceContext = ManagedObjectContext(coordinator: PersistentStoreCoordinator(store: sourceStore))
        let destinationStore = try SQLiteStore(url: temporary, model: destinationModel, options: .init(readOnly: false, createIfMissing: true))
        let destinationContext = ManagedObjectContext(coordinator: PersistentStoreCoordinator(store: destinationStore))
        destinationContext.isUndoEnabled = false
        let manager = MigrationManager(
            sourceContext: sourceContext, destinationContext: destinationContext, mappingModel: mappingModel,
            sourceModel: sourceModel, destinationModel: destinationModel)

        // Stage 1: create the destination instances.
        var pairs: [String: [(source: ManagedObject, destination: ManagedObject)]] = [:]
        var counts: [String: Int] = [:]
        for plan in plans {
            manager.currentEntityMapping = plan.mapping.name
            guard let destinationEntity = plan.mapping.destinationEntityName, let sourceExpression = plan.sourceExpression,
                plan.mapping.mappingType != .remove
            else { continue }
            let sources = try plan.error(property: nil) { try manager.sourceInstances(sourceExpression) }
            var made: [(ManagedObject, ManagedObject)] = []
            for source in sources {
                let destination = try plan.error(property: nil, object: source) { try destinationContext.insertObject(entityName: destinationEntity) }
                for (property, expression) in plan.attributes {
                    let value = try plan.error(property: property, object: source) {
                        try expression.value(with: nil, variables: manager.variables(mapping: plan.mapping, source: source, destination: nil))
                    }
                    try plan.error(property: property, object: source) {
                        try destination.setValue(Self.attributeValue(value), forKey: property)
                    }
                }
                manager.associate(source: source, destination: destination, mapping: plan.mapping.name)
                made.append((source, destination))
            }
            pairs[plan.mapping.name] = made
            counts[plan.mapping.name] = made.count
        }

        // Stage 2: relationships.
        for plan in plans where !plan.relationships.isEmpty {
            manager.currentEntityMapping = plan.mapping.name
            for (source, destination) in pairs[plan.mapping.name] ?? [] {
                for (property, expression, isToMany) in plan.relationships {
                    let value = try plan.error(property: property, object: source) {
                        try expression.value(with: nil, variables: manager.variables(mapping: plan.mapping, source: source, destination: destination))
                    }
                    let objects = MigrationManager.objects(value)
                    try plan.error(property: property, object: source) {
                        if isToMany {
                            try destination.setValue(objects, forKey: property)
                        } else {
                            guard objects.count <= 1 else {
                                throw MappingMigrationError(entityMapping: nil, property: nil, "the expression gave \(objects.count) objects for a to-one relationship")
                            }
                            try destination.setValue(objects.first, forKey: property)
                        }
                    }
                }
            }
        }

        // Stage 3: validate and save.
        do {
            try destinationContext.save()
        } catch let error as ObjectValidationError {
            throw MappingMigrationError(entityMapping: nil, property: nil, "the migrated objects do not validate: \(error)", path: url.path)
        }
        // Everything into the file: nothing of the new store may stay in a -wal.
        _ = try? destinationStore.connection.query("PRAGMA wal_checkpoint(TRUNCATE)")
        return (counts, destinationStore.identifier)
    }

    /// A value from an expression, as `setValue` takes it: numbers the evaluator made as
    /// `Double` or `Decimal` that are whole become integers (an Integer attribute refuses a
    /// `Double`), and `NSNull` is nil.
    static func attributeValue(_ value: Any?) -> Any? {
        switch value {
        case nil, is NSNull: return nil
        case let d as Double where d.rounded() == d && abs(d) < 9.2e18: return Int64(d)
        default: return value
        }
    }

    // MARK: Files

    /// The store, its `-wal` and `-shm`, and its external data folder.
    static func removeStore(at url: URL) {
        let fm = FileManager.default
        for suffix in ["", "-wal", "-shm", "-journal"] { try? fm.removeItem(atPath: url.path + suffix) }
        try? fm.removeItem(at: ValueCoding.externalDataFolder(forStoreAt: url).deletingLastPathComponent())
    }

    /// Puts the new store in the old one's place.
    static func replace(_ url: URL, with temporary: URL) throws {
        let fm = FileManager.default
        // The old store's -wal would be replayed onto the new file: checkpoint it into the old
        // file (its content does not change) and let SQLite remove it on close.
        if fm.fileExists(atPath: url.path + "-wal") {
            do {
                let connection = try Connection(path: url.path, mode: .readWrite)
                let rows = try connection.query("PRAGMA wal_checkpoint(TRUNCATE)")
                if let busy = rows.first?[0].int64, busy != 0 {
                    throw PersistentStoreError(.cannotWrite, "the store is in use: its -wal cannot be checkpointed, so it was not replaced", path: url.path)
                }
            } catch let error as SQLiteError {
                throw PersistentStoreError(.cannotWrite, "cannot checkpoint the store's -wal before replacing it: \(error.message)", path: url.path)
            }
            if let size = (try? fm.attributesOfItem(atPath: url.path + "-wal"))?[.size] as? Int, size > 0 {
                throw PersistentStoreError(.cannotWrite, "the store's -wal still holds data after a checkpoint (is it open elsewhere?); it was not replaced", path: url.path)
            }
            try? fm.removeItem(atPath: url.path + "-wal")
        }
        try? fm.removeItem(atPath: url.path + "-shm")
        for suffix in ["-wal", "-shm"] where fm.fileExists(atPath: temporary.path + suffix) {
            throw PersistentStoreError(.cannotWrite, "the migrated store still has a \(suffix) file; it was not put in place", path: temporary.path)
        }
        guard rename(temporary.path, url.path) == 0 else {
            throw PersistentStoreError(.cannotWrite, "cannot rename the migrated store into place: \(String(cString: strerror(errno)))", path: url.path)
        }
        // External binary data: the new folder replaces the old one.
        let oldData = ValueCoding.externalDataFolder(forStoreAt: url)
        let newData = ValueCoding.externalDataFolder(forStoreAt: temporary)
        if fm.fileExists(atPath: oldData.path) { try? fm.removeItem(at: oldData) }
        if fm.fileExists(atPath: newData.path) {
            try? fm.createDirectory(at: oldData.deletingLastPathComponent(), withIntermediateDirectories: true)
            do {
                try fm.moveItem(at: newData, to: oldData)
            } catch {
                throw PersistentStoreError(.cannotWrite, "the store was migrated but its external data could not be moved from \(newData.path): \(error.localizedDescription)", path: url.path)
            }
        }
        try? fm.removeItem(at: newData.deletingLastPathComponent())
    }
}

/// A heavyweight migration failed: which entity mapping and property, and why.
public struct MappingMigrationError: Error, Sendable, CustomStringConvertible, Equatable {
    /// The entity mapping at fault, if any.
    public var entityMapping: String?
    /// The destination property at fault, if any.
    public var property: String?
    /// The source object being migrated, if any (its object ID).
    public var sourceObject: String?
    /// What went wrong.
    public var message: String
    /// The mapping model or store involved.
    public var path: String?

    /// Creates an error.
    public init(entityMapping: String?, property: String?, sourceObject: String? = nil, _ message: String, path: String? = nil) {
        self.entityMapping = entityMapping
        self.property = property
        self.sourceObject = sourceObject
        self.message = message
        self.path = path
    }

    public var description: String {
        var parts: [String] = []
        if let path { parts.append(path) }
        if let entityMapping { parts.append("entity mapping \(entityMapping)" + (property.map { ", property \($0)" } ?? "")) }
        if let sourceObject { parts.append("source object \(sourceObject)") }
        parts.append(message)
        return parts.joined(separator: ": ")
    }
}

/// One entity mapping, checked, with its expressions parsed.
struct EntityPlan {
    let mapping: MappingModel.EntityMapping
    let sourceExpression: FLExpression?
    let attributes: [(String, FLExpression)]
    let relationships: [(String, FLExpression, Bool)]
    let path: String?

    init(_ mapping: MappingModel.EntityMapping, source: ManagedObjectModel, destination: ManagedObjectModel, path: String?) throws {
        self.mapping = mapping
        self.path = path
        func fail(_ property: String?, _ message: String) -> MappingMigrationError {
            MappingMigrationError(entityMapping: mapping.name, property: property, message, path: path)
        }
        if let policy = mapping.customPolicyClassName {
            throw fail(nil, "the mapping uses the custom migration policy class \(policy); custom NSEntityMigrationPolicy code cannot run here (only mappings made of expressions are supported)")
        }
        let sourceEntity = try mapping.sourceEntityName.map { name -> EntityDescription in
            guard let e = source.entity(named: name) else { throw fail(nil, "the source model has no entity \(name)") }
            return e
        }
        let destinationEntity = try mapping.destinationEntityName.map { name -> EntityDescription in
            guard let e = destination.entity(named: name) else { throw fail(nil, "the destination model has no entity \(name)") }
            return e
        }
        switch mapping.mappingType {
        case .add, .remove, .copy, .transform, .custom:
            break
        case .undefined:
            throw fail(nil, "the mapping type is undefined")
        }
        if mapping.mappingType != .remove && mapping.mappingType != .add && (sourceEntity == nil || destinationEntity == nil) {
            throw fail(nil, "a \(mapping.mappingType) mapping needs a source and a destination entity")
        }
        if destinationEntity?.isAbstract == true { throw fail(nil, "the destination entity \(mapping.destinationEntityName ?? "") is abstract") }
        func parse(_ text: String, _ property: String?) throws -> FLExpression {
            do {
                return try FLExpression(format: text)
            } catch {
                throw fail(property, "the expression \(text) does not parse: \(error)")
            }
        }
        sourceExpression = try mapping.sourceExpression.map { try parse($0, nil) }
        var attributes: [(String, FLExpression)] = []
        for p in mapping.attributeMappings {
            guard let destinationEntity else { break }
            guard let attribute = destinationEntity.attribute(named: p.name) else {
                throw fail(p.name, "the destination entity \(destinationEntity.name) has no attribute \(p.name)")
            }
            guard !attribute.isTransient, let text = p.valueExpression else { continue }
            attributes.append((p.name, try parse(text, p.name)))
        }
        var relationships: [(String, FLExpression, Bool)] = []
        for p in mapping.relationshipMappings {
            guard let destinationEntity else { break }
            guard let relationship = destinationEntity.relationship(named: p.name) else {
                throw fail(p.name, "the destination entity \(destinationEntity.name) has no relationship \(p.name)")
            }
            guard !relationship.isTransient, let text = p.valueExpression else { continue }
            relationships.append((p.name, try parse(text, p.name), relationship.isToMany))
        }
        self.attributes = attributes
        self.relationships = relationships
    }

    /// Runs `body`, giving any error this mapping's name, the property and the source object.
    func error<T>(property: String?, object: ManagedObject? = nil, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch var error as MappingMigrationError where error.entityMapping == nil {
            error.entityMapping = mapping.name
            error.property = error.property ?? property
            error.sourceObject = error.sourceObject ?? object.map { "\($0.objectID)" }
            error.path = error.path ?? path
            throw error
        } catch let error as MappingMigrationError {
            throw error
        } catch {
            throw MappingMigrationError(entityMapping: mapping.name, property: property, sourceObject: object.map { "\($0.objectID)" }, "\(error)", path: path)
        }
    }
}

/// `$manager` in expressions: answers the selectors Core Data's default policy and
/// Xcode's generated expressions use, and `sourceContext` / `destinationContext`.
final class MigrationManager: FLCustomFunctionReceiver, KeyValueCoding {
    let sourceContext: ManagedObjectContext
    let destinationContext: ManagedObjectContext
    let mappingModel: MappingModel
    let sourceModel: ManagedObjectModel
    let destinationModel: ManagedObjectModel
    var currentEntityMapping: String?
    /// Entity mapping name → source object ID → destination objects.
    private var destinations: [String: [ManagedObjectID: [ManagedObject]]] = [:]
    /// Entity mapping name → destination object ID → source objects.
    private var sources: [String: [ManagedObjectID: [ManagedObject]]] = [:]
    /// Source object ID → destination objects, whatever the mapping.
    private var anyDestinations: [ManagedObjectID: [ManagedObject]] = [:]

    /// `$manager.sourceContext` and `$manager.destinationContext`.
    struct ContextReference { let context: ManagedObjectContext }
    /// What `fetchRequestForSourceEntityNamed:predicateString:` returns.
    struct SourceFetch { let request: FetchRequest }

    init(sourceContext: ManagedObjectContext, destinationContext: ManagedObjectContext, mappingModel: MappingModel, sourceModel: ManagedObjectModel, destinationModel: ManagedObjectModel) {
        self.sourceContext = sourceContext
        self.destinationContext = destinationContext
        self.mappingModel = mappingModel
        self.sourceModel = sourceModel
        self.destinationModel = destinationModel
    }

    func variables(mapping: MappingModel.EntityMapping, source: ManagedObject, destination: ManagedObject?) -> [String: Any?] {
        var v: [String: Any?] = [
            "source": source, "manager": self, "entityMapping": EntityMappingReference(mapping: mapping),
            "entityPolicy": EntityPolicy(mappingName: mapping.name),
        ]
        if let destination { v["destination"] = destination }
        return v
    }

    func associate(source: ManagedObject, destination: ManagedObject, mapping: String) {
        destinations[mapping, default: [:]][source.objectID, default: []].append(destination)
        sources[mapping, default: [:]][destination.objectID, default: []].append(source)
        anyDestinations[source.objectID, default: []].append(destination)
    }

    /// The source instances a source expression gives.
    func sourceInstances(_ expression: FLExpression) throws -> [ManagedObject] {
        let variables: [String: Any?] = ["manager": self]
        if case .fetch(let requestExpression, let contextExpression, let countOnly) = expression.node {
            guard let fetch = try requestExpression.value(with: nil, variables: variables) as? SourceFetch else {
                throw MappingMigrationError(entityMapping: nil, property: nil, "the source expression's FETCH request is not $manager's fetchRequestForSourceEntityNamed:predicateString:")
            }
            if let context = try contextExpression.value(with: nil, variables: variables) as? ContextReference, context.context !== sourceContext {
                throw MappingMigrationError(entityMapping: nil, property: nil, "the source expression fetches from a context other than $manager.sourceContext")
            }
            if (try countOnly.value(with: nil, variables: variables) as? Bool) == true {
                throw MappingMigrationError(entityMapping: nil, property: nil, "the source expression only counts (FETCH … YES)")
            }
            var request = fetch.request
            request.sortDescriptors = []
            let objects = try sourceContext.fetch(request)
            return objects.sorted { $0.objectID.primaryKey < $1.objectID.primaryKey }
        }
        return Self.objects(try expression.value(with: nil, variables: variables))
    }

    /// Managed objects in a value: one, a collection of them, or none.
    static func objects(_ value: Any?) -> [ManagedObject] {
        switch value {
        case let o as ManagedObject: return [o]
        case let list as [ManagedObject]: return list
        case let list as [Any?]: return list.flatMap { objects($0) }
        case let set as Set<ManagedObject>: return Array(set)
        default: return []
        }
    }

    func value(forKey key: String) throws -> Any? {
        switch key {
        case "sourceContext": return ContextReference(context: sourceContext)
        case "destinationContext": return ContextReference(context: destinationContext)
        case "currentEntityMapping": return currentEntityMapping.flatMap { mappingModel.entityMapping(named: $0) }.map(EntityMappingReference.init)
        default:
            throw MappingMigrationError(entityMapping: nil, property: nil, "$manager has no key \(key)")
        }
    }

    func perform(selector: String, arguments: [Any?]) throws -> Any? {
        func string(_ i: Int) throws -> String {
            guard i < arguments.count, let s = arguments[i] as? String else {
                throw MappingMigrationError(entityMapping: nil, property: nil, "$manager \(selector): argument \(i + 1) is not a string")
            }
            return s
        }
        switch selector {
        case "fetchRequestForSourceEntityNamed:predicateString:":
            let entity = try string(0)
            guard sourceModel.entity(named: entity) != nil else {
                throw MappingMigrationError(entityMapping: nil, property: nil, "$manager \(selector): the source model has no entity \(entity)")
            }
            var request = FetchRequest(entityName: entity)
            request.includesSubentities = false
            let text = try string(1)
            if text != "TRUEPREDICATE" { request.predicate = try FLPredicate(format: text) }
            return SourceFetch(request: request)
        case "destinationInstancesForEntityMappingNamed:sourceInstances:":
            let name = try string(0)
            guard let table = destinations[name] ?? (mappingModel.entityMapping(named: name) != nil ? [:] : nil) else {
                throw MappingMigrationError(entityMapping: nil, property: nil, "$manager \(selector): there is no entity mapping named \(name)")
            }
            return Self.objects(arguments.count > 1 ? arguments[1] : nil).flatMap { table[$0.objectID] ?? [] }
        case "sourceInstancesForEntityMappingNamed:destinationInstances:":
            let name = try string(0)
            guard let table = sources[name] ?? (mappingModel.entityMapping(named: name) != nil ? [:] : nil) else {
                throw MappingMigrationError(entityMapping: nil, property: nil, "$manager \(selector): there is no entity mapping named \(name)")
            }
            return Self.objects(arguments.count > 1 ? arguments[1] : nil).flatMap { table[$0.objectID] ?? [] }
        case "destinationInstancesForSourceRelationshipNamed:sourceInstances:":
            return Self.objects(arguments.count > 1 ? arguments[1] : nil).flatMap { anyDestinations[$0.objectID] ?? [] }
        default:
            throw MappingMigrationError(entityMapping: nil, property: nil, "$manager does not answer \(selector)")
        }
    }
}

/// `$entityMapping`: the mapping's name and entity names.
struct EntityMappingReference: KeyValueCoding {
    let mapping: MappingModel.EntityMapping

    func value(forKey key: String) throws -> Any? {
        switch key {
        case "name": mapping.name
        case "sourceEntityName": mapping.sourceEntityName
        case "destinationEntityName": mapping.destinationEntityName
        case "userInfo": mapping.userInfo
        default: throw MappingMigrationError(entityMapping: nil, property: nil, "$entityMapping has no key \(key)")
        }
    }
}

/// `$entityPolicy`: the default `NSEntityMigrationPolicy`, which has no functions of its own;
/// a `FUNCTION($entityPolicy, …)` names code of a custom policy.
struct EntityPolicy: FLCustomFunctionReceiver {
    let mappingName: String

    func perform(selector: String, arguments: [Any?]) throws -> Any? {
        throw MappingMigrationError(
            entityMapping: nil, property: nil,
            "FUNCTION($entityPolicy, \"\(selector)\") calls custom NSEntityMigrationPolicy code, which cannot run here")
    }
}
