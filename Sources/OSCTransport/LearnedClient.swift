import Endpoints
import Glibc
import Synchronization

/// The TouchOSC Bridge's client: the IP address that last sent to the bridge's input, which its
/// destinations (``ServiceTarget``s, the path DNS-SD services take) follow on ``replyPort``.
/// The OSC thread calls ``heard(_:)`` for every packet; only a new address costs more than a
/// compare.
public final class LearnedClient: Sendable {
    /// The port the client is sent to (touchosc2midi's PORT + 1, 12102), whatever it sent from.
    private let replyPort = Atomic<UInt16>(0)
    private let targets = Mutex<[ServiceTarget]>([])
    private let address = Mutex<SocketAddress?>(nil)
    private let seen = Atomic<Int>(0)
    private let observers = Mutex<[@Sendable (SocketAddress) -> Void]>([])
    /// The last client's IP address; read and written only by the thread that calls ``heard(_:)``.
    nonisolated(unsafe) private var last: IPAddress?

    /// A client not heard from yet; ``follow(_:replyPort:)`` gives it its targets.
    public init() {}

    /// Notes the sender of a packet (on the OSC thread): a new IP address becomes the client,
    /// its targets move to it, and the observers are called.
    @inline(__always)
    public func heard(_ sender: PacketSource) {
        guard sender.address != last else { return }
        newClient(sender.address)
    }

    private func newClient(_ ip: IPAddress) {
        last = ip
        let new = SocketAddress(ip, port: replyPort.load(ordering: .relaxed))
        address.withLock { $0 = new }
        seen.add(1, ordering: .relaxed)
        for target in targets.withLock({ $0 }) { target.update(new) }
        for observer in observers.withLock({ $0 }) { observer(new) }
    }

    /// Makes `new` the targets that follow the client, sent to on `port` (after the routes were
    /// built or rebuilt, before the OSC thread runs), and moves them to the client already known.
    public func follow(_ new: [ServiceTarget], replyPort port: UInt16) {
        replyPort.store(port, ordering: .relaxed)
        targets.withLock { $0 = new }
        let current = address.withLock { current in
            if let ip = current?.ip { current = SocketAddress(ip, port: port) }
            return current
        }
        if let current {
            for target in new { target.update(current) }
        }
    }

    /// Calls `body` with the client's address (IP and reply port) each time a new client
    /// appears, on the OSC thread, after the targets moved: the hook for sending it the last
    /// values again.
    public func observe(_ body: @escaping @Sendable (SocketAddress) -> Void) {
        observers.withLock { $0.append(body) }
    }

    /// Where the client is sent to now; nil until one has sent a packet.
    public var current: SocketAddress? { address.withLock { $0 } }

    /// How many times the client changed (the first client counts).
    public var clientsSeen: Int { seen.load(ordering: .relaxed) }
}
