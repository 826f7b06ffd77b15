import OSC
import Platform

/// When a bundle's messages are to play: its time tag (wall-clock NTP time) as a time on the
/// monotonic clock the sequencer queue is anchored on, or now.
package struct BundleTimes {
    let counters: OSCInputCounters

    /// The time (monotonic nanoseconds) `tag` asks for, or nil for "now": immediately, or
    /// already past (counted as late). Counts what it schedules.
    func monotonicTime(for tag: OSCTimeTag) -> UInt64? {
        guard tag != .immediately else { return nil }
        let nowNTP = OSCTimeTag(unixNanoseconds: WallClock.unixNanoseconds()).rawValue
        guard tag.rawValue > nowNTP else {
            counters.late.add(1, ordering: .relaxed)
            return nil
        }
        // NTP fractions to nanoseconds; a tag more than a day ahead is held at a day.
        let ahead = min(tag.rawValue - nowNTP, 86_400 << 32)
        let delay = (ahead >> 32) * 1_000_000_000 + ((ahead & 0xFFFF_FFFF) * 1_000_000_000) >> 32
        counters.scheduled.add(1, ordering: .relaxed)
        return MonotonicClock.now() + delay
    }
}
