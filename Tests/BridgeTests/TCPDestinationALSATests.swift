import Foundation
import Glibc
import TestSupport
import XCTest

/// MIDI -> OSC over TCP (`protocol: "tcp"`) against real TCP OSC servers: python-osc in both of
/// its modes (OSC 1.0 length prefix, OSC 1.1 SLIP) and liblo's `oscdump`; a server killed with
/// a note held and started again gets that note's note-off first, and no note-on played too
/// long before the connection came back.
final class TCPDestinationALSATests: XCTestCase {
    var amidi = ""
    var python = ""

    override func setUpWithError() throws {
        try TestEnvironment.requireSequencer()
        amidi = try TestEnvironment.tool("amidi", package: "alsa-utils")
        python = try TimeTaggedOutputALSATests.pythonWithPythonOSC()
    }

    /// A python-osc TCP server on `port` in `mode` ("1.0" or "1.1") that prints each message as
    /// `ADDRESS [ARGS]`, after `listening`.
    func pythonServer(port: Int, mode: String) throws -> BackgroundProcess {
        try Self.pythonServer(python, port: port, mode: mode)
    }

    /// ``pythonServer(port:mode:)`` run by `python`, for other tests.
    static func pythonServer(_ python: String, port: Int, mode: String) throws -> BackgroundProcess {
        let script = """
            import sys
            from pythonosc.dispatcher import Dispatcher
            from pythonosc.osc_tcp_server import ThreadingOSCTCPServer
            dispatcher = Dispatcher()
            dispatcher.set_default_handler(lambda address, *args: print(address, list(args), flush=True))
            # The port again at once after a kill: the old connection may sit in TIME_WAIT.
            ThreadingOSCTCPServer.allow_reuse_address = True
            server = ThreadingOSCTCPServer(("127.0.0.1", \(port)), dispatcher, mode="\(mode)")
            print("listening", flush=True)
            server.serve_forever()
            """
        let server = BackgroundProcess(python, ["-c", script])
        try server.start()
        XCTAssertTrue(server.waitForOutput(timeout: 60) { $0.contains("listening") }, server.standardError)
        return server
    }

    func lines(_ process: BackgroundProcess) -> [String] {
        process.standardOutput.split(separator: "\n").map(String.init).filter { $0 != "listening" }
    }

    func statusJSON(_ bridge: RunningBridge) throws -> [[String: Any]] {
        let json = try runProcess(TestEnvironment.aseqoscBinary, ["status", "--json", "--control", bridge.controlPath])
        XCTAssertEqual(json.status, 0, json.standardError)
        let status = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
        let routes = try XCTUnwrap(status["routes"] as? [[String: Any]])
        return try XCTUnwrap(routes.first?["destinations"] as? [[String: Any]])
    }

    func tcpStatus(_ bridge: RunningBridge, _ index: Int) throws -> [String: Any] {
        try XCTUnwrap(try statusJSON(bridge)[index]["tcp"] as? [String: Any])
    }

    func testPythonOSCReadsEveryEventInBothFramings() throws {
        let length = try pythonServer(port: 9331, mode: "1.0")
        let slip = try pythonServer(port: 9332, mode: "1.1")
        defer {
            length.stop()
            slip.stop()
        }
        let bridge = try RunningBridge(
            config: """
                { inputs: [{ name: "keys", from: "Virtual Raw MIDI 0-0" }],
                  routes: [{ destinations: [
                    { host: "127.0.0.1", port: 9331, protocol: "tcp", framing: "length" },
                    { host: "127.0.0.1", port: 9332, protocol: "tcp", framing: "slip" } ] }] }
                """, oscPorts: [])
        XCTAssertTrue(
            RunningBridge.waitUntil(timeout: 60) {
                (try? self.tcpStatus(bridge, 0)["state"] as? String) == "connected"
                    && (try? self.tcpStatus(bridge, 1)["state"] as? String) == "connected"
            }, "\(String(describing: try? statusJSON(bridge)))")
        // Note on, note off, CC 7, pitch bend on channel 2, and a SysEx whose bytes include
        // 0xC0 and 0xDB, which SLIP escapes.
        XCTAssertEqual(
            try runProcess(amidi, ["-p", "hw:0,0", "-S", "90 3C 64 80 3C 00 B0 07 64 E1 00 20 F0 7D 40 5B 01 F7"])
                .status,
            0)
        let expected = [
            "/midi/keys/1/note_on [60, 100]", "/midi/keys/1/note_off [60, 0]", "/midi/keys/1/cc [7, 100]",
            "/midi/keys/2/pitch_bend [-4096]",
        ]
        for server in [length, slip] {
            XCTAssertTrue(
                server.waitForOutput(timeout: 60) { $0.contains("/sysex") && $0.hasSuffix("\n") },
                server.standardOutput + server.standardError)
            XCTAssertEqual(Array(lines(server).prefix(4)), expected, server.standardOutput)
            XCTAssertEqual(lines(server).count, 5, server.standardOutput)
        }
        let status = try runProcess(TestEnvironment.aseqoscBinary, ["status", "--control", bridge.controlPath])
        XCTAssertTrue(
            status.standardOutput.contains(
                "-> tcp 127.0.0.1:9332 (default, slip framing): 5 packets"),
            status.standardOutput)
        XCTAssertTrue(
            status.standardOutput.contains("connected, 0 reconnects, 0 queued, no drops"), status.standardOutput)
        // Each link's thread runs real-time like the event threads (as root, in the VM).
        if getuid() == 0 {
            let links = try RealtimeALSATests.threads(of: bridge.bridge.pid).filter { $0.name == "aseqosc-tcp" }
            XCTAssertEqual(links.map { "\($0.policy)/\($0.priority)" }, ["1/4", "1/4"])
            XCTAssertTrue(status.standardOutput.contains(", tcp fifo/4; memory locked"), status.standardOutput)
        }
    }

