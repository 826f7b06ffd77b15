import ALSASequencer
import Glibc
import MIDI
import Synchronization

/// Counters of one output port, readable from any thread (relaxed: statistics only).
final class OutputPortCounters: Sendable {
    /// Events written (a SysEx counts once, however many chunks), now or scheduled.
    let sent = Atomic<Int>(0)
    /// Events other than note-offs dropped because the port's queue was full.
    let droppedQueueFull = Atomic<Int>(0)
    /// Note-offs (and all-notes-off) dropped from a full queue because they silence nothing: no
    /// note-on for them went out since the last note-off.
    let droppedRedundantNoteOffs = Atomic<Int>(0)
    /// Note-offs that found even the reserve full (never expected: the reserve is sized for one
    /// per note).
    let droppedNoteOffs = Atomic<Int>(0)
    /// Note-offs queued past the capacity, in the reserve kept for them.
    let reservedNoteOffs = Atomic<Int>(0)
    /// Events still waiting when the output stopped (note-offs are written, never dropped).
    let droppedAtStop = Atomic<Int>(0)
    /// Writes the kernel refused for a reason other than a full pool.
    let failed = Atomic<Int>(0)
    /// The most events the port's queue has held at once.
    let queueHighWater = Atomic<Int>(0)
    /// Scheduled events that found the kernel's pool full and waited in our scheduled queue.
    let scheduledHeld = Atomic<Int>(0)
    /// The most events the port's scheduled queue has held at once.
    let scheduledHighWater = Atomic<Int>(0)
    /// Scheduled events dropped from a full scheduled queue, by ``MIDIEventKind`` raw value
    /// (never a note-off still needed: see ``PacedMIDIOutput/schedule(_:at:now:)``).
    let droppedScheduled = InlineArray<32, Atomic<Int>> { _ in Atomic(0) }
}

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
final class PacedMIDIOutput<Writer: MIDIPortWriter> {
    /// Our ALSA port per output index.
    let ports: [UInt8]
    /// Events a port may hold back while it is busy, note-offs in the reserve aside.
    let queueCapacity: Int
    /// Counters per output index.
    let counters: [OutputPortCounters]
    /// ``counters`` again, unretained in plain memory (the array keeps them alive): reading a
    /// class out of an array retains and releases it, on every event.
    private let unretainedCounters: UnsafeMutablePointer<Unmanaged<OutputPortCounters>>
    private let writer: Writer
    private let sysexStore: SysExStore?
    private let bytesPerSecond: Int
    private let slotsPerPort: Int
    // Per port: a ring of `slotsPerPort` events starting at `heads[p]`, `counts[p]` long; how
    // far into the head SysEx we are; when the port may write again (monotonic ns); the notes
    // whose note-on went out with no note-off since; the channels (bit c: controller 123, bit
    // 16 + c: 120) whose all-notes-off went out with no note-on since; the high-water mark.
    private let events: UnsafeMutablePointer<MIDIEvent>
    private let heads: UnsafeMutablePointer<Int>
    private let counts: UnsafeMutablePointer<Int>
    private let offsets: UnsafeMutablePointer<Int>
    private let readyAt: UnsafeMutablePointer<UInt64>
    private let owed: UnsafeMutablePointer<HeldNotes>
    private let channelsReleased: UnsafeMutablePointer<UInt32>
    private let highWater: UnsafeMutablePointer<Int>
    private var waiting = 0
    /// The events staged in the writer, in its slot order, with their output index as port.
    private let staged: UnsafeMutablePointer<MIDIEvent>
    private var stagedCount = 0

