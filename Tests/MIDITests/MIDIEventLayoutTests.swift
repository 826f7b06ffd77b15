import MIDI
import Testing

/// The event is a small plain value: it crosses the ring by copy and never touches the heap.
@Suite struct MIDIEventLayoutTests {
    @Test func eventFitsInThirtyTwoBytes() {
        #expect(MemoryLayout<MIDIEvent>.size <= 32)
        #expect(MemoryLayout<MIDIEvent>.stride <= 32)
    }

    @Test func eventIsBitwiseCopyable() {
        func requiresBitwiseCopyable<T: BitwiseCopyable>(_: T.Type) -> Bool { true }
        #expect(requiresBitwiseCopyable(MIDIEvent.self))
        #expect(_isPOD(MIDIEvent.self))
    }

    @Test(
        arguments: [
            (MIDIEvent(.controlChange14, channel: 2, value: 9000, parameter: 1), [(2, 1, 70), (2, 33, 40)]),
            (MIDIEvent(.rpn, channel: 0, value: 2, parameter: 0), [(0, 101, 0), (0, 100, 0), (0, 6, 0), (0, 38, 2)]),
            (
                MIDIEvent(.nrpn, channel: 15, value: 16383, parameter: 300),
                [(15, 99, 2), (15, 98, 44), (15, 6, 127), (15, 38, 127)]
            ),
        ] as [(MIDIEvent, [(UInt8, UInt8, UInt8)])])
    func assembledControllersBecomeTheirControlChangeSequence(event: MIDIEvent, expected: [(UInt8, UInt8, UInt8)]) {
        var ccs: [MIDIEvent] = []
        event.forEachControlChange { ccs.append($0) }
        #expect(ccs.map(\.kind) == Array(repeating: .controlChange, count: expected.count))
        #expect(ccs.map(\.channel) == expected.map(\.0))
        #expect(ccs.map(\.data1) == expected.map(\.1))
        #expect(ccs.map(\.data2) == expected.map(\.2))
    }

    @Test func otherEventsPassThroughUnchanged() {
        let note = MIDIEvent.noteOn(channel: 3, note: 60, velocity: 1)
        var seen: [MIDIEvent] = []
        note.forEachControlChange { seen.append($0) }
        #expect(seen == [note])
    }
}
