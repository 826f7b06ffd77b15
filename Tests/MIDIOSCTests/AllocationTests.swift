import CAllocationCounter
import MIDI
import MIDIOSC
import OSC
import TestSupport
import XCTest

/// Proves that formatting events allocates nothing, counting malloc and friends on this thread.
final class FormatterAllocationTests: XCTestCase {
    func testFormattingHundredThousandEventsInThreeSchemesAllocatesNothing() throws {
        try requireOptimizedBuild()
        XCTAssertEqual(aseqosc_allocations_interposed(), 1, "malloc is not interposed")
        let store = SysExStore(slots: 2, capacity: 64)
        let sysex = try XCTUnwrap(store.store([0xF0, 0x7E, 0x7F, 0x06, 0x01, 0xF7]))
        let formatters = [OSCScheme.default, .osmid, .touchOSC].map {
            OSCEventFormatter(
                scheme: $0, portNames: ["Midi Through Port-0", "KeyStep Pro", "VirMIDI 0-0"], sysex: store)
        }
        let kinds = MIDIEventKind.allCases
        let events = (0..<256).map { i -> MIDIEvent in
            MIDIEvent(
                kinds[i % kinds.count], channel: UInt8(i % 16), data1: UInt8(i % 128), data2: UInt8((i * 7) % 128),
                value: Int32(i * 64 % 16384) - 8192, parameter: UInt16(i % 32),
                sysex: kinds[i % kinds.count] == .sysex ? sysex : .none, port: UInt16(i % 3))
        }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1_536, alignment: 16)
        defer { buffer.deallocate() }
        var writer = OSCWriter(buffer)

        let warmUp = run(1_000, events, formatters, &writer)
        aseqosc_allocations_start()
        let written = run(100_000, events, formatters, &writer)
        let allocations = aseqosc_allocations_stop()

        XCTAssertEqual(allocations, 0, "\(allocations) allocations for 100,000 events × 3 schemes")
        XCTAssertGreaterThan(written, 250_000)
        XCTAssertGreaterThan(warmUp, 0)
        print("allocation test: format 100000 events x 3 schemes, \(written) messages, \(allocations) allocations")
    }

    private func run(
        _ count: Int, _ events: [MIDIEvent], _ formatters: [OSCEventFormatter], _ writer: inout OSCWriter
    ) -> Int {
        var written = 0
        var i = 0
        while i < count {
            let event = events[i & 255]
            var f = 0
            while f < formatters.count {
                writer.reset()
                if formatters[f].write(event, into: &writer) { written += 1 }
                f += 1
            }
            i += 1
        }
        return written
    }
}
