import ALSASequencer
import Glibc
import MIDI
import OSC
import Pipeline
import Platform
import Storage
import Synchronization

/// The consumer side of the MIDI -> OSC path: takes events off the ring, runs every route,
/// formats each output for its destination and queues it on that route's UDP sender, which
/// sends a whole batch with one `sendmmsg`. In steady state nothing here allocates, locks, logs
/// or blocks (HotPathAllocationTests drives this loop and counts).
///
/// Two threads can be the ring's consumer, one at a time: the pipeline thread, and the input
/// thread through ``runInline()``. A wake-up of another thread costs more than the whole
/// pipeline run of a few events (tens of microseconds on real hardware, half a millisecond
/// under emulation), so when the pipeline thread is idle the input thread runs a small batch
/// to the network itself, and a played note pays one wake-up, as in a single-threaded
/// forwarder. A burst, or a batch arriving while the pipeline thread is busy, goes through the
/// ring to the pipeline thread, so reading ALSA goes on meanwhile. The right to consume is
/// `consuming`, taken with an acquiring compare-exchange and given back with a releasing
/// store, so each consumer sees everything the previous one did to the routes and senders.
public final class MIDIToOSCWorker: @unchecked Sendable {
    // @unchecked Sendable: `routes`, `packet` and the routes' state belong to whichever thread
    // holds `consuming`; `replaceRoutes` is called only while paused, when the owner holds it.
    // Other threads read the atomics.