    func testOscdumpReadsTheLengthPrefixedStream() throws {
        let oscdump = try TestEnvironment.tool("oscdump", package: "liblo-tools")
        let dump = BackgroundProcess(oscdump, ["-L", "osc.tcp://:9333"])
        try dump.start()
        defer { dump.stop() }
        XCTAssertTrue(
            RunningBridge.waitUntil(timeout: 60) { Self.tcpListening(9333) }, "oscdump did not listen")
        let bridge = try RunningBridge(
            config: """
                { inputs: [{ name: "keys", from: "Virtual Raw MIDI 0-0" }],
                  routes: [{ destinations: [{ host: "127.0.0.1", port: 9333, protocol: "tcp" }] }] }
                """, oscPorts: [])
        XCTAssertTrue(
            RunningBridge.waitUntil(timeout: 60) {
                (try? self.tcpStatus(bridge, 0)["state"] as? String) == "connected"
            })
        // A note released, then one still held when the bridge stops: its note-off is the
        // bridge's last word, and goes out over the connection before it closes.
        XCTAssertEqual(try runProcess(amidi, ["-p", "hw:0,0", "-S", "90 3C 64 80 3C 00 90 3E 64"]).status, 0)
        XCTAssertTrue(dump.waitForOutput(timeout: 60) { $0.contains("note_on ii 62 100\n") }, dump.standardOutput)
        let (result, _) = bridge.stop()
        XCTAssertEqual(result.status, 0, result.standardError)
        XCTAssertTrue(dump.waitForOutput(timeout: 60) { $0.contains("note_off ii 62 0\n") }, dump.standardOutput)
        let messages = dump.standardOutput.split(separator: "\n").map {
            $0.split(separator: " ", maxSplits: 1).last.map(String.init) ?? ""
        }
        XCTAssertEqual(
            messages,
            [
                "/midi/keys/1/note_on ii 60 100", "/midi/keys/1/note_off ii 60 0", "/midi/keys/1/note_on ii 62 100",
                "/midi/keys/1/note_off ii 62 0",
            ])
    }

