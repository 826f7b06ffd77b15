import CALSA
import Endpoints
import Glibc
import MIDI
import Platform
import Storage
import Synchronization

/// Why a ``SequencerReader`` could not be made or stopped reading: libasound refused (its input
/// buffer, a read), or a system call failed (its wake signal, a `poll`).
package enum SequencerReaderError: Error, Equatable, CustomStringConvertible {
    case alsa(ALSAError)
    case system(SystemCallError)

    package var description: String {
        switch self {
        case .alsa(let error): error.description
        case .system(let error): error.description
        }
    }
}

/// The input loop: waits for the sequencer, takes the pending events through libasound
/// (`snd_seq_event_input`, whose one `read` per wake-up brings what the kernel holds, up to its
/// input buffer's worth), decodes each, stamps it with the monotonic clock and hands it to a
/// handler, all on the thread that calls ``run(_:)``.
///
/// With an announcements port, the wait is that `read` itself, which the kernel ends at the
/// first event and which then takes all that are waiting: one system call per wake-up where
/// `poll()` and a `read` are two (docs/benchmark-history.md, sixth round). ``stop()`` ends that
/// wait by sending our own client an event on the announcements port. Without one, and while
/// the caller has a timeout pending, it waits in `poll()` on the sequencer and on a
/// ``WakeSignal``, and reads without blocking.
///
/// It also keeps the notes held per source, so that when a source port or client disappears
/// the handler receives the note-offs that source still owed: an unplugged keyboard never
/// leaves a note hanging downstream.
package final class SequencerReader: @unchecked Sendable {
    // @unchecked Sendable: everything but the wake signal, the atomics and the counters is
    // touched only by the thread inside `run`; `stop()` wakes the signal and, while a read
    // waits, sends one fixed-size event through the client.

    private let client: SequencerClient
    // What the input thread changes per event: this class's, used by that thread alone.
    private var decoder: SequencerEventDecoder
    private var trackedSources = 0
    /// The slot of the source tracked last.
    private var lastSource = 0
    /// How many events `batchEvents` holds.
    private var batched = 0
    /// A waiting `read` answered `-EAGAIN` (a scheduled write had made the descriptor
    /// non-blocking for a moment): the next wait is in `poll()`.
    private var pollNext = false
    /// The size of libasound's input buffer, in events (28 bytes each): 64 KiB, where its
    /// default of 500 events (14,000 bytes) could never take a longer SysEx.
    static let inputBufferEvents = 2340
    /// The MIDI events of a batch being decoded, and the port each came from.
    private let batchEvents = FixedBuffer<MIDIEvent>(uninitializedCount: batchCapacity)
    private let batchSources = FixedBuffer(repeating: PortAddress(client: 0, port: 0), count: batchCapacity)
    /// The notes each source holds on our ports, in slots `0..<trackedSources`.
    private let heldBySource = FixedBuffer(
        repeating: HeldBySource(source: PortAddress(client: 0, port: 0), port: 0, notes: HeldNotes()), count: 64)
    /// Ends a wait in `poll()`: ``stop()`` and ``wake()`` wake it.
    private let wakeSignal: WakeSignal
    private let stopRequested = Atomic<Bool>(false)
    /// Set by ``wake()``, which may come just before a read starts to wait.
    private let wakeRequested = Atomic<Bool>(false)
    /// While ``run(midiBatch:other:afterBatch:)`` waits in `read`, and only then, the port
    /// ``stop()`` sends the wake-up event to; -1 otherwise. Only then: while a batch is being
    /// handled the input queue may be full, and an event the kernel refuses there marks an
    /// overflow, for which the next read drops the whole queue. Sequentially consistent with
    /// `stopRequested`: the reader stores this and then loads that, ``stop()`` the reverse, and
    /// one of them sees the other's store.
    private let wakePort = Atomic<Int>(-1)
    /// The type of the wake-up event; it comes from our own client to our announcements port.
    private static let wakeUpType = UInt8(SND_SEQ_EVENT_USR9.rawValue)

    /// The notes one source holds on one of our ports.
    private struct HeldBySource {
        var source: PortAddress
        var port: UInt16
        var notes: HeldNotes
    }

    /// Input overruns: the kernel dropped events because we read too slowly (`-ENOSPC`).
    package var overruns: Int { overrunCount.load(ordering: .relaxed) }
    private let overrunCount = Atomic<Int>(0)
    /// Events read from the sequencer, of any kind.
    var eventsRead: Int { readCount.load(ordering: .relaxed) }
    private let readCount = Atomic<Int>(0)

    /// A reader of `client`'s input; SysEx is reassembled into `sysexStore`.
    package init(client: SequencerClient, sysexStore: SysExStore) throws(SequencerReaderError) {
        self.client = client
        // Allocated here once by libasound, and read into by every `snd_seq_event_input`.
        do {
            try check(
                snd_seq_set_input_buffer_size(
                    client.handle, Self.inputBufferEvents * MemoryLayout<snd_seq_event_t>.size),
                "snd_seq_set_input_buffer_size")
        } catch {
            throw .alsa(error)
        }
        do {
            wakeSignal = try WakeSignal()
        } catch {
            throw .system(error)
        }
        decoder = SequencerEventDecoder(sysexStore: sysexStore)
    }

    /// Makes ``run(_:)`` return soon; callable from any thread or a signal handler's thread.
    package func stop() {
        // Pairs with the loads in `run`: the loop's, and the one after publishing `wakePort`.
        stopRequested.store(true, ordering: .sequentiallyConsistent)
        wake()
    }

    /// Ends the current wait, so `afterBatch` runs soon (work another thread handed over, a
    /// replay); callable from any thread.
    package func wake() {
        // Pairs with the exchange in `run` after publishing `wakePort`.
        wakeRequested.store(true, ordering: .sequentiallyConsistent)
        wakeSignal.wake()
        // Pairs with the stores in `run` and `drain` around the waiting read.
        let port = wakePort.load(ordering: .sequentiallyConsistent)
        guard port >= 0 else { return }
        // Our input queue is empty while the read waits, or was just emptied by the read that
        // ended the wait, so there is room for it.
        client.sendToOurselves(Self.wakeUpType, port: UInt8(truncatingIfNeeded: port))
    }

    /// Lets ``run(_:afterBatch:)`` be called again after a ``stop()`` (a paused input thread
    /// resuming); events that arrived meanwhile wait in the kernel and are read then.
    package func rearm() {
        stopRequested.store(false, ordering: .relaxed)
        wakeSignal.drain()
    }

    /// Reads events until ``stop()``, like ``run(midiBatch:other:afterBatch:)`` with one handler
    /// for every decoded event, MIDI (with the port it came from) or not.
    package func run(
        _ handler: (DecodedSequencerEvent) -> Void, afterBatch: () -> Int32 = { -1 }
    ) throws(SequencerReaderError) {
        try run(
            midiBatch: { events, sources in
                var index = 0
                while index < events.count {
                    handler(.midi(events[index], source: sources[index]))
                    index += 1
                }
            }, other: handler, afterBatch: afterBatch)
    }

    /// The most MIDI events handed over in one call of a `midiBatch` handler.
    static let batchCapacity = 64

    /// Reads events until ``stop()``, on this thread. `midiBatch` gets the MIDI events decoded in
    /// a row, in order, with the port each came from (at most ``batchCapacity`` per call: one
    /// call rather than one per event); `other` gets each announcement or event without MIDI
    /// meaning, after the MIDI events before it. `afterBatch` runs once before the first wait
    /// and then each time the events pending at a wake-up have all been handled (the place to
    /// wake a consumer once per batch rather than once per event). `afterBatch` returns how
    /// long the next wait may last, in milliseconds: -1 to wait for an event, or a timeout for
    /// a caller with work of its own pending (after which `afterBatch` runs again).
    package func run(
        midiBatch: (_ events: UnsafeBufferPointer<MIDIEvent>, _ sources: UnsafeBufferPointer<PortAddress>) -> Void,
        other: (DecodedSequencerEvent) -> Void, afterBatch: () -> Int32 = { -1 }
    ) throws(SequencerReaderError) {
        let sequencerCount = Int(snd_seq_poll_descriptors_count(client.handle, Int16(POLLIN)))
        let descriptors = FixedBuffer(repeating: pollfd(), count: sequencerCount + 1)
        let filled = snd_seq_poll_descriptors(
            client.handle, descriptors.baseAddress, UInt32(sequencerCount), Int16(POLLIN))
        descriptors[Int(filled)] = pollfd(fd: wakeSignal.descriptor, events: Int16(POLLIN), revents: 0)
        let total = nfds_t(filled + 1)

        // The port of the wake-up event when reads wait; nil when the waits are in `poll()`.
        var wakeUpPort: UInt8?
        if let port = client.announcementPort, client.setReadsWait(true) {
            wakeUpPort = port
        }
        let readsWait = wakeUpPort != nil
        defer {
            if readsWait {
                wakePort.store(-1, ordering: .sequentiallyConsistent)
                client.setReadsWait(false)
            }
        }
        var timeout = afterBatch()
        // Pairs with the store in `stop()`.
        while !stopRequested.load(ordering: .sequentiallyConsistent) {
            if let wakeUpPort, timeout < 0 && !pollNext {
                wakePort.store(Int(wakeUpPort), ordering: .sequentiallyConsistent)
                // Pairs with the store in `stop()`: a stop() from now on sends the wake-up.
                if stopRequested.load(ordering: .sequentiallyConsistent) { break }
                // Likewise for a wake(): its event may not have been sent.
                if wakeRequested.exchange(false, ordering: .sequentiallyConsistent) {
                    wakePort.store(-1, ordering: .sequentiallyConsistent)
                    timeout = afterBatch()
                    continue
                }
                // The first `read` of `drain` waits for the first event.
                try drain(midiBatch, other, waiting: true)
                timeout = afterBatch()
                continue
            }
            pollNext = false
            let ready: Int32
            switch valueOrErrno(retryOnInterrupt: { poll(descriptors.baseAddress, total, timeout) }) {
            case .success(let count): ready = count
            case .failure(let error): throw .system(SystemCallError("poll", error))
            }
            // With reads that wait, only a sequencer with events may be read: the wake signal
            // alone (a stop) would leave the read waiting for the next event.
            if ready > 0 && (!readsWait || Self.hasInput(descriptors, count: Int(filled))) {
                try drain(midiBatch, other, waiting: false)
            }
            // A wake() is answered by this turn's afterBatch: drained, the signal lets the next
            // poll wait again instead of returning at once for ever.
            if ready > 0 && descriptors[Int(filled)].revents != 0 { wakeSignal.drain() }
            timeout = afterBatch()
        }
    }

    private static func hasInput(_ descriptors: borrowing FixedBuffer<pollfd>, count: Int) -> Bool {
        var index = 0
        while index < count {
            if descriptors[index].revents & Int16(POLLIN) != 0 { return true }
            index += 1
        }
        return false
    }

    /// Reads until the sequencer has nothing more for us. The events read in one pass share one
    /// receive time, that of the wake-up: they were all waiting by then.
    /// `waiting`: the first read is the wait, with `wakePort` published for it.
    private func drain(
        _ midiBatch: (UnsafeBufferPointer<MIDIEvent>, UnsafeBufferPointer<PortAddress>) -> Void,
        _ other: (DecodedSequencerEvent) -> Void, waiting: Bool
    ) throws(SequencerReaderError) {
        var read = 0
        defer {
            handOver(midiBatch)
            readCount.add(read, ordering: .relaxed)
        }
        var firstRead = true
        let first = try nextEvent(firstRead: &firstRead)
        // Pairs with the load in `stop()`.
        if waiting { wakePort.store(-1, ordering: .sequentiallyConsistent) }
        guard var event = first else { return }
        // After the first read, which in the waiting mode is the wait.
        let now = MonotonicClock.now()
        while true {
            read &+= 1
            // Notes and controllers, nearly everything a player sends, skip the decoded enum.
            if let midi = SequencerEventDecoder.decodeNoteOrController(event, timestamp: now) {
                let source = PortAddress(client: event.pointee.source.client, port: event.pointee.source.port)
                trackHeldNotes(midi, from: source)
                add(midi, source, midiBatch)
            } else if event.pointee.type == Self.wakeUpType && event.pointee.source.client == client.clientID {
                read &-= 1  // our own, from stop(): nothing to hand over
            } else {
                switch decoder.decode(event, timestamp: now) {
                case .midi(let midi, let source):
                    trackHeldNotes(midi, from: source)
                    add(midi, source, midiBatch)
                case .announcement(let announcement):
                    let add = { self.add($0, $1, midiBatch) }
                    switch announcement {
                    case .portExited(let address): releaseHeldNotes(add) { $0 == address }
                    case .clientExited(let number): releaseHeldNotes(add) { $0.client == number }
                    default: break
                    }
                    handOver(midiBatch)
                    other(.announcement(announcement))
                case .none:
                    handOver(midiBatch)
                    other(.none)
                }
            }
            guard let next = try nextEvent(firstRead: &firstRead) else { return }
            event = next
        }
    }

    /// The next event of this wake-up, or nil when there is none. The kernel is read once per
    /// wake-up (`firstRead`: `snd_seq_event_input` reads when libasound's buffer is empty, and
    /// waits there when reads wait); after it, `snd_seq_event_input_pending(_, 0)` counts what
    /// that read brought without reading again. Then back to waiting (in the next read or in
    /// `poll`), which sees whether the kernel holds more: a played note costs one `read`, not a
    /// second one answering EAGAIN. libasound's calls rather than our own read of the
    /// descriptor: they parse the events (and attach a SysEx's data) as every ALSA client does.
    @inline(__always)
    private func nextEvent(firstRead: inout Bool) throws(SequencerReaderError) -> UnsafeMutablePointer<snd_seq_event_t>?
    {
        if !firstRead && snd_seq_event_input_pending(client.handle, 0) <= 0 { return nil }
        firstRead = false
        var event: UnsafeMutablePointer<snd_seq_event_t>?
        let result = snd_seq_event_input(client.handle, &event)
        if result >= 0 { return event }
        switch -result {
        case EAGAIN:
            pollNext = true
            return nil
        case EINTR:
            return nil
        case ENOSPC:
            // The kernel's input pool overflowed and it dropped events; reading resumes at
            // the next wake-up.
            overrunCount.add(1, ordering: .relaxed)
            return nil
        case EINVAL:
            // A SysEx whose data runs past what was read: libasound dropped the rest.
            return nil
        default:
            throw .alsa(ALSAError(code: result, call: "snd_seq_event_input"))
        }
    }

    /// Adds a decoded MIDI event to the batch, handing the batch over when it is full.
    @inline(__always)
    private func add(
        _ midi: MIDIEvent, _ source: PortAddress,
        _ midiBatch: (UnsafeBufferPointer<MIDIEvent>, UnsafeBufferPointer<PortAddress>) -> Void
    ) {
        let batched = self.batched
        batchEvents[batched] = midi
        batchSources[batched] = source
        self.batched = batched &+ 1
        if batched &+ 1 == Self.batchCapacity { handOver(midiBatch) }
    }

    private func handOver(
        _ midiBatch: (UnsafeBufferPointer<MIDIEvent>, UnsafeBufferPointer<PortAddress>) -> Void
    ) {
        let batched = self.batched
        guard batched > 0 else { return }
        self.batched = 0
        midiBatch(
            UnsafeBufferPointer(start: batchEvents.baseAddress, count: batched),
            UnsafeBufferPointer(start: batchSources.baseAddress, count: batched))
    }

    @inline(__always)
    private func trackHeldNotes(_ event: MIDIEvent, from source: PortAddress) {
        guard event.kind == .noteOn || event.kind == .noteOff || event.kind == .controlChange else { return }
        if event.kind == .controlChange && event.data1 != 120 && event.data1 != 123 { return }
        // Most events come from the source of the one before.
        let last = self.lastSource
        if last < trackedSources && heldBySource[last].source == source
            && heldBySource[last].port == event.port
        {
            heldBySource[last].notes.track(event)
            return
        }
        trackHeldNotesSearching(event, from: source)
    }

    private func trackHeldNotesSearching(_ event: MIDIEvent, from source: PortAddress) {
        var i = 0
        while i < trackedSources {
            if heldBySource[i].source == source && heldBySource[i].port == event.port {
                heldBySource[i].notes.track(event)
                lastSource = i
                return
            }
            i += 1
        }
        guard event.kind == .noteOn, event.data2 > 0 else { return }
        var slot = trackedSources
        if slot == heldBySource.count {
            // Reuse the slot of a source that holds nothing; with none, this note goes
            // untracked (64 sources each holding notes at once is past any real rig).
            slot = 0
            while slot < trackedSources && !heldBySource[slot].notes.isEmpty { slot += 1 }
            guard slot < trackedSources else { return }
        } else {
            trackedSources += 1
        }
        heldBySource[slot] = HeldBySource(source: source, port: event.port, notes: HeldNotes())
        heldBySource[slot].notes.track(event)
        lastSource = slot
    }

    /// Hands the handler a note-off for every note still held by the sources that `matches`,
    /// stamped as if they came from that source.
    private func releaseHeldNotes(
        _ handler: (MIDIEvent, PortAddress) -> Void, matching matches: (PortAddress) -> Bool
    ) {
        let now = MonotonicClock.now()
        var i = 0
        while i < trackedSources {
            let source = heldBySource[i].source
            let port = heldBySource[i].port
            if matches(source) && !heldBySource[i].notes.isEmpty {
                heldBySource[i].notes.releaseAll { noteOff in
                    var event = noteOff
                    event.timestamp = now
                    event.port = port
                    handler(event, source)
                }
            }
            i += 1
        }
    }
}