    /// Scheduled events the kernel had no room for, per port.
    private let backlog: ScheduledBacklog
    /// Scheduled events a port's scheduled queue holds before only needed note-offs get in.
    let scheduledCapacity: Int
    // Per port, in the order scheduled events were accepted (kernel or backlog): the notes
    // switched on with no silencing event scheduled since, the notes a silencing event was
    // scheduled for since their last scheduled note-on, and the channels whose scheduled
    // all-notes-off (bit c) or all-sound-off (bit 16 + c) came with no scheduled note-on since.
    private let scheduledOn: UnsafeMutablePointer<HeldNotes>
    private let scheduledOff: UnsafeMutablePointer<HeldNotes>
    private let scheduledChannelsReleased: UnsafeMutablePointer<UInt32>
    private let scheduledHighWater: UnsafeMutablePointer<Int>
    /// The latest time (monotonic ns) of what went to the kernel's queue since it started; nil
    /// while it is stopped.
    private var kernelUntil: UInt64?
    /// When the kernel's queue is next checked for being empty.
    private var queueCheckAt: UInt64 = 0
    /// When a refused scheduled write may next be tried.
    private var kernelRetryAt: UInt64 = 0

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
        counters = ports.map { _ in OutputPortCounters() }
        unretainedCounters = .allocate(capacity: max(ports.count, 1))
        for (port, counter) in counters.enumerated() {
            (unretainedCounters + port).initialize(to: .passUnretained(counter))
        }
        slotsPerPort = queueCapacity + Self.releaseReserve
        let count = max(ports.count, 1)
        events = .allocate(capacity: count * slotsPerPort)
        events.initialize(repeating: MIDIEvent(.clock), count: count * slotsPerPort)
        heads = .allocate(capacity: count)
        heads.initialize(repeating: 0, count: count)
        counts = .allocate(capacity: count)
        counts.initialize(repeating: 0, count: count)
        offsets = .allocate(capacity: count)
        offsets.initialize(repeating: 0, count: count)
        readyAt = .allocate(capacity: count)
        readyAt.initialize(repeating: 0, count: count)
        owed = .allocate(capacity: count)
        owed.initialize(repeating: HeldNotes(), count: count)
        channelsReleased = .allocate(capacity: count)
        channelsReleased.initialize(repeating: 0, count: count)
        highWater = .allocate(capacity: count)
        highWater.initialize(repeating: 0, count: count)
        staged = .allocate(capacity: DirectOutput.stageCapacity)
        staged.initialize(repeating: MIDIEvent(.clock), count: DirectOutput.stageCapacity)
        self.scheduledCapacity = scheduledCapacity
        backlog = ScheduledBacklog(ports: count, capacity: scheduledCapacity + Self.releaseReserve)
        scheduledOn = .allocate(capacity: count)
        scheduledOn.initialize(repeating: HeldNotes(), count: count)
        scheduledOff = .allocate(capacity: count)
        scheduledOff.initialize(repeating: HeldNotes(), count: count)
        scheduledChannelsReleased = .allocate(capacity: count)
        scheduledChannelsReleased.initialize(repeating: 0, count: count)
        scheduledHighWater = .allocate(capacity: count)
        scheduledHighWater.initialize(repeating: 0, count: count)
    }

    deinit {
        unretainedCounters.deallocate()
        events.deallocate()
        heads.deallocate()
        counts.deallocate()
        offsets.deallocate()
        readyAt.deallocate()
        owed.deinitialize(count: max(ports.count, 1))
        owed.deallocate()
        channelsReleased.deallocate()
        highWater.deallocate()
        staged.deallocate()
        scheduledOn.deinitialize(count: max(ports.count, 1))
        scheduledOn.deallocate()
        scheduledOff.deinitialize(count: max(ports.count, 1))
        scheduledOff.deallocate()
        scheduledChannelsReleased.deallocate()
        scheduledHighWater.deallocate()
    }

    /// Whether nothing is staged, no port holds events back, nothing scheduled waits for room
    /// and the kernel's queue is stopped (or has nothing of ours in it).
    var isIdle: Bool { waiting == 0 && stagedCount == 0 && backlog.total == 0 && kernelUntil == nil }

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
        // back. Kept apart from the rest so that it stays a few instructions (BENCHMARKS.md).
        let port = Int(event.port)
        guard port < ports.count, counts[port] == 0, now >= readyAt[port], DirectOutput.canStage(event.kind) else {
            sendOtherwise(event, now: now)
            return
        }
        if moreToCome || stagedCount > 0 {
            stage(event, port: port, now: now)
            return
        }
        do {
            try writer.send(event, from: ports[port], sysexBytes: nil)
            unretainedCounters[port]._withUnsafeGuaranteedRef { _ = $0.sent.add(1, ordering: .relaxed) }
            // Not `track`: its specialisation is not inlined here (a call per message).
            trackNoteOffsOwed(event, owed: &owed[port], channelsReleased: &channelsReleased[port])
        } catch {
            if case .blocked = refusal(error, port: port, now: now) { push(event, port: port, offset: 0) }
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
        readyAt[port] = now + Self.retryInterval
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
            push(event, port: port, offset: 0)
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
            push(event, port: port, offset: 0)
            return
        }
        var offset = 0
        switch attempt(event, port: port, offset: &offset, now: now) {
        case .done:
            track(event, port: port)
        case .partial, .blocked:
            push(event, port: port, offset: offset)
        }
    }

    /// Whether `event` may leave before anything `port` holds back: when it holds nothing and
    /// is not pacing, or always for realtime events.
    @inline(__always)
    private func mayWrite(_ event: MIDIEvent, port: Int, now: UInt64) -> Bool {
        (counts[port] == 0 && now >= readyAt[port]) || event.kind.isRealtime
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
                unretainedCounters[Int(staged[index].port)]._withUnsafeGuaranteedRef {
                    _ = $0.sent.add(1, ordering: .relaxed)
                }
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
        track(event, port: port)
        if stagedCount == DirectOutput.stageCapacity { flush(now: now) }
    }

    /// Puts staged events the kernel refused back into their ports' queues, in order. They were
    /// tracked when staged and had their port's queue to themselves, so they go in without the
    /// capacity check, which would take a note-off already tracked for redundant.
    private func requeue(_ range: Range<Int>, now: UInt64) {
        for index in range {
            let event = staged[index]
            let port = Int(event.port)
            readyAt[port] = now + Self.retryInterval
            if event.kind.isRealtime && counts[port] > 0 {
                pushFront(event, port: port)
            } else if counts[port] < slotsPerPort {
                if counts[port] == 0 { offsets[port] = 0 }
                append(event, port: port)
            } else {
                counters[port].droppedQueueFull.add(1, ordering: .relaxed)
            }
        }
    }

    /// Schedules `event` at `time` (monotonic nanoseconds): the kernel's queue holds it until
    /// then; if the kernel has no room (its pool is full), the port's scheduled queue does. Not
    /// paced: a scheduled SysEx leaves in one go at its time.
    ///
    /// A port's scheduled queue holds ``scheduledCapacity`` events; past that, an event due
    /// sooner than the latest it holds (a note-off aside) takes that one's place, so a bundle for
    /// the next moment is never lost behind a pile of bundles for the next hour; the other is
    /// dropped, counted by kind. A silencing event (``silencesNotes(_:)``) is never the one that
    /// gives way: one for a note switched on by an event scheduled before it, or sounding now,
    /// goes into a reserve of ``releaseReserve`` more slots; one for a note whose silencing is
    /// already scheduled, or that was never on, is dropped when the queue is full.
    func schedule(_ event: MIDIEvent, at time: UInt64, now: UInt64) {
        let port = Int(event.port)
        guard port < ports.count else {
            release(event)
            return
        }
        if backlog.count(port) == 0 {
            if case .done = scheduleInKernel(event, port: port, at: time) {
                trackScheduled(event, port: port)
                return
            }
            kernelRetryAt = now + Self.kernelRetryInterval
        }
        hold(event, at: time, port: port)
    }

    /// Writes `event` to the kernel's queue for `time`: `.done` when it went (counted, tracked
    /// and its SysEx released) or was refused for good (counted as failed), `.blocked` when the
    /// pool is full.
    private func scheduleInKernel(_ event: MIDIEvent, port: Int, at time: UInt64) -> Attempt {
        do {
            if event.kind == .sysex, let sysexStore {
                try sysexStore.withBytes(event.sysex) { (bytes) throws(ALSAError) in
                    guard !bytes.isEmpty else { return }
                    try writer.schedule(event, from: ports[port], at: time, sysexBytes: bytes)
                }
            } else {
                try writer.schedule(event, from: ports[port], at: time, sysexBytes: nil)
            }
        } catch {
            guard error.code != -EAGAIN else { return .blocked }
            counters[port].failed.add(1, ordering: .relaxed)
            release(event)
            return .done
        }
        release(event)
        counters[port].sent.add(1, ordering: .relaxed)
        kernelUntil = max(kernelUntil ?? 0, time)
        // A note-on counts as gone out; a scheduled note-off does not count as silencing
        // anything yet, so a note-off sent now for the same note still gets its reserve slot.
        if event.kind == .noteOn && event.data2 > 0 { track(event, port: port) }
        return .done
    }

    /// Puts `event` into `port`'s scheduled queue, or drops it (counted) when the queue is full
    /// and the event neither is sooner than what it holds nor silences a note that needs it.
    private func hold(_ event: MIDIEvent, at time: UInt64, port: Int) {
        let entry = ScheduledBacklog.Entry(time: time, event: event)
        let count = backlog.count(port)
        if count >= scheduledCapacity {
            if Self.silencesNotes(event) {
                guard scheduledSilencingIsNeeded(event, port: port) else {
                    dropScheduled(event, port: port)
                    return
                }
                if count >= backlog.capacity {
                    // The reserve is full too (never expected): the latest other event gives way.
                    guard let victim = backlog.lastIndex(port: port, where: { !Self.silencesNotes($0) }) else {
                        counters[port].droppedNoteOffs.add(1, ordering: .relaxed)
                        return
                    }
                    dropScheduled(backlog.remove(at: victim, port: port).event, port: port)
                } else {
                    counters[port].reservedNoteOffs.add(1, ordering: .relaxed)
                }
            } else {
                guard let victim = backlog.lastIndex(port: port, where: { !Self.silencesNotes($0) }),
                    backlog.entry(victim, port: port).time > time
                else {
                    dropScheduled(event, port: port)
                    return
                }
                dropScheduled(backlog.remove(at: victim, port: port).event, port: port)
            }
        }
        _ = backlog.insert(entry, port: port)
        trackScheduled(event, port: port)
        counters[port].scheduledHeld.add(1, ordering: .relaxed)
        if backlog.count(port) > scheduledHighWater[port] {
            scheduledHighWater[port] = backlog.count(port)
            counters[port].scheduledHighWater.store(backlog.count(port), ordering: .relaxed)
        }
    }

    private func dropScheduled(_ event: MIDIEvent, port: Int) {
        counters[port].droppedScheduled[Int(event.kind.rawValue) & 31].add(1, ordering: .relaxed)
        release(event)
    }

    /// Whether a scheduled silencing event may be needed: its note was switched on by a
    /// scheduled note-on accepted before it with no silencing scheduled since, or is sounding
    /// from a note-on sent now and has no silencing scheduled yet; for all-notes-off and
    /// all-sound-off, unless one was scheduled for the channel with no note-on since.
    private func scheduledSilencingIsNeeded(_ event: MIDIEvent, port: Int) -> Bool {
        if event.kind == .controlChange {
            let bit: UInt32 = 1 << (UInt32(event.channel & 15) + (event.data1 == 120 ? 16 : 0))
            return scheduledChannelsReleased[port] & bit == 0
        }
        let channel = event.channel & 15
        let note = event.data1 & 127
        return scheduledOn[port].isHeld(channel: channel, note: note)
            || (owed[port].isHeld(channel: channel, note: note) && !scheduledOff[port].isHeld(channel: channel, note: note))
    }

    /// Notes what a scheduled event accepted (by the kernel or our scheduled queue) does to the
    /// notes scheduled silencing events may be needed for.
    private func trackScheduled(_ event: MIDIEvent, port: Int) {
        switch event.kind {
        case .noteOn where event.data2 > 0:
            scheduledOn[port].track(event)
            var off = event
            off.kind = .noteOff
            scheduledOff[port].track(off)
            let channel = UInt32(event.channel & 15)
            scheduledChannelsReleased[port] &= ~(1 << channel | 1 << (channel + 16))
        case .noteOn, .noteOff:
            scheduledOn[port].track(event)
            var on = event
            on.kind = .noteOn
            on.data2 = 1
            scheduledOff[port].track(on)
        case .controlChange where event.data1 == 120 || event.data1 == 123:
            scheduledOn[port].track(event)
            scheduledChannelsReleased[port] |= 1 << (UInt32(event.channel & 15) + (event.data1 == 120 ? 16 : 0))
        default:
            break
        }
    }

    /// Drops every scheduled event still waiting in our scheduled queues (stopping: those in the
    /// kernel's queue are removed alongside) and forgets what went to the kernel's queue.
    func discardScheduled() {
        backlog.removeAll { release($0) }
        kernelUntil = nil
    }

    /// Writes what is staged and what has become due; returns when to call again (monotonic
    /// ns), or nil when no port holds anything back.
    func service(now: UInt64) -> UInt64? {
        flush(now: now)
        var earliest = UInt64.max
        if backlog.total > 0 { earliest = serviceScheduled(now: now) }
        if let until = kernelUntil {
            let checkAt = max(until + Self.queueStopDelay, queueCheckAt)
            if now >= checkAt {
                if writer.stopQueueIfEmpty() {
                    kernelUntil = nil
                } else {
                    queueCheckAt = now + Self.queueStopDelay
                    earliest = min(earliest, queueCheckAt)
                }
            } else {
                earliest = min(earliest, checkAt)
            }
        }
        guard waiting > 0 else { return earliest == .max ? nil : earliest }
        var port = 0
        while port < ports.count {
            while counts[port] > 0 && now >= readyAt[port] {
                let slot = port * slotsPerPort + heads[port]
                let event = events[slot]
                switch attempt(event, port: port, offset: &offsets[port], now: now) {
                case .done:
                    pop(port)
                case .partial, .blocked:
                    break  // `readyAt` has moved on, which ends the loop
                }
            }
            if counts[port] > 0 { earliest = min(earliest, readyAt[port]) }
            port += 1
        }
        return earliest == .max ? nil : earliest
    }

    /// Writes the scheduled events that waited for room and are due now, as events sent now; when
    /// the kernel may have room again, hands it the rest, earliest first, until it refuses one.
    /// Returns when to call again for them.
    private func serviceScheduled(now: UInt64) -> UInt64 {
        var port = 0
        while port < ports.count {
            while backlog.count(port) > 0 && backlog.first(port).time <= now {
                let event = backlog.first(port).event
                backlog.removeFirst(port)
                send(event, now: now)
            }
            port += 1
        }
        flush(now: now)
        if backlog.total > 0 && now >= kernelRetryAt {
            var blocked = false
            port = 0
            while port < ports.count && !blocked {
                while backlog.count(port) > 0 {
                    let event = backlog.first(port).event
                    guard case .done = scheduleInKernel(event, port: port, at: backlog.first(port).time) else {
                        blocked = true
                        break
                    }
                    backlog.removeFirst(port)
                }
                port += 1
            }
            if blocked { kernelRetryAt = now + Self.kernelRetryInterval }
        }
        guard backlog.total > 0 else { return .max }
        var earliest = kernelRetryAt
        port = 0
        while port < ports.count {
            if backlog.count(port) > 0 { earliest = min(earliest, backlog.first(port).time) }
            port += 1
        }
        return earliest
    }

    /// At shutdown, after the grace period: drops what is still held back (counted), except the
    /// events that silence notes, which are written at once, pacing aside; a write refused with
    /// `EAGAIN` is retried for up to `retryFor` nanoseconds.
    func finish(retryFor: UInt64 = 100_000_000) {
        flush(now: SequencerSession.now())
        var port = 0
        while port < ports.count {
            while counts[port] > 0 {
                let event = events[port * slotsPerPort + heads[port]]
                if Self.silencesNotes(event) {
                    let deadline = SequencerSession.now() + retryFor
                    var offset = 0
                    while case .blocked = attempt(event, port: port, offset: &offset, now: 0),
                        SequencerSession.now() < deadline
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

    private enum Attempt {
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
                unretainedCounters[port]._withUnsafeGuaranteedRef { _ = $0.sent.add(1, ordering: .relaxed) }
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
                    readyAt[port] = now + UInt64(chunk.count) * 1_000_000_000 / UInt64(rate)
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
        if counts[port] < queueCapacity { return true }
        guard Self.silencesNotes(event) else {
            counters[port].droppedQueueFull.add(1, ordering: .relaxed)
            return false
        }
        let needed: Bool
        if event.kind == .controlChange {
            let bit: UInt32 = 1 << (UInt32(event.channel & 15) + (event.data1 == 120 ? 16 : 0))
            needed = channelsReleased[port] & bit == 0
        } else {
            needed = owed[port].isHeld(channel: event.channel, note: event.data1)
        }
        guard needed else {
            counters[port].droppedRedundantNoteOffs.add(1, ordering: .relaxed)
            return false
        }
        guard counts[port] < slotsPerPort else {
            counters[port].droppedNoteOffs.add(1, ordering: .relaxed)
            return false
        }
        counters[port].reservedNoteOffs.add(1, ordering: .relaxed)
        return true
    }

    /// Notes what an event that went out (or was queued to) does to the notes owed a note-off.
    @inline(__always)
    private func track(_ event: MIDIEvent, port: Int) {
        trackNoteOffsOwed(event, owed: &owed[port], channelsReleased: &channelsReleased[port])
    }

    private func push(_ event: MIDIEvent, port: Int, offset: Int) {
        guard mayQueue(event, port: port) else {
            release(event)
            return
        }
        track(event, port: port)
        if counts[port] == 0 { offsets[port] = offset }
        append(event, port: port)
    }

    private func append(_ event: MIDIEvent, port: Int) {
        var index = heads[port] + counts[port]
        if index >= slotsPerPort { index -= slotsPerPort }
        events[port * slotsPerPort + index] = event
        grow(port)
    }

    /// Puts `event` right after the head (the head may be a SysEx part-way out).
    private func pushFront(_ event: MIDIEvent, port: Int) {
        // Realtime events carry no SysEx, so a dropped one has nothing to release.
        guard mayQueue(event, port: port) else { return }
        // Shift the tail one place back, then put the event at head + 1.
        var i = counts[port]
        while i > 1 {
            let to = (heads[port] + i) % slotsPerPort
            let from = (heads[port] + i - 1) % slotsPerPort
            events[port * slotsPerPort + to] = events[port * slotsPerPort + from]
            i -= 1
        }
        events[port * slotsPerPort + (heads[port] + 1) % slotsPerPort] = event
        grow(port)
    }

    private func grow(_ port: Int) {
        counts[port] += 1
        waiting += 1
        if counts[port] > highWater[port] {
            highWater[port] = counts[port]
            counters[port].queueHighWater.store(counts[port], ordering: .relaxed)
        }
    }

    private func pop(_ port: Int) {
        heads[port] = heads[port] + 1 == slotsPerPort ? 0 : heads[port] + 1
        counts[port] -= 1
        offsets[port] = 0
        waiting -= 1
    }

    private func release(_ event: MIDIEvent) {
        if event.kind == .sysex { sysexStore?.release(event.sysex) }
    }
}

/// What `event`, gone out of a port (or queued to it), changes in the notes that port owes a
/// note-off (`owed`) and in the channels an all-notes-off or all-sound-off has released
/// (`channelsReleased`: bit `channel` for controller 123, bit `channel + 16` for 120).
@inline(__always)
private func trackNoteOffsOwed(_ event: MIDIEvent, owed: inout HeldNotes, channelsReleased: inout UInt32) {
    switch event.kind {
    case .noteOn where event.data2 > 0:
        owed.track(event)
        let channel = UInt32(event.channel & 15)
        channelsReleased &= ~(1 << channel | 1 << (channel + 16))
    case .noteOn, .noteOff:
        owed.track(event)
    case .controlChange where event.data1 == 120 || event.data1 == 123:
        owed.track(event)
        channelsReleased |= 1 << (UInt32(event.channel & 15) + (event.data1 == 120 ? 16 : 0))
    default:
        break
    }
}
