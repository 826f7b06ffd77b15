import Endpoints
import Glibc
import Synchronization

/// Keeps our ports connected to the ports that users named by spec, across unplugging,
/// replugging and client numbers that change: each binding is re-resolved by its spec (never
/// by a remembered client number) whenever the kernel announces a client or port change.
package final class PortBindings: @unchecked Sendable {
    // @unchecked Sendable: used only by the thread that reads announcements (the input
    // thread), after being set up on the starting thread before that thread runs.

    /// One spec bound to one of our ports, and what it is connected to now.
    package struct Binding: Sendable {
        package var spec: PortSpec
        /// Our port: an input port (the spec names sources) or an output port (destinations).
        package var ourPort: UInt8
        package var direction: PortSpec.Direction
        /// The ports the spec resolves to and that are connected now; empty while waiting.
        package var connected: [PortInfo]
        /// Why the spec resolves to nothing right now, for `status` and the log.
        package var waitingReason: String?
    }

    /// What changed for one binding in one ``reconcile()``, for the log.
    package struct Change: Sendable, CustomStringConvertible {
        package enum Kind: Sendable {
            case connected
            case lost
            case failed(ALSAError)
        }

        package var kind: Kind
        var spec: PortSpec
        var port: PortInfo
        /// The binding's direction: `.source` for one of our input ports, `.destination` for
        /// one of our output ports (one ``PortBindings`` keeps both).
        package var direction: PortSpec.Direction
        /// Our port the binding belongs to.
        package var ourPort: UInt8

        package init(_ kind: Kind, spec: PortSpec, port: PortInfo, direction: PortSpec.Direction, ourPort: UInt8) {
            self.kind = kind
            self.spec = spec
            self.port = port
            self.direction = direction
            self.ourPort = ourPort
        }

        package var description: String {
            switch kind {
            case .connected: "'\(spec)' bound to \(port)"
            case .lost: "'\(spec)' lost \(port), waiting for it to return"
            case .failed(let error): "'\(spec)' could not connect \(port): \(error)"
            }
        }

        /// The change as a log line, named after the side of the bridge it belongs to:
        /// `input: 'KeyStep' bound to ...` or `output: 'Synth' lost ...`.
        package var logLine: String {
            "\(direction == .source ? "input" : "output"): \(description)"
        }
    }

    private let client: SequencerClient
    package private(set) var bindings: [Binding] = [] {
        didSet { published.withLock { $0 = bindings } }
    }
    private let published = Mutex<[Binding]>([])

    /// A copy of the bindings for other threads (status), as of the last change.
    package var snapshot: [Binding] { published.withLock { $0 } }

    package init(client: SequencerClient) {
        self.client = client
    }

    /// Adds a binding; it connects at the next ``reconcile()``.
    package func bind(_ spec: PortSpec, to ourPort: UInt8, direction: PortSpec.Direction) {
        bindings.append(
            Binding(spec: spec, ourPort: ourPort, direction: direction, connected: [], waitingReason: nil))
    }

    /// Removes every binding of `ourPort`, disconnecting what it had connected.
    package func unbind(ourPort: UInt8) {
        for binding in bindings where binding.ourPort == ourPort {
            for port in binding.connected { disconnect(port.address, binding) }
        }
        bindings.removeAll { $0.ourPort == ourPort }
    }

    /// Resolves every spec against the ports that exist now, connects what is new and forgets
    /// what is gone (the kernel already dropped those subscriptions). Returns what changed.
    @discardableResult
    package func reconcile() -> [Change] {
        guard let ports = try? client.ports() else { return [] }
        var changes: [Change] = []
        for index in bindings.indices {
            let binding = bindings[index]
            let wanted: [PortInfo]
            do {
                wanted = try binding.spec.resolve(
                    in: ports, direction: binding.direction, excludingClient: client.clientID)
                bindings[index].waitingReason = nil
            } catch {
                wanted = []
                bindings[index].waitingReason = error.description
            }
            let wantedAddresses = Set(wanted.map(\.address))
            for port in binding.connected where !wantedAddresses.contains(port.address) {
                // Still present but no longer matching (renamed): undo our subscription.
                if ports.contains(where: { $0.address == port.address }) { disconnect(port.address, binding) }
                changes.append(
                    Change(
                        .lost, spec: binding.spec, port: port, direction: binding.direction, ourPort: binding.ourPort))
            }
            var nowConnected = binding.connected.filter { wantedAddresses.contains($0.address) }
            for port in wanted where !nowConnected.contains(where: { $0.address == port.address }) {
                do {
                    try connect(port.address, binding)
                    nowConnected.append(port)
                    changes.append(
                        Change(
                            .connected, spec: binding.spec, port: port, direction: binding.direction,
                            ourPort: binding.ourPort))
                } catch {
                    changes.append(
                        Change(
                            .failed(error), spec: binding.spec, port: port, direction: binding.direction,
                            ourPort: binding.ourPort))
                }
            }
            bindings[index].connected = nowConnected
        }
        return changes
    }

    /// Whether an announcement can change what a spec resolves to.
    package static func affectsBindings(_ announcement: Announcement) -> Bool {
        switch announcement {
        case .portStarted, .portExited, .portChanged, .clientExited, .clientChanged: true
        case .clientStarted: false  // its ports are announced one by one right after
        }
    }

    private func connect(_ address: PortAddress, _ binding: Binding) throws(ALSAError) {
        do {
            switch binding.direction {
            case .source: try client.connect(from: address, to: binding.ourPort)
            case .destination: try client.connect(from: binding.ourPort, to: address)
            }
        } catch  where error.code == -EBUSY {
            // EBUSY: already subscribed (by us earlier, or by aconnect): that is what we want.
        }
    }

    private func disconnect(_ address: PortAddress, _ binding: Binding) {
        switch binding.direction {
        case .source: try? client.disconnect(from: address, to: binding.ourPort)
        case .destination: try? client.disconnect(from: binding.ourPort, to: address)
        }
    }
}
