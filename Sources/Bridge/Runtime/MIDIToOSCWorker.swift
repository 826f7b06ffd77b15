import ALSASequencer
import Foundation
import MIDI
import OSC
import Pipeline
import Synchronization

/// The pipeline thread of the MIDI -> OSC path: takes events off the ring, runs every route,
/// formats each output for its destination and queues it on that route's UDP sender, which
/// sends a whole batch with one `sendmmsg`. In steady state nothing here allocates, locks, logs
/// or blocks (HotPathAllocationTests drives this loop and counts).
final class MIDIToOSCWorker: @unchecked Sendable {
    // @unchecked Sendable: `routes` and `packet` belong to the pipeline thread while it runs;
    // `replaceRoutes` is called only while it is paused. Other threads read the atomics.

    private let ring: SPSCRing<MIDIEvent>
    /// The routes, owned here; the loop reads them through `hotRoutes`.
    private(set) var routes: [RouteRuntime]
    /// Unretained references to `routes`, in plain memory: the loop reads them per event, and a
    /// class `var` array would pay an exclusivity check and a retain each time. Changed only
    /// while the thread is paused.
    private let hotRoutes: UnsafeMutablePointer<Unmanaged<RouteRuntime>>
    private let hotRouteCount: UnsafeMutablePointer<Int>
    static let maximumRoutes = 4096
    private let sysexStore: SysExStore
    private let wake: WakeSignal
    private let packet: UnsafeMutableRawBufferPointer
    private let stopRequested = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    private var thread: Thread?
    /// The longest the thread sleeps without work, so `progress` moves for the watchdog.
    private let idleWakeMilliseconds: Int32

    /// Loop passes so far; the watchdog pings systemd only while this moves.
    let progress = Atomic<UInt64>(0)
    /// Events taken off the ring.
    let eventsIn = Atomic<Int>(0)
    /// Outputs that the destination's scheme does not send, or that did not fit a packet.
    let unformatted = Atomic<Int>(0)

    /// The largest UDP payload; a longer message (a huge SysEx as a blob) is not sent.
    static let packetCapacity = 65_507

    init(
        ring: SPSCRing<MIDIEvent>, routes: [RouteRuntime], sysexStore: SysExStore, wake: WakeSignal,
        idleWakeMilliseconds: Int32 = 1000
    ) {
        self.ring = ring
        self.routes = routes
        hotRoutes = .allocate(capacity: Self.maximumRoutes)
        hotRouteCount = .allocate(capacity: 1)
        hotRouteCount.initialize(to: 0)
        self.sysexStore = sysexStore
        self.wake = wake
        self.idleWakeMilliseconds = idleWakeMilliseconds
        packet = .allocate(byteCount: Self.packetCapacity, alignment: 16)
        publishHotRoutes()
    }

    deinit {
        packet.deallocate()
        hotRoutes.deallocate()
        hotRouteCount.deallocate()
    }

    private func publishHotRoutes() {
        precondition(routes.count <= Self.maximumRoutes, "more than \(Self.maximumRoutes) routes")
        var index = 0
        while index < routes.count {
            (hotRoutes + index).initialize(to: Unmanaged.passUnretained(routes[index]))
            index += 1
        }
        hotRouteCount.pointee = routes.count
    }

    /// Starts (or resumes) the pipeline thread.
    func start() {
        stopRequested.store(false, ordering: .relaxed)
        let thread = Thread { [self] in
            run()
            finished.signal()
        }
        thread.name = "aseqosc-pipeline"
        thread.start()
        self.thread = thread
    }

    /// Stops the thread after it has handled what is queued. Held notes stay held (a reload
    /// pauses this way); call ``releaseAllNotes()`` afterwards to end them.
    func pause() {
        guard thread != nil else { return }
        stopRequested.store(true, ordering: .releasing)
        wake.wake()
        finished.wait()
        thread = nil
    }

    /// Swaps in the routes of a new config; only while paused.
    func replaceRoutes(_ new: [RouteRuntime]) {
        precondition(thread == nil, "routes are replaced only while the pipeline thread is paused")
        routes = new
        publishHotRoutes()
    }

    /// Sends a note-off for every note every route holds; only while paused.
    func releaseAllNotes() {
        precondition(thread == nil, "notes are released only while the pipeline thread is paused")
        var index = 0
        while index < routes.count {
            routes[index].releaseAll(packet: packet)
            index += 1
        }
    }

    /// Sends a note-off for every note `route` holds, with this worker's packet buffer; only
    /// while paused.
    func release(_ route: RouteRuntime) {
        precondition(thread == nil, "notes are released only while the pipeline thread is paused")
        route.releaseAll(packet: packet)
    }

    private func run() {
        while true {
            let stopping = stopRequested.load(ordering: .acquiring)
            processPending()
            if stopping { return }
            progress.add(1, ordering: .relaxed)
            wake.sleep(timeoutMilliseconds: sleepTimeout()) { ring.count > 0 }
        }
    }

    /// Runs everything on the ring through the routes, then due throttled values; flushes.
    func processPending() {
        var handled = 0
        let count = hotRouteCount.pointee
        while let event = ring.pop() {
            var index = 0
            while index < count {
                hotRoutes[index]._withUnsafeGuaranteedRef { runtime in
                    runtime.route.process(event, now: event.timestamp) { output, destination in
                        if !runtime.send(output, to: destination, packet: packet) {
                            unformatted.add(1, ordering: .relaxed)
                        }
                    }
                }
                index += 1
            }
            if event.kind == .sysex { sysexStore.release(event.sysex) }
            handled += 1
            if handled & 63 == 0 { flushAll() }
        }
        if handled > 0 { eventsIn.add(handled, ordering: .relaxed) }
        let now = SequencerReader.now()
        var index = 0
        while index < count {
            hotRoutes[index]._withUnsafeGuaranteedRef { runtime in
                if let deadline = runtime.route.nextDeadline, deadline <= now {
                    runtime.route.flushDue(now: now) { output, destination in
                        if !runtime.send(output, to: destination, packet: packet) {
                            unformatted.add(1, ordering: .relaxed)
                        }
                    }
                }
            }
            index += 1
        }
        flushAll()
    }

    private func flushAll() {
        let count = hotRouteCount.pointee
        var index = 0
        while index < count {
            hotRoutes[index]._withUnsafeGuaranteedRef { $0.sender.flush() }
            index += 1
        }
    }

    /// How long to sleep: until the earliest throttle deadline, at most the idle wake period.
    private func sleepTimeout() -> Int32 {
        var earliest: UInt64 = .max
        let count = hotRouteCount.pointee
        var index = 0
        while index < count {
            if let deadline = hotRoutes[index]._withUnsafeGuaranteedRef({ $0.route.nextDeadline }), deadline < earliest
            {
                earliest = deadline
            }
            index += 1
        }
        guard earliest != .max else { return idleWakeMilliseconds }
        let now = SequencerReader.now()
        guard earliest > now else { return 0 }
        return Int32(min((earliest - now) / 1_000_000 + 1, UInt64(idleWakeMilliseconds)))
    }

}
