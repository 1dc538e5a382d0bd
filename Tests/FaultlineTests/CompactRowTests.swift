import FaultlineModel
import FaultlineTestSupport
import Foundation
import Testing

@testable import Faultline

/// A fetch's compact row pages (`CompactRowFormat`, `RowPage(format:capacity:)`): each value
/// in a field of its own type behind a header word, values of another type kept aside, read
/// back as the values they were — by value, in place for a typed getter, and copied out.
@Suite struct CompactRowTests {
    private final class Tracked {}

    private static let kinds: [CompactRowFormat.Kind] = [
        .int64, .int32, .int16, .bool, .double, .float, .date, .string, .data, .uuid, .objectID, .side, .empty,
    ]

    /// The value row `row` holds in `slot`: every third one nil, every fifth one of another
    /// type than its field's (kept aside), the rest of the field's own type.
    private static func value(row: Int, slot: Int, tracked: Tracked) -> StoredValue {
        // A slot no column fills has no field: never written, always nil.
        if (row + slot) % 3 == 0 || kinds[slot] == .empty { return .none }
        if (row + slot) % 5 == 0 { return .string("row \(row) slot \(slot): a value of another type, long enough to be on the heap") }
        switch kinds[slot] {
        case .int64: return .int64(Int64(row) * 1_000_003)
        case .int32: return .int32(Int32(row) - 7)
        case .int16: return .int16(Int16(row % 300))
        case .bool: return .bool(row % 2 == 0)
        case .double: return .double(Double(row) / 3)
        case .float: return .float(Float(row) / 7)
        case .date: return .date(Date(timeIntervalSinceReferenceDate: Double(row) * 86_400))
        case .string: return .string(row % 2 == 0 ? "r\(row)" : "row \(row), a string too long to be stored inline in its sixteen bytes")
        case .data: return .data(Data((0..<(row % 40)).map { UInt8(truncatingIfNeeded: $0 &* row) }))
        case .uuid: return .uuid(UUID(uuid: (UInt8(row % 256), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)))
        case .objectID: return .objectID(ManagedObjectID(names: 3, primaryKey: Int64(row)))
        case .side: return row % 2 == 0 ? .other(AnyValueBox(tracked)) : .other(AnyValueBox(Decimal(row)))
        case .empty: return .none
        }
    }

    @Test func rowsOfEveryKindReadBackAsTheyWereWrittenAcrossGrowth() throws {
        let format = try #require(CompactRowFormat(kinds: Self.kinds))
        #expect(format.count == Self.kinds.count)
        // A header word, then 8 bytes for each number, date and side index, 16 for a String,
        // Data, UUID and object ID, none for the empty slot.
        #expect(format.stride == 1 + 8 + 4 * 2)
        weak var released: Tracked?
        do {
            let tracked = Tracked()
            released = tracked
            let page = RowPage(format: format, capacity: 1)  // grows (its rows moved as bytes) while filled
            var bases: [Int] = []
            for row in 0..<200 {
                bases.append(page.count)
                page.appendCompactRow { slot, kind, _ in
                    #expect(kind == Self.kinds[slot] && kind != .empty, "only slots with a field are written")
                    return .value(Self.value(row: row, slot: slot, tracked: tracked))
                }
            }
            #expect(page.count == 200 * format.stride)
            for (row, base) in bases.enumerated() {
                let copied = page.values(base: base, width: Self.kinds.count)
                for slot in Self.kinds.indices {
                    let expected = Self.value(row: row, slot: slot, tracked: tracked)
                    #expect(Self.same(page.value(base: base, slot: slot), expected), "row \(row) slot \(slot)")
                    #expect(Self.same(copied[slot], expected), "row \(row) slot \(slot), copied")
                }
                // In place, as a typed getter reads: its own type's field, nil, or (kept aside,
                // or another type's field) nil for the slow path.
                let int64 = page.read(base: base, slot: 0, field: (.int64, { $0.load(as: Int64.self) })) { _ in nil }
                switch Self.value(row: row, slot: 0, tracked: tracked) {
                case .int64(let value): #expect(int64 == .some(value))
                case .none: #expect(int64 == .some(nil))
                default: #expect(int64 == nil, "a value kept aside is read the slow way")
                }
                let text = page.read(base: base, slot: 7, field: (.string, { $0.assumingMemoryBound(to: String.self).pointee })) { _ in nil }
                if case .string(let value) = Self.value(row: row, slot: 7, tracked: tracked) { #expect(text == .some(value)) }
                // A String's field read as an Int64: nil for a nil slot, else the slow way.
                let misread = page.read(base: base, slot: 7, field: (.int64, { $0.load(as: Int64.self) })) { _ in nil }
                #expect(Self.value(row: row, slot: 7, tracked: tracked).isNone ? misread == .some(nil) : misread == nil)
                #expect(page.rowIsEmpty(base: base, width: Self.kinds.count) == false)
            }
        }
        #expect(released == nil, "a value kept aside outlived its page")
    }

    /// A field of one type is never read as another: a typed read of the wrong kind goes the
    /// slow way, whatever the field holds.
    @Test func aTypedReadOfAnotherKindIsNeverAnsweredInPlace() throws {
        let format = try #require(CompactRowFormat(kinds: [.string, .int64]))
        let page = RowPage(format: format, capacity: 64)
        page.appendCompactRow { slot, _, _ in .value(slot == 0 ? .string("text") : .int64(42)) }
        #expect(page.read(base: 0, slot: 0, field: (.int64, { $0.load(as: Int64.self) })) { _ in nil } == nil)
        #expect(page.read(base: 0, slot: 1, field: (.double, { $0.load(as: Double.self) })) { _ in nil } == nil)
        #expect(page.read(base: 0, slot: 1, field: (.int64, { $0.load(as: Int64.self) })) { _ in nil } == .some(42))
        page.appendCompactRow { _, _, _ in .none }
        #expect(page.rowIsEmpty(base: format.stride, width: 2))
        #expect(page.value(base: format.stride, slot: 0).isNone && page.value(base: format.stride, slot: 1).isNone)
    }

    @Test func aLayoutOfMoreThanThirtyTwoSlotsHasNoCompactFormat() {
        #expect(CompactRowFormat(kinds: Array(repeating: .int64, count: CompactRowFormat.maxSlots)) != nil)
        #expect(CompactRowFormat(kinds: Array(repeating: .int64, count: CompactRowFormat.maxSlots + 1)) == nil)
    }

    /// The same value: equal, or both boxed values that print alike.
    private static func same(_ a: StoredValue, _ b: StoredValue) -> Bool {
        if case .other(let x) = a, case .other(let y) = b { return String(describing: x.value) == String(describing: y.value) }
        return StoredValue.same(a, b)
    }
}

/// Fetches through compact and wide pages: a wide entity (more slots than a compact row
/// has bits for) and the sub-entities of one parent fetched together, their rows
/// interleaved (each plan's rows in pages of their own), read back by key and typed.
@Suite struct CompactRowFetchTests {
    private static func model() throws -> ManagedObjectModel {
        var wideAttributes: [AttributeDescription] = []
        for index in 0..<40 {
            wideAttributes.append(AttributeDescription(name: "a\(index)", type: index % 2 == 0 ? .integer64 : .string))
        }
        return try ManagedObjectModel(entities: [
            EntityDescription(name: "Wide", attributes: wideAttributes),
            EntityDescription(name: "Shape", isAbstract: true, attributes: [AttributeDescription(name: "name", type: .string)]),
            EntityDescription(name: "Circle", superentityName: "Shape", attributes: [AttributeDescription(name: "radius", type: .double)]),
            EntityDescription(
                name: "Square", superentityName: "Shape",
                attributes: [AttributeDescription(name: "side", type: .integer64), AttributeDescription(name: "label", type: .string)]),
        ])
    }

