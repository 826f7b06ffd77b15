import Config
import Foundation
import MIDI
import TestSupport
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
            try RouteRuntime(config: $0, inputPorts: [0], portNames: ["keys"], sysexStore: store)
        }
        let runner = RouteRunner(routes: routes)
        for note: UInt8 in [60, 64, 67] { runner.run(.noteOn(channel: 2, note: note, velocity: 90)) }
        runner.run(.noteOff(channel: 2, note: 64))
        _ = runner.endBatch(idleWakeMilliseconds: -1)
        XCTAssertEqual(receiver.messages(count: 4).count, 4)

        runner.endEverySoundingNote()
        XCTAssertEqual(
            receiver.messages(count: 2).sorted(), ["/midi/keys/3/note_off 60 0", "/midi/keys/3/note_off 67 0"])
        XCTAssertEqual(runner.notesEndedAfterOverrun.load(ordering: .relaxed), 2)

        // A second overrun finds nothing sounding: no message, nothing counted.
        runner.endEverySoundingNote()
        XCTAssertEqual(receiver.messages(count: 1, timeoutMilliseconds: 200), [])
        XCTAssertEqual(runner.notesEndedAfterOverrun.load(ordering: .relaxed), 2)
    }
}

extension UDPReceiverSocket {
    /// Up to `count` datagrams of two int arguments, as "address a b", waiting at most
    /// `timeoutMilliseconds` for each.
    func messages(count: Int, timeoutMilliseconds: Int32 = 2000) -> [String] {
        var found: [String] = []
        var buffer = [UInt8](repeating: 0, count: 2048)
        while found.count < count {
            var ready = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&ready, 1, timeoutMilliseconds) == 1 else { break }
            let length = recv(descriptor, &buffer, buffer.count, 0)
            guard length >= 8 else { break }
            let address = String(decoding: buffer.prefix { $0 != 0 }, as: UTF8.self)
            func int(at offset: Int) -> Int32 {
                Int32(bitPattern: buffer[offset..<offset + 4].reduce(0) { $0 << 8 | UInt32($1) })
            }
            found.append("\(address) \(int(at: length - 8)) \(int(at: length - 4))")
        }
        return found
    }
}
