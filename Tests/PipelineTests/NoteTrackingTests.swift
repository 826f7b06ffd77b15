import MIDI
import Pipeline
import TestSupport
import Testing

/// A chain, a note-on, the operators swapped in before the note-off, and what must come out.
struct SwapCase: Sendable, CustomTestStringConvertible {
    var name: String
    var before: [Operator]
    var after: [Operator]
    var noteOn: MIDIEvent?
    var noteOff: MIDIEvent?
    var testDescription: String { name }
}

@Suite struct NoteTrackingTests {
    static let swaps: [SwapCase] = [
        SwapCase(
            name: "transpose changes", before: [.transpose(Transpose(semitones: 12))],
            after: [.transpose(Transpose(semitones: -5))], noteOn: on(0, 72), noteOff: off(0, 72, 33)),
        SwapCase(
            name: "channel map changes", before: [.channelMap(ChannelMap([(0, 9)]))],
            after: [.channelMap(ChannelMap([(0, 3)]))], noteOn: on(9, 60), noteOff: off(9, 60, 33)),
        SwapCase(
            name: "velocity filter removed", before: [.velocityFilter(VelocityFilter(1...63))], after: [],
            noteOn: nil, noteOff: off(0, 60, 33)),
        SwapCase(
            name: "velocity filter added", before: [], after: [.velocityFilter(VelocityFilter(1...63))],
            noteOn: on(0, 60), noteOff: off(0, 60, 33)),
        SwapCase(
            name: "note pushed out of range", before: [.transpose(Transpose(semitones: 100))], after: [],
            noteOn: nil, noteOff: off(0, 60, 33)),
        SwapCase(
            name: "transpose added", before: [], after: [.transpose(Transpose(semitones: 100))],
            noteOn: on(0, 60), noteOff: off(0, 60, 33)),
        SwapCase(
            name: "kind filter blocks note-offs", before: [],
            after: [.kindFilter(KindFilter([.noteOff], inverted: true))],
            noteOn: on(0, 60), noteOff: off(0, 60, 33)),
        SwapCase(
            name: "note filter and channel filter added", before: [.velocity(VelocityCurve(.fixed(1)))],
            after: [.noteFilter(NoteRangeFilter(0...10)), .channelFilter(ChannelFilter([5]))],
            noteOn: on(0, 60, 1), noteOff: off(0, 60, 33)),
    ]

    @Test(arguments: swaps)
    func noteOffEndsTheNoteItsNoteOnSentAfterTheOperatorsChange(_ swap: SwapCase) {
        let route = route(swap.before)
        #expect(route.outputs(on(0, 60)) == (swap.noteOn.map { [Output($0)] } ?? []))
        route.replaceOperators(swap.after)
        #expect(route.outputs(off(0, 60, 33)) == (swap.noteOff.map { [Output($0)] } ?? []))
        #expect(route.heldNoteCount == 0)
        // A note-off whose note-on never went out passes through the operators as they are now.
        #expect(route.counters.snapshot.unmatchedNoteOffs == (swap.noteOn == nil ? 1 : 0))
    }

    @Test func noteOnWithZeroVelocityEndsTheNoteInItsOwnForm() {
        let route = route([.transpose(Transpose(semitones: 1))])
        _ = route.outputs(on(4, 127 - 1))
        route.replaceOperators([.transpose(Transpose(semitones: 50))])
        #expect(route.outputs(on(4, 126, 0)) == [Output(on(4, 127, 0))])
    }

    @Test func aRetriggeredKeyGoingOutAsAnotherNoteEndsTheFirst() {
        let route = route([.transpose(Transpose(semitones: 1))])
        #expect(route.outputs(on(0, 60)) == [Output(on(0, 61))])
        route.replaceOperators([.transpose(Transpose(semitones: 2))])
        #expect(route.outputs(on(0, 60, 90)) == [Output(off(0, 61)), Output(on(0, 62, 90))])
        #expect(route.outputs(on(0, 60, 80)) == [Output(on(0, 62, 80))], "same note: a plain retrigger")
        #expect(route.outputs(off(0, 60)) == [Output(off(0, 62))])
        #expect(route.outputs(off(0, 60)) == [Output(off(0, 62))], "already ended: passes again, harmlessly")
    }

