import Foundation
import MIDI
import Pipeline
import Synchronization

/// The SPSC ring on its own.
enum RingBenchmarks {
    /// One push then one pop, `operations` times, on one thread: the cost of a hand-over when
    /// both indices stay in this core's cache.
    static func pushPop(_ ring: SPSCRing<MIDIEvent>, operations: Int) -> Int {
        var checksum = 0
        var i = 0
        while i < operations {
            _ = ring.push(.noteOn(channel: 0, note: UInt8(truncatingIfNeeded: i & 127), velocity: 64))
            if let event = ring.pop() { checksum &+= Int(event.data1) }
            i += 1
        }
        return checksum
    }

    /// `operations` events from a producer thread to a consumer thread; the producer retries when
    /// the ring is full. Returns the wall-clock nanoseconds until the consumer had them all.
    static func twoThreads(operations: Int, capacity: Int) -> (nanoseconds: UInt64, checksum: Int) {
        let ring = SPSCRing<MIDIEvent>(capacity: capacity)
        let shared = TwoThreadState()
        let consumer = Thread {
            shared.ready.store(true, ordering: .releasing)
            var received = 0
            var checksum = 0
            while received < operations {
                if let event = ring.pop() {
                    checksum &+= Int(event.data1)
                    received += 1
                }
            }
            shared.checksum.store(checksum, ordering: .relaxed)
            shared.done.store(true, ordering: .releasing)
        }
        consumer.start()
        while !shared.ready.load(ordering: .acquiring) { sched_yield() }
        let start = Clock.nanoseconds(CLOCK_MONOTONIC)
        var i = 0
        while i < operations {
            if ring.push(.noteOn(channel: 0, note: UInt8(truncatingIfNeeded: i & 127), velocity: 64)) { i += 1 }
        }
        while !shared.done.load(ordering: .acquiring) {}
        let end = Clock.nanoseconds(CLOCK_MONOTONIC)
        return (end - start, shared.checksum.load(ordering: .relaxed))
    }
}

final class TwoThreadState: Sendable {
    let ready = Atomic<Bool>(false)
    let done = Atomic<Bool>(false)
    let checksum = Atomic<Int>(0)
}
