import ALSASequencer
import Foundation
import MIDI
import TestSupport
import XCTest

/// MIDI played into a virmidi card comes out of `aseqosc run` as OSC, exactly as `oscdump`
/// sees it, for each address scheme; held notes are released on shutdown and on unplug.
final class MIDIToOSCALSATests: XCTestCase {
    var amidi = ""

    override func setUpWithError() throws {
        try TestEnvironment.requireSequencer()
        amidi = try TestEnvironment.tool("amidi", package: "alsa-utils")
    }

    func play(_ hex: String) throws {
        let result = try runProcess(amidi, ["-p", "hw:0,0", "-S", hex])
        XCTAssertEqual(result.status, 0, result.standardError)
    }

    static let phrase =
        "90 3C 64 B0 07 40 E0 00 40 E1 7F 7F C2 05 D3 30 A4 3C 21 80 3C 00 90 3E 00 F0 7E 7F 06 01 F7 F8 FA FC"

    func testPhraseReachesEveryDestinationInItsScheme() throws {
        let bridge = try RunningBridge(
            config: """
                { inputs: [{ name: "keys", from: "Virtual Raw MIDI 0-0" }],
                  routes: [{ destinations: [
                    { host: "127.0.0.1", port: 9101 },
                    { host: "127.0.0.1", port: 9102, scheme: "osmid" },
                    { host: "127.0.0.1", port: 9103, scheme: "touchosc" } ] }] }
                """, oscPorts: [9101, 9102, 9103])
        try play(Self.phrase)
        for port: UInt16 in [9101, 9102, 9103] { bridge.waitForMessages(port: port, count: 13) }

        XCTAssertEqual(
            bridge.messages(port: 9101),
            [
                "/midi/keys/1/note_on ii 60 100", "/midi/keys/1/cc ii 7 64", "/midi/keys/1/pitch_bend i 0",
                "/midi/keys/2/pitch_bend i 8191", "/midi/keys/3/program i 5", "/midi/keys/4/pressure i 48",
                "/midi/keys/5/poly_pressure ii 60 33", "/midi/keys/1/note_off ii 60 0",
                "/midi/keys/1/note_on ii 62 0", "/midi/keys/sysex b [6b 0xf0 0x7e 0x7f 0x6 0x1 0xf7]",
                "/midi/keys/clock", "/midi/keys/start", "/midi/keys/stop",
            ])
        XCTAssertEqual(
            bridge.messages(port: 9102),
            [
                "/midi/keys/0/1/note_on ii 60 100", "/midi/keys/0/1/control_change ii 7 64",
                "/midi/keys/0/1/pitch_bend i 8192", "/midi/keys/0/2/pitch_bend i 16383",
                "/midi/keys/0/3/program_change i 5", "/midi/keys/0/4/channel_pressure i 48",
                "/midi/keys/0/5/polyphonic_key_pressure ii 60 33", "/midi/keys/0/1/note_off ii 60 0",
                "/midi/keys/0/1/note_on ii 62 0", "/midi/keys/0/sysex iiii 126 127 6 1", "/midi/keys/0/clock",
                "/midi/keys/0/start", "/midi/keys/0/stop",
            ])
        XCTAssertEqual(
            bridge.messages(port: 9103),
            [
                "/midi m MIDI [0x00 0x64 0x3c 0x90]", "/midi m MIDI [0x00 0x40 0x07 0xb0]",
                "/midi m MIDI [0x00 0x40 0x00 0xe0]", "/midi m MIDI [0x00 0x7f 0x7f 0xe1]",
                "/midi m MIDI [0x00 0x00 0x05 0xc2]", "/midi m MIDI [0x00 0x00 0x30 0xd3]",
                "/midi m MIDI [0x00 0x21 0x3c 0xa4]", "/midi m MIDI [0x00 0x00 0x3c 0x80]",
                "/midi m MIDI [0x00 0x00 0x3e 0x90]", "/sysex b [6b 0xf0 0x7e 0x7f 0x6 0x1 0xf7]",
                "/midi m MIDI [0x00 0x00 0x00 0xf8]", "/midi m MIDI [0x00 0x00 0x00 0xfa]",
                "/midi m MIDI [0x00 0x00 0x00 0xfc]",
            ])
    }

