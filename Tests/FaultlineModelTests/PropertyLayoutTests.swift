import FaultlineModel
import Foundation
import Testing

/// `PropertyLayout.slot(of:)`: the same answer by scan (small entities) as by the index
/// (large ones), names compared as Swift strings compare.
@Suite struct PropertyLayoutTests {
    static func entity(_ names: [String]) throws -> EntityDescription {
        let model = try ManagedObjectModel(entities: [EntityDescription(name: "Uni", attributes: names.map { AttributeDescription(name: $0, type: .string) })])
        return try #require(model.entity(named: "Uni"))
    }

    @Test func smallAndLargeEntitiesFindTheSameNames() throws {
        for count in [3, 12, 13, 40] {
            let names = ["aK"] + (1..<count).map { "attribute\($0)" }
            let layout = try Self.entity(names).propertyLayout
            for name in names { #expect(layout.slot(of: name).map { layout.names[$0] } == name, "\(name) of \(count)") }
            // U+212A KELVIN SIGN is canonically "K", three UTF-8 bytes against one.
            #expect(layout.slot(of: "a\u{212A}") == layout.slot(of: "aK"), "\(count) names")
            #expect(layout.slot(of: "a\u{212A}") != nil, "\(count) names")
            #expect(try Self.entity(names).attribute(named: "a\u{212A}") != nil, "\(count) names")
            for missing in ["", "a", "aKK", "attribute", "attribute0", "é", "attribute\(count)"] {
                #expect(layout.slot(of: missing) == nil, "\(missing) of \(count)")
            }
        }
    }

    /// A key is first compared with the names by its representation; keys spelled alike but
    /// held otherwise (built at run time, with spare capacity) still find their slot.
    @Test func keysHeldOtherwiseFindTheirSlot() throws {
        let long = "aRatherLongAttributeNameOfManyBytes"
        let layout = try Self.entity(["short", long, "other"]).propertyLayout
        func name(of key: String) -> String? { layout.slot(of: key).map { layout.names[$0] } }
        #expect(name(of: "short") == "short")
        #expect(name(of: long) == long)
        #expect(name(of: "other") == "other")
        let built = String(decoding: Array(long.utf8), as: UTF8.self)
        #expect(name(of: built) == long)
        var roomy = String()
        roomy.reserveCapacity(64)
        roomy += "short"
        #expect(name(of: roomy) == "short")
        roomy += "er"
        #expect(layout.slot(of: roomy) == nil)
        #expect(layout.slot(of: "shor") == nil)
        #expect(layout.slot(of: long + "s") == nil)
        // The layout's own name (the same storage) is found; a copy of it changed afterwards
        // has storage of its own and is not.
        let held = layout.names[1]
        #expect(layout.slot(of: held) == 1)
        var changed = held
        changed.append("s")
        #expect(layout.slot(of: changed) == nil)
        changed.removeLast()
        #expect(layout.slot(of: changed) == 1)
    }

    /// Names that repeat (an attribute and a relationship of one name, an invalid model): the
    /// attribute's slot, whichever string spells the key — the relationship's own name too,
    /// which a comparison of the strings' words in memory would take for its slot.
    @Test func aRepeatedNameGivesTheAttributesSlotWhateverStringSpellsIt() {
        let base = "aRatherLongDuplicatedPropertyName"
        let attributeName = String(decoding: Array(base.utf8), as: UTF8.self)
        let relationshipName = String(decoding: Array(base.utf8), as: UTF8.self)
        let layout = PropertyLayout(
            attributes: [AttributeDescription(name: attributeName, type: .string)],
            relationships: [RelationshipDescription(name: relationshipName, destination: "Other")])
        #expect(layout.hasDuplicateNames)
        #expect(layout.slot(of: attributeName) == 0)
        #expect(layout.slot(of: relationshipName) == 0)
        #expect(layout.slot(of: layout.names[1]) == 0)
        #expect(layout.slot(of: base) == 0)
    }
}
