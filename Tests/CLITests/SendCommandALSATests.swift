import Foundation
import TestSupport
import XCTest

/// `aseqosc send` against the kernel sequencer (run in the ALSA VM by scripts/test): what the
/// raw MIDI side of a virmidi card receives, byte for byte, and what aseqdump sees.
///
/// The expected bytes are exactly what the kernel writes, and its event-to-bytes converter uses
/// running status: consecutive messages with the same status byte (the CCs of `nrpn`, the
/// note-offs of `panic`) carry it only once.
final class SendCommandALSATests: XCTestCase {
    let binary = TestEnvironment.aseqoscBinary

    override func setUpWithError() throws {
        try TestEnvironment.requireSequencer()
    }

    struct Capture {
        var send: ProcessResult
        /// Hex digits only: amidi groups bytes by message, without spaces inside a message.
        var bytes: String
        var seconds: Double
    }

    /// Runs `aseqosc send` while amidi dumps the raw side of `rawPort` (clock and active
    /// sensing included), and returns what both did.
    func capture(_ arguments: [String], input: String? = nil, rawPort: String = "hw:0,0") throws -> Capture {
        let amidi = try TestEnvironment.tool("amidi", package: "alsa-utils")
        let dump = BackgroundProcess(amidi, ["-p", rawPort, "-d", "-c", "-a"])
        try dump.start()
        XCTAssertTrue(waitForRawMIDIReader(rawPort), "amidi does not listen on \(rawPort)")
        let start = Date()
        let send = try runProcess(binary, ["send"] + arguments, input: input, timeout: 60)
        let seconds = Date().timeIntervalSince(start)
        // All `send` wrote is in the device's buffer once it has exited.
        let received = stopRawMIDIDump(dump, device: rawPort).standardOutput.filter(\.isHexDigit)
        return Capture(send: send, bytes: received, seconds: seconds)
    }

    func hex(_ text: String) -> String { text.filter(\.isHexDigit) }

    func testChannelCommandsArriveAsTheseBytes() throws {
        let result = try capture(
            ["--to", "16:0"]
                + "on C4 100 off C4 ch 2 cc 7 100 cc14 1 9000 nrpn 300 500 rpn 0 2 pb 0 pb 16383 cp 48 pp C4 33 pc 5"
                .split(separator: " ").map(String.init))
        XCTAssertEqual(result.send.status, 0, result.send.standardError)
        XCTAssertEqual(result.send.standardError, "")
        XCTAssertEqual(
            result.bytes,
            hex(
                "90 3C 64  80 3C 00  B1 07 64  01 46  21 28  63 02  62 2C  06 03  26 74  65 7F  64 7F"
                    + "  65 00  64 00  06 00  26 02  65 7F  64 7F  E1 00 00  7F 7F  D1 30  A1 3C 21  C1 05"))
    }

    func testSystemCommandsSysExAndRawArriveAsTheseBytes() throws {
        let result = try capture(
            ["--to", "Virtual Raw MIDI 0-0"]
                + "mc start stop cont as rst tun spp 272 ss 7 tc 2 3 syx 43 10 raw 90 3C 64 3E 64 F0 7E F7"
                .split(separator: " ").map(String.init))
        XCTAssertEqual(result.send.status, 0, result.send.standardError)
        XCTAssertEqual(
            result.bytes,
            hex("F8 FA FC FB FE FF F6  F2 10 02  F3 07  F1 23  F0 43 10 F7  90 3C 64  3E 64  F0 7E F7"))
    }

    func testPanicSendsEveryNoteOffOnEveryChannelAndNoneIsLost() throws {
        // About 4.3 KB, more than a rawmidi buffer holds: paced, it all arrives.
        let result = try capture(["--to", "16:0", "panic"])
        XCTAssertEqual(result.send.status, 0, result.send.standardError)
        var expected = ""
        for channel in 0..<16 {
            let nibble = String(channel, radix: 16, uppercase: true)
            expected += "B\(nibble)40 00 78 00 79 00 7B 00 E\(nibble)0040 8\(nibble)0000"
            for note in 1..<128 { expected += String(format: "%02X00", note) }
        }
        XCTAssertEqual(result.bytes.count, hex(expected).count)
        XCTAssertEqual(result.bytes, hex(expected))
    }

    func testCommandsFromStdinWithALongSysExArriveInOrder() throws {
        let data = (0..<600).map { String(format: "%02X", $0 % 128) }
        let script = """
            # played from stdin
            ch 16
            on C4 100   # a note
            syx \(data.joined(separator: " "))
            off C4
            """
        let result = try capture(["--to", "16:0", "--file", "-"], input: script)
        XCTAssertEqual(result.send.status, 0, result.send.standardError)
        XCTAssertEqual(result.bytes, hex("9F 3C 64 F0" + data.joined() + "F7 8F 3C 00"))
    }

