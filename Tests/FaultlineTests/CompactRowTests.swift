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
                // Every other kind in place too: its own type's value where the field holds one.
                func inPlace<T: Equatable>(_ slot: Int, _ kind: CompactRowFormat.Kind, load: @escaping (UnsafeRawPointer) -> T, expected: (StoredValue) -> T?) {
                    let read = page.read(base: base, slot: slot, field: (kind, load)) { _ in nil }
                    let value = Self.value(row: row, slot: slot, tracked: tracked)
                    if value.isNone {
                        #expect(read == .some(nil), "row \(row) slot \(slot)")
                    } else if let own = expected(value) {
                        #expect(read == .some(own), "row \(row) slot \(slot)")
                    } else {
                        #expect(read == nil, "row \(row) slot \(slot): kept aside")
                    }
                }
                inPlace(1, .int32, load: { $0.load(as: Int32.self) }, expected: { if case .int32(let v) = $0 { v } else { nil } })
                inPlace(2, .int16, load: { $0.load(as: Int16.self) }, expected: { if case .int16(let v) = $0 { v } else { nil } })
                inPlace(3, .bool, load: { $0.load(as: Bool.self) }, expected: { if case .bool(let v) = $0 { v } else { nil } })
                inPlace(4, .double, load: { $0.load(as: Double.self) }, expected: { if case .double(let v) = $0 { v } else { nil } })
                inPlace(5, .float, load: { $0.load(as: Float.self) }, expected: { if case .float(let v) = $0 { v } else { nil } })
                inPlace(6, .date, load: { $0.load(as: Date.self) }, expected: { if case .date(let v) = $0 { v } else { nil } })
                inPlace(8, .data, load: { $0.assumingMemoryBound(to: Data.self).pointee }, expected: { if case .data(let v) = $0 { v } else { nil } })
                inPlace(9, .uuid, load: { $0.load(as: UUID.self) }, expected: { if case .uuid(let v) = $0 { v } else { nil } })
                inPlace(10, .objectID, load: { $0.load(as: ManagedObjectID.self) }, expected: { if case .objectID(let v) = $0 { v } else { nil } })
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

    /// A compact page grows to a full-size page's room exactly (a block the pool keeps), not
    /// past it, and its String and Data fields live as long as the page, across its growth.
    @Test func aCompactPageGrowsToFullSizeAndItsFieldsLiveWithIt() throws {
        final class Released: @unchecked Sendable { var count = 0 }
        let released = Released()
        let format = try #require(CompactRowFormat(kinds: [.data, .string, .int64]))
        do {
            let page = RowPage(format: format, capacity: 64)
            var rows = 0
            while page.count + format.stride <= page.fullUnits {
                let row = rows
                page.appendCompactRow { slot, _, _ in
                    switch slot {
                    case 0:
                        guard row % 100 == 0 else { return .none }
                        let bytes = UnsafeMutableRawPointer.allocate(byteCount: 64, alignment: 8)
                        bytes.initializeMemory(as: UInt8.self, repeating: UInt8(row % 256), count: 64)
                        let free = Data.Deallocator.custom { pointer, _ in
                            pointer.deallocate()
                            released.count += 1
                        }
                        return .value(.data(Data(bytesNoCopy: bytes, count: 64, deallocator: free)))
                    case 1: return .value(.string("row \(row), a string long enough to live on the heap"))
                    default: return .value(.int64(Int64(row)))
                    }
                }
                rows += 1
            }
            #expect(page.capacityUnits == page.fullUnits, "grown to a full page's room, not past it")
            #expect(released.count == 0)
            for row in stride(from: 0, to: rows, by: 100) {
                let data = page.value(base: row * format.stride, slot: 0)
                if case .data(let bytes) = data {
                    #expect(bytes.count == 64 && bytes.allSatisfy { $0 == UInt8(row % 256) })
                } else {
                    Issue.record("row \(row): \(data)")
                }
                #expect(page.value(base: row * format.stride, slot: 1).value(as: String.self) == "row \(row), a string long enough to live on the heap")
            }
        }
        let rowsWithData = (0..<(RowPage.fullUnits(format: format) / format.stride)).filter { $0 % 100 == 0 }.count
        #expect(released.count > 0 && released.count == rowsWithData, "every Data let go of with its page")
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
            EntityDescription(name: "Shape", attributes: [AttributeDescription(name: "name", type: .string)]),
            EntityDescription(name: "Circle", superentityName: "Shape", attributes: [AttributeDescription(name: "radius", type: .double)]),
            EntityDescription(
                name: "Square", superentityName: "Shape",
                attributes: [AttributeDescription(name: "side", type: .integer64), AttributeDescription(name: "label", type: .string)]),
        ])
    }

    /// The kind of shape row `index` is: a plain Shape, a Circle or a Square, in turn.
    private static func entityName(_ index: Int) -> String { ["Shape", "Circle", "Square"][index % 3] }

    private static func label(_ index: Int) -> String? { index % 4 == 0 ? nil : "square \(index), a label long enough for the heap" }

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
        }
        // 4,000 rows of each entity, in turn: each one's rows fill more than a compact page
        // (12,288 words; a Square's row is 6), its pages interleaved with the others'.
        let shapeCount = 12_000
        for index in 0..<shapeCount {
            let shape = try writer.insertObject(entityName: Self.entityName(index))
            try shape.setValue(String(format: "shape %05d", index), forKey: "name")
            switch index % 3 {
            case 1: try shape.setValue(Double(index) / 4, forKey: "radius")
            case 2:
                try shape.setValue(Int64(index), forKey: "side")
                try shape.setValue(Self.label(index), forKey: "label")
            default: break
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
        func check(_ shapes: [ManagedObject], _ how: String) {
            #expect(shapes.count == shapeCount, "\(how)")
            var wrong = 0
            for (index, shape) in shapes.enumerated() {
                var right = shape.value(forKey: "name") as? String == String(format: "shape %05d", index) && shape.entity.name == Self.entityName(index)
                switch index % 3 {
                case 1: right = right && shape.value(forKey: "radius") as? Double == Double(index) / 4
                case 2: right = right && shape.value(forKey: "side") as? Int64 == Int64(index) && shape.value(forKey: "label") as? String == Self.label(index)
                default: break
                }
                if !right { wrong += 1 }
            }
            #expect(wrong == 0, "\(how): \(wrong) rows read back wrong")
        }
        let shapes = try reader.fetch(shapeRequest)
        check(Array(shapes), "a fetch")
        // Batches (a decode with its number of rows known) of rows of the three entities.
        var batched = shapeRequest
        batched.fetchBatchSize = 500
        check(Array(try ManagedObjectContext(coordinator: coordinator).fetch(batched)), "batches of 500")

        // A change made to a fetched object copies its row out of the page: the rest reads on.
        let square = shapes[2]
        try square.setValue("changed", forKey: "label")
        #expect(square.value(forKey: "label") as? String == "changed" && square.value(forKey: "side") as? Int64 == 2)
        #expect(square.changedValues().keys.sorted() == ["label"])
        try reader.save()
        let again = try ManagedObjectContext(coordinator: coordinator).fetch(shapeRequest)
        #expect(again[2].value(forKey: "label") as? String == "changed" && again[5].value(forKey: "side") as? Int64 == 5)
    }
}
