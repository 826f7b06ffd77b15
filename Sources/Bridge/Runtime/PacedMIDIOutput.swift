import ALSASequencer
import Glibc
import MIDI
import Synchronization

/// Writes events out of our ALSA output ports without ever blocking, keeping each port's order
/// and pacing SysEx per port, so a long SysEx to one synth never holds up notes to another.
///
/// An event for a port with nothing waiting goes straight to the kernel (`output_direct`). A
/// SysEx goes out one ``SequencerClient/sysexChunkSize`` chunk at a time, the next chunk due when
/// the last one would have left a MIDI cable (`bytesPerSecond`); while it is under way, later
/// events for that port wait in the port's queue behind it, except realtime bytes (clock,
/// start, stop), which MIDI lets through in the middle of SysEx. A write refused with `EAGAIN`
/// (the client's kernel pool is full) stays at the head of its port's queue and is retried
/// shortly. Only a full port queue drops an event (counted).
///
/// Owned by one thread; nothing here allocates after `init`. Every SysEx event handed in is
/// released to the store once written or dropped.
final class PacedMIDIOutput {
    /// Our ALSA port per output index.
    let ports: [UInt8]
    /// Events a port may hold back while it is busy.
    let queueCapacity: Int
    private let client: SequencerClient
    private let sysexStore: SysExStore?
    private let bytesPerSecond: Int
    // Per port: a ring of `queueCapacity` events starting at `heads[p]`, `counts[p]` long; how
    // far into the head SysEx we are; when the port may write again (monotonic ns).
    private let events: UnsafeMutablePointer<MIDIEvent>
    private let heads: UnsafeMutablePointer<Int>
    private let counts: UnsafeMutablePointer<Int>
    private let offsets: UnsafeMutablePointer<Int>
    private let readyAt: UnsafeMutablePointer<UInt64>
    private var waiting = 0

    /// Events written to the kernel (a SysEx counts once, however many chunks).
    let sent = Atomic<Int>(0)
    /// Events dropped because their port's queue was full.
    let droppedQueueFull = Atomic<Int>(0)
    /// Scheduled events the kernel refused (its pool full of scheduled events), or writes that
    /// failed for another reason.
    let failed = Atomic<Int>(0)

    /// How long an `EAGAIN` waits before the next try.
    static let retryInterval: UInt64 = 1_000_000

    init(
        client: SequencerClient, ports: [UInt8], sysexStore: SysExStore?, bytesPerSecond: Int, queueCapacity: Int = 1024
    ) {
        self.client = client
        self.ports = ports
        self.sysexStore = sysexStore
        self.bytesPerSecond = bytesPerSecond
        self.queueCapacity = queueCapacity
        let count = max(ports.count, 1)
        events = .allocate(capacity: count * queueCapacity)
        events.initialize(repeating: MIDIEvent(.clock), count: count * queueCapacity)
        heads = .allocate(capacity: count)
        heads.initialize(repeating: 0, count: count)
        counts = .allocate(capacity: count)
        counts.initialize(repeating: 0, count: count)
        offsets = .allocate(capacity: count)
        offsets.initialize(repeating: 0, count: count)
        readyAt = .allocate(capacity: count)
        readyAt.initialize(repeating: 0, count: count)
    }

    deinit {
        events.deallocate()
        heads.deallocate()
        counts.deallocate()
        offsets.deallocate()
        readyAt.deallocate()
    }

    /// Whether any port still holds events back.
    var isIdle: Bool { waiting == 0 }

    /// Sends `event` out of the output port `event.port` now, or queues it behind that port's
    /// earlier events.
    func send(_ event: MIDIEvent, now: UInt64) {
        let port = Int(event.port)
        guard port < ports.count else {
            release(event)
            return
        }
        if (counts[port] == 0 && now >= readyAt[port]) || event.kind.isRealtime {
            var offset = 0
            switch attempt(event, port: port, offset: &offset, now: now) {
            case .done: return
            case .partial, .blocked:
                if event.kind.isRealtime && counts[port] > 0 {
                    // Behind a SysEx under way; it goes next rather than last.
                    pushFront(event, port: port)
                } else {
                    push(event, port: port, offset: offset)
                }
            }
            return
        }
        push(event, port: port, offset: 0)
    }

    /// Schedules `event` on `queue` at `time` (queue nanoseconds): the kernel holds it until
    /// then. Not paced: a scheduled SysEx leaves in one go at its time.
    func schedule(_ event: MIDIEvent, on queue: SequencerQueue, at time: UInt64) {
        let port = Int(event.port)
        defer { release(event) }
        guard port < ports.count else { return }
        do {
            if event.kind == .sysex, let sysexStore {
                try sysexStore.withBytes(event.sysex) { (bytes) throws(ALSAError) in
                    guard !bytes.isEmpty else { return }
                    try client.send(event, from: ports[port], on: queue, at: time, sysexBytes: bytes)
                }
            } else {
                try client.send(event, from: ports[port], on: queue, at: time)
            }
            sent.add(1, ordering: .relaxed)
        } catch {
            failed.add(1, ordering: .relaxed)
        }
    }

