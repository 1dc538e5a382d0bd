import Testing

@testable import Faultline

/// The buffers a save keeps for the next (`ScratchArrays`): a large one comes back empty and
/// is reused, its elements let go of when it is given back; small ones, and ones past the
/// budget, are not kept. Each test uses an element type of its own, so tests running at the
/// same time do not share a kept buffer.
@Suite struct ScratchArraysTests {
    private struct Wide { var words: (Int, Int, Int, Int) = (1, 2, 3, 4) }
    private struct Narrow { var word = 0 }
    private final class Tracked {}
    private struct Huge { var words: (Int, Int, Int, Int, Int, Int, Int, Int) = (0, 0, 0, 0, 0, 0, 0, 0) }

    private static func base<T>(_ array: inout [T]) -> UnsafeMutableRawPointer? {
        array.withUnsafeMutableBufferPointer { $0.baseAddress.map(UnsafeMutableRawPointer.init) }
    }

    @Test func aLargeBufferGivenBackIsTakenAgainEmpty() {
        let capacity = ScratchArrays.smallest / MemoryLayout<Wide>.stride + 1
        var array = ScratchArrays.take(Wide.self, capacity: capacity)
        #expect(array.isEmpty && array.capacity >= capacity)
        array.append(contentsOf: repeatElement(Wide(), count: capacity))
        let first = Self.base(&array)
        let firstCapacity = array.capacity
        ScratchArrays.give(&array)
        #expect(array.isEmpty && array.capacity == 0, "the given array is left without a buffer")
        #expect(ScratchArrays.keptCapacity(Wide.self) == firstCapacity)
        var again = ScratchArrays.take(Wide.self, capacity: capacity)
        #expect(again.isEmpty && again.capacity == firstCapacity)
        #expect(Self.base(&again) == first, "the kept buffer is reused")
        #expect(ScratchArrays.keptCapacity(Wide.self) == 0, "a buffer is handed out once")
    }

    @Test func aBufferTooSmallForTheRequestIsNotHandedOut() {
        let capacity = ScratchArrays.smallest / MemoryLayout<Narrow>.stride + 1
        var array = ScratchArrays.take(Narrow.self, capacity: capacity)
        array.append(Narrow())
        let keptCapacity = array.capacity
        ScratchArrays.give(&array)
        let bigger = ScratchArrays.take(Narrow.self, capacity: keptCapacity + 1)
        #expect(bigger.capacity > keptCapacity)
        #expect(ScratchArrays.keptCapacity(Narrow.self) == keptCapacity, "still kept")
        _ = ScratchArrays.take(Narrow.self, capacity: capacity)
        #expect(ScratchArrays.keptCapacity(Narrow.self) == 0, "taken by a request it fits")
    }

    /// A list whose size is not known takes the kept buffer whatever its size, and grows it
    /// in place when it fits.
    @Test func aGrowingListTakesTheKeptBufferWhateverItsSize() {
        struct Rowish { var words: (Int, Int, Int) = (0, 0, 0) }
        let capacity = ScratchArrays.smallest / MemoryLayout<Rowish>.stride + 1
        var array = ScratchArrays.take(Rowish.self, capacity: capacity)
        let first = Self.base(&array)
        ScratchArrays.give(&array)
        var small = ScratchArrays.take(Rowish.self, capacity: 0, growing: true)
        #expect(small.capacity >= capacity && Self.base(&small) == first)
        ScratchArrays.give(&small)
        var fresh = ScratchArrays.take(Rowish.self, capacity: 0)
        #expect(fresh.capacity == 0, "a list of known small size does not take it")
        _ = Self.base(&fresh)
        #expect(ScratchArrays.keptCapacity(Rowish.self) >= capacity)
    }