    func testOperatorsShapeWhatIsSent() throws {
        let bridge = try RunningBridge(
            config: """
                { inputs: [{ name: "keys", from: "Virtual Raw MIDI 0-0" }],
                  routes: [{
                    operators: [{ types: "notes" }, { transpose: 12 }, { velocity: { fixed: 90 } }, { noteOff: "note_off" }],
                    destinations: [{ host: "127.0.0.1", port: 9111 }] }] }
                """, oscPorts: [9111])
        try play("90 3C 64 B0 07 40 90 7A 64 90 3C 00 80 7A 00 91 30 01 81 30 40")
        bridge.waitForMessages(port: 9111, count: 4)
        usleep(300_000)
        XCTAssertEqual(
            bridge.messages(port: 9111),
            [
                // C4 -> C5 at velocity 90; the CC is filtered; note 122 + 12 is out of range and
                // dropped, and so is its note-off; note-on velocity 0 arrives as note_off.
                "/midi/keys/1/note_on ii 72 90", "/midi/keys/1/note_off ii 72 0",
                "/midi/keys/2/note_on ii 60 90", "/midi/keys/2/note_off ii 60 64",
            ])
    }

    // The input thread may be waiting in a read with its one-second idle timeout when a
    // throttle holds a value back: it must wait no longer than the deadline, or the last value
    // of a fader move waits for its next idle wake.
    // Four moves 1.25 s apart meet that wake at four different phases.
    func testAThrottledControllerSendsItsLastValueWhenTheIntervalEnds() throws {
        let bridge = try RunningBridge(
            config: """
                { inputs: [{ name: "keys", from: "Virtual Raw MIDI 0-0" }],
                  routes: [{ operators: [{ throttle: { perSecond: 5 } }],
                             destinations: [{ host: "127.0.0.1", port: 9131 }] }] }
                """, oscPorts: [9131])
        var expected: [String] = []
        var delays: [TimeInterval] = []
        var sincePlaying: [TimeInterval] = []
        for move in 0..<4 {
            let started = Date()
            let first = move * 10 + 1
            try play((first..<first + 10).map { String(format: "B0 07 %02X", $0) }.joined(separator: " "))
            bridge.waitForMessages(port: 9131, count: expected.count + 1)
            let firstArrived = Date()
            bridge.waitForMessages(port: 9131, count: expected.count + 2)
            delays.append(Date().timeIntervalSince(firstArrived))
            sincePlaying.append(Date().timeIntervalSince(started))
            expected += ["/midi/keys/1/cc ii 7 \(first)", "/midi/keys/1/cc ii 7 \(first + 9)"]
            usleep(useconds_t(max(0, 1.25 - Date().timeIntervalSince(started)) * 1_000_000))
        }
        XCTAssertEqual(bridge.messages(port: 9131), expected)
        for (delay, total) in zip(delays, sincePlaying) {
            // The interval starts when the first value is read, after `started`.
            XCTAssertGreaterThanOrEqual(total, 0.2, "the last value left before the interval ended: \(sincePlaying)")
            XCTAssertLessThan(delay, 0.6, "the last value waited for the input thread's idle wake: \(delays)")
        }
    }

    func testSigtermReleasesHeldNotesEverywhereAndExitsZeroWithinOneSecond() throws {
        let bridge = try RunningBridge(
            config: """
                { inputs: [{ name: "keys", from: "Virtual Raw MIDI 0-0" }],
                  routes: [{ destinations: [{ host: "127.0.0.1", port: 9121 }, { host: "127.0.0.1", port: 9122 }] }] }
                """, oscPorts: [9121, 9122])
        try play("90 3C 64 90 40 64 93 43 50")
        bridge.waitForMessages(port: 9121, count: 3)
        bridge.waitForMessages(port: 9122, count: 3)
        let (result, seconds) = bridge.stop()
        XCTAssertEqual(result.status, 0, result.standardError)
        XCTAssertLessThan(seconds, 1.0)
        for port: UInt16 in [9121, 9122] {
            bridge.waitForMessages(port: port, count: 6)
            XCTAssertEqual(
                Array(bridge.messages(port: port).dropFirst(3)).sorted(),
                ["/midi/keys/1/note_off ii 60 0", "/midi/keys/1/note_off ii 64 0", "/midi/keys/4/note_off ii 67 0"])
        }
    }

