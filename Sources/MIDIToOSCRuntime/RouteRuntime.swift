import BridgeSession
import Config
import Endpoints
import EventTap
import MIDI
import MIDIToOSC
import OSC
import OSCMapping
import OSCTransport
import Pipeline
import Platform
import Recovery
import Storage
import Synchronization
import ValueStore

/// One configured route as it runs: the pipeline's route (operators, held notes) with the
/// formatters and sockets of its own destinations. A reload keeps a route whose config did not
/// change (with its held notes) and releases the notes of one that did.
public final class RouteRuntime: @unchecked Sendable {
    // @unchecked Sendable: built on the starting thread, then used only by the input thread
    // (or by the reloading thread while the input thread is paused).

    /// The route as configured.
    public let config: RouteConfig
    /// The ALSA port numbers of the route's inputs, part of its identity across reloads.
    public let inputPorts: [UInt8]
    /// The pipeline route: operators and held notes, kept across reloads while the config stays.
    public let route: Route
    package let destinations: [DestinationConfig]
    // `let`s, not `var`s: the input thread reads them per event, and a class `var` would
    // pay a dynamic exclusivity check each time. A reload that re-resolves to new addresses
    // makes a new runtime around the same route instead (`refreshed()`).
    let formatters: [OSCEventFormatter]
    package let sender: OSCSender
    /// The addresses its destinations resolved to, by destination index.
    public let resolved: [ResolvedOSCDestination]
    /// Each destination's note recovery, by destination index (nil: `recovery: false`); kept
    /// across a re-resolve with the held notes.
    package let announcers: [RecoveryAnnouncer?]
    /// Whether any destination has recovery: the per-output check of a route without any.
    let hasRecovery: Bool
    /// Each destination's `latency` in nanoseconds (nil: plain messages), by destination index.
    let latencies: [UInt64?]
    /// Whether any destination sends time-tagged bundles: the per-output check of a route without.
    let hasTimeTags: Bool
    /// The bundles the time-tagged destinations are filling in this batch.
    let bundles: OpenBundles
    /// Whether any destination is TCP, whose queue needs to know a note-on from a note-off.
    let hasTCP: Bool
    /// Where TCP destinations' threads take their scheduling from.
    let realtime: RealtimeScheduler?
    /// The runner's replay signal (nil in tests without one).
    let replaySignal: ReplaySignal?
    /// What each destination was last sent of every controller, program, bend and pressure,
    /// by destination index: kept for a destination with `sync` (its replays) and for one whose
    /// addresses OSCQuery shows values of (mapping rules, the `touchosc` scheme), nil for the
    /// others; kept across a re-resolve and a reload that keeps the route.
    public let stores: [LastValueStore?]
    /// Whether any destination keeps its values: the per-output check of a route without any.
    let hasStores: Bool
    /// Whether any destination has `sync`: the per-turn check of a route without replays.
    let hasSync: Bool
    /// Replays asked for by other threads, by destination index (see ``wantReplay(_:)``).
    private let replayWanted: FixedBuffer<Atomic<Bool>>
    /// Where each replay under way has got to, by destination index (the input thread's).
    private var replays: [StoreReplayCursor?]
    /// When each destination last accepted an `/aseqosc/sync` (monotonic ns): one a second.
    private var lastRequest: [UInt64]
    /// Where what the route sends is copied for the status page's monitor (nil: nowhere).
    let tap: EventTap?
    /// How the monitor's entries name this route, for as long as it runs (kept by a re-resolve).
    public let monitorID: Int
    private static let monitorIDs = Atomic<Int>(0)

