import Foundation
import Glibc
import TestSupport
import XCTest

/// `latency: MS` on a destination: each event leaves in a bundle time-tagged with when it was
/// read plus MS, in wall-clock time, as `oscdump` (liblo) reads it; and a receiving aseqosc
/// plays it at that time, not when it arrived.
final class TimeTaggedOutputALSATests: XCTestCase {
    var amidi = ""

    override func setUpWithError() throws {
        try TestEnvironment.requireSequencer()
        amidi = try TestEnvironment.tool("amidi", package: "alsa-utils")
    }

    /// The wall-clock time (Unix seconds) of an `oscdump` line's time tag (`SSSSSSSS.FFFFFFFF`).
    static func unixTime(ofDumpLine line: String) -> Double? {
        let tag = line.split(separator: " ").first ?? ""
        let parts = tag.split(separator: ".")
        guard parts.count == 2, let seconds = UInt64(parts[0], radix: 16), let fraction = UInt64(parts[1], radix: 16)
        else { return nil }
        return Double(seconds) - 2_208_988_800 + Double(fraction) / 4_294_967_296
    }

    func testEachEventLeavesInABundleTaggedWithItsReadTimePlusTheLatency() throws {
        let bridge = try RunningBridge(
            config: """
                { inputs: [{ name: "keys", from: "Virtual Raw MIDI 0-0" }],
                  routes: [{ destinations: [
                    { host: "127.0.0.1", port: 9311, latency: 500 },
                    { host: "127.0.0.1", port: 9312 } ] }] }
                """, oscPorts: [9311, 9312])
        let before = Date().timeIntervalSince1970
        XCTAssertEqual(try runProcess(amidi, ["-p", "hw:0,0", "-S", "90 3C 64"]).status, 0)
        XCTAssertTrue(bridge.waitForMessages(port: 9311, count: 1))
        XCTAssertTrue(bridge.waitForMessages(port: 9312, count: 1))
        XCTAssertEqual(bridge.messages(port: 9311), ["/midi/keys/1/note_on ii 60 100"])
        let line = try XCTUnwrap(bridge.dumps[9311]?.standardOutput.split(separator: "\n").first.map(String.init))
        let tag = try XCTUnwrap(Self.unixTime(ofDumpLine: line), line)
        // Read after `before` (amidi's start) and before the plain destination beside it had its
        // message (sent after the read: oscdump prints its own clock for a plain message, the
        // time it came), then 500 ms ahead; 2 ms for the clocks' reading. Not `after`: on a busy
        // machine the bridge may read the note after amidi has exited.
        let plain = try XCTUnwrap(bridge.dumps[9312]?.standardOutput.split(separator: "\n").first.map(String.init))
        let plainCame = try XCTUnwrap(Self.unixTime(ofDumpLine: plain), plain)
        XCTAssertGreaterThanOrEqual(tag, before + 0.5 - 0.002, line)
        XCTAssertLessThanOrEqual(tag, plainCame + 0.5 + 0.002, "\(line); plain: \(plain)")
        let status = try runProcess(TestEnvironment.aseqoscBinary, ["status", "--control", bridge.controlPath])
        XCTAssertTrue(
            status.standardOutput.contains(
                "-> 127.0.0.1:9311 (default): 1 packets, 56 bytes, no errors; time-tagged +500 ms"),
            status.standardOutput)
        // The plain one went at the read, not 500 ms later: well before the tag.
        XCTAssertLessThan(plainCame, tag - 0.25, "the other destination is plain: \(plain); tagged: \(line)")
    }

    /// The python that has python-osc (TestSupport's ``python3(importing:)``).
    static func pythonWithPythonOSC() throws -> String {
        guard let python = python3(importing: "pythonosc") else {
            throw XCTSkip("python-osc is missing: python3 -m pip install python-osc")
        }
        return python
    }

