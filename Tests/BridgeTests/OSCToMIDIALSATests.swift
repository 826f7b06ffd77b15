import Foundation
import Glibc
import MIDI
import OSC
import TestSupport
import XCTest

/// OSC sent to `aseqosc run` (with liblo's `oscsend`, or as packets built here) comes out of its
/// ALSA output ports as MIDI: exact bytes at a virmidi card's raw side (`amidi`), events at
/// `aseqdump`, and the same bytes as Debian's `o2m` for the addresses o2m knows.
final class OSCToMIDIALSATests: XCTestCase {
    var amidi = ""
    var oscsend = ""
    var stdbuf = ""

    override func setUpWithError() throws {
        try TestEnvironment.requireSequencer()
        amidi = try TestEnvironment.tool("amidi", package: "alsa-utils")
        oscsend = try TestEnvironment.tool("oscsend", package: "liblo-tools")
        stdbuf = try TestEnvironment.tool("stdbuf", package: "coreutils")
    }

    // MARK: Helpers

    /// `aseqosc run` with output "synth" bound to "Virtual Raw MIDI 0-0" (whose raw side is
    /// hw:0,0) and output "thru" bound to "Midi Through", OSC input on `port` with `osc` keys.
    func startBridge(port: Int, osc: String = "", outputs: String? = nil) throws -> RunningBridge {
        let outputs =
            outputs ?? "[{ name: \"synth\", to: \"Virtual Raw MIDI 0-0\" }, { name: \"thru\", to: \"Midi Through\" }]"
        let listen = osc.contains("listen") ? "" : "listen: \"127.0.0.1:\(port)\", "
        return try RunningBridge(config: "{ outputs: \(outputs), osc: { \(listen)\(osc) } }", oscPorts: [])
    }

    /// `amidi -d` on a virmidi card's raw side, printing every byte (clock and active sensing too).
    func dumpRawMIDI(_ device: String = "hw:0,0") throws -> BackgroundProcess {
        let dump = BackgroundProcess(stdbuf, ["-oL", amidi, "-p", device, "-d", "-a", "-c"])
        try dump.start()
        XCTAssertTrue(waitForRawMIDIReader(device), "amidi does not listen on \(device)")
        return dump
    }