    /// A runtime for `config`, its destinations resolved and their sockets open.
    /// `replaySignal`: the runner's, which the destinations' reconnections and appearances
    /// raise for their replays (`sync`). `configInputPorts`: the ALSA port of every config
    /// input, by input index, which the route's `from` and its `ports` operators index.
    public init(
        config: RouteConfig, configInputPorts: [UInt8], portNames: [String], sysexStore: SysExStore,
        realtime: RealtimeScheduler? = nil, replaySignal: ReplaySignal? = nil, tap: EventTap? = nil
    ) throws(BridgeError) {
        self.replaySignal = replaySignal
        self.tap = tap
        monitorID = Self.monitorIDs.add(1, ordering: .relaxed).newValue & 0xFFFF
        self.config = config
        self.realtime = realtime
        inputPorts = config.inputs.map { configInputPorts[$0] }
        var builder = RouteBuilder(inputPorts: configInputPorts)
        route = builder.build(config)
        destinations = builder.destinations
        formatters = destinations.map {
            OSCEventFormatter(
                scheme: $0.resolvedScheme, portNames: portNames, sysex: sysexStore, mappings: $0.mappings)
        }
        announcers = destinations.map { $0.recovery == .off ? nil : RecoveryAnnouncer(mode: $0.recovery) }
        hasRecovery = announcers.contains { $0 != nil }
        latencies = destinations.map { $0.latencyMilliseconds.map { UInt64($0) * 1_000_000 } }
        hasTimeTags = latencies.contains { $0 != nil }
        hasTCP = destinations.contains { $0.tcp != nil }
        let ports = inputPorts.map { UInt16($0) }
        stores = destinations.map {
            $0.sync.isEmpty && !Self.showsValues($0) ? nil : LastValueStore(ports: ports)
        }
        hasStores = stores.contains { $0 != nil }
        hasSync = destinations.contains { !$0.sync.isEmpty }
        replayWanted = FixedBuffer(count: destinations.count) { _ in Atomic<Bool>(false) }
        replays = Array(repeating: nil, count: destinations.count)
        lastRequest = Array(repeating: 0, count: destinations.count)
        Self.warmUp(route.chain, formatters)
        resolved = try Self.resolve(destinations)
        sender = try Self.sender(resolved, realtime)
        bundles = OpenBundles(destinations: hasTimeTags ? destinations.count : 0, capacity: sender.slotSize)
        observeReplayTriggers()
    }

    private init(keeping old: RouteRuntime, resolved: [ResolvedOSCDestination]) throws(BridgeError) {
        config = old.config
        inputPorts = old.inputPorts
        route = old.route
        destinations = old.destinations
        formatters = old.formatters
        announcers = old.announcers
        hasRecovery = old.hasRecovery
        latencies = old.latencies
        hasTimeTags = old.hasTimeTags
        hasTCP = old.hasTCP
        realtime = old.realtime
        stores = old.stores
        hasStores = old.hasStores
        hasSync = old.hasSync
        replayWanted = FixedBuffer(count: old.destinations.count) { _ in Atomic<Bool>(false) }
        replays = old.replays
        lastRequest = old.lastRequest
        self.resolved = resolved
        replaySignal = old.replaySignal
        tap = old.tap
        monitorID = old.monitorID
        sender = try Self.sender(resolved, old.realtime)
        bundles = OpenBundles(destinations: hasTimeTags ? destinations.count : 0, capacity: sender.slotSize)
        observeReplayTriggers()
    }

    /// Whether OSCQuery shows the values `destination` is sent: its addresses are in the
    /// namespace (the OSC input's mapping rules, the TouchOSC Bridge's `/midi`).
    public static func showsValues(_ destination: DestinationConfig) -> Bool {
        !destination.mappings.isEmpty || destination.scheme == "touchosc"
    }

    /// Asks for a replay whenever a destination with `sync: ["reconnect"]` connects and one
    /// with `sync: ["appear"]` appears or moves.
    private func observeReplayTriggers() {
        guard let signal = replaySignal, hasSync else { return }
        for (index, destination) in destinations.enumerated() {
            if destination.sync.contains(.reconnect), let link = sender.links[index] {
                link.observeConnections { [weak self] in
                    self?.wantReplay(index)
                    signal.raise()
                }
            }
            if destination.sync.contains(.appear), let target = sender.serviceTargets[index] {
                target.observe { [weak self] in
                    guard target.current != nil else { return }
                    self?.wantReplay(index)
                    signal.raise()
                }
            }
        }
    }

    /// Runs a note and a controller through a copy of the chain and formats every kind for
    /// every destination into scratch memory, sending nothing: the first event a user plays
    /// then finds the code and tables in memory instead of waiting for page faults.
    private static func warmUp(_ chain: Chain, _ formatters: [OSCEventFormatter]) {
        let scratch = FixedBytes(count: 1_536)
        var copy = chain.withFreshState()
        let events: [MIDIEvent] = [
            .noteOn(channel: 0, note: 60, velocity: 100), .controlChange(channel: 0, controller: 1, value: 64),
            .noteOff(channel: 0, note: 60),
        ]
        for event in events {
            copy.process(event, now: 0) { output, destination in
                if destination < formatters.count { _ = formatters[destination].write(output, into: scratch.bytes) }
            }
        }
        for formatter in formatters {
            for kind in MIDIEventKind.allCases where kind != .sysex {
                _ = formatter.write(MIDIEvent(kind, channel: 0), into: scratch.bytes)
            }
        }
    }