    /// python-osc reads the time tag as the same moment: the read time plus the latency.
    func testPythonOSCReadsTheTimeTagAsTheReadTimePlusTheLatency() throws {
        let python = try Self.pythonWithPythonOSC()
        let script = """
            import socket, sys, time
            from pythonosc.osc_packet import OscPacket
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.bind(("127.0.0.1", 9313))
            print("ready", flush=True)
            data, _ = s.recvfrom(65536)
            came = time.time()
            for timed in OscPacket(data).messages:
                print(f"{timed.time:.6f} {came:.6f} {timed.message.address} {timed.message.params}", flush=True)
            """
        let receiver = BackgroundProcess(python, ["-c", script])
        try receiver.start()
        defer { receiver.stop() }
        XCTAssertTrue(receiver.waitForOutput(timeout: 60) { $0.contains("ready") }, receiver.standardError)
        let bridge = try RunningBridge(
            config: """
                { inputs: [{ name: "keys", from: "Virtual Raw MIDI 0-0" }],
                  routes: [{ destinations: [{ host: "127.0.0.1", port: 9313, latency: 250 }] }] }
                """, oscPorts: [])
        let before = Date().timeIntervalSince1970
        XCTAssertEqual(try runProcess(amidi, ["-p", "hw:0,0", "-S", "90 3C 64"]).status, 0)
        XCTAssertTrue(
            receiver.waitForOutput { $0.contains("note_on") }, receiver.standardOutput + receiver.standardError)
        let line = try XCTUnwrap(receiver.standardOutput.split(separator: "\n").first { $0.contains("note_on") })
        XCTAssertTrue(line.hasSuffix("/midi/keys/1/note_on [60, 100]"), String(line))
        let words = line.split(separator: " ")
        let tag = try XCTUnwrap(Double(words[0]), String(line))
        let came = try XCTUnwrap(Double(words[1]), String(line))
        // Read after amidi's start and before the bundle came (it is sent after the read; on a
        // busy machine the read may come after amidi has exited), then 250 ms ahead.
        XCTAssertGreaterThanOrEqual(tag, before + 0.25 - 0.002, String(line))
        XCTAssertLessThanOrEqual(tag, came + 0.25 + 0.002, String(line))
        withExtendedLifetime(bridge) {}
    }

    func testAReceivingBridgePlaysEachEventAtItsTimeTag() throws {
        let stdbuf = try TestEnvironment.tool("stdbuf", package: "coreutils")
        let aseqdump = try TestEnvironment.tool("aseqdump", package: "alsa-utils")
        let dump = BackgroundProcess(stdbuf, ["-oL", aseqdump, "-p", "14:0"])
        try dump.start()
        defer { dump.stop() }
        XCTAssertTrue(dump.waitForOutput { $0.contains("Source") })
        let receiver = try RunningBridge(
            config: #"{ outputs: [{ name: "keys", to: "Midi Through" }], osc: { listen: "127.0.0.1:57421" } }"#,
            oscPorts: [])
        // 9314: oscdump shows the time tag the receiving bridge was sent.
        let sender = try RunningBridge(
            config: """
                { inputs: [{ name: "keys", from: "Virtual Raw MIDI 0-0" }],
                  routes: [{ destinations: [
                    { host: "127.0.0.1", port: 57421, latency: 400 },
                    { host: "127.0.0.1", port: 9314, latency: 400 } ] }] }
                """, oscPorts: [9314])
        let before = Date()
        XCTAssertEqual(try runProcess(amidi, ["-p", "hw:0,0", "-S", "90 3C 64"]).status, 0)
        XCTAssertTrue(dump.waitForOutput(timeout: 60) { $0.contains("Note on") }, dump.standardOutput)
        let heard = Date()
        XCTAssertGreaterThan(heard.timeIntervalSince(before), 0.39, "played on arrival, not at its time tag")
        // Timed from the tag (the note's read plus 400 ms), not from amidi's start.
        XCTAssertTrue(sender.waitForMessages(port: 9314, count: 1))
        let line = try XCTUnwrap(sender.dumps[9314]?.standardOutput.split(separator: "\n").first.map(String.init))
        let tag = try XCTUnwrap(Self.unixTime(ofDumpLine: line), line)
        XCTAssertGreaterThan(heard.timeIntervalSince1970, tag - 0.01, "played before its time tag: \(line)")
        XCTAssertLessThan(heard.timeIntervalSince1970 - tag, 1.0, "played long after its time tag: \(line)")
        let status = try runProcess(
            TestEnvironment.aseqoscBinary, ["status", "--json", "--control", receiver.controlPath])
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(status.standardOutput.utf8)) as? [String: Any])
        XCTAssertEqual((json["oscInput"] as? [String: Any])?["scheduled"] as? Int, 1)
        withExtendedLifetime(sender) {}
    }
}