    func testClockAndTimestampsSpaceTheMessages() throws {
        // amidi -T stamps each read: "5.390988425) 903C01". The ticks of 120 bpm are 20.8 ms
        // apart, the delay adds 300 ms, and the two absolute timestamps 200 ms across midnight.
        let amidi = try TestEnvironment.tool("amidi", package: "alsa-utils")
        let dump = BackgroundProcess(amidi, ["-p", "hw:0,0", "-d", "-c", "-T", "monotonic"])
        try dump.start()
        XCTAssertTrue(waitForRawMIDIReader("hw:0,0"), "amidi does not listen on hw:0,0")
        let send = try runProcess(
            binary,
            [
                "send", "--to", "16:0", "clock", "120", "1", "+00.300", "on", "C4", "1", "23:59:59.900", "00:00:00.100",
                "off", "C4",
            ])
        XCTAssertEqual(send.status, 0, send.standardError)
        let output = stopRawMIDIDump(dump, device: "hw:0,0").standardOutput
        var times: [(seconds: Double, bytes: String)] = []
        for line in output.split(separator: "\n") {
            let parts = line.split(separator: ")", maxSplits: 1)
            guard parts.count == 2, let seconds = Double(parts[0]) else { continue }
            times.append((seconds, parts[1].filter(\.isHexDigit)))
        }
        XCTAssertEqual(times.map(\.bytes).joined(), String(repeating: "F8", count: 24) + "903C01803C00", output)
        let clocks = times.filter { $0.bytes.hasPrefix("F8") }
        let noteOn = try XCTUnwrap(times.first { $0.bytes == "903C01" })
        let noteOff = try XCTUnwrap(times.first { $0.bytes == "803C00" })
        let lastClock = try XCTUnwrap(clocks.last).seconds
        XCTAssertGreaterThanOrEqual(lastClock - clocks[0].seconds, 0.47, output)
        XCTAssertGreaterThanOrEqual(noteOn.seconds - lastClock, 0.29, output)
        XCTAssertGreaterThanOrEqual(noteOff.seconds - noteOn.seconds, 0.19, output)
    }

    func testARegularExpressionSendsToEveryPortItMatches() throws {
        let amidi = try TestEnvironment.tool("amidi", package: "alsa-utils")
        let second = BackgroundProcess(amidi, ["-p", "hw:0,1", "-d"])
        try second.start()
        XCTAssertTrue(waitForRawMIDIReader("hw:0,1"), "amidi does not listen on hw:0,1")
        let first = try capture(["--to", "/Virtual Raw MIDI 0-[01]/", "on", "C4", "1"])
        XCTAssertEqual(first.send.status, 0, first.send.standardError)
        XCTAssertEqual(first.bytes, "903C01")
        XCTAssertEqual(stopRawMIDIDump(second, device: "hw:0,1").standardOutput.filter(\.isHexDigit), "903C01")
    }

    func testAseqdumpOnMidiThroughSeesWhatWasSentToItByName() throws {
        let aseqdump = try TestEnvironment.tool("aseqdump", package: "alsa-utils")
        // aseqdump reads what Midi Through passes on; we write into Midi Through by name.
        let dump = BackgroundProcess("/usr/bin/stdbuf", ["-oL", aseqdump, "-p", "14:0"])
        try dump.start()
        defer { dump.stop() }
        // aseqdump subscribes to the port before it prints its header.
        XCTAssertTrue(dump.waitForOutput { $0.contains("Source") }, dump.standardOutput)

        let send = try runProcess(
            binary, ["send", "--to", "Midi Through", "ch", "3", "on", "F#3", "90", "pb", "0", "cc", "7", "64"])
        XCTAssertEqual(send.status, 0, send.standardError)
        XCTAssertTrue(dump.waitForOutput { $0.contains("Control change") }, dump.standardOutput)
        let text = dump.standardOutput
        XCTAssertTrue(text.contains("Note on                 2, note 54, velocity 90"), text)
        XCTAssertTrue(text.contains("Pitch bend              2, value -8192"), text)
        XCTAssertTrue(text.contains("Control change          2, controller 7, value 64"), text)
    }

    func testAnUnknownPortExits69AndSaysWhereThePortsAreListed() throws {
        let result = try runProcess(binary, ["send", "--to", "KeyStep", "on", "C4", "100"])
        XCTAssertEqual(result.status, 69)
        XCTAssertEqual(
            result.standardError, "aseqosc: send: no ALSA port matches 'KeyStep'; ports are listed by `aseqosc ports`\n"
        )
    }

    func testAPortThatOnlySendsExits69() throws {
        let result = try runProcess(binary, ["send", "--to", "0:1", "on", "C4", "100"])
        XCTAssertEqual(result.status, 69)
        XCTAssertTrue(result.standardError.contains("'0:1' is not a destination"), result.standardError)
    }

    func testABadCommandSendsNothingAtAll() throws {
        // The first two commands are fine, the third is not: nothing may go out.
        let result = try capture(["--to", "16:0", "on", "C4", "100", "off", "C4", "cc", "7"])
        XCTAssertEqual(result.send.status, 64)
        XCTAssertEqual(result.send.standardError, "aseqosc: send: 'cc 7': missing value\n")
        XCTAssertEqual(result.bytes, "")
    }
}
