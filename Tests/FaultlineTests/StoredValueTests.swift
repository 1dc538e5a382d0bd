import FaultlineModel
import Foundation
import Testing

@testable import Faultline

/// `StoredValue.holdsSame(_:)`: true only for a value of the case's own type that is equal —
/// per-key validation then keeps the slot as it is; anything else is compared the slow way.
@Suite struct StoredValueTests {
    @Test func holdsSameIsTrueOnlyForAnEqualValueOfTheCasesType() {
        let date = Date(timeIntervalSinceReferenceDate: 42)
        let id = UUID()
        let same: [(StoredValue, Any?)] = [
            (.int64(7), Int64(7)), (.int32(7), Int32(7)), (.int16(7), Int16(7)), (.bool(true), true),
            (.double(1.5), 1.5), (.float(1.5), Float(1.5)), (.date(date), date), (.string("café"), "café"),
            (.data(Data([1, 2, 3])), Data([1, 2, 3])), (.uuid(id), id), (.none, nil),
        ]
        for (stored, value) in same {
            var held = value
            #expect(stored.holdsSame(&held), "\(stored) and \(String(describing: value))")
            #expect(ManagedObject.valuesEqual(held, value), "the value is put back as it was")
        }
        let different: [(StoredValue, Any?)] = [
            (.int64(7), Int64(8)), (.int64(7), Int32(7)), (.int64(7), 7), (.int64(7), Optional(Int64(7)) as Any),
            (.int16(7), Int64(7)), (.bool(true), false), (.bool(true), 1), (.double(1.5), Float(1.5)),
            (.double(.nan), Double.nan), (.string("a"), "b"), (.string("a"), Substring("a")), (.string("a"), nil),
            (.data(Data([1])), Data([2])), (.uuid(id), UUID()), (.date(date), date.addingTimeInterval(1)),
            (.none, Int64(0)), (StoredValue(Decimal(7) as Any?), Decimal(7)),
        ]
        for (stored, value) in different {
            var held = value
            #expect(!stored.holdsSame(&held), "\(stored) and \(String(describing: value))")
            #expect(String(describing: held) == String(describing: value), "the value is put back as it was")
        }
    }
}

/// `StoredValue.ofExactType(_:for:)`, `setValue(_:forKey:)`'s way around the casts: for a
/// value of the attribute's own Swift type, the stored value coercion and `init(_:)` make;
/// for anything else nil, so the value is coerced (converted or refused) as before.
@Suite struct ExactTypeValueTests {
    private static func attribute(_ type: AttributeType) -> AttributeDescription { AttributeDescription(name: "v", type: type) }

