@testable import Faultline
import FaultlinePredicate
import Foundation
import Testing

/// Object IDs are packed; they still read, reflect and encode as their four parts.
@Suite struct ObjectIDRepresentationTests {
    @Test func anIDReadsAsItsPartsInPredicatesDumpsAndJSON() throws {
        let id = ManagedObjectID(entityName: "Asset", storeIdentifier: "3F2A-UUID", primaryKey: 42)
        #expect(try FLPredicate(format: "entityName == 'Asset' AND primaryKey == 42").evaluate(with: id))
        #expect(try !FLPredicate(format: "storeIdentifier == 'other'").evaluate(with: id))
        let labels = Mirror(reflecting: id).children.compactMap(\.label)
        #expect(labels == ["entityName", "storeIdentifier", "primaryKey", "temporaryNumber"])
        let json = String(decoding: try JSONEncoder().encode(id), as: UTF8.self)
        for part in [#""entityName":"Asset""#, #""storeIdentifier":"3F2A-UUID""#, #""primaryKey":42"#, #""temporaryNumber":0"#] {
            #expect(json.contains(part), "\(json)")
        }
        #expect(try JSONDecoder().decode(ManagedObjectID.self, from: Data(json.utf8)) == id)
        let temporary = ManagedObjectID(temporaryFor: "Asset")
        #expect(try JSONDecoder().decode(ManagedObjectID.self, from: JSONEncoder().encode(temporary)) == temporary)
        #expect(temporary != id && temporary.isTemporaryID && temporary.primaryKey == 0)
    }
}

/// IDs hash in groups of eight consecutive keys (see `ManagedObjectID._rawHashValue(seed:)`):
/// a registry filled in key order writes neighbouring buckets. The grouping must not cost
/// correctness — sets of IDs of several entities, temporary IDs and keys spaced by eight.
@Suite struct ObjectIDHashTests {
    @Test func eightConsecutiveKeysHashToNeighbouringValues() {
        let seed = 0x5EED
        for first in stride(from: Int64(0), to: 800, by: 8) {
            let base = ManagedObjectID(entityName: "Asset", storeIdentifier: "S", primaryKey: first)._rawHashValue(seed: seed)
            #expect(base & 7 == 0)
            for offset in Int64(1)..<8 {
                let id = ManagedObjectID(entityName: "Asset", storeIdentifier: "S", primaryKey: first + offset)
                #expect(id._rawHashValue(seed: seed) == base + Int(offset))
            }
        }
        // The groups themselves are spread, and other entities' groups elsewhere.
        let groups = Set((0..<1000).map { ManagedObjectID(entityName: "Asset", storeIdentifier: "S", primaryKey: Int64($0) * 8)._rawHashValue(seed: seed) & 0xFFFFF })
        #expect(groups.count > 980)
        let asset = ManagedObjectID(entityName: "Asset", storeIdentifier: "S", primaryKey: 8)._rawHashValue(seed: seed)
        let owner = ManagedObjectID(entityName: "Owner", storeIdentifier: "S", primaryKey: 8)._rawHashValue(seed: seed)
        #expect(asset != owner)
    }

    @Test func setsOfGroupedIDsHoldEveryID() {
        var ids: [ManagedObjectID] = []
        for key in Int64(1)...20_000 {
            ids.append(ManagedObjectID(entityName: "Asset", storeIdentifier: "S", primaryKey: key))
            ids.append(ManagedObjectID(entityName: "Owner", storeIdentifier: "S", primaryKey: key))
            ids.append(ManagedObjectID(entityName: "Asset", storeIdentifier: "S", primaryKey: key * 8 + 1_000_000))
        }
        ids += (0..<5_000).map { _ in ManagedObjectID(temporaryFor: "Asset") }
        var registry: [ManagedObjectID: Int] = [:]
        for (index, id) in ids.enumerated() { registry[id] = index }
        #expect(registry.count == ids.count)
        for (index, id) in ids.enumerated() where registry[id] != index {
            Issue.record("\(id) maps to \(String(describing: registry[id])), not \(index)")
            break
        }
        for key in Int64(1)...1_000 { registry.removeValue(forKey: ManagedObjectID(entityName: "Owner", storeIdentifier: "S", primaryKey: key)) }
        #expect(registry.count == ids.count - 1_000)
        #expect(registry[ManagedObjectID(entityName: "Owner", storeIdentifier: "S", primaryKey: 1_001)] != nil)
    }
}

/// Object identities hash by address in groups too (`ObjectKey`): small objects share a
/// 256-byte slice, and every one of them must still be found.
@Suite struct ObjectKeyHashTests {
    final class Small { let value: Int; init(_ value: Int) { self.value = value } }

    @Test func objectsSharingAnAddressSliceAreAllKept() {
        let objects = (0..<20_000).map(Small.init)
        var table: [ObjectKey: Int] = [:]
        for object in objects { table[ObjectKey(object)] = object.value }
        #expect(table.count == objects.count)
        #expect(objects.allSatisfy { table[ObjectKey($0)] == $0.value })
        for object in objects where object.value % 2 == 0 { table[ObjectKey(object)] = nil }
        #expect(table.count == objects.count / 2)
        #expect(objects.allSatisfy { table[ObjectKey($0)] == ($0.value % 2 == 0 ? nil : $0.value) })
    }
}
