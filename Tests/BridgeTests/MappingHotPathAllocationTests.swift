import ALSASequencer
import CALSA
import CAllocationCounter
import Foundation
import MIDI
import MIDIOSC
import OSCTransport
import Pipeline
import TestSupport
import XCTest

@testable import Bridge

/// The MIDI -> OSC hot path with destinations that send mapping rules (one falling back to a
/// scheme, one dropping the rest): 0 heap allocations per event after a warm-up (release builds).
final class MappingHotPathAllocationTests: XCTestCase {
    static let config = """
        { inputs: [{ name: "keys" }],
          mappings: { layout: [
            { address: "/fader/{n}", args: "f", type: "control_change",
              controller: "{n}", value: { from: "{0}", in: [0, 1], out: [0, 127] } },
            { address: "/pad{n}", args: "f", type: "note_on", channel: 1,
              note: { from: "{n}", in: [1, 24], out: [36, 59] }, velocity: { from: "{0}", in: [0, 1], out: [0, 127] } },
            { address: "/bend", args: "d", type: "pitch_bend", value: { from: "{0}", in: [-1, 1], out: [-8192, 8191] } },
          ] },
          routes: [{
            operators: [{ not: { types: "realtime" } }, { dropRepeats: true }],
            destinations: [
              { host: "127.0.0.1", port: PORT1, mappings: "layout" },
              { host: "127.0.0.1", port: PORT2, scheme: "touchosc", mappings: "layout" },
            ] }] }
        """

    func testHundredThousandEventsThroughMappingDestinationsAllocateNothing() throws {
        try requireOptimizedBuild()
        let receivers = try (0..<2).map { _ in try UDPReceiverSocket() }
        var text = Self.config
        for (index, receiver) in receivers.enumerated() {
            text = text.replacingOccurrences(of: "PORT\(index + 1)", with: String(receiver.port))
        }
        let config = try ConfigParser.parse(Data(text.utf8))
        let ring = SPSCRing<MIDIEvent>(capacity: 1024)
        let store = SysExStore(slots: 4, capacity: 1024)
        let routes = try config.routes.map {
            try RouteRuntime(config: $0, inputPorts: [0], portNames: ["keys"], sysexStore: store)
        }
        let worker = MIDIToOSCWorker(ring: ring, routes: routes, sysexStore: store, wake: try WakeSignal())
        var decoder = SequencerEventDecoder(sysexStore: store)
        var feeder = RingFeeder(ring: ring)

        var raw = snd_seq_event_t()
        func pump(_ count: Int) -> (Int, Int) {
            var delivered = (0, 0)
            var i = 0
            while i < count {
                HotPathAllocationTests.fill(&raw, sequence: i)
                if case .midi(let event, _) = decoder.decode(&raw, timestamp: UInt64(i) * 1000) {
                    _ = feeder.push(event, now: event.timestamp)
                }
                if i & 15 == 15 {
                    worker.processPending()
                    delivered.0 += receivers[0].drain()
                    delivered.1 += receivers[1].drain()
                }
                i += 1
            }
            return delivered
        }
        _ = pump(2_000)

        let events = 100_000
        aseqosc_allocations_start()
        let (mapped, withScheme) = pump(events)
        let allocations = aseqosc_allocations_stop()

        XCTAssertEqual(allocations, 0, "\(allocations) allocations for \(events) events")
        // Notes, controllers 0-7 on channel 1 and pitch bends match; the rest is dropped there
        // and sent as /midi ,m to the other destination.
        XCTAssertGreaterThan(mapped, events / 3)
        XCTAssertGreaterThan(withScheme, mapped + events / 10)
        print(
            "allocation test: ALSA decode -> ring -> operators -> mapping rules x2 -> UDP, \(events) events, "
                + "\(mapped) + \(withScheme) packets received, \(allocations) allocations")
    }
}
