import Foundation

/// A fetched property: a weak, one-way relationship defined by a fetch request.
///
/// Fetched properties do not enter the entity's version hash.
public struct FetchedPropertyDescription: Sendable, Hashable {
    /// The property name.
    public var name: String
    /// The fetch request that computes the property's value.
    public var fetchRequest: FetchRequestTemplate
    /// User info entries.
    public var userInfo: [String: String]
    /// Whether the property may be empty.
    public var isOptional: Bool
    /// The renaming identifier (`elementID` in XML).
    public var renamingIdentifier: String?
    /// The version hash modifier.
    public var versionHashModifier: String?

    /// Creates a fetched property.
    public init(
        name: String,
        fetchRequest: FetchRequestTemplate,
        userInfo: [String: String] = [:],
        isOptional: Bool = true,
        renamingIdentifier: String? = nil,
        versionHashModifier: String? = nil
    ) {
        self.name = name
        self.fetchRequest = fetchRequest
        self.userInfo = userInfo
        self.isOptional = isOptional
        self.renamingIdentifier = renamingIdentifier
        self.versionHashModifier = versionHashModifier
    }
}
