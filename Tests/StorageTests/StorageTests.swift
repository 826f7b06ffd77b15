import Storage
import Synchronization
import Testing

/// The owned-memory types: what they hold, that they free it with themselves, and that a
/// non-copyable element (an `Atomic` per slot) lives in place.
@Suite struct StorageTests {
    /// Counts its deinits, so a test sees what a buffer frees.
    final class Tracked {
        static let freed = Atomic<Int>(0)
        let value: Int
        init(_ value: Int) { self.value = value }
        deinit { Self.freed.add(1, ordering: .relaxed) }
    }

    @Test func aBufferHoldsWhatItWasMadeWithAndFreesItsElementsWithItself() {
        let before = Tracked.freed.load(ordering: .relaxed)
        do {
            let buffer = FixedBuffer(count: 5) { Tracked($0 * 10) }
            #expect(buffer.count == 5)
            #expect((0..<5).map { buffer[$0].value } == [0, 10, 20, 30, 40])
            buffer[2] = Tracked(99)
            #expect(buffer[2].value == 99)
            #expect(Tracked.freed.load(ordering: .relaxed) == before + 1, "the replaced element is freed at once")
        }
        #expect(Tracked.freed.load(ordering: .relaxed) == before + 6, "every element is freed with the buffer")
    }

    @Test func nonCopyableElementsAreMadeByIndexAndUsedInPlace() {
        let counters = FixedBuffer(count: 4) { Atomic<Int>($0) }
        counters[1].add(41, ordering: .relaxed)
        counters[3].store(7, ordering: .relaxed)
        #expect((0..<4).map { counters[$0].load(ordering: .relaxed) } == [0, 42, 2, 7])
    }

    @Test func anEmptyBufferStillHasAnAddressAndRepeatingFillsEverySlot() {
        let empty = FixedBuffer(repeating: UInt8(0), count: 0)
        #expect(empty.count == 0)
        #expect(empty.unsafeElements.isEmpty)
        let filled = FixedBuffer(repeating: UInt16.max, count: 300)
        #expect(filled.unsafeElements.allSatisfy { $0 == .max })
    }

    @Test func bytesAreAlignedAndCopiedWhole() {
        let aligned = FixedBytes(count: 100, alignment: 64)
        #expect(Int(bitPattern: aligned.baseAddress) % 64 == 0)
        #expect(aligned.count == 100)
        let copy = FixedBytes(copying: [1, 2, 3, 250])
        #expect(Array(copy.bytes) == [1, 2, 3, 250])
    }

    @Test func aCellIsReadAndWrittenInPlace() {
        let cell = UncheckedCell((count: 1, name: "a"))
        cell.value.count += 2
        cell.address.pointee.name = "b"
        #expect(cell.value.count == 3 && cell.value.name == "b")
    }
}
