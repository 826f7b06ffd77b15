import MIDI
import OSC
import OSCMapping
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

    @Test func theNewestOfAnOutputsAndAnInputsValueOfTheSameNameIsShown() {
        let output = PortValues(port: 0)
        let input = PortValues(port: 0)
        let values = LiveValues()
        values.update(outputs: [("bridge", output)], inputs: [("bridge", input)])
        input.record(.controlChange(channel: 0, controller: 1, value: 20))
        #expect(values.value(at: "/midi/bridge/1/cc") == [.int32(1), .int32(20)])
        output.record(.controlChange(channel: 0, controller: 2, value: 30))
        #expect(values.value(at: "/midi/bridge/1/cc") == [.int32(2), .int32(30)])
        input.record(.controlChange(channel: 0, controller: 3, value: 40))
        #expect(values.value(at: "/midi/bridge/1/cc") == [.int32(3), .int32(40)])
    }

    static let fader = OSCMappingRule(
        address: try! OSCMappingAddress("/fader/{n}"), argumentTypes: Array("f".utf8), output: .port(0),
        kind: .controlChange,
        values: [
            nil, OSCMappingValue(.capture(0)),
            OSCMappingValue(.argument(0), scale: OSCLinearScale(input: (0, 1), output: (0, 127))),
        ])

    /// `/fader/{n}` -> controller n: each listed address reads its controller, from the output
    /// (OSC a client sent) and from a destination the rule is sent back to (MIDI played), the
    /// newest of the two, scaled back; a controller no address lists changes nothing listed.
    @Test func aMappedAddressReadsItsControllerFromEitherSideScaledBack() {
        let synth = PortValues(port: 0)
        let sentBack = PortValues(port: 2)
        let values = LiveValues()
        values.update(
            outputs: [("synth", synth)], inputs: [], families: [], mappings: [Self.fader],
            sent: [LiveValues.Sent(mappings: [Self.fader], touchOSC: false, tables: [sentBack])])
        #expect(values.isReadable("/fader/7"))
        #expect(values.isReadable("/fader/127"))
        #expect(!values.isReadable("/fader/128"))
        #expect(values.value(at: "/fader/7") == nil)

        synth.record(.controlChange(channel: 0, controller: 7, value: 64))
        #expect(values.value(at: "/fader/7") == [.float32(Float(64.0 / 127.0))])
        var changed: [String] = []
        values.takeChanges { changed.append($0) }
        #expect(changed == ["/fader/7"])

        sentBack.record(.controlChange(channel: 0, controller: 7, value: 127))
        sentBack.record(.controlChange(channel: 1, controller: 8, value: 127))
        #expect(values.value(at: "/fader/7") == [.float32(1)])
        #expect(values.value(at: "/fader/8") == nil, "channel 2 is not the rule's")
        values.takeChanges { changed.append($0) }
        #expect(changed == ["/fader/7", "/fader/7"])
    }

    /// An NRPN rule with its parameter from a capture reads that parameter, which the store
    /// reports as its channel's last word.
    @Test func aMappedParameterReadsItsNumberedValue() throws {
        let rule = OSCMappingRule(
            address: try OSCMappingAddress("/param/{p}"), argumentTypes: Array("i".utf8), output: .port(0),
            kind: .nrpn,
            values: [
                OSCMappingValue(.constant(2)),
                // A range, so the addresses can be listed: parameters 0-1000.
                OSCMappingValue(.capture(0), scale: OSCLinearScale(input: (0, 1000), output: (0, 1000))),
                OSCMappingValue(.argument(0)),
            ])
        let synth = PortValues(port: 0)
        let values = LiveValues()
        values.update(outputs: [("synth", synth)], inputs: [], families: [], mappings: [rule])
        synth.record(MIDIEvent(.nrpn, channel: 1, value: 1000, parameter: 300))
        synth.record(MIDIEvent(.nrpn, channel: 1, value: 2000, parameter: 301))
        #expect(values.value(at: "/param/300") == [.int32(1000)])
        #expect(values.value(at: "/param/301") == [.int32(2000)])
        var changed: [String] = []
        values.takeChanges { changed.append($0) }
        #expect(changed == ["/param/301"], "one change a channel's last word reports")
    }

    /// osmid's addresses read the output's newest of its channels, channel first; the TouchOSC
    /// Bridge's `/midi` the newest message either way, in TouchOSC's byte order.
    @Test func osmidAndTouchOSCMethodsReadTheNewestOfTheirSlots() {
        let synth = PortValues(port: 0)
        let client = PortValues(port: 0)
        let values = LiveValues()
        values.update(
            outputs: [("synth", synth)], inputs: [], families: [.osmid, .touchosc],
            sent: [LiveValues.Sent(mappings: [], touchOSC: true, tables: [client])])
        synth.record(.controlChange(channel: 3, controller: 7, value: 99))
        #expect(values.value(at: "/synth/control_change") == [.int32(4), .int32(7), .int32(99)])
        #expect(values.value(at: "/midi") == [.midi(port: 0, status: 99, data1: 7, data2: 0xB3)])
        synth.record(.pitchBend(channel: 2, bend: 100))
        #expect(values.value(at: "/synth/pitch_bend") == [.int32(3), .int32(8292)])
        #expect(values.value(at: "/midi") == [.midi(port: 0, status: 0x40, data1: 0x64, data2: 0xE2)])
        client.record(.controlChange(channel: 0, controller: 1, value: 5))
        #expect(values.value(at: "/midi") == [.midi(port: 0, status: 5, data1: 1, data2: 0xB0)])
        #expect(!values.isReadable("/midi/synth/1/cc"), "the default scheme is not the input's")
    }
}
