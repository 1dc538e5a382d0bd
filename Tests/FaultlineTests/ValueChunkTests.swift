@testable import Faultline
import Testing

/// ``ValueChunk``, the buffers of ``FetchedRows``: what a fetch cannot reach (its SQL limit
/// keeps the first buffer's rows within the size it was made for).
@Suite struct ValueChunkTests {
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
}
