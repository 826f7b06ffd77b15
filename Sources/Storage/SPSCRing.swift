import Synchronization

/// Records of bytes handed from one thread to another: one producer, one consumer, a fixed
/// ring, no locks, nothing allocated after `init` (rigtorp's SPSCQueue, the Linux kfifo).
///
/// A record is a 32-bit tag and its bytes, stored as [size: UInt32][tag: UInt32][bytes] padded
/// to 8 bytes, so a record's bytes start 8-aligned. A record is never split: one that would not
/// fit before the end of the ring starts at 0 instead, after a marker (a size of `UInt32.max`)
/// that sends the reader there too. The producer never waits: ``write(tag:size:_:)`` returns
/// false when the ring has no room, and the caller counts the drop.
///
/// Positions count bytes up from 0 and wrap with a mask; each side stores only its own and
/// loads the other's, acquiring, only when its copy says the ring is full (the producer) or
/// once per ``read(_:)`` (the consumer).
public final class SPSCRing: @unchecked Sendable {
    // @unchecked Sendable: the producer writes only bytes the consumer has released
    // (`readPosition`, loaded acquiring) and publishes them with `writePosition` (stored
    // releasing); the consumer reads only bytes so published. `readSeen` is the producer's own,
    // and nothing else is mutable.

    /// The ring's size in bytes, a power of two.
    public let capacity: Int
    /// The most bytes a record may carry: a record of half the ring always fits once it is empty.
    public let maximumRecordSize: Int
    @usableFromInline let storage: FixedBytes

    // The producer's side: where it writes next, and where it last saw the consumer.
    @usableFromInline let writePosition = Atomic<Int>(0)
    @usableFromInline var readSeen = 0
    // Each side's index on a cache line of its own, so a store by one does not take the line
    // from under the other (rigtorp's padding).
    private let padding = TupleArray8<Int>(repeating: 0)
    // The consumer's side: where it reads next.
    @usableFromInline let readPosition = Atomic<Int>(0)

    /// A ring of at least `minimumCapacity` bytes (rounded up to a power of two, at least 64).
    /// Its memory is left untouched until written, so a ring never used costs none.
    public init(minimumCapacity: Int) {
        var capacity = 64
        while capacity < minimumCapacity { capacity <<= 1 }
        self.capacity = capacity
        maximumRecordSize = capacity / 2 - 8
        storage = FixedBytes(count: capacity, alignment: 8)
    }

    /// The bytes a record of `size` bytes takes in the ring: its header, and padding to 8.
    @inlinable
    public static func space(forRecordOf size: Int) -> Int { (8 + size + 7) & ~7 }

    // MARK: The producer's thread

    /// Writes a record of `size` bytes tagged `tag`, `body` filling them at the pointer it is
    /// given (8-aligned); false, with nothing written, when the ring has no room for it now or
    /// `size` is over ``maximumRecordSize``.
    @inlinable @inline(__always)
    public func write(tag: UInt32, size: Int, _ body: (UnsafeMutableRawPointer) -> Void) -> Bool {
        guard size >= 0 && size <= maximumRecordSize else { return false }
        let space = Self.space(forRecordOf: size)
        // Relaxed: only this thread stores `writePosition`.
        let position = writePosition.load(ordering: .relaxed)
        var offset = position & (capacity - 1)
        let toEnd = capacity - offset
        // What the record takes, with the end of the ring it skips if it does not fit there.
        let needed = space <= toEnd ? space : toEnd + space
        if capacity - (position &- readSeen) < needed {
            // Acquiring: pairs with the releasing store of `readPosition` in `read(_:)`, so the
            // bytes the consumer has finished with are not overwritten before it read them.
            readSeen = readPosition.load(ordering: .acquiring)
            guard capacity - (position &- readSeen) >= needed else { return false }
        }
        let base = storage.baseAddress
        var next = position
        if space > toEnd {
            base.storeBytes(of: UInt32.max, toByteOffset: offset, as: UInt32.self)
            next &+= toEnd
            offset = 0
        }
        base.storeBytes(of: UInt32(truncatingIfNeeded: size), toByteOffset: offset, as: UInt32.self)
        base.storeBytes(of: tag, toByteOffset: offset + 4, as: UInt32.self)
        body(base + offset + 8)
        // Releasing: pairs with the acquiring load of `writePosition` in `read(_:)`, so the
        // record's bytes are there before the consumer sees it.
        writePosition.store(next &+ space, ordering: .releasing)
        return true
    }

    // MARK: The consumer's thread

    /// Calls `body` with each record written since the last call, oldest first: its tag and
    /// its bytes, valid during the call. `body` returns false to leave that record (and those
    /// after it) for the next call. Returns whether records are left.
    @inlinable
    @discardableResult
    public func read(_ body: (UInt32, UnsafeRawBufferPointer) -> Bool) -> Bool {
        // Acquiring: pairs with the releasing store of `writePosition` in `write(tag:size:_:)`;
        // every record before `end` is complete.
        let end = writePosition.load(ordering: .acquiring)
        // Relaxed: only this thread stores `readPosition`.
        let start = readPosition.load(ordering: .relaxed)
        guard start != end else { return false }
        let base = storage.baseAddress
        var position = start
        while position != end {
            let offset = position & (capacity - 1)
            let size = base.load(fromByteOffset: offset, as: UInt32.self)
            if size == UInt32.max {
                position &+= capacity - offset
                continue
            }
            let tag = base.load(fromByteOffset: offset + 4, as: UInt32.self)
            guard body(tag, UnsafeRawBufferPointer(start: base + offset + 8, count: Int(size))) else { break }
            position &+= Self.space(forRecordOf: Int(size))
        }
        // Releasing: pairs with the acquiring load of `readPosition` in `write(tag:size:_:)`;
        // the bytes read are the producer's again only after this thread is done with them.
        readPosition.store(position, ordering: .releasing)
        return position != end
    }

    /// Whether nothing is waiting, as far as the consumer can tell without reading: a look
    /// before it sleeps. Relaxed: a sleeper's fence (Platform's `WakeSignal`, paired with the
    /// producer's after it writes) orders this load with the producer's store.
    public var isEmpty: Bool {
        writePosition.load(ordering: .relaxed) == readPosition.load(ordering: .relaxed)
    }
}
