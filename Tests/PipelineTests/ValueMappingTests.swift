import MIDI
import Pipeline
import Testing

/// Each case: input span, output span, input value, expected output value.
typealias SpanCase = (input: ValueSpan, output: ValueSpan, x: Int, expected: Int)

@Suite struct ValueMappingTests {
    @Test(
        arguments: [
            (ValueSpan(0, 127), ValueSpan(127, 0), 0, 127), (ValueSpan(0, 127), ValueSpan(127, 0), 127, 0),
            (ValueSpan(0, 127), ValueSpan(127, 0), 64, 63),
            (ValueSpan(0, 127), ValueSpan(0, 100), 0, 0), (ValueSpan(0, 127), ValueSpan(0, 100), 1, 1),
            (ValueSpan(0, 127), ValueSpan(0, 100), 64, 50), (ValueSpan(0, 127), ValueSpan(0, 100), 127, 100),
            // Exact halves round up: 0.5 -> 1, 63.5 -> 64, and on an inverted span 0.5 -> 1 as well.
            (ValueSpan(0, 2), ValueSpan(0, 1), 1, 1), (ValueSpan(20, 100), ValueSpan(0, 127), 60, 64),
            (ValueSpan(0, 2), ValueSpan(1, 0), 1, 1), (ValueSpan(2, 0), ValueSpan(0, 1), 1, 1),
            // Inputs outside the input span are clamped to it.
            (ValueSpan(20, 100), ValueSpan(0, 127), 10, 0), (ValueSpan(20, 100), ValueSpan(0, 127), 120, 127),
            (ValueSpan(100, 20), ValueSpan(0, 127), 120, 0),
            // Output spans are clamped to what a controller holds; one-value input spans give out.start.
            (ValueSpan(0, 127), ValueSpan(-50, 500), 0, 0), (ValueSpan(0, 127), ValueSpan(-50, 500), 127, 127),
            (ValueSpan(64, 64), ValueSpan(10, 20), 0, 10), (ValueSpan(64, 64), ValueSpan(10, 20), 127, 10),
        ] as [SpanCase])
    func controllerValuesMapLinearlyWithHalvesRoundingUp(input: ValueSpan, output: ValueSpan, x: Int, expected: Int) {
        let mapping = Operator.valueMap(ValueMapping(.controller(7), from: input, to: output))
        #expect(run(mapping, cc(3, 7, UInt8(x))) == cc(3, 7, UInt8(expected)))
        #expect(run(mapping, cc(3, 8, UInt8(x))) == cc(3, 8, UInt8(x)), "other controllers pass unchanged")
    }

    @Test(
        arguments: [
            (ValueSpan(-8192, 8191), ValueSpan(8191, -8192), -8192, 8191),
            (ValueSpan(-8192, 8191), ValueSpan(8191, -8192), 8191, -8192),
            (ValueSpan(-8192, 8191), ValueSpan(8191, -8192), 0, -1),
            (ValueSpan(-8192, 8191), ValueSpan(-4096, 4095), 0, 0),
            (ValueSpan(-8192, 8191), ValueSpan(-4096, 4095), -8192, -4096),
            (ValueSpan(-8192, 8191), ValueSpan(0, 16383), -8192, 0),
            (ValueSpan(-8192, 8191), ValueSpan(0, 16383), 8191, 8191),
            (ValueSpan(-8192, 8191), ValueSpan(-8192, 8191), 16383, 8191),
            (ValueSpan(0, 8191), ValueSpan(0, 127), -8192, 0),
        ] as [SpanCase])
    func pitchBendMapsWithinItsRange(input: ValueSpan, output: ValueSpan, x: Int, expected: Int) {
        let mapping = Operator.valueMap(ValueMapping(.pitchBend, from: input, to: output))
        #expect(run(mapping, bend(0, Int32(x))) == bend(0, Int32(expected)))
    }

    @Test func pressureTargetsTheirOwnKind() {
        let channel = Operator.valueMap(ValueMapping(.channelPressure, from: ValueSpan(0, 127), to: ValueSpan(127, 0)))
        #expect(run(channel, pressure(0, 0)) == pressure(0, 127))
        #expect(run(channel, poly(0, 60, 0)) == poly(0, 60, 0))
        let polyMap = Operator.valueMap(ValueMapping(.polyPressure, from: ValueSpan(0, 127), to: ValueSpan(127, 0)))
        #expect(run(polyMap, poly(0, 60, 127)) == poly(0, 60, 0))
        #expect(run(polyMap, pressure(0, 0)) == pressure(0, 0))
    }

    @Test(arguments: [(1, 1), (64, 6), (127, 10)] as [(UInt8, UInt8)])
    func velocityMappingNeverProducesZero(input: UInt8, expected: UInt8) {
        let mapping = Operator.valueMap(ValueMapping(.velocity, from: ValueSpan(0, 127), to: ValueSpan(0, 10)))
        #expect(run(mapping, on(0, 60, input)) == on(0, 60, expected))
        #expect(run(mapping, on(0, 60, 0)) == on(0, 60, 0))
        #expect(run(mapping, off(0, 60, input)) == off(0, 60, input))
    }
}