    /// Resolves the destinations' names again: this runtime if every address is the same, else
    /// a new one with new sockets around the same route (its held notes stay).
    public func refreshed() throws(BridgeError) -> RouteRuntime {
        let now = try Self.resolve(destinations)
        return now == resolved ? self : try RouteRuntime(keeping: self, resolved: now)
    }

    /// Sends a note-off for every note this route holds, to its own destinations.
    func releaseAll(packet: UnsafeMutableRawBufferPointer) {
        route.releaseAll { event, destination in
            send(event, to: destination, packet: packet)
        }
        // At once, not at the next turn: a receiver repairs a lost one of those note-offs now,
        // and this may be the bridge's last word (a stop).
        for (destination, announcer) in announcers.enumerated() {
            announcer?.sendHeld { queue($0, to: destination) }
        }
        flush()
    }

    /// Sends what the route has queued: the open bundles, then every destination's packets.
    @inline(__always)
    func flush() {
        if hasTimeTags { bundles.closeAll(onto: sender) }
        sender.flush()
    }

    /// Stops the route's TCP links once they have written what is queued (see
    /// ``OSCSender/stopLinks()``): after ``releaseAll(packet:)`` at a stop.
    public func stopLinks() { sender.stopLinks() }

    /// Where the destinations named by service are, for a ``ServiceFollower`` to move.
    public var serviceTargets: [ServiceTarget] { sender.serviceTargets.compactMap { $0 } }

    /// When a destination's recovery is due next (monotonic ns), `.max` if none is.
    var recoveryDue: UInt64 {
        var earliest = UInt64.max
        for announcer in announcers { if let due = announcer?.nextDue, due < earliest { earliest = due } }
        return earliest
    }

    /// Sends what recovery has due at `now` to the route's destinations, and reads what their
    /// receivers sent back.
    func sendDueRecovery(now: UInt64, packet: UnsafeMutableRawBufferPointer) {
        for (destination, announcer) in announcers.enumerated() {
            guard let announcer else { continue }
            announcer.sendDue(
                now: now, message: { queue($0, to: destination) },
                noteOff: { _ = sendEvent($0, to: destination, packet: packet) })
            readReplies(destination, now: now, into: packet)
        }
    }

    /// Reads what `destination`'s receiver sent back while it is sent held notes: an aseqosc
    /// receiver that hears this sender anew asks for its last values (`/aseqosc/sync`), which a
    /// destination with `sync: ["recovery"]` gets, one replay a second at most. Anything else is
    /// read and dropped, so nothing piles up in the socket.
    private func readReplies(_ destination: Int, now: UInt64, into packet: UnsafeMutableRawBufferPointer) {
        var asked = false
        var budget = 8
        while budget > 0, let size = sender.receiveReply(from: destination, into: packet) {
            budget -= 1
            if SyncRequestMessage.isRequest(UnsafeRawBufferPointer(rebasing: packet.prefix(size))) { asked = true }
        }
        guard asked, destinations[destination].sync.contains(.recovery), acceptRequest(destination, now: now) else {
            return
        }
        wantReplay(destination)
        replaySignal?.raise()
    }

    private func queue(_ message: HeldNotesMessage, to destination: Int) {
        // After the events before it, as it was recorded.
        if hasTimeTags { bundles.close(destination, onto: sender) }
        let size = message.write(into: sender.nextSlot())
        if size > 0 { sender.commit(size, to: destination) }
    }

    /// Runs `event` through the route and queues what comes out for the route's destinations;
    /// returns how many outputs could not be formatted (see ``send(_:to:packet:)``).
    @inline(__always)
    func run(_ event: MIDIEvent, packet: UnsafeMutableRawBufferPointer) -> Int {
        var unformatted = 0
        route.process(event, now: event.timestamp) { output, destination in
            if !send(output, to: destination, packet: packet) { unformatted &+= 1 }
        }
        return unformatted
    }

    /// Emits the throttled values due at `now` to the route's destinations; returns how many
    /// could not be formatted.
    func flushDue(now: UInt64, packet: UnsafeMutableRawBufferPointer) -> Int {
        var unformatted = 0
        route.flushDue(now: now) { output, destination in
            if !send(output, to: destination, packet: packet) { unformatted &+= 1 }
        }
        return unformatted
    }

