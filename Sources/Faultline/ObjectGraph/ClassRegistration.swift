import FaultlineModel
import Foundation

// Registered classes: which ManagedObject subclass an entity's objects are made of, and where
// the class's typed properties sit in the entity's value slots.

/// The class an entity's objects are instances of, and the slot of each of the class's
/// declared properties in the entity's ``PropertyLayout`` (checked once, when registered).
/// Plain data (a metatype and an interned table's pointer): passing one to every object made
/// of the class counts no reference (as a class, it was retained and released per object).
struct ClassBinding: Sendable {
    /// The class.
    let type: any ManagedObjectSubclass.Type
    /// `slots[i]` is the slot of `type.managedProperties[i]`.
    let slots: ClassSlotTable

    init(type: any ManagedObjectSubclass.Type, slots: ContiguousArray<Int>) {
        self.type = type
        self.slots = ClassSlotTable.interned(slots)
    }

    /// Whether the class's instances have lifecycle methods to call (it is not
    /// ``ManagedObject`` itself): ``ManagedObjectContext/callsLifecycleHooks(of:)`` for every
    /// object made of the class, told without an object.
    var callsLifecycleHooks: Bool { ObjectIdentifier(type) != ObjectIdentifier(ManagedObject.self) }
}

/// A class's slot table as its objects hold it (`slots[i]` is the slot of the class's
/// property `i`): a pointer to a table kept for the life of the process, one per distinct
/// table, so an object refers to it without a reference count. Every object made of a
/// registered class holds one; an array there cost a retain when the object was made and a
/// release when it was freed, atomic operations each.
///
/// Tables are interned by content and never freed: a process sees a handful (one per class
/// and entity layout, and equal tables shared).
struct ClassSlotTable: @unchecked Sendable {
    /// `base[0]` is the count, `base[1...]` the slots; nil for the empty table.
    private let base: UnsafePointer<Int>?

    private init(base: UnsafePointer<Int>?) { self.base = base }

    /// No slots (an object not made as an instance of a registered class).
    static let empty = ClassSlotTable(base: nil)

    /// The number of slots.
    @inline(__always)
    var count: Int { base?[0] ?? 0 }

    /// The slot of property `index`, or nil when the table has no such property (or no
    /// slots): one bound check, for the typed getters' fast path.
    @inline(__always)
    func slotIfPresent(_ index: Int) -> Int? {
        guard let base, UInt(bitPattern: index) < UInt(bitPattern: base[0]) else { return nil }
        return base[index &+ 1]
    }

    /// The slot of property `index` (`index < count`).
    @inline(__always)
    subscript(index: Int) -> Int {
        guard let base, index >= 0, index < base[0] else { preconditionFailure("class slot \(index) out of range 0..<\(count)") }
        return base[index + 1]
    }

    private static let lock = NSLock()
    // Written only under `lock`; the tables it points at never change once made.
    nonisolated(unsafe) private static var tables: [ContiguousArray<Int>: UnsafePointer<Int>] = [:]

    /// The table with these slots, made the first time it is asked for.
    static func interned(_ slots: ContiguousArray<Int>) -> ClassSlotTable {
        if slots.isEmpty { return .empty }
        return lock.withLock {
            if let base = tables[slots] { return ClassSlotTable(base: base) }
            let table = UnsafeMutablePointer<Int>.allocate(capacity: slots.count + 1)
            table.initialize(to: slots.count)
            for (index, slot) in slots.enumerated() { (table + index + 1).initialize(to: slot) }
            tables[slots] = UnsafePointer(table)
            return ClassSlotTable(base: UnsafePointer(table))
        }
    }
}

/// Why classes could not be registered: a class names an entity the model lacks, declares a
/// property the entity lacks or has with another type, or does not fit the entity hierarchy.
/// Nothing was registered.
public struct ClassRegistrationError: Error, Sendable, CustomStringConvertible, Equatable {
    /// Every problem found, one sentence each, naming the class, entity and property.
    public var problems: [String]

    /// An error with these problems.
    public init(problems: [String]) { self.problems = problems }

    public var description: String {
        problems.count == 1 ? "cannot register classes: \(problems[0])"
            : "cannot register classes (\(problems.count) problems):\n" + problems.map { "  " + $0 }.joined(separator: "\n")
    }
}

