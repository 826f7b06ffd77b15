import Foundation
import Glibc
import OSC
import TestSupport
import XCTest

/// Stopping or reloading the OSC -> MIDI side with bundles still scheduled on its ALSA queue
/// leaves no note on and plays nothing afterwards; `status --json` shows the OSC input's counters
/// as fields; output ports' binding changes are logged as `output:`. Against the kernel
/// sequencer in the ALSA VM, watched by `aseqdump` on Midi Through.
final class OSCStopALSATests: XCTestCase {
    var aseqdump = ""
    var stdbuf = ""

    override func setUpWithError() throws {
        try TestEnvironment.requireSequencer()
        aseqdump = try TestEnvironment.tool("aseqdump", package: "alsa-utils")
        stdbuf = try TestEnvironment.tool("stdbuf", package: "coreutils")
    }

    /// `aseqosc run` with output "synth" bound to "Virtual Raw MIDI 0-0" and "thru" bound to
    /// "Midi Through", OSC input on `port`.
    func startBridge(port: Int, outputs: String? = nil) throws -> RunningBridge {
        let outputs =
            outputs ?? "[{ name: \"synth\", to: \"Virtual Raw MIDI 0-0\" }, { name: \"thru\", to: \"Midi Through\" }]"
        return try RunningBridge(
            config: "{ outputs: \(outputs), osc: { listen: \"127.0.0.1:\(port)\" } }", oscPorts: [])
    }

    /// Sends `bytes` as one UDP datagram to 127.0.0.1:`port`.
    func send(_ port: Int, bytes: [UInt8]) {
        XCTAssertEqual(sendUDPDatagram(bytes, toLoopbackPort: port), bytes.count)
    }

    func send(_ port: Int, _ packet: OSCPacket) throws {
        send(port, bytes: try packet.serialize())
    }

    /// `aseqdump` on Midi Through's output, where the "thru" output's events appear.
    func dumpThrough() throws -> BackgroundProcess {
        let dump = BackgroundProcess(stdbuf, ["-oL", aseqdump, "-p", "14:0"])
        try dump.start()
        XCTAssertTrue(dump.waitForOutput { $0.contains("Waiting for data") })
        return dump
    }

    /// The note events aseqdump printed, as "on 60" / "off 60".
    func notes(_ dump: BackgroundProcess) -> [String] {
        dump.standardOutput.split(separator: "\n").compactMap { line in
            guard let range = line.range(of: "note ") else { return nil }
            let note = line[range.upperBound...].prefix { $0.isNumber }
            if line.contains("Note on") { return "on \(note)" }
            if line.contains("Note off") { return "off \(note)" }
            return nil
        }
    }

    /// A bundle for "now" holding a note-on on "thru" and a bundle `seconds` ahead with its
    /// note-off.
    func noteNowOffLater(_ note: Int32, seconds: Double) -> OSCPacket {
        .bundle(
            OSCBundle(
                timeTag: .immediately,
                [
                    .message(OSCMessage("/midi/thru/1/note_on", [.int32(note), .int32(100)])),
                    .bundle(
                        OSCBundle(
                            timeTag: OSCTimeTag(unixTime: Date().timeIntervalSince1970 + seconds),
                            [.message(OSCMessage("/midi/thru/1/note_off", [.int32(note), .int32(0)]))])),
                ]))
    }

    func testSigtermSendsTheNoteOffOfANoteWhoseNoteOffWasScheduledLaterAndPlaysNothingAfter() throws {
        let dump = try dumpThrough()
        defer { dump.stop() }
        let bridge = try startBridge(port: 57321)
        let noteOffTime = Date().addingTimeInterval(5)
        try send(57321, noteNowOffLater(60, seconds: 5))
        XCTAssertTrue(dump.waitForOutput { _ in self.notes(dump) == ["on 60"] }, dump.standardOutput)

        let signalled = Date()
        bridge.bridge.signal(SIGTERM)
        XCTAssertTrue(dump.waitForOutput(timeout: 60) { _ in self.notes(dump).count >= 2 }, dump.standardOutput)
        let offAt = Date()
        print(
            "note-off scheduled 5 s ahead: sent \(Int(offAt.timeIntervalSince(signalled) * 1000)) ms after SIGTERM, "
                + "\(Int(noteOffTime.timeIntervalSince(offAt) * 1000)) ms before its time")
        // Sent at the stop, not at its time: a second before it at the latest.
        XCTAssertLessThan(offAt, noteOffTime.addingTimeInterval(-1), "the note-off waited for its time")
        let result = bridge.bridge.wait(timeout: 10)
        XCTAssertEqual(result.status, 0, result.standardError)
        // Past the note-off's original time: nothing more.
        usleep(useconds_t(max(0, noteOffTime.timeIntervalSinceNow + 0.5) * 1_000_000))
        XCTAssertEqual(notes(dump), ["on 60", "off 60"])
    }

