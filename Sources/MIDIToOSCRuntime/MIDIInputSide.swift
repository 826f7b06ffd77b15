import ALSASequencer
import BridgeSession
import Config
import Endpoints
import EventTap
import MIDI
import Pipeline
import Platform
import Recovery
import Storage
import Synchronization
import ValueStore

/// The MIDI -> OSC path's thread and ports: our input ports, and the input thread, which reads
/// the session's client, runs each event through the routes (``RouteRunner``) and sends what
/// they make before it reads again. One thread from the sequencer to the socket: a note played
/// alone waits for no other thread. It also hands the session its announcements.
///
/// Events keep the ALSA port number they arrived on (`MIDIEvent.port`), which stays the same
/// for a port across reloads. While the thread is busy, events wait in the kernel's input queue
/// (2000 events, see SequencerSession). If that overflows, the kernel drops the whole queue
/// (counted as an input overrun), and the thread ends every note the routes hold: one of those
/// notes may have lost its note-off there.
package final class MIDIInputSide: @unchecked Sendable {
    // @unchecked Sendable: while the input thread runs, only it touches the state below; the
    // owner changes ports (`apply`) and routes only while the thread is paused (`names` has its
    // own lock).

    package let session: SequencerSession
    let client: SequencerClient
    package let reader: SequencerReader
    let sysexStore: SysExStore
    /// The routes, run on this side's thread.
    package let runner: RouteRunner
    /// Our input ports by name, as ALSA numbered them.
    private(set) var portsByName: [String: UInt8] = [:]
    /// The specs each input port is bound by, to tell a changed binding on reload.
    private var specsByName: [String: [PortSpec]] = [:]
    private let names = Mutex<[UInt8: String]>([:])
    /// Whether each ALSA port number is one of our input ports.
    private let isInputPort = FixedBuffer(repeating: false, count: 256)
    /// The reader's overruns already answered by ending the sounding notes.
    private var overrunsSeen = 0
    /// The longest the thread waits without an event, so `progress` moves for the watchdog; -1:
    /// no limit (no watchdog: an idle bridge sleeps until an event).
    private let idleWakeMilliseconds: Int32

    private var thread: SystemThread?
    /// Puts the thread under SCHED_FIFO as it starts, when set (by the bridge, before ``start()``).
    package var realtime: RealtimeScheduler?
    /// Batches handled and idle wake-ups so far; the watchdog pings systemd only while this moves.
    package let progress = Atomic<UInt64>(0)
    /// What each input port last received of every controller, program, bend and pressure, as
    /// it arrived (before any route's operators): OSCQuery's values for the input ports. Made
    /// again when the ports change (``apply(_:)``), a port keeping nothing across that.
    package private(set) var values = LastValueStore(portCount: 0)
    /// What this side's thread reads and sends, copied for the status page's monitor while a
    /// page watches (the routes record what they send into it too).
    package let tap = EventTap()

    /// The input side of `session`'s client, running `runner`'s routes; no ports until
    /// ``apply(_:)``.
    package init(
        session: SequencerSession, runner: RouteRunner, sysexStore: SysExStore, idleWakeMilliseconds: Int32 = 1000
    ) throws(BridgeError) {
        self.session = session
        client = session.client
        self.runner = runner
        self.sysexStore = sysexStore
        self.idleWakeMilliseconds = idleWakeMilliseconds
        do {
            reader = try SequencerReader(client: client, sysexStore: sysexStore)
        } catch {
            switch error {
            case .alsa(let error): throw .alsa(error)
            case .system(let error): throw .system(error)
            }
        }
        runner.replaySignal.wake(with: { [reader] in reader.wake() })
    }

    /// Makes our input ports match `inputs`: ports whose name stays keep their number and their
    /// connections (rebound only if their specs changed); removed ones are deleted; new ones
    /// are created. Only while the input thread is stopped. Returns the port number of each
    /// input, by index.
    package func apply(_ inputs: [InputPortConfig]) throws(ALSAError) -> [UInt8] {
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
        let kept = values.ports.map(\.port)
        if kept != numbers.map({ UInt16($0) }) { values = LastValueStore(ports: numbers.map { UInt16($0) }) }
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
    package func start() {
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

    /// Stops the input thread once it has sent what it read, and waits for it; events arriving
    /// meanwhile wait in the kernel. Held notes stay held (a reload pauses this way).
    package func pause() {
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
        if isInputPort[Int(event.port & 0xFF)] {
            if tap.isOn { tap.record(.midiIn, index: Int(event.port), event) }
            values.record(event)
            runner.run(event)
        }
        if event.kind == .sysex { sysexStore.release(event.sysex) }
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

    /// Before the first wait and after each batch read from the sequencer: answers a new
    /// overrun, sends what the batch made and what is due, and returns how long the reader may
    /// wait for the next event.
    private func afterBatch() -> Int32 {
        progress.add(1, ordering: .relaxed)
        let overruns = reader.overruns
        if overruns != overrunsSeen {
            overrunsSeen = overruns
            runner.endEverySoundingNote()
        }
        return runner.endBatch(idleWakeMilliseconds: idleWakeMilliseconds)
    }
}