/// The classes registered with a coordinator, by entity name, and whether a context has
/// already taken a copy of them (registering later would give that context's objects of the
/// entity another class than new contexts').
struct ClassRegistry {
    /// Registered classes by the name of their entity.
    var classes: [String: any ManagedObjectSubclass.Type] = [:]
    /// The binding of every entity that has a class: its own, or its nearest registered
    /// ancestor's (so a fetch of the ancestor's class gives instances of it).
    var bindings: [String: ClassBinding] = [:]
    /// Whether a context was made: registration is closed from then on.
    var isClosed = false
}

extension PersistentStoreCoordinator {
    /// Registers ``ManagedObjectSubclass`` classes: objects of their entities are made as
    /// instances of them by every context made afterwards. An entity without a class of its
    /// own uses its nearest registered ancestor's.
    ///
    /// Each class is checked against the model now: its entity exists, every declared property
    /// exists with the declared kind and type, relationship destinations have registered
    /// classes that fit the declared ones, and a sub-entity's class is a subclass of its
    /// parent entity's class and lists the parent class's properties first.
    ///
    /// ```swift
    /// try coordinator.registerClasses([Recipe.self, Ingredient.self, Cuisine.self])
    /// let context = ManagedObjectContext(coordinator: coordinator)
    /// let recipes = try context.fetch(Recipe.fetchRequest())   // Recipe instances
    /// ```
    ///
    /// - Throws: ``ClassRegistrationError`` listing every problem (nothing is registered), or
    ///   when a context has already been made with this coordinator.
    public func registerClasses(_ types: [any ManagedObjectSubclass.Type]) throws {
        storeLock.lock(); defer { storeLock.unlock() }
        guard !classRegistry.isClosed else {
            throw ClassRegistrationError(problems: [
                "a context was already made with this coordinator: register classes first, so that every context makes the same classes"
            ])
        }
        var problems: [String] = []
        var classes = classRegistry.classes
        for type in types {
            let entityName = type.entityName
            guard let entity = model.entity(named: entityName) else {
                problems.append("\(type) names entity \(entityName), which the model lacks; entities: \(model.entities.map(\.name).sorted().joined(separator: ", "))")
                continue
            }
            if let existing = classes[entity.name], existing != type {
                problems.append("entity \(entity.name) has two classes: \(existing) and \(type)")
                continue
            }
            classes[entity.name] = type
        }
        var bindings: [String: ClassBinding] = [:]
        for entity in model.entities {
            guard let type = Self.boundClass(of: entity, in: model, classes: classes) else { continue }
            if let own = classes[entity.name] {
                problems += Self.hierarchyProblems(own, entity: entity, model: model, classes: classes)
            }
            var slots = ContiguousArray<Int>()
            slots.reserveCapacity(type.managedProperties.count)
            for declaration in type.managedProperties {
                switch Self.slot(of: declaration, in: entity, class: type, model: model, classes: classes) {
                case .success(let slot): slots.append(slot)
                case .failure(let problem): problems.append(problem.message)
                }
            }
            bindings[entity.name] = ClassBinding(type: type, slots: slots)
        }
        guard problems.isEmpty else {
            var seen: Set<String> = []
            throw ClassRegistrationError(problems: problems.filter { seen.insert($0).inserted })
        }
        classRegistry.classes = classes
        classRegistry.bindings = bindings
    }

    /// The class registered for an entity (its own, or its nearest registered ancestor's),
    /// if any.
    public func registeredClass(forEntityName name: String) -> (any ManagedObjectSubclass.Type)? {
        storeLock.lock(); defer { storeLock.unlock() }
        return classRegistry.bindings[name]?.type
    }

    /// The bindings a new context makes objects with; closes registration.
    func classBindingsForNewContext() -> [String: ClassBinding] {
        storeLock.lock(); defer { storeLock.unlock() }
        classRegistry.isClosed = true
        return classRegistry.bindings
    }

    private static func boundClass(
        of entity: EntityDescription, in model: ManagedObjectModel, classes: [String: any ManagedObjectSubclass.Type]
    ) -> (any ManagedObjectSubclass.Type)? {
        // The inheritance chain, root first: the nearest registered entity from the end.
        for ancestor in model.inheritanceChain(of: entity).reversed() {
            if let type = classes[ancestor.name] { return type }
        }
        return nil
    }

