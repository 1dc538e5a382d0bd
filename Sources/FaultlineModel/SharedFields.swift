/// The fields of a value type held in one immutable box that all its copies share: copying
/// the value costs one retain instead of one per field, and changing it (rare: while a model
/// or a mapping is built) makes a new box. Attribute, relationship and entity-mapping
/// descriptions keep their fields this way (an entity description has its own box, which
/// also holds the entity's derived ``PropertyLayout``).
package final class SharedFields<Fields: Sendable & Hashable>: Sendable {
    /// The fields.
    package let fields: Fields

    /// A box holding `fields`.
    package init(_ fields: Fields) { self.fields = fields }

    /// A new box with `change` applied to a copy of the fields.
    package func updated(_ change: (inout Fields) -> Void) -> SharedFields {
        var fields = self.fields
        change(&fields)
        return SharedFields(fields)
    }

    /// Whether two boxes hold equal fields (at once when they are the same box).
    package func holdsSameFields(as other: SharedFields) -> Bool {
        self === other || fields == other.fields
    }
}
