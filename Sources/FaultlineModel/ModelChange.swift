import Foundation

/// One difference between two versions of a model, and whether Core Data's lightweight
/// migration can infer a mapping for it.
///
/// Changes come from ``InferredMapping``; each names the element it is about by its
/// *destination* names (the source names for removed elements). ``problem`` is nil when Core
/// Data can infer the change, and otherwise says why not, as a sentence naming the element:
///
/// ```swift
/// for change in mapping.changes where !change.isInferable {
///     print(change.problem!)  // "attribute Note.title became non-optional without a default value"
/// }
/// ```
///
/// The rules, with their sources, are in `Documentation/Migration.md`.
public struct ModelChange: Sendable, Hashable, CustomStringConvertible {
    /// The model element a change is about.
    public enum Element: Sendable, Hashable {
        /// An entity.
        case entity(String)
        /// An attribute of an entity.
        case attribute(entity: String, name: String)
        /// A relationship of an entity.
        case relationship(entity: String, name: String)

        /// The entity name.
        public var entityName: String {
            switch self {
            case .entity(let e), .attribute(let e, _), .relationship(let e, _): e
            }
        }

        /// The property name, for a property.
        public var propertyName: String? {
            switch self {
            case .entity: nil
            case .attribute(_, let n), .relationship(_, let n): n
            }
        }

        /// `entity Note`, `attribute Note.title`, `relationship Note.tags`.
        public var label: String {
            switch self {
            case .entity(let e): "entity \(e)"
            case .attribute(let e, let n): "attribute \(e).\(n)"
            case .relationship(let e, let n): "relationship \(e).\(n)"
            }
        }
    }

    /// The cardinality of a relationship.
    public enum RelationshipKind: Sendable, Hashable, CustomStringConvertible {
        /// At most one destination object.
        case toOne
        /// A set of destination objects.
        case toMany
        /// An ordered set of destination objects.
        case orderedToMany

        /// The kind of a relationship.
        public init(_ r: RelationshipDescription) {
            self = r.isToMany ? (r.isOrdered ? .orderedToMany : .toMany) : .toOne
        }

        public var description: String {
            switch self {
            case .toOne: "to-one"
            case .toMany: "to-many"
            case .orderedToMany: "ordered to-many"
            }
        }
    }

    /// What changed.
    public enum Kind: Sendable, Hashable {
        /// The element is new in the destination model.
        case added
        /// The element is only in the source model.
        case removed
        /// The element maps from a source element of another name (by renaming identifier).
        case renamed(from: String)
        /// An entity's parent entity changed (nil: no parent).
        case parentChanged(from: String?, to: String?)
        /// An entity became abstract or concrete.
        case abstractChanged(from: Bool, to: Bool)
        /// An entity's uniqueness constraints changed (each constraint joined with ",").
        case uniquenessConstraintsChanged(from: [String], to: [String])
        /// An entity's indexes changed: fetch indexes, compound indexes and indexed attributes,
        /// each as a short text such as `byDate(date desc)`.
        case indexesChanged(from: [String], to: [String])
        /// The version hash modifier of an entity or property changed.
        case versionHashModifierChanged(from: String?, to: String?)
        /// An attribute's type changed.
        case typeChanged(from: AttributeType, to: AttributeType)
        /// A property became optional (`to == true`) or non-optional.
        case optionalityChanged(from: Bool, to: Bool)
        /// An attribute's default value changed (as written in the model).
        case defaultValueChanged(from: String?, to: String?)
        /// A property became transient (`to == true`) or stored.
        case transientChanged(from: Bool, to: Bool)
        /// A property became read-only or writable.
        case readOnlyChanged(from: Bool, to: Bool)
        /// A Binary attribute's "allows external storage" changed.
        case externalStorageChanged(from: Bool, to: Bool)
        /// An attribute's "preserve value in history on deletion" changed.
        case preservesValueInHistoryChanged(from: Bool, to: Bool)
        /// A derived attribute's expression changed (nil: not derived).
        case derivationChanged(from: String?, to: String?)
        /// A property that was an attribute is a relationship, or the other way round.
        case propertyKindChanged(fromAttribute: Bool)
        /// A relationship's cardinality changed.
        case relationshipKindChanged(from: RelationshipKind, to: RelationshipKind)
        /// A relationship points at another entity (names in the destination model; `from`
        /// is the source destination's name).
        case destinationChanged(from: String, to: String)
        /// A relationship's inverse changed.
        case inverseChanged(from: String?, to: String?)
        /// A relationship's delete rule changed.
        case deleteRuleChanged(from: DeleteRule, to: DeleteRule)
        /// A relationship's minimum or maximum count changed (0 = no limit for the maximum).
        case countChanged(fromMin: Int, fromMax: Int, toMin: Int, toMax: Int)
    }