    @Test func givingBackLetsGoOfTheElements() {
        let count = ScratchArrays.smallest / MemoryLayout<Tracked>.stride + 1
        weak var first: Tracked?
        weak var last: Tracked?
        var array = ScratchArrays.take(Tracked.self, capacity: count)
        for index in 0..<count {
            let object = Tracked()
            if index == 0 { first = object }
            if index == count - 1 { last = object }
            array.append(object)
        }
        #expect(first != nil && last != nil)
        ScratchArrays.give(&array)
        #expect(ScratchArrays.keptCapacity(Tracked.self) >= count)
        #expect(first == nil && last == nil, "elements kept alive by a kept buffer")
        #expect(ScratchArrays.take(Tracked.self, capacity: count).isEmpty)
    }

    @Test func smallBuffersAndBuffersPastTheBudgetAreNotKept() {
        var small = ScratchArrays.take(Huge.self, capacity: 4)
        small.append(Huge())
        ScratchArrays.give(&small)
        #expect(ScratchArrays.keptCapacity(Huge.self) == 0, "a small buffer kept")
        var huge: [Huge] = []
        huge.reserveCapacity(ScratchArrays.budget / MemoryLayout<Huge>.stride + 1)
        ScratchArrays.give(&huge)
        #expect(ScratchArrays.keptCapacity(Huge.self) == 0, "a buffer past the budget kept")
    }
}

/// Full-size row pages give their buffers back for the next pages (`RowPage.spareBlocks`):
/// the values in a page are let go of when it goes, whether its buffer is kept or freed,
/// a new page starts empty on a kept buffer, and no more than the limit are kept.
@Suite struct RowPageBlockTests {
    private final class Tracked {}

    @Test func pagesOnKeptBuffersHoldOnlyTheirOwnValues() {
        weak var tracked: Tracked?
        for round in 0..<(RowPage.spareBlocks.limit + 20) {
            let page = RowPage(capacity: DecodedPage.slotsPerPage)
            #expect(page.count == 0, "round \(round)")
            if round == 0 {
                let object = Tracked()
                tracked = object
                page.append(.other(AnyValueBox(object)))
            }
            page.append(.string("row \(round) of a page with a longer text than fits inline"))
            page.append(.int64(Int64(round)))
            let values = page.values(in: 0..<page.count)
            #expect(values.last.flatMap { if case .int64(let value) = $0 { value } else { nil } } == Int64(round))
            #expect(RowPage.spareBlocks.count <= RowPage.spareBlocks.limit)
        }
        #expect(tracked == nil, "a value outlived its page")
        #expect(RowPage.spareBlocks.count <= RowPage.spareBlocks.limit)
    }
}

/// A pool of spare raw buffers (`SpareBuffers`, behind the registry's tables and the row
/// pages' blocks): a buffer is taken only by a request of its size, once; past the limit the
/// oldest kept is freed.
@Suite struct SpareBuffersTests {
    @Test func buffersAreTakenBySizeOnceAndTheOldestGoesPastTheLimit() {
        final class Freed: @unchecked Sendable { var pointers: [UnsafeMutablePointer<Int>] = [] }
        let freed = Freed()
        let spares = SpareBuffers<Int>(limit: 2) { pointer in
            freed.pointers.append(pointer)
            pointer.deallocate()
        }
        let a = UnsafeMutablePointer<Int>.allocate(capacity: 8)
        let b = UnsafeMutablePointer<Int>.allocate(capacity: 16)
        let c = UnsafeMutablePointer<Int>.allocate(capacity: 8)
        spares.keep(a, count: 8)
        spares.keep(b, count: 16)
        #expect(spares.take(count: 4) == nil, "no buffer of that size")
        spares.keep(c, count: 8)
        #expect(spares.count == 2 && freed.pointers == [a], "the oldest freed past the limit")
        #expect(spares.take(count: 8) == c)
        #expect(spares.take(count: 8) == nil, "a buffer is taken once")
        #expect(spares.take(count: 16) == b)
        #expect(spares.count == 0 && spares.reuses == 2)
        c.deallocate()
        b.deallocate()
    }
}
