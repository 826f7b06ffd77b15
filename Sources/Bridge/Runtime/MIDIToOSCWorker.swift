import Foundation
import MIDI
import MIDIOSC
import OSC
import OSCTransport
import Pipeline
import Synchronization

/// The pipeline thread of the MIDI -> OSC path: takes events off the ring, runs every route,
/// formats each output for its destination and queues it on the UDP sender, which sends a whole
/// batch with one `sendmmsg`. In steady state nothing here allocates, locks, logs or blocks
/// (the allocation test in BridgeTests drives this loop).
final class MIDIToOSCWorker: @unchecked Sendable {
    // @unchecked Sendable: `routes`, `formatters`, `sender` and `packet` belong to the pipeline
    // thread once it runs; other threads read only the atomics and call `stop()`.

    private let ring: SPSCRing<MIDIEvent>
    private var routes: [Route]
    private var formatters: [OSCEventFormatter]
    private let sender: UDPSender
    private let sysexStore: SysExStore
    private let wake: WakeSignal
    private let packet: UnsafeMutableRawBufferPointer
    private let stopRequested = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    private var thread: Thread?

    /// Loop passes so far; the watchdog pings systemd only while this moves.
    let progress = Atomic<UInt64>(0)
    /// Events taken off the ring.
    let eventsIn = Atomic<Int>(0)
    /// Outputs that the destination's scheme does not send, or that did not fit a packet.
    let unformatted = Atomic<Int>(0)

    /// Packets longer than this (long SysEx as a blob) are not sent.
    static let packetCapacity = 65_507

    init(
        ring: SPSCRing<MIDIEvent>, routes: [Route], formatters: [OSCEventFormatter], sender: UDPSender,
        sysexStore: SysExStore, wake: WakeSignal
    ) {
        self.ring = ring
        self.routes = routes
        self.formatters = formatters
        self.sender = sender
        self.sysexStore = sysexStore
        self.wake = wake
        packet = .allocate(byteCount: Self.packetCapacity, alignment: 16)
    }

    deinit {
        packet.deallocate()
    }

    func start() {
        let thread = Thread { [self] in
            run()
            finished.signal()
        }
        thread.name = "aseqosc-pipeline"
        thread.start()
        self.thread = thread
    }

    /// Stops the loop after it has handled what is queued, then sends every route's owed
    /// note-offs, so nothing is left sounding.
    func stop() {
        guard thread != nil else { return }
        stopRequested.store(true, ordering: .releasing)
        wake.wake()
        finished.wait()
        thread = nil
    }

    private func run() {
        while true {
            let stopping = stopRequested.load(ordering: .acquiring)
            processPending()
            if stopping {
                releaseAllNotes()
                return
            }
            progress.add(1, ordering: .relaxed)
            wake.sleep(timeoutMilliseconds: sleepTimeout()) { ring.count > 0 }
        }
    }

    /// Runs everything on the ring through the routes, then due throttled values; flushes.
    func processPending() {
        var handled = 0
        while let event = ring.pop() {
            let now = event.timestamp
            var index = 0
            while index < routes.count {
                routes[index].process(event, now: now, into: emit)
                index += 1
            }
            if event.kind == .sysex { sysexStore.release(event.sysex) }
            handled += 1
            if handled & 63 == 0 { sender.flush() }
        }
        if handled > 0 { eventsIn.add(handled, ordering: .relaxed) }
        let now = Self.now()
        var index = 0
        while index < routes.count {
            if let deadline = routes[index].nextDeadline, deadline <= now {
                routes[index].flushDue(now: now, into: emit)
            }
            index += 1
        }
        sender.flush()
    }

    /// Formats one route output for its destination and queues the packet.
    private func emit(_ event: MIDIEvent, _ destination: Int) {
        var writer = OSCWriter(packet)
        guard formatters[destination].write(event, into: &writer) else {
            unformatted.add(1, ordering: .relaxed)
            return
        }
        sender.queue(UnsafeRawBufferPointer(rebasing: packet[0..<writer.count]), to: destination)
    }

    private func releaseAllNotes() {
        var index = 0
        while index < routes.count {
            routes[index].releaseAll(into: emit)
            index += 1
        }
        sender.flush()
    }

    /// How long to sleep: until the earliest throttle deadline, or until woken.
    private func sleepTimeout() -> Int32 {
        var earliest: UInt64 = .max
        var index = 0
        while index < routes.count {
            if let deadline = routes[index].nextDeadline, deadline < earliest { earliest = deadline }
            index += 1
        }
        guard earliest != .max else { return -1 }
        let now = Self.now()
        guard earliest > now else { return 0 }
        return Int32(min((earliest - now) / 1_000_000 + 1, 1000))
    }

    /// Monotonic nanoseconds, the clock events are stamped with.
    static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
    }

    /// Held notes across every route, for status.
    var heldNotes: Int { routes.reduce(0) { $0 + $1.heldNoteCount } }

    /// The routes' counters, readable from any thread.
    var routeCounters: [RouteCounters] { routes.map(\.counters) }
}