    /// What an `amidi -d` printed, as whole MIDI messages without running status ("90 3C 64").
    func messages(_ dump: BackgroundProcess) -> [String] {
        let hex = dump.standardOutput.filter { $0.isHexDigit }
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex, let next = hex.index(index, offsetBy: 2, limitedBy: hex.endIndex) {
            bytes.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        let store = SysExStore(slots: 64, capacity: 4096)
        var parser = MIDIByteParser(store: store)
        var encoder = MIDIByteEncoder(store: store)
        return parser.parse(bytes).map { event in
            defer { if event.kind == .sysex { store.release(event.sysex) } }
            return encoder.encode(event).map { String(format: "%02X", $0) }.joined(separator: " ")
        }
    }

    @discardableResult
    func waitForMessages(_ dump: BackgroundProcess, count: Int, timeout: TimeInterval = 60) -> [String] {
        _ = RunningBridge.waitUntil(timeout: timeout) { self.messages(dump).count >= count }
        return messages(dump)
    }

    /// `oscsend 127.0.0.1 PORT ADDRESS [TYPES ARGS...]`.
    func send(_ port: Int, _ address: String, _ types: String = "", _ arguments: Any...) throws {
        var command = ["127.0.0.1", String(port), address]
        if !types.isEmpty { command += [types] + arguments.map { "\($0)" } }
        let result = try runProcess(oscsend, command)
        XCTAssertEqual(result.status, 0, "oscsend \(command): \(result.standardError)")
    }

    /// Sends an OSC packet built here (blobs and bundles, which oscsend cannot send).
    func send(_ port: Int, _ packet: OSCPacket) throws {
        let bytes = try packet.serialize()
        XCTAssertEqual(sendUDPDatagram(bytes, toLoopbackPort: port), bytes.count)
    }

    func send(_ port: Int, _ address: String, blob: [UInt8]) throws {
        try send(port, .message(OSCMessage(address, [.blob(blob)])))
    }

    /// The bridge's `osc input:` summary line, logged when it stops.
    func stopAndSummarise(_ bridge: RunningBridge) -> String {
        let (result, _) = bridge.stop()
        XCTAssertEqual(result.status, 0, result.standardError)
        return result.standardError.split(separator: "\n").first {
            $0.contains("osc input: ") && $0.contains("datagrams")
        }
        .map(String.init) ?? "(no summary in: \(result.standardError))"
    }

    // MARK: Tests

    func testDefaultSchemeAddressesLeaveAsTheirExactMIDIBytes() throws {
        let port = 57301
        let bridge = try startBridge(port: port, osc: "sysex: true")
        let dump = try dumpRawMIDI()
        try send(port, "/midi/synth/1/note_on", "ii", 60, 100)
        try send(port, "/midi/synth/16/note_off", "ii", 60, 64)
        try send(port, "/midi/synth/3/poly_pressure", "ii", 60, 34)
        try send(port, "/midi/synth/3/cc", "ii", 7, 101)
        try send(port, "/midi/synth/3/program", "i", 5)
        try send(port, "/midi/synth/3/pressure", "i", 51)
        try send(port, "/midi/synth/3/pitch_bend", "i", -8192)
        try send(port, "/midi/synth/3/pitch_bend", "f", 8191.0)
        try send(port, "/midi/synth/3/cc14", "ii", 7, 1000)
        try send(port, "/midi/synth/3/rpn", "ii", 0, 8192)
        try send(port, "/midi/synth/3/nrpn", "ff", 1000.0, 300.0)
        try send(port, "/midi/synth/mtc_quarter_frame", "i", 0x23)
        try send(port, "/midi/synth/song_position", "i", 0x1010)
        try send(port, "/midi/synth/song_select", "i", 5)
        for type in ["tune_request", "clock", "start", "continue", "stop", "active_sensing", "reset"] {
            try send(port, "/midi/synth/\(type)")
        }
        try send(port, "/midi/synth/sysex", blob: [0xF0, 0x7E, 0x7F, 0x06, 0x01, 0xF7])
        try send(port, "/midi/piano/1/note_on", "ii", 60, 100)
        try send(port, "/midi/synth/1/note_on", "ii", 60, 200)
        let expected = [
            "90 3C 64", "8F 3C 40", "A2 3C 22", "B2 07 65", "C2 05", "D2 33", "E2 00 00", "E2 7F 7F",
            "B2 07 07", "B2 27 68", "B2 65 00", "B2 64 00", "B2 06 40", "B2 26 00",
            "B2 63 07", "B2 62 68", "B2 06 02", "B2 26 2C", "F1 23", "F2 10 20", "F3 05",
            "F6", "F8", "FA", "FB", "FC", "FE", "FF", "F0 7E 7F 06 01 F7",
        ]
        XCTAssertEqual(waitForMessages(dump, count: expected.count), expected)
        usleep(300_000)
        XCTAssertEqual(messages(dump), expected, "the unknown port and the bad velocity sent nothing")
        dump.stop()
        let summary = stopAndSummarise(bridge)
        XCTAssertTrue(summary.contains("1 malformed messages, 1 unknown addresses"), summary)
    }

    func testOsmidAddressesGiveTheSameBytesAsDebiansO2M() throws {
        let o2mPath = try TestEnvironment.tool("o2m", package: "osmid")
        let (o2mPort, ourPort) = (57300, 57302)
        // o2m writes to "VirMIDI 0-1" (hw:0,1); aseqosc's output of the same name to 0-0 (hw:0,0).
        let o2m = BackgroundProcess(stdbuf, ["-oL", o2mPath, "-o", "VirMIDI 0-1", "-i", String(o2mPort), "-m", "3"])
        try o2m.start()
        defer { o2m.stop() }
        let bridge = try startBridge(
            port: ourPort, osc: "sysex: true", outputs: "[{ name: \"VirMIDI 0-1\", to: \"Virtual Raw MIDI 0-0\" }]")
        // o2m prints nothing when ready: poke it with clock until a clock byte comes out.
        let probe = try dumpRawMIDI("hw:0,1")
        let ready = RunningBridge.waitUntil(timeout: 60) {
            try? self.send(o2mPort, "/*/clock")
            return probe.standardOutput.contains("F8")
        }
        probe.stop()
        XCTAssertTrue(ready, "o2m did not start: \(o2m.standardOutput)")

        let theirs = try dumpRawMIDI("hw:0,1")
        let ours = try dumpRawMIDI("hw:0,0")
        let packets: [(String, String, [Int])] = [
            ("/virmidi_0-1/note_on", "iii", [1, 60, 100]), ("/VirMIDI 0-1/note_on", "iii", [2, 61, 101]),
            ("/*/note_on", "iii", [0, 62, 10]), ("/*/note_on", "iii", [17, 60, 100]),
            ("/*/note_on", "iii", [1, 200, 300]), ("/*/note_on", "iii", [1, 60, 200]),
            ("/*/note_off", "iii", [3, 60, 64]), ("/*/note_off", "iii", [3, 61, 300]),
            ("/*/control_change", "iii", [4, 7, 101]), ("/*/control_change", "iii", [1, 7, 200]),
            ("/*/pitch_bend", "ii", [5, 8192]), ("/*/pitch_bend", "ii", [5, 0]), ("/*/pitch_bend", "ii", [5, 16383]),
            ("/*/pitch_bend", "ii", [5, 20000]), ("/*/pitch_bend", "ii", [1, -1]),
            ("/*/channel_pressure", "ii", [6, 51]), ("/*/poly_pressure", "iii", [7, 60, 34]),
            ("/*/program_change", "ii", [8, 5]), ("/*/program_change", "ii", [1, 200]),
            ("/*/clock", "", []), ("/*/start", "", []), ("/*/continue", "", []), ("/*/stop", "", []),
            ("/*/raw", "iii", [144, 60, 100]), ("/*/raw", "iii", [400, 60, 100]),
            ("/*/raw", "iiiiii", [240, 126, 127, 6, 1, 247]),
            ("/virmidi_0-1/note_on", "iii", [1, 60, 0]),
        ]
        for (address, types, arguments) in packets {
            for port in [o2mPort, ourPort] {
                var command = ["127.0.0.1", String(port), address]
                if !types.isEmpty { command += [types] + arguments.map(String.init) }
                XCTAssertEqual(try runProcess(oscsend, command).status, 0)
            }
        }
        for port in [o2mPort, ourPort] {
            try send(port, "/*/raw", blob: [0x92, 0x3C, 0x64])
            try send(port, "/*/raw", blob: [0xF0, 0x43, 0x10, 0x4C, 0x00, 0x00, 0x7E, 0x00, 0xF7])
        }
        // 16 channels for channel 0, one message for each of the other 28 packets.
        let count = 16 + 28
        let expectedStart = ["90 3C 64", "91 3D 65"] + (0..<16).map { String(format: "%02X 3E 0A", 0x90 + $0) }
        XCTAssertEqual(Array(waitForMessages(theirs, count: count).prefix(18)), expectedStart, "o2m")
        XCTAssertEqual(Array(waitForMessages(ours, count: count).prefix(18)), expectedStart, "aseqosc")
        usleep(300_000)
        XCTAssertEqual(messages(ours).count, count)
        XCTAssertEqual(messages(ours), messages(theirs))
        // Byte for byte as amidi printed them, running status included.
        let raw = { (dump: BackgroundProcess) in dump.standardOutput.filter { !$0.isWhitespace } }
        XCTAssertEqual(raw(ours), raw(theirs))
        theirs.stop()
        ours.stop()
        let (stopped, _) = bridge.stop()
        XCTAssertEqual(stopped.status, 0, stopped.standardError)
    }

    func testTouchOSCMidiAndSysExBlobsWhenSysExIsOn() throws {
        let port = 57303
        let bridge = try startBridge(port: port, osc: "sysex: true")
        let dump = try dumpRawMIDI()
        // TouchOSC's order: port, data 2, data 1, status; then OSC 1.0's: port, status, data 1, data 2.
        try send(port, "/midi", "m", "00643C90")
        try send(port, "/midi", "m", "00B00740")
        try send(port, "/sysex", blob: [0xF0, 0x43, 0x10, 0x4C, 0x00, 0x00, 0x7E, 0x00, 0xF7])
        let long = [0xF0] + (0..<600).map { UInt8($0 % 128) } + [0xF7]
        try send(port, "/midi/synth/sysex", blob: long)
        try send(port, "/midi/synth/1/note_on", "ii", 61, 1)
        let expected = [
            "90 3C 64", "B0 07 40", "F0 43 10 4C 00 00 7E 00 F7",
            long.map { String(format: "%02X", $0) }.joined(separator: " "), "90 3D 01",
        ]
        XCTAssertEqual(waitForMessages(dump, count: expected.count), expected)
        dump.stop()
        let (stopped, _) = bridge.stop()
        XCTAssertEqual(stopped.status, 0, stopped.standardError)
    }

    func testSysExIsDroppedAndCountedWhenOff() throws {
        let port = 57304
        let bridge = try startBridge(port: port)
        let dump = try dumpRawMIDI()
        try send(port, "/midi/synth/sysex", blob: [0xF0, 0x7E, 0x7F, 0x06, 0x01, 0xF7])
        try send(port, "/sysex", blob: [0xF0, 0x7E, 0x7F, 0x06, 0x01, 0xF7])
        try send(port, "/synth/raw", "iiiiii", 240, 126, 127, 6, 1, 247)
        try send(port, "/synth/note_on", "iii", 1, 60, 100)
        XCTAssertEqual(waitForMessages(dump, count: 1), ["90 3C 64"])
        usleep(300_000)
        XCTAssertEqual(messages(dump), ["90 3C 64"])
        dump.stop()
        let summary = stopAndSummarise(bridge)
        XCTAssertTrue(summary.contains("4 messages, 1 translated"), summary)
        XCTAssertTrue(summary.contains("3 SysEx disabled"), summary)
    }

    func testMappingRulesScaleClampAndRunThroughTheOperators() throws {
        let port = 57305
        let bridge = try startBridge(
            port: port,
            osc: """
                operators: [{ transpose: 12 }],
                mappings: [
                  { address: "/1/fader{n}", args: "f", output: "synth", type: "control_change",
                    controller: "{n}", value: { from: "{0}", in: [0, 1], out: [0, 127] } },
                  { address: "/knob/{ch}", args: "i", output: "synth", type: "pitch_bend",
                    channel: "{ch}", value: { from: "{0}", in: [127, 0], out: [-8192, 8191] } },
                  { address: "/pad/{note}", args: "f", output: "synth", type: "note_on", channel: 10,
                    note: "{note}", velocity: { from: "{0}", in: [0, 1], out: [0, 127] } },
                ]
                """)
        let dump = try dumpRawMIDI()
        try send(port, "/1/fader5", "f", 0.5)
        try send(port, "/1/fader5", "f", 1.5)
        try send(port, "/1/fader7", "i", 0)
        try send(port, "/knob/2", "i", 0)
        try send(port, "/knob/2", "i", 127)
        try send(port, "/pad/36", "f", 1.0)
        try send(port, "/pad/36", "f", 0.0)
        try send(port, "/1/fader5", "s", "loud")
        let expected = ["B0 05 40", "B0 05 7F", "B0 07 00", "E1 7F 7F", "E1 00 00", "99 30 7F", "99 30 00"]
        XCTAssertEqual(waitForMessages(dump, count: expected.count), expected, "the pad's note is transposed by 12")
        dump.stop()
        let summary = stopAndSummarise(bridge)
        XCTAssertTrue(summary.contains("1 malformed messages"), summary)
    }

    /// The kernel's "timer state" of the last queue named `name` in /proc/asound/seq/queues
    /// ("Running" or "Stopped").
    static func timerState(ofQueue name: String) throws -> String? {
        let text = try String(contentsOfFile: "/proc/asound/seq/queues", encoding: .utf8)
        let block = text.components(separatedBy: "\nqueue ").last { $0.contains("[\(name)]") }
        let line = block?.split(separator: "\n").first { $0.hasPrefix("timer state") }
        return line?.split(separator: ":").last?.trimmingCharacters(in: .whitespaces)
    }

    func testABundleTimeTaggedAheadLeavesAtItsTime() throws {
        let port = 57306
        let aseqdumpPath = try TestEnvironment.tool("aseqdump", package: "alsa-utils")
        let bridge = try startBridge(port: port)
        let dump = BackgroundProcess(stdbuf, ["-oL", aseqdumpPath, "-p", "14:0"])
        try dump.start()
        XCTAssertTrue(dump.waitForOutput { $0.contains("Waiting for data") })
        func noteOns() -> Int { dump.standardOutput.components(separatedBy: "Note on").count - 1 }
        // The queue's kernel timer runs only once a bundle needs it.
        try send(port, "/midi/thru/1/note_on", "ii", 59, 100)
        XCTAssertTrue(dump.waitForOutput { _ in noteOns() >= 1 })
        XCTAssertEqual(try Self.timerState(ofQueue: "aseqosc osc"), "Stopped", "no bundle yet, no running queue")

        let ahead = OSCBundle(
            timeTag: OSCTimeTag(unixTime: Date().timeIntervalSince1970 + 0.2),
            [.message(OSCMessage("/midi/thru/1/note_on", [.int32(60), .int32(100)]))])
        let sent = Date()
        try send(port, .bundle(ahead))
        XCTAssertTrue(dump.waitForOutput { _ in noteOns() >= 2 })
        let delay = Date().timeIntervalSince(sent)
        print("bundle 200 ms ahead arrived after \(Int(delay * 1000)) ms")
        XCTAssertGreaterThanOrEqual(delay, 0.19)
        XCTAssertLessThan(delay, 0.6)
        // Nothing more scheduled: the queue and its timer stop again.
        XCTAssertTrue(
            RunningBridge.waitUntil(timeout: 60) { (try? Self.timerState(ofQueue: "aseqosc osc")) == "Stopped" })

        let now = Date()
        try send(
            port,
            .bundle(
                OSCBundle(
                    timeTag: .immediately, [.message(OSCMessage("/midi/thru/1/note_on", [.int32(61), .int32(1)]))])))
        XCTAssertTrue(dump.waitForOutput { _ in noteOns() >= 3 })
        let immediate = Date().timeIntervalSince(now)
        print("bundle 'immediately' arrived after \(Int(immediate * 1000)) ms")
        XCTAssertLessThan(immediate, 0.15)

        let past = OSCBundle(
            timeTag: OSCTimeTag(unixTime: Date().timeIntervalSince1970 - 1),
            [.message(OSCMessage("/midi/thru/1/note_on", [.int32(62), .int32(1)]))])
        let then = Date()
        try send(port, .bundle(past))
        XCTAssertTrue(dump.waitForOutput { _ in noteOns() >= 4 })
        XCTAssertLessThan(Date().timeIntervalSince(then), 0.15)
        dump.stop()
        let summary = stopAndSummarise(bridge)
        XCTAssertTrue(summary.contains("1 bundles scheduled, 1 late"), summary)
    }

    /// A chord in one bundle reaches the kernel in one write, and one event written on its own
    /// (an RPN, several control changes) keeps its place in it; a burst of datagrams read in
    /// batches behind it: every event arrives, in order.
    func testChordBundlesAndBurstsArriveCompleteAndInOrder() throws {
        let port = 57309
        let bridge = try startBridge(port: port)
        let dump = try dumpRawMIDI()
        let chord = OSCBundle(
            timeTag: .immediately,
            [60, 64, 67].map { .message(OSCMessage("/midi/synth/1/note_on", [.int32($0), .int32(100)])) }
                + [.message(OSCMessage("/midi/synth/1/rpn", [.int32(0), .int32(8192)]))]
                + [.message(OSCMessage("/midi/synth/1/note_on", [.int32(72), .int32(100)]))])
        try send(port, .bundle(chord))
        for index in 0..<200 {
            let values: [OSCArgument] = [.int32(Int32(index % 120)), .int32(Int32(index % 128))]
            let datagram = try OSCPacket.message(OSCMessage("/midi/synth/2/cc", values)).serialize()
            XCTAssertEqual(sendUDPDatagram(datagram, toLoopbackPort: port), datagram.count)
        }
        let expected =
            ["90 3C 64", "90 40 64", "90 43 64", "B0 65 00", "B0 64 00", "B0 06 40", "B0 26 00", "90 48 64"]
            + (0..<200).map { String(format: "B1 %02X %02X", $0 % 120, $0 % 128) }
        XCTAssertEqual(waitForMessages(dump, count: expected.count, timeout: 60), expected)
        dump.stop()
        let summary = stopAndSummarise(bridge)
        XCTAssertTrue(summary.contains("201 datagrams"), summary)
        // 205 events (the RPN counts once), and the note-offs that stopping owes the chord.
        XCTAssertTrue(summary.contains("209 MIDI events sent, 0 bundles scheduled"), summary)
        XCTAssertTrue(summary.contains("0 output queue full, 0 at stop, 0 output failed"), summary)
    }

    func testALongSysExIsPacedWithoutHoldingUpAnotherPort() throws {
        let port = 57308
        let aseqdumpPath = try TestEnvironment.tool("aseqdump", package: "alsa-utils")
        let bridge = try startBridge(port: port, osc: "sysex: true, sysexBytesPerSecond: 3125")
        let raw = try dumpRawMIDI()
        let through = BackgroundProcess(stdbuf, ["-oL", aseqdumpPath, "-p", "14:0"])
        try through.start()
        XCTAssertTrue(through.waitForOutput { $0.contains("Waiting for data") })
        // 3,000 bytes at MIDI's 3,125 bytes a second: about 0.96 s on the "synth" port.
        let long = [0xF0] + (0..<2_998).map { UInt8($0 % 128) } + [0xF7]
        try send(port, "/midi/synth/sysex", blob: long)
        let sent = Date()
        try send(port, .message(OSCMessage("/midi/thru/1/note_on", [.int32(60), .int32(100)])))
        try send(port, .message(OSCMessage("/midi/synth/1/note_on", [.int32(61), .int32(100)])))
        XCTAssertTrue(through.waitForOutput { $0.contains("Note on") })
        let noteElsewhere = Date().timeIntervalSince(sent)
        let messages = waitForMessages(raw, count: 2)
        let sysexDone = Date().timeIntervalSince(sent)
        print(
            "paced SysEx: note on the other port after \(Int(noteElsewhere * 1000)) ms, SysEx done after \(Int(sysexDone * 1000)) ms"
        )
        XCTAssertGreaterThan(sysexDone, 0.8, "the SysEx was not paced")
        // Held up behind the SysEx, the note would come with its end; free, long before.
        XCTAssertLessThan(noteElsewhere, sysexDone / 2, "the note to 'thru' waited for the SysEx to 'synth'")
        XCTAssertEqual(
            messages, [long.map { String(format: "%02X", $0) }.joined(separator: " "), "90 3D 64"],
            "on its own port the note waits behind the SysEx")
        raw.stop()
        through.stop()
        let (stopped, _) = bridge.stop()
        XCTAssertEqual(stopped.status, 0, stopped.standardError)
    }

    func testSendersOutsideTheAllowListAreDroppedAndCounted() throws {
        let port = 57307
        let bridge = try startBridge(port: port, osc: "listen: \"0.0.0.0:\(port)\", allow: [\"10.0.0.0/8\"]")
        let dump = try dumpRawMIDI()
        try send(port, "/midi/synth/1/note_on", "ii", 60, 100)
        try send(port, "/synth/note_on", "iii", 1, 60, 100)
        usleep(500_000)
        XCTAssertEqual(messages(dump), [])
        dump.stop()
        let summary = stopAndSummarise(bridge)
        XCTAssertTrue(summary.contains("0 datagrams"), summary)
        XCTAssertTrue(summary.contains("dropped: 2 not allowed"), summary)
    }

    func testSigtermSendsNoteOffsForNotesHeldFromOSCAndExitsWithinOneSecond() throws {
        let aseqdump = try TestEnvironment.tool("aseqdump", package: "alsa-utils")
        let dump = BackgroundProcess(stdbuf, ["-oL", aseqdump, "-p", "14:0"])
        try dump.start()
        defer { dump.stop() }
        XCTAssertTrue(dump.waitForOutput { $0.contains("Source") })
        let bridge = try startBridge(port: 57311)
        try send(57311, "/midi/thru/1/note_on", "ii", 60, 100)
        try send(57311, "/midi/thru/3/note_on", "ii", 64, 90)
        XCTAssertTrue(dump.waitForOutput { $0.components(separatedBy: "Note on").count - 1 >= 2 }, dump.standardOutput)

        let (result, seconds) = bridge.stop()
        XCTAssertEqual(result.status, 0, result.standardError)
        XCTAssertLessThan(seconds, 1.0)
        XCTAssertTrue(dump.waitForOutput { $0.components(separatedBy: "Note off").count - 1 >= 2 }, dump.standardOutput)
        let text = dump.standardOutput
        XCTAssertTrue(text.contains("Note off                0, note 60"), text)
        XCTAssertTrue(text.contains("Note off                2, note 64"), text)
    }
}