    @Test func wideRowsAndInterleavedSubentityRowsReadBackTheirValues() throws {
        let folder = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let model = try Self.model()
        let url = folder.appendingPathComponent("Shapes.sqlite")
        let coordinator = PersistentStoreCoordinator(store: try SQLiteStore(url: url, model: model, options: .init(readOnly: false, createIfMissing: true)))
        let writer = ManagedObjectContext(coordinator: coordinator)
        for index in 0..<300 {
            let wide = try writer.insertObject(entityName: "Wide")
            for attribute in 0..<40 {
                try wide.setValue(attribute % 2 == 0 ? Int64(index * 100 + attribute) as Any : "wide \(index) \(attribute)" as Any, forKey: "a\(attribute)")
            }
            if index % 2 == 0 {
                let circle = try writer.insertObject(entityName: "Circle")
                try circle.setValue(String(format: "shape %04d", index), forKey: "name")
                try circle.setValue(Double(index) / 4, forKey: "radius")
            } else {
                let square = try writer.insertObject(entityName: "Square")
                try square.setValue(String(format: "shape %04d", index), forKey: "name")
                try square.setValue(Int64(index), forKey: "side")
                try square.setValue(index % 3 == 0 ? nil : "square \(index), a label long enough for the heap", forKey: "label")
            }
        }
        try writer.save()

        let reader = ManagedObjectContext(coordinator: coordinator)
        var wideRequest = FetchRequest(entityName: "Wide")
        wideRequest.sortDescriptors = [FLSortDescriptor(key: "a0")]
        let wides = try reader.fetch(wideRequest)
        #expect(wides.count == 300)
        for (index, wide) in wides.enumerated() {
            for attribute in [0, 1, 30, 31, 32, 33, 38, 39] {
                if attribute % 2 == 0 {
                    #expect(wide.value(forKey: "a\(attribute)") as? Int64 == Int64(index * 100 + attribute))
                } else {
                    #expect(wide.value(forKey: "a\(attribute)") as? String == "wide \(index) \(attribute)")
                }
            }
        }

        var shapeRequest = FetchRequest(entityName: "Shape")
        shapeRequest.sortDescriptors = [FLSortDescriptor(key: "name")]
        let shapes = try reader.fetch(shapeRequest)
        #expect(shapes.count == 300)
        for (index, shape) in shapes.enumerated() {
            #expect(shape.value(forKey: "name") as? String == String(format: "shape %04d", index))
            if index % 2 == 0 {
                #expect(shape.entity.name == "Circle")
                #expect(shape.value(forKey: "radius") as? Double == Double(index) / 4)
            } else {
                #expect(shape.entity.name == "Square")
                #expect(shape.value(forKey: "side") as? Int64 == Int64(index))
                #expect(shape.value(forKey: "label") as? String == (index % 3 == 0 ? nil : "square \(index), a label long enough for the heap"))
            }
        }
        // A change made to a fetched object copies its row out of the page: the rest reads on.
        let square = shapes[1]
        try square.setValue("changed", forKey: "label")
        #expect(square.value(forKey: "label") as? String == "changed" && square.value(forKey: "side") as? Int64 == 1)
        #expect(square.changedValues().keys.sorted() == ["label"])
        try reader.save()
        let again = try ManagedObjectContext(coordinator: coordinator).fetch(shapeRequest)
        #expect(again[1].value(forKey: "label") as? String == "changed" && again[3].value(forKey: "side") as? Int64 == 3)
    }
}
