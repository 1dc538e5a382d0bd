import FaultlineModel
import Foundation

/// Writes Swift classes for a model's entities, as Xcode's "Class Definition" code
/// generation does for Core Data: one `ManagedObject` subclass per entity with typed
/// properties for its attributes and relationships, and an enum listing the classes for
/// `PersistentStoreCoordinator.registerClasses(_:)`. What `faultline generate` and the
/// `FaultlineGenerate` build-tool plugin run; Documentation/TypedModels.md describes the
/// code and the choices behind it.
///
/// ```swift
/// let model = try ManagedObjectModel(contentsOf: URL(fileURLWithPath: "Recipes.xcdatamodeld"))
/// let generator = try ClassGenerator(model: model, sourceName: "Recipes.xcdatamodeld")
/// for file in try generator.files() {
///     try file.contents.write(to: folder.appendingPathComponent(file.name), atomically: true, encoding: .utf8)
/// }
/// ```
public struct ClassGenerator: Sendable {
    /// The model.
    public let model: ManagedObjectModel
    /// The model's file name, for the generated files' headers (`Recipes.xcdatamodeld`).
    public let sourceName: String
    /// The name of the generated enum that lists the classes (`RecipesModel`).
    public let modelTypeName: String
    /// Swift names for properties, by `Entity.property` (the entity that declares it), over
    /// the model's names and its ``swiftNameKey`` user info.
    public let swiftNames: [String: String]

    /// The user info key that gives a property another Swift name than its model name (for
    /// a property whose name a `ManagedObject` member already has, such as `version`).
    public static let swiftNameKey = "swiftName"

    /// A generator for a model read from `sourceName`.
    ///
    /// - Parameters:
    ///   - modelTypeName: the name of the enum listing the classes; by default the file name
    ///     without its extension, made an identifier, with `Model` appended unless it ends so
    ///     (`Recipes.xcdatamodeld` → `RecipesModel`).
    ///   - swiftNames: Swift names for properties, by `Entity.property`, for properties whose
    ///     model name cannot be a Swift property name (`["Instance.version": "instanceVersion"]`).
    /// - Throws: ``ClassGenerationError`` when `modelTypeName` is not a Swift identifier.
    public init(model: ManagedObjectModel, sourceName: String, modelTypeName: String? = nil, swiftNames: [String: String] = [:]) throws {
        self.model = model
        self.sourceName = sourceName
        self.swiftNames = swiftNames
        if let modelTypeName {
            self.modelTypeName = modelTypeName
        } else {
            let stem = SwiftNames.typeName(fromFileName: (sourceName as NSString).deletingPathExtension)
            self.modelTypeName = stem.isEmpty ? "GeneratedModel" : stem.hasSuffix("Model") ? stem : stem + "Model"
        }
        guard SwiftNames.isIdentifier(self.modelTypeName), !SwiftNames.keywords.contains(self.modelTypeName) else {
            throw ClassGenerationError(problems: ["the model type name \(self.modelTypeName) is not a Swift identifier"])
        }
        guard !SwiftNames.typesUsed.contains(self.modelTypeName) else {
            throw ClassGenerationError(problems: ["the model type name \(self.modelTypeName) would hide the type \(self.modelTypeName) the generated code uses"])
        }
    }

    /// One file per entity (`Recipe+Faultline.swift`), sorted by class name, then the file
    /// of the enum listing the classes (`RecipesModel+Faultline.swift`).
    ///
    /// - Throws: ``ClassGenerationError`` listing every entity and property whose name cannot
    ///   be a Swift name, or that clashes with another.
    public func files() throws -> [GeneratedFile] {
        let plans = try plan()
        var files = plans.map { plan in
            GeneratedFile(name: "\(plan.className)+Faultline.swift", contents: header + imports + "\n" + classSource(plan))
        }
        files.append(GeneratedFile(name: "\(modelTypeName)+Faultline.swift", contents: header + imports + "\n" + modelTypeSource(plans)))
        return files
    }