    @Test func aValueOfTheAttributesOwnTypeIsStoredAsCoercionStoresIt() throws {
        let date = Date(timeIntervalSinceReferenceDate: 42)
        let id = UUID()
        let own: [(AttributeType, Any)] = [
            (.integer64, Int64(7)), (.integer32, Int32(7)), (.integer16, Int16(7)), (.boolean, true), (.double, 1.5),
            (.float, Float(1.5)), (.string, "café"), (.date, date), (.binaryData, Data([1, 2, 3])), (.uuid, id),
        ]
        for (type, value) in own {
            let exact = try #require(StoredValue.ofExactType(value, for: type), "\(type) \(value)")
            let coerced = StoredValue(try AttributeValues.coerce(value, to: Self.attribute(type), entityName: "E", objectID: nil))
            #expect(StoredValue.same(exact, coerced), "\(type) \(value)")
        }
        // Values that convert (or fail to), and types with no case of their own: coerced.
        let others: [(AttributeType, Any)] = [
            (.integer64, 7), (.integer64, Int32(7)), (.integer16, Int64(7)), (.integer16, 70_000), (.boolean, 1), (.double, Float(1.5)),
            (.double, 2), (.float, 1.5), (.string, Substring("a")), (.string, 7), (.binaryData, [UInt8]([1])), (.integer64, Optional(Int64(7)) as Any),
            (.decimal, Decimal(7)), (.uri, URL(fileURLWithPath: "/")), (.transformable, Data([1])), (.objectID, "x"), (.undefined, Int64(7)),
        ]
        for (type, value) in others { #expect(StoredValue.ofExactType(value, for: type) == nil, "\(type) \(value)") }
    }

    @Test func setValueStoresEachTypeAsItWasGivenAndStillRefusesAMismatch() throws {
        let types: [AttributeType] = [.integer16, .integer32, .integer64, .boolean, .double, .float, .string, .date, .binaryData, .uuid]
        let model = try ManagedObjectModel(entities: [
            EntityDescription(name: "Thing", attributes: types.map { AttributeDescription(name: "v\($0.rawValue)", type: $0) })
        ])
        let context = ManagedObjectContext(coordinator: PersistentStoreCoordinator(store: try SQLiteStore(inMemoryWith: model)))
        let thing = try context.insertObject(entityName: "Thing")
        let date = Date(timeIntervalSinceReferenceDate: 42)
        let id = UUID()
        let values: [Any] = [Int16(-3), Int32(70_000), Int64(1) << 40, true, 0.25, Float(0.5), "text", date, Data([9]), id]
        for (type, value) in zip(types, values) { try thing.setValue(value, forKey: "v\(type.rawValue)") }
        for (type, value) in zip(types, values) {
            let read = thing.value(forKey: "v\(type.rawValue)")
            #expect(read.map { Swift.type(of: $0) == Swift.type(of: value) } == true && ManagedObject.valuesEqual(read, value), "\(type)")
        }
        // Converted as before: an Int for an Integer 16, a Substring for a String.
        try thing.setValue(12, forKey: "v\(AttributeType.integer16.rawValue)")
        #expect(thing.value(forKey: "v\(AttributeType.integer16.rawValue)") as? Int16 == 12)
        try thing.setValue(Substring("sub"), forKey: "v\(AttributeType.string.rawValue)")
        #expect(thing.value(forKey: "v\(AttributeType.string.rawValue)") as? String == "sub")
        #expect(throws: ManagedObjectError.self) { try thing.setValue("seven", forKey: "v\(AttributeType.integer64.rawValue)") }
        #expect(throws: ManagedObjectError.self) { try thing.setValue(Int64(7), forKey: "v\(AttributeType.string.rawValue)") }
        try context.save()
        #expect(!context.hasChanges)
    }
}

/// A fetch's row page: filled once (growing from a small buffer), then read by index.
@Suite struct RowPageTests {
    @Test func aPageGrowsWhileFilledAndReadsBackItsValues() {
        let page = RowPage(capacity: 1)
        func value(_ index: Int) -> StoredValue {
            switch index % 3 {
            case 0: return .int64(Int64(index))
            case 1: return .string("value \(index) of a page, longer than a small string")
            default: return .none
            }
        }
        let values = (0..<300).map(value)
        for value in values { page.append(value) }
        #expect(page.count == values.count)
        #expect(values.indices.allSatisfy { StoredValue.same(page[$0], values[$0]) })
        let copy = page.values(in: 10..<20)
        #expect(copy.count == 10)
        #expect(copy.indices.allSatisfy { StoredValue.same(copy[$0], values[10 + $0]) })
        #expect(page.values(in: 300..<300).isEmpty)
    }