    func testPureDataReadsTheSLIPStreamThroughSlipdec() throws {
        let pd = try TestEnvironment.tool("pd", package: "puredata-core")
        let mrpeach = "/usr/lib/pd/extra/mrpeach"
        guard access(mrpeach + "/slipdec.pd_linux", R_OK) == 0 else {
            throw XCTSkip("[slipdec] is missing: apt-get install pd-mrpeach")
        }
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let patch = repository.appendingPathComponent("Config/examples/receivers/puredata-tcp.pd").path
        let puredata = BackgroundProcess(
            pd, ["-nogui", "-noaudio", "-nomidi", "-stderr", "-path", mrpeach, "-open", patch])
        try puredata.start()
        defer { puredata.stop() }
        XCTAssertTrue(
            RunningBridge.waitUntil(timeout: 60) { Self.tcpListening(57123) },
            "Pd did not listen: \(puredata.standardError)")
        let bridge = try RunningBridge(
            config: """
                { inputs: [{ name: "in", from: "Virtual Raw MIDI 0-0" }],
                  routes: [{ destinations: [{ host: "127.0.0.1", port: 57123, protocol: "tcp", framing: "slip" }] }] }
                """, oscPorts: [])
        XCTAssertTrue(
            RunningBridge.waitUntil(timeout: 60) {
                (try? self.tcpStatus(bridge, 0)["state"] as? String) == "connected"
            })
        XCTAssertEqual(try runProcess(amidi, ["-p", "hw:0,0", "-S", "90 3C 64 80 3C 00 B0 07 64"]).status, 0)
        XCTAssertTrue(puredata.waitForOutput(timeout: 60) { _ in puredata.standardError.contains("cc 7 100") })
        let printed = puredata.standardError.split(separator: "\n").filter { $0.hasPrefix("osc: ") }
        XCTAssertEqual(
            printed,
            [
                "osc: list midi in 1 note_on 60 100", "osc: list midi in 1 note_off 60 0",
                "osc: list midi in 1 cc 7 100",
            ],
            puredata.standardError)
    }

    /// Whether something listens on TCP `port` (/proc/net/tcp*, state 0A).
    static func tcpListening(_ port: Int) -> Bool {
        let hex = String(format: ":%04X ", port)
        for file in ["/proc/net/tcp", "/proc/net/tcp6"] {
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { continue }
            for line in text.split(separator: "\n") where line.contains(hex) {
                let fields = line.split(separator: " ")
                if fields.count > 3, fields[1].hasSuffix(hex.dropLast()), fields[3] == "0A" { return true }
            }
        }
        return false
    }

    func testAServerRestartedWithANoteHeldGetsItsNoteOffFirstAndNoLateNoteOn() throws {
        var server = try pythonServer(port: 9334, mode: "1.0")
        let bridge = try RunningBridge(
            config: """
                { inputs: [{ name: "keys", from: "Virtual Raw MIDI 0-0" }],
                  routes: [{ destinations: [
                    { host: "127.0.0.1", port: 9334, protocol: "tcp", noteOnTimeout: 4000 } ] }] }
                """, oscPorts: [])
        XCTAssertTrue(
            RunningBridge.waitUntil(timeout: 60) {
                (try? self.tcpStatus(bridge, 0)["state"] as? String) == "connected"
            })
        XCTAssertEqual(try runProcess(amidi, ["-p", "hw:0,0", "-S", "90 3C 64"]).status, 0)
        XCTAssertTrue(server.waitForOutput(timeout: 60) { $0.contains("note_on") }, server.standardOutput)

        // The synth's host goes away with note 60 sounding; the bridge notices the close.
        server.signal(SIGKILL)
        _ = server.stop(grace: 5)
        XCTAssertTrue(
            RunningBridge.waitUntil(timeout: 60) {
                (try? self.tcpStatus(bridge, 0)["state"] as? String) != "connected"
            }, "\(String(describing: try? tcpStatus(bridge, 0)))")
        // Played while it is down: the release of 60 and a note-on that is too late by the time
        // the server is back; then, once it listens, a fresh note-on and a controller, sent
        // within the link's 2 s backoff, well inside the 4 s timeout.
        XCTAssertEqual(try runProcess(amidi, ["-p", "hw:0,0", "-S", "80 3C 00 90 3E 64"]).status, 0)
        XCTAssertTrue(
            RunningBridge.waitUntil(timeout: 60) { (try? self.tcpStatus(bridge, 0)["queued"] as? Int) == 2 },
            "\(String(describing: try? tcpStatus(bridge, 0)))")
        let late = Date()
        XCTAssertTrue(RunningBridge.waitUntil(timeout: 60) { Date().timeIntervalSince(late) > 4.5 })
        server = try pythonServer(port: 9334, mode: "1.0")
        defer { server.stop() }
        XCTAssertEqual(try runProcess(amidi, ["-p", "hw:0,0", "-S", "90 40 64 B0 01 40"]).status, 0)
        XCTAssertTrue(
            server.waitForOutput(timeout: 60) { $0.contains("/cc [1, 64]\n") },
            server.standardOutput + server.standardError)
        XCTAssertEqual(
            lines(server),
            ["/midi/keys/1/note_off [60, 0]", "/midi/keys/1/note_on [64, 100]", "/midi/keys/1/cc [1, 64]"])
        let tcp = try tcpStatus(bridge, 0)
        XCTAssertEqual(tcp["reconnects"] as? Int, 1, "\(tcp)")
        XCTAssertEqual(tcp["lateNoteOns"] as? Int, 1, "\(tcp)")
        XCTAssertEqual(tcp["state"] as? String, "connected", "\(tcp)")
        XCTAssertEqual(tcp["queued"] as? Int, 0, "\(tcp)")
    }

