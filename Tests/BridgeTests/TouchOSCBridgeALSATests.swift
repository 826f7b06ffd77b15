import Foundation
import Glibc
import TestSupport
import XCTest

/// `touchoscBridge: true` as touchosc2midi's peers see it: `/midi ,m` sent to UDP 12101 comes out
/// of the "TouchOSC Bridge" output port, and MIDI played into its input port goes to the IP of
/// the latest sender, on port 12102, as `/midi ,m` with the port byte 0.
final class TouchOSCBridgeALSATests: XCTestCase {
    var aseqdump = ""
    var aconnect = ""
    var amidi = ""
    var stdbuf = ""
    var oscsend = ""

    override func setUpWithError() throws {
        try TestEnvironment.requireSequencer()
        aseqdump = try TestEnvironment.tool("aseqdump", package: "alsa-utils")
        aconnect = try TestEnvironment.tool("aconnect", package: "alsa-utils")
        amidi = try TestEnvironment.tool("amidi", package: "alsa-utils")
        stdbuf = try TestEnvironment.tool("stdbuf", package: "coreutils")
        oscsend = try TestEnvironment.tool("oscsend", package: "liblo-tools")
    }

    /// A TouchOSC app as the bridge sees it: a UDP socket on `source` (a loopback address) with
    /// a source port its system picked, sending `/midi ,m` to 127.0.0.1:12101. A new one on the
    /// same address is the app started again.
    final class Tablet {
        let peer: UDPPeer?

        init(_ source: String) {
            peer = UDPPeer(source: source)
            XCTAssertNotNil(peer, "bind \(source)")
        }

        /// `/midi ,m` with TouchOSC's bytes (port, data 2, data 1, status).
        func sendMIDI(_ bytes: [UInt8]) {
            let packet = Array("/midi\0\0\0,m\0\0".utf8) + bytes
            XCTAssertEqual(peer?.send(packet, toLoopbackPort: 12101), packet.count)
        }
    }

    /// `/midi ,m` from a tablet at `source` that sends this one packet.
    func sendMIDI(_ bytes: [UInt8], from source: String) {
        Tablet(source).sendMIDI(bytes)
    }

    func status(_ bridge: RunningBridge) throws -> [String: Any] {
        let json = try runProcess(TestEnvironment.aseqoscBinary, ["status", "--json", "--control", bridge.controlPath])
        XCTAssertEqual(json.status, 0, json.standardError)
        return try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
    }

    func client(_ bridge: RunningBridge) throws -> (String?, Int?) {
        let bridgeStatus = try status(bridge)["touchOSCBridge"] as? [String: Any]
        return (bridgeStatus?["client"] as? String, bridgeStatus?["clientsSeen"] as? Int)
    }

    /// The bridge's output port, as `aseqdump -p` takes it.
    func outputPort() throws -> String {
        // Both ports are named "TouchOSC Bridge"; `aseqdump -l` lists only the readable one, the output.
        let listed = try runProcess(aseqdump, ["-l"]).standardOutput.split(separator: "\n")
        return String(
            try XCTUnwrap(
                listed.first { $0.contains("aseqosc") && $0.contains("TouchOSC Bridge") }?.split(separator: " ").first,
                listed.joined(separator: "\n")))
    }

    func testTheSameTabletWithTheAppStartedAgainGetsTheLastValuesAgain() throws {
        let bridge = try RunningBridge(config: "{ touchoscBridge: { announce: false } }", oscPorts: [12102])
        let dump = BackgroundProcess(stdbuf, ["-oL", aseqdump, "-p", try outputPort()])
        try dump.start()
        defer { dump.stop() }
        let connect = try runProcess(aconnect, ["Virtual Raw MIDI 0-0", "aseqosc:0"])
        XCTAssertEqual(connect.status, 0, connect.standardError)
        XCTAssertTrue(
            RunningBridge.waitUntil(timeout: 60) { dump.standardOutput.contains("Waiting") },
            dump.standardOutput + dump.standardError)

        // The app starts and plays a note: it becomes the client, and a controller moved on the
        // MIDI side reaches it.
        let app = Tablet("127.0.0.1")
        app.sendMIDI([0x00, 0x64, 0x3C, 0x90])
        XCTAssertTrue(RunningBridge.waitUntil(timeout: 60) { (try? self.client(bridge).0) == "127.0.0.1:12102" })
        XCTAssertEqual(try runProcess(amidi, ["-p", "hw:0,0", "-S", "B0 07 10"]).status, 0)
        let volume = "/midi m MIDI [0x00 0x10 0x07 0xb0]"
        XCTAssertTrue(bridge.waitForMessages(port: 12102, count: 1), "\(bridge.messages(port: 12102))")

        // More from the same app (the same source port): nothing is sent again. The controller
        // played after them arrives right after the first, with nothing between.
        app.sendMIDI([0x00, 0x00, 0x3C, 0x80])
        app.sendMIDI([0x00, 0x64, 0x3E, 0x90])
        XCTAssertTrue(
            RunningBridge.waitUntil(timeout: 60) { dump.standardOutput.contains("note 62") }, dump.standardOutput)
        XCTAssertEqual(try runProcess(amidi, ["-p", "hw:0,0", "-S", "B0 08 20"]).status, 0)
        let balance = "/midi m MIDI [0x00 0x20 0x08 0xb0]"
        XCTAssertTrue(bridge.waitForMessages(port: 12102, count: 2), "\(bridge.messages(port: 12102))")
        XCTAssertEqual(bridge.messages(port: 12102), [volume, balance])

        // The app is started again on the same tablet: a new source port. Its first packet
        // brings it both controllers' last values, still on 12102.
        let restarted = Tablet("127.0.0.1")
        restarted.sendMIDI([0x00, 0x00, 0x3E, 0x80])
        XCTAssertTrue(bridge.waitForMessages(port: 12102, count: 4), "\(bridge.messages(port: 12102))")
        XCTAssertEqual(Set(bridge.messages(port: 12102).dropFirst(2)), [volume, balance])
        let status = try XCTUnwrap(try status(bridge)["touchOSCBridge"] as? [String: Any])
        XCTAssertEqual(status["clientsSeen"] as? Int, 1, "\(status)")
        XCTAssertEqual(status["clientsRenewed"] as? Int, 1, "\(status)")
        let (stopped, _) = bridge.stop()
        XCTAssertEqual(stopped.status, 0, stopped.standardError)
    }

