import Config
import Foundation
import Glibc
import MIDI
import OSC
import Platform
import XCTest

@testable import MIDIToOSCRuntime
@testable import OSCToMIDIRuntime
@testable import Recovery
@testable import Status

/// `latency` destinations: the events of one read leave as one bundle per destination, with one
/// time tag; another read, a full bundle and a flush each close one. Seen on the wire, decoded.
final class OpenBundlesTests: XCTestCase {
    var receivers: [UDPReceiverSocket] = []
    var runtime: RouteRuntime!
    let packet = UnsafeMutableRawBufferPointer.allocate(byteCount: 65_536, alignment: 16)

    override func setUpWithError() throws {
        receivers = [try UDPReceiverSocket(), try UDPReceiverSocket()]
        let text = """
            { inputs: [{ name: "keys" }],
              routes: [{ destinations: [
                { host: "127.0.0.1", port: \(receivers[0].port), latency: 10 },
                { host: "127.0.0.1", port: \(receivers[1].port) } ] }] }
            """
        let config = try ConfigParser.parse(Data(text.utf8))
        runtime = try RouteRuntime(
            config: config.routes[0], configInputPorts: [0], portNames: ["keys"],
            sysexStore: SysExStore(slots: 4, capacity: 1024))
    }

    override func tearDown() { packet.deallocate() }

    func play(_ event: MIDIEvent, at stamp: UInt64) {
        var event = event
        event.timestamp = stamp
        XCTAssertEqual(runtime.run(event, packet: packet), 0)
    }

    func addresses(_ bundle: OSCPacket) -> [String] {
        guard case .bundle(let bundle) = bundle else { return ["not a bundle: \(bundle)"] }
        return bundle.elements.map { element in
            if case .message(let message) = element { return message.address }
            return "nested"
        }
    }

    func testAChordReadAtOnceIsOneBundleAndTheNextReadAnother() throws {
        // Read 5 ms ago, and 4 ms ago (a stamp from the future would be tagged as now).
        let stamp = MonotonicClock.now() - 5_000_000
        for note: UInt8 in [60, 64, 67] { play(.noteOn(channel: 0, note: note, velocity: 100), at: stamp) }
        play(.noteOff(channel: 0, note: 60), at: stamp + 1_000_000)
        runtime.flush()
        let bundled = try receivers[0].datagrams()
        XCTAssertEqual(bundled.count, 2, "\(bundled)")
        XCTAssertEqual(
            bundled.map(addresses),
            [["/midi/keys/1/note_on", "/midi/keys/1/note_on", "/midi/keys/1/note_on"], ["/midi/keys/1/note_off"]])
        guard case .bundle(let chord) = bundled[0], case .bundle(let release) = bundled[1] else {
            return XCTFail("\(bundled)")
        }
        // One read's tag, and the next read's 1 ms later (to the clock's rounding).
        let gap = Double(release.timeTag.rawValue &- chord.timeTag.rawValue) / 4_294_967_296
        XCTAssertEqual(gap, 0.001, accuracy: 0.0002)
        // The plain destination beside it: a datagram per event, as ever.
        XCTAssertEqual(try receivers[1].datagrams().count, 4)
    }

    func testAReadTooLongForOneBundleFillsSeveralInOrder() throws {
        let stamp = MonotonicClock.now()
        // 60 controllers of 28 bytes each plus their sizes: more than one 1,536-byte bundle.
        for value in 0..<60 {
            play(.controlChange(channel: 0, controller: 1, value: UInt8(value)), at: stamp)
        }
        runtime.flush()
        let bundled = try receivers[0].datagrams()
        XCTAssertEqual(bundled.count, 2, "\(bundled.count) bundles")
        var values: [Int32] = []
        for case .bundle(let bundle) in bundled {
            for case .message(let message) in bundle.elements {
                if case .int32(let value) = message.arguments.last { values.append(value) }
            }
        }
        XCTAssertEqual(values, (0..<60).map { Int32($0) })
    }
}
