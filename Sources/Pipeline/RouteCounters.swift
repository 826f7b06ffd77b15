import Synchronization

/// A route's counters, written by the input thread and readable from any thread.
///
/// One writer: each update is a relaxed load and a relaxed store (no read-modify-write), so
/// counting costs no locked instruction; readers see each counter eventually, not a consistent
/// set.
package final class RouteCounters: Sendable {
    private let eventsIn = Atomic<Int>(0)
    private let passed = Atomic<Int>(0)
    private let droppedByFilter = Atomic<Int>(0)
    private let droppedOutOfRange = Atomic<Int>(0)
    private let throttled = Atomic<Int>(0)
    private let flushed = Atomic<Int>(0)
    private let consumed = Atomic<Int>(0)
    private let unmatchedNoteOffs = Atomic<Int>(0)

    init() {}

    /// The counters as they are now.
    package var snapshot: RouteCounts {
        RouteCounts(
            eventsIn: eventsIn.load(ordering: .relaxed), passed: passed.load(ordering: .relaxed),
            droppedByFilter: droppedByFilter.load(ordering: .relaxed),
            droppedOutOfRange: droppedOutOfRange.load(ordering: .relaxed),
            throttled: throttled.load(ordering: .relaxed), flushed: flushed.load(ordering: .relaxed),
            consumed: consumed.load(ordering: .relaxed),
            unmatchedNoteOffs: unmatchedNoteOffs.load(ordering: .relaxed))
    }

    /// Adds what one input (or one flush) did. The running thread only.
    @inline(__always)
    func publish(_ tally: RouteTally, eventsIn inputs: Int) {
        bump(eventsIn, inputs)
        bump(passed, inputs > 0 && tally.deliveries > 0 ? 1 : 0)
        // Most events are dropped by nothing: one test instead of six.
        guard
            tally.filtered | tally.outOfRange | tally.throttled | tally.flushed | tally.consumed
                | tally.unmatchedNoteOffs != 0
        else { return }
        bump(droppedByFilter, tally.filtered)
        bump(droppedOutOfRange, tally.outOfRange)
        bump(throttled, tally.throttled)
        bump(flushed, tally.flushed)
        bump(consumed, tally.consumed)
        bump(unmatchedNoteOffs, tally.unmatchedNoteOffs)
    }

    @inline(__always)
    private func bump(_ counter: borrowing Atomic<Int>, _ amount: Int) {
        guard amount != 0 else { return }
        // Relaxed: this thread is the only writer; readers need no ordering with other memory.
        counter.store(counter.load(ordering: .relaxed) &+ amount, ordering: .relaxed)
    }
}

/// A snapshot of a route's counters.
///
/// Drops count copies: in a fork, a copy dropped in one branch counts once even if another
/// branch delivers it.
package struct RouteCounts: Sendable, Hashable {
    /// Events from the route's input ports.
    package var eventsIn: Int
    /// Inputs that reached at least one destination.
    package var passed: Int
    /// Copies dropped by a filter.
    package var droppedByFilter: Int
    /// Note events dropped because a transpose moved them out of 0...127.
    package var droppedOutOfRange: Int
    /// Values held back by a throttle.
    package var throttled: Int
    /// Held-back values a throttle later emitted.
    package var flushed: Int
    /// Events absorbed by controller assembly (first halves, selections) or repeat dropping.
    package var consumed: Int
    /// Note-ends dropped because their note-on never got through (or was already ended).
    package var unmatchedNoteOffs: Int

    package init(
        eventsIn: Int = 0, passed: Int = 0, droppedByFilter: Int = 0, droppedOutOfRange: Int = 0,
        throttled: Int = 0, flushed: Int = 0, consumed: Int = 0, unmatchedNoteOffs: Int = 0
    ) {
        self.eventsIn = eventsIn
        self.passed = passed
        self.droppedByFilter = droppedByFilter
        self.droppedOutOfRange = droppedOutOfRange
        self.throttled = throttled
        self.flushed = flushed
        self.consumed = consumed
        self.unmatchedNoteOffs = unmatchedNoteOffs
    }
}

/// What one input did, counted on the stack while it runs and published once.
package struct RouteTally {
    var filtered = 0
    var outOfRange = 0
    var throttled = 0
    var consumed = 0
    var flushed = 0
    var unmatchedNoteOffs = 0
    var deliveries = 0

    mutating func count(_ reason: Operator.DropReason) {
        switch reason {
        case .filtered: filtered += 1
        case .outOfRange: outOfRange += 1
        case .throttled: throttled += 1
        case .consumed: consumed += 1
        }
    }
}
