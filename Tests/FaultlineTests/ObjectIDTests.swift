import Faultline
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