    /// Everything in one file named `name`: what the build-tool plugin writes, since a plugin
    /// must name its output files before the model is read.
    ///
    /// - Throws: as ``files()``.
    public func singleFile(named name: String) throws -> GeneratedFile {
        let plans = try plan()
        let sections = plans.map(classSource) + [modelTypeSource(plans)]
        return GeneratedFile(name: name, contents: header + imports + "\n" + sections.joined(separator: "\n"))
    }

    // MARK: Planning: names, types and positions, checked

    /// A class to write.
    struct ClassPlan {
        var entity: EntityDescription
        var className: String
        var parentClassName: String?
        /// The parent class's properties, in its order.
        var inherited: [PropertyPlan]
        /// The entity's own properties.
        var own: [PropertyPlan]
        /// Attributes without a typed property, with the reason.
        var skipped: [(name: String, reason: String)]
        var all: [PropertyPlan] { inherited + own }
    }

    /// A typed property to write.
    struct PropertyPlan {
        enum Kind {
            /// An attribute: its Swift type, whether that is optional, and the expression a
            /// non-optional one reads while the attribute has no value.
            case attribute(AttributeDescription, swiftType: String, isOptional: Bool, fallback: String?)
            case toOne(RelationshipDescription, destination: String)
            case toMany(RelationshipDescription, destination: String)
        }
        var modelName: String
        var swiftName: String
        /// The position in the class's `managedProperties`.
        var index: Int
        var kind: Kind
        var isReadOnly: Bool
    }

    private var header: String {
        "// Generated by `faultline generate` from \(SwiftLiterals.comment(sourceName)). Do not edit: change the\n"
            + "// model and generate again (Documentation/TypedModels.md).\n\n"
    }

    private var imports: String { "import Faultline\nimport Foundation\n" }

