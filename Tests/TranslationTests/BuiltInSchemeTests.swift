import MIDI
import MIDIToOSC
import OSCMapping
import OSCToMIDI
import Testing

/// What one built-in scheme sends for one kind of event: an address and arguments, or nothing.
struct Expectation: Sendable, CustomTestStringConvertible {
    var scheme: String
    var kind: MIDIEventKind
    var address: String?
    var arguments: [Argument]

    init(_ scheme: String, _ kind: MIDIEventKind, _ address: String?, _ arguments: [Argument] = []) {
        self.scheme = scheme
        self.kind = kind
        self.address = address
        self.arguments = arguments
    }

    var testDescription: String { "\(scheme) \(kind)" }
}

private let defaultExpectations: [Expectation] = [
    Expectation("default", .noteOn, "/midi/VirMIDI_0-0/3/note_on", [.i(60), .i(100)]),
    Expectation("default", .noteOff, "/midi/VirMIDI_0-0/3/note_off", [.i(60), .i(64)]),
    Expectation("default", .polyPressure, "/midi/VirMIDI_0-0/3/poly_pressure", [.i(60), .i(34)]),
    Expectation("default", .controlChange, "/midi/VirMIDI_0-0/3/cc", [.i(7), .i(101)]),
    Expectation("default", .programChange, "/midi/VirMIDI_0-0/3/program", [.i(5)]),
    Expectation("default", .channelPressure, "/midi/VirMIDI_0-0/3/pressure", [.i(51)]),
    Expectation("default", .pitchBend, "/midi/VirMIDI_0-0/3/pitch_bend", [.i(-4095)]),
    Expectation("default", .controlChange14, "/midi/VirMIDI_0-0/3/cc14", [.i(7), .i(1000)]),
    Expectation("default", .rpn, "/midi/VirMIDI_0-0/3/rpn", [.i(0), .i(8192)]),
    Expectation("default", .nrpn, "/midi/VirMIDI_0-0/3/nrpn", [.i(1000), .i(300)]),
    Expectation("default", .mtcQuarterFrame, "/midi/VirMIDI_0-0/mtc_quarter_frame", [.i(0x23)]),
    Expectation("default", .songPosition, "/midi/VirMIDI_0-0/song_position", [.i(4112)]),
    Expectation("default", .songSelect, "/midi/VirMIDI_0-0/song_select", [.i(5)]),
    Expectation("default", .tuneRequest, "/midi/VirMIDI_0-0/tune_request"),
    Expectation("default", .clock, "/midi/VirMIDI_0-0/clock"),
    Expectation("default", .start, "/midi/VirMIDI_0-0/start"),
    Expectation("default", .continue, "/midi/VirMIDI_0-0/continue"),
    Expectation("default", .stop, "/midi/VirMIDI_0-0/stop"),
    Expectation("default", .activeSensing, "/midi/VirMIDI_0-0/active_sensing"),
    Expectation("default", .reset, "/midi/VirMIDI_0-0/reset"),
    Expectation("default", .sysex, "/midi/VirMIDI_0-0/sysex", [.b(identityRequest)]),
]

// The same MIDI bytes as the m2o capture in docs/OSC.md, channel 3 instead of the capture's mix.
private let osmidExpectations: [Expectation] = [
    Expectation("osmid", .noteOn, "/midi/virmidi_0-0/1/3/note_on", [.i(60), .i(100)]),
    Expectation("osmid", .noteOff, "/midi/virmidi_0-0/1/3/note_off", [.i(60), .i(64)]),
    Expectation("osmid", .polyPressure, "/midi/virmidi_0-0/1/3/polyphonic_key_pressure", [.i(60), .i(34)]),
    Expectation("osmid", .controlChange, "/midi/virmidi_0-0/1/3/control_change", [.i(7), .i(101)]),
    Expectation("osmid", .programChange, "/midi/virmidi_0-0/1/3/program_change", [.i(5)]),
    Expectation("osmid", .channelPressure, "/midi/virmidi_0-0/1/3/channel_pressure", [.i(51)]),
    Expectation("osmid", .pitchBend, "/midi/virmidi_0-0/1/3/pitch_bend", [.i(4097)]),
    Expectation("osmid", .controlChange14, nil),
    Expectation("osmid", .rpn, nil),
    Expectation("osmid", .nrpn, nil),
    Expectation("osmid", .mtcQuarterFrame, "/midi/virmidi_0-0/1/MTC", [.i(35)]),
    Expectation("osmid", .songPosition, "/midi/virmidi_0-0/1/song_position", [.i(16), .i(32)]),
    Expectation("osmid", .songSelect, "/midi/virmidi_0-0/1/song_select", [.i(5)]),
    Expectation("osmid", .tuneRequest, "/midi/virmidi_0-0/1/tune_request"),
    Expectation("osmid", .clock, "/midi/virmidi_0-0/1/clock"),
    Expectation("osmid", .start, "/midi/virmidi_0-0/1/start"),
    Expectation("osmid", .continue, "/midi/virmidi_0-0/1/continue"),
    Expectation("osmid", .stop, "/midi/virmidi_0-0/1/stop"),
    Expectation("osmid", .activeSensing, "/midi/virmidi_0-0/1/active_sensing"),
    Expectation("osmid", .reset, "/midi/virmidi_0-0/1/unknown_message"),
    Expectation("osmid", .sysex, "/midi/virmidi_0-0/1/sysex", [.i(126), .i(127), .i(6), .i(1)]),
]

