import Foundation
import Glibc
import OSC
import TestSupport
import XCTest

/// Last values sent again where a receiver lost them (`sync:`): an output port whose device
/// comes back (an `aseqdump` started again) gets its program and controllers; a destination
/// named in `/aseqosc/sync` gets its own last values (one request a second); a python-osc TCP
/// server started again gets every controller's last value, before a note played after.
final class ReplayALSATests: XCTestCase {
    var amidi = ""
    var aseqdump = ""
    var oscsend = ""
    var stdbuf = ""

    override func setUpWithError() throws {
        try TestEnvironment.requireSequencer()
        amidi = try TestEnvironment.tool("amidi", package: "alsa-utils")
        aseqdump = try TestEnvironment.tool("aseqdump", package: "alsa-utils")
        oscsend = try TestEnvironment.tool("oscsend", package: "liblo-tools")
        stdbuf = try TestEnvironment.tool("stdbuf", package: "coreutils")
    }

    /// `oscsend 127.0.0.1 PORT ADDRESS [TYPES ARGS...]`.
    func send(_ port: Int, _ address: String, _ types: String = "", _ arguments: Any...) throws {
        var command = ["127.0.0.1", String(port), address]
        if !types.isEmpty { command += [types] + arguments.map { "\($0)" } }
        let result = try runProcess(oscsend, command)
        XCTAssertEqual(result.status, 0, "oscsend \(command): \(result.standardError)")
    }

    func status(_ bridge: RunningBridge) throws -> [String: Any] {
        let json = try runProcess(TestEnvironment.aseqoscBinary, ["status", "--json", "--control", bridge.controlPath])
        XCTAssertEqual(json.status, 0, json.standardError)
        return try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
    }

    func destination(_ bridge: RunningBridge) throws -> [String: Any] {
        let routes = try XCTUnwrap(try status(bridge)["routes"] as? [[String: Any]])
        return try XCTUnwrap((routes.first?["destinations"] as? [[String: Any]])?.first)
    }

    /// The channel messages an aseqdump printed, as "Program change 0, program 5" and the like
    /// (the source column and spacing dropped).
    func channelMessages(_ dump: BackgroundProcess) -> [String] {
        dump.standardOutput.split(separator: "\n").compactMap { line in
            let kinds = ["Program change", "Control change", "Pitch bend", "Channel aftertouch", "Note on"]
            guard let kind = kinds.first(where: { line.contains($0) }) else { return nil }
            let rest = line[line.range(of: kind)!.upperBound...].trimmingCharacters(in: .whitespaces)
            return "\(kind) \(rest)"
        }
    }

    func testAnOutputWhoseDeviceComesBackGetsItsProgramControllersAndBendAgain() throws {
        let bridge = try RunningBridge(
            config: """
                { outputs: [{ name: "synth", to: "aseqdump", sync: ["device"] }],
                  osc: { listen: "127.0.0.1:57340" } }
                """, oscPorts: [])
        let first = BackgroundProcess(stdbuf, ["-oL", aseqdump])
        try first.start()
        XCTAssertTrue(
            RunningBridge.waitUntil(timeout: 60) {
                bridge.bridge.standardError.contains("output: 'aseqdump' bound to")
            },
            bridge.bridge.standardError)
        try send(57340, "/midi/synth/1/program", "i", 5)
        try send(57340, "/midi/synth/1/cc", "ii", 7, 100)
        try send(57340, "/midi/synth/2/cc", "ii", 10, 64)
        try send(57340, "/midi/synth/1/pitch_bend", "i", 1000)
        try send(57340, "/midi/synth/1/cc", "ii", 7, 90)
        try send(57340, "/midi/synth/1/note_on", "ii", 60, 100)
        try send(57340, "/midi/synth/1/note_off", "ii", 60, 0)
        XCTAssertTrue(first.waitForOutput(timeout: 60) { $0.contains("Note off") }, first.standardOutput)
        // The synth is switched off, and on again: a new client, a new port of the same name.
        first.stop()
        XCTAssertTrue(
            RunningBridge.waitUntil(timeout: 60) { bridge.bridge.standardError.contains("output: 'aseqdump' lost") },
            bridge.bridge.standardError)
        let second = BackgroundProcess(stdbuf, ["-oL", aseqdump])
        try second.start()
        defer { second.stop() }
        XCTAssertTrue(
            second.waitForOutput(timeout: 60) { $0.contains("Pitch bend") }, second.standardOutput)
        // The program first, then the controllers by number and channel, then the bend; no note.
        XCTAssertEqual(
            channelMessages(second),
            [
                "Program change 0, program 5", "Control change 0, controller 7, value 90", "Pitch bend 0, value 1000",
                "Control change 1, controller 10, value 64",
            ])
        let osc = try XCTUnwrap(try status(bridge)["oscInput"] as? [String: Any])
        XCTAssertEqual(osc["replayed"] as? Int, 4, "\(osc)")
        bridge.stop()
    }

