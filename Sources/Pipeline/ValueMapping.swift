import MIDI

/// Two ends of a range of values; `start` may be above `end` (an inverted range).
package struct ValueSpan: Sendable, Hashable {
    var start: Int
    var end: Int

    package init(_ start: Int, _ end: Int) {
        self.start = start
        self.end = end
    }

    var lower: Int { min(start, end) }
    var upper: Int { max(start, end) }
}

/// Maps one kind of value linearly from an input span to an output span: `start` to `start`,
/// `end` to `end`, either span may be inverted.
///
/// Inputs outside the input span are clamped to it first, so outputs never leave the output
/// span; the output span itself is clamped to the values the target can hold. The result is
/// `out.start + (x - in.start) * (out.end - out.start) / (in.end - in.start)` rounded to the
/// nearest integer, exact halves upwards (towards +infinity), in exact integer arithmetic. An
/// input span of one value maps everything to `out.start`. Input ends beyond ±2^24 are clamped.
package struct ValueMapping: Sendable, Hashable {
    /// The value a mapping rewrites.
    package enum Target: Sendable, Hashable {
        /// The value (``MIDIEvent/data2``) of one 7-bit controller, 0...127.
        case controller(UInt8)
        /// The pitch bend ``MIDIEvent/value``, -8192...8191.
        case pitchBend
        /// Channel pressure (``MIDIEvent/data1``), 0...127.
        case channelPressure
        /// Poly pressure (``MIDIEvent/data2``), 0...127.
        case polyPressure
        /// The velocity of note-ons above 0, 1...127 (never 0, which would end the note).
        case velocity
    }

    let target: Target
    let input: ValueSpan
    let output: ValueSpan

    /// Maps `target` values from `input` to `output`.
    package init(_ target: Target, from input: ValueSpan, to output: ValueSpan) {
        self.target = target
        // Far beyond any MIDI value, and small enough that `map` cannot overflow.
        let limit = 1 << 24
        self.input = ValueSpan(min(max(input.start, -limit), limit), min(max(input.end, -limit), limit))
        let (low, high) = Self.domain(of: target)
        self.output = ValueSpan(min(max(output.start, low), high), min(max(output.end, low), high))
    }

    private static func domain(of target: Target) -> (Int, Int) {
        switch target {
        case .controller, .channelPressure, .polyPressure: (0, 127)
        case .pitchBend: (-8192, 8191)
        case .velocity: (1, 127)
        }
    }

    /// The value `x` becomes.
    package func map(_ x: Int) -> Int {
        let clampedInput = min(max(x, input.lower), input.upper)
        var denominator = input.end - input.start
        guard denominator != 0 else { return output.start }
        var numerator = (clampedInput - input.start) * (output.end - output.start)
        if denominator < 0 {
            numerator = -numerator
            denominator = -denominator
        }
        // floor(n / d + 1/2) = floor((2n + d) / 2d): round half up, exactly.
        let twice = 2 * numerator + denominator
        let quotient = twice >= 0 ? twice / (2 * denominator) : -((-twice + 2 * denominator - 1) / (2 * denominator))
        return min(max(output.start + quotient, output.lower), output.upper)
    }

    /// Rewrites the target value of a matching event; always keeps it.
    package func process(_ event: inout MIDIEvent) -> Bool {
        switch target {
        case .controller(let controller):
            if event.kind == .controlChange, event.data1 == controller {
                event.data2 = UInt8(map(Int(event.data2)))
            }
        case .pitchBend:
            if event.kind == .pitchBend { event.value = Int32(map(Int(event.value))) }
        case .channelPressure:
            if event.kind == .channelPressure { event.data1 = UInt8(map(Int(event.data1))) }
        case .polyPressure:
            if event.kind == .polyPressure { event.data2 = UInt8(map(Int(event.data2))) }
        case .velocity:
            if event.kind == .noteOn, event.data2 > 0 { event.data2 = UInt8(map(Int(event.data2))) }
        }
        return true
    }
}
