import MIDI
import Pipeline
import Testing

@Suite struct ChainTests {
    @Test func forkGivesEachBranchItsOwnCopy() {
        let route = route(
            Chain(
                [.channelFilter(ChannelFilter([0]))], destinations: [9],
                then: .fork([
                    Chain([.transpose(Transpose(semitones: 12))], destinations: [0]),
                    Chain([.channelMap(ChannelMap(allTo: 1))], destinations: [1, 2]),
                    Chain([.kindFilter(KindFilter([.noteOn]))], destinations: [3]),
                ])))
        #expect(
            route.outputs(on(0, 60)) == [
                Output(on(0, 60), to: 9), Output(on(0, 72), to: 0), Output(on(1, 60), to: 1),
                Output(on(1, 60), to: 2), Output(on(0, 60), to: 3),
            ])
        #expect(
            route.outputs(cc(0, 7, 1)) == [
                Output(cc(0, 7, 1), to: 9), Output(cc(0, 7, 1), to: 0), Output(cc(1, 7, 1), to: 1),
                Output(cc(1, 7, 1), to: 2),
            ])
        #expect(route.outputs(cc(1, 7, 1)).isEmpty)
    }

    static let split = Chain(
        [], destinations: [],
        then: .keySplit([
            .init(0...59, Chain([], destinations: [0])),
            .init(60...127, Chain([], destinations: [1])),
            .init(48...71, Chain([], destinations: [2])),
        ]))

    @Test(
        arguments: [
            (on(0, 0), [0]), (on(0, 47), [0]), (on(0, 48), [0, 2]), (on(0, 59), [0, 2]), (on(0, 60), [1, 2]),
            (on(0, 72), [1]), (on(0, 127), [1]), (poly(0, 50, 1), [0, 2]), (poly(0, 100, 1), [1]),
            (cc(0, 64, 127), [0, 1, 2]), (bend(0, 8191), [0, 1, 2]), (MIDIEvent(.clock), [0, 1, 2]),
        ] as [(MIDIEvent, [Int])])
    func keySplitSendsNotesByRangeAndEverythingElseEverywhere(event: MIDIEvent, destinations: [Int]) {
        let route = route(Self.split)
        #expect(route.outputs(event).map(\.destination) == destinations)
    }

    @Test func keySplitNoteOffsFollowOnlyTheZonesThatSoundedTheNote() {
        let route = route(Self.split)
        _ = route.outputs(on(0, 50), on(0, 100))
        #expect(route.outputs(off(0, 50)).map(\.destination) == [0, 2])
        #expect(route.outputs(off(0, 100)).map(\.destination) == [1])
        // Never sounded: passed on to the zone that would have sounded it, in case it did so
        // before the bridge started.
        #expect(route.outputs(off(0, 30)).map(\.destination) == [0])
    }

    @Test func routeIgnoresEventsFromOtherPorts() {
        let route = Route(inputPorts: PortSet([2]), chain: Chain([], destinations: [0]))
        var outputs: [Output] = []
        #expect(!route.process(on(0, 60, port: 1), now: 0) { outputs.append(Output($0, to: $1)) })
        #expect(route.process(on(0, 60, port: 2), now: 0) { outputs.append(Output($0, to: $1)) })
        #expect(outputs == [Output(on(0, 60, port: 2))])
        #expect(route.counters.snapshot.eventsIn == 1)
    }

    @Test func countersTellWhyEventsWereDropped() {
        let route = route([
            .assemble(ControllerAssembly(fourteenBitControllers: [1])), .velocityFilter(VelocityFilter(10...127)),
            .transpose(Transpose(semitones: 60)), .throttle(Throttle(maxPerSecond: 1)),
        ])
        _ = route.outputs(on(0, 60), on(0, 61, 5), on(0, 70), off(0, 60), off(0, 61), off(0, 70))
        _ = route.outputs(cc(0, 1, 1), cc(0, 33, 1), cc(0, 7, 1), cc(0, 7, 2), cc(0, 7, 3))
        _ = route.flushed(now: 2_000_000_000)
        #expect(
            route.counters.snapshot
                == RouteCounts(
                    eventsIn: 11, passed: 5, droppedByFilter: 1, droppedOutOfRange: 2, throttled: 2, flushed: 1,
                    consumed: 1, unmatchedNoteOffs: 2))
    }

    @Test func chainsCanRunWithoutARoute() {
        var chain = Chain([.transpose(Transpose(semitones: 1))], destinations: [4])
        var outputs: [Output] = []
        chain.process(on(0, 1), now: 0) { outputs.append(Output($0, to: $1)) }
        chain.process(off(0, 1), now: 0) { outputs.append(Output($0, to: $1)) }
        #expect(outputs == [Output(on(0, 2), to: 4), Output(off(0, 2), to: 4)])
        #expect(chain.heldNoteCount == 0)
    }
}
