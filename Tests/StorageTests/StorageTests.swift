import Storage
import Synchronization
import Testing

/// The owned-memory types: what they hold, that they free it with themselves, and that a
/// non-copyable element (an `Atomic` per slot) lives in place; and the inline `TupleArray`.
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

    @Test func aTupleArrayHasItsSizesCountAndIsAValue() {
        var words = TupleArray4<UInt64>(repeating: 7)
        #expect(words.count == 4 && TupleArray4<UInt64>.count == 4 && words.indices == 0..<4)
        #expect(TupleArray3<Int32>.count == 3 && TupleArray12<UInt8>.count == 12 && TupleArray512<UInt8>.count == 512)
        #expect(MemoryLayout<TupleArray12<UInt8>>.size == 12, "inline, nothing beside the elements")
        let before = words
        words[3] = .max
        words[0] &= 1
        #expect(words.indices.map { words[$0] } == [1, 7, 7, .max])
        #expect(before.indices.map { before[$0] } == [7, 7, 7, 7], "a copy is a value of its own")
    }

    @Test func aTupleArrayOfPaddedElementsStridesByElement() {
        // 9 bytes of data, a stride of 16: element i starts at 16 * i.
        var pairs = TupleArray3<(UInt64, UInt8)>(repeating: (1, 2))
        pairs[2] = (30, 40)
        #expect(pairs.count == 3 && MemoryLayout<TupleArray3<(UInt64, UInt8)>>.stride == 48)
        #expect(pairs.indices.map { pairs[$0].0 } == [1, 1, 30] && pairs.indices.map { pairs[$0].1 } == [2, 2, 40])
        var nested = TupleArray3<TupleArray8<Int32>>(repeating: TupleArray8(repeating: -1))
        nested[1][7] = 5
        #expect(nested[1][7] == 5 && nested[1][6] == -1 && nested[2][0] == -1)
    }
}