    func testSigtermBeforeAScheduledNoteOnLeavesNoNoteOn() throws {
        let dump = try dumpThrough()
        defer { dump.stop() }
        let bridge = try startBridge(port: 57322)
        try send(
            57322,
            .bundle(
                OSCBundle(
                    timeTag: OSCTimeTag(unixTime: Date().timeIntervalSince1970 + 3),
                    [.message(OSCMessage("/midi/thru/1/note_on", [.int32(62), .int32(100)]))])))
        // The bundle is on the queue when the stop comes.
        XCTAssertTrue(
            RunningBridge.waitUntil(timeout: 60) {
                (try? runProcess(TestEnvironment.aseqoscBinary, ["status", "--control", bridge.controlPath]))?
                    .standardOutput.contains("1 scheduled, 0 late") == true
            })
        let (result, seconds) = bridge.stop()
        XCTAssertEqual(result.status, 0, result.standardError)
        XCTAssertLessThan(seconds, 1.5)
        usleep(3_500_000)
        // Nothing, or the note-on with its note-off: never a note left on.
        let seen = notes(dump)
        XCTAssertTrue(seen == [] || seen == ["on 62", "off 62"], "\(seen); \(result.standardError)")
    }

    func testReloadThatRemovesAnOutputSilencesItsScheduledNotes() throws {
        let dump = try dumpThrough()
        defer { dump.stop() }
        let bridge = try startBridge(port: 57323)
        let noteOffTime = Date().addingTimeInterval(5)
        try send(57323, noteNowOffLater(64, seconds: 5))
        try send(
            57323,
            .bundle(
                OSCBundle(
                    timeTag: OSCTimeTag(unixTime: Date().timeIntervalSince1970 + 3),
                    [.message(OSCMessage("/midi/thru/1/note_on", [.int32(65), .int32(100)]))])))
        XCTAssertTrue(dump.waitForOutput { _ in self.notes(dump) == ["on 64"] }, dump.standardOutput)

        let reloaded = Date()
        XCTAssertTrue(
            try bridge.reload(
                "{ outputs: [{ name: \"synth\", to: \"Virtual Raw MIDI 0-0\" }], osc: { listen: \"127.0.0.1:57323\" } }"
            ), bridge.bridge.standardError)
        XCTAssertTrue(dump.waitForOutput(timeout: 60) { _ in self.notes(dump).count >= 2 }, dump.standardOutput)
        let offAt = Date()
        print(
            "reload: scheduled note-off sent \(Int(offAt.timeIntervalSince(reloaded) * 1000)) ms after SIGHUP, "
                + "\(Int(noteOffTime.timeIntervalSince(offAt) * 1000)) ms before its time")
        // Sent at the reload, not at its time: a second before it at the latest.
        XCTAssertLessThan(offAt, noteOffTime.addingTimeInterval(-1), "the note-off waited for its time")
        // Past the note-on's and the note-off's original times: nothing more.
        usleep(useconds_t(max(0, noteOffTime.timeIntervalSinceNow + 0.5) * 1_000_000))
        XCTAssertEqual(notes(dump), ["on 64", "off 64"])
        XCTAssertTrue(bridge.bridge.isRunning)
        bridge.stop()
    }

