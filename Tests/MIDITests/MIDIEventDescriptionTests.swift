import MIDI
import Testing

@Suite struct MIDIEventDescriptionTests {
    static let lines: [(MIDIEvent, String)] = [
        (.noteOn(channel: 0, note: 60, velocity: 100), "ch 1  note-on  C4 (60)  vel 100"),
        (.noteOff(channel: 15, note: 61, velocity: 0), "ch 16  note-off  C#4 (61)  vel 0"),
        (
            MIDIEvent(.polyPressure, channel: 1, data1: 21, data2: 7),
            "ch 2  poly-pressure  A0 (21)  7"
        ),
        (.controlChange(channel: 2, controller: 7, value: 100), "ch 3  control-change  7  100"),
        (MIDIEvent(.programChange, channel: 0, data1: 5), "ch 1  program-change  5"),
        (MIDIEvent(.channelPressure, channel: 0, data1: 64), "ch 1  channel-pressure  64"),
        (.pitchBend(channel: 0, bend: -200), "ch 1  pitch-bend  -200"),
        (MIDIEvent(.controlChange14, value: 8192, parameter: 1), "ch 1  control-change14  1  8192"),
        (MIDIEvent(.rpn, value: 256, parameter: 0), "ch 1  rpn  0  256"),
        (MIDIEvent(.nrpn, value: 5, parameter: 1234), "ch 1  nrpn  1234  5"),
        (MIDIEvent(.mtcQuarterFrame, data1: 0x35), "mtc-quarter-frame  type 3  value 5"),
        (MIDIEvent(.songPosition, value: 1024), "song-position  1024"),
        (MIDIEvent(.songSelect, data1: 3), "song-select  3"),
        (MIDIEvent(.tuneRequest), "tune-request"),
        (MIDIEvent(.clock), "clock"),
        (MIDIEvent(.activeSensing), "active-sensing"),
        (MIDIEvent(.sysex, sysex: SysExReference(slot: 0, length: 12)), "sysex  12 bytes"),
    ]

    @Test(arguments: lines)
    func eventsDescribeThemselvesLikeAseqdump(_ event: MIDIEvent, _ line: String) {
        #expect(event.description == line)
    }
}
