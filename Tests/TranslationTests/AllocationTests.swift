import CAllocationCounter
import MIDI
import MIDIToOSC
import OSCMapping
import OSCToMIDI
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
            let kind = kinds[i % kinds.count]
            let value = Int32(i * 64 % 16384) - 8192
            return MIDIEvent(
                kind, channel: UInt8(i % 16), data1: UInt8(i % 128), data2: UInt8((i * 7) % 128), value: value,
                parameter: UInt16(i % 32), sysex: kind == .sysex ? sysex : .none, port: UInt16(i % 3))
        }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1_536, alignment: 16)
        defer { buffer.deallocate() }
        var writer = OSCWriter(buffer)

        let warmUp = run(1_000, events, formatters, &writer)
        aseqosc_allocations_start()
        let written = run(100_000, events, formatters, &writer)
        let allocations = aseqosc_allocations_stop()
        // The formatters' last use is above: without this, their release (and the metadata
        // lookups of a first deinit) may fall before the stop.
        withExtendedLifetime(formatters) {}

        XCTAssertEqual(allocations, 0, "\(allocations) allocations for 100,000 events × 3 schemes")
        XCTAssertGreaterThan(written, 250_000)
        XCTAssertGreaterThan(warmUp, 0)
        print("allocation test: format 100000 events x 3 schemes, \(written) messages, \(allocations) allocations")
    }

    func testFormattingHundredThousandEventsThroughMappingRulesAllocatesNothing() throws {
        try requireOptimizedBuild()
        XCTAssertEqual(aseqosc_allocations_interposed(), 1, "malloc is not interposed")
        func rule(_ address: String, _ args: String, _ kind: MIDIEventKind, _ values: [OSCMappingValue?]) throws
            -> OSCMappingRule
        {
            OSCMappingRule(
                address: try OSCMappingAddress(address), argumentTypes: Array(args.utf8), output: .port(0),
                kind: kind, values: values)
        }
        let unit = OSCLinearScale(input: (0, 1), output: (0, 127))
        let rules = [
            // A static address (one prefix copied), captures, a scaled capture, h, T and d.
            try rule(
                "/volume", "f", .controlChange, [nil, OSCMappingValue(.constant(7)), .init(.argument(0), scale: unit)]),
            try rule(
                "/fader/{n}", "f", .controlChange,
                [nil, OSCMappingValue(.capture(0)), .init(.argument(0), scale: unit)]),
            try rule(
                "/2/push{n}", "f", .noteOn,
                [
                    OSCMappingValue(.constant(10)),
                    OSCMappingValue(.capture(0), scale: OSCLinearScale(input: (1, 16), output: (36, 51))),
                    .init(.argument(0), scale: unit),
                ]),
            try rule(
                "/bend", "hTd", .pitchBend,
                [
                    OSCMappingValue(.argument(0)),
                    .init(.argument(2), scale: OSCLinearScale(input: (-1, 1), output: (-8192, 8191))),
                ]),
        ]
        for rule in rules { XCTAssertNoThrow(try rule.checkSendable()) }
        let formatters = [OSCScheme.none, .default].map {
            OSCEventFormatter(scheme: $0, portNames: ["keys"], mappings: rules)
        }
        let kinds: [MIDIEventKind] = [.controlChange, .noteOn, .noteOff, .pitchBend, .clock]
        let events = (0..<256).map { i -> MIDIEvent in
            let value = Int32(i * 64 % 16384) - 8192
            return MIDIEvent(
                kinds[i % kinds.count], channel: UInt8(i % 3 == 0 ? 9 : i % 2), data1: UInt8(30 + i % 40),
                data2: UInt8((i * 7) % 128), value: value)
        }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1_536, alignment: 16)
        defer { buffer.deallocate() }
        var writer = OSCWriter(buffer)

        let warmUp = run(1_000, events, formatters, &writer)
        aseqosc_allocations_start()
        let written = run(100_000, events, formatters, &writer)
        let allocations = aseqosc_allocations_stop()
        // The formatters' last use is above: without this, their release (and the metadata
        // lookups of a first deinit) may fall before the stop.
        withExtendedLifetime(formatters) {}

        XCTAssertEqual(allocations, 0, "\(allocations) allocations for 100,000 events × 2 rule formatters")
        // The default scheme writes every event; about a third also match a rule.
        XCTAssertGreaterThan(written, 120_000)
        XCTAssertGreaterThan(warmUp, 0)
        print(
            "allocation test: format 100000 events through mapping rules x 2, \(written) messages, \(allocations) allocations"
        )
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