    /// The element changed: destination names, or source names for a removed element.
    public var element: Element
    /// What changed.
    public var kind: Kind
    /// Why Core Data cannot infer a mapping for this change; nil when it can.
    public var problem: String?
    /// A caveat for a change Core Data infers (for example that existing rows must already
    /// satisfy a new uniqueness constraint); nil when there is none.
    public var note: String?

    /// Creates a change.
    public init(_ element: Element, _ kind: Kind, problem: String? = nil, note: String? = nil) {
        self.element = element
        self.kind = kind
        self.problem = problem
        self.note = note
    }

    /// Whether Core Data's lightweight migration can infer a mapping for this change.
    public var isInferable: Bool { problem == nil }

    /// What changed, in words, without the element: `type String → Integer 64`.
    public var summary: String {
        func text(_ s: String?) -> String { s.map { "\"\($0)\"" } ?? "none" }
        func flag(_ b: Bool, _ yes: String, _ no: String) -> String { b ? yes : no }
        switch kind {
        case .added: return "added"
        case .removed: return "removed"
        case .renamed(let old): return "renamed from \(old)"
        case .parentChanged(let a, let b): return "parent \(a ?? "none") → \(b ?? "none")"
        case .abstractChanged(_, let b): return b ? "became abstract" : "became concrete"
        case .uniquenessConstraintsChanged(let a, let b):
            return "uniqueness constraints \(a.isEmpty ? "none" : a.map { "(\($0))" }.joined(separator: " ")) → \(b.isEmpty ? "none" : b.map { "(\($0))" }.joined(separator: " "))"
        case .indexesChanged(let a, let b):
            return "indexes \(a.isEmpty ? "none" : a.joined(separator: ", ")) → \(b.isEmpty ? "none" : b.joined(separator: ", "))"
        case .versionHashModifierChanged(let a, let b): return "version hash modifier \(text(a)) → \(text(b))"
        case .typeChanged(let a, let b): return "type \(a.xmlName) → \(b.xmlName)"
        case .optionalityChanged(_, let b): return b ? "became optional" : "became non-optional"
        case .defaultValueChanged(let a, let b): return "default \(text(a)) → \(text(b))"
        case .transientChanged(_, let b): return b ? "became transient" : "became stored (no longer transient)"
        case .readOnlyChanged(_, let b): return flag(b, "became read-only", "became writable")
        case .externalStorageChanged(_, let b): return flag(b, "now allows external storage", "no longer allows external storage")
        case .preservesValueInHistoryChanged(_, let b): return flag(b, "now preserves its value in history on deletion", "no longer preserves its value in history on deletion")
        case .derivationChanged(let a, let b): return "derivation \(text(a)) → \(text(b))"
        case .propertyKindChanged(let wasAttribute): return wasAttribute ? "was an attribute, is a relationship" : "was a relationship, is an attribute"
        case .relationshipKindChanged(let a, let b): return "\(a) → \(b)"
        case .destinationChanged(let a, let b): return "destination \(a) → \(b)"
        case .inverseChanged(let a, let b): return "inverse \(a ?? "none") → \(b ?? "none")"
        case .deleteRuleChanged(let a, let b): return "delete rule \(a.xmlName) → \(b.xmlName)"
        case .countChanged(let a0, let a1, let b0, let b1):
            func range(_ lo: Int, _ hi: Int) -> String { "\(lo)…\(hi == 0 ? "∞" : String(hi))" }
            return "count \(range(a0, a1)) → \(range(b0, b1))"
        }
    }

    /// The kind's name, for JSON and scripts: `added`, `typeChanged`, `relationshipKindChanged`…
    public var kindName: String {
        switch kind {
        case .added: "added"
        case .removed: "removed"
        case .renamed: "renamed"
        case .parentChanged: "parentChanged"
        case .abstractChanged: "abstractChanged"
        case .uniquenessConstraintsChanged: "uniquenessConstraintsChanged"
        case .indexesChanged: "indexesChanged"
        case .versionHashModifierChanged: "versionHashModifierChanged"
        case .typeChanged: "typeChanged"
        case .optionalityChanged: "optionalityChanged"
        case .defaultValueChanged: "defaultValueChanged"
        case .transientChanged: "transientChanged"
        case .readOnlyChanged: "readOnlyChanged"
        case .externalStorageChanged: "externalStorageChanged"
        case .preservesValueInHistoryChanged: "preservesValueInHistoryChanged"
        case .derivationChanged: "derivationChanged"
        case .propertyKindChanged: "propertyKindChanged"
        case .relationshipKindChanged: "relationshipKindChanged"
        case .destinationChanged: "destinationChanged"
        case .inverseChanged: "inverseChanged"
        case .deleteRuleChanged: "deleteRuleChanged"
        case .countChanged: "countChanged"
        }
    }

    /// `attribute Note.title: type String → Integer 64 (not inferable: …)`.
    public var description: String {
        var line = "\(element.label): \(summary)"
        if let problem { line += " (not inferable: \(problem))" }
        return line
    }
}