    /// Formats `event` for `destination` into `packet` and queues it; false if the scheme does
    /// not send this kind (or it did not fit).
    @inline(__always)
    @discardableResult
    func send(_ event: MIDIEvent, to destination: Int, packet: UnsafeMutableRawBufferPointer) -> Bool {
        if hasStores, let store = stores[destination] { store.record(event) }
        if hasRecovery, let announcer = announcers[destination] {
            return sendRecovering(event, to: destination, announcer, packet: packet)
        }
        return sendEvent(event, to: destination, packet: packet)
    }

    // MARK: Replay

    /// Asks for `destination`'s last values to be sent again, from the start, at the input
    /// thread's next turn (any thread; the caller then wakes that thread). Nothing happens for
    /// a destination without `sync`.
    public func wantReplay(_ destination: Int) {
        guard destination < replayWanted.count, !destinations[destination].sync.isEmpty else { return }
        replayWanted[destination].store(true, ordering: .releasing)
    }

    /// The destinations a `/aseqosc/sync` asks for that have `sync: ["request"]`: those at the
    /// sender's address, or those the name picks (the route's name picks all of its own).
    public func destinations(for request: SyncRequest) -> [Int] {
        destinations.indices.filter { index in
            guard destinations[index].sync.contains(.request) else { return false }
            switch request {
            case .from(let address):
                if let target = sender.serviceTargets[index] { return target.current?.ip == address }
                return resolved[index].address.ip == address
            case .named(let name):
                let destination = destinations[index]
                return name == config.name || name == destination.endpoint || name == destination.service?.name
                    || (destination.service == nil && name == "\(destination.host):\(destination.port)")
            }
        }
    }

    /// Takes an `/aseqosc/sync` for `destination` unless it took one less than a second
    /// before `now`; false: refused. On the input thread.
    func acceptRequest(_ destination: Int, now: UInt64) -> Bool {
        guard lastRequest[destination] == 0 || now &- lastRequest[destination] >= 1_000_000_000 else { return false }
        lastRequest[destination] = now
        return true
    }

    /// Starts the replays asked for since the last call (one asked for while another runs
    /// starts again from the top), and sends the next values of those under way: at most
    /// `budget` per destination, only after this turn's live events, and to a TCP destination
    /// only while its link is connected with room to spare. Returns whether a replay is still
    /// under way. On the input thread.
    func continueReplays(budget: Int, packet: UnsafeMutableRawBufferPointer) -> Bool {
        var underWay = false
        for destination in replays.indices {
            guard let store = stores[destination] else { continue }
            if replayWanted[destination].exchange(false, ordering: .acquiring) {
                replays[destination] = StoreReplayCursor()
            }
            guard var cursor = replays[destination] else { continue }
            if let link = sender.links[destination] {
                guard link.isConnected else {
                    // Gone again: its next connection asks for a replay of its own.
                    replays[destination] = nil
                    continue
                }
                guard link.hasRoomForReplay else {
                    underWay = true
                    continue
                }
            }
            let finished = store.replay(&cursor, limit: budget) { event in
                _ = sendEvent(event, to: destination, packet: packet)
            }
            replays[destination] = finished ? nil : cursor
            if !finished { underWay = true }
        }
        return underWay
    }

    /// Whether a replay is under way or asked for (the input thread's view).
    var hasReplayWork: Bool {
        guard hasSync else { return false }
        for destination in replays.indices
        where replays[destination] != nil || replayWanted[destination].load(ordering: .relaxed) {
            return true
        }
        return false
    }

    /// ``send(_:to:packet:)`` to a destination with recovery: a note that starts a phase goes
    /// after a held-notes message, and what was sent is recorded.
    @inline(never)
    private func sendRecovering(
        _ event: MIDIEvent, to destination: Int, _ announcer: RecoveryAnnouncer, packet: UnsafeMutableRawBufferPointer
    ) -> Bool {
        if let opening = announcer.opening(event) { queue(opening, to: destination) }
        guard sendEvent(event, to: destination, packet: packet) else { return false }
        announcer.sent(event, now: MonotonicClock.now())
        return true
    }

