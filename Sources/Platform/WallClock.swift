import Glibc

/// The clock of every event time, schedule, deadline and timeout in the process:
/// `CLOCK_MONOTONIC` in nanoseconds (it never jumps, and the kernel sequencer's queue timer and
/// `poll` run on it too).
package enum MonotonicClock {
    // Inlinable: both directions read it once per receive, and it is one vDSO call.
    @inlinable
    package static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
    }

    /// Sleeps until ``now()`` reaches `deadline` (at once if it has), whatever signals arrive
    /// meanwhile.
    package static func sleep(until deadline: UInt64) {
        guard deadline > now() else { return }
        var time = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        _ = nothingOrErrorNumber(retryOnInterrupt: { clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &time, nil) })
    }
}

/// Time of day (CLOCK_REALTIME) and ``MonotonicClock`` in seconds.
package enum WallClock {
    /// Nanoseconds since the Unix epoch, what an OSC time tag counts from.
    // Inlinable: a time-tagged destination reads it per bundle, the OSC thread per bundle with
    // a time tag; one vDSO call, like ``MonotonicClock/now()``.
    @inlinable
    package static func unixNanoseconds() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
    }

    /// Seconds since the Unix epoch.
    package static var now: Double {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// ``MonotonicClock`` in seconds, for durations (uptime, a browse's timeout).
    package static var monotonic: Double { Double(MonotonicClock.now()) / 1e9 }

    /// `2026-12-01T20:33:05.123Z`: UTC, milliseconds.
    package static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var parts = tm()
        var seconds = now.tv_sec
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let milliseconds = Int(now.tv_nsec / 1_000_000)
        let fraction =
            milliseconds < 10 ? "00\(milliseconds)" : milliseconds < 100 ? "0\(milliseconds)" : "\(milliseconds)"
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):"
            + "\(two(parts.tm_min)):\(two(parts.tm_sec)).\(fraction)Z"
    }
}
