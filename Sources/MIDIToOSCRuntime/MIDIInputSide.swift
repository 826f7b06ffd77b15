import ALSASequencer
import BridgeSession
import Config
import Endpoints
import MIDI
import Pipeline
import Platform
import Recovery
import Storage
import Synchronization

/// The ALSA side of the MIDI -> OSC path: our input ports and the input thread that reads the
/// session's client, decodes events and queues them for the pipeline thread (and hands the
/// session its announcements).
///
/// Events keep the ALSA port number they arrived on (`MIDIEvent.port`), which stays the same
/// for a port across reloads. A full ring drops events (counted), but never a note-off: one
/// that does not fit is owed and queued at the next chance, so a burst cannot leave a note
/// hanging downstream.
public final class MIDIInputSide: @unchecked Sendable {
    // @unchecked Sendable: while the input thread runs, only it touches the state below; the
    // owner changes ports (`apply`) only while the thread is paused (`names` has its own lock).

    package let session: SequencerSession
    let client: SequencerClient
    package let reader: SequencerReader
    let ring: SPSCRing<MIDIEvent>
    let sysexStore: SysExStore
    /// Wakes the pipeline thread, the ring's consumer.
    let wake: WakeSignal
    /// Our input ports by name, as ALSA numbered them.
    private(set) var portsByName: [String: UInt8] = [:]
    /// The specs each input port is bound by, to tell a changed binding on reload.
    private var specsByName: [String: [PortSpec]] = [:]
    private let names = Mutex<[UInt8: String]>([:])
    /// Whether each ALSA port number is one of our input ports.
    private let isInputPort = FixedBuffer(repeating: false, count: 256)
    /// Pushes onto the ring; owes the note-offs that do not fit.
    private var feeder: RingFeeder

    private var thread: SystemThread?
    /// Puts the thread under SCHED_FIFO as it starts, when set (by the bridge, before ``start()``).
    public var realtime: RealtimeScheduler?

    /// The input side of `session`'s client, pushing onto `ring` and waking its consumer with
    /// `wake`; no ports until ``apply(_:)``.
    public init(
        session: SequencerSession, ring: SPSCRing<MIDIEvent>, sysexStore: SysExStore, wake: WakeSignal
    ) throws(ALSAError) {
        self.session = session
        client = session.client
        self.ring = ring
        self.sysexStore = sysexStore
        self.wake = wake
        feeder = RingFeeder(ring: ring)
        reader = try SequencerReader(client: client, sysexStore: sysexStore)
    }

    /// Makes our input ports match `inputs`: ports whose name stays keep their number and their
    /// connections (rebound only if their specs changed); removed ones are deleted; new ones
    /// are created. Only while the input thread is stopped. Returns the port number of each
    /// input, by index.
    public func apply(_ inputs: [InputPortConfig]) throws(ALSAError) -> [UInt8] {
        let wanted = Set(inputs.map(\.name))
        for (name, port) in portsByName where !wanted.contains(name) {
            session.bindings.unbind(ourPort: port)
            try client.deletePort(port)
            isInputPort[Int(port)] = false
            portsByName[name] = nil
            specsByName[name] = nil
            session.log.info("input '\(name)' removed")
        }
        var numbers: [UInt8] = []
        for input in inputs {
            if let port = portsByName[input.name] {
                if specsByName[input.name] != input.from {
                    session.bindings.unbind(ourPort: port)
                    for spec in input.from { session.bindings.bind(spec, to: port, direction: .source) }
                    specsByName[input.name] = input.from
                }
                numbers.append(port)
                continue
            }
            let port = try client.createPort(name: input.name, direction: .input)
            portsByName[input.name] = port
            specsByName[input.name] = input.from
            isInputPort[Int(port)] = true
            for spec in input.from { session.bindings.bind(spec, to: port, direction: .source) }
            numbers.append(port)
        }
        try session.subscribeToAnnouncements()
        names.withLock { names in names = Dictionary(uniqueKeysWithValues: portsByName.map { ($0.value, $0.key) }) }
        session.settle(.source)
        return numbers
    }

    /// The name of our input port `port`, if it is one (any thread: names change only while
    /// the input thread is paused, and status tolerates a stale answer).
    package func portName(_ port: UInt8) -> String? {
        names.withLock { $0[port] }
    }

    /// Starts (or resumes) the input thread.
    public func start() {
        reader.rearm()
        self.thread = SystemThread(name: "aseqosc-input") { [self, realtime] in
            realtime?.enter(.input)
            do {
                try reader.run(midiBatch: handle, other: handle, afterBatch: afterBatch)
            } catch {
                session.log.error("input thread stopped: \(error)")
            }
        }
    }

    /// Stops the input thread and waits for it; events arriving meanwhile wait in the kernel.
    public func pause() {
        guard thread != nil else { return }
        reader.stop()
        thread?.join()
        thread = nil
    }

    private func handle(_ events: UnsafeBufferPointer<MIDIEvent>, from sources: UnsafeBufferPointer<PortAddress>) {
        var index = 0
        while index < events.count {
            handle(events[index])
            index &+= 1
        }
    }

    @inline(__always)
    private func handle(_ event: MIDIEvent) {
        let port = Int(event.port & 0xFF)
        guard isInputPort[port] else {
            if event.kind == .sysex { sysexStore.release(event.sysex) }
            return
        }
        if !feeder.push(event, now: event.timestamp) && event.kind == .sysex {
            sysexStore.release(event.sysex)
        }
    }

    private func handle(_ decoded: DecodedSequencerEvent) {
        switch decoded {
        case .midi(let event, _):
            handle(event)
        case .announcement(let announcement):
            session.announced(announcement)
        default:
            break
        }
    }

    /// Before the first wait and after each batch read from the sequencer: pays owed note-offs,
    /// wakes the pipeline thread for what was pushed (a system call only if it sleeps), and
    /// returns how long the reader may wait for the next event: while note-offs are still owed,
    /// 1 ms, so they go out as soon as the pipeline makes room even if no other event ever comes.
    private func afterBatch() -> Int32 {
        if feeder.isOwing { feeder.payOwed(now: MonotonicClock.now()) }
        // Also when nothing new came: paying owed note-offs may have pushed some.
        wake.notify()
        return feeder.isOwing ? 1 : -1
    }
}
