import ALSASequencer
import Foundation
import Glibc
import MIDI
import TestSupport
import XCTest

/// `aseqosc run` when things go wrong around it: a destination nobody listens on, a reload
/// naming a host that does not resolve, a keyboard unplugged and replugged a hundred times,
/// reloads every 100 ms under load, and kill -9 followed by a restart (against the kernel
/// sequencer in the ALSA VM). Each checks what oscdump saw and what the bridge logged or counts.
final class FaultALSATests: XCTestCase {
    var amidi = ""

    override func setUpWithError() throws {
        try TestEnvironment.requireSequencer()
        amidi = try TestEnvironment.tool("amidi", package: "alsa-utils")
    }

    func play(_ hex: String) throws {
        let result = try runProcess(amidi, ["-p", "hw:0,0", "-S", hex])
        XCTAssertEqual(result.status, 0, result.standardError)
    }

    func status(_ bridge: RunningBridge) throws -> [String: Any] {
        let json = try runProcess(TestEnvironment.aseqoscBinary, ["status", "--json", "--control", bridge.controlPath])
        XCTAssertEqual(json.status, 0, json.standardError)
        return try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
    }

    func destinations(_ status: [String: Any]) -> [String: [String: Any]] {
        let routes = status["routes"] as? [[String: Any]] ?? []
        var found: [String: [String: Any]] = [:]
        for route in routes {
            for destination in route["destinations"] as? [[String: Any]] ?? [] {
                found[destination["address"] as? String ?? "?"] = destination
            }
        }
        return found
    }

    func testClosedDestinationCountsConnectionRefusedAndTheOtherGetsEverything() throws {
        // Nothing listens on 9302: loopback answers each datagram with ICMP port unreachable,
        // which the connected socket reports as ECONNREFUSED on a later send.
        let bridge = try RunningBridge(
            config: """
                { inputs: [{ name: "keys", from: "Virtual Raw MIDI 0-0" }],
                  routes: [{ destinations: [{ host: "127.0.0.1", port: 9301 }, { host: "127.0.0.1", port: 9302 }] }] }
                """, oscPorts: [9301])
        for note in 0..<20 {
            try play(String(format: "90 %02X 64 80 %02X 00", 40 + note, 40 + note))
        }
        XCTAssertTrue(bridge.waitForMessages(port: 9301, count: 40), "\(bridge.messages(port: 9301).count)")
        // Each packet to 9302 is sent or refused in the flush that sends it to 9301 too.
        var status: [String: Any] = [:]
        XCTAssertTrue(
            RunningBridge.waitUntil(timeout: 60) {
                status = (try? self.status(bridge)) ?? [:]
                let closed = self.destinations(status)["127.0.0.1:9302"] ?? [:]
                let refused = (closed["errors"] as? [String: Int])?["connection_refused"] ?? 0
                return (closed["packetsSent"] as? Int ?? 0) + refused == 40
            }, "\(status)")
        let messages = bridge.messages(port: 9301)
        XCTAssertEqual(messages.count, 40)
        XCTAssertEqual(messages.first, "/midi/keys/1/note_on ii 40 100")
        XCTAssertEqual(messages.last, "/midi/keys/1/note_off ii 59 0")

        XCTAssertEqual(status["eventsIn"] as? Int, 40)
        let byAddress = destinations(status)
        let open = try XCTUnwrap(byAddress["127.0.0.1:9301"])
        XCTAssertEqual(open["packetsSent"] as? Int, 40)
        XCTAssertEqual((open["errors"] as? [String: Int]) ?? [:], [:])
        let closed = try XCTUnwrap(byAddress["127.0.0.1:9302"])
        let refused = (closed["errors"] as? [String: Int])?["connection_refused"] ?? 0
        XCTAssertGreaterThan(refused, 0, "\(closed)")
        XCTAssertEqual((closed["packetsSent"] as? Int ?? 0) + refused, 40, "each packet is sent or refused: \(closed)")
        XCTAssertTrue(bridge.bridge.isRunning)
        XCTAssertEqual(bridge.stop().0.status, 0)
    }

