import MIDI
import MIDIOSC
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
        ("90 3C 64", "2f6d6964692f7669726d6964695f302d302f312f312f6e6f74655f6f6e0000002c6969000000003c00000064"),
        ("E5 00 40", "2f6d6964692f7669726d6964695f302d302f312f362f70697463685f62656e64000000002c69000000002000"),
        (
            "F0 7E 7F 06 01 F7",
            "2f6d6964692f7669726d6964695f302d302f312f73797365780000002c696969690000000000007e0000007f0000000600000001"
        ),
        ("F8", "2f6d6964692f7669726d6964695f302d302f312f636c6f636b0000002c000000"),
        (
            "F2 10 20",
            "2f6d6964692f7669726d6964695f302d302f312f736f6e675f706f736974696f6e0000002c6969000000001000000020"
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
        let packets = Self.osmidOutput("91 3C 64", portNames: ["My Synth: #*,/?[]{}X"], port: 0)
        #expect(packets == [libloBytes("/midi/my_synth:__________x/0/2/note_on", [.i(60), .i(100)])])
    }
}
