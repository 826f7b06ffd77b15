import ALSASequencer
import Endpoints
import Foundation
import MIDI
import TestSupport
import XCTest

/// ALSA's assembled events (`CONTROL14`, `REGPARAM`, `NONREGPARAM`) vanish at the raw MIDI side
/// of a virmidi card: snd-virmidi decodes each event into a 4-byte buffer, too small for the
/// controller sequences these become, and drops them without a word (kernel 6.1; seen here when
/// they were sent as such). So SequencerClient.send writes 14-bit controllers, RPN and NRPN as
/// their plain control change sequences, which every port passes on.
final class ParameterEventsALSATests: XCTestCase {
    override func setUpWithError() throws {
        try TestEnvironment.requireSequencer()
    }

    func testAssembledControllersReachTheRawSideAsControlChangeSequences() throws {
        let amidi = try TestEnvironment.tool("amidi", package: "alsa-utils")
        let client = try SequencerClient(name: "aseqosc-param-test")
        let port = try client.createPort(name: "out", direction: .output)
        try client.connect(from: port, to: PortAddress(client: 16, port: 0))
        let dump = BackgroundProcess(amidi, ["-p", "hw:0,0", "-d"])
        try dump.start()
        XCTAssertTrue(waitForRawMIDIReader("hw:0,0"), "amidi does not listen on hw:0,0")

        try client.send(MIDIEvent(.controlChange14, channel: 1, value: 9000, parameter: 1), from: port)
        try client.send(MIDIEvent(.nrpn, channel: 1, value: 500, parameter: 300), from: port)
        try client.send(MIDIEvent(.rpn, channel: 2, value: 2, parameter: 0), from: port)
        try client.send(.noteOn(channel: 0, note: 60, velocity: 1), from: port)

        // 9000 = 70 << 7 | 40; NRPN 300 = 2 << 7 | 44, 500 = 3 << 7 | 116; the kernel writes
        // running status for consecutive control changes on one channel.
        let expected = "B1 01 46 21 28 63 02 62 2C 06 03 26 74 B2 65 00 64 00 06 00 26 02 90 3C 01"
        XCTAssertEqual(
            stopRawMIDIDump(dump, device: "hw:0,0").standardOutput.filter(\.isHexDigit), expected.filter(\.isHexDigit))
    }
}