    /// Formats `event` for `destination` and queues it (see ``send(_:to:packet:)``).
    @inline(__always)
    private func sendEvent(_ event: MIDIEvent, to destination: Int, packet: UnsafeMutableRawBufferPointer) -> Bool {
        if hasTimeTags, let latency = latencies[destination] {
            return sendBundled(event, to: destination, ahead: latency, packet: packet)
        }
        let formatter = formatters[destination]
        // Straight into the sender's batch; only a message too long for a batch slot (a long
        // SysEx) takes the detour through `packet` and is sent on its own.
        let slot = sender.nextSlot()
        let size = formatter.write(event, into: slot)
        if size > 0 {
            if let tap, tap.isOn {
                tap.record(
                    .oscOut, index: monitorID, destination: destination, event,
                    message: UnsafeRawBufferPointer(rebasing: slot[0..<size]))
            }
            sender.commit(size, to: destination, kind: packetKind(event))
            return true
        }
        let long = formatter.write(event, into: packet)
        guard long > 0 else { return false }
        if let tap, tap.isOn {
            tap.record(
                .oscOut, index: monitorID, destination: destination, event,
                message: UnsafeRawBufferPointer(rebasing: packet[0..<long]))
        }
        sender.queue(UnsafeRawBufferPointer(rebasing: packet[0..<long]), to: destination, kind: packetKind(event))
        return true
    }

    /// What a TCP destination's queue needs to know of `event`: `.other` for a route without one.
    @inline(__always)
    private func packetKind(_ event: MIDIEvent) -> OSCPacketKind {
        guard hasTCP else { return .other }
        if event.endsNote { return .noteOff(channel: event.channel, note: event.note) }
        if event.kind == .noteOn { return .noteOn(channel: event.channel, note: event.note) }
        return .other
    }

    /// ``sendEvent(_:to:packet:)`` to a destination with `latency`: the message in a bundle
    /// whose time tag is when the event was read, in wall-clock time, plus `ahead`, shared by
    /// the other events of the same read to the same destination (``OpenBundles``).
    @inline(never)
    private func sendBundled(
        _ event: MIDIEvent, to destination: Int, ahead: UInt64, packet: UnsafeMutableRawBufferPointer
    ) -> Bool {
        // Inside a bundle the monitor shows the event, not the message.
        if let tap, tap.isOn { tap.record(.oscOut, index: monitorID, destination: destination, event) }
        let formatter = formatters[destination]
        let tag = OSCTimeTag.wallClock(atMonotonic: event.timestamp, ahead: ahead)
        let appended = bundles.append(
            to: destination, stamp: event.timestamp, tag: tag, kind: packetKind(event), sender: sender
        ) { room in formatter.write(event, into: room) }
        if appended { return true }
        // Too long for a bundle slot (a long SysEx): on its own, after the bundle before it.
        bundles.close(destination, onto: sender)
        let header = OSCTimeTag.bundleHeaderSize
        let long = formatter.write(event, into: UnsafeMutableRawBufferPointer(rebasing: packet[header...]))
        guard long > 0 else { return false }
        tag.writeBundleHeader(elementSize: long, into: packet.baseAddress!)
        sender.queue(
            UnsafeRawBufferPointer(rebasing: packet[0..<header + long]), to: destination, kind: packetKind(event))
        return true
    }

    /// Resolves every destination's host name (at start, and again on reload); a service's
    /// address comes from its ``ServiceTarget``.
    public static func resolve(_ destinations: [DestinationConfig]) throws(BridgeError) -> [ResolvedOSCDestination] {
        var resolved: [ResolvedOSCDestination] = []
        for config in destinations {
            do {
                if let service = config.service {
                    var destination = OSCDestination(service: service)
                    destination.tcp = config.tcp
                    resolved.append(try destination.resolve())
                    continue
                }
                var destination = try OSCDestination(
                    host: config.host, port: config.port, broadcast: config.broadcast,
                    multicastTTL: config.multicastTTL.map { UInt8($0) }, multicastInterface: config.multicastInterface,
                    multicastLoopback: config.multicastLoop)
                destination.tcp = config.tcp
                resolved.append(try destination.resolve())
            } catch {
                throw .destination(endpoint: config.endpoint, error)
            }
        }
        return resolved
    }

    private static func sender(
        _ resolved: [ResolvedOSCDestination], _ realtime: RealtimeScheduler?
    ) throws(BridgeError) -> OSCSender {
        do {
            var setup: (@Sendable () -> Void)? = nil
            if let realtime { setup = { realtime.enter(.tcp) } }
            return try OSCSender(destinations: resolved, linkThreadSetup: setup)
        } catch {
            throw .sender(error)
        }
    }
}
