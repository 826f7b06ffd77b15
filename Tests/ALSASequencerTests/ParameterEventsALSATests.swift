import ALSASequencer
import Foundation
import MIDI
import TestSupport
import XCTest

/// What the kernel makes of ALSA's assembled events (`CONTROL14`, `REGPARAM`, `NONREGPARAM`) at
/// the raw MIDI side of a virmidi card: nothing. snd-virmidi decodes each event into a 4-byte
/// buffer, too small for the controller sequences these become, and drops them without a word
/// (kernel 6.1). So `aseqosc send` writes 14-bit controllers, RPN and NRPN as plain controllers,
/// which every port passes on; software clients such as aseqdump do get the assembled events.
final class ParameterEventsALSATests: XCTestCase {
    override func setUpWithError() throws {
        try TestEnvironment.requireSequencer()
    }

    func testVirmidiDropsAssembledControllerEventsSilently() throws {
        let amidi = try TestEnvironment.tool("amidi", package: "alsa-utils")
        let client = try SequencerClient(name: "aseqosc-param-test")
        let port = try client.createPort(name: "out", direction: .output)
        try client.connect(from: port, to: PortAddress(client: 16, port: 0))
        let dump = BackgroundProcess(amidi, ["-p", "hw:0,0", "-d", "-t", "2"])
        try dump.start()
        usleep(500_000)

        try client.send(MIDIEvent(.controlChange14, channel: 1, value: 9000, parameter: 1), from: port)
        try client.send(MIDIEvent(.nrpn, channel: 1, value: 500, parameter: 300), from: port)
        try client.send(MIDIEvent(.rpn, channel: 2, value: 2, parameter: 0), from: port)
        try client.send(.noteOn(channel: 0, note: 60, velocity: 1), from: port)

        // Only the note arrives: the three assembled events vanished.
        XCTAssertEqual(dump.wait(timeout: 15).standardOutput.filter(\.isHexDigit), "903C01")
    }
}
