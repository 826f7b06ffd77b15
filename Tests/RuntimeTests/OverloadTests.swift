import Config
import Foundation
import MIDI
import OSC
import XCTest

@testable import MIDIToOSCRuntime

/// When the kernel drops the events queued for the input thread (an overrun), the thread ends
/// every note the routes hold: one of them may have lost its note-off in the dropped queue.
final class OverloadTests: XCTestCase {
    func testAnOverrunEndsEveryHeldNoteOnceAndCountsThem() throws {
        let receiver = try UDPReceiverSocket()
        let parsed = try ConfigParser.parse(
            Data(
                """
                { inputs: [{ name: "keys" }],
                  routes: [{ destinations: [{ host: "127.0.0.1", port: \(receiver.port) }] }] }
                """.utf8))
        let store = SysExStore(slots: 4, capacity: 1024)
        let routes = try parsed.routes.map {
            try RouteRuntime(config: $0, configInputPorts: [0], portNames: ["keys"], sysexStore: store)
        }
        let runner = RouteRunner(routes: routes)
        for note: UInt8 in [60, 64, 67] { runner.run(.noteOn(channel: 2, note: note, velocity: 90)) }
        runner.run(.noteOff(channel: 2, note: 64))
        _ = runner.endBatch(idleWakeMilliseconds: -1)
        XCTAssertEqual(try receiver.datagrams().count, 4)

        runner.endEverySoundingNote()
        XCTAssertEqual(
            try receiver.datagrams().map(\.description).sorted(),
            ["/midi/keys/3/note_off ,ii i:60 i:0", "/midi/keys/3/note_off ,ii i:67 i:0"])
        XCTAssertEqual(runner.notesEndedAfterOverrun.load(ordering: .relaxed), 2)

        // A second overrun finds nothing sounding: no message, nothing counted.
        runner.endEverySoundingNote()
        XCTAssertEqual(try receiver.datagrams().count, 0)
        XCTAssertEqual(runner.notesEndedAfterOverrun.load(ordering: .relaxed), 2)
    }
}
