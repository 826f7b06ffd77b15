import EventTap
import MIDI
import Testing

/// The monitor's ring: what one thread records, another drains in order with its bytes; a
/// full ring drops and counts, and nothing is recorded unless a page turned it on.
@Suite struct EventTapTests {
    @Test func entriesComeOutInOrderWithTheirBytesCutAtTheLimit() {
        let tap = EventTap()
        #expect(!tap.isOn)
        tap.set(on: true)
        let short: [UInt8] = Array("/a\0\0,\0\0\0".utf8)
        let long = [UInt8](repeating: 7, count: 100)
        short.withUnsafeBytes {
            tap.record(.oscOut, index: 3, destination: 1, .noteOn(channel: 0, note: 60, velocity: 1), message: $0)
        }
        long.withUnsafeBytes { tap.record(.oscIn, index: 0, MIDIEvent(.controlChange), message: $0) }
        tap.record(.midiIn, index: 2, .noteOn(channel: 1, note: 61, velocity: 2))
        var seen: [(EventTap.Kind, Int, Int, [UInt8], UInt8)] = []
        let dropped = tap.drain { entry, bytes in
            seen.append((entry.kind, Int(entry.index), Int(entry.destination), Array(bytes), entry.event.data1))
        }
        #expect(dropped == 0)
        #expect(seen.map(\.0) == [.oscOut, .oscIn, .midiIn])
        #expect(seen[0].1 == 3 && seen[0].2 == 1 && seen[0].3 == short && seen[0].4 == 60)
        #expect(seen[1].3 == Array(long.prefix(EventTap.bytesPerEntry)))
        #expect(seen[2].1 == 2 && seen[2].3.isEmpty && seen[2].4 == 61)
        #expect(tap.drain { _, _ in Issue.record("drained twice") } == 0)
    }

    @Test func aFullRingDropsAndCountsAndTakesMoreOnceDrained() {
        // Entries without bytes take less room than the capacity allows for: more fit.
        let tap = EventTap()
        let recorded = 4 * EventTap.capacity
        for note in 0..<recorded {
            tap.record(.midiIn, index: 0, .noteOn(channel: 0, note: UInt8(note & 0x7F), velocity: 1))
        }
        var count = 0
        var notes: [UInt8] = []
        let dropped = tap.drain { entry, _ in
            count += 1
            notes.append(entry.event.data1)
        }
        #expect(dropped > 0 && count > EventTap.capacity)
        #expect(count + Int(dropped) == recorded, "every entry drained or counted")
        #expect(notes == (0..<count).map { UInt8($0 & 0x7F) }, "the first ones, in order")
        tap.record(.midiIn, index: 0, .noteOn(channel: 0, note: 1, velocity: 1))
        #expect(tap.drain { _, _ in count += 1 } == 0 && count == recorded - Int(dropped) + 1)
    }

    @Test func theCapacityHoldsEntriesWithFullMessages() {
        let tap = EventTap()
        let message = [UInt8](repeating: 9, count: EventTap.bytesPerEntry)
        for index in 0..<EventTap.capacity {
            message.withUnsafeBytes { tap.record(.oscOut, index: index, MIDIEvent(.controlChange), message: $0) }
        }
        var indices: [Int] = []
        let dropped = tap.drain { entry, bytes in
            #expect(Array(bytes) == message)
            indices.append(Int(entry.index))
        }
        #expect(dropped == 0)
        #expect(indices == Array(0..<EventTap.capacity))
    }
}
