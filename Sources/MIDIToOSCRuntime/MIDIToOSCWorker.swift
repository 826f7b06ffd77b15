import ALSASequencer
import BridgeSession
import MIDI
import OSC
import Pipeline
import Platform
import Recovery
import Storage
import Synchronization

/// The consumer side of the MIDI -> OSC path, the pipeline thread: takes events off the ring,
/// runs every route, formats each output for its destination and queues it on that route's UDP
/// sender, which sends a whole batch with one `sendmmsg`. It is the ring's only consumer (the
/// input thread only pushes and wakes it), and it also wakes for throttle and recovery
/// deadlines. In steady state nothing here allocates, locks, logs or blocks
/// (HotPathAllocationTests drives this loop and counts).
public final class MIDIToOSCWorker: @unchecked Sendable {
    // @unchecked Sendable: `routes`, `hasDeadlines` and the packet belong to the pipeline thread
    // while it runs and to the owner while it is paused (`thread` nil); other threads read only
    // the atomics.

    private let ring: SPSCRing<MIDIEvent>
    /// The routes, run in order for every event.
    public private(set) var routes: [RouteRuntime]
    /// Whether any route has a throttle or a destination with note recovery, the only things
    /// with deadlines: without one, a batch skips reading the clock and asking every route.
    private var hasDeadlines = false
    static let maximumRoutes = 4096
    private let sysexStore: SysExStore
    private let wake: WakeSignal
    private let packetBuffer = FixedBytes(count: packetCapacity)
    private var packet: UnsafeMutableRawBufferPointer { packetBuffer.bytes }
    private let stopRequested = Atomic<Bool>(false)
    private var thread: SystemThread?
    /// Puts the thread under SCHED_FIFO as it starts, when set (by the bridge, before ``start()``).
    public var realtime: RealtimeScheduler?
    /// The longest the thread sleeps without work, so `progress` moves for the watchdog; -1:
    /// no limit (no watchdog, an idle bridge sleeps until an event).
    private let idleWakeMilliseconds: Int32

    /// Loop passes so far; the watchdog pings systemd only while this moves.
    public let progress = Atomic<UInt64>(0)
    /// Events taken off the ring and run through the routes.
    public let eventsIn = Atomic<Int>(0)
    /// Outputs that the destination's scheme does not send, or that did not fit a packet.
    package let unformatted = Atomic<Int>(0)

    /// The largest UDP payload; a longer message (a huge SysEx as a blob) is not sent.
    static let packetCapacity = 65_507

    /// A worker for `routes`, taking events off `ring`; no thread runs until ``start()``.
    public init(
        ring: SPSCRing<MIDIEvent>, routes: [RouteRuntime], sysexStore: SysExStore, wake: WakeSignal,
        idleWakeMilliseconds: Int32 = 1000
    ) {
        self.ring = ring
        self.routes = routes
        self.sysexStore = sysexStore
        self.wake = wake
        self.idleWakeMilliseconds = idleWakeMilliseconds
        noteDeadlines()
    }

    private func noteDeadlines() {
        precondition(routes.count <= Self.maximumRoutes, "more than \(Self.maximumRoutes) routes")
        hasDeadlines = routes.contains { $0.route.chain.hasThrottles || $0.hasRecovery }
    }

    /// Starts (or resumes) the pipeline thread.
    public func start() {
        stopRequested.store(false, ordering: .relaxed)
        // Starting a thread publishes whatever the owner did while paused (new routes, released
        // notes) to it.
        self.thread = SystemThread(name: "aseqosc-pipe") { [self, realtime] in
            realtime?.enter(.pipeline)
            run()
        }
    }

    /// Stops the thread after it has handled what is queued. Held notes stay held (a reload
    /// pauses this way); call ``releaseAllNotes()`` afterwards to end them.
    public func pause() {
        guard thread != nil else { return }
        stopRequested.store(true, ordering: .releasing)
        wake.wake()
        thread?.join()
        thread = nil
    }

    /// Swaps in the routes of a new config; only while paused.
    public func replaceRoutes(_ new: [RouteRuntime]) {
        precondition(thread == nil, "routes are replaced only while the pipeline thread is paused")
        routes = new
        noteDeadlines()
    }

    /// Sends a note-off for every note every route holds; only while paused.
    public func releaseAllNotes() {
        precondition(thread == nil, "notes are released only while the pipeline thread is paused")
        var index = 0
        while index < routes.count {
            routes[index].releaseAll(packet: packet)
            index += 1
        }
    }

    /// Sends a note-off for every note `route` holds, with this worker's packet buffer; only
    /// while paused.
    public func release(_ route: RouteRuntime) {
        precondition(thread == nil, "notes are released only while the pipeline thread is paused")
        route.releaseAll(packet: packet)
    }

    private func run() {
        while true {
            // Read before the batch: what was queued before a stop is still handled.
            let stopping = stopRequested.load(ordering: .acquiring)
            progress.add(1, ordering: .relaxed)
            processPending()
            if stopping { return }
            wake.sleep(timeoutMilliseconds: sleepTimeout()) { ring.count > 0 }
        }
    }

    /// Runs everything on the ring through the routes, then due throttled values; flushes.
    func processPending() {
        // A local copy: the loop reads the routes per event without going through `self`.
        let routes = routes
        var handled = 0
        var failed = 0
        while let event = ring.pop() {
            for runtime in routes { failed &+= runtime.run(event, packet: packet) }
            if event.kind == .sysex { sysexStore.release(event.sysex) }
            handled += 1
            // Sent every 64 events, so a long batch does not wait for its end.
            if handled & 63 == 0 { flushAll(routes) }
        }
        if handled > 0 { eventsIn.add(handled, ordering: .relaxed) }
        if hasDeadlines { failed &+= sendDue(routes) }
        if failed > 0 { unformatted.add(failed, ordering: .relaxed) }
        flushAll(routes)
    }

    /// Emits the throttled values and the recovery messages due now; returns how many values
    /// could not be formatted.
    private func sendDue(_ routes: [RouteRuntime]) -> Int {
        var failed = 0
        let now = MonotonicClock.now()
        for runtime in routes {
            if runtime.hasRecovery && runtime.recoveryDue <= now {
                runtime.sendDueRecovery(now: now, packet: packet)
            }
            if let deadline = runtime.route.nextDeadline, deadline <= now {
                failed &+= runtime.flushDue(now: now, packet: packet)
            }
        }
        return failed
    }

    private func flushAll(_ routes: [RouteRuntime]) {
        for runtime in routes {
            runtime.flush()
        }
    }

    /// The earliest throttle or recovery deadline of any route (monotonic ns), or `.max`.
    private func earliestDeadline() -> UInt64 {
        guard hasDeadlines else { return .max }
        var earliest: UInt64 = .max
        for runtime in routes {
            if let deadline = runtime.route.nextDeadline, deadline < earliest { earliest = deadline }
            if runtime.hasRecovery { earliest = min(earliest, runtime.recoveryDue) }
        }
        return earliest
    }

    /// How long to sleep: until the earliest deadline, at most the idle wake period.
    private func sleepTimeout() -> Int32 {
        let earliest = earliestDeadline()
        guard earliest != .max else { return idleWakeMilliseconds }
        let now = MonotonicClock.now()
        guard earliest > now else { return 0 }
        let cap = idleWakeMilliseconds < 0 ? UInt64(Int32.max) : UInt64(idleWakeMilliseconds)
        return Int32(min((earliest - now) / 1_000_000 + 1, cap))
    }

}
