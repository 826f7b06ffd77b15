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

/// Counters of the OSC -> MIDI direction, readable from any thread (relaxed: statistics only).
package final class OSCInputCounters: Sendable {
    /// OSC messages read (a bundle counts its messages).
    package let messages = Atomic<Int>(0)
    /// Messages that became at least one MIDI event.
    package let translated = Atomic<Int>(0)
    /// Datagrams that are not valid OSC, by ``MalformedOSC`` reason.
    nonisolated(unsafe) package let malformed = FixedBuffer(count: 16) { _ in Atomic<Int>(0) }
    /// Messages at a known address whose arguments do not fit it.
    package let malformedMessages = Atomic<Int>(0)
    /// Messages no rule or built-in address matches.
    package let unknownAddress = Atomic<Int>(0)
    /// SysEx messages refused because `osc.sysex` is off.
    package let sysexDisabled = Atomic<Int>(0)
    /// SysEx messages with no room in the store.
    package let sysexDropped = Atomic<Int>(0)
    /// Bundles whose time tag had passed on arrival (sent at once).
    package let late = Atomic<Int>(0)
    /// Bundles scheduled on the sequencer queue for later.
    package let scheduled = Atomic<Int>(0)
}

/// The OSC -> MIDI direction: our ALSA output ports and their bindings, the UDP and TCP
/// receivers, the translator, the operator pipeline, and the thread that runs them.
///
/// One thread does everything, in order, per packet (a UDP datagram or a TCP frame alike):
/// validate, translate, run the operators, write to ALSA (or schedule on the queue for a future
/// bundle). Nothing there allocates, locks or blocks; only a debug log line for an unknown or
/// malformed message allocates, and only when debug logging is on (and a log line when a TCP
/// client comes or goes).
public final class OSCToMIDISide: @unchecked Sendable {
    // @unchecked Sendable: after `start`, everything but the counters is touched only by the
    // OSC thread; `stop()` waits for that thread before touching anything else.

    let config: OSCInputConfig
    package let counters = OSCInputCounters()
    package let receiver: OSCReceiver
    package let output: PacedMIDIOutput<SequencerPortWriter>
    /// What each output's notes do over time, to silence them on stop.
    private let ledger: OutputNoteLedger
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
    /// The senders that announce their held notes (`recovery: true` on an aseqosc destination).
    package let recovery = RecoveryListener()
    /// Whose events ``process(_:)`` records for note recovery: the sender of the packet being
    /// handled, or nobody.
    private var recording = Recording.nobody
    /// Puts the thread under SCHED_FIFO as it starts, when set (by the bridge, before ``start()``).
    public var realtime: RealtimeScheduler?
    /// What each output port was last sent of every controller, program, bend and pressure
    /// (the event's port is the output's index): OSCQuery's values, and the replays.
    public let values: LastValueStore
    /// Each output's `sync`, by index.
    private let outputSync: [SyncTriggers]
    /// Outputs whose device came back since the OSC thread last looked (any thread sets them).
    private let deviceBack: FixedBuffer<Atomic<Bool>>
    private let deviceBackRaised = Atomic<Bool>(false)
    /// Where each output's replay under way has got to (the OSC thread's).
    private var outputReplays: [ReplayCursor?]
    /// When each output last accepted an `/aseqosc/sync`: one a second.
    private var lastRequest: [UInt64]
    private var replaying = false
    /// Where an `/aseqosc/sync` goes for the MIDI -> OSC destinations (the bridge sets it).
    public var onSyncRequest: (@Sendable (SyncRequest) -> Void)?
    /// The TouchOSC Bridge's client, which every packet's sender may become (`touchoscBridge`).
    public var learnedClient: LearnedClient?
    /// `/aseqosc/sync` messages read.
    package let syncRequests = Atomic<Int>(0)
    /// Requests for an output whose replay started less than a second before.
    package let syncRequestsRefused = Atomic<Int>(0)

