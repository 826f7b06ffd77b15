import BridgeSession
import Config
import Discovery
import EventTap
import MIDI
import MIDIToOSCRuntime
import OSCToMIDIRuntime
import OSCTransport
import Platform
import Recovery
import Status
import Synchronization

/// The composition root: builds the running bridge from a config (the ALSA session both
/// directions share, ports, routes, OSC formatters and sockets, threads), applies new
/// configs without restarting the ALSA client, and takes it all down without leaving a note
/// sounding.
final class Bridge: @unchecked Sendable {
    // @unchecked Sendable: started and stopped from one thread (the command's), reloaded one
    // reload at a time (the command's Reloader) and never during a start or stop; the parts it
    // owns synchronise their own threads, and status reads only atomics and values replaced
    // under `lock`.

    private(set) var config: BridgeConfig
    let log: Logger
    /// The ALSA client, its announcements, the bindings of both directions and the clock.
    let session: SequencerSession
    let input: MIDIInputSide
    /// The routes, run on the input thread.
    let runner: RouteRunner
    let sysexStore: SysExStore
    /// The OSC -> MIDI direction, when the config has output ports (see OSCToMIDISide.swift).
    var oscInput: OSCToMIDISide?
    /// SCHED_FIFO and locked memory for the event threads, as the config asks at start.
    let realtime: RealtimeScheduler
    /// When the bridge was built, on the monotonic clock (uptime in status).
    let startTime = WallClock.monotonic
    private let lock = Mutex(())
    /// Keeps destinations named by service where their services are; made with the first one.
    private var follower: ServiceFollower?
    /// The TouchOSC Bridge's client (`touchoscBridge`), which the bridge route's destination
    /// follows; one for the bridge's life, so an observer stays through reloads.
    let touchOSCClient = LearnedClient()
    private var routesForStatus: [RouteRuntime] = []
    /// The last values OSCQuery shows, from the stores of the running ports.
    let liveValues = LiveValues()
    /// What the OSC thread receives and writes, for the status page's monitor; the input
    /// thread's is `input.tap`. One for the bridge's life: a reload's new OSC side takes it on.
    let oscTap = EventTap()
    private var oscInputForStatus: OSCToMIDISide?

    /// The OSC -> MIDI side as of the last start or reload, for status on another thread.
    var oscInputSnapshot: OSCToMIDISide? { lock.withLock { _ in oscInputForStatus } }

    /// The routes as of the last start or reload, for status on another thread.
    var routeSnapshot: [RouteRuntime] { lock.withLock { _ in routesForStatus } }
    /// The config as of the last start or reload, for status on another thread.
    var currentConfig: BridgeConfig { lock.withLock { _ in config } }

    /// Builds everything; nothing runs until ``start()``.
    package init(config: BridgeConfig, log: Logger, idleWakeMilliseconds: Int32 = 1000) throws(BridgeError) {
        self.config = config
        self.log = log
        realtime = RealtimeScheduler(
            priority: config.realtime.priority, lockMemory: config.realtime.lockMemory, log: log)
        session = try SequencerSession(name: config.clientName, log: log)
        sysexStore = SysExStore(slots: 16, capacity: config.sysexCapacity)
        runner = RouteRunner(routes: [])
        input = try MIDIInputSide(
            session: session, runner: runner, sysexStore: sysexStore, idleWakeMilliseconds: idleWakeMilliseconds)
        for note in config.retiredKeys { log.warning(note) }
        let routes = try buildRoutes(config, reusing: []).routes
        runner.replaceRoutes(routes)
        try placeSendingThreads(routes, choice: config.realtime.cpu)
        input.realtime = realtime
        routesForStatus = routes
        followServices(routes, config)
        oscInput = try makeOSCInput(config)
        oscInputForStatus = oscInput
        showValues(config)
    }

