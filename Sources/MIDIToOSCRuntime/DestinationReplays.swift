import Config
import Endpoints
import MIDI
import OSCTransport
import ValueStore

/// What a route's destinations were last sent of every controller, program, bend and pressure,
/// and their replays (`sync`, docs/CONFIG.md "Replay"): asked for when a TCP destination
/// connects again, a service appears, an `/aseqosc/sync` names it or its recovery receiver hears
/// it anew; run on the input thread after the live events, ``Replays/budget`` values a turn, to
/// a TCP destination only while its link is connected with room to spare.
///
/// A store is kept for a destination with `sync` and for one whose addresses OSCQuery shows
/// values of (``showsValues(_:)``); it lives as long as the route, across re-resolves and
/// reloads that keep it.
package final class DestinationReplays: @unchecked Sendable {
    // @unchecked Sendable: the stores' writer and the replays' owner is the input thread (or
    // the reloading thread while it is paused); other threads only ask (``want(_:)``).

    private let destinations: [DestinationConfig]
    /// By destination index; nil for a destination that keeps nothing.
    package let stores: [LastValueStore?]
    /// Whether any destination keeps its values: the per-output check of a route without any.
    let hasStores: Bool
    /// Whether any destination has `sync`: the per-turn check of a route without replays.
    let hasSync: Bool
    private let replays: Replays<StoreReplayCursor>

    /// The stores and replays of `destinations`, fed by the route's input ports `inputPorts`.
    package init(destinations: [DestinationConfig], inputPorts: [UInt8]) {
        self.destinations = destinations
        let ports = inputPorts.map { UInt16($0) }
        stores = destinations.map { $0.sync.isEmpty && !Self.showsValues($0) ? nil : LastValueStore(ports: ports) }
        hasStores = stores.contains { $0 != nil }
        hasSync = destinations.contains { !$0.sync.isEmpty }
        replays = Replays(targets: destinations.count)
    }

    /// Whether OSCQuery shows the values `destination` is sent: its addresses are in the
    /// namespace (the OSC input's mapping rules, the TouchOSC Bridge's `/midi`).
    package static func showsValues(_ destination: DestinationConfig) -> Bool {
        !destination.mappings.isEmpty || destination.scheme == "touchosc"
    }

    /// Keeps what `event` sets, sent to `destination`.
    @inline(__always)
    func record(_ event: MIDIEvent, to destination: Int) {
        if hasStores, let store = stores[destination] { store.record(event) }
    }

    /// Asks for `destination`'s replay from the top at the input thread's next turn (any
    /// thread; the caller then wakes that thread). Nothing happens for one without `sync`.
    func want(_ destination: Int) {
        guard destination < destinations.count, !destinations[destination].sync.isEmpty else { return }
        replays.want(destination)
    }

    /// An `/aseqosc/sync` for `destination` at `now`: started unless it took one less than a
    /// second before; false: refused. On the input thread.
    package func request(_ destination: Int, now: UInt64) -> Bool {
        replays.request(destination, now: now)
    }

    /// Whether a replay is under way or asked for (the input thread's view).
    var hasWork: Bool { hasSync && replays.hasWork }

    /// Asks for a replay, and raises `signal`, whenever a destination of `sending` with `sync:
    /// ["reconnect"]` connects and one with `sync: ["appear"]` appears, moves or is heard anew.
    func observeTriggers(of sending: RouteSending, signal: ReplaySignal?) {
        guard let signal, hasSync else { return }
        for (index, destination) in destinations.enumerated() {
            if destination.sync.contains(.reconnect), let link = sending.sender.links[index] {
                link.observeConnections { [weak self] in
                    self?.want(index)
                    signal.raise()
                }
            }
            if destination.sync.contains(.appear), let target = sending.sender.serviceTargets[index] {
                target.observe { [weak self] in
                    guard target.current != nil else { return }
                    self?.want(index)
                    signal.raise()
                }
            }
        }
    }

    /// The destinations a `/aseqosc/sync` asks for that have `sync: ["request"]`: those at the
    /// sender's address (where `sending` sends them), or those the name picks (`route`, the
    /// route's name, picks all of its own).
    func destinations(for request: SyncRequest, route: String, sending: RouteSending) -> [Int] {
        destinations.indices.filter { index in
            guard destinations[index].sync.contains(.request) else { return false }
            switch request {
            case .from(let address):
                if let target = sending.sender.serviceTargets[index] { return target.current?.ip == address }
                return sending.resolved[index].address.ip == address
            case .named(let name):
                let destination = destinations[index]
                return name == route || name == destination.endpoint || name == destination.service?.name
                    || (destination.service == nil && name == "\(destination.host):\(destination.port)")
            }
        }
    }

    /// Starts the replays asked for (from the top again for one under way), and sends the next
    /// values of each under way through `sending`; returns whether one is still under way. On
    /// the input thread, after the turn's live events.
    func run(through sending: RouteSending, packet: UnsafeMutableRawBufferPointer) -> Bool {
        replays.run { destination, cursor in
            guard let store = stores[destination] else { return .abandoned }
            if let link = sending.sender.links[destination] {
                // Gone again: its next connection asks for a replay of its own.
                guard link.isConnected else { return .abandoned }
                guard link.hasRoomForReplay else { return .goesOn }
            }
            let finished = store.replay(&cursor, limit: Replays<StoreReplayCursor>.budget) { event in
                _ = sending.send(event, to: destination, packet: packet)
            }
            return finished ? .finished : .goesOn
        }
    }
}