    // Per message being handled: its arrival time (read once per receive batch), and the time
    // (monotonic) its bundle asks for.
    /// What the OSC thread receives and writes, copied for the status page's monitor while a
    /// page watches; the bridge's, kept across reloads that make a new side.
    public let tap: EventTap
    /// Set by ``panic()``, taken by the OSC thread.
    private let panicWanted = Atomic<Bool>(false)
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
    public init(
        session: SequencerSession, config: OSCInputConfig, outputs: [OutputPortConfig], sysexCapacity: Int,
        tap: EventTap = EventTap()
    ) throws(BridgeError) {
        self.tap = tap
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
        ledger = OutputNoteLedger(ports: ports.count)
        values = LastValueStore(portCount: outputs.count)
        outputSync = outputs.map(\.sync)
        deviceBack = FixedBuffer(count: outputs.count) { _ in Atomic<Bool>(false) }
        outputReplays = Array(repeating: nil, count: outputs.count)
        lastRequest = Array(repeating: 0, count: outputs.count)
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
    public func start() {
        self.thread = SystemThread(name: "aseqosc-osc-in") { [self, realtime] in
            realtime?.enter(.osc)
            // One clock reading per batch of packets: they arrived together. TCP keeps its
            // connections' idle times by the same reading (the same clock, CLOCK_MONOTONIC).
            // An output whose device can come back is woken for its replay, and a status page
            // with actions wakes it for a panic or a replay.
            let wakeable = outputSync.contains { $0.contains(.device) } || !config.pageActions.isEmpty
            receiver.run(
                tick: tick, beforeBatch: { now = MonotonicClock.now() }, clock: { now }, wakeable: wakeable, handle)
            receiver.close()
        }
        log.info(
            "osc input: listening on \(listenURLs.joined(separator: " and ")) for outputs \(outputNames.map { "'\($0)'" }.joined(separator: ", "))"
        )
    }

    /// Stops receiving and leaves nothing sounding and nothing to come: removes the events still
    /// scheduled on the queue, sends a note-off for every note the pipeline holds and for every
    /// note that may be sounding (played, or scheduled and already due), lets paced output finish
    /// (up to a second), then drops what is left but the note-offs, which go out regardless.
    public func stop() {
        guard thread != nil else { return }
        receiver.stop()
        thread?.join()
        thread = nil
        // First, so that nothing scheduled can start a note after the cutoff below; what waited
        // for room in the kernel's pool goes with it.
        queue.removePendingEvents()
        now = MonotonicClock.now()
        scheduleAt = nil
        // Everything due by the cutoff has played, and nothing after it will. The queue's clock
        // and the monotonic one may differ by a timer tick; the margin errs towards a note-off
        // that was not needed.
        // A stopped queue holds nothing.
        let queueNow = queue.isRunning ? (try? queue.now()).map { $0 + queue.monotonicOrigin } ?? 0 : 0
        let cutoff = max(now, queueNow) + Self.cutoffMargin
        output.discardScheduled()
        try? queue.stop()
        // The notes the pipeline holds, in its note-off form, but only those that may sound: it
        // also holds notes whose scheduled note-on was just removed.
        route.releaseAll { noteOff, destination in
            if ledger.maySound(port: Int(noteOff.port), channel: noteOff.channel, note: noteOff.note, at: cutoff) {
                emit(noteOff, destination)
            }
        }
        // Then the rest: notes whose note-off was scheduled and removed.
        ledger.forEachMaySound(at: cutoff) { noteOff in emit(noteOff, 0) }
        let deadline = now + 1_000_000_000
        while !output.isIdle && MonotonicClock.now() < deadline {
            _ = output.service(now: MonotonicClock.now())
            usleep(1000)
        }
        output.finish()
    }

    // MARK: Replay

    /// Asks a recovery sender heard anew for the values it sent meanwhile: `/aseqosc/sync` back
    /// to the address it sends from, which its destination's socket reads (docs/OSC.md).
    private func askForValues(_ sender: PacketSource) {
        withUnsafeTemporaryAllocation(byteCount: 32, alignment: 4) { buffer in
            let request = UnsafeRawBufferPointer(rebasing: buffer.prefix(SyncRequestMessage.write(into: buffer)))
            if request.isEmpty || receiver.udp?.reply(request, to: sender) != true {
                log.debug("osc input: could not ask \(sender) for its last values")
            }
        }
    }

    /// Values a replay sends to one output port per turn, and how often (ns): 6,400 a second.
    static let replayBudget = 32
    static var replayInterval: UInt64 { 5_000_000 }

    /// Tells the OSC thread that the device of our output port `port` came back, for outputs
    /// with `sync: ["device"]` (any thread; the input thread, as it reconciles bindings).
    public func deviceReturned(ourPort port: UInt8) {
        guard let index = ports.firstIndex(of: port), outputSync[index].contains(.device) else { return }
        deviceBack[index].store(true, ordering: .releasing)
        deviceBackRaised.store(true, ordering: .releasing)
        receiver.wake()
    }

    /// Replays every output that has `sync` (the status page's action), whatever its triggers;
    /// any thread. Returns how many outputs that is.
    public func replayAll() -> Int {
        var count = 0
        for index in outputSync.indices where !outputSync[index].isEmpty {
            // The flags a returning device raises: the OSC thread starts these replays the same way.
            deviceBack[index].store(true, ordering: .releasing)
            count += 1
        }
        if count > 0 {
            deviceBackRaised.store(true, ordering: .releasing)
            receiver.wake()
        }
        return count
    }

    /// Sends every output port, on every channel, sustain off and All Notes Off (the status
    /// page's panic), at the OSC thread's next turn; any thread.
    public func panic() {
        panicWanted.store(true, ordering: .releasing)
        receiver.wake()
    }

    /// `/aseqosc/sync` (no argument: for the sender's address) or `/aseqosc/sync ,s NAME`:
    /// replays the outputs it names with `sync: ["request"]` here, and hands the request on for
    /// the destinations of MIDI -> OSC.
    private func syncRequested(_ message: OSCMessageView, from sender: PacketSource) {
        syncRequests.add(1, ordering: .relaxed)
        let request: SyncRequest
        var arguments = message.arguments
        switch (message.argumentCount, arguments.next()) {
        case (0, _): request = .from(sender.address)
        case (1, .string(let name)?): request = .named(String(decoding: name, as: UTF8.self))
        default:
            counters.malformedMessages.add(1, ordering: .relaxed)
            log.debug("osc input: \(SyncRequestMessage.address) from \(sender): expected no argument or one string")
            return
        }
        if case .named(let name) = request {
            for (index, outputName) in outputNames.enumerated()
            where outputName == name && outputSync[index].contains(.request) {
                startReplay(index, now: now, requested: true)
            }
            replaying = replaying || outputReplays.contains { $0 != nil }
        }
        onSyncRequest?(request)
    }

    private func startReplay(_ index: Int, now: UInt64, requested: Bool) {
        if requested {
            guard lastRequest[index] == 0 || now &- lastRequest[index] >= 1_000_000_000 else {
                syncRequestsRefused.add(1, ordering: .relaxed)
                return
            }
            lastRequest[index] = now
        }
        outputReplays[index] = ReplayCursor()
    }

    /// Starts the replays of outputs whose device came back, and sends the next values of each
    /// replay under way to a port holding nothing back; returns whether one is still under way.
    private func continueReplays(now: UInt64) -> Bool {
        if deviceBackRaised.exchange(false, ordering: .acquiring) {
            for index in outputReplays.indices where deviceBack[index].exchange(false, ordering: .acquiring) {
                startReplay(index, now: now, requested: false)
            }
        }
        var underWay = false
        for index in outputReplays.indices {
            guard var cursor = outputReplays[index] else { continue }
            guard output.isQuiet(port: index) else {
                underWay = true
                continue
            }
            let sent = values[index].replay(&cursor, limit: Self.replayBudget) { event in
                output.send(event, now: now)
            }
            values.replayedCount.add(sent, ordering: .relaxed)
            outputReplays[index] = cursor.isFinished ? nil : cursor
            if !cursor.isFinished { underWay = true }
        }
        return underWay
    }

    /// How far past the queue's clock a scheduled note-on counts as played when stopping.
    static var cutoffMargin: UInt64 { 5_000_000 }

    /// Unbinds and deletes our output ports (on reload, after ``stop()``).
    public func removePorts() {
        for port in ports {
            session.bindings.unbind(ourPort: port)
            try? session.client.deletePort(port)
        }
    }

    /// `osc.udp://host:port`, `osc.tcp://host:port`, or both.
    package var listenURLs: [String] { config.transports.sorted().map { "osc.\($0.rawValue)://\(config.endpoint)" } }

    // MARK: The OSC thread

    /// After every wake-up: paced output and throttled values that are due; returns the poll
    /// timeout until the next of them.
    private func tick() -> Int32 {
        // After every batch: the events staged from it (a bundle's chord) go to the kernel in
        // one write.
        output.flush(now: now)
        if panicWanted.load(ordering: .relaxed) && panicWanted.exchange(false, ordering: .acquiring) {
            let now = MonotonicClock.now()
            self.now = now
            scheduleAt = nil
            for port in ports.indices {
                for channel in UInt8(0)..<16 {
                    for (controller, value) in [(UInt8(64), UInt8(0)), (123, 0)] {
                        let event = MIDIEvent(
                            .controlChange, channel: channel, data1: controller, data2: value, port: UInt16(port))
                        emit(event, port)
                    }
                }
            }
            output.flush(now: now)
        }
        // Nothing timed, the usual case: no clock to read and nothing more to call on a
        // message's way back to the wait.
        guard
            !output.isIdle || route.nextDeadline != nil || !recovery.isEmpty || replaying
                || deviceBackRaised.load(ordering: .relaxed)
        else { return -1 }
        if replaying || deviceBackRaised.load(ordering: .relaxed) {
            replaying = continueReplays(now: MonotonicClock.now())
            output.flush(now: now)
        }
        let now = MonotonicClock.now()
        if recovery.nextDeadline <= now {
            // Senders gone silent: their notes end as if their note-offs had come.
            self.now = now
            scheduleAt = nil
            recording = .nobody
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
        if replaying { next = min(next, MonotonicClock.now() + Self.replayInterval) }
        guard next != .max else { return -1 }
        guard next > now else { return 0 }
        return Int32(min((next - now + 999_999) / 1_000_000, 1000))
    }

    private func handle(_ datagram: UnsafeRawBufferPointer, from sender: PacketSource) {
        scheduleAt = nil
        learnedClient?.heard(sender, now: now)
        // One look at an empty table for every packet when no sender uses recovery.
        let followed = recovery.isEmpty ? nil : recovery.index(of: sender, now: now)
        recording = Recording(followed, sender)
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
        let time = queueTime(for: bundle.timeTag) ?? parent
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

    /// The time (monotonic nanoseconds) a time tag asks for, or nil for "now": immediately, or
    /// already past (counted as late).
    private func queueTime(for tag: OSCTimeTag) -> UInt64? {
        guard tag != .immediately else { return nil }
        var realtime = timespec()
        clock_gettime(CLOCK_REALTIME, &realtime)
        let nowNTP = OSCTimeTag(unixNanoseconds: UInt64(realtime.tv_sec) * 1_000_000_000 + UInt64(realtime.tv_nsec))
            .rawValue
        guard tag.rawValue > nowNTP else {
            counters.late.add(1, ordering: .relaxed)
            return nil
        }
        // NTP fractions to nanoseconds; a tag more than a day ahead is held at a day.
        let ahead = min(tag.rawValue - nowNTP, 86_400 << 32)
        let delay = (ahead >> 32) * 1_000_000_000 + ((ahead & 0xFFFF_FFFF) * 1_000_000_000) >> 32
        counters.scheduled.add(1, ordering: .relaxed)
        return MonotonicClock.now() + delay
    }

    private func handle(_ message: OSCMessageView, from sender: PacketSource) {
        counters.messages.add(1, ordering: .relaxed)
        if tap.isOn { tap.record(.oscIn, index: 0, MIDIEvent(.controlChange), message: message.bytes) }
        count(translator.translate(message, timestamp: now) { process($0) }, message, from: sender)
    }

    private func count(_ outcome: OSCToMIDITranslator.Outcome, _ message: OSCMessageView, from sender: PacketSource) {
        switch outcome {
        case .translated:
            counters.translated.add(1, ordering: .relaxed)
        case .unknownAddress where SyncRequestMessage.isAddressed(message):
            syncRequested(message, from: sender)
        case .unknownAddress where HeldNotesMessage.isAddressed(message):
            guard let held = HeldNotesMessage(message) else {
                recovery.malformed.add(1, ordering: .relaxed)
                log.debug("osc input: \(message.addressString) from \(sender): arguments do not fit the address")
                return
            }
            recording = .nobody
            if recovery.received(held, from: sender, now: now, release: { process($0) }) { askForValues(sender) }
            // What follows in the same bundle is the now followed sender's.
            recording = Recording(recovery.index(of: sender, now: now), sender)
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

    /// One translated event, recorded for note recovery, through the operators to its output.
    private func process(_ event: MIDIEvent) {
        record(event)
        runThroughRoute(event)
    }

    /// One event through the operators to its output.
    private func runThroughRoute(_ event: MIDIEvent) {
        consumedSysEx = false
        route.process(event, now: now) { output, destination in emit(output, destination) }
        if event.kind == .sysex && !consumedSysEx { sysexStore?.release(event.sysex) }
    }

    /// Records `event` for note recovery, as ``recording`` says.
    @inline(__always)
    private func record(_ event: MIDIEvent) {
        switch recording {
        case .followed(let index): recovery.record(event, sender: index, now: now)
        case .unfollowed(let source): recovery.remember(event, from: source, now: now)
        case .nobody: break
        }
    }

    private func emit(_ event: MIDIEvent, _ destination: Int) {
        if tap.isOn { tap.record(.midiOut, index: destination, event) }
        if event.kind == .sysex { consumedSysEx = true }
        values.record(event)
        if let scheduleAt {
            ledger.record(event, at: scheduleAt, now: now)
            output.schedule(event, at: scheduleAt, now: now)
        } else {
            ledger.record(event, at: now, now: now)
            output.send(event, now: now)
        }
    }
}

/// Whose events the OSC input records for note recovery.
private enum Recording {
    /// A followed sender, by its index in the listener.
    case followed(Int)
    /// A sender not followed: its notes are remembered, in case its first held-notes message
    /// was lost on the way.
    case unfollowed(PacketSource)
    /// Nobody: the note-offs recovery itself sends.
    case nobody

    /// `source`, followed at `index` or not.
    @inline(__always)
    init(_ index: Int?, _ source: PacketSource) {
        if let index { self = .followed(index) } else { self = .unfollowed(source) }
    }
}
