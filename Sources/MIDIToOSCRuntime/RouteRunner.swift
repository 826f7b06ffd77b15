import Endpoints
import MIDI
import Platform
import Storage
import Synchronization
import ValueStore

/// Runs every route for each MIDI event, formats each output for its destination and queues
/// it on that route's sender, which sends a batch with one `sendmmsg`; on the input thread,
/// between two reads of the sequencer (see ``MIDIInputSide``). It also keeps the routes'
/// deadlines: throttled values and note recovery. In steady state nothing here allocates,
/// locks, logs or blocks (HotPathAllocationTests counts).
///
/// Only the input thread calls it while that thread runs; the owner replaces routes and
/// releases notes only while it is paused.
package final class RouteRunner: @unchecked Sendable {
    // @unchecked Sendable: `routes`, `hasDeadlines` and the packet belong to the input thread
    // while it runs and to the owner while it is paused; other threads read only the atomics.

    /// The routes, run in order for every event.
    package private(set) var routes: [RouteRuntime]
    /// Whether any route has a throttle or a destination with note recovery, the only things
    /// with deadlines: without one, a batch skips reading the clock and asking every route.
    private var hasDeadlines = false
    static let maximumRoutes = 4096
    private let packetBuffer = FixedBytes(count: packetCapacity)
    private var packet: UnsafeMutableRawBufferPointer { packetBuffer.bytes }
    /// Events since the last flush; a long batch is sent every 64 rather than at its end.
    private var sinceFlush = 0

    /// Events run through the routes.
    package let eventsIn = Atomic<Int>(0)
    /// Outputs that the destination's scheme does not send, or that did not fit a packet.
    package let unformatted = Atomic<Int>(0)
    /// Notes ended because the sequencer dropped events they may have ended with (see
    /// ``endEverySoundingNote()``).
    package let notesEndedAfterOverrun = Atomic<Int>(0)

    /// How other threads ask for replays, and how they wake this runner's thread.
    package let replaySignal = ReplaySignal()
    /// Whether a replay is under way: the thread then comes back every ``replayInterval``.
    private var replaying = false
    /// How often, in milliseconds, a replay under way sends its next values (``Replays``).
    static let replayInterval = Int32(Replays<StoreReplayCursor>.interval / 1_000_000)

    /// The largest UDP payload; a longer message (a huge SysEx as a blob) is not sent.
    static let packetCapacity = 65_507

    /// A runner for `routes`.
    package init(routes: [RouteRuntime]) {
        self.routes = routes
        noteDeadlines()
    }

    private func noteDeadlines() {
        precondition(routes.count <= Self.maximumRoutes, "more than \(Self.maximumRoutes) routes")
        hasDeadlines = routes.contains { $0.route.chain.hasThrottles || $0.recovery != nil }
    }

    /// Swaps in the routes of a new config; only while the input thread is paused.
    package func replaceRoutes(_ new: [RouteRuntime]) {
        routes = new
        noteDeadlines()
    }

    /// Runs `event` through every route; what it makes is sent by ``endBatch(idleWakeMilliseconds:)``
    /// or, in a long batch, every 64 events.
    @inline(__always)
    func run(_ event: MIDIEvent) {
        // A local copy: the loop reads the routes without going through `self`.
        let routes = routes
        var failed = 0
        for runtime in routes { failed &+= runtime.run(event, packet: packet) }
        if failed > 0 { unformatted.add(failed, ordering: .relaxed) }
        sinceFlush &+= 1
        if sinceFlush == 64 { flushAll() }
    }

    /// Sends the throttled values and recovery messages due now and everything queued, and
    /// returns how long the input thread may wait for the next event, in milliseconds: until
    /// the earliest deadline, at most `idleWakeMilliseconds` (-1: no limit).
    func endBatch(idleWakeMilliseconds: Int32) -> Int32 {
        let wait = sendDue(idleWakeMilliseconds: idleWakeMilliseconds)
        guard replaying || replaySignal.raised.load(ordering: .relaxed) else { return wait }
        if replaySignal.panicWanted.exchange(false, ordering: .acquiring) {
            releaseAllNotes()
            flushAll()
        }
        replaying = continueReplays()
        guard replaying else { return wait }
        return wait < 0 ? Self.replayInterval : min(wait, Self.replayInterval)
    }

    /// Starts what was asked for, and sends the next values of every replay under way (after
    /// this batch's live events, which went out first); returns whether one is still under way.
    private func continueReplays() -> Bool {
        if replaySignal.raised.exchange(false, ordering: .acquiring) {
            let now = MonotonicClock.now()
            var refused = 0
            for request in replaySignal.takeRequests() {
                for runtime in routes {
                    for destination in runtime.destinations(for: request) {
                        if !runtime.replays.request(destination, now: now) { refused += 1 }
                    }
                }
            }
            if refused > 0 { replaySignal.refused.add(refused, ordering: .relaxed) }
        }
        var underWay = false
        for runtime in routes where runtime.replays.hasSync {
            if runtime.replays.run(through: runtime.sending, packet: packet) { underWay = true }
        }
        for runtime in routes where runtime.replays.hasSync { runtime.flush() }
        return underWay
    }

    /// ``endBatch(idleWakeMilliseconds:)`` but for replays.
    private func sendDue(idleWakeMilliseconds: Int32) -> Int32 {
        guard hasDeadlines else {
            flushAll()
            return idleWakeMilliseconds
        }
        var failed = 0
        let now = MonotonicClock.now()
        var earliest = UInt64.max
        for runtime in routes {
            if runtime.recovery != nil && runtime.recoveryDue <= now {
                runtime.sendDueRecovery(now: now, packet: packet)
            }
            if let deadline = runtime.route.nextDeadline, deadline <= now {
                failed &+= runtime.flushDue(now: now, packet: packet)
            }
            if let deadline = runtime.route.nextDeadline { earliest = min(earliest, deadline) }
            if runtime.recovery != nil { earliest = min(earliest, runtime.recoveryDue) }
        }
        if failed > 0 { unformatted.add(failed, ordering: .relaxed) }
        flushAll()
        guard earliest != .max else { return idleWakeMilliseconds }
        let after = MonotonicClock.now()
        guard earliest > after else { return 0 }
        let cap = idleWakeMilliseconds < 0 ? UInt64(Int32.max) : UInt64(idleWakeMilliseconds)
        return Int32(min((earliest - after) / 1_000_000 + 1, cap))
    }

    private func flushAll() {
        if sinceFlush > 0 { eventsIn.add(sinceFlush, ordering: .relaxed) }
        sinceFlush = 0
        for runtime in routes { runtime.flush() }
    }

    /// Sends a note-off for every note every route holds; only while the input thread is
    /// paused, or on it.
    package func releaseAllNotes() {
        for runtime in routes { runtime.releaseAll(packet: packet) }
    }

    /// Sends a note-off for every note `route` holds, with this runner's packet buffer; only
    /// while the input thread is paused.
    package func release(_ route: RouteRuntime) {
        route.releaseAll(packet: packet)
    }

    /// After the kernel dropped the events queued for us (an input overrun: it empties the
    /// whole queue), ends every note the routes hold: any of them may have lost its note-off
    /// there, and a note cut short is better than one that never ends. On the input thread.
    func endEverySoundingNote() {
        var ended = 0
        for runtime in routes { ended += runtime.route.heldNoteCount }
        releaseAllNotes()
        notesEndedAfterOverrun.add(ended, ordering: .relaxed)
    }
}
