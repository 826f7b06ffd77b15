import Config
import Foundation
import MIDI
import OSC
import XCTest

@testable import MIDIToOSCRuntime

/// A route's `from` and its `ports` operator name config inputs, whose ALSA ports the bridge
/// passes by input index: a route fed by the second input alone gets that input's events only.
final class RouteInputsTests: XCTestCase {
    func testRoutesFromDifferentInputsEachGetTheirOwnInputsEvents() throws {
        let keysReceiver = try UDPReceiverSocket()
        let padsReceiver = try UDPReceiverSocket()
        let parsed = try ConfigParser.parse(
            Data(
                """
                { inputs: [{ name: "keys" }, { name: "pads" }, { name: "drums" }],
                  routes: [
                    { from: ["keys"], destinations: [{ host: "127.0.0.1", port: \(keysReceiver.port) }] },
                    { from: ["pads", "drums"], operators: [{ ports: ["drums"] }],
                      destinations: [{ host: "127.0.0.1", port: \(padsReceiver.port) }] } ] }
                """.utf8))
        let store = SysExStore(slots: 4, capacity: 1024)
        // The ALSA ports need not follow the config's order: a reload keeps a surviving input's.
        let configInputPorts: [UInt8] = [3, 1, 2]
        let routes = try parsed.routes.map {
            try RouteRuntime(
                config: $0, configInputPorts: configInputPorts, portNames: ["", "pads", "drums", "keys"],
                sysexStore: store)
        }
        XCTAssertEqual(routes.map(\.inputPorts), [[3], [1, 2]])
        let runner = RouteRunner(routes: routes)
        for port: UInt16 in [3, 1, 2] {
            var event = MIDIEvent.noteOn(channel: 0, note: 60, velocity: 90)
            event.port = port
            runner.run(event)
        }
        _ = runner.endBatch(idleWakeMilliseconds: -1)
        XCTAssertEqual(try keysReceiver.datagrams().map(\.description), ["/midi/keys/1/note_on ,ii i:60 i:90"])
        XCTAssertEqual(try padsReceiver.datagrams().map(\.description), ["/midi/drums/1/note_on ,ii i:60 i:90"])
    }
}
