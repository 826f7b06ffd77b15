import MIDI
import Storage
import Synchronization

/// A port's RPN and NRPN values, as assembled: a bounded table of one word per parameter, in
/// the order they were first set.
///
/// Slots for every parameter would be 2 x 16,384 per channel; a synth's state uses a handful
/// (bend range, tuning, a few NRPNs of a patch). So the table has a fixed number of entries,
/// filled in order; when it is full, the oldest entry gives way (a clock hand over the
/// entries) and ``evictions`` counts it. Finding a parameter is a scan of the entries in use:
/// at most ``capacity`` word compares, on events rarer than notes, and no hashing, probing or
/// deletion to get wrong.
///
/// One writer (the thread that owns the port's direction); any thread may read. An entry is one
/// word holding key and value together, so a reader never sees one parameter's value under
/// another's number.
struct ParameterTable: ~Copyable {
    /// The most parameters kept.
    package let capacity: Int
    // Entry layout: bit 63 set; bits 14-32 the key (channel << 15 | NRPN << 14 | number);
    // bits 0-13 the value. 0 is an empty entry.
    private let entries: FixedBuffer<Atomic<UInt64>>
    // Entries 0 ..< used hold parameters. Only the writer changes it; readers load it.
    private let used = Atomic<Int>(0)
    // The entry the next eviction overwrites. Writer only; an atomic because the table is
    // stored in a shared class and cannot otherwise be changed in place.
    private let hand = Atomic<Int>(0)
    /// How many parameters were forgotten to make room for another since the table was made.
    let evictions = Atomic<Int>(0)

    private static let occupied: UInt64 = 1 << 63

    package init(capacity: Int) {
        precondition(capacity >= 1, "ParameterTable: capacity must be at least 1")
        self.capacity = capacity
        entries = FixedBuffer(count: capacity) { _ in Atomic(0) }
    }

    private static func key(_ isNRPN: Bool, channel: UInt8, number: UInt16) -> UInt64 {
        UInt64(channel & 15) << 15 | (isNRPN ? 1 << 14 : 0) | UInt64(number & 0x3FFF)
    }

    private static func key(of entry: UInt64) -> UInt64 { entry >> 14 & 0x7FFFF }

    /// Sets the value of a parameter (writer only).
    func record(_ isNRPN: Bool, channel: UInt8, number: UInt16, value: Int32) {
        let key = Self.key(isNRPN, channel: channel, number: number)
        let entry = Self.occupied | key << 14 | UInt64(clamp14(value))
        // Relaxed throughout: only this thread writes, and a reader wants each word on its own.
        let count = used.load(ordering: .relaxed)
        var i = 0
        while i < count {
            let current = entries[i].load(ordering: .relaxed)
            if Self.key(of: current) == key {
                if current != entry { entries[i].store(entry, ordering: .relaxed) }
                return
            }
            i += 1
        }
        if count < capacity {
            entries[count].store(entry, ordering: .relaxed)
            // Releasing pairs with the acquiring load in `value(_:channel:number:)` and
            // `entry(at:)`: a reader that counts the new entry sees it written.
            used.store(count + 1, ordering: .releasing)
            return
        }
        let victim = hand.load(ordering: .relaxed)
        entries[victim].store(entry, ordering: .relaxed)
        hand.store(victim + 1 == capacity ? 0 : victim + 1, ordering: .relaxed)
        evictions.wrappingAdd(1, ordering: .relaxed)
    }

    /// The value of a parameter, or `nil` if it is not in the table (any thread).
    func value(_ isNRPN: Bool, channel: UInt8, number: UInt16) -> Int32? {
        let key = Self.key(isNRPN, channel: channel, number: number)
        let count = used.load(ordering: .acquiring)
        var i = 0
        while i < count {
            let entry = entries[i].load(ordering: .relaxed)
            if entry != 0 && Self.key(of: entry) == key { return Int32(entry & 0x3FFF) }
            i += 1
        }
        return nil
    }

    /// Entry `index`'s parameter as an event, or `nil` when the entry is empty (any thread).
    func entry(at index: Int) -> MIDIEvent? {
        guard index < used.load(ordering: .acquiring) else { return nil }
        let entry = entries[index].load(ordering: .relaxed)
        guard entry != 0 else { return nil }
        let key = Self.key(of: entry)
        return MIDIEvent(
            key & 1 << 14 != 0 ? .nrpn : .rpn, channel: UInt8(key >> 15), value: Int32(entry & 0x3FFF),
            parameter: UInt16(key & 0x3FFF))
    }

    /// How many parameters the table holds.
    var count: Int { used.load(ordering: .acquiring) }

    /// Forgets every parameter (writer only).
    func clear() {
        let count = used.load(ordering: .relaxed)
        // The count first, so a reader stops looking at entries that are about to be emptied.
        used.store(0, ordering: .releasing)
        var i = 0
        while i < count {
            entries[i].store(0, ordering: .relaxed)
            i += 1
        }
        hand.store(0, ordering: .relaxed)
    }
}