    /// Hands OSCQuery the stores of `config`'s running ports, and of the destinations whose
    /// addresses its namespace lists (mapping rules sent back, the TouchOSC Bridge's client).
    private func showValues(_ config: BridgeConfig) {
        // Only an OSCQuery server reads them (QueryService): with none, none are made.
        guard config.oscInput?.queryPort != nil else { return liveValues.clear() }
        let outputs = oscInput.map { side in zip(side.outputNames, side.values.ports).map { ($0, $1) } } ?? []
        let inputs = zip(config.inputs.map(\.name), input.values.ports).map { ($0, $1) }
        var sent: [LiveValues.Sent] = []
        for runtime in runner.routes {
            for (index, destination) in runtime.destinations.enumerated()
            where DestinationReplays.showsValues(destination) {
                guard let store = runtime.replays.stores[index] else { continue }
                sent.append(
                    LiveValues.Sent(
                        mappings: destination.mappings, touchOSC: destination.scheme == "touchosc", tables: store.ports)
                )
            }
        }
        liveValues.update(
            outputs: outputs, inputs: inputs, families: config.oscInput?.families ?? [],
            mappings: config.oscInput?.mappings ?? [], sent: sent)
    }

    /// Starts the input thread and the OSC thread.
    func start() {
        realtime.prepare()
        input.start()
        oscInput?.start()
        logDestinations()
    }

    /// Applies a new config without restarting the ALSA client: input ports that keep their
    /// name keep their connections, routes that did not change keep their held notes, and
    /// every note held by a removed or changed route gets its note-off first. If the new config
    /// cannot be applied (a host name that does not resolve, say), nothing changes.
    func reload(_ new: BridgeConfig) throws(BridgeError) {
        // Every destination first, before anything changes: applying the inputs below creates,
        // deletes and rebinds ALSA ports, which a refused reload must not have done.
        _ = try RouteSending.resolve(Self.destinations(of: new))
        input.pause()
        defer { input.start() }
        let built = try buildRoutes(new, reusing: runner.routes)
        // A kept route may have a new runtime (new addresses) around the same pipeline route.
        let kept = Set(built.routes.map { ObjectIdentifier($0.route) })
        for old in runner.routes where !kept.contains(ObjectIdentifier(old.route)) {
            if old.route.heldNoteCount > 0 {
                log.info(
                    "route '\(old.config.name)' changed or removed: releasing \(old.route.heldNoteCount) held notes")
            }
            runner.release(old)
        }
        let running = config.realtime
        if new.realtime != running {
            // The OSC thread keeps running through a reload, and memory stays locked: a change
            // half applied would show one thing and do another.
            log.warning("realtime: the new settings (\(new.realtime.summary)) take effect when aseqosc restarts")
        }
        if new.clientName != config.clientName {
            do {
                try session.client.rename(new.clientName)
            } catch {
                log.warning("cannot rename the ALSA client: \(error)")
            }
        }
        for note in new.retiredKeys where !config.retiredKeys.contains(note) { log.warning(note) }
        runner.replaceRoutes(built.routes)
        followServices(built.routes, new)
        // With the setting that runs (a change of `realtime` waits for a restart), for the new
        // destinations.
        try? placeSendingThreads(built.routes, choice: running.cpu)
        try reloadOSCInput(from: config, to: new)
        lock.withLock { _ in
            config = new
            // What runs, so that each later reload still says a change is pending.
            config.realtime = running
            routesForStatus = built.routes
            oscInputForStatus = oscInput
        }
        showValues(new)
        logDestinations()
    }

    /// Stops reading once what was read is sent, sends a note-off for every note still held,
    /// and flushes: after this returns, nothing is left sounding.
    func stop() {
        if let oscInput { stopOSCInput(oscInput) }
        input.pause()
        runner.releaseAllNotes()
        // Over TCP the note-offs just queued go out on the links' threads: wait for them.
        for route in runner.routes { route.stopLinks() }
    }

