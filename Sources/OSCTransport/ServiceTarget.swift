import Synchronization

/// Where a destination named by its DNS-SD service is now: the address a browser last resolved
/// the service to, or nil while it is not on the network. The browser's thread changes it; the
/// thread that sends reads it only after ``generation`` moved, so following a service costs a
/// send one atomic load.
package final class ServiceTarget: Sendable {
    /// The instance name (`TouchOSC on iPad`).
    package let name: String
    /// `_osc._udp` or `_osc._tcp`.
    package let type: String
    private let address = Mutex<SocketAddress?>(nil)
    private let changes = Atomic<UInt64>(0)
    private let observers = Mutex<[@Sendable () -> Void]>([])

    /// A target for the service `name` of `type`, not found yet.
    package init(name: String, type: String) {
        self.name = name
        self.type = type
    }

    /// Moves the target to `address` (nil: the service is gone); nothing happens when it is
    /// where it was.
    package func update(_ new: SocketAddress?) {
        let changed = address.withLock { current in
            guard current != new else { return false }
            current = new
            // Under the lock, so that ``snapshot`` gives an address with its own generation.
            // Releasing: a reader that sees the new count sees the address stored before it.
            changes.add(1, ordering: .releasing)
            return true
        }
        guard changed else { return }
        for observer in observers.withLock({ $0 }) { observer() }
    }

    /// Tells the observers the receiver at the same address is new (a client that started
    /// again): what a move to it would have told them, without moving.
    func renew() {
        guard current != nil else { return }
        for observer in observers.withLock({ $0 }) { observer() }
    }

    /// Calls `body` after each move and each ``renew()`` (on the thread that moved it): a TCP
    /// link's wake-up, so it leaves a connection to the old address at once; a replay to a
    /// receiver that appeared.
    package func observe(_ body: @escaping @Sendable () -> Void) {
        observers.withLock { $0.append(body) }
    }

    /// Counts the moves; it changes after every ``update(_:)`` that moved the target.
    @inline(__always)
    var generation: UInt64 { changes.load(ordering: .acquiring) }

    /// The address now, nil while the service is absent.
    package var current: SocketAddress? { address.withLock { $0 } }

    /// The address now and the ``generation`` it belongs to, read together.
    var snapshot: (address: SocketAddress?, generation: UInt64) {
        address.withLock { ($0, changes.load(ordering: .relaxed)) }
    }

    /// `'NAME' (TYPE)`.
    var label: String { "'\(name)' (\(type))" }
}
