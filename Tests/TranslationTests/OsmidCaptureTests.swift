import MIDI
import MIDIToOSC
import OSCMapping
import OSCToMIDI
import Testing

/// Replays the MIDI that was played into Debian's `m2o` 0.8.0 (docs/OSC.md, "osmid") and
/// compares with what `oscdump -L` and a raw UDP listener captured from it.
@Suite struct OsmidCaptureTests {
    /// `amidi -S` bytes played into "VirMIDI 0-0" (port id 1), and the `oscdump` line m2o produced.
    static let capture: [(midi: String, oscdump: String)] = [
        ("90 3C 64", "/midi/virmidi_0-0/1/1/note_on ii 60 100"),
        ("90 3C 00", "/midi/virmidi_0-0/1/1/note_on ii 60 0"),
        ("80 3C 40", "/midi/virmidi_0-0/1/1/note_off ii 60 64"),
        ("9F 7F 7F", "/midi/virmidi_0-0/1/16/note_on ii 127 127"),
        ("A1 3C 22", "/midi/virmidi_0-0/1/2/polyphonic_key_pressure ii 60 34"),
        ("B2 07 65", "/midi/virmidi_0-0/1/3/control_change ii 7 101"),
        ("C3 05", "/midi/virmidi_0-0/1/4/program_change i 5"),
        ("D4 33", "/midi/virmidi_0-0/1/5/channel_pressure i 51"),
        ("E5 00 40", "/midi/virmidi_0-0/1/6/pitch_bend i 8192"),
        ("E5 00 00", "/midi/virmidi_0-0/1/6/pitch_bend i 0"),
        ("E5 7F 7F", "/midi/virmidi_0-0/1/6/pitch_bend i 16383"),
        ("E5 01 20", "/midi/virmidi_0-0/1/6/pitch_bend i 4097"),
        ("F0 7E 7F 06 01 F7", "/midi/virmidi_0-0/1/sysex iiii 126 127 6 1"),
        ("F0 43 10 4C 00 00 7E 00 F7", "/midi/virmidi_0-0/1/sysex iiiiiii 67 16 76 0 0 126 0"),
        ("F8", "/midi/virmidi_0-0/1/clock "),
        ("FA", "/midi/virmidi_0-0/1/start "),
        ("FB", "/midi/virmidi_0-0/1/continue "),
        ("FC", "/midi/virmidi_0-0/1/stop "),
        ("FE", "/midi/virmidi_0-0/1/active_sensing "),
        ("FF", "/midi/virmidi_0-0/1/unknown_message "),
        ("F2 10 20", "/midi/virmidi_0-0/1/song_position ii 16 32"),
        ("F3 05", "/midi/virmidi_0-0/1/song_select i 5"),
        ("F1 23", "/midi/virmidi_0-0/1/MTC i 35"),
        ("F6", "/midi/virmidi_0-0/1/tune_request "),
    ]

