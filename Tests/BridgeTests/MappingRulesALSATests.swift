import Foundation
import TestSupport
import XCTest

/// Mapping rules MIDI -> OSC in `aseqosc run`: control changes and notes played into a virmidi
/// card come out as the rules' OSC messages, scaled back, exactly as `oscdump` sees them; and one
/// set of rules takes OSC to MIDI and back.
final class MappingRulesALSATests: XCTestCase {
    var amidi = ""
    var oscsend = ""

    override func setUpWithError() throws {
        try TestEnvironment.requireSequencer()
        amidi = try TestEnvironment.tool("amidi", package: "alsa-utils")
        oscsend = try TestEnvironment.tool("oscsend", package: "liblo-tools")
    }

    static let layout = """
        { layout: [
            { address: "/fader/{n}", args: "f", type: "control_change",
              controller: "{n}", value: { from: "{0}", in: [0, 1], out: [0, 127] } },
            { address: "/2/push{n}", args: "f", type: "note_on", channel: 10,
              note: { from: "{n}", in: [1, 16], out: [36, 51] }, velocity: { from: "{0}", in: [0, 1], out: [0, 127] } },
          ] }
        """

    func testControlChangesAndNotesLeaveAsTheRulesMessages() throws {
        let bridge = try RunningBridge(
            config: """
                { inputs: [{ name: "keys", from: "Virtual Raw MIDI 0-0" }],
                  mappings: \(Self.layout),
                  routes: [{ destinations: [
                    { host: "127.0.0.1", port: 9121, mappings: "layout" },
                    { host: "127.0.0.1", port: 9122, mappings: "layout", unmatched: "scheme" } ] }] }
                """, oscPorts: [9121, 9122])
        // CC 7 = 64, CC 21 = 127 and CC 7 on channel 2; pad note 36 on channel 10 pressed and
        // released; note 60 on channel 10, which no pad has.
        let result = try runProcess(
            amidi, ["-p", "hw:0,0", "-S", "B0 07 40 B0 15 7F B1 07 40 99 24 7F 89 24 40 99 3C 64"])
        XCTAssertEqual(result.status, 0, result.standardError)
        bridge.waitForMessages(port: 9121, count: 4)
        bridge.waitForMessages(port: 9122, count: 6)
        usleep(300_000)

        XCTAssertEqual(
            bridge.messages(port: 9121),
            ["/fader/7 f 0.503937", "/fader/21 f 1.000000", "/2/push1 f 1.000000", "/2/push1 f 0.000000"])
        XCTAssertEqual(
            bridge.messages(port: 9122),
            [
                "/fader/7 f 0.503937", "/fader/21 f 1.000000", "/midi/keys/2/cc ii 7 64", "/2/push1 f 1.000000",
                "/2/push1 f 0.000000", "/midi/keys/10/note_on ii 60 100",
            ])
    }

    func testOneSetTakesOSCToMIDIAndBackAgain() throws {
        // OSC in -> the output port -> Midi Through -> the input port -> OSC out, both ways
        // through the same rule.
        let bridge = try RunningBridge(
            config: """
                { inputs: [{ name: "loop", from: "Midi Through" }],
                  outputs: [{ name: "out", to: "Midi Through" }],
                  mappings: \(Self.layout),
                  osc: { listen: "127.0.0.1:9133", mappings: "layout" },
                  routes: [{ destinations: [{ host: "127.0.0.1", port: 9131, mappings: "layout" }] }] }
                """, oscPorts: [9131])
        for (address, value) in [("/fader/7", "0.5"), ("/fader/9", "0.25"), ("/2/push16", "1")] {
            let result = try runProcess(oscsend, ["127.0.0.1", "9133", address, "f", value])
            XCTAssertEqual(result.status, 0, result.standardError)
        }
        bridge.waitForMessages(port: 9131, count: 3)
        usleep(300_000)
        // 0.5 * 127 = 63.5 -> CC 64 -> 64/127; 0.25 * 127 = 31.75 -> 32 -> 32/127: within one step.
        XCTAssertEqual(
            bridge.messages(port: 9131), ["/fader/7 f 0.503937", "/fader/9 f 0.251969", "/2/push16 f 1.000000"])
    }
}
