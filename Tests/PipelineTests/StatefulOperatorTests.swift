import MIDI
import Pipeline
import Testing

private let ms: UInt64 = 1_000_000

@Suite struct DropRepeatsTests {
    @Test func repeatedValuesAreDroppedPerChannelAndController() {
        var op = Operator.dropRepeats(RepeatFilter())
        let steps: [(MIDIEvent, Bool)] = [
            (cc(0, 1, 10), true), (cc(0, 1, 10), false), (cc(0, 1, 11), true), (cc(0, 1, 10), true),
            (cc(2, 1, 10), true), (cc(0, 2, 10), true), (cc(15, 127, 0), true), (cc(15, 127, 0), false),
            (cc(15, 127, 127), true), (bend(0, 0), true), (bend(0, 0), false), (bend(0, 8191), true),
            (bend(0, -8192), true), (bend(0, -8192), false), (bend(1, -8192), true), (pressure(0, 127), true),
            (pressure(0, 127), false), (pressure(0, 0), true), (on(0, 60), true), (on(0, 60), true),
            (cc14(0, 1, 16383), true), (cc14(0, 1, 16383), true),
        ]
        for (event, kept) in steps {
            var copy = event
            #expect(op.process(&copy, now: 0) == kept, "\(event)")
        }
    }

    @Test func routesBuiltFromOneChainDoNotShareLastValues() {
        let chain = Chain([.dropRepeats(RepeatFilter())], destinations: [0])
        let first = route(chain)
        let second = route(chain)
        #expect(first.outputs(cc(0, 1, 5)).count == 1)
        #expect(second.outputs(cc(0, 1, 5)).count == 1)
        #expect(first.outputs(cc(0, 1, 5)).isEmpty)
    }
}

@Suite struct ControllerAssemblyTests {
    @Test func fourteenBitPairsAssembleUpTo16383() {
        let assembling = route([.assemble(ControllerAssembly(fourteenBitControllers: [1]))])
        #expect(assembling.outputs(cc(0, 1, 127), cc(0, 33, 127)) == [Output(cc14(0, 1, 16383))])
        #expect(assembling.outputs(cc(0, 1, 0), cc(0, 33, 0)) == [Output(cc14(0, 1, 0))])
        #expect(assembling.counters.snapshot.consumed == 2)
    }

    @Test func rpnDataEntryAssembles() {
        let assembling = route([.assemble(ControllerAssembly())])
        let outputs = assembling.outputs(cc(2, 101, 0), cc(2, 100, 0), cc(2, 6, 0x40), cc(2, 38, 0))
        #expect(outputs == [Output(MIDIEvent(.rpn, channel: 2, value: 0x40 << 7, parameter: 0))])
    }
}

@Suite struct ThrottleTests {
    /// At most 10 per second: one value per 100 ms per slot.
    private func throttled() -> Route { route([.throttle(Throttle(maxPerSecond: 10))]) }

    @Test func valuesWithinTheIntervalWaitAndTheLatestIsFlushedWhenDue() {
        let route = throttled()
        #expect(route.outputs(cc(0, 1, 1), now: 0) == [Output(cc(0, 1, 1))])
        #expect(route.outputs(cc(0, 1, 2), now: 10 * ms).isEmpty)
        #expect(route.outputs(cc(0, 1, 3), now: 20 * ms).isEmpty)
        #expect(route.nextDeadline == 100 * ms)
        #expect(route.flushed(now: 99 * ms).isEmpty)
        #expect(route.flushed(now: 100 * ms) == [Output(cc(0, 1, 3))])
        #expect(route.nextDeadline == nil)
        #expect(route.outputs(cc(0, 1, 4), now: 150 * ms).isEmpty)
        #expect(route.nextDeadline == 200 * ms)
        #expect(route.outputs(cc(0, 1, 5), now: 200 * ms) == [Output(cc(0, 1, 5))], "on time supersedes")
        #expect(route.nextDeadline == nil)
        #expect(route.flushed(now: 1_000 * ms).isEmpty)
        let counts = route.counters.snapshot
        #expect(counts.throttled == 3)
        #expect(counts.flushed == 1)
        #expect(counts.passed == 2)
    }

    @Test(arguments: [
        [cc(0, 1, 1), cc(0, 2, 1), cc(1, 1, 1), cc(15, 127, 1)],
        [bend(0, 0), bend(1, 0), pressure(0, 0), pressure(1, 0), cc(0, 0, 0)],
    ])
    func slotsAreIndependent(events: [MIDIEvent]) {
        let route = throttled()
        var outputs: [Output] = []
        for event in events { outputs += route.outputs(event, now: 5 * ms) }
        #expect(outputs.count == events.count)
    }

    @Test func notesAndOtherKindsAreNeverThrottled() {
        let route = throttled()
        let events = [on(0, 60), on(0, 61), poly(0, 60, 1), poly(0, 60, 2), cc14(0, 1, 0), cc14(0, 1, 1)]
        var outputs: [Output] = []
        for event in events { outputs += route.outputs(event, now: 0) }
        #expect(outputs.count == events.count)
    }

    @Test func flushedValuesContinueThroughTheRestOfTheChain() {
        let route = route(
            Chain(
                [.throttle(Throttle(interval: 100 * ms)), .channelMap(ChannelMap(allTo: 5))], destinations: [0, 1]))
        _ = route.outputs(bend(0, -8192), now: 0)
        #expect(route.outputs(bend(0, 8191), now: 1).isEmpty)
        #expect(route.flushed(now: 100 * ms) == [Output(bend(5, 8191), to: 0), Output(bend(5, 8191), to: 1)])
    }

    @Test func deadlinesAreTheEarliestAcrossSlotsAndBranches() {
        let route = route(
            Chain(
                [], destinations: [],
                then: .fork([
                    Chain([.throttle(Throttle(interval: 100 * ms))], destinations: [0]),
                    Chain([.throttle(Throttle(interval: 30 * ms))], destinations: [1]),
                ])))
        _ = route.outputs(cc(0, 1, 0), cc(0, 1, 1), now: 0)
        #expect(route.nextDeadline == 30 * ms)
        #expect(route.flushed(now: 30 * ms) == [Output(cc(0, 1, 1), to: 1)])
        #expect(route.nextDeadline == 100 * ms)
        #expect(route.flushed(now: 100 * ms) == [Output(cc(0, 1, 1), to: 0)])
        #expect(route.nextDeadline == nil)
    }

    @Test func everySlotCanWaitAtOnce() {
        let throttle = Throttle(interval: 100 * ms)
        var op = Operator.throttle(throttle)
        for pass in 0..<2 {
            for channel in UInt8(0)..<16 {
                for controller in UInt8(0)..<128 {
                    var event = cc(channel, controller, UInt8(pass))
                    _ = op.process(&event, now: UInt64(pass))
                }
                var event = bend(channel, Int32(pass))
                _ = op.process(&event, now: UInt64(pass))
                event = pressure(channel, UInt8(pass))
                _ = op.process(&event, now: UInt64(pass))
            }
        }
        #expect(throttle.pendingCount == 16 * 128 + 32)
        var flushed = 0
        op.flushDue(now: 100 * ms) { _ in flushed += 1 }
        #expect(flushed == 16 * 128 + 32)
        #expect(throttle.pendingCount == 0)
    }
}