    /// Datagrams captured byte for byte from a second `m2o -o` port.
    static let raw: [(midi: String, hex: String)] = [
        (
            "90 3C 64",
            "2f6d6964692f7669726d6964695f302d302f312f312f6e6f74655f6f6e0000002c6969000000003c00000064"
        ),
        (
            "80 3C 40",
            "2f6d6964692f7669726d6964695f302d302f312f312f6e6f74655f6f666600002c6969000000003c00000040"
        ),
        (
            "9F 7F 7F",
            "2f6d6964692f7669726d6964695f302d302f312f31362f6e6f74655f6f6e00002c6969000000007f0000007f"
        ),
        (
            "A1 3C 22",
            "2f6d6964692f7669726d6964695f302d302f312f322f706f6c7970686f6e69635f6b65795f70726573737572650000002c6969000000003c00000022"
        ),
        (
            "B2 07 65",
            "2f6d6964692f7669726d6964695f302d302f312f332f636f6e74726f6c5f6368616e6765000000002c6969000000000700000065"
        ),
        (
            "C3 05",
            "2f6d6964692f7669726d6964695f302d302f312f342f70726f6772616d5f6368616e6765000000002c69000000000005"
        ),
        (
            "D4 33",
            "2f6d6964692f7669726d6964695f302d302f312f352f6368616e6e656c5f707265737375726500002c69000000000033"
        ),
        (
            "E5 00 40",
            "2f6d6964692f7669726d6964695f302d302f312f362f70697463685f62656e64000000002c69000000002000"
        ),
        (
            "E5 00 00",
            "2f6d6964692f7669726d6964695f302d302f312f362f70697463685f62656e64000000002c69000000000000"
        ),
        (
            "E5 7F 7F",
            "2f6d6964692f7669726d6964695f302d302f312f362f70697463685f62656e64000000002c69000000003fff"
        ),
        (
            "E5 01 20",
            "2f6d6964692f7669726d6964695f302d302f312f362f70697463685f62656e64000000002c69000000001001"
        ),
        (
            "F0 7E 7F 06 01 F7",
            "2f6d6964692f7669726d6964695f302d302f312f73797365780000002c696969690000000000007e0000007f0000000600000001"
        ),
        (
            "F0 43 10 4C 00 00 7E 00 F7",
            "2f6d6964692f7669726d6964695f302d302f312f73797365780000002c696969696969690000000000000043000000100000004c00000000000000000000007e00000000"
        ),
        (
            "F8",
            "2f6d6964692f7669726d6964695f302d302f312f636c6f636b0000002c000000"
        ),
        (
            "FA",
            "2f6d6964692f7669726d6964695f302d302f312f73746172740000002c000000"
        ),
        (
            "FB",
            "2f6d6964692f7669726d6964695f302d302f312f636f6e74696e7565000000002c000000"
        ),
        (
            "FC",
            "2f6d6964692f7669726d6964695f302d302f312f73746f70000000002c000000"
        ),
        (
            "FE",
            "2f6d6964692f7669726d6964695f302d302f312f6163746976655f73656e73696e6700002c000000"
        ),
        (
            "FF",
            "2f6d6964692f7669726d6964695f302d302f312f756e6b6e6f776e5f6d657373616765002c000000"
        ),
        (
            "F2 10 20",
            "2f6d6964692f7669726d6964695f302d302f312f736f6e675f706f736974696f6e0000002c6969000000001000000020"
        ),
        (
            "F3 05",
            "2f6d6964692f7669726d6964695f302d302f312f736f6e675f73656c656374002c69000000000005"
        ),
        (
            "F1 23",
            "2f6d6964692f7669726d6964695f302d302f312f4d5443002c69000000000023"
        ),
        (
            "F6",
            "2f6d6964692f7669726d6964695f302d302f312f74756e655f72657175657374000000002c000000"
        ),
    ]

    /// The osmid formatter's output for MIDI bytes written as `amidi -S` takes them.
    static func osmidOutput(_ midi: String, portNames: [String] = portNames, port: UInt16 = 1) -> [[UInt8]] {
        let store = SysExStore(slots: 4, capacity: 64)
        let formatter = OSCEventFormatter(scheme: .osmid, portNames: portNames, sysex: store)
        var parser = MIDIByteParser(store: store, port: port)
        let bytes = midi.split(separator: " ").map { UInt8($0, radix: 16)! }
        var packets: [[UInt8]] = []
        bytes.withUnsafeBytes { chunk in
            parser.parse(chunk) { event in
                if let packet = formatted(event, formatter) { packets.append(packet) }
            }
        }
        return packets
    }

    @Test(arguments: capture.indices)
    func matchesWhatOscdumpPrinted(_ index: Int) {
        let (midi, line) = Self.capture[index]
        let words = line.split(separator: " ", omittingEmptySubsequences: false)
        let address = String(words[0])
        let arguments = words.dropFirst(2).filter { !$0.isEmpty }.map { Argument.i(Int32($0)!) }
        #expect(Self.osmidOutput(midi) == [libloBytes(address, arguments)], "\(midi)")
    }

    @Test(arguments: raw.indices)
    func matchesTheCapturedDatagramsByteForByte(_ index: Int) {
        let (midi, hex) = Self.raw[index]
        #expect(Self.osmidOutput(midi) == [hexBytes(hex)], "\(midi)")
    }

    @Test func portNamesAreSanitisedAsM2oDoes() {
        // m2o -v 'My Synth: #*,/?[]{}X' created port id 0; its capture:
        // /midi/my_synth:__________x/0/2/note_on ii 60 100
        let name = ["My Synth: #*,/?[]{}X"]
        #expect(
            Self.osmidOutput("91 3C 64", portNames: name, port: 0) == [
                hexBytes(
                    "2f6d6964692f6d795f73796e74683a5f5f5f5f5f5f5f5f5f5f782f302f322f6e6f74655f6f6e00002c6969000000003c00000064"
                )
            ])
        #expect(
            Self.osmidOutput("FC", portNames: name, port: 0) == [
                hexBytes("2f6d6964692f6d795f73796e74683a5f5f5f5f5f5f5f5f5f5f782f302f73746f700000002c000000")
            ])
    }
}
