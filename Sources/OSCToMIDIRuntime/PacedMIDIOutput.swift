import ALSASequencer
import BridgeSession
import Glibc
import MIDI
import Platform
import Recovery
import Storage

/// Writes events out of our ALSA output ports without ever blocking, keeping each port's order
/// and pacing SysEx per port, so a long SysEx to one synth never holds up notes to another.
///
/// An event for a port with nothing waiting goes to the kernel (`output_direct`): at once when
/// the caller says no more events are to come before the next ``flush(now:)`` and nothing is
/// staged (a plain OSC message); otherwise it is staged, and the staged events (a bundle's)
/// go together at that flush, which the OSC thread makes after each receive, in one `write`,
/// or as soon as ``DirectOutput/stageCapacity`` are staged. A SysEx goes out one
/// ``SequencerClient/sysexChunkSize`` chunk at a time, the next chunk due when the last one
/// would have left a MIDI cable (`bytesPerSecond`); while it is under way, later
/// events for that port wait in the port's queue behind it, except realtime bytes (clock,
/// start, stop), which MIDI lets through in the middle of SysEx. A write refused with `EAGAIN`
/// (the client's kernel pool is full) stays at the head of its port's queue and is retried
/// shortly; so do the staged events behind it.
///
/// A port's queue holds `queueCapacity` events; past that, new events are dropped (counted),
/// but never one that silences a sounding note: a note-off (or note-on with velocity 0) for a
/// note whose note-on went out, and an all-notes-off or all-sound-off after a note-on on its
/// channel, go into a reserve of ``releaseReserve`` more slots. One per note and two per channel
/// is all the reserve can ever need, since each such event uses up the note-on that made it
/// necessary.
///
/// Scheduled events (a bundle's, ``schedule(_:at:now:)``) go to the kernel's queue, which holds
/// them until their time. When the client's output pool is full the kernel refuses them
/// (`EAGAIN`); they then wait in the port's ``ScheduledBacklog``, in time order, and go to the
/// kernel as room frees (tried every ``kernelRetryInterval``) or, due first, are written at
/// their time by ``service(now:)`` like any event sent now. While a port's scheduled queue
/// holds anything, later scheduled events for it join it, so equal times keep their order.
/// Once nothing we scheduled is left in the kernel's queue, the queue is stopped (its timer
/// with it; ``MIDIPortWriter/stopQueueIfEmpty()``).
///
/// Owned by one thread; nothing here allocates after `init`. Every SysEx event handed in is
/// released to the store once written or dropped.
package final class PacedMIDIOutput<Writer: MIDIPortWriter> {
    /// Our ALSA port per output index.
    package let ports: [UInt8]
    /// Events a port may hold back while it is busy, note-offs in the reserve aside.
    package let queueCapacity: Int
    /// Counters per output index.
    package let counters: [OutputPortCounters]
    let writer: Writer
    let sysexStore: SysExStore?
    private let bytesPerSecond: Int
    /// The events each port holds back, `queueCapacity` plus the reserve.
    private let queues: PortQueues<MIDIEvent>
    /// What each port keeps beside its queue.
    let perPort: FixedBuffer<PortState>
    /// What each port's notes do: what a full queue keeps room for, and what a stop silences.
    let ledger: OutputNoteLedger
    /// The events staged in the writer, in its slot order, with their output index as port.
    private let staged = FixedBuffer(repeating: MIDIEvent(.clock), count: DirectOutput.stageCapacity)
    private var stagedCount = 0

    /// Scheduled events the kernel had no room for, per port.
    let backlog: ScheduledBacklog
    /// Scheduled events a port's scheduled queue holds before only needed note-offs get in.
    let scheduledCapacity: Int
    /// The kernel's queue as this output last left it.
    var kernel = KernelQueue()

    struct KernelQueue {
        /// The latest time (monotonic ns) of what went to the kernel's queue since it started;
        /// nil while it is stopped.
        var until: UInt64?
        /// When the kernel's queue is next checked for being empty.
        var checkAt: UInt64 = 0
        /// When a refused scheduled write may next be tried.
        var retryAt: UInt64 = 0
    }

    /// What ``PacedMIDIOutput`` keeps for one port beside its queue.
    package struct PortState {
        /// How far into the head SysEx we are.
        var offset = 0
        /// When the port may write again (monotonic ns).
        var readyAt: UInt64 = 0
        /// The most events the queue has held.
        var highWater = 0
        /// The most events the scheduled queue has held.
        var scheduledHighWater = 0
    }

    /// Slots past `queueCapacity` kept for note-offs: one per note, and one per channel for
    /// each of all-notes-off and all-sound-off.
    static var releaseReserve: Int { 16 * 128 + 2 * 16 }

    /// How long an `EAGAIN` waits before the next try.
    static var retryInterval: UInt64 { 1_000_000 }

    /// How long after the kernel refused a scheduled event (a full pool) it is asked again.
    static var kernelRetryInterval: UInt64 { 200_000_000 }

    /// How long after the last scheduled event's time the queue is checked for being empty (its
    /// timer ticks at 1 ms), and checked again while it is not.
    static var queueStopDelay: UInt64 { 2_000_000 }

    init(
        writer: Writer, ports: [UInt8], sysexStore: SysExStore?, bytesPerSecond: Int, queueCapacity: Int = 1024,
        scheduledCapacity: Int = 4096
    ) {
        self.writer = writer
        self.ports = ports
        self.sysexStore = sysexStore
        self.bytesPerSecond = bytesPerSecond
        self.queueCapacity = queueCapacity
        let counters = ports.map { _ in OutputPortCounters() }
        self.counters = counters
        queues = PortQueues(ports: ports.count, capacity: queueCapacity + Self.releaseReserve)
        perPort = FixedBuffer(repeating: PortState(), count: max(ports.count, 1))
        ledger = OutputNoteLedger(ports: ports.count)
        self.scheduledCapacity = scheduledCapacity
        backlog = ScheduledBacklog(ports: ports.count, capacity: scheduledCapacity + Self.releaseReserve)
    }

    /// Whether nothing is staged, no port holds events back, nothing scheduled waits for room
    /// and the kernel's queue is stopped (or has nothing of ours in it).
    var isIdle: Bool { queues.total == 0 && stagedCount == 0 && backlog.total == 0 && kernel.until == nil }

    /// Whether output `port` holds no event back: a replay's values go out only then, so that
    /// a live event never waits behind them.
    func isQuiet(port: Int) -> Bool { port < ports.count && queues.count(port) == 0 }

    /// Scheduled events waiting in our scheduled queues (the kernel had no room), over all ports.
    var scheduledWaiting: Int { backlog.total }

    /// Events written, over all ports.
    var sent: Int { counters.reduce(0) { $0 + $1.sent.load(ordering: .relaxed) } }

    /// Sends `event` out of the output port `event.port`: stages it for the next
    /// ``flush(now:)``, writes it now (SysEx, 14-bit controllers, RPN, NRPN; or any event when
    /// not `moreToCome` before that flush and nothing is staged), or queues it behind that
    /// port's earlier events.
    @inline(__always)
    func send(_ event: MIDIEvent, now: UInt64, moreToCome: Bool = true) {
        // Nearly every event: one event of a kind written whole, for a port holding nothing
        // back: a few checks and the write, apart from the queueing below.
        let port = Int(event.port)
        guard port < ports.count, queues.count(port) == 0, now >= perPort[port].readyAt,
            DirectOutput.canStage(event.kind)
        else {
            sendOtherwise(event, now: now)
            return
        }
        if moreToCome || stagedCount > 0 {
            stage(event, port: port, now: now)
            return
        }
        do {
            try writer.send(event, from: ports[port], sysexBytes: nil)
            counters[port].sent.add(1, ordering: .relaxed)
            ledger.sent(event, port: port, now: now)
        } catch {
            if case .blocked = refusal(error, port: port, now: now) { push(event, port: port, offset: 0, now: now) }
        }
    }

    /// What a write the kernel refused leaves to do: with `EAGAIN` (its pool is full) the port
    /// waits ``retryInterval`` and the event is `.blocked`, to wait at the head of the port's
    /// queue; any other refusal is counted as failed and the event is `.done`.
    @inline(never)
    private func refusal(_ error: ALSAError, port: Int, now: UInt64) -> Attempt {
        guard error.code == -EAGAIN else {
            counters[port].failed.add(1, ordering: .relaxed)
            return .done
        }
        perPort[port].readyAt = now + Self.retryInterval
        return .blocked
    }

    /// ``send(_:now:moreToCome:)`` for every other event: one that waits behind its port's
    /// queue or pacing, a realtime event, or a kind written as several (written now, after
    /// what is staged).
    @inline(never)
    private func sendOtherwise(_ event: MIDIEvent, now: UInt64) {
        let port = Int(event.port)
        guard port < ports.count else {
            release(event)
            return
        }
        guard mayWrite(event, port: port, now: now) else {
            push(event, port: port, offset: 0, now: now)
            return
        }
        if DirectOutput.canStage(event.kind) {
            // A realtime event (those may pass a port's queue).
            stage(event, port: port, now: now)
            return
        }
        // What is staged goes first; refused, it now fills this port's queue.
        flush(now: now)
        guard mayWrite(event, port: port, now: now) else {
            push(event, port: port, offset: 0, now: now)
            return
        }
        var offset = 0
        switch attempt(event, port: port, offset: &offset, now: now) {
        case .done:
            ledger.sent(event, port: port, now: now)
        case .partial, .blocked:
            push(event, port: port, offset: offset, now: now)
        }
    }

    /// Whether `event` may leave before anything `port` holds back: when it holds nothing and
    /// is not pacing, or always for realtime events.
    @inline(__always)
    private func mayWrite(_ event: MIDIEvent, port: Int, now: UInt64) -> Bool {
        (queues.count(port) == 0 && now >= perPort[port].readyAt) || event.kind.isRealtime
    }

    /// Writes the staged events. One the kernel refuses with `EAGAIN` (its pool is full) goes
    /// back to the head of its port's queue with those staged after it, to be retried after
    /// ``retryInterval``; one refused for another reason is counted as failed and the rest go on.
    @inline(__always)
    func flush(now: UInt64) {
        // Checked inline: the OSC thread flushes after every receive, nearly always with
        // nothing staged (a plain message is written at once).
        if stagedCount > 0 { writeStaged(now: now) }
    }

    @inline(never)
    private func writeStaged(now: UInt64) {
        var next = 0
        while next < stagedCount {
            let (written, error) = writer.writeStaged(next..<stagedCount)
            var index = next
            while index < next + written {
                counters[Int(staged[index].port)].sent.add(1, ordering: .relaxed)
                index += 1
            }
            next += written
            guard next < stagedCount else { break }
            if let error, error.code == -EAGAIN {
                requeue(next..<stagedCount, now: now)
                break
            }
            // Refused for good (a subscriber gone); or some went out and the kernel kept back
            // why the next did not, which writing the rest again tells.
            if error != nil || written == 0 {
                counters[Int(staged[next].port)].failed.add(1, ordering: .relaxed)
                next += 1
            }
        }
        stagedCount = 0
    }

    @inline(__always)
    private func stage(_ event: MIDIEvent, port: Int, now: UInt64) {
        writer.stage(event, from: ports[port], at: stagedCount)
        staged[stagedCount] = event
        stagedCount += 1
        ledger.sent(event, port: port, now: now)
        if stagedCount == DirectOutput.stageCapacity { flush(now: now) }
    }

    /// Puts staged events the kernel refused back into their ports' queues, in order. They were
    /// tracked when staged and had their port's queue to themselves, so they go in without the
    /// capacity check, which would take a note-off already tracked for redundant.
    private func requeue(_ range: Range<Int>, now: UInt64) {
        for index in range {
            let event = staged[index]
            let port = Int(event.port)
            perPort[port].readyAt = now + Self.retryInterval
            if event.kind.isRealtime && queues.count(port) > 0 {
                pushFront(event, port: port)
            } else if queues.count(port) < queues.capacity {
                if queues.count(port) == 0 { perPort[port].offset = 0 }
                append(event, port: port)
            } else {
                counters[port].droppedQueueFull.add(1, ordering: .relaxed)
            }
        }
    }

    /// Writes what is staged and what has become due; returns when to call again (monotonic
    /// ns), or nil when no port holds anything back.
    func service(now: UInt64) -> UInt64? {
        flush(now: now)
        var earliest = UInt64.max
        if backlog.total > 0 { earliest = serviceScheduled(now: now) }
        if let until = kernel.until {
            let checkAt = max(until + Self.queueStopDelay, kernel.checkAt)
            if now >= checkAt {
                if writer.stopQueueIfEmpty() {
                    kernel.until = nil
                } else {
                    kernel.checkAt = now + Self.queueStopDelay
                    earliest = min(earliest, kernel.checkAt)
                }
            } else {
                earliest = min(earliest, checkAt)
            }
        }
        guard queues.total > 0 else { return earliest == .max ? nil : earliest }
        var port = 0
        while port < ports.count {
            while queues.count(port) > 0 && now >= perPort[port].readyAt {
                switch attempt(queues.first(port), port: port, offset: &perPort[port].offset, now: now) {
                case .done:
                    pop(port)
                case .partial, .blocked:
                    break  // `readyAt` has moved on, which ends the loop
                }
            }
            if queues.count(port) > 0 { earliest = min(earliest, perPort[port].readyAt) }
            port += 1
        }
        return earliest == .max ? nil : earliest
    }

    /// At shutdown, after the grace period: drops what is still held back (counted), except the
    /// events that silence notes, which are written at once, pacing aside; a write refused with
    /// `EAGAIN` is retried for up to `retryFor` nanoseconds.
    func finish(retryFor: UInt64 = 100_000_000) {
        flush(now: MonotonicClock.now())
        var port = 0
        while port < ports.count {
            while queues.count(port) > 0 {
                let event = queues.first(port)
                if Self.silencesNotes(event) {
                    let deadline = MonotonicClock.now() + retryFor
                    var offset = 0
                    while case .blocked = attempt(event, port: port, offset: &offset, now: 0),
                        MonotonicClock.now() < deadline
                    {
                        usleep(1000)
                    }
                } else {
                    counters[port].droppedAtStop.add(1, ordering: .relaxed)
                    release(event)
                }
                pop(port)
            }
            port += 1
        }
    }

    /// Whether `event` ends notes: a note-off, a note-on with velocity 0, all-sound-off (120) or
    /// all-notes-off (123).
    static func silencesNotes(_ event: MIDIEvent) -> Bool {
        event.endsNote || (event.kind == .controlChange && (event.data1 == 120 || event.data1 == 123))
    }

    // MARK: Writing

    enum Attempt {
        /// Written completely (or failed for good and counted): the event is finished.
        case done
        /// A SysEx chunk went out and more remain; `readyAt` says when the next may.
        case partial
        /// The kernel said `EAGAIN`; try again after ``retryInterval``.
        case blocked
    }

    /// Tries to write `event` (for SysEx: its next chunk from `offset`, advancing `offset`).
    /// Inlined: for everything but SysEx it is one write and a count.
    @inline(__always)
    private func attempt(_ event: MIDIEvent, port: Int, offset: inout Int, now: UInt64) -> Attempt {
        guard event.kind == .sysex else {
            do {
                // 14-bit controllers and (N)RPN go out as their control changes (see
                // SequencerClient.send): ALSA's raw MIDI converters drop the assembled events.
                try writer.send(event, from: ports[port], sysexBytes: nil)
                counters[port].sent.add(1, ordering: .relaxed)
            } catch {
                return refusal(error, port: port, now: now)
            }
            return .done
        }
        return attemptSysEx(event, port: port, offset: &offset, now: now)
    }

    private func attemptSysEx(_ event: MIDIEvent, port: Int, offset: inout Int, now: UInt64) -> Attempt {
        guard let sysexStore else { return .done }
        let rate = bytesPerSecond
        var position = offset
        let result: Attempt = sysexStore.withBytes(event.sysex) { bytes in
            guard !bytes.isEmpty else { return .done }
            while position < bytes.count {
                let end = min(position + SequencerClient.sysexChunkSize, bytes.count)
                let chunk = UnsafeRawBufferPointer(rebasing: bytes[position..<end])
                do throws(ALSAError) {
                    try writer.send(event, from: ports[port], sysexBytes: chunk)
                } catch {
                    return refusal(error, port: port, now: now)
                }
                position = end
                if rate > 0 {
                    // The next chunk (or the next event on this port) may go when this one
                    // would have left the cable.
                    perPort[port].readyAt = now + UInt64(chunk.count) * 1_000_000_000 / UInt64(rate)
                    if position < bytes.count { return .partial }
                }
            }
            counters[port].sent.add(1, ordering: .relaxed)
            return .done
        }
        offset = position
        if case .done = result { release(event) }
        return result
    }

    // MARK: Per-port queues

    /// Whether `event` may wait in `port`'s queue: anything while it holds fewer than
    /// `queueCapacity`; past that, only an event that silences a note still owed its note-off
    /// (counting the drops either way).
    private func mayQueue(_ event: MIDIEvent, port: Int) -> Bool {
        if queues.count(port) < queueCapacity { return true }
        guard Self.silencesNotes(event) else {
            counters[port].droppedQueueFull.add(1, ordering: .relaxed)
            return false
        }
        guard ledger.needsNow(event, port: port) else {
            counters[port].droppedRedundantNoteOffs.add(1, ordering: .relaxed)
            return false
        }
        guard queues.count(port) < queues.capacity else {
            counters[port].droppedNoteOffs.add(1, ordering: .relaxed)
            return false
        }
        counters[port].reservedNoteOffs.add(1, ordering: .relaxed)
        return true
    }

    private func push(_ event: MIDIEvent, port: Int, offset: Int, now: UInt64) {
        guard mayQueue(event, port: port) else {
            release(event)
            return
        }
        ledger.sent(event, port: port, now: now)
        if queues.count(port) == 0 { perPort[port].offset = offset }
        append(event, port: port)
    }

    private func append(_ event: MIDIEvent, port: Int) {
        queues.append(event, port: port)
        noteHighWater(port)
    }

    /// Puts `event` right after the head (the head may be a SysEx part-way out).
    private func pushFront(_ event: MIDIEvent, port: Int) {
        // Realtime events carry no SysEx, so a dropped one has nothing to release.
        guard mayQueue(event, port: port) else { return }
        queues.insert(event, at: 1, port: port)
        noteHighWater(port)
    }

    private func noteHighWater(_ port: Int) {
        let count = queues.count(port)
        if count > perPort[port].highWater {
            perPort[port].highWater = count
            counters[port].queueHighWater.store(count, ordering: .relaxed)
        }
    }

    private func pop(_ port: Int) {
        queues.removeFirst(port)
        perPort[port].offset = 0
    }

    func release(_ event: MIDIEvent) {
        if event.kind == .sysex { sysexStore?.release(event.sysex) }
    }
}
