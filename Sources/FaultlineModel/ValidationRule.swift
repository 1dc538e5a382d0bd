import Foundation

/// A validation rule of an attribute: a predicate the value must satisfy and the warning
/// (a message or an error code, as text) reported when it does not.
public struct ValidationRule: Sendable, Hashable {
    /// The predicate in NSPredicate format (`SELF >= 1`).
    public var predicateFormat: String
    /// The warning text or code.
    public var warning: String

    /// Creates a rule.
    public init(predicateFormat: String, warning: String = "") {
        self.predicateFormat = predicateFormat
        self.warning = warning
    }
}
