import Foundation
import Platform
import TestSupport
import XCTest

/// The status page's monitor and actions on a running bridge, spoken to as a page would:
/// python's `websockets` for the monitor, curl for the actions. A note played with `amidi`
/// shows in the monitor as it came in and as it went out; a panic ends the note a route holds
/// (its note-off at the receiver) and sends every output All Notes Off (`aseqdump`); sync
/// replays a controller; reload applies the file again; refusals are counted.
final class StatusPageALSATests: XCTestCase {
    static func config(route: String) -> String {
        """
        { inputs: [{ name: "keys", from: "Virtual Raw MIDI 0-0" }],
          outputs: [{ name: "synth", to: "aseqdump" }],
          routes: [{ name: "\(route)", destinations: [{ host: "127.0.0.1", port: 9371, sync: ["request"] }] }],
          osc: { listen: "127.0.0.1:57370", query: { port: 57371, actions: ["reload", "panic", "sync"] } } }
        """
    }

    func testTheMonitorShowsANoteAndTheActionsDoWhatTheySay() throws {
        try TestEnvironment.requireSequencer()
        let amidi = try TestEnvironment.tool("amidi", package: "alsa-utils")
        let aseqdump = try TestEnvironment.tool("aseqdump", package: "alsa-utils")
        let stdbuf = try TestEnvironment.tool("stdbuf", package: "coreutils")
        let curl = try TestEnvironment.tool("curl", package: "curl")
        guard let python = python3(importing: "websockets.sync.client, pythonosc") else {
            throw XCTSkip("python3 -m pip install websockets python-osc")
        }
        let dump = BackgroundProcess(stdbuf, ["-oL", aseqdump])
        try dump.start()
        defer { dump.stop() }
        XCTAssertTrue(dump.waitForOutput(timeout: 60) { $0.contains("Waiting") }, dump.standardError)
        let bridge = try RunningBridge(config: Self.config(route: "keys to synth"), oscPorts: [9371])
        func post(_ action: String) throws -> String {
            try runProcess(curl, ["-s", "-X", "POST", "http://127.0.0.1:57371/aseqosc/action/\(action)"]).standardOutput
        }

        // The monitor: a page asks for it over the WebSocket and sees the note in and out.
        let page = BackgroundProcess(
            python,
            [
                OSCQueryListenALSATests.client, "ws://127.0.0.1:57371/", "--command", "MONITOR", "--timeout", "60",
            ])
        try page.start()
        defer { page.stop() }
        XCTAssertTrue(
            RunningBridge.waitUntil(timeout: 60) {
                (try? self.pageCounters(bridge)["watching"] as? Int) == 1
            }, page.standardOutput + page.standardError)
        let played = MonotonicClock.now() / 1000
        XCTAssertEqual(try runProcess(amidi, ["-p", "hw:0,0", "-S", "B0 07 30 90 3C 64"]).status, 0)
        let noteIn = "in keys: ch 1  note-on  C4 (60)  vel 100"
        let noteOut = "out keys to synth -> 127.0.0.1:9371: /midi/keys/1/note_on ,ii i:60 i:100"
        XCTAssertTrue(
            page.waitForOutput(timeout: 60) { $0.contains(noteIn) && $0.contains(noteOut) }, page.standardOutput)
        let seen = MonotonicClock.now() / 1000
        XCTAssertTrue(bridge.waitForMessages(port: 9371, count: 2), "\(bridge.messages(port: 9371))")
        // Each line with when the bridge read the note, the frame with when it was sent, on the
        // clock this test reads too (CLOCK_MONOTONIC, microseconds): after the note was played,
        // in order, before the page had it.
        for line in [noteIn, noteOut] {
            let frame = try XCTUnwrap(
                page.standardOutput.split(separator: "\n").first { $0.contains(line) }
                    .flatMap { try? JSONSerialization.jsonObject(with: Data($0.dropFirst("text ".count).utf8)) }
                    as? [String: Any], page.standardOutput)
            let events = frame["EVENTS"] as? [String] ?? []
            let reads = frame["READ"] as? [Any] ?? []
            let index = try XCTUnwrap(events.firstIndex(of: line))
            let read = try XCTUnwrap(
                reads.count == events.count ? (reads[index] as? NSNumber)?.uint64Value : nil, "\(frame)")
            let sent = try XCTUnwrap((frame["SENT"] as? NSNumber)?.uint64Value, "\(frame)")
            XCTAssertTrue(played <= read && read <= sent && sent <= seen, "played \(played), \(frame), seen \(seen)")
        }

        // Panic: the route's held note ends at the receiver, and the output gets All Notes Off.
        XCTAssertEqual(
            try post("panic"),
            "done: panic: every output sent sustain off and All Notes Off, every route's held notes ended\n")
        XCTAssertTrue(
            RunningBridge.waitUntil(timeout: 60) {
                bridge.messages(port: 9371).contains("/midi/keys/1/note_off ii 60 0")
            }, "\(bridge.messages(port: 9371))")
        XCTAssertTrue(
            dump.waitForOutput(timeout: 60) { $0.contains("15, controller 123, value 0") },
            dump.standardOutput)
        let allNotesOff = dump.standardOutput.split(separator: "\n").filter { $0.contains("controller 123, value 0") }
        XCTAssertEqual(allNotesOff.count, 16, dump.standardOutput)

        // Sync: the destination gets its controller again.
        let before = bridge.messages(port: 9371).filter { $0 == "/midi/keys/1/cc ii 7 48" }.count
        XCTAssertEqual(try post("sync"), "done: sync: 1 destination and output replaying\n")
        XCTAssertTrue(
            RunningBridge.waitUntil(timeout: 60) {
                bridge.messages(port: 9371).filter { $0 == "/midi/keys/1/cc ii 7 48" }.count == before + 1
            }, "\(bridge.messages(port: 9371))")

        // Reload: the file is read again.
        try Self.config(route: "renamed").write(to: bridge.configFile, atomically: true, encoding: .utf8)
        XCTAssertTrue(try post("reload").hasPrefix("done: reload: "))
        let routes = try XCTUnwrap(try status(bridge)["routes"] as? [[String: Any]])
        XCTAssertEqual(routes.map { $0["name"] as? String }, ["renamed"])

        // A GET is refused and counted; so is a page of another site.
        let get = try runProcess(
            curl, ["-s", "-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:57371/aseqosc/action/panic"])
        XCTAssertEqual(get.standardOutput, "405")
        let other = try runProcess(
            curl,
            [
                "-s", "-X", "POST", "-H", "Origin: http://elsewhere.example",
                "http://127.0.0.1:57371/aseqosc/action/panic",
            ])
        XCTAssertTrue(other.standardOutput.hasPrefix("refused: the request came from another site's page"))
        let counters = try pageCounters(bridge)
        XCTAssertEqual(counters["refusedGet"] as? Int, 1)
        XCTAssertEqual(counters["refusedOtherSite"] as? Int, 1)
        XCTAssertEqual(counters["actionsDone"] as? Int, 3)
        let (stopped, _) = bridge.stop()
        XCTAssertEqual(stopped.status, 0, stopped.standardError)
    }

    func status(_ bridge: RunningBridge) throws -> [String: Any] {
        let json = try runProcess(TestEnvironment.aseqoscBinary, ["status", "--json", "--control", bridge.controlPath])
        return try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
    }

    /// `status --json`'s oscQuery.page.
    func pageCounters(_ bridge: RunningBridge) throws -> [String: Any] {
        try XCTUnwrap((try status(bridge)["oscQuery"] as? [String: Any])?["page"] as? [String: Any])
    }
}
