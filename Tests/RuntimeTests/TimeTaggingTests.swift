import Glibc
import OSC
import Testing

@testable import MIDIToOSCRuntime

/// The time tag of an event read at a monotonic time: that moment in wall-clock time, plus the
/// latency asked for.
@Suite struct TimeTaggingTests {
    static func clocks() -> (monotonic: UInt64, unix: Double) {
        var mono = timespec()
        var real = timespec()
        clock_gettime(CLOCK_MONOTONIC, &mono)
        clock_gettime(CLOCK_REALTIME, &real)
        return (
            UInt64(mono.tv_sec) * 1_000_000_000 + UInt64(mono.tv_nsec), Double(real.tv_sec) + Double(real.tv_nsec) / 1e9
        )
    }

    static func unix(_ tag: OSCTimeTag) -> Double {
        Double(tag.seconds) - Double(OSCTimeTag.unixEpochOffset) + Double(tag.fraction) / 4_294_967_296
    }

    @Test func anEventReadEarlierIsTaggedThatMuchEarlierPlusTheLatency() {
        let now = Self.clocks()
        // Read 30 ms ago, to be played 10 ms after it was read: 20 ms ago in wall-clock time.
        let tag = OSCTimeTag.wallClock(atMonotonic: now.monotonic - 30_000_000, ahead: 10_000_000)
        #expect(abs(Self.unix(tag) - (now.unix - 0.020)) < 0.002)
    }

    @Test func anEventWithoutAStampIsTaggedNowPlusTheLatency() {
        let now = Self.clocks()
        let tag = OSCTimeTag.wallClock(atMonotonic: 0, ahead: 500_000_000)
        #expect(abs(Self.unix(tag) - (now.unix + 0.5)) < 0.002)
    }
}
