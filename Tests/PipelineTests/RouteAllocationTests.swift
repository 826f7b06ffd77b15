import CAllocationCounter
import MIDI
import Pipeline
import TestSupport
import XCTest

/// Proves a route allocates nothing per event: every operator kind, a fork and a key split,
/// note tracking, throttle flushes and counters, on the thread that runs them.
final class RouteAllocationTests: XCTestCase {
    func testHundredThousandMixedEventsThroughEveryOperatorAllocateNothing() throws {
        try requireOptimizedBuild()
        let route = Route(inputPorts: PortSet([0, 1, 2]), chain: Self.everyOperator())
        let events = Self.mixedEvents(count: 100_000)
        run(route, events, from: 1)  // warm-up: lazy runtime metadata, first-touch pages

        aseqosc_allocations_start()
        let (outputs, held) = run(route, events, from: 1_000_000_000_000)
        let allocations = aseqosc_allocations_stop()

        XCTAssertEqual(allocations, 0, "\(allocations) allocations for \(events.count) events")
        XCTAssertGreaterThan(outputs, events.count / 2)
        XCTAssertGreaterThan(held, 0)
        XCTAssertEqual(route.heldNoteCount, 0)
        XCTAssertEqual(route.counters.snapshot.eventsIn, 2 * events.count)
        print("allocation test: route with every operator, \(events.count) events, \(allocations) allocations")
    }

    /// Runs `events` (one per 100 µs of fake time), flushing throttles when due, then releases
    /// every held note. Returns the number of outputs and the notes held before the release.
    @discardableResult
    private func run(_ route: Route, _ events: [MIDIEvent], from start: UInt64) -> (Int, Int) {
        // Literal closures at each call: a closure stored in a `let` would escape and box what
        // it captures, which is the test's allocation, not the route's.
        var outputs = 0
        var checksum = 0
        var now = start
        var i = 0
        while i < events.count {
            now &+= 100_000
            route.process(events[i], now: now) { event, destination in
                outputs += 1
                checksum &+= Int(event.data1) &+ destination
            }
            if let deadline = route.nextDeadline, deadline <= now {
                route.flushDue(now: now) { event, destination in
                    outputs += 1
                    checksum &+= Int(event.data1) &+ destination
                }
            }
            i += 1
        }
        let held = route.heldNoteCount
        route.flushDue(now: now &+ 1_000_000_000) { event, destination in
            outputs += 1
            checksum &+= Int(event.data1) &+ destination
        }
        route.releaseAll { event, destination in
            outputs += 1
            checksum &+= Int(event.data1) &+ destination
        }
        XCTAssertNotEqual(checksum, 0)
        return (outputs, held)
    }

    private static func everyOperator() -> Chain {
        let upper = Chain(
            [
                .transpose(Transpose(semitones: 7)), .velocity(VelocityCurve(.gamma(0.6))),
                .normaliseNoteOffs(.noteOff),
            ], destinations: [2])
        let lower = Chain([.velocity(VelocityCurve(.scale(1.2)))], destinations: [3])
        return Chain(
            [
                .portFilter(PortFilter(PortSet([0, 1]))),
                .kindFilter(KindFilter([.sysex], inverted: true)),
                .channelFilter(ChannelFilter([15], inverted: true)),
                .noteFilter(NoteRangeFilter(21...108)),
                .velocityFilter(VelocityFilter(1...126)),
                .controllerFilter(ControllerFilter([0, 32], inverted: true)),
                .assemble(ControllerAssembly(fourteenBitControllers: [1])),
                .dropRepeats(RepeatFilter()),
                .throttle(Throttle(maxPerSecond: 100)),
                .controllerMap(ControllerMap([(74, 71)])),
                .valueMap(ValueMapping(.controller(71), from: ValueSpan(0, 127), to: ValueSpan(127, 0))),
                .valueMap(ValueMapping(.pitchBend, from: ValueSpan(-8192, 8191), to: ValueSpan(-4096, 4095))),
                .transpose(Transpose(semitones: -3)),
                .channelMap(ChannelMap([(0, 1), (1, 0)])),
                .velocity(VelocityCurve(.offset(5))),
                .normaliseNoteOffs(.noteOnWithZeroVelocity),
            ], destinations: [0],
            then: .fork([
                Chain([.velocity(VelocityCurve(.clamp(20...100)))], destinations: [1]),
                Chain([], destinations: [], then: .keySplit([.init(0...59, lower), .init(60...127, upper)])),
            ]))
    }

    /// Notes (with their note-offs), controllers, 14-bit halves, RPN, pitch bend, pressure,
    /// clock and SysEx, over three ports, in a fixed pseudo-random order.
    private static func mixedEvents(count: Int) -> [MIDIEvent] {
        var events: [MIDIEvent] = []
        events.reserveCapacity(count)
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        var open: [MIDIEvent] = []
        while events.count < count {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            let channel = UInt8(state >> 8 & 15)
            let a = UInt8(state >> 16 & 127)
            let b = UInt8(state >> 24 & 127)
            var event: MIDIEvent
            switch state % 12 {
            case 0, 1:
                event = .noteOn(channel: channel, note: a, velocity: max(b, 1))
                open.append(.noteOff(channel: channel, note: a, velocity: b))
            case 2, 3:
                event = open.isEmpty ? MIDIEvent(.clock) : open.removeFirst()
                if b & 1 == 0, event.kind == .noteOff {
                    event.kind = .noteOn
                    event.data2 = 0
                }
            case 4: event = .controlChange(channel: channel, controller: a, value: b)
            case 5: event = .controlChange(channel: channel, controller: [1, 33, 74, 7][Int(b & 3)], value: a)
            case 6: event = .controlChange(channel: channel, controller: [101, 100, 6, 38][Int(b & 3)], value: a)
            case 7: event = .pitchBend(channel: channel, bend: Int32(state >> 32 & 16383) - 8192)
            case 8: event = MIDIEvent(.channelPressure, channel: channel, data1: a)
            case 9: event = MIDIEvent(.polyPressure, channel: channel, data1: a, data2: b)
            case 10: event = MIDIEvent(.clock)
            default: event = MIDIEvent(.sysex)
            }
            event.port = UInt16((state >> 40) % 3)
            events.append(event)
        }
        return events
    }
}
