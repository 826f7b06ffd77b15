import Endpoints
import Glibc
import Synchronization

/// The TouchOSC Bridge's client: the IP address that last sent to the bridge's input, which its
/// destinations (``ServiceTarget``s, the path DNS-SD services take) follow on ``replyPort``.
/// The OSC thread calls ``heard(_:now:)`` for every packet; only a new client costs more than
/// two compares.
///
/// A client is its IP address and source port. TouchOSC (mk1) sends from a port its system
/// picks when the app starts, and says nothing when it connects: a new source port from the
/// same address is the same tablet with the app started again, and a client back after
/// ``silenceLimit`` of silence may have been restarted on the same port, or slept and lost its
/// controls' state. Either way it shows its layout's defaults, so its targets are renewed
/// (``ServiceTarget/renew()``), which sends it the last values again; replies still go to
/// the address on ``replyPort``, whatever port it sent from.
package final class LearnedClient: Sendable {
    /// How long a client may be silent before its next packet counts as a client heard anew.
    static let silenceLimit: UInt64 = 30_000_000_000

    /// The port the client is sent to (touchosc2midi's PORT + 1, 12102), whatever it sent from.
    private let replyPort = Atomic<UInt16>(0)
    private let targets = Mutex<[ServiceTarget]>([])
    private let address = Mutex<SocketAddress?>(nil)
    private let seen = Atomic<Int>(0)
    private let renewed = Atomic<Int>(0)
    private let observers = Mutex<[@Sendable (SocketAddress) -> Void]>([])
    /// The last client and when it was last heard; read and written only by the thread that
    /// calls ``heard(_:now:)``.
    nonisolated(unsafe) private var last: PacketSource?
    nonisolated(unsafe) private var lastHeard: UInt64 = 0

    /// A client not heard from yet; ``follow(_:replyPort:)`` gives it its targets.
    package init() {}

    /// Notes the sender of a packet received at `now` (on the OSC thread): a new IP address
    /// becomes the client, and its targets move to it; a new source port from the same address,
    /// or a packet after ``silenceLimit`` of silence, renews them. The observers are called
    /// either way.
    @inline(__always)
    package func heard(_ sender: PacketSource, now: UInt64) {
        defer { lastHeard = now }
        guard sender != last || now &- lastHeard >= Self.silenceLimit else { return }
        newClient(sender)
    }

    private func newClient(_ sender: PacketSource) {
        let moved = sender.address != last?.address
        last = sender
        let new = SocketAddress(sender.address, port: replyPort.load(ordering: .relaxed))
        address.withLock { $0 = new }
        if moved {
            seen.add(1, ordering: .relaxed)
            for target in targets.withLock({ $0 }) { target.update(new) }
        } else {
            renewed.add(1, ordering: .relaxed)
            for target in targets.withLock({ $0 }) { target.renew() }
        }
        for observer in observers.withLock({ $0 }) { observer(new) }
    }

    /// Makes `new` the targets that follow the client, sent to on `port` (after the routes were
    /// built or rebuilt, before the OSC thread runs), and moves them to the client already known.
    package func follow(_ new: [ServiceTarget], replyPort port: UInt16) {
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

    /// Calls `body` with the client's address (IP and reply port) each time a client appears
    /// or is heard anew, on the OSC thread, after the targets moved or were renewed.
    func observe(_ body: @escaping @Sendable (SocketAddress) -> Void) {
        observers.withLock { $0.append(body) }
    }

    /// Where the client is sent to now; nil until one has sent a packet.
    package var current: SocketAddress? { address.withLock { $0 } }

    /// How many times the client changed address (the first client counts).
    package var clientsSeen: Int { seen.load(ordering: .relaxed) }

    /// How many times the client at the same address was heard anew: from a new source port
    /// (the app started again), or after ``silenceLimit`` of silence.
    package var clientsRenewed: Int { renewed.load(ordering: .relaxed) }
}
