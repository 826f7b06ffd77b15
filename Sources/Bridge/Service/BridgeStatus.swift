import ALSASequencer
import Foundation
import OSCTransport
import Pipeline

/// What `aseqosc status` shows: bindings, routes and destinations with their counters, the
/// ring, drops and uptime. Encoded as JSON on the control socket.
public struct BridgeStatus: Codable, Sendable, Equatable {
    public struct Binding: Codable, Sendable, Equatable {
        /// Our port's name.
        public var port: String
        /// `in` (a source bound to our input) or `out` (our output bound to a destination).
        public var direction: String
        public var spec: String
        /// `client:port name` of each connected port; empty while waiting.
        public var connected: [String]
        public var waiting: String?
    }

    public struct Destination: Codable, Sendable, Equatable {
        public var address: String
        public var scheme: String
        public var packetsSent: Int
        public var bytesSent: Int
        /// Send errors by reason (connection refused, buffer full, ...).
        public var errors: [String: Int]
    }

    public struct Route: Codable, Sendable, Equatable {
        public var name: String
        public var eventsIn: Int
        public var passed: Int
        public var droppedByFilter: Int
        public var droppedOutOfRange: Int
        public var throttled: Int
        public var destinations: [Destination]
    }

    public var version: String
    public var client: String
    public var uptimeSeconds: Double
    public var bindings: [Binding]
    public var routes: [Route]
    public var eventsIn: Int
    public var ringCapacity: Int
    public var ringHighWater: Int
    public var ringDrops: Int
    public var inputOverruns: Int
    public var sysexDropped: Int
    public var unsentEvents: Int
    /// The OSC -> MIDI side's counters, when it runs.
    public var oscInput: String?

    /// The text `aseqosc status` prints for people.
    public var text: String {
        var lines = [
            "aseqosc \(version), client '\(client)', up \(Self.duration(uptimeSeconds))",
            "events in \(eventsIn); ring \(ringHighWater)/\(ringCapacity) high water, \(ringDrops) dropped; "
                + "input overruns \(inputOverruns); SysEx dropped \(sysexDropped); not sent by scheme \(unsentEvents)",
            "bindings:",
        ]
        for binding in bindings {
            let arrow = binding.direction == "in" ? "<-" : "->"
            let target =
                binding.connected.isEmpty
                ? "waiting (\(binding.waiting ?? "no port"))" : binding.connected.joined(separator: ", ")
            lines.append("  \(binding.port) \(arrow) '\(binding.spec)': \(target)")
        }
        if let oscInput { lines.append("osc input: \(oscInput)") }
        lines.append("routes:")
        for route in routes {
            lines.append(
                "  \(route.name): in \(route.eventsIn), passed \(route.passed), filtered \(route.droppedByFilter), "
                    + "out of range \(route.droppedOutOfRange), throttled \(route.throttled)")
            for destination in route.destinations {
                let errors =
                    destination.errors.isEmpty
                    ? "no errors"
                    : destination.errors.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(
                        separator: ", ")
                lines.append(
                    "    -> \(destination.address) (\(destination.scheme)): \(destination.packetsSent) packets, "
                        + "\(destination.bytesSent) bytes, \(errors)")
            }
        }
        return lines.joined(separator: "\n")
    }

    static func duration(_ seconds: Double) -> String {
        let whole = Int(seconds)
        return whole >= 3600
            ? "\(whole / 3600)h \(whole / 60 % 60)m" : whole >= 60 ? "\(whole / 60)m \(whole % 60)s" : "\(whole)s"
    }
}

extension Bridge {
    /// A consistent-enough picture of the running bridge, from counters other threads update.
    public func status(version: String = "") -> BridgeStatus {
        let routes = routeSnapshot
        let bindings = input.bindings.snapshot.map { binding in
            BridgeStatus.Binding(
                port: input.portName(binding.ourPort) ?? "port \(binding.ourPort)",
                direction: binding.direction == .source ? "in" : "out", spec: binding.spec.description,
                connected: binding.connected.map { "\($0.address) \($0.clientName):\($0.portName)" },
                waiting: binding.connected.isEmpty ? binding.waitingReason : nil)
        }
        return BridgeStatus(
            version: version, client: currentConfig.clientName, uptimeSeconds: Date().timeIntervalSince(startTime),
            bindings: bindings,
            routes: routes.map { runtime in
                let counts = runtime.route.counters.snapshot
                return BridgeStatus.Route(
                    name: runtime.config.name, eventsIn: counts.eventsIn, passed: counts.passed,
                    droppedByFilter: counts.droppedByFilter, droppedOutOfRange: counts.droppedOutOfRange,
                    throttled: counts.throttled,
                    destinations: runtime.resolved.indices.map { index in
                        let counters = runtime.sender.statistics.counters(for: index)
                        return BridgeStatus.Destination(
                            address: runtime.resolved[index].destination.description,
                            scheme: runtime.destinations[index].sends, packetsSent: counters.packetsSent,
                            bytesSent: counters.bytesSent,
                            errors: Dictionary(
                                uniqueKeysWithValues: counters.errors.filter { $0.value > 0 }.map {
                                    ("\($0.key)", $0.value)
                                }))
                    })
            },
            eventsIn: worker.eventsIn.load(ordering: .relaxed), ringCapacity: ring.capacity,
            ringHighWater: ring.highWater, ringDrops: ring.drops, inputOverruns: input.reader.overruns,
            sysexDropped: sysexStore.droppedCount, unsentEvents: worker.unformatted.load(ordering: .relaxed),
            oscInput: oscInputSnapshot?.summary)
    }
}