    func testAReloadKeepsAnUnchangedConnectionAndAChangedRouteEndsItsNotesBeforeClosing() throws {
        let server = try pythonServer(port: 9337, mode: "1.0")
        defer { server.stop() }
        func config(_ operators: String) -> String {
            """
            { inputs: [{ name: "keys", from: "Virtual Raw MIDI 0-0" }],
              routes: [{ operators: [\(operators)],
                         destinations: [{ host: "127.0.0.1", port: 9337, protocol: "tcp" }] }] }
            """
        }
        let bridge = try RunningBridge(config: config(""), oscPorts: [])
        XCTAssertTrue(
            RunningBridge.waitUntil(timeout: 60) {
                (try? self.tcpStatus(bridge, 0)["state"] as? String) == "connected"
            })
        XCTAssertEqual(try runProcess(amidi, ["-p", "hw:0,0", "-S", "90 3C 64"]).status, 0)
        XCTAssertTrue(server.waitForOutput(timeout: 60) { $0.contains("note_on [60, 100]\n") }, server.standardOutput)

        // The same config again: the route, its runtime and its connection stay.
        XCTAssertTrue(try bridge.reload(config("")), bridge.bridge.standardError)
        XCTAssertEqual(try tcpStatus(bridge, 0)["state"] as? String, "connected")
        XCTAssertEqual(try tcpStatus(bridge, 0)["reconnects"] as? Int, 0)

        // A changed route: its held note is ended over the old connection before it closes,
        // and the new route's connection carries what comes next.
        XCTAssertTrue(try bridge.reload(config("{ transpose: 12 }")), bridge.bridge.standardError)
        XCTAssertTrue(
            server.waitForOutput(timeout: 60) { $0.contains("note_off [60, 0]\n") },
            server.standardOutput + bridge.bridge.standardError)
        XCTAssertTrue(
            RunningBridge.waitUntil(timeout: 60) {
                (try? self.tcpStatus(bridge, 0)["state"] as? String) == "connected"
            })
        XCTAssertEqual(try runProcess(amidi, ["-p", "hw:0,0", "-S", "90 3E 64 80 3E 00"]).status, 0)
        XCTAssertTrue(server.waitForOutput(timeout: 60) { $0.contains("note_off [74, 0]\n") }, server.standardOutput)
        XCTAssertEqual(
            lines(server),
            [
                "/midi/keys/1/note_on [60, 100]", "/midi/keys/1/note_off [60, 0]", "/midi/keys/1/note_on [74, 100]",
                "/midi/keys/1/note_off [74, 0]",
            ])
    }

    func testADestinationThatRefusesIsRetriedWithoutHoldingUpTheOthers() throws {
        // Nothing listens on 9335; the UDP destination beside it gets every event at once.
        let bridge = try RunningBridge(
            config: """
                { inputs: [{ name: "keys", from: "Virtual Raw MIDI 0-0" }],
                  routes: [{ destinations: [
                    { host: "127.0.0.1", port: 9335, protocol: "tcp" },
                    { host: "127.0.0.1", port: 9336 } ] }] }
                """, oscPorts: [9336])
        XCTAssertEqual(try runProcess(amidi, ["-p", "hw:0,0", "-S", "90 3C 64 80 3C 00"]).status, 0)
        XCTAssertTrue(bridge.waitForMessages(port: 9336, count: 2))
        XCTAssertTrue(
            RunningBridge.waitUntil(timeout: 60) {
                (try? self.tcpStatus(bridge, 0)["lastError"] as? String) == "Connection refused"
            }, "\(String(describing: try? tcpStatus(bridge, 0)))")
        let status = try runProcess(TestEnvironment.aseqoscBinary, ["status", "--control", bridge.controlPath])
        XCTAssertTrue(
            status.standardOutput.contains("-> tcp 127.0.0.1:9335 (default, length framing): 0 packets, 0 bytes, "),
            status.standardOutput)
        XCTAssertTrue(
            status.standardOutput.contains("(Connection refused), 0 reconnects, 2 queued"), status.standardOutput)
        // A clean stop with a link still trying.
        let (result, seconds) = bridge.stop()
        XCTAssertEqual(result.status, 0, result.standardError)
        XCTAssertLessThan(seconds, 3)
    }
}
