import MIDI
import Pipeline
import Testing

@Suite struct VelocityCurveTests {
    @Test(
        arguments: [
            (VelocityCurve.Shape.fixed(100), 1, 100), (.fixed(100), 127, 100), (.fixed(0), 64, 1),
            (.fixed(200), 64, 127),
            (.scale(0.5), 1, 1), (.scale(0.5), 2, 1), (.scale(0.5), 3, 2), (.scale(0.5), 127, 64),
            (.scale(2), 10, 20), (.scale(2), 64, 127), (.scale(0), 64, 1), (.scale(-1), 64, 1), (.scale(.nan), 64, 1),
            (.offset(-20), 10, 1), (.offset(-20), 64, 44), (.offset(20), 120, 127), (.offset(-500), 127, 1),
            (.gamma(2), 127, 127), (.gamma(2), 64, 32), (.gamma(2), 1, 1), (.gamma(0.5), 64, 90), (.gamma(0.5), 1, 11),
            (.gamma(0), 64, 64), (.gamma(-1), 64, 64), (.gamma(.infinity), 64, 64),
            (.clamp(20...100), 1, 20), (.clamp(20...100), 50, 50), (.clamp(20...100), 127, 100), (.clamp(0...10), 1, 1),
        ] as [(VelocityCurve.Shape, UInt8, UInt8)])
    func curveMapsVelocityAndNeverReturnsZero(shape: VelocityCurve.Shape, input: UInt8, expected: UInt8) {
        #expect(run(.velocity(VelocityCurve(shape)), on(0, 60, input)) == on(0, 60, expected))
    }

    @Test(arguments: [
        (2.2, Self.gamma22), (0.45, Self.gamma045),
    ])
    func gammaTableMatchesAReferenceComputation(gamma: Double, expected: [UInt8]) {
        let curve = VelocityCurve(.gamma(gamma))
        let table = (UInt8(1)...127).map { curve.map($0) }
        #expect(table == expected)
    }

    @Test(arguments: [VelocityCurve.Shape.fixed(1), .scale(3), .offset(50), .gamma(3), .clamp(100...127)])
    func noteEndsKeepTheirVelocity(shape: VelocityCurve.Shape) {
        let curve = Operator.velocity(VelocityCurve(shape))
        #expect(run(curve, on(0, 60, 0)) == on(0, 60, 0))
        #expect(run(curve, off(0, 60, 77)) == off(0, 60, 77))
        #expect(run(curve, poly(0, 60, 77)) == poly(0, 60, 77))
    }

    // Python: max(1, min(127, round_half_away(127 * (v / 127) ** gamma))) for v in 1...127.
    static let gamma22: [UInt8] = [
        1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 3, 3, 3, 4, 4, 4, 5, 5, 5, 6, 6, 7, 7, 7, 8,
        8, 9, 9, 10, 11, 11, 12, 12, 13, 14, 14, 15, 16, 16, 17, 18, 19, 19, 20, 21, 22, 23, 24, 24, 25, 26, 27, 28,
        29, 30, 31, 32, 33, 34, 35, 36, 38, 39, 40, 41, 42, 43, 45, 46, 47, 49, 50, 51, 52, 54, 55, 57, 58, 60, 61,
        62, 64, 66, 67, 69, 70, 72, 73, 75, 77, 78, 80, 82, 84, 85, 87, 89, 91, 93, 94, 96, 98, 100, 102, 104, 106,
        108, 110, 112, 114, 116, 118, 120, 123, 125, 127,
    ]
    static let gamma045: [UInt8] = [
        14, 20, 24, 27, 30, 32, 34, 37, 39, 40, 42, 44, 46, 47, 49, 50, 51, 53, 54, 55, 57, 58, 59, 60, 61, 62, 63,
        64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76, 76, 77, 78, 79, 80, 80, 81, 82, 83, 83, 84, 85, 86, 86,
        87, 88, 89, 89, 90, 91, 91, 92, 93, 93, 94, 95, 95, 96, 97, 97, 98, 98, 99, 100, 100, 101, 101, 102, 103, 103,
        104, 104, 105, 105, 106, 107, 107, 108, 108, 109, 109, 110, 110, 111, 111, 112, 112, 113, 114, 114, 115, 115,
        116, 116, 117, 117, 118, 118, 119, 119, 120, 120, 120, 121, 121, 122, 122, 123, 123, 124, 124, 125, 125, 126,
        126, 127, 127,
    ]
}