    func testBothWaysWithTheLatestClient() throws {
        let bridge = try RunningBridge(config: "{ touchoscBridge: { announce: false } }", oscPorts: [12102])
        let dump = BackgroundProcess(stdbuf, ["-oL", aseqdump, "-p", try outputPort()])
        try dump.start()
        defer { dump.stop() }
        let connect = try runProcess(aconnect, ["Virtual Raw MIDI 0-0", "aseqosc:0"])
        XCTAssertEqual(connect.status, 0, connect.standardError)
        XCTAssertTrue(
            RunningBridge.waitUntil(timeout: 60) { dump.standardOutput.contains("Waiting") },
            dump.standardOutput + dump.standardError)

        // Before any client: MIDI for TouchOSC is dropped and counted.
        XCTAssertEqual(try client(bridge).1, 0)
        XCTAssertEqual(try runProcess(amidi, ["-p", "hw:0,0", "-S", "B0 07 10"]).status, 0)

        // TouchOSC -> MIDI, from 127.0.0.1: a note-on on the output port; the sender becomes the client.
        sendMIDI([0x00, 0x64, 0x3C, 0x90], from: "127.0.0.1")
        XCTAssertTrue(
            RunningBridge.waitUntil(timeout: 60) { dump.standardOutput.contains("Note on") }, dump.standardOutput)
        XCTAssertTrue(dump.standardOutput.contains("0, note 60, velocity 100"), dump.standardOutput)
        XCTAssertTrue(RunningBridge.waitUntil(timeout: 60) { (try? self.client(bridge).0) == "127.0.0.1:12102" })

        // The new client first gets the controller moved before it appeared (the route syncs on
        // appearance), then live MIDI: to the client's IP on 12102, (0, data 2, data 1, status).
        XCTAssertEqual(try runProcess(amidi, ["-p", "hw:0,0", "-S", "90 3E 50 B1 07 7F"]).status, 0)
        XCTAssertTrue(bridge.waitForMessages(port: 12102, count: 3), "\(bridge.messages(port: 12102))")
        XCTAssertEqual(
            bridge.messages(port: 12102),
            [
                "/midi m MIDI [0x00 0x10 0x07 0xb0]", "/midi m MIDI [0x00 0x50 0x3e 0x90]",
                "/midi m MIDI [0x00 0x7f 0x07 0xb1]",
            ])

        // A second client takes over and is brought up to date with both controllers.
        sendMIDI([0x00, 0x00, 0x3C, 0x80], from: "127.0.0.2")
        XCTAssertTrue(RunningBridge.waitUntil(timeout: 60) { (try? self.client(bridge).0) == "127.0.0.2:12102" })
        XCTAssertEqual(try client(bridge).1, 2)
        XCTAssertEqual(try runProcess(amidi, ["-p", "hw:0,0", "-S", "C2 05"]).status, 0)
        XCTAssertTrue(
            RunningBridge.waitUntil(timeout: 60) {
                bridge.messages(port: 12102).contains("/midi m MIDI [0x00 0x00 0x05 0xc2]")
            }, "\(bridge.messages(port: 12102))")
        let sinceSecond = bridge.messages(port: 12102).dropFirst(3)
        XCTAssertTrue(sinceSecond.contains("/midi m MIDI [0x00 0x10 0x07 0xb0]"), "\(sinceSecond)")
        XCTAssertTrue(sinceSecond.contains("/midi m MIDI [0x00 0x7f 0x07 0xb1]"), "\(sinceSecond)")

        let text = try runProcess(TestEnvironment.aseqoscBinary, ["status", "--control", bridge.controlPath])
        XCTAssertTrue(
            text.standardOutput.contains("touchosc bridge: client 127.0.0.2:12102, clients seen 2"), text.standardOutput
        )
        XCTAssertTrue(text.standardOutput.contains("service_absent 1"), text.standardOutput)
        let (stopped, _) = bridge.stop()
        XCTAssertEqual(stopped.status, 0, stopped.standardError)
    }
}
