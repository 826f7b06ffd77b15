import Foundation
import TestSupport
import XCTest

/// OSCQuery's WebSocket on a running bridge, with a real client (python's `websockets`, through
/// Tests/OSCQueryTests/oscquery-ws.py): a controller played into the input with `amidi` and a
/// controller another client sends over OSC both reach a client that LISTENs, `?VALUE` reads the
/// latter, and a reload that removes an output tells the client PATH_REMOVED.
final class OSCQueryListenALSATests: XCTestCase {
    static let client = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../OSCQueryTests/oscquery-ws.py").standardized.path

    static func config(outputs: [String]) -> String {
        """
        { inputs: [{ name: "keys", from: "Virtual Raw MIDI 0-0" }],
          outputs: [\(outputs.map { "{ name: \"\($0)\" }" }.joined(separator: ", "))],
          routes: [{ destinations: [{ host: "127.0.0.1", port: 9361 }] }],
          osc: { listen: "127.0.0.1:57360", query: { port: 57361 } } }
        """
    }

    func testAListenerSeesMIDIAndOSCValuesAndAReloadRemovingAnOutput() throws {
        try TestEnvironment.requireSequencer()
        let amidi = try TestEnvironment.tool("amidi", package: "alsa-utils")
        let oscsend = try TestEnvironment.tool("oscsend", package: "liblo-tools")
        let curl = try TestEnvironment.tool("curl", package: "curl")
        guard let python = python3(importing: "websockets.sync.client, pythonosc") else {
            throw XCTSkip("python3 -m pip install websockets python-osc")
        }
        let bridge = try RunningBridge(config: Self.config(outputs: ["synth", "lights"]), oscPorts: [9361])
        let listener = BackgroundProcess(
            python,
            [
                Self.client, "ws://127.0.0.1:57361/", "--listen", "/midi/keys/1/cc", "--listen", "/midi/synth/1/cc",
                "--timeout", "60",
            ])
        try listener.start()
        defer { listener.stop() }
        XCTAssertTrue(
            RunningBridge.waitUntil(timeout: 60) { (try? self.webSocket(bridge)["listening"] as? Int) == 2 },
            listener.standardOutput + listener.standardError)

        // MIDI into the input: the listener gets the controller under the input's address.
        XCTAssertEqual(try runProcess(amidi, ["-p", "hw:0,0", "-S", "B0 07 64"]).status, 0)
        XCTAssertTrue(
            listener.waitForOutput(timeout: 60) { $0.contains("osc /midi/keys/1/cc 7 100\n") },
            listener.standardOutput)

        // OSC from another client to an output: the listener gets it, and ?VALUE reads it.
        XCTAssertEqual(try runProcess(oscsend, ["127.0.0.1", "57360", "/midi/synth/1/cc", "ii", "10", "20"]).status, 0)
        XCTAssertTrue(
            listener.waitForOutput(timeout: 60) { $0.contains("osc /midi/synth/1/cc 10 20\n") },
            listener.standardOutput)
        let value = try runProcess(curl, ["-s", "http://127.0.0.1:57361/midi/synth/1/cc?VALUE"])
        XCTAssertEqual(value.standardOutput, #"{"VALUE":[10,20]}"#)

        // A reload without "lights": its containers are removed (the default scheme's and the
        // osmid one's), one frame each.
        XCTAssertTrue(try bridge.reload(Self.config(outputs: ["synth"])))
        XCTAssertTrue(
            listener.waitForOutput(timeout: 60) {
                $0.contains(
                    #"text {"COMMAND":"PATH_REMOVED","DATA":"/lights"}"# + "\n"
                        + #"text {"COMMAND":"PATH_REMOVED","DATA":"/midi/lights"}"#)
            }, listener.standardOutput)
        // The listens on what stays go on.
        XCTAssertEqual(try runProcess(amidi, ["-p", "hw:0,0", "-S", "B0 07 65"]).status, 0)
        XCTAssertTrue(
            listener.waitForOutput(timeout: 60) { $0.contains("osc /midi/keys/1/cc 7 101\n") },
            listener.standardOutput)
        let counters = try webSocket(bridge)
        XCTAssertEqual(counters["open"] as? Int, 1)
        XCTAssertEqual(counters["pathChangesSent"] as? Int, 2, listener.standardOutput)
        XCTAssertGreaterThanOrEqual(counters["valuesSent"] as? Int ?? 0, 3)
        let text = try runProcess(TestEnvironment.aseqoscBinary, ["status", "--control", bridge.controlPath])
        XCTAssertTrue(text.standardOutput.contains("websocket: 1 open of 1, 2 listens"), text.standardOutput)
        let (stopped, _) = bridge.stop()
        XCTAssertEqual(stopped.status, 0, stopped.standardError)
    }

    /// A mapping rule's address, as control surfaces use them: the value of `/fader/7` is
    /// controller 7 of the rule's output scaled back as the rule sends it, whether a client sent
    /// `/fader/7` or the keyboard played controller 7 into an input whose route sends the rules
    /// back; the newest of the two is shown.
    func testAMappedAddressHasTheValueOfEitherSide() throws {
        try TestEnvironment.requireSequencer()
        let amidi = try TestEnvironment.tool("amidi", package: "alsa-utils")
        let oscsend = try TestEnvironment.tool("oscsend", package: "liblo-tools")
        let curl = try TestEnvironment.tool("curl", package: "curl")
        guard let python = python3(importing: "websockets.sync.client, pythonosc") else {
            throw XCTSkip("python3 -m pip install websockets python-osc")
        }
        let config = """
            { inputs: [{ name: "keys", from: "Virtual Raw MIDI 0-0" }],
              outputs: [{ name: "synth" }],
              mappings: { layout: [
                { address: "/fader/{n}", args: "f", output: "synth", type: "control_change",
                  controller: "{n}", value: { from: "{0}", in: [0, 1], out: [0, 127] } } ] },
              routes: [{ destinations: [{ host: "127.0.0.1", port: 9362, mappings: "layout" }] }],
              osc: { listen: "127.0.0.1:57362", query: { port: 57363 }, mappings: "layout" } }
            """
        let bridge = try RunningBridge(config: config, oscPorts: [9362])
        let value = { try runProcess(curl, ["-s", "http://127.0.0.1:57363/fader/7?VALUE"]).standardOutput }
        let access = try runProcess(curl, ["-s", "http://127.0.0.1:57363/fader/7?ACCESS"]).standardOutput
        XCTAssertEqual(access, #"{"ACCESS":3}"#)
        XCTAssertEqual(try value(), "{}", "no value before one arrives")
        let listener = BackgroundProcess(
            python, [Self.client, "ws://127.0.0.1:57363/", "--listen", "/fader/7", "--timeout", "60"])
        try listener.start()
        defer { listener.stop() }
        XCTAssertTrue(
            RunningBridge.waitUntil(timeout: 60) { (try? self.webSocket(bridge)["listening"] as? Int) == 1 },
            listener.standardOutput + listener.standardError)

        // A client sends the fader: controller 7 = 64 on the output, shown as the rule sends it back.
        XCTAssertEqual(try runProcess(oscsend, ["127.0.0.1", "57362", "/fader/7", "f", "0.5"]).status, 0)
        XCTAssertTrue(
            listener.waitForOutput(timeout: 60) { $0.contains("osc /fader/7 0.50393") }, listener.standardOutput)
        let half = try value()
        XCTAssertTrue(half.hasPrefix(#"{"VALUE":[0.50393"#), half)

        // The keyboard turns controller 7: sent back to the destination as /fader/7, and now the value.
        XCTAssertEqual(try runProcess(amidi, ["-p", "hw:0,0", "-S", "B0 07 7F"]).status, 0)
        XCTAssertTrue(bridge.waitForMessages(port: 9362, count: 1), "\(bridge.messages(port: 9362))")
        XCTAssertTrue(
            listener.waitForOutput(timeout: 60) { $0.contains("osc /fader/7 1.0\n") }, listener.standardOutput)
        XCTAssertEqual(try value(), #"{"VALUE":[1]}"#)
        // Another controller is another address: /fader/7 keeps its value.
        XCTAssertEqual(try runProcess(oscsend, ["127.0.0.1", "57362", "/fader/8", "f", "0.25"]).status, 0)
        XCTAssertTrue(
            RunningBridge.waitUntil(timeout: 60) {
                (try? runProcess(curl, ["-s", "http://127.0.0.1:57363/fader/8?VALUE"]).standardOutput)?
                    .hasPrefix(#"{"VALUE":[0.2519"#) == true
            })
        XCTAssertEqual(try value(), #"{"VALUE":[1]}"#)
        let (stopped, _) = bridge.stop()
        XCTAssertEqual(stopped.status, 0, stopped.standardError)
    }

    /// `status --json`'s oscQuery.webSocket.
    func webSocket(_ bridge: RunningBridge) throws -> [String: Any] {
        let json = try runProcess(TestEnvironment.aseqoscBinary, ["status", "--json", "--control", bridge.controlPath])
        let status = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
        return try XCTUnwrap(
            (status["oscQuery"] as? [String: Any])?["webSocket"] as? [String: Any], json.standardOutput)
    }
}