    /// The classes, sorted by name, every one checked; the problems of all of them at once.
    func plan() throws -> [ClassPlan] {
        var problems: [String] = []
        var classNames: [String: String] = [:]  // entity → class
        var entityOfClass: [String: String] = [:]
        for entity in model.entities.sorted(by: { $0.name < $1.name }) {
            let name = Self.className(of: entity)
            if !SwiftNames.isIdentifier(name) || SwiftNames.keywords.contains(name) {
                problems.append("entity \(entity.name): its class name \(name) is not a Swift identifier; give the entity another class name (representedClassName)")
            } else if SwiftNames.typesUsed.contains(name) {
                problems.append(
                    "entity \(entity.name): a class named \(name) would hide the type \(name) the generated code uses; give the entity another class name (representedClassName)")
            } else if name == modelTypeName {
                problems.append(
                    "entity \(entity.name): its class name \(name) is the name of the generated enum listing the classes; give the entity another class name (representedClassName) or the enum another name"
                )
            } else if let other = entityOfClass[name] {
                problems.append("entities \(other) and \(entity.name) both have the class name \(name); give one of them another class name (representedClassName)")
            }
            entityOfClass[name] = entityOfClass[name] ?? entity.name
            classNames[entity.name] = name
        }
        for key in swiftNames.keys.sorted() {
            let parts = key.split(separator: ".", maxSplits: 1).map(String.init)
            guard parts.count == 2, let entity = model.entity(named: parts[0]) else {
                problems.append("Swift name for \(key): the model has no entity \(key.split(separator: ".").first.map(String.init) ?? key); write ENTITY.PROPERTY")
                continue
            }
            let declared = entity.declaredAttributes.map(\.name) + entity.declaredRelationships.map(\.name)
            if !declared.contains(parts[1]) {
                problems.append("Swift name for \(key): entity \(entity.name) declares no property \(parts[1])")
            }
        }
        guard problems.isEmpty else { throw ClassGenerationError(problems: problems) }

        // Parents before children, so each class starts from its parent's plan.
        var plans: [String: ClassPlan] = [:]
        let ordered = model.entities.sorted { depth(of: $0) != depth(of: $1) ? depth(of: $0) < depth(of: $1) : $0.name < $1.name }
        for entity in ordered {
            let parent = entity.superentityName.flatMap { plans[$0] }
            if entity.superentityName != nil && parent == nil {
                problems.append("entity \(entity.name): its parent entity \(entity.superentityName ?? "") is not in the model")
                continue
            }
            var plan = ClassPlan(
                entity: entity, className: classNames[entity.name] ?? entity.name, parentClassName: parent?.className,
                inherited: parent?.all ?? [], own: [], skipped: [])
            var index = plan.inherited.count
            var taken = Set(plan.inherited.map(\.swiftName))
            func claim(_ modelName: String, _ userInfo: [String: String]) -> String? {
                let given = swiftNames["\(entity.name).\(modelName)"]
                let swiftName = given ?? userInfo[Self.swiftNameKey] ?? modelName
                let subject = "entity \(entity.name), property \(modelName)"
                let renamed = swiftName == modelName ? "" : given != nil ? " (the Swift name given for it)" : " (its \(Self.swiftNameKey) in the model)"
                let advice = Self.renameAdvice
                if !SwiftNames.isIdentifier(swiftName) || SwiftNames.impossibleMemberNames.contains(swiftName) {
                    problems.append("\(subject): \(swiftName)\(renamed) cannot be a Swift property name; \(advice)")
                } else if SwiftNames.typesUsed.contains(swiftName) || entityOfClass[swiftName] != nil || swiftName == modelTypeName {
                    problems.append("\(subject): \(swiftName)\(renamed) is the name of a type the generated code uses; \(advice)")
                } else if SwiftNames.inheritedMembers.contains(swiftName) {
                    problems.append("\(subject): \(swiftName)\(renamed) is already a member of ManagedObject or of the generated class; \(advice)")
                } else if !taken.insert(swiftName).inserted {
                    problems.append("\(subject): the class \(plan.className) already has a property \(swiftName); \(advice)")
                } else {
                    return swiftName
                }
                return nil
            }
            for attribute in entity.declaredAttributes.sorted(by: { $0.name < $1.name }) {
                guard let swiftType = attribute.attributeType.swiftTypeName else {
                    plan.skipped.append((attribute.name, "\(attribute.attributeType.xmlName) attributes have no typed property"))
                    continue
                }
                guard let swiftName = claim(attribute.name, attribute.userInfo) else { continue }
                let (isOptional, fallback) = Self.optionality(of: attribute)
                plan.own.append(
                    PropertyPlan(
                        modelName: attribute.name, swiftName: swiftName, index: index,
                        kind: .attribute(attribute, swiftType: swiftType, isOptional: isOptional, fallback: fallback),
                        isReadOnly: attribute.isReadOnly || attribute.isDerived))
                index += 1
            }
            for relationship in entity.declaredRelationships.sorted(by: { $0.name < $1.name }) {
                guard let destination = classNames[relationship.destinationEntityName] else {
                    problems.append("entity \(entity.name), relationship \(relationship.name): its destination entity \(relationship.destinationEntityName) is not in the model")
                    continue
                }
                guard let swiftName = claim(relationship.name, relationship.userInfo) else { continue }
                plan.own.append(
                    PropertyPlan(
                        modelName: relationship.name, swiftName: swiftName, index: index,
                        kind: relationship.isToMany ? .toMany(relationship, destination: destination) : .toOne(relationship, destination: destination),
                        isReadOnly: relationship.isReadOnly))
                index += 1
            }
            // The to-many helpers (addToX, removeFromX) must not meet a property's name.
            for property in plan.all where !property.isReadOnly {
                guard case .toMany = property.kind else { continue }
                for helper in ["addTo", "removeFrom"].map({ $0 + SwiftNames.capitalized(property.swiftName) }) where taken.contains(helper) {
                    problems.append("entity \(entity.name), property \(helper): the class's helper \(helper)(_:) for \(property.modelName) has that name; \(Self.renameAdvice)")
                }
            }
            plans[entity.name] = plan
        }
        guard problems.isEmpty else { throw ClassGenerationError(problems: problems) }
        return plans.values.sorted { $0.className < $1.className }
    }