    @Test func keySplitNoteOffsGoWhereTheirNoteOnsWent() {
        let route = route(
            Chain(
                [], destinations: [],
                then: .keySplit([
                    .init(0...59, Chain([], destinations: [0])),
                    .init(60...127, Chain([.transpose(Transpose(semitones: -12))], destinations: [1])),
                ])))
        #expect(route.outputs(on(0, 59)) == [Output(on(0, 59), to: 0)])
        #expect(route.outputs(on(0, 72)) == [Output(on(0, 60), to: 1)])
        // Move the split's input up an octave and the upper zone's transpose: old notes still end.
        route.replaceOperators([.transpose(Transpose(semitones: 12))])
        route.replaceOperators([.channelMap(ChannelMap(allTo: 7))], atBranch: [1])
        #expect(route.outputs(off(0, 59)) == [Output(off(0, 59), to: 0)])
        #expect(route.outputs(off(0, 72)) == [Output(off(0, 60), to: 1)])
        #expect(route.outputs(on(0, 59)) == [Output(on(7, 71), to: 1)])
        #expect(route.outputs(off(0, 59)) == [Output(off(7, 71), to: 1)])
        #expect(!route.replaceOperators([], atBranch: [2]))
    }

    @Test func withoutNormalisationANoteEndKeepsTheFormItArrivedIn() {
        let route = route([])
        _ = route.outputs(on(0, 60), on(0, 61))
        #expect(route.outputs(on(0, 60, 0), off(0, 61, 90)) == [Output(on(0, 60, 0)), Output(off(0, 61, 90))])
    }

    @Test func normalisationInTheParentAppliesToBranchesWithoutTheirOwn() {
        let route = route(
            Chain(
                [.normaliseNoteOffs(.noteOnWithZeroVelocity)], destinations: [],
                then: .fork([Chain([], destinations: [0]), Chain([.normaliseNoteOffs(.noteOff)], destinations: [1])])))
        _ = route.outputs(on(0, 60))
        #expect(route.outputs(off(0, 60, 40)) == [Output(on(0, 60, 0), to: 0), Output(off(0, 60, 40), to: 1)])
        _ = route.outputs(on(0, 60))
        #expect(route.outputs(on(0, 60, 0)) == [Output(on(0, 60, 0), to: 0), Output(off(0, 60, 0), to: 1)])
    }

    @Test func releaseAllEndsEverySentNoteOnceInEachLeafForm() {
        let route = route(
            Chain(
                [.transpose(Transpose(semitones: 12))], destinations: [0],
                then: .fork([
                    Chain(
                        [.channelMap(ChannelMap(allTo: 9)), .normaliseNoteOffs(.noteOnWithZeroVelocity)],
                        destinations: [1, 2])
                ])))
        _ = route.outputs(on(0, 60), on(15, 0), on(0, 116), on(3, 1, 0))
        #expect(route.heldNoteCount == 4)
        #expect(
            route.released() == [
                Output(off(0, 72), to: 0), Output(off(15, 12), to: 0),
                Output(on(9, 72, 0), to: 1), Output(on(9, 72, 0), to: 2),
                Output(on(9, 12, 0), to: 1), Output(on(9, 12, 0), to: 2),
            ])
        #expect(route.heldNoteCount == 0)
        #expect(route.released().isEmpty)
        // The key's own note-off after a release-all passes through the operators again.
        #expect(
            route.outputs(off(0, 60)) == [
                Output(off(0, 72), to: 0), Output(on(9, 72, 0), to: 1), Output(on(9, 72, 0), to: 2),
            ])
    }
}