    /// Rows appended whole (the decoder's way) make room as they go, wider than the page
    /// was made for too, and read back in order, each row where the last one ended.
    @Test(arguments: [1, 5, 64]) func rowsAppendedWholeReadBackInOrder(capacity: Int) {
        let page = RowPage(capacity: capacity)
        var expected: [StoredValue] = []
        for row in 0..<120 {
            let width = row % 7 + 1  // up to 7 values, wider than a page of 1 or 5
            let base = page.count
            page.appendRow(width: width) { slot in
                slot == 2 ? .string("row \(row), long enough not to be a small string") : (slot == 3 ? .none : .int64(Int64(row * 10 + slot)))
            }
            #expect(page.count == base + width)
            for slot in 0..<width {
                expected.append(slot == 2 ? .string("row \(row), long enough not to be a small string") : (slot == 3 ? .none : .int64(Int64(row * 10 + slot))))
            }
        }
        #expect(page.count == expected.count)
        #expect(expected.indices.allSatisfy { StoredValue.same(page[$0], expected[$0]) })
    }
}

/// A decoded row's bookkeeping: packed into 24 bytes, read back as it was given.
@Suite struct DecodedRowTests {
    @Test func aRowIsTwentyFourBytesAndKeepsItsPlaceAtTheLimits() {
        #expect(MemoryLayout<DecodedPage.Row>.stride == 24)
        let corners: [(base: Int, page: Int, plan: Int)] = [
            (0, 0, 0), (DecodedPage.slotsPerPage, 70_000, 3), (Int(UInt16.max), Int(UInt32.max), Int(UInt16.max)),
        ]
        for corner in corners {
            let row = DecodedPage.Row(primaryKey: -5, version: 1 << 40, base: corner.base, page: corner.page, plan: corner.plan)
            #expect((row.primaryKey, row.version) == (-5, 1 << 40))
            #expect((row.base, row.page, row.plan) == corner)
        }
    }
}

/// An object is made for every row fetched and holds two value sets: their size is what a
/// fetch writes and frees per row (Performance.md). A field added to `ObjectValues` fails here,
/// so that its cost is decided, not incidental.
@Suite struct ObjectValuesSizeTests {
    @Test func aValueSetIsTwentyFourBytes() {
        // The page, the own slots and the rare keys aside share one tagged word (never two
        // of them at once): the layout, that word, and the row's base beside the written slots.
        #expect(MemoryLayout<ObjectValues>.size == 24)
    }
}

/// Values of keys a layout lacks (an entity built without a model) live beside the value
/// set's slots (`ObjectValues.extra`, in an `ExtendedValues` with them): read back, kept through writes to the slots, not shared
/// between copies, compared and iterated with the rest, and gone with their last key — the
/// value set then as it was. (Only `holdsNoReference` looked at them in a test before.)
@Suite struct ObjectValuesExtraKeysTests {
    @Test func keysTheLayoutLacksAreKeptBesideTheSlots() throws {
        let model = try ManagedObjectModel(entities: [
            EntityDescription(name: "Thing", attributes: [AttributeDescription(name: "title", type: .string), AttributeDescription(name: "count", type: .integer64)]),
        ])
        let layout = try #require(model.entity(named: "Thing")).propertyLayout
        let page = RowPage(capacity: 4)
        let row: [String: StoredValue] = ["title": .string("row"), "count": .int64(7)]
        for name in layout.names { page.append(row[name] ?? .none) }
        let committed = ObjectValues(layout: layout, page: page, base: 0)
        #expect(committed["title"] as? String == "row" && committed["count"] as? Int64 == 7)
        var values = committed
        #expect(!values.differs(from: committed))

        values["note"] = "aside"  // a key the layout lacks, on values still in their page
        #expect(values["note"] as? String == "aside" && values["title"] as? String == "row" && values["count"] as? Int64 == 7)
        #expect(values.differs(from: committed) && values.differs(from: committed, at: "note") && !values.differs(from: committed, at: "title"))
        #expect(!values.isEmpty && !values.holdsNoReference)

        var copy = values
        values["title"] = "written"  // a slot written: the key aside stays
        values["count"] = nil
        #expect(values["note"] as? String == "aside" && values["title"] as? String == "written" && values["count"] == nil)
        #expect(copy["title"] as? String == "row" && copy["count"] as? Int64 == 7, "a copy does not share the write")
        copy["note"] = "changed"
        #expect(values["note"] as? String == "aside", "nor a change of the key aside")
        #expect(Set(values.keys) == ["title", "note"] && values.dictionary.count == 2)

        let temporary = ManagedObjectID(names: 1, temporaryNumber: 3)
        let permanent = ManagedObjectID(names: 1, primaryKey: 9)
        values["link"] = temporary
        #expect(values.holdsTemporaryIDs && values.objectID(forKey: "link") == temporary)
        values.replaceObjectIDs([temporary: permanent])
        #expect(values.objectID(forKey: "link") == permanent && values["title"] as? String == "written")

        values["note"] = nil
        values["link"] = nil  // the last key aside gone: plain slots again
        #expect(values.keys == ["title"] && !values.holdsTemporaryIDs)
        values.removeAll()
        #expect(values.isEmpty && values.holdsNoReference)
    }
}
