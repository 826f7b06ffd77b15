import BridgeSession
import Config
import Endpoints
import EventTap
import MIDI
import OSCTransport
import Pipeline
import Platform
import Storage
import ValueStore

/// One configured route as it runs: the pipeline's route (operators, held notes), and the parts
/// its destinations need: how events leave (``RouteSending``), what they were last sent and
/// their replays (``DestinationReplays``), note recovery (``DestinationRecovery``). A reload
/// keeps a route whose config did not change (with its held notes) and releases the notes of
/// one that did.
package final class RouteRuntime: @unchecked Sendable {
    // @unchecked Sendable: built on the starting thread, then used only by the input thread
    // (or by the reloading thread while the input thread is paused).

    /// The route as configured.
    package let config: RouteConfig
    /// The ALSA port numbers of the route's inputs, part of its identity across reloads.
    package let inputPorts: [UInt8]
    /// The pipeline route: operators and held notes, kept across reloads while the config stays.
    package let route: Route
    package let destinations: [DestinationConfig]
    // `let`s, not `var`s: the input thread reads them per event, and a class `var` would pay a
    // dynamic exclusivity check each time. A reload that re-resolves to new addresses makes a
    // new runtime around the same route and parts instead (`refreshed()`).
    package let sending: RouteSending
    package let replays: DestinationReplays
    /// Nil when no destination has recovery: the per-output check of a route without any.
    package let recovery: DestinationRecovery?
    let realtime: RealtimeScheduler?
    /// The runner's replay signal (nil in tests without one).
    let replaySignal: ReplaySignal?

    /// The runtime of `route` (built from `config`, read by `inputPorts`) for `destinations`,
    /// with its parts; the parts are the bridge's to build (``RouteParts``).
    package init(config: RouteConfig, inputPorts: [UInt8], route: Route, parts: RouteParts) {
        self.config = config
        self.inputPorts = inputPorts
        self.route = route
        destinations = parts.destinations
        sending = parts.sending
        replays = parts.replays
        recovery = parts.recovery
        realtime = parts.realtime
        replaySignal = parts.replaySignal
        sending.warmUp(route.chain)
        replays.observeTriggers(of: sending, signal: replaySignal)
    }

    /// A runtime for `config` with parts made as the bridge makes them (``RouteParts``).
    convenience init(
        config: RouteConfig, configInputPorts: [UInt8], portNames: [String], sysexStore: SysExStore,
        realtime: RealtimeScheduler? = nil, replaySignal: ReplaySignal? = nil, tap: EventTap? = nil
    ) throws(BridgeError) {
        var builder = RouteBuilder(inputPorts: configInputPorts)
        let route = builder.build(config)
        let inputPorts = config.inputs.map { configInputPorts[$0] }
        try self.init(
            config: config, inputPorts: inputPorts, route: route,
            parts: RouteParts(
                destinations: builder.destinations, inputPorts: inputPorts, portNames: portNames,
                sysexStore: sysexStore, realtime: realtime, replaySignal: replaySignal, tap: tap))
    }

    /// Resolves the destinations' names again: this runtime if every address is the same, else
    /// a new one with new sockets around the same route and parts (its held notes stay).
    package func refreshed() throws(BridgeError) -> RouteRuntime {
        let now = try RouteSending.resolve(destinations)
        guard now != sending.resolved else { return self }
        var parts = RouteParts(keeping: self)
        parts.sending = try sending.resolvedAgain(now, destinations: destinations, realtime: realtime)
        return RouteRuntime(config: config, inputPorts: inputPorts, route: route, parts: parts)
    }

    /// The addresses its destinations resolved to, by destination index.
    package var resolved: [ResolvedOSCDestination] { sending.resolved }

    /// Where the destinations named by service are, for a ``ServiceFollower`` to move.
    package var serviceTargets: [ServiceTarget] { sending.sender.serviceTargets.compactMap { $0 } }

    /// Stops the route's TCP links once they have written what is queued (see
    /// ``OSCSender/stopLinks()``): after ``releaseAll(packet:)`` at a stop.
    package func stopLinks() { sending.sender.stopLinks() }

    // MARK: The input thread

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

    /// Keeps `event` as `destination`'s last value, then formats and queues it; false if the
    /// scheme does not send this kind (or it did not fit).
    @inline(__always)
    @discardableResult
    func send(_ event: MIDIEvent, to destination: Int, packet: UnsafeMutableRawBufferPointer) -> Bool {
        replays.record(event, to: destination)
        if let recovery { return recovery.send(event, to: destination, through: sending, packet: packet) }
        return sending.send(event, to: destination, packet: packet)
    }

    /// Sends what the route has queued.
    @inline(__always)
    func flush() { sending.flush() }

    /// Sends a note-off for every note this route holds, to its own destinations, at once.
    func releaseAll(packet: UnsafeMutableRawBufferPointer) {
        route.releaseAll { event, destination in
            send(event, to: destination, packet: packet)
        }
        recovery?.announceHeld(through: sending)
        flush()
    }

    /// When a destination's recovery is due next (monotonic ns), `.max` if none is.
    var recoveryDue: UInt64 { recovery?.due ?? .max }

    /// Sends what recovery has due at `now` to the route's destinations, and reads what their
    /// receivers sent back.
    func sendDueRecovery(now: UInt64, packet: UnsafeMutableRawBufferPointer) {
        recovery?.sendDue(now: now, through: sending, replays: replays, signal: replaySignal, packet: packet)
    }

    /// Asks for `destination`'s last values to be sent again (any thread; the caller then wakes
    /// the input thread). Nothing happens for a destination without `sync`.
    package func wantReplay(_ destination: Int) { replays.want(destination) }

    /// The destinations a `/aseqosc/sync` asks for that have `sync: ["request"]`.
    func destinations(for request: SyncRequest) -> [Int] {
        replays.destinations(for: request, route: config.name, sending: sending)
    }
}

/// What a ``RouteRuntime`` needs beside its route: the parts the bridge builds for its
/// destinations and hands in, kept by a runtime made again around the same route.
package struct RouteParts {
    var destinations: [DestinationConfig]
    var sending: RouteSending
    var replays: DestinationReplays
    package var recovery: DestinationRecovery?
    var realtime: RealtimeScheduler?
    var replaySignal: ReplaySignal?

    /// The parts for `destinations`, fed by `inputPorts` (named by `portNames`): formatters,
    /// sockets and links (whose threads take `realtime`'s scheduling), stores and replays
    /// (which `replaySignal` wakes the input thread for), recovery; what they send is copied
    /// to `tap` while a page watches.
    package init(
        destinations: [DestinationConfig], inputPorts: [UInt8], portNames: [String], sysexStore: SysExStore,
        realtime: RealtimeScheduler?, replaySignal: ReplaySignal?, tap: EventTap?
    ) throws(BridgeError) {
        self.destinations = destinations
        sending = try RouteSending(
            destinations: destinations, portNames: portNames, sysexStore: sysexStore, realtime: realtime, tap: tap)
        replays = DestinationReplays(destinations: destinations, inputPorts: inputPorts)
        recovery = DestinationRecovery(destinations: destinations)
        self.realtime = realtime
        self.replaySignal = replaySignal
    }

    /// The parts `runtime` runs with.
    package init(keeping runtime: RouteRuntime) {
        destinations = runtime.destinations
        sending = runtime.sending
        replays = runtime.replays
        recovery = runtime.recovery
        realtime = runtime.realtime
        replaySignal = runtime.replaySignal
    }
}