    /// How to give a property another Swift name.
    static let renameAdvice = "give it another Swift name: the user info key \(swiftNameKey) in the model, or --rename ENTITY.PROPERTY=NAME"

    /// The number of ancestors, at most the model's inheritance limit.
    private func depth(of entity: EntityDescription) -> Int {
        var depth = 0
        var current = entity
        while depth < ManagedObjectModel.maximumInheritanceDepth, let name = current.superentityName, let parent = model.entity(named: name) {
            depth += 1
            current = parent
        }
        return depth
    }

    /// The class of an entity's objects: `representedClassName` without a module prefix
    /// (`MyApp.Recipe`, `.Recipe` → `Recipe`), or the entity name when the model names none
    /// or `NSManagedObject`.
    public static func className(of entity: EntityDescription) -> String {
        guard let represented = entity.managedObjectClassName?.split(separator: ".").last.map(String.init),
            !represented.isEmpty, represented != "NSManagedObject"
        else { return entity.name }
        return represented
    }

    /// Whether an attribute's Swift type is optional, and what a non-optional one reads
    /// while the attribute has no value:
    ///
    /// - numbers and Booleans are optional only when the model says so and the attribute is
    ///   not a scalar (`usesScalarValueType="NO"`); otherwise they read the default or 0;
    /// - String, Decimal and Binary follow the model, and read the default or the empty value;
    /// - Date and UUID are non-optional only when the model also gives a default; URL is
    ///   always optional (no default can be written without `URL(string:)`, which may fail).
    static func optionality(of attribute: AttributeDescription) -> (isOptional: Bool, fallback: String?) {
        let type = attribute.attributeType
        switch type {
        case .integer16, .integer32, .integer64, .double, .float, .boolean:
            if attribute.isOptional && attribute.usesScalarValueType == false { return (true, nil) }
        default:
            if attribute.isOptional { return (true, nil) }
        }
        guard let fallback = SwiftLiterals.defaultValue(of: attribute) ?? SwiftLiterals.emptyValue(of: type) else { return (true, nil) }
        return (false, fallback)
    }

    // MARK: Writing