    /// Ports for the inputs of `config`, then a runtime per route: the old one where the route,
    /// its inputs' port numbers and its destinations' addresses are unchanged.
    private func buildRoutes(_ config: BridgeConfig, reusing old: [RouteRuntime]) throws(BridgeError)
        -> (routes: [RouteRuntime], ports: [UInt8])
    {
        let ports: [UInt8]
        do {
            ports = try input.apply(config.inputs)
        } catch {
            throw .alsa(error)
        }
        var portNames = [String](repeating: "", count: Int(ports.max() ?? 0) + 1)
        for (index, port) in ports.enumerated() { portNames[Int(port)] = config.inputs[index].name }
        var routes: [RouteRuntime] = []
        var available = old
        for route in config.routes {
            let inputPorts = route.inputs.map { ports[$0] }
            if let index = available.firstIndex(where: { $0.config == route && $0.inputPorts == inputPorts }) {
                routes.append(try available.remove(at: index).refreshed())
            } else {
                routes.append(try makeRoute(route, configInputPorts: ports, portNames: portNames))
            }
        }
        return (routes, ports)
    }

    /// The runtime of `config`: its pipeline route and the parts its destinations need, each
    /// built here and handed in.
    private func makeRoute(
        _ config: RouteConfig, configInputPorts: [UInt8], portNames: [String]
    ) throws(BridgeError) -> RouteRuntime {
        var builder = RouteBuilder(inputPorts: configInputPorts)
        let route = builder.build(config)
        let inputPorts = config.inputs.map { configInputPorts[$0] }
        let parts = try RouteParts(
            destinations: builder.destinations, inputPorts: inputPorts, portNames: portNames, sysexStore: sysexStore,
            realtime: realtime, replaySignal: runner.replaySignal, tap: input.tap)
        return RouteRuntime(config: config, inputPorts: inputPorts, route: route, parts: parts)
    }

    /// Hands the routes' service targets to the follower, made when the first one appears.
    private func followServices(_ routes: [RouteRuntime], _ config: BridgeConfig) {
        // The TouchOSC Bridge's destination follows its client, which the OSC input learns.
        let all = routes.flatMap(\.serviceTargets)
        let isClient = { (target: ServiceTarget) in target.type == TouchOSCBridgeConfig.clientType }
        touchOSCClient.follow(
            all.filter(isClient), replyPort: UInt16(truncatingIfNeeded: config.touchOSCBridge?.replyPort ?? 0))
        let targets = all.filter { !isClient($0) }
        if follower == nil && !targets.isEmpty {
            let log = log
            do {
                follower = try ServiceFollower { isError, message in
                    if isError { log.error(message) } else { log.notice(message) }
                }
            } catch {
                log.warning("service destinations: \(error); they wait, their packets dropped and counted")
            }
        }
        follower?.follow(targets)
    }

    private func logDestinations() {
        for runtime in runner.routes {
            for destination in runtime.resolved {
                if let service = destination.destination.service {
                    let over = destination.destination.tcp == nil ? "UDP" : "TCP"
                    log.info("route '\(runtime.config.name)' -> service \(service) over \(over), wherever it is")
                    continue
                }
                let scheme = destination.destination.tcp.map {
                    "osc.tcp://\(destination) (\($0.framing == .slip ? "SLIP" : "length-prefixed"))"
                }
                log.info("route '\(runtime.config.name)' -> \(scheme ?? "osc.udp://\(destination)")")
            }
        }
    }

    /// Input thread loop passes, for the watchdog: it pings only while this moves.
    var inputProgress: UInt64 { input.progress.load(ordering: .relaxed) }

    /// A one-line status for systemd's `STATUS=`.
    var statusLine: String {
        let bindings = session.bindings.snapshot
        let bound = bindings.filter { !$0.connected.isEmpty }.count
        return "\(bound)/\(bindings.count) bindings, \(runner.eventsIn.load(ordering: .relaxed)) events, "
            + "\(input.reader.overruns) overruns"
    }

    /// Every OSC destination of every route in `config`, branches included.
    static func destinations(of config: BridgeConfig) -> [DestinationConfig] {
        func collect(_ chain: ChainConfig, into found: inout [DestinationConfig]) {
            found += chain.destinations
            for branch in chain.branches { collect(branch.chain, into: &found) }
        }
        var found: [DestinationConfig] = []
        for route in config.routes { collect(route.chain, into: &found) }
        return found
    }
}
