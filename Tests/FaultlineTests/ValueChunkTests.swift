@testable import Faultline
import FaultlineModel
import FaultlinePredicate
import FaultlineTestSupport
import Foundation
import Testing

/// ``ValueChunk``, the buffers of ``FetchedRows``: their sizes, a move into a bigger one, and
/// that the values they hold are let go of (as ``RowPage``'s, which are destroyed the same way).
@Suite struct ValueChunkTests {
    /// A writable copy of the Recipes sample with `extra` more ingredients.
    private func recipes(extraIngredients extra: Int) throws -> ManagedObjectContext {
        let folder = TestSupport.packageRoot.appendingPathComponent("Samples/Recipes")
        let copy = try TestSupport.temporaryDirectory("faultline-value-chunks").appendingPathComponent("Recipes.sqlite")
        try FileManager.default.copyItem(at: folder.appendingPathComponent("Recipes.sqlite"), to: copy)
        let model = try ManagedObjectModel(contentsOf: folder.appendingPathComponent("Recipes.xcdatamodeld"))
        let context = ManagedObjectContext(coordinator: try PersistentStoreCoordinator(model: model, storeURL: copy, options: .init(readOnly: false)))
        for i in 0..<extra {
            let ingredient = try context.insertObject(entityName: "Ingredient")
            try ingredient.setValue("ingredient \(i)", forKey: "name")
        }
        try context.save()
        return context
    }

    private func nameRows(_ context: ManagedObjectContext, limit: Int = 0, predicate: String? = nil) throws -> FetchedRows {
        var request = FetchRequest(entityName: "Ingredient")
        request.resultType = .dictionary
        request.propertiesToFetch = ["name", "amount"]
        request.sortDescriptors = [FLSortDescriptor(key: "name")]
        request.fetchLimit = limit
        if let predicate { request.predicate = try FLPredicate(format: predicate) }
        return try context.fetchRows(request)
    }

    @Test func aFewRowsKeepASmallBufferAndManyFillFullOnes() throws {
        let context = try recipes(extraIngredients: 5_000)
        // Two keys: 2,048 rows a buffer.
        let one = try nameRows(context, predicate: "name == 'ingredient 7'")
        #expect(one.count == 1 && one.chunks.count == 1 && one.chunks[0].capacity == 2)
        // The first buffer grows (16 rows, 32, … 2,048) while it is the only one; every buffer
        // but the last is full; the last keeps no more than twice its values.
        let all = try nameRows(context)
        #expect(all.count > 5_000 && all.chunks.count == 3)
        #expect(all.chunks.dropLast().allSatisfy { $0.count == 4_096 && $0.capacity == 4_096 })
        let last = try #require(all.chunks.last)
        #expect(last.count == 2 * (all.count - 4_096) && last.capacity <= 2 * last.count)
        let names = try context.fetchDictionaries({
            var request = FetchRequest(entityName: "Ingredient")
            request.resultType = .dictionary
            request.propertiesToFetch = ["name"]
            request.sortDescriptors = [FLSortDescriptor(key: "name")]
            return request
        }()).map { $0["name"] as? String }
        #expect(all.map { $0["name", as: String.self] } == names)
        // A limit sizes the first buffer.
        let limited = try nameRows(context, limit: 100)
        #expect(limited.count == 100 && limited.chunks.map(\.capacity) == [200])
        #expect(limited.map { $0["name", as: String.self] } == Array(names.prefix(100)))
    }

    @Test func aChunkMovedIntoABiggerOneKeepsItsValues() {
        let small = ValueChunk(capacity: 4)
        small.append(2) { slot in
            slot.initialize(to: .string("a value that is not a small string, so it is counted"))
            (slot + 1).initialize(to: .int64(7))
        }
        #expect(!small.hasRoom(for: 3) && small.hasRoom(for: 2))
        let big = small.moved(toCapacity: 10)
        #expect(small.count == 0 && big.count == 2 && big.hasRoom(for: 8) && !big.hasRoom(for: 9))
        #expect(big.values[0].value(as: String.self) == "a value that is not a small string, so it is counted")
        #expect(big.values[1].value(as: Int64.self) == 7)
    }

    private final class Held {}

    @Test func aChunkLetsGoOfItsValuesOnceAndOnlyOnce() {
        weak var first: Held?
        weak var second: Held?
        do {
            let a = Held(), b = Held()
            first = a
            second = b
            let chunk = ValueChunk(capacity: 3)
            chunk.append(3) { slot in
                slot.initialize(to: .other(AnyValueBox(a)))
                (slot + 1).initialize(to: .double(1.5))
                (slot + 2).initialize(to: .other(AnyValueBox(b)))
            }
            let moved = chunk.moved(toCapacity: 6)
            #expect(moved.count == 3 && chunk.count == 0)
        }
        #expect(first == nil && second == nil)
    }

    @Test func theValuesSkippedWhenDestroyedHoldNoReference() {
        // StoredValue.deinitialize skips .none, .int64, .int32, .int16, .bool, .double, .float
        // and .date: their payloads must be plain data.
        #expect(_isPOD(Int64.self) && _isPOD(Int32.self) && _isPOD(Int16.self) && _isPOD(Bool.self))
        #expect(_isPOD(Double.self) && _isPOD(Float.self) && _isPOD(Date.self))
        #expect(!_isPOD(String.self) && !_isPOD(Data.self) && !_isPOD([ManagedObjectID].self) && !_isPOD(AnyValueBox.self))
    }

    @Test func aRowPageLetsGoOfItsValuesAcrossAGrowth() {
        weak var held: Held?
        weak var text: AnyValueBox?
        do {
            let a = Held()
            held = a
            let box = AnyValueBox("a string boxed as a value of another type")
            text = box
            let page = RowPage(capacity: 1)
            page.append(.int64(1))
            page.append(.other(AnyValueBox(a)))  // the page grows here
            page.append(.date(Date(timeIntervalSinceReferenceDate: 0)))
            page.append(.other(box))
            page.append(.string("a string too long to be stored inline in the value"))
            #expect(page.count == 5 && page[4].value(as: String.self) == "a string too long to be stored inline in the value")
        }
        #expect(held == nil && text == nil)
    }
}
