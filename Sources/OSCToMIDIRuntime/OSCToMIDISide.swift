import ALSASequencer
import BridgeSession
import Config
import Endpoints
import EventTap
import Glibc
import MIDI
import OSC
import OSCMapping
import OSCToMIDI
import OSCTransport
import Pipeline
import Platform
import Recovery
import Storage
import Synchronization
import ValueStore

/// The OSC -> MIDI direction: our ALSA output ports and their bindings, the UDP and TCP
/// receivers, the translator, the operator pipeline, and the thread that runs them.
///
/// One thread does everything, in order, per packet (a UDP datagram or a TCP frame alike):
/// validate, translate, run the operators, write to ALSA (or schedule on the queue for a future
/// bundle). Nothing there allocates, locks or blocks; only a debug log line for an unknown or
/// malformed message allocates, and only when debug logging is on (and a log line when a TCP
/// client comes or goes).
package final class OSCToMIDISide: @unchecked Sendable {
    // @unchecked Sendable: after `start`, everything but the counters is touched only by the
    // OSC thread; `stop()` waits for that thread before touching anything else.

    let config: OSCInputConfig
    package let counters = OSCInputCounters()
    package let receiver: OSCReceiver
    package let output: PacedMIDIOutput<SequencerPortWriter>
    /// For bundles with a future time tag; it runs (and its kernel timer with it) only while
    /// something is scheduled on it.
    private let queue: SequencerQueue
    private let translator: OSCToMIDITranslator
    private let route: Route
    private let sysexStore: SysExStore?
    private let log: Logger
    package let outputNames: [String]
    private let session: SequencerSession
    private let ports: [UInt8]
    private var thread: SystemThread?
    /// The output ports' replays (`sync`).
    package let replays: OutputReplays
    /// Note recovery from the senders that announce their held notes.
    package let recovery: RecoveryIntake
    /// The status page's panic.
    private let panicRequest: OutputPanic
    /// What leaves nothing sounding at a stop.
    private let silencer: OutputSilencer
    private let bundleTimes: BundleTimes
    /// Puts the thread under SCHED_FIFO as it starts, when set (by the bridge, before ``start()``).
    package var realtime: RealtimeScheduler?
    /// What each output port was last sent of every controller, program, bend and pressure
    /// (the event's port is the output's index): OSCQuery's values, and the replays.
    package let values: LastValueStore
    /// Where an `/aseqosc/sync` goes for the MIDI -> OSC destinations (the bridge sets it).
    package var onSyncRequest: (@Sendable (SyncRequest) -> Void)?
    /// The TouchOSC Bridge's client, which every packet's sender may become (`touchoscBridge`).
    package var learnedClient: LearnedClient?
    /// What the OSC thread receives and writes, copied for the status page's monitor while a
    /// page watches; the bridge's, kept across reloads that make a new side.
    let tap: EventTap
    // Per message being handled: its arrival time (read once per receive batch), and the time
    // (monotonic) its bundle asks for.
    private var now: UInt64 = 0
    private var scheduleAt: UInt64?
    private var consumedSysEx = false

    /// The configured name of our output port `port`, if it is one of ours.
    package func outputName(ofPort port: UInt8) -> String? {
        ports.firstIndex(of: port).map { outputNames[$0] }
    }

    /// Creates the output ports on `session`'s client (bound through its bindings, which the
    /// input thread keeps reconciled, and tells which wait for a port), the queue and the socket;
    /// nothing runs until ``start()``.
    package init(
        session: SequencerSession, config: OSCInputConfig, outputs: [OutputPortConfig], sysexCapacity: Int,
        parts: OSCToMIDIParts, tap: EventTap = EventTap()
    ) throws(BridgeError) {
        self.tap = tap
        replays = parts.replays
        recovery = parts.recovery
        panicRequest = parts.panic
        silencer = parts.silencer
        bundleTimes = BundleTimes(counters: counters)
        self.config = config
        self.session = session
        log = session.log
        let client = session.client
        outputNames = outputs.map(\.name)
        var ports: [UInt8] = []
        do {
            for output in outputs {
                let port = try client.createPort(name: output.name, direction: .output)
                ports.append(port)
                for spec in output.to { session.bindings.bind(spec, to: port, direction: .destination) }
            }
            queue = try SequencerQueue(client: client, name: "aseqosc osc")
        } catch {
            throw .alsa(error)
        }
        self.ports = ports
        sysexStore = config.sysex ? SysExStore(slots: 16, capacity: sysexCapacity) : nil
        output = PacedMIDIOutput(
            writer: SequencerPortWriter(client: client, queue: queue), ports: ports, sysexStore: sysexStore,
            bytesPerSecond: config.sysexBytesPerSecond)
        values = LastValueStore(portCount: outputs.count)
        translator = OSCToMIDITranslator(
            outputNames: outputNames, rules: config.mappings, families: config.families, sysex: sysexStore)
        route = Route(
            inputPorts: .all,
            // Events carry the output's index as their port, which is what `ports` filters name.
            chain: Chain(
                config.operators.flatMap { RouteBuilder.operators($0, inputPorts: outputs.indices.map { UInt8($0) }) },
                destinations: [0]))
        let allowList = config.allow.isEmpty ? nil : IPAllowList(config.allow)
        do {
            let udp =
                config.transports.contains(.udp)
                ? try UDPReceiver(host: config.host, port: config.port, allowList: allowList) : nil
            let tcp =
                config.transports.contains(.tcp)
                ? try TCPReceiver(
                    host: config.host, port: config.port, allowList: allowList, maxConnections: config.maxConnections,
                    maxPacketSize: config.maxPacketSize, frameTimeout: .seconds(config.frameTimeout),
                    onConnection: Self.logger(log)) : nil
            receiver = try OSCReceiver(udp: udp, tcp: tcp)
        } catch {
            throw .oscInput(error)
        }
        session.settle(.destination)
    }

    /// Log lines for TCP clients coming and going; a broken stream is worth telling the user
    /// about (a sender set to the wrong framing), and so is a connection we end for holding a
    /// slot (an idle one evicted, a frame never finished); the rest only at debug.
    private static func logger(_ log: Logger) -> @Sendable (TCPConnectionEvent) -> Void {
        { event in
            switch event {
            case .closed(let peer, let error?):
                log.info("osc input: closed the TCP connection from \(peer): \(error)")
            case .evicted, .frameTimedOut:
                log.info("osc input: \(event)")
            default:
                log.debug("osc input: \(event)")
            }
        }
    }

    /// Starts the OSC thread.
    package func start() {
        self.thread = SystemThread(name: "aseqosc-osc-in") { [self, realtime] in
            realtime?.enter(.osc)
            // One clock reading per batch of packets: they arrived together. TCP keeps its
            // connections' idle times by the same reading (the same clock, CLOCK_MONOTONIC).
            // An output whose device can come back is woken for its replay, and a status page
            // with actions wakes it for a panic or a replay.
            let wakeable = replays.followsDevices || !config.pageActions.isEmpty
            receiver.run(
                tick: tick, beforeBatch: { now = MonotonicClock.now() }, clock: { now }, wakeable: wakeable, handle)
            receiver.close()
        }
        log.info(
            "osc input: listening on \(listenURLs.joined(separator: " and ")) for outputs \(outputNames.map { "'\($0)'" }.joined(separator: ", "))"
        )
    }

    /// Stops receiving and leaves nothing sounding and nothing to come (``OutputSilencer``).
    package func stop() {
        guard thread != nil else { return }
        receiver.stop()
        thread?.join()
        thread = nil
        now = MonotonicClock.now()
        scheduleAt = nil
        silencer.silence(queue: queue, output: output, route: route, now: now) { emit($0, $1) }
    }

    // MARK: Asked for by other threads

    /// Tells the OSC thread that the device of our output port `port` came back, for outputs
    /// with `sync: ["device"]` (any thread; the input thread, as it reconciles bindings).
    package func deviceReturned(ourPort port: UInt8) {
        guard let index = ports.firstIndex(of: port), replays.deviceReturned(output: index) else { return }
        receiver.wake()
    }

    /// Replays every output that has `sync` (the status page's action), whatever its triggers;
    /// any thread. Returns how many outputs that is.
    package func replayAll() -> Int {
        let count = replays.replayAll()
        if count > 0 { receiver.wake() }
        return count
    }

    /// Sends every output port, on every channel, sustain off and All Notes Off (the status
    /// page's panic), at the OSC thread's next turn; any thread.
    package func panic() {
        panicRequest.ask()
        receiver.wake()
    }

    /// Unbinds and deletes our output ports (on reload, after ``stop()``).
    package func removePorts() {
        for port in ports {
            session.bindings.unbind(ourPort: port)
            try? session.client.deletePort(port)
        }
    }

    /// `osc.udp://host:port`, `osc.tcp://host:port`, or both.
    package var listenURLs: [String] { config.transports.sorted().map { "osc.\($0.rawValue)://\(config.endpoint)" } }

    // MARK: The OSC thread

    /// After every wake-up: what is staged, then what the parts and the pipeline have due (a
    /// panic, replays, recovery, paced output, throttled values); returns the poll timeout
    /// until the next of them.
    private func tick() -> Int32 {
        // After every batch: the events staged from it (a bundle's chord) go to the kernel in
        // one write.
        output.flush(now: now)
        if panicRequest.take() {
            now = MonotonicClock.now()
            scheduleAt = nil
            OutputPanic.events(ports: ports.count) { emit($0, $1) }
            output.flush(now: now)
        }
        // Nothing timed, the usual case: no clock to read and nothing more to call on a
        // message's way back to the wait.
        guard !output.isIdle || route.nextDeadline != nil || !recovery.listener.isEmpty || replays.hasWork
        else { return -1 }
        if replays.hasWork {
            _ = replays.run(into: output, from: values, now: MonotonicClock.now())
            output.flush(now: now)
        }
        let now = MonotonicClock.now()
        if recovery.nextDeadline <= now {
            // Senders gone silent: their notes end as if their note-offs had come.
            self.now = now
            scheduleAt = nil
            recovery.expire(now: now) { process($0) }
            output.flush(now: now)
        }
        var next = min(output.service(now: now) ?? .max, recovery.nextDeadline)
        if let deadline = route.nextDeadline {
            if deadline <= now {
                self.now = now
                scheduleAt = nil
                route.flushDue(now: now, into: emit)
                next = min(next, output.service(now: now) ?? .max)
            }
            if let later = route.nextDeadline { next = min(next, later) }
        }
        if replays.hasWork { next = min(next, MonotonicClock.now() + Replays<ReplayCursor>.interval) }
        guard next != .max else { return -1 }
        guard next > now else { return 0 }
        return Int32(min((next - now + 999_999) / 1_000_000, 1000))
    }

    private func handle(_ datagram: UnsafeRawBufferPointer, from sender: PacketSource) {
        scheduleAt = nil
        learnedClient?.heard(sender, now: now)
        recovery.begin(from: sender, now: now)
        let packet: OSCPacketView
        do {
            packet = try OSCPacketView(datagram)
        } catch {
            counters.malformed[MalformedOSC.index(of: error)].add(1, ordering: .relaxed)
            log.debug("osc input: malformed packet from \(sender) (\(datagram.count) bytes): \(error)")
            return
        }
        switch packet {
        case .message(let message):
            scheduleAt = nil
            handle(message, from: sender)
        case .bundle(let bundle):
            handle(bundle, inheriting: nil, from: sender)
        }
    }

    private func handle(_ bundle: OSCBundleView, inheriting parent: UInt64?, from sender: PacketSource) {
        let time = bundleTimes.monotonicTime(for: bundle.timeTag) ?? parent
        for element in bundle.elements {
            switch element {
            case .message(let message):
                scheduleAt = time
                handle(message, from: sender)
            case .bundle(let inner):
                handle(inner, inheriting: time, from: sender)
            }
        }
    }

    private func handle(_ message: OSCMessageView, from sender: PacketSource) {
        counters.messages.add(1, ordering: .relaxed)
        if tap.isOn { tap.record(.oscIn, index: 0, MIDIEvent(.controlChange, timestamp: now), message: message.bytes) }
        count(translator.translate(message, timestamp: now) { process($0) }, message, from: sender)
    }

    private func count(_ outcome: OSCToMIDITranslator.Outcome, _ message: OSCMessageView, from sender: PacketSource) {
        switch outcome {
        case .translated:
            counters.translated.add(1, ordering: .relaxed)
        case .unknownAddress where SyncRequestMessage.isAddressed(message):
            syncRequested(message, from: sender)
        case .unknownAddress where HeldNotesMessage.isAddressed(message):
            recovery.received(message, from: sender, now: now, udp: receiver.udp, log: log) { process($0) }
        case .unknownAddress:
            counters.unknownAddress.add(1, ordering: .relaxed)
            log.debug("osc input: unknown address \(message.addressString) from \(sender)")
        case .malformed:
            counters.malformedMessages.add(1, ordering: .relaxed)
            log.debug("osc input: \(message.addressString) from \(sender): arguments do not fit the address")
        case .sysexDisabled:
            counters.sysexDisabled.add(1, ordering: .relaxed)
            log.debug("osc input: SysEx from \(sender) dropped: osc.sysex is off")
        case .sysexDropped:
            counters.sysexDropped.add(1, ordering: .relaxed)
        }
    }

    /// `/aseqosc/sync` (no argument: for the sender's address) or `/aseqosc/sync ,s NAME`:
    /// replays the outputs it names with `sync: ["request"]` here, and hands the request on for
    /// the destinations of MIDI -> OSC.
    private func syncRequested(_ message: OSCMessageView, from sender: PacketSource) {
        replays.requests.add(1, ordering: .relaxed)
        var arguments = message.arguments
        switch (message.argumentCount, arguments.next()) {
        case (0, _):
            onSyncRequest?(.from(sender.address))
        case (1, .string(let name)?):
            let name = String(decoding: name, as: UTF8.self)
            replays.requested(name: name, now: now)
            onSyncRequest?(.named(name))
        default:
            counters.malformedMessages.add(1, ordering: .relaxed)
            log.debug("osc input: \(SyncRequestMessage.address) from \(sender): expected no argument or one string")
        }
    }

    /// One translated event, recorded for note recovery, through the operators to its output.
    private func process(_ event: MIDIEvent) {
        recovery.record(event, now: now)
        consumedSysEx = false
        route.process(event, now: now) { output, destination in emit(output, destination) }
        if event.kind == .sysex && !consumedSysEx { sysexStore?.release(event.sysex) }
    }

    private func emit(_ event: MIDIEvent, _ destination: Int) {
        if tap.isOn { tap.record(.midiOut, index: destination, event) }
        if event.kind == .sysex { consumedSysEx = true }
        values.record(event)
        if let scheduleAt {
            output.schedule(event, at: scheduleAt, now: now)
        } else {
            output.send(event, now: now)
        }
    }
}

/// What the OSC thread does beside reading, translating and writing events: each a part of its
/// own, which the bridge builds and hands to ``OSCToMIDISide``.
package struct OSCToMIDIParts: Sendable {
    /// The output ports' replays of their last values (`sync`).
    let replays: OutputReplays
    /// Note recovery from the senders that announce their held notes.
    package let recovery: RecoveryIntake
    /// The status page's panic.
    let panic: OutputPanic
    /// What leaves nothing sounding at a stop.
    let silencer: OutputSilencer

    /// The parts for `outputs`.
    package init(outputs: [OutputPortConfig]) {
        replays = OutputReplays(outputs: outputs)
        recovery = RecoveryIntake()
        panic = OutputPanic()
        silencer = OutputSilencer()
    }
}