    func testUnresolvableDestinationOnReloadIsRefusedAndTheOldConfigKeepsRunning() throws {
        let config =
            #"{ inputs: [{ name: "keys", from: "Virtual Raw MIDI 0-0" }], routes: [{ destinations: [{ host: "127.0.0.1", port: 9311 }] }] }"#
        let bridge = try RunningBridge(config: config, oscPorts: [9311])
        XCTAssertTrue(
            try bridge.reload(
                """
                { inputs: [{ name: "keys", from: "Virtual Raw MIDI 0-0" }, { name: "extra", from: "Virtual Raw MIDI 0-1" }],
                  routes: [{ destinations: [{ host: "no-such-host.invalid", port: 9000 }] }] }
                """), bridge.bridge.standardError)
        XCTAssertTrue(
            bridge.bridge.standardError.contains(
                "ERROR   reload refused, the running config stays: \(bridge.configFile.path): "
                    + "destination no-such-host.invalid:9000: cannot resolve host 'no-such-host.invalid': "),
            bridge.bridge.standardError)

        // Nothing changed: no port 'extra' was made, the old route still sends.
        let probe = try SequencerClient(name: "fault-probe")
        let ports = try probe.ports().filter { $0.clientName == "aseqosc" }.map(\.portName)
        XCTAssertEqual(ports, ["keys", "announcements"])
        try play("90 3C 64 80 3C 00")
        XCTAssertTrue(bridge.waitForMessages(port: 9311, count: 2))
        XCTAssertEqual(
            bridge.messages(port: 9311), ["/midi/keys/1/note_on ii 60 100", "/midi/keys/1/note_off ii 60 0"])
        let binding = try XCTUnwrap((try status(bridge)["bindings"] as? [[String: Any]])?.first)
        XCTAssertEqual(binding["connected"] as? [String], ["16:0 Virtual Raw MIDI 0-0:VirMIDI 0-0"])
        XCTAssertEqual(bridge.stop().0.status, 0)
    }

    func testNamedSourceUnpluggedAndReplugged100TimesIsReboundEveryTimeAndItsNotesEnd() throws {
        let bridge = try RunningBridge(
            config: """
                { inputs: [{ name: "keys", from: "PlugKeys" }], routes: [{ destinations: [{ host: "127.0.0.1", port: 9321 }] }] }
                """, oscPorts: [9321])
        let cycles = 100
        for cycle in 0..<cycles {
            var keys: SequencerClient? = try SequencerClient(name: "PlugKeys")
            let port = try keys!.createPort(name: "out", direction: .output)
            XCTAssertTrue(
                RunningBridge.waitUntil(timeout: 60) {
                    bridge.bridge.standardError.components(separatedBy: "'PlugKeys' bound to").count - 1 > cycle
                }, "cycle \(cycle): not rebound: \(bridge.bridge.standardError.suffix(600))")
            try keys!.send(.noteOn(channel: 0, note: UInt8(20 + cycle), velocity: 90), from: port)
            try keys!.send(.noteOn(channel: 5, note: 100, velocity: 1), from: port)
            XCTAssertTrue(bridge.waitForMessages(port: 9321, count: 4 * cycle + 2), "cycle \(cycle)")
            keys = nil  // unplugged while both notes are held
            XCTAssertTrue(bridge.waitForMessages(port: 9321, count: 4 * cycle + 4), "cycle \(cycle): no note-offs")
        }
        let messages = bridge.messages(port: 9321)
        XCTAssertEqual(messages.count, 4 * cycles)
        for cycle in 0..<cycles {
            XCTAssertEqual(
                Array(messages[(4 * cycle)..<(4 * cycle + 4)]),
                [
                    "/midi/keys/1/note_on ii \(20 + cycle) 90", "/midi/keys/6/note_on ii 100 1",
                    "/midi/keys/1/note_off ii \(20 + cycle) 0", "/midi/keys/6/note_off ii 100 0",
                ], "cycle \(cycle)")
        }
        XCTAssertEqual(bridge.bridge.standardError.components(separatedBy: "'PlugKeys' lost").count - 1, cycles)
        XCTAssertTrue(bridge.bridge.isRunning)
    }