    private func classSource(_ plan: ClassPlan) -> String {
        let out = SourceWriter()
        let name = plan.className
        let entity = plan.entity
        let isSubclass = plan.parentClassName != nil
        let override = isSubclass ? "override " : ""
        let kindText = entity.isAbstract ? "abstract entity" : "entity"
        out.line("/// An object of the \(kindText) `\(entity.name)`: typed properties for its attributes and relationships.")
        if let parent = entity.superentityName { out.line("/// `\(entity.name)` is a sub-entity of `\(parent)`.") }
        out.line("///")
        out.line("/// Register the classes before making contexts (`try coordinator.registerClasses(\(modelTypeName).classes)`):")
        out.line("/// from then on every object of the entity is an instance of this class.")
        out.line("public class \(name): \(plan.parentClassName ?? "ManagedObject, ManagedObjectSubclass") {")
        out.indent {
            out.line("/// The entity whose objects are instances of this class: `\(entity.name)`.")
            out.line("public \(override)class var entityName: String { \(SwiftLiterals.string(entity.name)) }")
            out.blank()
            out.line("/// The properties the class has typed accessors for\(isSubclass ? ": its superclass's, then its own" : ""), in accessor order.")
            out.line("public \(override)class var managedProperties: [ManagedPropertyDeclaration] {")
            out.indent {
                let own = plan.own.map { declaration($0) }
                if isSubclass && own.isEmpty {
                    out.line("super.managedProperties")
                } else {
                    out.list(own, prefix: isSubclass ? "super.managedProperties + " : "")
                }
            }
            out.line("}")
            out.blank()
            let example = plan.all.first.map { "`\\\(name).\(SwiftNames.member($0.swiftName))` → `\($0.modelName)`" } ?? "none here"
            out.line("/// The model property each typed property's key path stands for (\(example)), inherited ones")
            out.line("/// included; rooted at the class the property is read on (a subclass of this one too).")
            out.line("public \(override)class var propertyNamesByKeyPath: [AnyKeyPath: String] {")
            out.indent { out.line("Self.self == \(name).self ? keyPathTableOf\(name) : keyPathsOf\(name)(rootedAt: Self.self)") }
            out.line("}")
            out.blank()
            out.line("/// The model property a key path of the class stands for (of the class, a superclass or a subclass), for")
            out.line("/// typed predicates and sort descriptors; nil for any other key path.")
            out.line("public \(override)class func propertyName(for keyPath: AnyKeyPath) -> String? {")
            out.indent {
                out.line("if let name = keyPathTableOf\(name)[keyPath] { return name }")
                out.line("if Self.self != \(name).self, let name = keyPathsOf\(name)(rootedAt: Self.self)[keyPath] { return name }")
                out.line(isSubclass ? "return super.propertyName(for: keyPath)" : "return nil")
            }
            out.line("}")
            out.blank()
            out.line("nonisolated(unsafe) private static let keyPathTableOf\(name): [AnyKeyPath: String] = keyPathsOf\(name)(rootedAt: \(name).self)")
            out.blank()
            out.line("private static func keyPathsOf\(name)<KeyPathRoot: \(name)>(rootedAt _: KeyPathRoot.Type) -> [AnyKeyPath: String] {")
            out.indent {
                let entries = plan.all.map { "\\KeyPathRoot.\(SwiftNames.member($0.swiftName)): \(SwiftLiterals.string($0.modelName))" }
                out.list(entries, empty: "[:]")
            }
            out.line("}")
            for property in plan.own {
                out.blank()
                accessor(property, in: plan, to: out)
            }
            for property in plan.own where !property.isReadOnly {
                guard case .toMany(let relationship, let destination) = property.kind else { continue }
                out.blank()
                helpers(property, relationship, destination, to: out)
            }
            if !plan.skipped.isEmpty { out.blank() }
            for (name, reason) in plan.skipped {
                out.line("// \(name): \(reason); use value(forKey: \(SwiftLiterals.string(name))).")
            }
        }
        out.line("}")
        return out.text
    }

    /// `.attribute("name", .string)`, `.toMany("ingredients", Ingredient.self)`.
    private func declaration(_ property: PropertyPlan) -> String {
        let name = SwiftLiterals.string(property.modelName)
        switch property.kind {
        case .attribute(let attribute, _, _, _): return ".attribute(\(name), .\(Self.caseName(attribute.attributeType)))"
        case .toOne(_, let destination): return ".toOne(\(name), \(destination).self)"
        case .toMany(let relationship, let destination):
            return ".toMany(\(name), \(destination).self\(relationship.isOrdered ? ", ordered: true" : ""))"
        }
    }

    private func accessor(_ property: PropertyPlan, in plan: ClassPlan, to out: SourceWriter) {
        let member = SwiftNames.member(property.swiftName)
        let at = "at: \(property.index), named: \(SwiftLiterals.string(property.modelName))"
        let type: String
        let getter: String
        let setter: String
        switch property.kind {
        case .attribute(let attribute, let swiftType, let isOptional, let fallback):
            out.line("/// " + Self.summary(of: attribute, swiftName: property.swiftName, isOptional: isOptional, fallback: fallback))
            type = isOptional ? swiftType + "?" : swiftType
            getter = "attributeValue(\(at))" + (fallback.map { " ?? \($0)" } ?? "")
            setter = "setAttributeValue(newValue, \(at))"
        case .toOne(let relationship, let destination):
            out.line("/// " + Self.summary(of: relationship, swiftName: property.swiftName, destination: destination))
            type = destination + "?"
            getter = "toOneValue(\(at))"
            setter = "setToOneValue(newValue, \(at))"
        case .toMany(let relationship, let destination):
            out.line("/// " + Self.summary(of: relationship, swiftName: property.swiftName, destination: destination))
            if relationship.isOrdered {
                type = "[\(destination)]"
                getter = "toManyValue(\(at))"
                setter = "setToManyValue(newValue, \(at))"
            } else {
                type = "Set<\(destination)>"
                getter = "Set(toManyValue(\(at)) as [\(destination)])"
                setter = "setToManyValue(Array(newValue), \(at))"
            }
        }
        if property.isReadOnly {
            out.line("public var \(member): \(type) { \(getter) }")
        } else {
            out.line("public var \(member): \(type) {")
            out.indent {
                out.line("get { \(getter) }")
                out.line("set { \(setter) }")
            }
            out.line("}")
        }
    }

    /// `addToX(_:)` and `removeFromX(_:)`, for one object and for several, as Xcode writes them.
    private func helpers(_ property: PropertyPlan, _ relationship: RelationshipDescription, _ destination: String, to out: SourceWriter) {
        let capitalized = SwiftNames.capitalized(property.swiftName)
        let at = "at: \(property.index), named: \(SwiftLiterals.string(property.modelName))"
        let many = relationship.isOrdered ? "[\(destination)]" : "Set<\(destination)>"
        let manyValues = relationship.isOrdered ? "values" : "Array(values)"
        let inverse = relationship.inverseName.map { " (its inverse `\($0)` follows)" } ?? ""
        let end = relationship.isOrdered ? " at the end" : ""
        out.line("/// Adds an object to `\(property.swiftName)`\(end)\(inverse).")
        out.line("public func addTo\(capitalized)(_ value: \(destination)) { addToManyValues([value], \(at)) }")
        out.blank()
        out.line("/// Removes an object from `\(property.swiftName)`\(inverse).")
        out.line("public func removeFrom\(capitalized)(_ value: \(destination)) { removeToManyValues([value], \(at)) }")
        out.blank()
        out.line("/// Adds objects to `\(property.swiftName)`\(relationship.isOrdered ? " at the end, in order" : "")\(inverse).")
        out.line("public func addTo\(capitalized)(_ values: \(many)) { addToManyValues(\(manyValues), \(at)) }")
        out.blank()
        out.line("/// Removes objects from `\(property.swiftName)`\(inverse).")
        out.line("public func removeFrom\(capitalized)(_ values: \(many)) { removeToManyValues(\(manyValues), \(at)) }")
    }

    private func modelTypeSource(_ plans: [ClassPlan]) -> String {
        let out = SourceWriter()
        out.line("/// The classes generated from \(SwiftLiterals.comment(sourceName)), to register before making contexts:")
        out.line("///")
        out.line("/// ```swift")
        out.line("/// try coordinator.registerClasses(\(modelTypeName).classes)")
        out.line("/// ```")
        out.line("public enum \(modelTypeName) {")
        out.indent {
            out.line("/// Every generated class, one per entity, sorted by name.")
            out.list(plans.map { "\($0.className).self" }, prefix: "public static let classes: [any ManagedObjectSubclass.Type] = ")
        }
        out.line("}")
        return out.text
    }

    // MARK: Doc comments

    static func summary(of attribute: AttributeDescription, swiftName: String, isOptional: Bool, fallback: String?) -> String {
        var text = "The `\(attribute.name)` attribute\(swiftName == attribute.name ? "" : " (`\(swiftName)` in Swift)"): \(attribute.attributeType.xmlName)"
        var traits: [String] = []
        if attribute.isDerived { traits.append("derived from `\(SwiftLiterals.comment(attribute.derivationExpression ?? ""))`") }
        if attribute.isTransient { traits.append("transient") }
        switch (attribute.isOptional, isOptional) {
        case (true, true): traits.append("optional")
        case (true, false): traits.append("optional in the model, a scalar here")
        case (false, true):
            traits.append(
                attribute.attributeType == .uri && attribute.defaultValueString != nil
                    ? "required, but nil until set (a URL default cannot be written without `URL(string:)`)"
                    : "required, but nil until set (the model gives no default)")
        case (false, false): traits.append("required")
        }
        if attribute.isReadOnly || attribute.isDerived { traits.append("read-only") }
        text += ", " + traits.joined(separator: ", ")
        if let fallback {
            // A long literal (a UUID's bytes) reads better as the model wrote it.
            let shown = fallback.count <= 40 ? fallback : attribute.defaultValueString.map(SwiftLiterals.comment) ?? fallback
            text += "; reads `\(shown)` while it has no value"
        }
        return text + "."
    }

    static func summary(of relationship: RelationshipDescription, swiftName: String, destination: String) -> String {
        let shape = relationship.isToMany ? (relationship.isOrdered ? "ordered to-many" : "to-many") : "to-one"
        var text = "The `\(relationship.name)` relationship\(swiftName == relationship.name ? "" : " (`\(swiftName)` in Swift)"): \(shape) `\(destination)`"
        if let inverse = relationship.inverseName { text += ", inverse `\(inverse)`" }
        if relationship.isReadOnly { text += ", read-only" }
        return text + "."
    }

    /// The `AttributeType` case name, as written in a declaration.
    static func caseName(_ type: AttributeType) -> String {
        switch type {
        case .undefined: "undefined"
        case .integer16: "integer16"
        case .integer32: "integer32"
        case .integer64: "integer64"
        case .decimal: "decimal"
        case .double: "double"
        case .float: "float"
        case .string: "string"
        case .boolean: "boolean"
        case .date: "date"
        case .binaryData: "binaryData"
        case .uuid: "uuid"
        case .uri: "uri"
        case .transformable: "transformable"
        case .objectID: "objectID"
        case .composite: "composite"
        }
    }
}

/// One generated Swift file: its name and text.
public struct GeneratedFile: Sendable, Equatable {
    /// The file name (`Recipe+Faultline.swift`).
    public var name: String
    /// The Swift source.
    public var contents: String