// TouchOSC's `m` byte order: port, data 2, data 1, status (docs/OSC.md).
private let touchOSCExpectations: [Expectation] = [
    Expectation("touchosc", .noteOn, "/midi", [.m(1, 100, 60, 0x92)]),
    Expectation("touchosc", .noteOff, "/midi", [.m(1, 64, 60, 0x82)]),
    Expectation("touchosc", .polyPressure, "/midi", [.m(1, 34, 60, 0xA2)]),
    Expectation("touchosc", .controlChange, "/midi", [.m(1, 101, 7, 0xB2)]),
    Expectation("touchosc", .programChange, "/midi", [.m(1, 0, 5, 0xC2)]),
    Expectation("touchosc", .channelPressure, "/midi", [.m(1, 0, 51, 0xD2)]),
    Expectation("touchosc", .pitchBend, "/midi", [.m(1, 0x20, 0x01, 0xE2)]),
    Expectation("touchosc", .controlChange14, nil),
    Expectation("touchosc", .rpn, nil),
    Expectation("touchosc", .nrpn, nil),
    Expectation("touchosc", .mtcQuarterFrame, "/midi", [.m(1, 0, 0x23, 0xF1)]),
    Expectation("touchosc", .songPosition, "/midi", [.m(1, 0x20, 0x10, 0xF2)]),
    Expectation("touchosc", .songSelect, "/midi", [.m(1, 0, 5, 0xF3)]),
    Expectation("touchosc", .tuneRequest, "/midi", [.m(1, 0, 0, 0xF6)]),
    Expectation("touchosc", .clock, "/midi", [.m(1, 0, 0, 0xF8)]),
    Expectation("touchosc", .start, "/midi", [.m(1, 0, 0, 0xFA)]),
    Expectation("touchosc", .continue, "/midi", [.m(1, 0, 0, 0xFB)]),
    Expectation("touchosc", .stop, "/midi", [.m(1, 0, 0, 0xFC)]),
    Expectation("touchosc", .activeSensing, "/midi", [.m(1, 0, 0, 0xFE)]),
    Expectation("touchosc", .reset, "/midi", [.m(1, 0, 0, 0xFF)]),
    Expectation("touchosc", .sysex, "/sysex", [.b(identityRequest)]),
]

@Suite struct BuiltInSchemeTests {
    @Test func everyKindHasAnExpectationInEveryScheme() {
        for table in [defaultExpectations, osmidExpectations, touchOSCExpectations] {
            #expect(
                Set(table.map(\.kind)) == Set(MIDIEventKind.allCases) && table.count == MIDIEventKind.allCases.count)
        }
    }

    @Test(arguments: defaultExpectations + osmidExpectations + touchOSCExpectations)
    func formatterWritesWhatLibloBuilds(_ expectation: Expectation) throws {
        let scheme = try #require(OSCScheme.builtIns[expectation.scheme])
        let formatter = OSCEventFormatter(scheme: scheme, portNames: portNames, sysex: sysexStore)
        let bytes = formatted(sampleEvent(expectation.kind), formatter)
        guard let address = expectation.address else {
            #expect(bytes == nil)
            return
        }
        #expect(bytes == libloBytes(address, expectation.arguments))
    }

    @Test func noteOnWithZeroVelocityStaysNoteOnInOsmid() {
        let formatter = OSCEventFormatter(scheme: .osmid, portNames: portNames)
        var event = MIDIEvent.noteOn(channel: 0, note: 60, velocity: 0)
        event.port = 1
        #expect(formatted(event, formatter) == libloBytes("/midi/virmidi_0-0/1/1/note_on", [.i(60), .i(0)]))
    }

    @Test func sysexWithoutAStoreIsNotSent() {
        let formatter = OSCEventFormatter(scheme: .default, portNames: portNames, sysex: nil)
        #expect(formatted(sampleEvent(.sysex), formatter) == nil)
    }

    @Test func aBufferTooSmallReturnsFalse() {
        let formatter = OSCEventFormatter(scheme: .default, portNames: portNames)
        #expect(formatted(sampleEvent(.noteOn), formatter, capacity: 16) == nil)
    }

    @Test func aPortPastTheNamesIsNotSentWhereTheAddressNamesIt() {
        // The bridge names every input port it reads; a port past them is not one of its own.
        let formatter = OSCEventFormatter(scheme: .default, portNames: portNames)
        var event = sampleEvent(.clock)
        event.port = 12345
        #expect(formatted(event, formatter) == nil)
        let unnamed = OSCEventFormatter(scheme: .touchOSC, portNames: portNames)
        #expect(formatted(event, unnamed) != nil)
    }
}
