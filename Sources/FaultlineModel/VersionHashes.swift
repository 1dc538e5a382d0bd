import Foundation

/// Core Data's version hashes, computed byte-for-byte as Apple does.
///
/// Every hash is SHA-256; strings are UTF-8 without terminator, integers little-endian.
/// The rules below reproduce every entity hash of the Apple-written artifacts in the test
/// corpus (the RestKit `VersionInfo.plist`, and all six Core Data stores' metadata against
/// the models cached in the same stores):
///
/// - property: `SHA256(name ‖ u16(optional·1 | transient·2 | readOnly·4) ‖ [modifier])`
/// - attribute: `SHA256(property ‖ i32(type) ‖ [01 if external storage] ‖ [01 if preserved
///   after deletion])`
/// - derived attribute: `SHA256(derivation expression ‖ [filtering predicate])` — name, type
///   and flags do not enter it
/// - relationship: `SHA256(property ‖ destination ‖ [inverse name, unless the relationship
///   is its own inverse] ‖ i32(maxCount) ‖ i32(minCount) ‖ [u16(1) if ordered])`
/// - entity: `SHA256(name ‖ u8(abstract) ‖ [superentity hash] ‖ hashes of all non-transient
///   attributes and relationships, inherited ones included, sorted by name ‖ [modifier] ‖
///   uniqueness constraints, each joined with ".", sorted)`
enum VersionHashing {
    static func utf8Less(_ a: String, _ b: String) -> Bool {
        a.utf8.lexicographicallyPrecedes(b.utf8)
    }

    static func le32(_ v: Int) -> [UInt8] {
        let u = UInt32(truncatingIfNeeded: v)
        return [UInt8(truncatingIfNeeded: u), UInt8(truncatingIfNeeded: u >> 8), UInt8(truncatingIfNeeded: u >> 16), UInt8(truncatingIfNeeded: u >> 24)]
    }

    static func propertyHash(name: String, isOptional: Bool, isTransient: Bool, isReadOnly: Bool, modifier: String?) -> Data {
        var h = SHA256Hasher()
        h.update(name.utf8)
        let flags: UInt16 = (isOptional ? 1 : 0) | (isTransient ? 2 : 0) | (isReadOnly ? 4 : 0)
        h.update([UInt8(truncatingIfNeeded: flags), UInt8(truncatingIfNeeded: flags >> 8)])
        if let modifier, !modifier.isEmpty { h.update(modifier.utf8) }
        return h.finalize()
    }

    static func attributeHash(_ a: AttributeDescription) -> Data {
        if let expression = a.derivationExpression {
            var h = SHA256Hasher()
            h.update(expression.utf8)
            if let filter = a.filteringPredicateFormat { h.update(filter.utf8) }
            return h.finalize()
        }
        var h = SHA256Hasher()
        h.update(propertyHash(name: a.name, isOptional: a.isOptional, isTransient: a.isTransient, isReadOnly: a.isReadOnly, modifier: a.versionHashModifier))
        h.update(le32(a.attributeType.rawValue))
        if a.allowsExternalBinaryDataStorage { h.update([1]) }
        if a.preservesValueInHistoryOnDeletion { h.update([1]) }
        return h.finalize()
    }

    /// `isOwnInverse`: the inverse is this very relationship (a reflexive relationship such as
    /// `Person.mergeCandidates` ↔ itself); its name is then left out.
    static func relationshipHash(_ r: RelationshipDescription, isOwnInverse: Bool) -> Data {
        var h = SHA256Hasher()
        h.update(propertyHash(name: r.name, isOptional: r.isOptional, isTransient: r.isTransient, isReadOnly: r.isReadOnly, modifier: r.versionHashModifier))
        h.update(r.destinationEntityName.utf8)
        if let inverse = r.inverseName, !isOwnInverse { h.update(inverse.utf8) }
        h.update(le32(r.maxCount))
        h.update(le32(r.minCount))
        if r.isOrdered { h.update([1, 0]) }
        return h.finalize()
    }

    static func entityHash(_ e: EntityDescription, superentityHash: Data?) -> Data {
        var h = SHA256Hasher()
        h.update(e.name.utf8)
        h.update([e.isAbstract ? 1 : 0])
        if let superentityHash { h.update(superentityHash) }
        var parts: [(String, Data)] = []
        for a in e.attributes where !a.isTransient { parts.append((a.name, a.versionHash)) }
        for r in e.relationships where !r.isTransient { parts.append((r.name, r.versionHash)) }
        parts.sort { utf8Less($0.0, $1.0) }
        for (_, d) in parts { h.update(d) }
        if let modifier = e.versionHashModifier, !modifier.isEmpty { h.update(modifier.utf8) }
        let constraints = e.uniquenessConstraints.filter { !$0.isEmpty }.map { $0.joined(separator: ".") }.sorted(by: utf8Less)
        for c in constraints { h.update(c.utf8) }
        return h.finalize()
    }
}

extension ManagedObjectModel {
    /// The store's `NSStoreModelVersionHashesDigest`: SHA-512 over every entity's name and
    /// version hash, entities sorted by name. (Verified against all six corpus stores.)
    public var versionHashesDigest: Data {
        var h = SHA512Hasher()
        for e in entities.sorted(by: { VersionHashing.utf8Less($0.name, $1.name) }) {
            h.update(e.name.utf8)
            h.update(e.versionHash)
        }
        return h.finalize()
    }

    /// The model's checksum as Core Data prints it (`NSStoreModelVersionChecksumKey`,
    /// `NSManagedObjectModel.versionChecksum`): base64 of ``versionHash``.
    public var versionChecksum: String { versionHash.base64EncodedString() }
}
