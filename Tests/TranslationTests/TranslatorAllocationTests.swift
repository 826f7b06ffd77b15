import CAllocationCounter
import MIDI
import MIDIToOSC
import OSCMapping
import OSCToMIDI
import OSC
import TestSupport
import XCTest

/// Proves that translating incoming OSC allocates nothing: every address family, a mapping rule
/// and SysEx, read in place from packet bytes.
final class TranslatorAllocationTests: XCTestCase {
    func testTranslatingHundredThousandMessagesAllocatesNothing() throws {
        try requireOptimizedBuild()
        XCTAssertEqual(aseqosc_allocations_interposed(), 1, "malloc is not interposed")
        let store = SysExStore(slots: 4, capacity: 64)
        let fader = OSCMappingRule(
            address: try OSCMappingAddress("/1/fader{n}"), argumentTypes: Array("f".utf8), output: .all,
            kind: .controlChange,
            values: [
                nil, OSCMappingValue(.capture(0)),
                OSCMappingValue(.argument(0), scale: OSCLinearScale(input: (0, 1), output: (0, 127))),
            ])
        let translator = OSCToMIDITranslator(outputNames: ["Synth A", "thru"], rules: [fader], sysex: store)
        let messages: [OSCMessage] = [
            OSCMessage("/midi/synth_a/1/note_on", [.int32(60), .int32(100)]),
            OSCMessage("/midi/thru/3/pitch_bend", [.float32(-200)]),
            OSCMessage("/midi/*/clock"),
            OSCMessage("/midi/thru/sysex", [.blob([0xF0, 0x7E, 0x7F, 0x06, 0x01, 0xF7])]),
            OSCMessage("/thru/note_on", [.int32(0), .int32(60), .int32(100)]),
            OSCMessage("/Synth A/control_change", [.int32(1), .int32(7), .float32(64)]),
            OSCMessage("/thru/raw", [.int32(0x90), .int32(60), .int32(1)]),
            OSCMessage("/thru/raw", [.blob([0xF0, 0x01, 0xF7, 0xC0, 0x05])]),
            OSCMessage("/midi", [.midi(port: 1, status: 0x64, data1: 0x3C, data2: 0x90)]),
            OSCMessage("/1/fader3", [.float32(0.5)]),
            OSCMessage("/unknown/address/here", [.int32(1)]),
        ]
        let packets = try messages.map { try $0.serialize() }
        let views = packets.map { bytes -> UnsafeRawBufferPointer in
            let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 4)
            copy.copyBytes(from: bytes)
            return UnsafeRawBufferPointer(copy)
        }
        defer { for view in views { view.deallocate() } }

        let warmUp = run(1_000, views, translator, store)
        aseqosc_allocations_start()
        let events = run(100_000, views, translator, store)
        let allocations = aseqosc_allocations_stop()

