import MIDI
import OSC
import Testing
import ValueStore

@testable import Bridge

/// What OSCQuery reads of the last-value stores: the `default` scheme's methods that hold a
/// value (an output's spelled as the namespace lists it, an input's as the scheme sends it), their
/// arguments as that scheme sends them, an output's value before an input's at the same address,
/// and one changed path per method.
@Suite struct LiveValuesTests {
    @Test func eachMethodReadsItsSlotAsTheDefaultSchemeSendsIt() {
        let synth = PortValues(port: 0)
        let keys = PortValues(port: 3)
        let values = LiveValues()
        values.update(outputs: [("My Synth", synth)], inputs: [("keys", keys)])
        #expect(values.isReadable("/midi/my_synth/1/cc"))
        #expect(values.isReadable("/midi/keys/16/nrpn"))
        #expect(!values.isReadable("/midi/my_synth/1/note_on"))
        #expect(!values.isReadable("/midi/my_synth/17/cc"))
        #expect(!values.isReadable("/midi/nobody/1/cc"))
        #expect(values.value(at: "/midi/my_synth/1/cc") == nil)

        synth.record(.controlChange(channel: 0, controller: 7, value: 100))
        synth.record(.controlChange(channel: 0, controller: 10, value: 64))
        synth.record(.pitchBend(channel: 1, bend: -200))
        synth.record(MIDIEvent(.programChange, channel: 2, data1: 5))
        keys.record(MIDIEvent(.nrpn, channel: 15, value: 9000, parameter: 300))
        #expect(values.value(at: "/midi/my_synth/1/cc") == [.int32(10), .int32(64)])
        #expect(values.value(at: "/midi/my_synth/2/pitch_bend") == [.int32(-200)])
        #expect(values.value(at: "/midi/my_synth/3/program") == [.int32(5)])
        #expect(values.value(at: "/midi/keys/16/nrpn") == [.int32(300), .int32(9000)])

        var changed: [String] = []
        values.takeChanges { changed.append($0) }
        #expect(
            changed == [
                "/midi/my_synth/1/cc", "/midi/my_synth/2/pitch_bend", "/midi/my_synth/3/program", "/midi/keys/16/nrpn",
            ])
        values.takeChanges { Issue.record("changed again: \($0)") }
    }

    @Test func anOutputsValueComesBeforeAnInputsOfTheSameName() {
        let output = PortValues(port: 0)
        let input = PortValues(port: 0)
        let values = LiveValues()
        values.update(outputs: [("bridge", output)], inputs: [("bridge", input)])
        input.record(.controlChange(channel: 0, controller: 1, value: 20))
        #expect(values.value(at: "/midi/bridge/1/cc") == [.int32(1), .int32(20)])
        output.record(.controlChange(channel: 0, controller: 2, value: 30))
        #expect(values.value(at: "/midi/bridge/1/cc") == [.int32(2), .int32(30)])
    }
}
