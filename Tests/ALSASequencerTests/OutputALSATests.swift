import ALSASequencer
import Endpoints
import Foundation
import MIDI
import TestSupport
import XCTest

/// Events aseqosc writes on an output port arrive intact at aseqdump and at the raw MIDI side
/// of a virmidi card (run against the kernel sequencer in the ALSA VM by scripts/test).
final class OutputALSATests: XCTestCase {
    override func setUpWithError() throws {
        try TestEnvironment.requireSequencer()
    }

    static let events: [MIDIEvent] = [
        .noteOn(channel: 0, note: 60, velocity: 100),
        .noteOff(channel: 1, note: 61, velocity: 64),
        MIDIEvent(.polyPressure, channel: 2, data1: 62, data2: 33),
        .controlChange(channel: 3, controller: 7, value: 100),
        MIDIEvent(.programChange, channel: 4, data1: 5),
        MIDIEvent(.channelPressure, channel: 5, data1: 48),
        .pitchBend(channel: 6, bend: -8192),
        .pitchBend(channel: 6, bend: 8191),
        MIDIEvent(.mtcQuarterFrame, data1: 0x23),
        MIDIEvent(.songPosition, value: 272),
        MIDIEvent(.songSelect, data1: 7),
        MIDIEvent(.tuneRequest),
        MIDIEvent(.clock), MIDIEvent(.start), MIDIEvent(.continue), MIDIEvent(.stop),
    ]
    /// What the kernel's event-to-bytes converter makes of them: note the running status it
    /// uses for the second pitch bend.
    static let wireBytes =
        "90 3C 64 81 3D 40 A2 3E 21 B3 07 64 C4 05 D5 30 E6 00 00 7F 7F F1 23 F2 10 02 F3 07 F6 F8 FA FB FC"

    /// A client named `clientName` whose output port feeds virmidi 0 (client 16), and `amidi`
    /// dumping what comes out of hw:0,0.
    private func connectedToRawMIDIDump(
        clientName: String
    ) throws -> (SequencerClient, UInt8, BackgroundProcess) {
        let amidi = try TestEnvironment.tool("amidi", package: "alsa-utils")
        let client = try SequencerClient(name: clientName)
        let port = try client.createPort(name: "out", direction: .output)
        try client.connect(from: port, to: PortAddress(client: 16, port: 0))
        // -c: amidi hides clock bytes unless asked.
        let dump = BackgroundProcess(amidi, ["-p", "hw:0,0", "-d", "-c"])
        try dump.start()
        XCTAssertTrue(waitForRawMIDIReader("hw:0,0"), "amidi does not listen on hw:0,0")
        return (client, port, dump)
    }

    func testEveryEventTypeReachesTheRawMIDISideAsTheRightBytes() throws {
        let (client, port, dump) = try connectedToRawMIDIDump(clientName: "aseqosc-out-test")

        for event in Self.events { try client.send(event, from: port) }
        let sysex: [UInt8] = [0xF0] + (0..<600).map { UInt8($0 % 128) } + [0xF7]
        try sysex.withUnsafeBytes { bytes in
            try client.send(MIDIEvent(.sysex), from: port, sysexBytes: bytes)
        }
        try client.send(.noteOn(channel: 0, note: 64, velocity: 1), from: port)

        let result = stopRawMIDIDump(dump, device: "hw:0,0")
        // amidi groups bytes by message without spaces inside: compare the bare hex digits.
        let received = result.standardOutput.filter(\.isHexDigit)
        let sysexHex = sysex.map { String(format: "%02X", $0) }.joined()
        XCTAssertEqual(received, Self.wireBytes.filter(\.isHexDigit) + sysexHex + "904001")
    }

    /// `DirectOutput` reuses one event and writes it to the descriptor itself: the same bytes
    /// as the client's own send, each kind's data untouched by the kind before it.
    func testDirectOutputSendsWhatTheClientSends() throws {
        let (client, port, dump) = try connectedToRawMIDIDump(clientName: "aseqosc-direct-test")

        let output = DirectOutput(client: client)
        for event in Self.events { try output.send(event, from: port) }
        let sysex: [UInt8] = [0xF0] + (0..<600).map { UInt8($0 % 128) } + [0xF7]
        try sysex.withUnsafeBytes { bytes in try output.send(MIDIEvent(.sysex), from: port, sysexBytes: bytes) }
        try output.send(MIDIEvent(.controlChange14, channel: 1, value: 9000, parameter: 1), from: port)
        try output.send(.noteOn(channel: 0, note: 64, velocity: 1), from: port)

        let result = stopRawMIDIDump(dump, device: "hw:0,0")
        let received = result.standardOutput.filter(\.isHexDigit)
        let sysexHex = sysex.map { String(format: "%02X", $0) }.joined()
        // The 14-bit controller leaves as its two control changes (9000 = 70 << 7 | 40), the
        // second in running status.
        XCTAssertEqual(received, Self.wireBytes.filter(\.isHexDigit) + sysexHex + "B101462128" + "904001")
    }

