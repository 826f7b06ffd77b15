import MIDI

/// Reshapes the velocity of note-ons through a 128-entry table computed once, at construction.
///
/// Applies to note-ons with velocity above 0 only, and never produces 0 (which would turn a
/// note-on into a note-off): every result is clamped to 1...127. Note-offs keep their release
/// velocity. Results are rounded to the nearest integer, halves away from zero.
package struct VelocityCurve: Sendable, Hashable {
    /// How velocities are reshaped.
    package enum Shape: Sendable, Hashable {
        /// Every note-on gets this velocity.
        case fixed(UInt8)
        /// Velocity times a factor.
        case scale(Double)
        /// Velocity plus an offset (negative: softer).
        case offset(Int)
        /// `127 * (velocity / 127) ^ gamma`: above 1 softens, below 1 hardens. A gamma that is not
        /// a positive finite number leaves velocities unchanged.
        case gamma(Double)
        /// Velocity limited to a range.
        case clamp(ClosedRange<UInt8>)
    }

    /// The shape the table was computed from.
    let shape: Shape
    /// The 128 results (see ``ByteTable`` for why they are not inline).
    private let table: ByteTable

    /// A curve of `shape`.
    package init(_ shape: Shape) {
        self.shape = shape
        table = ByteTable()
        var velocity = 1
        while velocity < 128 {
            table[velocity] = Self.clamped(Self.evaluate(shape, velocity))
            velocity += 1
        }
    }

    /// The velocity `velocity` (1...127) becomes; 0 stays 0.
    package func map(_ velocity: UInt8) -> UInt8 {
        velocity == 0 ? 0 : table[Int(velocity & 127)]
    }

    /// Rewrites the velocity of a note-on; always keeps the event.
    package func process(_ event: inout MIDIEvent) -> Bool {
        if event.kind == .noteOn, event.data2 > 0 { event.data2 = table[Int(event.data2 & 127)] }
        return true
    }

    private static func evaluate(_ shape: Shape, _ velocity: Int) -> Double {
        let v = Double(velocity)
        switch shape {
        case .fixed(let fixed): return Double(fixed)
        case .scale(let factor): return (v * factor).rounded()
        case .offset(let offset): return Double(velocity.clamped(-1000, 1000) + offset.clamped(-1000, 1000))
        case .gamma(let gamma):
            guard gamma.isFinite, gamma > 0 else { return v }
            return (127 * power(v / 127, gamma)).rounded()
        case .clamp(let range): return Double(min(max(UInt8(velocity), range.lowerBound), range.upperBound))
        }
    }

    private static func clamped(_ value: Double) -> UInt8 {
        guard !value.isNaN else { return 1 }
        return UInt8(min(max(value, 1), 127))
    }

    package static func == (lhs: VelocityCurve, rhs: VelocityCurve) -> Bool { lhs.shape == rhs.shape }
    package func hash(into hasher: inout Hasher) { hasher.combine(shape) }
}

extension Int {
    fileprivate func clamped(_ low: Int, _ high: Int) -> Int { Swift.min(Swift.max(self, low), high) }
}

/// `base ^ exponent` for `base` in (0, 1] and `exponent` > 0, to about 1e-15: the standard
/// library has no `pow`, and this module imports neither Foundation nor libm. Used only when a
/// curve is built, never per event.
func power(_ base: Double, _ exponent: Double) -> Double {
    guard base > 0 else { return 0 }
    return exponential(exponent * logarithm(base))
}

private let ln2 = 0.693_147_180_559_945_309_417_232_121_458

/// Natural logarithm of a positive finite `x`: `x = m * 2^e` with m in [1, 2), and
/// `ln m = 2 atanh((m - 1) / (m + 1))`, whose series converges fast since the argument is at
/// most 1/3.
func logarithm(_ x: Double) -> Double {
    let e = Double(x.exponent)
    let m = x.significand
    let z = (m - 1) / (m + 1)
    let z2 = z * z
    var term = z
    var sum = 0.0
    var k = 1.0
    while k < 60 {
        sum += term / k
        term *= z2
        k += 2
    }
    return e * ln2 + 2 * sum
}

/// `e^y`: `y = k ln 2 + r` with |r| <= ln 2 / 2, Taylor series for `e^r`, scaled by `2^k`.
func exponential(_ y: Double) -> Double {
    guard y > -745 else { return 0 }
    guard y < 709 else { return .infinity }
    let k = (y / ln2).rounded()
    let r = y - k * ln2
    var term = 1.0
    var sum = 1.0
    var n = 1.0
    while n < 30 {
        term *= r / n
        sum += term
        n += 1
    }
    return Double(sign: .plus, exponent: Int(k), significand: sum)
}
