import CAllocationCounter
import MIDI
import TestSupport
import ValueStore
import XCTest

/// Proves recording and replaying allocate nothing, on the thread that does them, as the
/// input and OSC threads will (release builds: `make test`).
final class ValueStoreAllocationTests: XCTestCase {
    /// Every kind the store keeps and some it ignores, on every channel and two ports, with
    /// resets among them.
    static func mixedEvents(count: Int) -> [MIDIEvent] {
        var events: [MIDIEvent] = []
        events.reserveCapacity(count)
        var i = 0
        while i < count {
            let channel = UInt8(i % 16)
            let byte = UInt8(truncatingIfNeeded: i * 7) & 127
            var event: MIDIEvent =
                switch i % 12 {
                case 0: .controlChange(channel: channel, controller: byte, value: byte)
                case 1:
                    MIDIEvent(.controlChange14, channel: channel, value: Int32(i & 0x3FFF), parameter: UInt16(i % 32))
                case 2: MIDIEvent(.rpn, channel: channel, value: Int32(i & 0x3FFF), parameter: UInt16(i % 8))
                case 3: MIDIEvent(.nrpn, channel: channel, value: 1, parameter: UInt16(i % 700))  // evicts
                case 4: MIDIEvent(.programChange, channel: channel, data1: byte)
                case 5: MIDIEvent(.channelPressure, channel: channel, data1: byte)
                case 6: .pitchBend(channel: channel, bend: Int32(i % 16384) - 8192)
                case 7: MIDIEvent(.polyPressure, channel: channel, data1: byte, data2: byte)
                case 8: .noteOn(channel: channel, note: byte, velocity: 100)
                case 9: .controlChange(channel: channel, controller: i % 1000 == 9 ? 121 : 1, value: byte)
                case 10: i % 5000 == 10 ? MIDIEvent(.reset) : MIDIEvent(.clock)
                default: .controlChange(channel: channel, controller: 7, value: byte)
                }
            event.port = UInt16(i % 2)
            events.append(event)
            i += 1
        }
        return events
    }

    /// Records `events`, drains the changes and replays every port in pieces of 32, as a
    /// writer and a reader would; returns a checksum so that nothing is optimised away.
    private func run(_ store: LastValueStore, _ events: [MIDIEvent]) -> Int {
        var checksum = 0
        var i = 0
        while i < events.count {
            store.record(events[i])
            if i % 1000 == 999 {
                var port = 0
                while port < store.ports.count {
                    store[port].takeChanges { checksum &+= $0.index }
                    var cursor = ReplayCursor()
                    while !cursor.isFinished {
                        store[port].replay(&cursor, limit: 32) { checksum &+= Int($0.value) &+ Int($0.data2) }
                    }
                    port += 1
                }
            }
            i += 1
        }
        return checksum
    }

    func testHundredThousandEventsRecordedAndReplayedAllocateNothing() throws {
        try requireOptimizedBuild()
        let store = LastValueStore(portCount: 2)
        let events = Self.mixedEvents(count: 100_000)
        _ = run(store, events)  // warm-up: lazy runtime metadata, first-touch pages

        aseqosc_allocations_start()
        let checksum = run(store, events)
        let allocations = aseqosc_allocations_stop()

        XCTAssertEqual(allocations, 0, "\(allocations) allocations for \(events.count) events")
        XCTAssertNotEqual(checksum, 0)
        XCTAssertGreaterThan(store[1].parameterEvictions, 0, "the run filled port 1's parameter table (its NRPNs)")
        print("allocation test: value store, \(events.count) events recorded and replayed, \(allocations) allocations")
    }
}
