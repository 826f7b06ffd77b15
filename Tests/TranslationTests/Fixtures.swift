import MIDI
import MIDIToOSC
import OSCMapping
import OSCToMIDI
import OSC

/// The ports every scheme test formats for: events come from port 1, "VirMIDI 0-0", as in the
/// m2o capture (port 0 there was "Midi Through Port-0").
let portNames = ["Midi Through Port-0", "VirMIDI 0-0"]

/// One store for the whole test target, holding the SysEx message the fixtures refer to.
let sysexStore = SysExStore(slots: 4, capacity: 64)
let identityRequest: [UInt8] = [0xF0, 0x7E, 0x7F, 0x06, 0x01, 0xF7]
let identityRequestReference = sysexStore.store(identityRequest)!

/// One event of every kind, on channel 3 (2 on the wire), port 1.
func sampleEvent(_ kind: MIDIEventKind) -> MIDIEvent {
    var event =
        switch kind {
        case .noteOn: MIDIEvent(.noteOn, channel: 2, data1: 60, data2: 100)
        case .noteOff: MIDIEvent(.noteOff, channel: 2, data1: 60, data2: 64)
        case .polyPressure: MIDIEvent(.polyPressure, channel: 2, data1: 60, data2: 34)
        case .controlChange: MIDIEvent(.controlChange, channel: 2, data1: 7, data2: 101)
        case .programChange: MIDIEvent(.programChange, channel: 2, data1: 5)
        case .channelPressure: MIDIEvent(.channelPressure, channel: 2, data1: 51)
        // E2 01 20 on the wire: 0x20 * 128 + 1 = 4097 unsigned.
        case .pitchBend: MIDIEvent(.pitchBend, channel: 2, value: 4097 - 8192)
        case .controlChange14: MIDIEvent(.controlChange14, channel: 2, value: 1000, parameter: 7)
        case .rpn: MIDIEvent(.rpn, channel: 2, value: 8192, parameter: 0)
        case .nrpn: MIDIEvent(.nrpn, channel: 2, value: 300, parameter: 1000)
        case .mtcQuarterFrame: MIDIEvent(.mtcQuarterFrame, data1: 0x23)
        // F2 10 20 on the wire.
        case .songPosition: MIDIEvent(.songPosition, value: 0x20 * 128 + 0x10)
        case .songSelect: MIDIEvent(.songSelect, data1: 5)
        case .sysex: MIDIEvent(.sysex, sysex: identityRequestReference)
        default: MIDIEvent(kind)
        }
    event.port = 1
    return event
}

/// What the formatter writes for `event`, or nil when it writes nothing.
func formatted(_ event: MIDIEvent, _ formatter: OSCEventFormatter, capacity: Int = 512) -> [UInt8]? {
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: capacity, alignment: 4)
    defer { buffer.deallocate() }
    var writer = OSCWriter(buffer)
    guard formatter.write(event, into: &writer), let size = try? writer.finish() else { return nil }
    return Array(buffer.prefix(size))
}