    func testSyncRequestsReplayTheDestinationTheyNameOrTheSendersOwnOnceASecond() throws {
        let bridge = try RunningBridge(
            config: """
                { inputs: [{ name: "keys", from: "Virtual Raw MIDI 0-0" }],
                  outputs: [{ name: "thru", to: "Midi Through" }],
                  osc: { listen: "127.0.0.1:57341" },
                  routes: [{ destinations: [
                    { host: "127.0.0.1", port: 9350, sync: ["request"] },
                    { host: "127.0.0.1", port: 9351 } ] }] }
                """, oscPorts: [9350, 9351])
        XCTAssertEqual(try runProcess(amidi, ["-p", "hw:0,0", "-S", "B0 07 64 C0 05 B1 0A 40 90 3C 64"]).status, 0)
        XCTAssertTrue(bridge.waitForMessages(port: 9350, count: 4), "\(bridge.messages(port: 9350))")
        XCTAssertTrue(bridge.waitForMessages(port: 9351, count: 4), "\(bridge.messages(port: 9351))")

        // Twice at once (sent back to back, so that a busy machine cannot space them a second
        // apart): the first replays, the second is refused and counted.
        let request = try OSCPacket.message(OSCMessage("/aseqosc/sync", [.string("127.0.0.1:9350")])).serialize()
        XCTAssertEqual(sendUDPDatagram(request, toLoopbackPort: 57341), request.count)
        XCTAssertEqual(sendUDPDatagram(request, toLoopbackPort: 57341), request.count)
        XCTAssertTrue(bridge.waitForMessages(port: 9350, count: 7), "\(bridge.messages(port: 9350))")
        XCTAssertTrue(
            RunningBridge.waitUntil(timeout: 60) { (try? self.status(bridge)["replaysRefused"] as? Int) == 1 },
            "\(String(describing: try? status(bridge)))")
        // A second later, without a name: the destinations at the sender's address that take
        // requests (9350, not 9351).
        usleep(1_100_000)
        try send(57341, "/aseqosc/sync")
        XCTAssertTrue(bridge.waitForMessages(port: 9350, count: 10), "\(bridge.messages(port: 9350))")
        let replay = ["/midi/keys/1/program i 5", "/midi/keys/1/cc ii 7 100", "/midi/keys/2/cc ii 10 64"]
        XCTAssertEqual(
            bridge.messages(port: 9350),
            [
                "/midi/keys/1/cc ii 7 100", "/midi/keys/1/program i 5", "/midi/keys/2/cc ii 10 64",
                "/midi/keys/1/note_on ii 60 100",
            ] + replay + replay)
        XCTAssertEqual(bridge.messages(port: 9351).count, 4, "\(bridge.messages(port: 9351))")
        let synced = try destination(bridge)
        XCTAssertEqual(synced["replayed"] as? Int, 6, "\(synced)")
        XCTAssertEqual(synced["sync"] as? String, "request", "\(synced)")
        bridge.stop()
    }

    func testATCPServerStartedAgainGetsEveryControllersLastValueBeforeANotePlayedAfter() throws {
        let python = try TimeTaggedOutputALSATests.pythonWithPythonOSC()
        func server() throws -> BackgroundProcess {
            try TCPDestinationALSATests.pythonServer(python, port: 9352, mode: "1.0")
        }
        func lines(_ process: BackgroundProcess) -> [String] {
            process.standardOutput.split(separator: "\n").map(String.init).filter { $0 != "listening" }
        }
        var synth = try server()
        let bridge = try RunningBridge(
            config: """
                { inputs: [{ name: "keys", from: "Virtual Raw MIDI 0-0" }],
                  routes: [{ destinations: [
                    { host: "127.0.0.1", port: 9352, protocol: "tcp", sync: ["reconnect"] } ] }] }
                """, oscPorts: [])
        XCTAssertTrue(
            RunningBridge.waitUntil(timeout: 60) {
                ((try? self.destination(bridge)["tcp"]) as? [String: Any])?["state"] as? String == "connected"
            })
        // Eight faders moved (not 6, data entry, which is kept as the parameter it sets), then
        // the synth's host restarts.
        let controllers = [1, 2, 3, 4, 5, 7, 8, 10]
        let faders = controllers.map { String(format: "B0 %02X %02X", $0, $0 * 10) }.joined(separator: " ")
        XCTAssertEqual(try runProcess(amidi, ["-p", "hw:0,0", "-S", faders]).status, 0)
        XCTAssertTrue(synth.waitForOutput(timeout: 60) { $0.contains("[10, 100]") }, synth.standardOutput)
        synth.signal(SIGKILL)
        _ = synth.stop(grace: 5)
        XCTAssertTrue(
            RunningBridge.waitUntil(timeout: 60) {
                ((try? self.destination(bridge)["tcp"]) as? [String: Any])?["state"] as? String != "connected"
            })
        synth = try server()
        defer { synth.stop() }
        XCTAssertTrue(
            RunningBridge.waitUntil(timeout: 60) { (try? self.destination(bridge)["replayed"] as? Int) == 8 },
            "\(String(describing: try? destination(bridge)))")
        XCTAssertEqual(try runProcess(amidi, ["-p", "hw:0,0", "-S", "90 3C 64"]).status, 0)
        XCTAssertTrue(synth.waitForOutput(timeout: 60) { $0.contains("note_on [60, 100]\n") }, synth.standardOutput)
        XCTAssertEqual(
            lines(synth), controllers.map { "/midi/keys/1/cc [\($0), \($0 * 10)]" } + ["/midi/keys/1/note_on [60, 100]"]
        )
        bridge.stop()
    }
}
