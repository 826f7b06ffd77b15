import Storage
import Synchronization

/// Preallocated room for SysEx messages, so that a ``MIDIEvent`` can carry one as a
/// ``SysExReference`` and stay a plain 32-byte value.
///
/// One producer thread fills slots (``reserve()``, ``append(_:to:)``, ``publish(_:)``)
/// and one consumer thread reads them (``withBytes(_:body:)``) and hands them back
/// (``release(_:)``). Nothing locks or allocates after `init`. A message that finds no free slot,
/// or that is longer than ``slotCapacity``, is dropped and counted, never a crash.
///
/// A published reference must be released exactly once, by the consumer, after its last read.
package final class SysExStore: Sendable {
    /// The number of slots: the most messages that can be in flight at once.
    package let slotCount: Int
    /// The most bytes one message may have, the `F0` and `F7` framing included.
    package let slotCapacity: Int

    // Slot `i` owns bytes `i * slotCapacity ..< (i + 1) * slotCapacity`; who may touch them is
    // decided by `states[i]`, which is why plain (non-atomic) access to them is safe.
    nonisolated(unsafe) private let slotBytes: FixedBytes
    nonisolated(unsafe) private let states: FixedBuffer<Atomic<UInt8>>
    private var bytes: UnsafeMutableRawPointer { slotBytes.baseAddress }
    // Where the producer starts looking for a free slot, so slots are reused round-robin and a
    // slot the consumer just released is not the first one overwritten. Only the producer
    // reads or writes it: relaxed ordering is enough.
    private let nextSlot = Atomic<Int>(0)
    // Statistics only, read by whoever reports metrics: relaxed ordering is enough.
    private let noFreeSlotDrops = Atomic<Int>(0)
    private let tooLongDrops = Atomic<Int>(0)

    private enum SlotState {
        static let free: UInt8 = 0
        static let reserved: UInt8 = 1
        static let published: UInt8 = 2
    }

    /// Allocates `slots` × `capacity` bytes once; nothing is allocated afterwards.
    ///
    /// - Parameters:
    ///   - slots: 1...65,535 (`UInt16.max` is reserved for ``SysExReference/none``).
    ///   - capacity: the longest message in bytes, at least 2.
    package init(slots: Int = 16, capacity: Int = 65_536) {
        precondition(slots >= 1 && slots < Int(UInt16.max), "SysExStore: slots must be 1...65534")
        precondition(
            capacity >= 2 && capacity <= Int(UInt32.max), "SysExStore: capacity must be 2...2^32-1")
        slotCount = slots
        slotCapacity = capacity
        slotBytes = FixedBytes(count: slots * capacity)
        states = FixedBuffer(count: slots) { _ in Atomic(SlotState.free) }
    }

    // MARK: Producer

    /// Claims a free slot for a new message, or returns `nil` when all slots are in flight.
    ///
    /// Every `nil` is counted in ``droppedNoFreeSlot``, as the caller is expected to drop the
    /// message rather than wait on the hot path.
    package func reserve() -> SysExDraft? {
        let start = nextSlot.load(ordering: .relaxed)
        var i = 0
        while i < slotCount {
            var slot = start + i
            if slot >= slotCount { slot -= slotCount }
            // Acquiring on success pairs with the releasing compare-exchange in `release(_:)`:
            // the consumer's reads of this slot's old bytes happen before we overwrite them.
            let claimed = states[slot].compareExchange(
                expected: SlotState.free, desired: SlotState.reserved,
                successOrdering: .acquiring, failureOrdering: .relaxed
            ).exchanged
            if claimed {
                nextSlot.store(slot + 1 == slotCount ? 0 : slot + 1, ordering: .relaxed)
                return SysExDraft(slot: UInt16(truncatingIfNeeded: slot))
            }
            i += 1
        }
        noFreeSlotDrops.wrappingAdd(1, ordering: .relaxed)
        return nil
    }

    /// Appends one byte; past ``slotCapacity`` the draft is marked overflowed instead.
    @inline(__always)
    package func append(_ byte: UInt8, to draft: inout SysExDraft) {
        guard draft.length < slotCapacity else {
            draft.isOverflowed = true
            return
        }
        bytes.storeBytes(
            of: byte, toByteOffset: Int(draft.slot) * slotCapacity + draft.length, as: UInt8.self)
        draft.length += 1
    }

    /// Appends a chunk; if it does not fit, nothing is written and the draft is marked overflowed.
    package func append(_ chunk: UnsafeRawBufferPointer, to draft: inout SysExDraft) {
        guard chunk.count <= slotCapacity - draft.length else {
            draft.isOverflowed = true
            return
        }
        guard let source = chunk.baseAddress, chunk.count > 0 else { return }
        (bytes + Int(draft.slot) * slotCapacity + draft.length)
            .copyMemory(from: source, byteCount: chunk.count)
        draft.length += chunk.count
    }

    /// Makes the draft's bytes visible to the consumer and returns the reference to put in an
    /// event; an overflowed draft is dropped and counted instead (returns `nil`).
    package func publish(_ draft: SysExDraft) -> SysExReference? {
        guard !draft.isOverflowed else {
            tooLongDrops.wrappingAdd(1, ordering: .relaxed)
            abandon(draft)
            return nil
        }
        // Releasing pairs with the acquiring load in `withBytes(_:body:)`: the bytes written by
        // `append` are visible to the consumer once it sees the slot published.
        states[Int(draft.slot)].store(SlotState.published, ordering: .releasing)
        return SysExReference(slot: draft.slot, length: UInt32(truncatingIfNeeded: draft.length))
    }

    /// Gives the draft's slot back without publishing it (a message cut short).
    package func abandon(_ draft: SysExDraft) {
        // Relaxed: the consumer never looks at a reserved slot, and the next claim of it is
        // this producer's own compare-exchange in `reserve()`.
        states[Int(draft.slot)].store(SlotState.free, ordering: .relaxed)
    }

    /// Reserves, fills and publishes a whole message in one call (`nil` when dropped).
    package func store(_ message: UnsafeRawBufferPointer) -> SysExReference? {
        guard var draft = reserve() else { return nil }
        append(message, to: &draft)
        return publish(draft)
    }

    /// Reserves, fills and publishes a whole message in one call (`nil` when dropped).
    package func store(_ message: [UInt8]) -> SysExReference? {
        message.withUnsafeBytes { store($0) }
    }

    // MARK: Consumer

    /// Calls `body` with the message's bytes; they are valid only inside `body` and only until
    /// ``release(_:)``. A reference that is not published (``SysExReference/none``, or already
    /// released) gives an empty buffer.
    package func withBytes<R, E: Error>(
        _ reference: SysExReference, body: (UnsafeRawBufferPointer) throws(E) -> R
    ) throws(E) -> R {
        let slot = Int(reference.slot)
        let length = Int(reference.length)
        // Acquiring pairs with the releasing store in `publish(_:)`: the producer's writes of
        // the bytes are visible before we read them.
        guard slot < slotCount, length <= slotCapacity,
            states[slot].load(ordering: .acquiring) == SlotState.published
        else {
            return try body(UnsafeRawBufferPointer(start: nil, count: 0))
        }
        return try body(UnsafeRawBufferPointer(start: bytes + slot * slotCapacity, count: length))
    }

    /// Hands the slot back to the producer; call once per published reference, after its last read.
    package func release(_ reference: SysExReference) {
        let slot = Int(reference.slot)
        guard slot < slotCount else { return }
        // Releasing pairs with the acquiring compare-exchange in `reserve()`: our reads of the
        // bytes finish before the producer may overwrite them. Only a published slot is freed,
        // so a stray second release cannot free a slot the producer is filling.
        _ = states[slot].compareExchange(
            expected: SlotState.published, desired: SlotState.free,
            successOrdering: .releasing, failureOrdering: .relaxed)
    }

    // MARK: Statistics

    /// Messages dropped because every slot was in flight.
    package var droppedNoFreeSlot: Int { noFreeSlotDrops.load(ordering: .relaxed) }
    /// Messages dropped because they were longer than ``slotCapacity``.
    package var droppedTooLong: Int { tooLongDrops.load(ordering: .relaxed) }
    /// All messages dropped by the store.
    package var droppedCount: Int { droppedNoFreeSlot + droppedTooLong }
}

/// A message the producer is writing into a ``SysExStore`` slot: fill it with
/// ``SysExStore/append(_:to:)``, then ``SysExStore/publish(_:)`` or
/// ``SysExStore/abandon(_:)`` it exactly once.
package struct SysExDraft: Sendable, BitwiseCopyable {
    /// The slot being written.
    package let slot: UInt16
    /// The bytes written so far.
    package fileprivate(set) var length: Int = 0
    /// Whether the message outgrew the slot; publishing it will drop it.
    package fileprivate(set) var isOverflowed = false

    fileprivate init(slot: UInt16) {
        self.slot = slot
    }
}
