import CAllocationCounter
import Glibc

/// One timed run: how many events, how long on the wall clock and on this thread's CPU clock,
/// and how many heap allocations this thread made.
struct Sample {
    var events: Int
    var wallNanoseconds: UInt64
    var cpuNanoseconds: UInt64
    var allocations: Int64

    var eventsPerSecond: Double { Double(events) / (Double(wallNanoseconds) / 1e9) }
    var eventsPerCPUSecond: Double { Double(events) / (Double(cpuNanoseconds) / 1e9) }
    var nanosecondsPerEvent: Double { Double(wallNanoseconds) / Double(events) }
    var allocationsPerEvent: Double { Double(allocations) / Double(events) }
}

/// The medians of several samples of one workload.
struct Summary {
    var name: String
    var key: String
    var samples: [Sample]

    private func median(_ value: (Sample) -> Double) -> Double {
        let sorted = samples.map(value).sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    var eventsPerSecond: Double { median(\.eventsPerSecond) }
    var eventsPerCPUSecond: Double { median(\.eventsPerCPUSecond) }
    var nanosecondsPerEvent: Double { median(\.nanosecondsPerEvent) }
    var allocationsPerEvent: Double { median(\.allocationsPerEvent) }
    /// The spread of the wall-clock rate, (max - min) / median, to show how noisy the machine was.
    var spread: Double {
        let rates = samples.map(\.eventsPerSecond)
        return ((rates.max() ?? 0) - (rates.min() ?? 0)) / eventsPerSecond
    }
}

enum Clock {
    static func nanoseconds(_ clock: clockid_t) -> UInt64 {
        var time = timespec()
        clock_gettime(clock, &time)
        return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
    }
}

/// Runs `body` (which handles `events` events and returns a checksum) `repetitions` times after
/// one untimed warm-up run, counting this thread's allocations in each timed run.
func measure(
    _ name: String, key: String, events: Int, repetitions: Int, _ body: () -> Int
) -> Summary {
    blackHole(body())  // warm-up: first-touch pages, lazy metadata, liblo's first allocations
    var samples: [Sample] = []
    samples.reserveCapacity(repetitions)
    var repetition = 0
    while repetition < repetitions {
        aseqosc_allocations_start()
        let wall0 = Clock.nanoseconds(CLOCK_MONOTONIC)
        let cpu0 = Clock.nanoseconds(CLOCK_THREAD_CPUTIME_ID)
        let checksum = body()
        let cpu1 = Clock.nanoseconds(CLOCK_THREAD_CPUTIME_ID)
        let wall1 = Clock.nanoseconds(CLOCK_MONOTONIC)
        let allocations = aseqosc_allocations_stop()
        blackHole(checksum)
        samples.append(
            Sample(
                events: events, wallNanoseconds: wall1 - wall0, cpuNanoseconds: cpu1 - cpu0, allocations: allocations))
        repetition += 1
    }
    return Summary(name: name, key: key, samples: samples)
}

/// Keeps a result alive so the optimiser cannot drop the work that produced it.
@inline(never)
func blackHole(_ value: Int) {
    sink &+= value
}

nonisolated(unsafe) var sink = 0