    private let ring: SPSCRing<MIDIEvent>
    /// The routes, owned here; the loop reads them through `hotRoutes`.
    public private(set) var routes: [RouteRuntime]
    /// Unretained references to `routes`, in plain memory: the loop reads them per event, and a
    /// class `var` array would pay an exclusivity check and a retain each time. Changed only
    /// while the thread is paused.
    private let hotRoutes = FixedBuffer<Unmanaged<RouteRuntime>>(uninitializedCount: maximumRoutes)
    private let hotRouteCount = UncheckedCell(0)
    /// Whether any route has a throttle or a destination with note recovery, the only things
    /// with deadlines: without one, a batch skips reading the clock and asking every route.
    private let hotHasDeadlines = UncheckedCell(false)
    static let maximumRoutes = 4096
    private let sysexStore: SysExStore
    private let wake: WakeSignal
    private let packetBuffer = FixedBytes(count: packetCapacity)
    private var packet: UnsafeMutableRawBufferPointer { packetBuffer.bytes }
    private let stopRequested = Atomic<Bool>(false)
    /// Whether a thread is consuming (see the type's comment). Held by the owner while the
    /// pipeline thread is paused, so the input thread cannot run the routes then.
    private let consuming = Atomic<Bool>(true)
    /// When the sleeping pipeline thread will wake by itself (monotonic ns), so that a consumer
    /// on the input thread that leaves an earlier throttle deadline behind can wake it.
    private let plannedWake = Atomic<UInt64>(.max)
    /// Set by a consumer on the input thread that left a throttle deadline earlier than
    /// `plannedWake`: the pipeline thread, about to sleep, looks at it after announcing its
    /// sleep (``WakeSignal``'s pattern), so the wake-up is not lost if it comes first.
    private let deadlineMoved = Atomic<Bool>(false)
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
    let unformatted = Atomic<Int>(0)

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
        publishHotRoutes()
    }

    private func publishHotRoutes() {
        precondition(routes.count <= Self.maximumRoutes, "more than \(Self.maximumRoutes) routes")
        var index = 0
        while index < routes.count {
            hotRoutes[index] = Unmanaged.passUnretained(routes[index])
            index += 1
        }
        hotRouteCount.value = routes.count
        hotHasDeadlines.value = routes.contains { $0.route.chain.hasThrottles || $0.hasRecovery }
    }

    /// Starts (or resumes) the pipeline thread.
    public func start() {
        stopRequested.store(false, ordering: .relaxed)
        // Releasing: pairs with the acquiring exchanges in `tryConsuming`; whatever the owner
        // did while paused (new routes, released notes) is seen by the next consumer.
        consuming.store(false, ordering: .releasing)
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
        // The input thread may be consuming (a bridge pauses it first, so this rarely waits).
        while !tryConsuming() { sched_yield() }
    }

    /// Takes the right to consume, if nobody has it.
    @inline(__always)
    private func tryConsuming() -> Bool {
        // Acquiring: pairs with the releasing stores in `start`, `run` and `runInline`.
        consuming.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged
    }

    @inline(__always)
    private func stopConsuming() {
        // Releasing: pairs with the acquiring exchange in `tryConsuming`.
        consuming.store(false, ordering: .releasing)
    }

    /// Input thread: runs what is on the ring through the routes and sends it, on this thread,
    /// unless the pipeline thread is consuming or paused; returns whether it did. Wakes the
    /// pipeline thread if a throttle now falls due before it would wake by itself.
    func runInline() -> Bool {
        guard tryConsuming() else { return false }
        processPending()
        let deadline = earliestDeadline()
        stopConsuming()
        if deadline < plannedWake.load(ordering: .relaxed) {
            deadlineMoved.store(true, ordering: .relaxed)
            wake.notify()
        }
        return true
    }

    /// Swaps in the routes of a new config; only while paused.
    public func replaceRoutes(_ new: [RouteRuntime]) {
        precondition(thread == nil, "routes are replaced only while the pipeline thread is paused")
        routes = new
        publishHotRoutes()
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
            let stopping = stopRequested.load(ordering: .acquiring)
            progress.add(1, ordering: .relaxed)
            guard tryConsuming() else {
                // The input thread is consuming: it empties the ring before it lets go, and
                // wakes this thread for a batch it leaves; look again soon, for deadlines and
                // for a stop.
                plannedWake.store(MonotonicClock.now() &+ 1_000_000, ordering: .relaxed)
                wake.sleep(timeoutMilliseconds: 1) { false }
                continue
            }
            processPending()
            let timeout = sleepTimeout()
            // Published before the right to consume is given back: the next consumer on the input
            // thread, which takes it with an acquiring exchange, compares its deadlines with this
            // wake, not with the one before (it would then miss one that falls in between).
            plannedWake.store(
                timeout < 0 ? .max : MonotonicClock.now() &+ UInt64(timeout) &* 1_000_000, ordering: .relaxed)
            stopConsuming()
            if stopping { return }
            wake.sleep(timeoutMilliseconds: timeout) {
                ring.count > 0 || deadlineMoved.exchange(false, ordering: .relaxed)
            }
        }
    }

    /// Runs everything on the ring through the routes, then due throttled values; flushes.
    func processPending() {
        var handled = 0
        var failed = 0
        let count = hotRouteCount.value
        if count == 1 {
            // One route, the usual config: taken once for the whole batch, not per event.
            hotRoutes[0]._withUnsafeGuaranteedRef { runtime in
                while let event = ring.pop() {
                    failed &+= runtime.run(event, packet: packet)
                    finish(event, &handled)
                }
            }
        } else {
            while let event = ring.pop() {
                failed &+= runAllRoutes(event, count)
                finish(event, &handled)
            }
        }
        if handled > 0 { eventsIn.add(handled, ordering: .relaxed) }
        if hotHasDeadlines.value { failed &+= sendDue(count) }
        if failed > 0 { unformatted.add(failed, ordering: .relaxed) }
        flushAll()
    }

    @inline(__always)
    private func runAllRoutes(_ event: MIDIEvent, _ count: Int) -> Int {
        var failed = 0
        var index = 0
        while index < count {
            failed &+= hotRoutes[index]._withUnsafeGuaranteedRef { $0.run(event, packet: packet) }
            index += 1
        }
        return failed
    }

    /// After every route ran `event`: frees its SysEx, counts it, and sends every 64 events, so
    /// a long batch does not wait for its end.
    @inline(__always)
    private func finish(_ event: MIDIEvent, _ handled: inout Int) {
        if event.kind == .sysex { sysexStore.release(event.sysex) }
        handled += 1
        if handled & 63 == 0 { flushAll() }
    }

    /// Emits the throttled values and the recovery messages due now; returns how many values
    /// could not be formatted.
    private func sendDue(_ count: Int) -> Int {
        var failed = 0
        let now = MonotonicClock.now()
        var index = 0
        while index < count {
            failed &+= hotRoutes[index]._withUnsafeGuaranteedRef { runtime in
                if runtime.hasRecovery && runtime.recoveryDue <= now {
                    runtime.sendDueRecovery(now: now, packet: packet)
                }
                guard let deadline = runtime.route.nextDeadline, deadline <= now else { return 0 }
                return runtime.flushDue(now: now, packet: packet)
            }
            index += 1
        }
        return failed
    }

    private func flushAll() {
        let count = hotRouteCount.value
        var index = 0
        while index < count {
            hotRoutes[index]._withUnsafeGuaranteedRef { runtime in
                runtime.flush()
            }
            index += 1
        }
    }

    /// The earliest throttle or recovery deadline of any route (monotonic ns), or `.max`;
    /// consumer only.
    private func earliestDeadline() -> UInt64 {
        guard hotHasDeadlines.value else { return .max }
        var earliest: UInt64 = .max
        let count = hotRouteCount.value
        var index = 0
        while index < count {
            hotRoutes[index]._withUnsafeGuaranteedRef { runtime in
                if let deadline = runtime.route.nextDeadline, deadline < earliest { earliest = deadline }
                if runtime.hasRecovery { earliest = min(earliest, runtime.recoveryDue) }
            }
            index += 1
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
