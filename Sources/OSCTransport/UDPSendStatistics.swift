import Glibc
import Platform
import Storage
import Synchronization

/// Why a packet to one destination was not sent.
package enum UDPSendFailure: Int, Sendable, CaseIterable, CustomStringConvertible {
    /// `ECONNREFUSED`: an earlier packet came back as ICMP port unreachable; nothing listens there.
    case connectionRefused
    /// `ENETUNREACH`: no route to the network.
    case networkUnreachable
    /// `EHOSTUNREACH`: no route to the host (or no ARP/ND answer).
    case hostUnreachable
    /// `EAGAIN`/`ENOBUFS`: the socket's send buffer is full; the packet is dropped, not waited for.
    case bufferFull
    /// `EMSGSIZE`: larger than a UDP datagram may be.
    case messageTooLong
    /// `EACCES`/`EPERM`: refused locally (broadcast without the flag, a firewall rule).
    case permissionDenied
    /// Any other `errno`.
    case other
    /// A destination by service name whose service is not on the network (not found yet, or
    /// gone): dropped until it is back.
    case serviceAbsent

    package var description: String {
        switch self {
        case .connectionRefused: "connection_refused"
        case .networkUnreachable: "network_unreachable"
        case .hostUnreachable: "host_unreachable"
        case .bufferFull: "buffer_full"
        case .messageTooLong: "message_too_long"
        case .permissionDenied: "permission_denied"
        case .other: "other"
        case .serviceAbsent: "service_absent"
        }
    }

    /// The reason for an error from `send`/`sendmmsg`.
    package init(_ error: Errno) {
        switch error.code {
        case ECONNREFUSED: self = .connectionRefused
        case ENETUNREACH, ENETDOWN: self = .networkUnreachable
        case EHOSTUNREACH, EHOSTDOWN: self = .hostUnreachable
        case EAGAIN, ENOBUFS: self = .bufferFull
        case EMSGSIZE: self = .messageTooLong
        case EACCES, EPERM: self = .permissionDenied
        default: self = .other
        }
    }
}

/// One destination's counters at one moment.
package struct UDPDestinationCounters: Hashable, Sendable {
    package var packetsSent: Int
    package var bytesSent: Int
    /// Packets not sent, by reason; every reason is present.
    package var errors: [UDPSendFailure: Int]
    /// All packets not sent.
    package var totalErrors: Int { errors.values.reduce(0, +) }
    /// Whether anything listens there, as the refusals tell.
    package var reach: UDPReach
}

/// Whether a UDP destination's datagrams reach a receiver, as far as the sender can tell: a
/// datagram to a port nobody listens on comes back as ICMP "port unreachable", which Linux
/// reports as `ECONNREFUSED` on the socket's next send. Nothing comes back from a receiver
/// that takes them, so "sending" means "not refused".
package enum UDPReach: Hashable, Sendable {
    /// Not refused (or never sent to).
    case sending
    /// Refused since `since` (``MonotonicClock`` nanoseconds), the start of this run of
    /// refusals; `lastThrough` is when the last datagram known to have got through was sent,
    /// nil when none is known to have.
    case refused(since: UInt64, lastThrough: UInt64?)
}

/// Per-destination counters a ``OSCSender`` bumps and any thread may read.
///
/// Statistics only: every access is relaxed, as nothing else is published through them.
package final class UDPSendStatistics: Sendable {
    /// How many destinations are counted.
    let destinationCount: Int

    // Per destination: packets, bytes, system calls, one counter per UDPSendFailure, then
    // the reach: when the current run of refusals began (0: not refused) and when the last
    // datagram known to have got through before it was sent (0: none known).
    nonisolated(unsafe) private let counters: FixedBuffer<Atomic<Int>>
    private static let reachOffset = 3 + UDPSendFailure.allCases.count
    private static let stride = reachOffset + 2

    package init(destinationCount: Int) {
        self.destinationCount = destinationCount
        counters = FixedBuffer(count: max(destinationCount, 1) * Self.stride) { _ in Atomic(0) }
    }

    /// Packets handed to the kernel for `destination`.
    package func packetsSent(to destination: Int) -> Int { load(destination, 0) }
    /// Bytes handed to the kernel for `destination`.
    package func bytesSent(to destination: Int) -> Int { load(destination, 1) }
    /// Packets for `destination` not sent because of `reason`.
    package func errors(to destination: Int, reason: UDPSendFailure) -> Int { load(destination, 3 + reason.rawValue) }
    /// The `send` and `sendmmsg` calls made for `destination`: one per flush that had packets
    /// for it, unless a call was interrupted or stopped at a failed packet.
    package func sendCalls(to destination: Int) -> Int { load(destination, 2) }

    /// All of one destination's counters (allocates a dictionary: for metrics, not the hot path).
    package func counters(for destination: Int) -> UDPDestinationCounters {
        var errors: [UDPSendFailure: Int] = [:]
        for reason in UDPSendFailure.allCases { errors[reason] = self.errors(to: destination, reason: reason) }
        return UDPDestinationCounters(
            packetsSent: packetsSent(to: destination), bytesSent: bytesSent(to: destination), errors: errors,
            reach: reach(of: destination))
    }

    /// Whether `destination`'s datagrams are refused now.
    package func reach(of destination: Int) -> UDPReach {
        let since = load(destination, Self.reachOffset)
        guard since != 0 else { return .sending }
        let through = load(destination, Self.reachOffset + 1)
        return .refused(since: UInt64(since), lastThrough: through == 0 ? nil : UInt64(through))
    }

    /// Publishes the sender's view of `destination`'s reach (its thread only).
    func recordReach(_ destination: Int, refusedSince: UInt64, lastThrough: UInt64) {
        counters[destination * Self.stride + Self.reachOffset].store(Int(refusedSince), ordering: .relaxed)
        counters[destination * Self.stride + Self.reachOffset + 1].store(Int(lastThrough), ordering: .relaxed)
    }

    @inline(__always)
    func recordSent(_ destination: Int, bytes: Int, packets: Int = 1) {
        counters[destination * Self.stride].wrappingAdd(packets, ordering: .relaxed)
        counters[destination * Self.stride + 1].wrappingAdd(bytes, ordering: .relaxed)
    }

    @inline(__always)
    func recordFailure(_ destination: Int, _ reason: UDPSendFailure, count: Int = 1) {
        counters[destination * Self.stride + 3 + reason.rawValue].wrappingAdd(count, ordering: .relaxed)
    }

    @inline(__always)
    func recordSendCall(_ destination: Int) {
        counters[destination * Self.stride + 2].wrappingAdd(1, ordering: .relaxed)
    }

    private func load(_ destination: Int, _ offset: Int) -> Int {
        precondition(destination >= 0 && destination < destinationCount, "no destination \(destination)")
        return counters[destination * Self.stride + offset].load(ordering: .relaxed)
    }
}
