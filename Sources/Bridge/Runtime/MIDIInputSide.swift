import ALSASequencer
import Foundation
import MIDI
import Pipeline

/// The ALSA side of the MIDI -> OSC path: our input ports, their bindings, and the input thread
/// that decodes events and queues them for the pipeline thread.
///
/// A full ring drops events (counted), but never a note-off: one that does not fit is owed and
/// queued at the next chance, so a burst cannot leave a note hanging downstream.
final class MIDIInputSide: @unchecked Sendable {
    // @unchecked Sendable: after `start`, everything but the counters and `reader.stop()` is
    // touched only by the input thread.

    let client: SequencerClient
    let reader: SequencerReader
    let bindings: PortBindings
    let ring: SPSCRing<MIDIEvent>
    let sysexStore: SysExStore
    let wake: WakeSignal
    let log: Logger
    /// Our ALSA port number -> index into the config's inputs (or -1 for other ports).
    private var inputIndexByPort = [Int](repeating: -1, count: 256)
    /// Note-offs that found the ring full, per input index.
    private var owedNoteOffs: [HeldNotes]
    private var oweAny = false
    private var thread: Thread?
    private let finished = DispatchSemaphore(value: 0)

    init(
        client: SequencerClient, inputs: [InputPortConfig], ring: SPSCRing<MIDIEvent>, sysexStore: SysExStore,
        wake: WakeSignal, log: Logger
    ) throws(ALSAError) {
        self.client = client
        self.ring = ring
        self.sysexStore = sysexStore
        self.wake = wake
        self.log = log
        bindings = PortBindings(client: client)
        owedNoteOffs = Array(repeating: HeldNotes(), count: inputs.count)
        for (index, input) in inputs.enumerated() {
            let port = try client.createPort(name: input.name, direction: .input)
            inputIndexByPort[Int(port)] = index
            for spec in input.from { bindings.bind(spec, to: port, direction: .source) }
        }
        _ = try client.subscribeToAnnouncements()
        reader = try SequencerReader(client: client, sysexStore: sysexStore)
    }

    /// Connects the bindings and starts the input thread.
    func start() {
        logChanges(bindings.reconcile())
        for binding in bindings.bindings where binding.connected.isEmpty {
            log.notice("input: '\(binding.spec)' is waiting: \(binding.waitingReason ?? "no port yet")")
        }
        let thread = Thread { [self] in
            do {
                try reader.run(handle, afterBatch: afterBatch)
            } catch {
                log.error("input thread stopped: \(error)")
            }
            finished.signal()
        }
        thread.name = "aseqosc-input"
        thread.start()
        self.thread = thread
    }

    /// Stops the input thread and waits for it.
    func stop() {
        guard thread != nil else { return }
        reader.stop()
        finished.wait()
        thread = nil
    }

    private func handle(_ decoded: DecodedSequencerEvent) {
        switch decoded {
        case .midi(var event, _):
            let index = inputIndexByPort[Int(event.port & 0xFF)]
            guard index >= 0 else {
                if event.kind == .sysex { sysexStore.release(event.sysex) }
                return
            }
            event.port = UInt16(index)
            if !ring.push(event) {
                if event.kind == .sysex { sysexStore.release(event.sysex) }
                if event.endsNote {
                    owedNoteOffs[index].track(.noteOn(channel: event.channel, note: event.data1, velocity: 1))
                    oweAny = true
                }
            }
        case .announcement(let announcement) where PortBindings.affectsBindings(announcement):
            logChanges(bindings.reconcile())
        default:
            break
        }
    }

    /// After each batch read from the sequencer: pay owed note-offs, then wake the pipeline.
    private func afterBatch() {
        if oweAny { payOwedNoteOffs() }
        wake.notify()
    }

    private func payOwedNoteOffs() {
        oweAny = false
        var index = 0
        while index < owedNoteOffs.count {
            if !owedNoteOffs[index].isEmpty {
                var stillOwed = HeldNotes()
                let port = UInt16(index)
                owedNoteOffs[index].releaseAll { noteOff in
                    var event = noteOff
                    event.port = port
                    event.timestamp = SequencerReader.now()
                    if !ring.push(event) {
                        stillOwed.track(.noteOn(channel: event.channel, note: event.data1, velocity: 1))
                    }
                }
                if !stillOwed.isEmpty {
                    owedNoteOffs[index] = stillOwed
                    oweAny = true
                }
            }
            index += 1
        }
    }

    private func logChanges(_ changes: [PortBindings.Change]) {
        for change in changes {
            switch change {
            case .connected: log.info("input: \(change)")
            case .lost: log.notice("input: \(change)")
            case .failed: log.warning("input: \(change)")
            }
        }
    }
}