/// A chain without operators treats notes, held keys and counters exactly as one whose
/// operators change nothing.
@Suite struct PlainChainTests {
    @Test func aChainWithoutOperatorsAgreesWithOneOfNoOpOperatorsEventForEvent() {
        // A transpose by 0 changes nothing.
        let plain = route([])
        let general = route([.transpose(Transpose(semitones: 0))])
        var seed: UInt64 = 0x5EED
        func next(_ bound: UInt64) -> UInt64 {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return (seed >> 33) % bound
        }
        for _ in 0..<5_000 {
            let channel = UInt8(next(3))
            let note = UInt8(60 + next(4))
            let event: MIDIEvent =
                switch next(5) {
                case 0, 1: on(channel, note, UInt8(next(3) * 60), port: UInt16(next(2)))
                case 2, 3: off(channel, note, UInt8(next(128)), port: UInt16(next(2)))
                default: cc(channel, UInt8(next(128)), UInt8(next(128)))
                }
            #expect(plain.outputs(event) == general.outputs(event), "\(event)")
        }
        #expect(plain.counters.snapshot == general.counters.snapshot)
        #expect(plain.heldNoteCount == general.heldNoteCount)
        #expect(plain.released() == general.released())
    }

    /// The operators a note-on went through, then the operators its end meets: some, or none.
    static let notePaths: [(name: String, after: [Operator])] = [
        ("operators", [.transpose(Transpose(semitones: 0))]),
        ("no operators", []),
    ]

    /// The note table packs port, channel and note in one word; every path that ends a note
    /// from it must take the channel's 4 bits alone, so a note sent on channel 16 from port 5
    /// ends on channel 16, not on a channel made of the port's bits.
    @Test(arguments: notePaths.indices)
    func aNoteSentOnChannel16FromAHighPortEndsOnChannel16OnEveryPath(_ index: Int) {
        let path = Self.notePaths[index]
        func send(_ route: Route, _ event: MIDIEvent) -> [Output] { route.outputs(event) }
        let toChannel16: [Operator] = [.channelMap(ChannelMap([(0, 15)]))]

        let ending = route(toChannel16)
        #expect(ending.outputs(on(0, 60, port: 5)) == [Output(on(15, 60, port: 5))])
        ending.replaceOperators(path.after)
        #expect(send(ending, off(0, 60, 33, port: 5)) == [Output(off(15, 60, 33, port: 5))], "\(path.name)")

        let retriggered = route(toChannel16)
        _ = retriggered.outputs(on(0, 60, port: 5))
        retriggered.replaceOperators(path.after)
        #expect(
            send(retriggered, on(0, 60, 90, port: 5))
                == [Output(off(15, 60, port: 5)), Output(on(0, 60, 90, port: 5))], "\(path.name)")
        #expect(retriggered.released() == [Output(off(0, 60, port: 5))], "\(path.name)")
    }

    @Test func operatorsRemovedWhileANoteSoundsStillEndItAsSent() {
        let route = route([.transpose(Transpose(semitones: 1))])
        #expect(route.outputs(on(0, 60), on(0, 62)) == [Output(on(0, 61)), Output(on(0, 63))])
        route.replaceOperators([])
        #expect(route.outputs(off(0, 60, 20)) == [Output(off(0, 61, 20))])
        // A retrigger of a key held as another note ends that note first.
        #expect(route.outputs(on(0, 62, 90)) == [Output(off(0, 63)), Output(on(0, 62, 90))])
        #expect(route.outputs(off(0, 62)) == [Output(off(0, 62))])
        #expect(route.heldNoteCount == 0)
        #expect(route.outputs(off(0, 62)) == [Output(off(0, 62))], "unmatched: passes as it is")
        #expect(route.counters.snapshot.unmatchedNoteOffs == 1)
        route.replaceOperators([.transpose(Transpose(semitones: 1))])
        #expect(route.outputs(on(0, 60)) == [Output(on(0, 61))], "operators back: the general path again")
    }
}