    func testStatusJSONShowsTheOSCInputCountersAsFields() throws {
        let dump = try dumpThrough()
        defer { dump.stop() }
        let bridge = try startBridge(port: 57324)
        var bytes = 0
        func sendCounted(_ packet: OSCPacket) throws {
            bytes += try packet.serialize().count
            try send(57324, packet)
        }
        try sendCounted(.message(OSCMessage("/midi/thru/1/note_on", [.int32(60), .int32(100)])))
        try sendCounted(.message(OSCMessage("/midi/thru/1/note_off", [.int32(60), .int32(0)])))
        try sendCounted(.message(OSCMessage("/no/such/address", [.int32(1)])))
        try sendCounted(.message(OSCMessage("/midi/thru/1/note_on", [.string("x")])))
        try sendCounted(
            .bundle(
                OSCBundle(
                    timeTag: OSCTimeTag(unixTime: Date().timeIntervalSince1970 + 0.2),
                    [.message(OSCMessage("/midi/thru/1/cc", [.int32(7), .int32(100)]))])))
        try sendCounted(
            .bundle(
                OSCBundle(
                    timeTag: OSCTimeTag(unixTime: Date().timeIntervalSince1970 - 1),
                    [.message(OSCMessage("/midi/thru/1/cc", [.int32(7), .int32(90)]))])))
        // Not OSC: 5 bytes, not a whole number of words.
        let garbage: [UInt8] = [0x2F, 0x61, 0x00, 0x00, 0x01]
        send(57324, bytes: garbage)
        bytes += garbage.count
        XCTAssertTrue(dump.waitForOutput { $0.components(separatedBy: "Control change").count - 1 >= 2 })

        let json = try runProcess(TestEnvironment.aseqoscBinary, ["status", "--json", "--control", bridge.controlPath])
        XCTAssertEqual(json.status, 0, json.standardError)
        let status = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
        let osc = try XCTUnwrap(status["oscInput"] as? [String: Any], json.standardOutput)
        XCTAssertEqual(osc["listen"] as? String, "osc.udp://127.0.0.1:57324")
        XCTAssertEqual(osc["packets"] as? Int, 7)
        XCTAssertEqual(osc["bytes"] as? Int, bytes)
        XCTAssertEqual(osc["messages"] as? Int, 6)
        XCTAssertEqual(osc["translated"] as? Int, 4)
        XCTAssertEqual(osc["unknownAddresses"] as? Int, 1)
        XCTAssertEqual(osc["malformed"] as? [String: Int], ["sizeNotMultipleOfFour": 1, "argumentsDoNotFit": 1])
        XCTAssertEqual(osc["notAllowed"] as? Int, 0)
        XCTAssertEqual(osc["scheduled"] as? Int, 1)
        XCTAssertEqual(osc["late"] as? Int, 1)
        XCTAssertEqual(osc["sysexDisabled"] as? Int, 0)
        let outputs = try XCTUnwrap(osc["outputs"] as? [[String: Any]])
        XCTAssertEqual(outputs.map { $0["name"] as? String }, ["synth", "thru"])
        let thru = outputs[1]
        XCTAssertEqual(thru["sent"] as? Int, 4)
        XCTAssertEqual(thru["droppedQueueFull"] as? Int, 0)
        XCTAssertEqual(thru["droppedRedundantNoteOffs"] as? Int, 0)
        XCTAssertEqual(thru["queueHighWater"] as? Int, 0)
        XCTAssertEqual(thru["queueCapacity"] as? Int, 1024)
        XCTAssertEqual(outputs[0]["sent"] as? Int, 0)

        let text = try runProcess(TestEnvironment.aseqoscBinary, ["status", "--control", bridge.controlPath])
        XCTAssertEqual(text.status, 0, text.standardError)
        XCTAssertTrue(text.standardOutput.contains("osc input osc.udp://127.0.0.1:57324:"), text.standardOutput)
        XCTAssertTrue(
            text.standardOutput.contains("  received   7 packets, \(bytes) bytes, 6 messages, 4 translated"),
            text.standardOutput)
        XCTAssertTrue(text.standardOutput.contains("  bundles    1 scheduled, 1 late"), text.standardOutput)
        XCTAssertTrue(
            text.standardOutput.contains("  malformed  argumentsDoNotFit 1, sizeNotMultipleOfFour 1"),
            text.standardOutput)
        XCTAssertTrue(text.standardOutput.contains("  -> thru    4 sent, queue 0/1024 high water"), text.standardOutput)
        bridge.stop()
    }

    func testOutputBindingChangesAreLoggedAsOutput() throws {
        let bridge = try startBridge(
            port: 57325, outputs: "[{ name: \"late\", to: \"aseqdump\" }, { name: \"thru\", to: \"Midi Through\" }]")
        XCTAssertTrue(
            bridge.bridge.standardError.contains("output: 'aseqdump' is waiting"), bridge.bridge.standardError)
        let dump = BackgroundProcess(stdbuf, ["-oL", aseqdump])
        try dump.start()
        XCTAssertTrue(
            RunningBridge.waitUntil(timeout: 60) {
                bridge.bridge.standardError.contains("output: 'aseqdump' bound to")
            },
            bridge.bridge.standardError)
        dump.stop()
        XCTAssertTrue(
            RunningBridge.waitUntil(timeout: 60) { bridge.bridge.standardError.contains("output: 'aseqdump' lost") },
            bridge.bridge.standardError)
        XCTAssertFalse(bridge.bridge.standardError.contains("input: 'aseqdump'"), bridge.bridge.standardError)
        bridge.stop()
    }
}
