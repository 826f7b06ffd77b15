import ALSASequencer
import Foundation
import MIDI
import TestSupport
import XCTest

/// Raw MIDI bytes written to a virmidi card (`amidi`) come out of `aseqosc monitor` as the
/// right events; run against the kernel sequencer in the ALSA VM by scripts/test.
final class MonitorALSATests: XCTestCase {
    var amidi = ""

    override func setUpWithError() throws {
        try TestEnvironment.requireSequencer()
        amidi = try TestEnvironment.tool("amidi", package: "alsa-utils")
    }

    /// Starts `aseqosc monitor --json` on virmidi 0-0 and waits until it is bound.
    func startMonitor(_ specs: [String] = ["Virtual Raw MIDI 0-0"]) throws -> BackgroundProcess {
        let monitor = BackgroundProcess(TestEnvironment.aseqoscBinary, ["monitor", "--json"] + specs)
        try monitor.start()
        let bound = waitUntil(timeout: 60) { monitor.standardError.contains("bound to") }
        XCTAssertTrue(bound, "monitor never bound: \(monitor.standardError)")
        return monitor
    }

    /// Writes hex bytes to virmidi card 0 device 0 with amidi, then collects `count` JSON lines.
    func send(_ hex: String, expecting count: Int, from monitor: BackgroundProcess) throws -> [[String: Any]] {
        let result = try runProcess(amidi, ["-p", "hw:0,0", "-S", hex])
        XCTAssertEqual(result.status, 0, result.standardError)
        XCTAssertTrue(
            monitor.waitForOutput(timeout: 60) { $0.split(separator: "\n").count >= count },
            "fewer than \(count) lines: \(monitor.standardOutput)")
        return monitor.standardOutput.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    /// The fields that identify an event, without the source and time.
    func summary(_ line: [String: Any]) -> String {
        line.filter { $0.key != "time" && $0.key != "source" }
            .sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
    }

    func testEveryMessageTypeArrivesAsTheRightEvent() throws {
        let monitor = try startMonitor()
        defer { monitor.stop() }
        let cases: [(String, String)] = [
            ("90 3C 64", "channel=1 note=60 type=note_on velocity=100"),
            ("81 3C 40", "channel=2 note=60 type=note_off velocity=64"),
            ("A2 40 21", "channel=3 note=64 pressure=33 type=poly_pressure"),
            ("B3 07 64", "channel=4 controller=7 type=control_change value=100"),
            ("C4 05", "channel=5 program=5 type=program_change"),
            ("D5 30", "channel=6 pressure=48 type=channel_pressure"),
            ("E6 00 40", "channel=7 type=pitch_bend value=0"),
            ("E6 7F 7F", "channel=7 type=pitch_bend value=8191"),
            ("E6 00 00", "channel=7 type=pitch_bend value=-8192"),
            ("F1 23", "type=mtc_quarter_frame value=35"),
            ("F2 10 02", "type=song_position value=272"),
            ("F3 07", "type=song_select value=7"),
            ("F6", "type=tune_request"),
            ("F8", "type=clock"),
            ("FA", "type=start"),
            ("FB", "type=continue"),
            ("FC", "type=stop"),
            ("FF", "type=reset"),
        ]
        let hex = cases.map(\.0).joined(separator: " ")
        let lines = try send(hex, expecting: cases.count, from: monitor)
        XCTAssertEqual(lines.map(summary), cases.map(\.1))
        XCTAssertTrue(lines.allSatisfy { $0["source"] as? String == "16:0" }, "\(lines)")
    }

    func testRunningStatusAndInterleavedRealtimeBytes() throws {
        let monitor = try startMonitor()
        defer { monitor.stop() }
        // Note-on with running status, and a clock byte inside the second message.
        let lines = try send("90 3C 64 3E F8 65 40 00", expecting: 4, from: monitor)
        XCTAssertEqual(
            lines.map(summary),
            [
                "channel=1 note=60 type=note_on velocity=100", "type=clock",
                "channel=1 note=62 type=note_on velocity=101", "channel=1 note=64 type=note_on velocity=0",
            ])
    }

    func testLongSysExArrivesWholeAndIntact() throws {
        let monitor = try startMonitor()
        defer { monitor.stop() }
        let payload = (0..<1500).map { UInt8(($0 * 7 + 3) % 128) }
        let message = [0xF0] + payload + [0xF7]
        let hex = message.map { String(format: "%02X", $0) }.joined(separator: " ")
        let lines = try send(hex + " 90 3C 64", expecting: 2, from: monitor)
        XCTAssertEqual(lines.count, 2)
        XCTAssertEqual(lines.first?["type"] as? String, "sysex")
        XCTAssertEqual(lines.first?["data"] as? String, hex)
        XCTAssertEqual(lines.last.map(summary), "channel=1 note=60 type=note_on velocity=100")
    }

    func testTextOutputLooksLikeAseqdump() throws {
        let monitor = BackgroundProcess(TestEnvironment.aseqoscBinary, ["monitor", "16:0"])
        try monitor.start()
        defer { monitor.stop() }
        XCTAssertTrue(waitUntil(timeout: 60) { monitor.standardError.contains("bound to") }, monitor.standardError)
        XCTAssertEqual(try runProcess(amidi, ["-p", "hw:0,0", "-S", "91 3C 64 B0 07 64"]).status, 0)
        XCTAssertTrue(monitor.waitForOutput { $0.split(separator: "\n").count >= 2 }, monitor.standardOutput)
        XCTAssertEqual(
            monitor.standardOutput,
            "16:0   ch 2  note-on  C4 (60)  vel 100\n16:0   ch 1  control-change  7  100\n")
    }

    func testSigtermEndsTheMonitorWithStatusZero() throws {
        let monitor = try startMonitor()
        let result = monitor.stop()
        XCTAssertFalse(result.timedOut)
        XCTAssertEqual(result.status, 0, result.standardError)
    }

    func testUnknownPortIsWaitedForAndReported() throws {
        let monitor = BackgroundProcess(TestEnvironment.aseqoscBinary, ["monitor", "NoSuchKeyboard"])
        try monitor.start()
        defer { monitor.stop() }
        XCTAssertTrue(
            waitUntil(timeout: 60) { monitor.standardError.contains("'NoSuchKeyboard' is waiting") },
            monitor.standardError)
        XCTAssertTrue(monitor.isRunning)
    }
}