    /// Writes what has become due; returns when to call again (monotonic ns), or nil when no port
    /// holds anything back.
    func service(now: UInt64) -> UInt64? {
        guard waiting > 0 else { return nil }
        var earliest = UInt64.max
        var port = 0
        while port < ports.count {
            while counts[port] > 0 && now >= readyAt[port] {
                let slot = port * queueCapacity + heads[port]
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

    /// Drops everything still held back (shutdown after the grace period).
    func dropWaiting() {
        var port = 0
        while port < ports.count {
            while counts[port] > 0 {
                droppedQueueFull.add(1, ordering: .relaxed)
                release(events[port * queueCapacity + heads[port]])
                pop(port)
            }
            port += 1
        }
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
    private func attempt(_ event: MIDIEvent, port: Int, offset: inout Int, now: UInt64) -> Attempt {
        guard event.kind == .sysex else {
            do {
                switch event.kind {
                case .controlChange14, .rpn, .nrpn:
                    // As the control changes MIDI 1.0 carries them: ALSA's raw MIDI converters
                    // (virmidi's among them) drop CONTROL14 and (N)RPN events they cannot fit.
                    try sendAsControlChanges(event, from: ports[port])
                default:
                    try client.send(event, from: ports[port])
                }
                sent.add(1, ordering: .relaxed)
            } catch  where error.code == -EAGAIN {
                readyAt[port] = now + Self.retryInterval
                return .blocked
            } catch {
                failed.add(1, ordering: .relaxed)
            }
            return .done
        }
        guard let sysexStore else { return .done }
        let rate = bytesPerSecond
        var position = offset
        let result: Attempt = sysexStore.withBytes(event.sysex) { bytes in
            guard !bytes.isEmpty else { return .done }
            while position < bytes.count {
                let end = min(position + SequencerClient.sysexChunkSize, bytes.count)
                let chunk = UnsafeRawBufferPointer(rebasing: bytes[position..<end])
                do throws(ALSAError) {
                    try client.send(event, from: ports[port], sysexBytes: chunk)
                } catch  where error.code == -EAGAIN {
                    readyAt[port] = now + Self.retryInterval
                    return .blocked
                } catch {
                    failed.add(1, ordering: .relaxed)
                    return .done
                }
                position = end
                if rate > 0 {
                    // The next chunk (or the next event on this port) may go when this one
                    // would have left the cable.
                    readyAt[port] = now + UInt64(chunk.count) * 1_000_000_000 / UInt64(rate)
                    if position < bytes.count { return .partial }
                }
            }
            sent.add(1, ordering: .relaxed)
            return .done
        }
        offset = position
        if case .done = result { release(event) }
        return result
    }

    /// A 14-bit controller as MSB then LSB; an RPN or NRPN as parameter MSB, LSB, data entry
    /// MSB, LSB.
    private func sendAsControlChanges(_ event: MIDIEvent, from port: UInt8) throws(ALSAError) {
        let value = UInt8(truncatingIfNeeded: event.value >> 7) & 0x7F
        let valueLSB = UInt8(truncatingIfNeeded: event.value) & 0x7F
        func cc(_ controller: UInt8, _ data: UInt8) throws(ALSAError) {
            try client.send(.controlChange(channel: event.channel, controller: controller, value: data), from: port)
        }
        if event.kind == .controlChange14 {
            let controller = UInt8(truncatingIfNeeded: event.parameter) & 0x1F
            try cc(controller, value)
            try cc(controller + 32, valueLSB)
            return
        }
        let registered = event.kind == .rpn
        try cc(registered ? 101 : 99, UInt8(truncatingIfNeeded: event.parameter >> 7) & 0x7F)
        try cc(registered ? 100 : 98, UInt8(truncatingIfNeeded: event.parameter) & 0x7F)
        try cc(6, value)
        try cc(38, valueLSB)
    }

    // MARK: Per-port queues

    private func push(_ event: MIDIEvent, port: Int, offset: Int) {
        guard counts[port] < queueCapacity else {
            droppedQueueFull.add(1, ordering: .relaxed)
            release(event)
            return
        }
        if counts[port] == 0 { offsets[port] = offset }
        var index = heads[port] + counts[port]
        if index >= queueCapacity { index -= queueCapacity }
        events[port * queueCapacity + index] = event
        counts[port] += 1
        waiting += 1
    }

    /// Puts `event` right after the head (the head may be a SysEx part-way out).
    private func pushFront(_ event: MIDIEvent, port: Int) {
        guard counts[port] < queueCapacity else {
            droppedQueueFull.add(1, ordering: .relaxed)
            return
        }
        // Realtime events carry no SysEx, so a dropped one has nothing to release.
        // Shift the tail one place back, then put the event at head + 1.
        var i = counts[port]
        while i > 1 {
            let to = (heads[port] + i) % queueCapacity
            let from = (heads[port] + i - 1) % queueCapacity
            events[port * queueCapacity + to] = events[port * queueCapacity + from]
            i -= 1
        }
        events[port * queueCapacity + (heads[port] + 1) % queueCapacity] = event
        counts[port] += 1
        waiting += 1
    }

    private func pop(_ port: Int) {
        heads[port] = heads[port] + 1 == queueCapacity ? 0 : heads[port] + 1
        counts[port] -= 1
        offsets[port] = 0
        waiting -= 1
    }

    private func release(_ event: MIDIEvent) {
        if event.kind == .sysex { sysexStore?.release(event.sysex) }
    }
}
