import CAllocationCounter
import TestSupport
import XCTest

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
        let path = try HotPath(config: Self.config, destinations: 2)
        path.pump(2_000)

        let events = 100_000
        let allocations = path.allocations(pumping: events)
        let (mapped, withScheme) = (path.delivered[0], path.delivered[1])

        XCTAssertEqual(allocations, 0, "\(allocations) allocations for \(events) events")
        // Notes, controllers 0-7 on channel 1 and pitch bends match; the rest is dropped there
        // and sent as /midi ,m to the other destination.
        XCTAssertGreaterThan(mapped, events / 3)
        XCTAssertGreaterThan(withScheme, mapped + events / 10)
        print(
            "allocation test: ALSA decode -> operators -> mapping rules x2 -> UDP, \(events) events, "
                + "\(mapped) + \(withScheme) packets received, \(allocations) allocations")
    }
}