    /// Chords played one at a time, as a player does: the input thread sends each, in order;
    /// a chord in the middle ended by all-notes-off still ends.
    func testChordsPlayedOneAtATimeGoOutInOrderFromTheInputThread() throws {
        let bridge = try RunningBridge(
            config: """
                { inputs: [{ name: "keys", from: "Virtual Raw MIDI 0-0" }],
                  routes: [{ destinations: [{ host: "127.0.0.1", port: 9141 }] }] }
                """, oscPorts: [9141])
        var expected: [String] = []
        for chord in 0..<30 {
            let notes = [48 + chord, 52 + chord, 55 + chord]
            try play(notes.map { String(format: "90 %02X 50", $0) }.joined(separator: " "))
            expected += notes.map { "/midi/keys/1/note_on ii \($0) 80" }
            if chord == 15 {
                try play("B0 7B 00")
                expected.append("/midi/keys/1/cc ii 123 0")
            } else {
                try play(notes.map { String(format: "80 %02X 00", $0) }.joined(separator: " "))
                expected += notes.map { "/midi/keys/1/note_off ii \($0) 0" }
            }
            usleep(20_000)
        }
        XCTAssertTrue(bridge.waitForMessages(port: 9141, count: expected.count), "\(bridge.messages(port: 9141).count)")
        XCTAssertEqual(bridge.messages(port: 9141), expected)

        let json = try runProcess(TestEnvironment.aseqoscBinary, ["status", "--json", "--control", bridge.controlPath])
        XCTAssertEqual(json.status, 0, json.standardError)
        let status = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
        XCTAssertEqual(status["eventsIn"] as? Int, expected.count)
        XCTAssertEqual(status["inputOverruns"] as? Int, 0)
    }

    /// A note held while the bridge cannot read (stopped with SIGSTOP) and the kernel's queue
    /// for it overflows, its note-off among what the kernel drops: the input thread sees the
    /// overrun and ends the note itself.
    func testANoteWhoseNoteOffTheKernelDroppedInAnOverrunStillEnds() throws {
        let bridge = try RunningBridge(
            config: """
                { inputs: [{ name: "keys", from: "Virtual Raw MIDI 0-0" }],
                  routes: [{ destinations: [{ host: "127.0.0.1", port: 9142 }] }] }
                """, oscPorts: [9142])
        try play("90 3C 64")
        XCTAssertTrue(bridge.waitForMessages(port: 9142, count: 1))
        bridge.bridge.signal(SIGSTOP)
        XCTAssertTrue(
            RunningBridge.waitUntil(timeout: 60) { Self.processState(bridge.bridge.pid) == "T" }, "never stopped")
        // More than the 2000 events the kernel queues for a client: the note-off is refused.
        let burst = (0..<2100).map { String(format: "B0 01 %02X", $0 % 128) }.joined(separator: " ")
        try play(burst + " 80 3C 00")
        bridge.bridge.signal(SIGCONT)
        XCTAssertTrue(
            RunningBridge.waitUntil(timeout: 60) {
                bridge.messages(port: 9142).contains("/midi/keys/1/note_off ii 60 0")
            }, "the note never ended: \(bridge.messages(port: 9142).suffix(3))")

        let json = try runProcess(TestEnvironment.aseqoscBinary, ["status", "--json", "--control", bridge.controlPath])
        let status = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
        XCTAssertGreaterThan(status["inputOverruns"] as? Int ?? 0, 0, "the kernel's queue overflowed: \(status)")
        XCTAssertEqual(status["notesEndedAfterOverrun"] as? Int, 1, "\(status)")
        XCTAssertEqual(
            bridge.messages(port: 9142).filter { $0.contains("note_off") }, ["/midi/keys/1/note_off ii 60 0"],
            "ended once")
    }

    /// The state letter of `/proc/PID/stat` (`T`: stopped).
    static func processState(_ pid: Int32) -> String? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        return stat[stat.index(close, offsetBy: 2)...].split(separator: " ").first.map(String.init)
    }

    func testSourceUnpluggedMidChordReleasesItsNotes() throws {
        let bridge = try RunningBridge(
            config: """
                { inputs: [{ name: "keys", from: "ChordKeys" }],
                  routes: [{ destinations: [{ host: "127.0.0.1", port: 9131 }] }] }
                """, oscPorts: [9131])
        var keys: SequencerClient? = try SequencerClient(name: "ChordKeys")
        let port = try keys!.createPort(name: "out", direction: .output)
        XCTAssertTrue(RunningBridge.waitUntil(timeout: 60) { bridge.bridge.standardError.contains("bound to") })
        for note: UInt8 in [60, 64, 67] { try keys!.send(.noteOn(channel: 0, note: note, velocity: 80), from: port) }
        bridge.waitForMessages(port: 9131, count: 3)
        keys = nil  // unplugged mid-chord
        bridge.waitForMessages(port: 9131, count: 6)
        XCTAssertEqual(
            Array(bridge.messages(port: 9131).dropFirst(3)),
            ["/midi/keys/1/note_off ii 60 0", "/midi/keys/1/note_off ii 64 0", "/midi/keys/1/note_off ii 67 0"])
        // Logged after the note-offs went out (the reader sends them first, then reconciles).
        XCTAssertTrue(
            RunningBridge.waitUntil(timeout: 60) { bridge.bridge.standardError.contains("'ChordKeys' lost") },
            bridge.bridge.standardError)
    }
}
