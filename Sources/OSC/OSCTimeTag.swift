/// An OSC time tag: an NTP timestamp, seconds since 1900-01-01 in the high 32 bits and a binary
/// fraction of a second in the low 32 bits.
package struct OSCTimeTag: Hashable, Sendable, BitwiseCopyable, CustomStringConvertible {
    /// The 64 bits exactly as they travel on the wire (after byte-order conversion).
    package var rawValue: UInt64

    /// Wraps the 64 wire bits.
    @inlinable
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// Builds a time tag from whole NTP seconds and a fraction in units of 2^-32 s.
    @inlinable
    public init(seconds: UInt32, fraction: UInt32) {
        rawValue = UInt64(seconds) << 32 | UInt64(fraction)
    }

    /// The special value that OSC 1.0 reserves for "process now".
    package static let immediately = OSCTimeTag(rawValue: 1)

    /// Seconds from the NTP era start (1900) to the Unix epoch (1970).
    package static let unixEpochOffset: UInt32 = 2_208_988_800

    /// Whole seconds since 1900.
    @inlinable public var seconds: UInt32 { UInt32(truncatingIfNeeded: rawValue >> 32) }

    /// The fraction of a second, in units of 2^-32 s.
    @inlinable public var fraction: UInt32 { UInt32(truncatingIfNeeded: rawValue) }

    /// Builds a time tag from seconds since 1900; values outside the NTP era (and NaN) are
    /// clamped, because a time tag cannot express them and a conversion must not trap.
    package init(secondsSince1900: Double) {
        guard secondsSince1900 > 0 else {
            self.init(rawValue: 0)
            return
        }
        let scaled = secondsSince1900 * 4_294_967_296.0
        // UInt64(exactly:) would trap on out-of-range values; 2^64 itself is the first one too big.
        guard scaled < 18_446_744_073_709_551_616.0 else {
            self.init(rawValue: .max)
            return
        }
        self.init(rawValue: UInt64(scaled))
    }

    /// Builds a time tag from seconds since the Unix epoch (1970), clamping like
    /// ``init(secondsSince1900:)``.
    package init(unixTime: Double) {
        self.init(secondsSince1900: unixTime + Double(Self.unixEpochOffset))
    }

    /// Seconds since 1900 as a `Double` (about 0.2 ns resolution today).
    package var secondsSince1900: Double {
        Double(seconds) + Double(fraction) / 4_294_967_296.0
    }

    /// Seconds since the Unix epoch; negative for instants before 1970.
    package var unixTime: Double { secondsSince1900 - Double(Self.unixEpochOffset) }

    /// `immediately`, or `seconds.fraction` as two 8-digit hex numbers, the way oscdump prints it.
    package var description: String {
        if self == .immediately { return "immediately" }
        return "\(Self.hex8(seconds)).\(Self.hex8(fraction))"
    }

    private static func hex8(_ value: UInt32) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }
}

extension OSCTimeTag {
    /// The time tag of `nanoseconds` since the Unix epoch (a CLOCK_REALTIME reading), exact to
    /// the tag's resolution and without floating point.
    @inlinable
    public init(unixNanoseconds nanoseconds: UInt64) {
        let seconds = nanoseconds / 1_000_000_000
        let fraction = ((nanoseconds % 1_000_000_000) << 32) / 1_000_000_000
        self.init(rawValue: (seconds + UInt64(Self.unixEpochOffset)) << 32 | fraction)
    }

    /// Writes a bundle header (`#bundle`, this time tag, and the size of the one element that
    /// follows) into the 20 bytes at `header`.
    package func writeBundleHeader(elementSize: Int, into header: UnsafeMutableRawPointer) {
        let name: UInt64 = 0x2362_756E_646C_6500  // "#bundle\0"
        header.storeBytes(of: name.bigEndian, as: UInt64.self)
        header.storeBytes(of: rawValue.bigEndian, toByteOffset: 8, as: UInt64.self)
        header.storeBytes(of: UInt32(elementSize).bigEndian, toByteOffset: 16, as: UInt32.self)
    }

    /// The size of a bundle header with one element's size: what ``writeBundleHeader`` writes.
    package static let bundleHeaderSize = 20
}
