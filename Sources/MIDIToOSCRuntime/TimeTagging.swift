import OSC
import Platform

extension OSCTimeTag {
    /// The wall-clock (CLOCK_REALTIME) time of `monotonic` nanoseconds (CLOCK_MONOTONIC) plus
    /// `ahead` nanoseconds: what a sender stamps on an event it read at `monotonic` for a
    /// receiver to play `ahead` later. The two clocks are read once each, side by side.
    static func wallClock(atMonotonic monotonic: UInt64, ahead: UInt64) -> OSCTimeTag {
        let monoNow = MonotonicClock.now()
        let realNow = WallClock.unixNanoseconds()
        // An event read before now is that much earlier in wall-clock time (0: unknown, now).
        let before = monotonic > 0 && monotonic <= monoNow ? monoNow - monotonic : 0
        return OSCTimeTag(unixNanoseconds: realNow - before + ahead)
    }
}