    /// A file.
    public init(name: String, contents: String) {
        self.name = name
        self.contents = contents
    }
}

/// Why classes could not be generated: names in the model that cannot be Swift names or
/// clash, each problem naming its entity and property. Nothing was written.
public struct ClassGenerationError: Error, Sendable, CustomStringConvertible, Equatable {
    /// Every problem, one sentence each.
    public var problems: [String]

    /// An error with these problems.
    public init(problems: [String]) { self.problems = problems }

    public var description: String {
        problems.count == 1
            ? "cannot generate classes: \(problems[0])"
            : "cannot generate classes (\(problems.count) problems):\n" + problems.map { "  " + $0 }.joined(separator: "\n")
    }
}

/// Lines of Swift with four-space indentation.
final class SourceWriter {
    private(set) var text = ""
    private var depth = 0

    func line(_ line: String) { text += String(repeating: "    ", count: depth) + line + "\n" }

    func blank() { text += "\n" }

    /// An array or dictionary literal after `prefix`: on one line when it has at most one
    /// element, else one element a line with trailing commas (the house style's formatting).
    func list(_ elements: [String], prefix: String = "", empty: String = "[]") {
        switch elements.count {
        case 0: line(prefix + empty)
        case 1: line(prefix + "[" + elements[0] + "]")
        default:
            line(prefix + "[")
            indent {
                for element in elements { line(element + ",") }
            }
            line("]")
        }
    }

    func indent(_ body: () -> Void) {
        depth += 1
        body()
        depth -= 1
    }
}
