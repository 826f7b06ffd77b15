import MIDI
import Pipeline
import Testing

/// Each case: an event and what the operator makes of it (`nil`: dropped).
typealias TransformCase = (event: MIDIEvent, expected: MIDIEvent?)

@Suite struct TransformTests {
    @Test(
        arguments: [
            (on(0, 60), on(0, 72)), (on(0, 115), on(0, 127)), (on(0, 116), nil), (off(0, 116), nil),
            (off(3, 0, 64), off(3, 12, 64)), (poly(0, 0, 5), poly(0, 12, 5)), (cc(0, 60, 1), cc(0, 60, 1)),
        ] as [TransformCase])
    func transposeUpDropsNotesAbove127(event: MIDIEvent, expected: MIDIEvent?) {
        #expect(run(.transpose(Transpose(semitones: 12)), event) == expected)
    }

    @Test(
        arguments: [
            (on(0, 12), on(0, 0)), (on(0, 11), nil), (on(0, 0), nil), (on(0, 127), on(0, 115)),
            (poly(0, 5, 1), nil), (bend(0, -8192), bend(0, -8192)),
        ] as [TransformCase])
    func transposeDownDropsNotesBelow0(event: MIDIEvent, expected: MIDIEvent?) {
        #expect(run(.transpose(Transpose(semitones: -12)), event) == expected)
    }

    @Test(
        arguments: [
            (on(0, 60), on(9, 60)), (on(9, 60), on(0, 60)), (on(5, 60), on(5, 60)), (cc(0, 1, 2), cc(9, 1, 2)),
            (bend(0, 8191), bend(9, 8191)), (off(15, 1), off(15, 1)),
            (MIDIEvent(.clock), MIDIEvent(.clock)),
        ] as [TransformCase])
    func channelMapRewritesOnlyTheNamedChannels(event: MIDIEvent, expected: MIDIEvent?) {
        #expect(run(.channelMap(ChannelMap([(0, 9), (9, 0), (20, 1)])), event) == expected)
    }

    @Test func channelMapAllToMovesEveryChannel() {
        let map = ChannelMap(allTo: 15)
        for channel in UInt8(0)..<16 { #expect(map.map(channel) == 15) }
    }

    @Test(
        arguments: [
            (cc(0, 1, 64), cc(0, 11, 64)), (cc(0, 127, 0), cc(0, 0, 0)), (cc(0, 2, 127), cc(0, 2, 127)),
            (on(0, 1), on(0, 1)), (cc14(0, 1, 16383), cc14(0, 1, 16383)),
        ] as [TransformCase])
    func controllerMapRenumbersControlChanges(event: MIDIEvent, expected: MIDIEvent?) {
        #expect(run(.controllerMap(ControllerMap([(1, 11), (127, 0), (128, 1)])), event) == expected)
    }

    @Test(arguments: [
        (NoteOffStyle.noteOff, on(0, 60, 0), off(0, 60, 0)),
        (.noteOff, off(0, 60, 40), off(0, 60, 40)),
        (.noteOff, on(0, 60, 1), on(0, 60, 1)),
        (.noteOnWithZeroVelocity, off(0, 60, 40), on(0, 60, 0)),
        (.noteOnWithZeroVelocity, on(0, 60, 0), on(0, 60, 0)),
        (.noteOnWithZeroVelocity, cc(0, 1, 0), cc(0, 1, 0)),
    ])
    func noteOffNormalisationRewritesNoteEndsOnly(style: NoteOffStyle, event: MIDIEvent, expected: MIDIEvent) {
        #expect(run(.normaliseNoteOffs(style), event) == expected)
    }
}