    /// SIGHUP every 100 ms while a load generator plays chords, alternating two configs whose
    /// route differs (so each reload releases the notes the route held). Runs
    /// ASEQOSC_SIGHUP_SECONDS seconds (5 here, 30 in scripts/fault-soak).
    func testSighupEvery100MillisecondsUnderLoadLeavesNoNoteHangingAndExitsZero() throws {
        let seconds = Double(ProcessInfo.processInfo.environment["ASEQOSC_SIGHUP_SECONDS"] ?? "") ?? 5
        func config(_ transpose: Int) -> String {
            """
            { inputs: [{ name: "keys", from: "LoadKeys" }],
              routes: [{ operators: [{ transpose: \(transpose) }], destinations: [{ host: "127.0.0.1", port: 9331 }] }] }
            """
        }
        let bridge = try RunningBridge(config: config(0), oscPorts: [9331])
        let keys = try SequencerClient(name: "LoadKeys")
        let port = try keys.createPort(name: "out", direction: .output)
        var refused = 0
        // The kernel refuses an event (EAGAIN) when the bridge's input queue is full, which a
        // reload's pause in reading could cause under a heavy load; the generator then waits
        // and sends it again, and the test counts how often.
        func send(_ event: MIDIEvent) throws {
            var sent = false
            while !sent {
                do {
                    try keys.send(event, from: port)
                    sent = true
                } catch {
                    guard error.code == -EAGAIN else { throw error }
                    refused += 1
                    usleep(1_000)
                }
            }
        }
        XCTAssertTrue(
            RunningBridge.waitUntil(timeout: 60) { bridge.bridge.standardError.contains("'LoadKeys' bound to") })

        let deadline = Date().addingTimeInterval(seconds)
        var signals = 0
        var played = 0
        var nextSignal = Date()
        while Date() < deadline {
            // Two-note chords, 10 ms apart, each released 8 chords later: 400 messages a second,
            // which oscdump in the VM keeps up with (at several times that, its socket buffer
            // overflows and datagrams are lost before it reads them).
            let chord = UInt8(played % 24)
            for voice: UInt8 in 0..<2 {
                try send(.noteOn(channel: voice, note: 30 + chord + voice * 12, velocity: 80))
            }
            if played >= 8 {
                let old = UInt8((played - 8) % 24)
                for voice: UInt8 in 0..<2 { try send(.noteOff(channel: voice, note: 30 + old + voice * 12)) }
            }
            played += 1
            if Date() >= nextSignal {
                try config(signals % 2 == 0 ? 12 : 0).write(to: bridge.configFile, atomically: true, encoding: .utf8)
                bridge.bridge.signal(SIGHUP)
                signals += 1
                nextSignal = nextSignal.addingTimeInterval(0.1)
            }
            usleep(10_000)
        }
        for back in 1...min(8, played) {
            let old = UInt8((played - back) % 24)
            for voice: UInt8 in 0..<2 { try send(.noteOff(channel: voice, note: 30 + old + voice * 12)) }
        }
        // Let the last reload finish and the pipeline drain before stopping.
        XCTAssertTrue(
            RunningBridge.waitUntil(timeout: 60) {
                let text = bridge.bridge.standardError
                return text.components(separatedBy: "reloading").count
                    == text.components(separatedBy: "NOTICE  reloaded").count
            })
        // The notes sounding at oscdump (channel/note) and the note-ons it saw.
        func tally() -> (hanging: [String], noteOns: Int) {
            var sounding: [String: Int] = [:]
            var noteOns = 0
            for message in bridge.messages(port: 9331) {
                let parts = message.split(separator: " ")
                guard parts.count == 4 else { continue }
                let channel = parts[0].split(separator: "/").dropLast().last.map(String.init) ?? "?"
                let key = "\(channel)/\(parts[2])"
                if parts[0].hasSuffix("/note_on") && parts[3] != "0" {
                    sounding[key, default: 0] = 1
                    noteOns += 1
                } else if parts[0].hasSuffix("/note_off") || parts[0].hasSuffix("/note_on") {
                    sounding[key] = 0
                }
            }
            return (sounding.filter { $0.value > 0 }.keys.sorted(), noteOns)
        }
        // The pipeline drains: every note played ends at oscdump (a lost one would not).
        _ = RunningBridge.waitUntil(timeout: 60) { tally().hanging.isEmpty }
        let status = try status(bridge)
        let overruns = status["inputOverruns"] as? Int
        let (result, _) = bridge.stop()
        XCTAssertEqual(result.status, 0, String(result.standardError.suffix(2000)))
        XCTAssertFalse(result.standardError.contains("ERROR"), String(result.standardError.suffix(2000)))
        // What the stop sent included.
        _ = RunningBridge.waitUntil(timeout: 60) { tally().hanging.isEmpty }
        let (hanging, noteOns) = tally()
        XCTAssertEqual(hanging, [], "notes left sounding at oscdump")
        XCTAssertGreaterThan(noteOns, Int(seconds * 50), "the load got through")
        let reloads = bridge.bridge.standardError.components(separatedBy: "NOTICE  reloaded").count - 1
        XCTAssertGreaterThanOrEqual(reloads, Int(seconds * 3), "SIGHUPs handled (\(signals) sent)")
        print(
            "sighup soak: \(seconds) s, \(signals) SIGHUPs sent, \(reloads) reloads, \(noteOns) note-ons at oscdump, "
                + "none hanging; \(refused) sends refused by the kernel and repeated, input overruns \(overruns ?? -1)")
    }