        XCTAssertEqual(allocations, 0, "\(allocations) allocations for 100,000 messages")
        // 28 events per round of 11 messages (o2m channel 0 is 16): 9,090 rounds and 10 more.
        XCTAssertEqual(events, 9_090 * 28 + 28)
        XCTAssertGreaterThan(warmUp, 0)
        print("allocation test: translate 100000 OSC messages, \(events) MIDI events, \(allocations) allocations")
    }

    /// The bridge's way: each datagram validated (``OSCPacketView``), then translated; o2m's
    /// addresses as the benchmark sends them among patterns, a float where an int is usual,
    /// SysEx and unknown addresses, so table hits and general resolution both run counted.
    func testValidatingAndTranslatingEachDatagramAllocatesNothing() throws {
        try requireOptimizedBuild()
        XCTAssertEqual(aseqosc_allocations_interposed(), 1, "malloc is not interposed")
        let store = SysExStore(slots: 4, capacity: 64)
        let translator = OSCToMIDITranslator(outputNames: ["bench", "thru"], sysex: store)
        var messages: [OSCMessage] = [
            OSCMessage("/*/note_on", [.int32(1), .int32(60), .int32(100)]),
            OSCMessage("/*/control_change", [.int32(1), .int32(1), .int32(64)]),
            OSCMessage("/*/note_off", [.int32(1), .int32(60), .int32(64)]),
            OSCMessage("/midi/bench/3/note_on", [.int32(60), .int32(100)]),
            OSCMessage("/bench/note_on", [.int32(1), .float32(60), .int32(100)]),
            OSCMessage("/bench/note_on", [.int32(1), .int32(60), .int32(100)]),
            OSCMessage("/midi/thru/sysex", [.blob([0xF0, 0x7E, 0x7F, 0x06, 0x01, 0xF7])]),
        ]
        for i in 0..<23 { messages.append(OSCMessage("/unknown/\(i)", [.int32(1)])) }
        let packets = try messages.map { try $0.serialize() }
        let views = packets.map { bytes -> UnsafeRawBufferPointer in
            let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 4)
            copy.copyBytes(from: bytes)
            return UnsafeRawBufferPointer(copy)
        }
        defer { for view in views { view.deallocate() } }

        let warmUp = run(1_000, views, translator, store)
        aseqosc_allocations_start()
        let events = run(30_000, views, translator, store)
        let allocations = aseqosc_allocations_stop()

        XCTAssertEqual(allocations, 0, "\(allocations) allocations for 30,000 messages")
        // 2 outputs x 3 for `*`, 1 each for the next four; the unknown ones send nothing.
        XCTAssertEqual(events, 1_000 * 10)
        XCTAssertGreaterThan(warmUp, 0)
        print(
            "allocation test: 30000 OSC datagrams validated and translated, \(events) MIDI events, \(allocations) allocations"
        )
    }

    /// A thousand mapping rules (literal ones, found in the address table, and a template with a
    /// `*`, resolved the general way through the rules' index) allocate nothing.
    func testAThousandMappingRulesAllocateNothing() throws {
        try requireOptimizedBuild()
        XCTAssertEqual(aseqosc_allocations_interposed(), 1, "malloc is not interposed")
        let scale = OSCLinearScale(input: (0, 1), output: (0, 127))
        var rules = try (0..<1000).map { i in
            OSCMappingRule(
                address: try OSCMappingAddress("/layout/ctl\(i)"), argumentTypes: Array("f".utf8), output: .port(0),
                kind: .controlChange,
                values: [nil, OSCMappingValue(.constant(Double(i % 128))), OSCMappingValue(.argument(0), scale: scale)])
        }
        rules.insert(
            OSCMappingRule(
                address: try OSCMappingAddress("/layout/*/x{n}"), argumentTypes: nil, output: .all,
                kind: .programChange,
                values: [nil, OSCMappingValue(.capture(0))]), at: 500)
        let store = SysExStore(slots: 4, capacity: 64)
        let translator = OSCToMIDITranslator(outputNames: ["bench"], rules: rules, sysex: store)
        var messages = (0..<1500).map { OSCMessage("/layout/ctl\(($0 * 7919) % 1500)", [.float32(0.5)]) }
        messages += (0..<100).map { OSCMessage("/layout/p\($0)/x\($0)", [.int32(1)]) }
        let views = try messages.map { message -> UnsafeRawBufferPointer in
            let bytes = try message.serialize()
            let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 4)
            copy.copyBytes(from: bytes)
            return UnsafeRawBufferPointer(copy)
        }
        defer { for view in views { view.deallocate() } }

        _ = run(2_000, views, translator, store)
        aseqosc_allocations_start()
        let events = run(16_000, views, translator, store)
        let allocations = aseqosc_allocations_stop()

        XCTAssertEqual(allocations, 0, "\(allocations) allocations for 16,000 messages")
        // 10 rounds of 1,600: 1,000 of the 1,500 controls have a rule, and the 100 templates.
        XCTAssertEqual(events, 10 * 1_100)
    }

    /// Validates and translates `count` datagrams from `packets`, round and round, as the
    /// bridge's OSC thread does; returns the events made.
    private func run(
        _ count: Int, _ packets: [UnsafeRawBufferPointer], _ translator: OSCToMIDITranslator, _ store: SysExStore
    ) -> Int {
        var events = 0
        var i = 0
        while i < count {
            guard case .message(let view)? = try? OSCPacketView(packets[i % packets.count]) else { return -1 }
            // The closure passed straight to the call: one kept in a local would box `events`.
            _ = translator.translate(view) { event in
                events += 1
                if event.kind == .sysex { store.release(event.sysex) }
            }
            i += 1
        }
        return events
    }
}
