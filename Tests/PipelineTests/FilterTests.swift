import MIDI
import Pipeline
import Testing

/// Each case: an event, whether the filter keeps it, whether the inverted filter keeps it.
typealias FilterCase = (event: MIDIEvent, kept: Bool, keptInverted: Bool)

private func expectFilter(_ make: (Bool) -> Operator, _ event: MIDIEvent, kept: Bool, keptInverted: Bool) {
    #expect((run(make(false), event) != nil) == kept, "\(event)")
    #expect((run(make(true), event) != nil) == keptInverted, "inverted: \(event)")
    if let passed = run(make(false), event) { #expect(passed == event, "a filter never edits") }
}

@Suite struct FilterTests {
    @Test(
        arguments: [
            (on(0, 60), true, false), (cc(0, 7, 0), true, false), (bend(0, 0), false, true),
            (MIDIEvent(.clock), false, true), (MIDIEvent(.sysex), false, true), (off(0, 60), false, true),
        ] as [FilterCase])
    func kindFilterKeepsTheListedKinds(event: MIDIEvent, kept: Bool, keptInverted: Bool) {
        expectFilter(
            { .kindFilter(KindFilter([.noteOn, .controlChange], inverted: $0)) }, event, kept: kept,
            keptInverted: keptInverted)
    }

    @Test(
        arguments: [
            (on(0, 60), true, false), (on(15, 60), true, false), (on(1, 60), false, true),
            (cc(15, 1, 127), true, false), (bend(7, -8192), false, true),
            (MIDIEvent(.clock, channel: 3), true, true), (MIDIEvent(.start), true, true),
        ] as [FilterCase])
    func channelFilterJudgesOnlyChannelMessages(event: MIDIEvent, kept: Bool, keptInverted: Bool) {
        expectFilter(
            { .channelFilter(ChannelFilter([0, 15, 16], inverted: $0)) }, event, kept: kept,
            keptInverted: keptInverted)
    }

    @Test(
        arguments: [
            (on(0, 36), true, false), (on(0, 60), true, false), (on(0, 35), false, true), (on(0, 61), false, true),
            (on(0, 0), false, true), (on(0, 127), false, true), (off(0, 61), false, true),
            (poly(0, 40, 1), true, false),
            (cc(0, 30, 1), true, true), (bend(0, 8191), true, true),
        ] as [FilterCase])
    func noteRangeFilterJudgesOnlyNoteEvents(event: MIDIEvent, kept: Bool, keptInverted: Bool) {
        expectFilter(
            { .noteFilter(NoteRangeFilter(36...60, inverted: $0)) }, event, kept: kept,
            keptInverted: keptInverted)
    }

    @Test(
        arguments: [
            (on(0, 60, 64), true, false), (on(0, 60, 127), true, false), (on(0, 60, 63), false, true),
            (on(0, 60, 1), false, true), (on(0, 60, 0), true, true), (off(0, 60, 10), true, true),
            (off(0, 60, 127), true, true), (cc(0, 1, 1), true, true),
        ] as [FilterCase])
    func velocityFilterNeverDropsANoteEnd(event: MIDIEvent, kept: Bool, keptInverted: Bool) {
        expectFilter(
            { .velocityFilter(VelocityFilter(64...127, inverted: $0)) }, event, kept: kept,
            keptInverted: keptInverted)
    }

    @Test(
        arguments: [
            (cc(0, 0, 0), true, false), (cc(0, 7, 1), true, false), (cc(0, 64, 127), true, false),
            (cc(0, 127, 0), true, false), (cc(0, 1, 0), false, true), (cc(0, 63, 0), false, true),
            (cc(0, 65, 0), false, true), (cc14(0, 7, 16383), true, false), (cc14(0, 1, 0), false, true),
            (on(0, 7), true, true), (bend(0, 0), true, true),
        ] as [FilterCase])
    func controllerFilterJudgesOnlyControlChanges(event: MIDIEvent, kept: Bool, keptInverted: Bool) {
        expectFilter(
            { .controllerFilter(ControllerFilter([0, 7, 64, 127, 200], inverted: $0)) }, event,
            kept: kept, keptInverted: keptInverted)
    }

    @Test(
        arguments: [
            (on(0, 60, port: 0), true, false), (on(0, 60, port: 3), true, false), (on(0, 60, port: 255), true, false),
            (on(0, 60, port: 1), false, true), (on(0, 60, port: 256), false, true),
            (on(0, 60, port: 65535), false, true),
        ] as [FilterCase])
    func portFilterKeepsTheListedPorts(event: MIDIEvent, kept: Bool, keptInverted: Bool) {
        expectFilter(
            { .portFilter(PortFilter(PortSet([0, 3, 255, 256]), inverted: $0)) }, event, kept: kept,
            keptInverted: keptInverted)
    }

    @Test func portSetAllHoldsEveryPortBelowItsCapacity() {
        #expect(PortSet.all.contains(0))
        #expect(PortSet.all.contains(255))
        #expect(!PortSet.all.contains(256))
        #expect(PortSet([1, 2]) == PortSet([2, 1]))
    }
}