    func testKilledWithSigkillAndRestartedComesBackWithTheSamePortNamesAndRebinds() throws {
        let config = """
            { inputs: [{ name: "keys", from: "Virtual Raw MIDI 0-0" }, { name: "pads", from: "Virtual Raw MIDI 0-1" }],
              routes: [{ destinations: [{ host: "127.0.0.1", port: 9341 }] }] }
            """
        let first = try RunningBridge(config: config, oscPorts: [9341])
        try play("90 3C 64")
        XCTAssertTrue(first.waitForMessages(port: 9341, count: 1))
        let probe = try SequencerClient(name: "fault-probe")
        let before = try probe.ports().filter { $0.clientName == "aseqosc" }.map(\.portName)
        XCTAssertEqual(before, ["keys", "pads", "announcements"])

        first.bridge.signal(SIGKILL)
        XCTAssertTrue(RunningBridge.waitUntil(timeout: 60) { !first.bridge.isRunning })
        XCTAssertTrue(
            RunningBridge.waitUntil(timeout: 60) {
                (try? probe.ports().contains { $0.clientName == "aseqosc" }) == false
            })

        // The same config and the same control socket path, as systemd's restart would use.
        let second = BackgroundProcess(
            TestEnvironment.aseqoscBinary, ["run", "--config", first.configFile.path, "--control", first.controlPath])
        try second.start()
        defer { second.stop() }
        XCTAssertTrue(
            RunningBridge.waitUntil(timeout: 60) { second.standardError.contains("NOTICE  running") },
            second.standardError)
        XCTAssertTrue(second.standardError.contains("NOTICE  running: 2/2 bindings"), second.standardError)
        let after = try probe.ports().filter { $0.clientName == "aseqosc" }.map(\.portName)
        XCTAssertEqual(after, ["keys", "pads", "announcements"])

        try play("80 3C 00 90 40 64")
        XCTAssertTrue(first.waitForMessages(port: 9341, count: 3))
        XCTAssertEqual(
            first.messages(port: 9341),
            ["/midi/keys/1/note_on ii 60 100", "/midi/keys/1/note_off ii 60 0", "/midi/keys/1/note_on ii 64 100"])
        let status = try runProcess(TestEnvironment.aseqoscBinary, ["status", "--control", first.controlPath])
        XCTAssertEqual(status.status, 0, status.standardError)
        XCTAssertTrue(
            status.standardOutput.contains("keys <- 'Virtual Raw MIDI 0-0': 16:0 Virtual Raw MIDI 0-0:VirMIDI 0-0"),
            status.standardOutput)
        XCTAssertTrue(
            status.standardOutput.contains("pads <- 'Virtual Raw MIDI 0-1': 17:0 Virtual Raw MIDI 0-1:VirMIDI 0-1"),
            status.standardOutput)
        XCTAssertEqual(second.stop(grace: 5).status, 0)
    }
}
