import MIDI
import Pipeline

// Short event builders, so tables of cases read like the MIDI they stand for.

func on(_ channel: UInt8, _ note: UInt8, _ velocity: UInt8 = 100, port: UInt16 = 0) -> MIDIEvent {
    var event = MIDIEvent.noteOn(channel: channel, note: note, velocity: velocity)
    event.port = port
    return event
}

func off(_ channel: UInt8, _ note: UInt8, _ velocity: UInt8 = 0, port: UInt16 = 0) -> MIDIEvent {
    var event = MIDIEvent.noteOff(channel: channel, note: note, velocity: velocity)
    event.port = port
    return event
}

func cc(_ channel: UInt8, _ controller: UInt8, _ value: UInt8) -> MIDIEvent {
    .controlChange(channel: channel, controller: controller, value: value)
}

func bend(_ channel: UInt8, _ value: Int32) -> MIDIEvent {
    .pitchBend(channel: channel, bend: value)
}

func pressure(_ channel: UInt8, _ value: UInt8) -> MIDIEvent {
    MIDIEvent(.channelPressure, channel: channel, data1: value)
}

func poly(_ channel: UInt8, _ note: UInt8, _ value: UInt8) -> MIDIEvent {
    MIDIEvent(.polyPressure, channel: channel, data1: note, data2: value)
}

func cc14(_ channel: UInt8, _ controller: UInt16, _ value: Int32) -> MIDIEvent {
    MIDIEvent(.controlChange14, channel: channel, value: value, parameter: controller)
}

/// One output of a chain: an event and the destination it goes to.
struct Output: Equatable, CustomStringConvertible {
    var event: MIDIEvent
    var destination: Int

    init(_ event: MIDIEvent, to destination: Int = 0) {
        self.event = event
        self.destination = destination
    }

    var description: String { "\(event) -> \(destination)" }
}

/// Runs `operator` on `event` once; the rewritten event, or `nil` when dropped.
func run(_ op: Operator, _ event: MIDIEvent, now: UInt64 = 0) -> MIDIEvent? {
    var op = op
    var event = event
    return op.process(&event, now: now) ? event : nil
}

extension Route {
    /// Processes `events` at `now` and returns every output.
    func outputs(_ events: MIDIEvent..., now: UInt64 = 0) -> [Output] {
        var outputs: [Output] = []
        for event in events {
            process(event, now: now) { outputs.append(Output($0, to: $1)) }
        }
        return outputs
    }

    func flushed(now: UInt64) -> [Output] {
        var outputs: [Output] = []
        flushDue(now: now) { outputs.append(Output($0, to: $1)) }
        return outputs
    }

    func released() -> [Output] {
        var outputs: [Output] = []
        releaseAll { outputs.append(Output($0, to: $1)) }
        return outputs
    }
}

/// A route from every port through `chain`.
func route(_ chain: Chain) -> Route {
    Route(inputPorts: .all, chain: chain)
}

/// A route from every port through `operators` to destination 0.
func route(_ operators: [Operator]) -> Route {
    Route(inputPorts: .all, chain: Chain(operators, destinations: [0]))
}