    /// A registered class's place in the entity hierarchy: a subclass of the parent entity's
    /// class, listing that class's properties first.
    private static func hierarchyProblems(
        _ type: any ManagedObjectSubclass.Type, entity: EntityDescription, model: ManagedObjectModel,
        classes: [String: any ManagedObjectSubclass.Type]
    ) -> [String] {
        guard let parentName = entity.superentityName, let parent = model.entity(named: parentName),
            let parentClass = boundClass(of: parent, in: model, classes: classes)
        else { return [] }
        guard isClass(type, subclassOf: parentClass) else {
            return ["\(type) (entity \(entity.name)) must be a subclass of \(parentClass), the class of its parent entity \(parent.name)"]
        }
        let inherited = parentClass.managedProperties.map(\.name)
        guard Array(type.managedProperties.prefix(inherited.count).map(\.name)) == inherited else {
            return ["\(type).managedProperties must start with \(parentClass)'s properties (\(inherited.joined(separator: ", "))), in that order"]
        }
        return []
    }

    /// Whether `type` is `base` or one of its subclasses.
    static func isClass(_ type: any ManagedObjectSubclass.Type, subclassOf base: any ManagedObjectSubclass.Type) -> Bool {
        func check<Base: ManagedObjectSubclass>(_: Base.Type) -> Bool { type is Base.Type }
        return check(base)
    }

    private struct Problem: Error { var message: String }

    /// The slot of a declared property in an entity, or why it does not fit.
    private static func slot(
        of declaration: ManagedPropertyDeclaration, in entity: EntityDescription, class type: any ManagedObjectSubclass.Type,
        model: ManagedObjectModel, classes: [String: any ManagedObjectSubclass.Type]
    ) -> Result<Int, Problem> {
        let name = declaration.name
        let subject = "\(type).\(name) (entity \(entity.name))"
        let layout = entity.propertyLayout
        guard var found = layout.slot(of: name) else {
            let names = layout.names.joined(separator: ", ")
            return .failure(Problem(message: "\(subject): the entity has no property \(name); its properties: \(names)"))
        }
        func destinationProblem(_ relationship: RelationshipDescription, _ declared: any ManagedObjectSubclass.Type) -> Problem? {
            guard let destination = model.entity(named: relationship.destinationEntityName) else {
                return Problem(message: "\(subject): the destination entity \(relationship.destinationEntityName) is not in the model")
            }
            guard let bound = boundClass(of: destination, in: model, classes: classes) else {
                return Problem(message: "\(subject): its destination entity \(destination.name) has no registered class; register \(declared) too")
            }
            guard isClass(bound, subclassOf: declared) else {
                return Problem(message: "\(subject): declared as \(declared), but entity \(destination.name)'s objects are \(bound)")
            }
            return nil
        }
        if case .attribute = declaration.kind {} else if let index = entity.relationships.firstIndex(where: { $0.name == name }) {
            found = entity.attributes.count + index  // the relationship's slot, also when an attribute shares its name
        }
        switch declaration.kind {
        case .attribute(let declared):
            guard found < entity.attributes.count, layout.kinds[found] == .attribute else {
                return .failure(Problem(message: "\(subject): declared as an attribute, but \(name) is a relationship"))
            }
            let actual = entity.attributes[found].attributeType
            guard actual == declared else {
                return .failure(Problem(message: "\(subject): declared as \(declared.xmlName), but the model's attribute is \(actual.xmlName)"))
            }
        case .toOne(let destination):
            guard let relationship = entity.relationship(named: name), layout.kinds[found] == .toOne else {
                return .failure(Problem(message: "\(subject): declared as a to-one relationship, but the model's \(name) is not one"))
            }
            if let problem = destinationProblem(relationship, destination) { return .failure(problem) }
        case .toMany(let destination, let ordered):
            guard let relationship = entity.relationship(named: name), layout.kinds[found] == .toMany else {
                return .failure(Problem(message: "\(subject): declared as a to-many relationship, but the model's \(name) is not one"))
            }
            guard relationship.isOrdered == ordered else {
                return .failure(Problem(message: "\(subject): declared \(ordered ? "ordered" : "unordered"), but the model's relationship is \(relationship.isOrdered ? "ordered" : "unordered")"))
            }
            if let problem = destinationProblem(relationship, destination) { return .failure(problem) }
        }
        return .success(found)
    }
}