    /// Staged events leave as the same bytes as one at a time.
    func testStagedEventsReachTheRawMIDISideAsTheRightBytes() throws {
        let (client, port, dump) = try connectedToRawMIDIDump(clientName: "aseqosc-staged-test")

        let output = DirectOutput(client: client)
        for (index, event) in Self.events.enumerated() { output.stage(event, from: port, at: index) }
        let (written, error) = output.writeStaged(0..<Self.events.count)
        XCTAssertEqual(written, Self.events.count)
        XCTAssertNil(error)

        let result = stopRawMIDIDump(dump, device: "hw:0,0")
        XCTAssertEqual(result.standardOutput.filter(\.isHexDigit), Self.wireBytes.filter(\.isHexDigit))
    }

    /// A subscriber whose input pool fills part-way through a staged write: the answer is how
    /// many went out and the refusal (`EAGAIN`) that stopped the next, and writing the rest
    /// answers `EAGAIN` again, which is what PacedMIDIOutput's flush relies on. (The subscriber
    /// cannot show which ones it got: on its next read, the kernel reports the overflow and
    /// empties its queue.)
    func testAStagedWriteCutShortByAFullSubscriberSaysHowManyWentOut() throws {
        let receiver = try SequencerClient(name: "aseqosc-small-pool")
        try receiver.setInputPool(8)
        let receiverPort = try receiver.createPort(name: "in", direction: .input)
        let sender = try SequencerClient(name: "aseqosc-staged-sender")
        let port = try sender.createPort(name: "out", direction: .output)
        try sender.connect(from: port, to: PortAddress(client: receiver.clientID, port: receiverPort))

        let output = DirectOutput(client: sender)
        for note in 0..<12 { output.stage(.noteOn(channel: 0, note: UInt8(note), velocity: 1), from: port, at: note) }
        let first = output.writeStaged(0..<12)
        XCTAssertEqual(first.error?.code, -EAGAIN)
        XCTAssertEqual(first.error?.call, "snd_seq_event_output_direct")
        // The 8-event pool takes 7 here (6.1): some, not all.
        XCTAssertTrue((1...8).contains(first.written), "\(first.written)")
        let rest = output.writeStaged(first.written..<12)
        XCTAssertEqual(rest.written, 0)
        XCTAssertEqual(rest.error?.code, -EAGAIN)
    }

    func testAseqdumpSeesNotesAndControllersFromOurPort() throws {
        let aseqdump = try TestEnvironment.tool("aseqdump", package: "alsa-utils")
        let client = try SequencerClient(name: "aseqosc-dump-test")
        let port = try client.createPort(name: "out", direction: .output)
        // stdbuf: aseqdump's stdout is block-buffered into a pipe; lines are wanted as they come.
        let dump = BackgroundProcess("/usr/bin/stdbuf", ["-oL", aseqdump, "-p", "\(client.clientID):\(port)"])
        try dump.start()
        defer { dump.stop() }
        // aseqdump subscribes to the port before it prints its header.
        XCTAssertTrue(dump.waitForOutput { $0.contains("Source") }, dump.standardOutput)

        try client.send(.noteOn(channel: 2, note: 60, velocity: 100), from: port)
        try client.send(.controlChange(channel: 0, controller: 74, value: 12), from: port)
        try client.send(MIDIEvent(.controlChange14, channel: 1, value: 9000, parameter: 1), from: port)
        try client.send(MIDIEvent(.nrpn, channel: 0, value: 500, parameter: 300), from: port)
        try client.send(.pitchBend(channel: 0, bend: -100), from: port)
        XCTAssertTrue(dump.waitForOutput { $0.contains("Pitch bend") }, dump.standardOutput)
        let text = dump.standardOutput
        XCTAssertTrue(text.contains("Note on                 2, note 60, velocity 100"), text)
        XCTAssertTrue(text.contains("Control change          0, controller 74, value 12"), text)
        // 14-bit controllers and NRPN leave as plain control changes: 9000 = 70 << 7 | 40;
        // parameter 300 = 2 << 7 | 44, value 500 = 3 << 7 | 116.
        for (channel, controller, value) in [(1, 1, 70), (1, 33, 40), (0, 99, 2), (0, 98, 44), (0, 6, 3), (0, 38, 116)]
        {
            let line = "Control change          \(channel), controller \(controller), value \(value)"
            XCTAssertTrue(text.contains(line), "\(line)\n\(text)")
        }
        XCTAssertTrue(text.contains("Pitch bend              0, value -100"), text)
    }
}
