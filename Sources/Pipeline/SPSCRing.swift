import Storage
import Synchronization

/// A bounded, lock-free queue for exactly one producer thread and one consumer thread.
///
/// The capacity is a power of two so an index becomes a slot with a mask; the head and tail
/// count up forever (wrapping `Int`) and their difference is the fill level, as in the Linux
/// kfifo. Each side keeps a cached copy of the other side's index and reloads it only when the
/// cache says the ring is full (producer) or empty (consumer), as in rigtorp's SPSCQueue, so in
/// steady state a push or pop touches one shared cache line.
///
/// A full ring drops the element and counts it: the producer is the ALSA input thread, which
/// must never wait on the consumer.
public final class SPSCRing<Element: BitwiseCopyable>: @unchecked Sendable {
    // @unchecked Sendable: `storage` is written only by the producer at slots the consumer cannot
    // read yet, and read only by the consumer at slots the producer published; the atomics below
    // order those accesses. Each side's cached index is touched by that side alone.

    @usableFromInline let storage: FixedBuffer<Element>
    @usableFromInline let mask: Int
    /// The number of elements the ring holds at most.
    public let capacity: Int

    /// Next slot to write; written only by the producer.
    @usableFromInline let head = Atomic<Int>(0)
    /// Next slot to read; written only by the consumer.
    @usableFromInline let tail = Atomic<Int>(0)
    /// Elements refused because the ring was full.
    @usableFromInline let dropCount = Atomic<Int>(0)
    /// The highest fill level seen by the producer.
    @usableFromInline let highWaterMark = Atomic<Int>(0)

    /// The producer's copy of `tail`: the consumer's index as last seen.
    @usableFromInline var cachedTail = 0
    /// The consumer's copy of `head`: the producer's index as last seen.
    @usableFromInline var cachedHead = 0

    /// Creates a ring holding `capacity` elements, rounded up to a power of two (at least 2).
    public init(capacity requested: Int) {
        precondition(requested > 0, "a ring needs a capacity")
        var size = 2
        while size < requested { size <<= 1 }
        capacity = size
        mask = size - 1
        storage = FixedBuffer(uninitializedCount: size)
        // Touched now: otherwise the first pass round the ring takes a page fault every few
        // dozen events, each a stall on the input thread.
        UnsafeMutableRawPointer(storage.baseAddress).initializeMemory(
            as: UInt8.self, repeating: 0, count: size * MemoryLayout<Element>.stride)
    }

    /// Appends `element`; returns `false` and counts a drop if the ring is full. Producer only.
    @inlinable
    public func push(_ element: Element) -> Bool {
        // Relaxed: only this thread writes `head`.
        let writeIndex = head.load(ordering: .relaxed)
        if writeIndex &- cachedTail >= capacity {
            // Acquiring: pairs with the consumer's releasing store of `tail` in `pop`, so the
            // slot it freed is no longer being read when we overwrite it.
            cachedTail = tail.load(ordering: .acquiring)
            if writeIndex &- cachedTail >= capacity {
                dropCount.add(1, ordering: .relaxed)
                return false
            }
        }
        storage[writeIndex & mask] = element
        // Releasing: pairs with the consumer's acquiring load of `head` in `pop`, publishing
        // the element written above.
        head.store(writeIndex &+ 1, ordering: .releasing)
        // The cached tail is refreshed only when the ring looks full, so it may be far behind:
        // a fill past the mark is measured again against the consumer's tail before it counts.
        var fill = writeIndex &+ 1 &- cachedTail
        if fill > highWaterMark.load(ordering: .relaxed) {
            cachedTail = tail.load(ordering: .acquiring)
            fill = writeIndex &+ 1 &- cachedTail
            if fill > highWaterMark.load(ordering: .relaxed) { highWaterMark.store(fill, ordering: .relaxed) }
        }
        return true
    }

    /// Whether a ``push(_:)`` now would succeed; it stays true until this producer pushes, as
    /// the consumer can only make room. Producer only.
    @inlinable
    public func hasRoom() -> Bool {
        let writeIndex = head.load(ordering: .relaxed)
        if writeIndex &- cachedTail < capacity { return true }
        // Acquiring: pairs with the consumer's releasing store of `tail` in `pop`, as in `push`.
        cachedTail = tail.load(ordering: .acquiring)
        return writeIndex &- cachedTail < capacity
    }

    /// Counts an element the producer refuses without offering it (one that must wait behind
    /// others still waiting for room), so ``drops`` stays the number of elements lost. Producer
    /// only.
    @inlinable
    public func countDrop() {
        dropCount.add(1, ordering: .relaxed)
    }

    /// Removes the oldest element, or returns `nil` if the ring is empty. Consumer only.
    @inlinable
    public func pop() -> Element? {
        // Relaxed: only this thread writes `tail`.
        let readIndex = tail.load(ordering: .relaxed)
        if readIndex == cachedHead {
            // Acquiring: pairs with the producer's releasing store of `head` in `push`, so the
            // element in the slot is fully written before we read it.
            cachedHead = head.load(ordering: .acquiring)
            if readIndex == cachedHead { return nil }
        }
        let element = storage[readIndex & mask]
        // Releasing: pairs with the producer's acquiring load of `tail` in `push`, handing the
        // slot back only after the read above.
        tail.store(readIndex &+ 1, ordering: .releasing)
        return element
    }

    /// Elements refused so far because the ring was full.
    public var drops: Int { dropCount.load(ordering: .relaxed) }

    /// The largest number of elements the ring has held at once (as seen by the producer, whose
    /// view of the consumer may lag, so this can overstate but never understate).
    public var highWater: Int { highWaterMark.load(ordering: .relaxed) }

    /// Elements currently queued; exact only when both sides are idle.
    public var count: Int {
        head.load(ordering: .acquiring) &- tail.load(ordering: .acquiring)
    }
}
