import CALSA
import Glibc
import MIDI
import Platform

/// A sequencer queue on our client, for events that must leave at a given time (OSC bundles
/// with a time tag): the kernel holds them and delivers each at its time, so timing does not
/// depend on when our thread next runs.
///
/// The queue runs only while it is needed: a running queue keeps a kernel timer firing (1 kHz
/// with the usual high-resolution timer) for as long as it runs, which keeps an idle machine
/// awake (BENCHMARKS.md, "Idle"). It starts when
/// first asked the time (``now()``) or ``start()``ed, and ``stop()`` stops it once nothing is
/// left in it (``pendingEvents()``). Each start sets its real-time clock to 0 again;
/// ``monotonicOrigin`` is where that 0 falls on `CLOCK_MONOTONIC`, so times kept on the
/// monotonic clock (``time(atMonotonic:)``) stay right across a stop and a start.
package final class SequencerQueue: @unchecked Sendable {
    // @unchecked Sendable: used by one thread (the OSC input thread) after creation.

    private let client: SequencerClient
    /// The queue number.
    let id: Int32
    private let status: OpaquePointer
    /// Whether the queue has started (its timer runs from then on).
    package private(set) var isRunning = false
    /// `CLOCK_MONOTONIC` nanoseconds at the queue's time 0; 0 until it runs.
    package private(set) var monotonicOrigin: UInt64 = 0

    /// Allocates a queue named `name` on `client`, not yet started.
    package init(client: SequencerClient, name: String) throws(ALSAError) {
        let queue = try check(snd_seq_alloc_named_queue(client.handle, name), "snd_seq_alloc_named_queue")
        var allocated: OpaquePointer?
        do {
            try check(snd_seq_queue_status_malloc(&allocated), "snd_seq_queue_status_malloc")
        } catch {
            snd_seq_free_queue(client.handle, queue)
            throw error
        }
        self.client = client
        id = queue
        status = allocated!
    }

    /// Starts the queue, its clock at 0, unless it runs already. START also drops whatever our
    /// client left in the queue, which is nothing when it was stopped by ``stop()``.
    package func start() throws(ALSAError) {
        guard !isRunning else { return }
        // snd_seq_start_queue is a macro over this: a START event for the queue, which sits in
        // the output buffer until drained; the kernel handles it during the drain.
        try control(SND_SEQ_EVENT_START)
        isRunning = true
        let monotonic = MonotonicClock.now()
        monotonicOrigin = monotonic - min(try realTime(), monotonic)
    }

    /// Stops the queue and its kernel timer (events still in it would wait; see
    /// ``pendingEvents()``). The next ``start()`` or ``now()`` starts it again from 0.
    package func stop() throws(ALSAError) {
        guard isRunning else { return }
        try control(SND_SEQ_EVENT_STOP)
        isRunning = false
    }

    private func control(_ type: snd_seq_event_type) throws(ALSAError) {
        try check(
            snd_seq_control_queue(client.handle, id, Int32(type.rawValue), 0, nil), "snd_seq_control_queue")
        try check(snd_seq_drain_output(client.handle), "snd_seq_drain_output")
    }

    /// How many events wait in the queue for their time (0 when it is not running).
    package func pendingEvents() throws(ALSAError) -> Int {
        guard isRunning else { return 0 }
        try check(snd_seq_get_queue_status(client.handle, id, status), "snd_seq_get_queue_status")
        return Int(snd_seq_queue_status_get_events(status))
    }

    /// The queue time (nanoseconds since it started) of `monotonic` nanoseconds on
    /// `CLOCK_MONOTONIC`; 0 for a moment before the start. Meaningful while the queue runs.
    @inline(__always)
    package func time(atMonotonic monotonic: UInt64) -> UInt64 {
        monotonic > monotonicOrigin ? monotonic - monotonicOrigin : 0
    }

    deinit {
        snd_seq_free_queue(client.handle, id)
        snd_seq_queue_status_free(status)
    }

    /// The queue's real time now, in nanoseconds since it started; starts it if it has not.
    package func now() throws(ALSAError) -> UInt64 {
        if !isRunning { try start() }
        return try realTime()
    }

    private func realTime() throws(ALSAError) -> UInt64 {
        try check(snd_seq_get_queue_status(client.handle, id, status), "snd_seq_get_queue_status")
        guard let time = snd_seq_queue_status_get_real_time(status) else { return 0 }
        return UInt64(time.pointee.tv_sec) &* 1_000_000_000 &+ UInt64(time.pointee.tv_nsec)
    }

    /// Drops every event still waiting in the queue (those that have not left yet).
    package func removePendingEvents() {
        var remove: OpaquePointer?
        guard snd_seq_remove_events_malloc(&remove) >= 0, let remove else { return }
        defer { snd_seq_remove_events_free(remove) }
        snd_seq_remove_events_set_queue(remove, id)
        snd_seq_remove_events_set_condition(remove, UInt32(SND_SEQ_REMOVE_OUTPUT))
        _ = snd_seq_remove_events(client.handle, remove)
    }
}

extension SequencerClient {
    /// Schedules `event` from our port `port` to its subscribers at `time` (nanoseconds on
    /// `queue`'s clock, see ``SequencerQueue/now()``). SysEx bytes come from `sysexBytes` and go
    /// out in ``sysexChunkSize``-byte pieces, all at that time, in order.
    ///
    /// - Throws: `ALSAError` (`-EAGAIN` when the output pool is full in non-blocking mode).
    package func send(
        _ event: MIDIEvent, from port: UInt8, on queue: SequencerQueue, at time: UInt64,
        sysexBytes: UnsafeRawBufferPointer? = nil
    ) throws(ALSAError) {
        var raw = snd_seq_event_t()
        let seconds = UInt32(truncatingIfNeeded: time / 1_000_000_000)
        let nanoseconds = UInt32(truncatingIfNeeded: time % 1_000_000_000)
        func write(_ raw: inout snd_seq_event_t) throws(ALSAError) {
            aseqosc_ev_set_source(&raw, port)
            aseqosc_ev_set_subs(&raw)
            aseqosc_ev_schedule_real(&raw, queue.id, 0, seconds, nanoseconds)
            try withWritesNotWaiting { () throws(ALSAError) in
                _ = try check(snd_seq_event_output_direct(handle, &raw), "snd_seq_event_output_direct")
            }
        }
        if event.kind == .sysex, let sysexBytes, sysexBytes.count > Self.sysexChunkSize {
            var offset = 0
            while offset < sysexBytes.count {
                let end = min(offset + Self.sysexChunkSize, sysexBytes.count)
                SequencerEventEncoder.encode(
                    event, into: &raw, sysexBytes: UnsafeRawBufferPointer(rebasing: sysexBytes[offset..<end]))
                try write(&raw)
                offset = end
            }
            return
        }
        SequencerEventEncoder.encode(event, into: &raw, sysexBytes: sysexBytes)
        try write(&raw)
    }
}
