import CGNUCalls
import Endpoints
import Glibc
import OSC
import Platform
import Storage
import Synchronization

/// Counters of a ``TCPReceiver``, readable from any thread (relaxed: statistics only).
package final class TCPReceiveStatistics: Sendable {
    private let acceptedCount = Atomic<Int>(0)
    private let notAllowedCount = Atomic<Int>(0)
    private let tooManyCount = Atomic<Int>(0)
    private let closedCount = Atomic<Int>(0)
    private let openCount = Atomic<Int>(0)
    private let packetCount = Atomic<Int>(0)
    private let byteCount = Atomic<Int>(0)
    private let unknownFramingCount = Atomic<Int>(0)
    private let badLengthCount = Atomic<Int>(0)
    private let oversizedCount = Atomic<Int>(0)
    private let badEscapeCount = Atomic<Int>(0)
    private let truncatedCount = Atomic<Int>(0)
    private let evictedCount = Atomic<Int>(0)
    private let frameTimeoutCount = Atomic<Int>(0)

    /// Connections taken.
    package var accepted: Int { acceptedCount.load(ordering: .relaxed) }
    /// Connections closed at once because the peer is not in the allow-list.
    package var refusedNotAllowed: Int { notAllowedCount.load(ordering: .relaxed) }
    /// Connections closed at once because ``TCPReceiver/maxConnections`` were open and none
    /// of them had been idle long enough to give way.
    package var refusedTooMany: Int { tooManyCount.load(ordering: .relaxed) }
    /// Accepted connections that have ended: by the peer, for a framing error, evicted or
    /// timed out inside a frame.
    package var closed: Int { closedCount.load(ordering: .relaxed) }
    /// Idle connections closed to make room for a new client when every slot was taken
    /// (also counted in ``closed``).
    package var evictedIdle: Int { evictedCount.load(ordering: .relaxed) }
    /// Connections closed because a frame they had started did not arrive whole within
    /// ``TCPReceiver/frameTimeout`` (also counted in ``closed``).
    package var partialFrameTimeouts: Int { frameTimeoutCount.load(ordering: .relaxed) }
    /// Connections open now.
    package var open: Int { openCount.load(ordering: .relaxed) }
    /// Packets handed on.
    package var packets: Int { packetCount.load(ordering: .relaxed) }
    /// Their bytes (without framing).
    package var bytes: Int { byteCount.load(ordering: .relaxed) }
    /// Connections closed because their stream could not be read further, by reason.
    package var framingErrors: FramingErrors {
        FramingErrors(
            unknownFraming: unknownFramingCount.load(ordering: .relaxed),
            badLength: badLengthCount.load(ordering: .relaxed), oversized: oversizedCount.load(ordering: .relaxed),
            badEscape: badEscapeCount.load(ordering: .relaxed), truncated: truncatedCount.load(ordering: .relaxed))
    }

    /// Framing errors by ``OSCStreamError`` case.
    package struct FramingErrors: Hashable, Sendable {
        package var unknownFraming = 0
        package var badLength = 0
        package var oversized = 0
        package var badEscape = 0
        /// Connections that ended in the middle of a packet.
        package var truncated = 0

        package var total: Int { unknownFraming + badLength + oversized + badEscape + truncated }
    }

    func recordAccepted() {
        acceptedCount.add(1, ordering: .relaxed)
        openCount.add(1, ordering: .relaxed)
    }

    func recordRefused(notAllowed: Bool) {
        if notAllowed {
            notAllowedCount.add(1, ordering: .relaxed)
        } else {
            tooManyCount.add(1, ordering: .relaxed)
        }
    }

    func recordClosed(_ error: OSCStreamError?) {
        closedCount.add(1, ordering: .relaxed)
        openCount.subtract(1, ordering: .relaxed)
        switch error {
        case nil: break
        case .unknownFraming: unknownFramingCount.add(1, ordering: .relaxed)
        case .badLength: badLengthCount.add(1, ordering: .relaxed)
        case .oversized: oversizedCount.add(1, ordering: .relaxed)
        case .badEscape: badEscapeCount.add(1, ordering: .relaxed)
        case .truncated: truncatedCount.add(1, ordering: .relaxed)
        }
    }

    func recordEvicted() {
        evictedCount.add(1, ordering: .relaxed)
        recordClosed(nil)
    }

    func recordFrameTimeout() {
        frameTimeoutCount.add(1, ordering: .relaxed)
        recordClosed(nil)
    }

    func recordShutdown(open count: Int) {
        openCount.subtract(count, ordering: .relaxed)
    }

    func recordPackets(_ count: Int, bytes: Int) {
        guard count > 0 else { return }
        packetCount.add(count, ordering: .relaxed)
        byteCount.add(bytes, ordering: .relaxed)
    }
}

/// A client coming or going, for a log.
package enum TCPConnectionEvent: Sendable, CustomStringConvertible {
    case accepted(IPAddress)
    /// Reset at once: not in the allow-list, or (`notAllowed` false) every slot taken and none idle.
    case refused(IPAddress, notAllowed: Bool)
    /// Closed by the peer (`nil`), or by us because its stream broke its framing.
    case closed(IPAddress, OSCStreamError?)
    /// Closed by us, idle, to make room for a new client when every slot was taken.
    case evicted(IPAddress, idleSeconds: Double)
    /// Closed by us: a frame it had started was not complete within the frame timeout.
    case frameTimedOut(IPAddress, seconds: Double)

    package var description: String {
        switch self {
        case .accepted(let peer): "accepted a TCP connection from \(peer)"
        case .refused(let peer, let notAllowed):
            "refused a TCP connection from \(peer): \(notAllowed ? "not in the allow-list" : "too many connections")"
        case .closed(let peer, nil): "TCP connection from \(peer) closed"
        case .closed(let peer, let error?): "closed the TCP connection from \(peer): \(error)"
        case .evicted(let peer, let idle):
            "closed the TCP connection from \(peer), idle for \(Int(idle)) s, to make room for a new client "
                + "(every slot was taken)"
        case .frameTimedOut(let peer, let seconds):
            "closed the TCP connection from \(peer): a packet it started was not complete after "
                + "\(Int(seconds * 1000)) ms"
        }
    }
}

/// Receives OSC over TCP: a listening socket and up to ``maxConnections`` clients, each stream
/// split into packets by an ``OSCStreamDeframer`` (OSC 1.0 length prefixes or OSC 1.1 SLIP,
/// whichever the client's first byte announces), each packet handed to a handler with the
/// client's address. ``OSCReceiver`` runs it, alone or beside a ``UDPReceiver``, in one thread.
///
/// Memory is bounded: one read buffer, and per connection slot one packet buffer of
/// ``maxPacketSize`` bytes, allocated when the slot is first used and kept for the next client.
/// A client whose stream breaks its framing (an oversized packet, a bad length or escape) is
/// closed. Slots cannot be held hostage: when every slot is taken, a new allowed client takes
/// the slot of the connection idle the longest, if that one has been idle for at least
/// ``evictableAfter`` (a connection inside a frame is not idle); and a connection that starts a
/// frame and does not finish it within ``frameTimeout`` is closed. While slots are free, an idle
/// connection stays open for as long as its client likes (a tablet left connected). A client
/// outside the allow-list, or one for which no slot can be freed, is reset (`SO_LINGER` 0)
/// as soon as it is accepted, without reading, so its next send fails with `ECONNRESET` rather
/// than its data vanishing. Every one of them is counted.
package final class TCPReceiver: @unchecked Sendable {
    // @unchecked Sendable: the connections and buffers belong to the thread in
    // `OSCReceiver.run`; other threads read the statistics.

    /// The address the listening socket is bound to (with the real port when asked for port 0).
    let boundAddress: SocketAddress
    /// Counters any thread may read.
    package let statistics = TCPReceiveStatistics()
    /// The most clients connected at once.
    let maxConnections: Int
    /// The largest packet a client may send; a larger one closes its connection.
    let maxPacketSize: Int
    /// How long a frame may take to arrive whole, from the read that brought its first byte.
    let frameTimeout: Duration
    /// How long a connection must have been idle before a new client may take its slot.
    let evictableAfter: Duration

    private struct Connection {
        var descriptor: Int32 = -1
        var peer = PacketSource(address: .v4(0), port: 0)
        var deframer: OSCStreamDeframer
        // Made when the slot is first used: 1,024 slots of 8 MiB may be allowed, not reserved.
        var buffer: UnsafeMutableRawPointer?
        // The clock (CLOCK_MONOTONIC, ns) of the last round that read bytes from it, or of its accept.
        var lastActive: UInt64 = 0
        // When the frame it is inside must be complete; `.max` between frames.
        var frameDeadline: UInt64 = .max
    }

    let listener: Int32
    private let allowList: IPAllowList?
    private let connectionSlots: FixedBuffer<Connection>
    private var connections: UnsafeMutablePointer<Connection> { connectionSlots.baseAddress }
    private let readBytes: FixedBytes
    private var readBuffer: UnsafeMutableRawPointer { readBytes.baseAddress }
    private let readSize: Int
    private let onConnection: @Sendable (TCPConnectionEvent) -> Void
    private let frameTimeoutNanoseconds: UInt64
    private let evictableAfterNanoseconds: UInt64
    // Connections inside a frame: while there are none, no deadline is armed and the loop
    // reads no clock of its own.
    private var partialFrames = 0
    private var isClosed = false

    /// Listens on `host:port` (a numeric IPv4 or IPv6 address; port 0 picks a free port).
    /// With `allowList`, connections from other addresses are reset at once. `onConnection`
    /// hears of every client coming and going (on the receiving thread; never per packet).
    package init(
        host: String, port: Int, allowList: IPAllowList? = nil, maxConnections: Int = 16,
        maxPacketSize: Int = 65_536, readSize: Int = 16_384, frameTimeout: Duration = .seconds(5),
        evictableAfter: Duration = .seconds(1),
        onConnection: @escaping @Sendable (TCPConnectionEvent) -> Void = { _ in }
    ) throws(ListenError) {
        precondition(maxConnections >= 1 && maxPacketSize >= 16 && readSize >= 1, "TCPReceiver: limits too small")
        precondition(frameTimeout > .zero && evictableAfter >= .zero, "TCPReceiver: negative times")
        (listener, boundAddress) = try ListeningSocket.open(
            host: host, port: port, type: Int32(SOCK_STREAM.rawValue))
        self.allowList = allowList
        self.maxConnections = maxConnections
        self.maxPacketSize = maxPacketSize
        self.readSize = readSize
        self.frameTimeout = frameTimeout
        self.evictableAfter = evictableAfter
        frameTimeoutNanoseconds = Self.nanoseconds(frameTimeout)
        evictableAfterNanoseconds = Self.nanoseconds(evictableAfter)
        self.onConnection = onConnection
        readBytes = FixedBytes(count: readSize)
        connectionSlots = FixedBuffer(
            repeating: Connection(deframer: OSCStreamDeframer(capacity: maxPacketSize)), count: maxConnections)
    }

    deinit {
        close()
        var i = 0
        while i < maxConnections {
            connections[i].buffer?.deallocate()
            i += 1
        }
    }

    /// The bound TCP port.
    package var port: Int { boundAddress.port }

    private static func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        return UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000)
    }

    /// Closes every connection and the listening socket, so the port is free at once; the
    /// statistics stay readable. Only after the loop has returned.
    func close() {
        guard !isClosed else { return }
        isClosed = true
        var open = 0
        var i = 0
        while i < maxConnections {
            if connections[i].descriptor >= 0 {
                Glibc.close(connections[i].descriptor)
                connections[i].descriptor = -1
                open += 1
            }
            i += 1
        }
        partialFrames = 0
        statistics.recordShutdown(open: open)
        Glibc.close(listener)
    }

    // MARK: For OSCReceiver's loop

    /// How many `pollfd`s ``fillPollDescriptors(_:)`` writes: the listener and every slot.
    var pollDescriptorCount: Int { 1 + maxConnections }

    /// Writes the listener's and each slot's `pollfd` (-1, which `poll` skips, for a free slot).
    func fillPollDescriptors(_ descriptors: UnsafeMutablePointer<pollfd>) {
        descriptors[0] = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
        var i = 0
        while i < maxConnections {
            descriptors[1 + i] = pollfd(fd: connections[i].descriptor, events: Int16(POLLIN), revents: 0)
            i += 1
        }
    }

    /// Serves what `poll` reported in the `pollfd`s ``fillPollDescriptors(_:)`` wrote: reads
    /// each ready client (a bounded amount, so one busy client cannot starve the others or the
    /// caller's tick), then accepts new clients. `now` is the round's time on ``MonotonicClock``.
    func service(
        _ descriptors: UnsafeMutablePointer<pollfd>, now: UInt64,
        _ handler: (UnsafeRawBufferPointer, PacketSource) -> Void
    ) {
        var i = 0
        while i < maxConnections {
            if descriptors[1 + i].revents != 0 && connections[i].descriptor == descriptors[1 + i].fd {
                read(slot: i, now: now, handler)
            }
            i += 1
        }
        if descriptors[0].revents != 0 { acceptPending(now: now) }
    }

    /// After every wake-up: closes the connections whose frame is overdue and returns how long
    /// `poll` may wait, `timeout` (milliseconds, -1 for ever) or less, until the next frame's
    /// deadline. With no connection inside a frame it returns `timeout` and reads no clock.
    func pollTimeout(_ timeout: Int32) -> Int32 {
        guard partialFrames > 0 else { return timeout }
        let now = MonotonicClock.now()
        var earliest = UInt64.max
        var i = 0
        while i < maxConnections {
            let deadline = connections[i].frameDeadline
            if deadline <= now {
                statistics.recordFrameTimeout()
                let started = deadline - frameTimeoutNanoseconds
                resetConnection(i, .frameTimedOut(connections[i].peer.address, seconds: Double(now - started) / 1e9))
            } else if deadline < earliest {
                earliest = deadline
            }
            i += 1
        }
        guard earliest != .max else { return timeout }
        let milliseconds = Int32(min((earliest - now + 999_999) / 1_000_000, 60_000))
        return timeout < 0 ? milliseconds : min(timeout, milliseconds)
    }

    private func acceptPending(now: UInt64) {
        while true {
            var peerAddress = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            // Accepted sockets do not inherit O_NONBLOCK on Linux: asked for here.
            let flags = Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
            let accepted = withUnsafeMutablePointer(to: &peerAddress) { address in
                address.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                    valueOrErrno(retryOnInterrupt: { aseqosc_accept4(listener, address, &length, flags) })
                }
            }
            guard case .success(let client) = accepted else {
                if accepted == .failure(.connectionAborted) { continue }
                return  // EAGAIN: no more; EMFILE and friends: try again at the next wake-up
            }
            let peer = withUnsafePointer(to: &peerAddress) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { PacketSource($0) }
            }
            // Counted before the reset, so a client that sees its connection end finds it counted.
            guard let peer, allowList?.allows(peer.address) ?? true else {
                statistics.recordRefused(notAllowed: true)
                Self.reset(client)
                onConnection(.refused(peer?.address ?? .v4(0), notAllowed: true))
                continue
            }
            guard let slot = freeSlot() ?? evictIdlest(now: now) else {
                statistics.recordRefused(notAllowed: false)
                Self.reset(client)
                onConnection(.refused(peer.address, notAllowed: false))
                continue
            }
            if connections[slot].buffer == nil {
                connections[slot].buffer = .allocate(byteCount: maxPacketSize, alignment: 16)
            }
            connections[slot].descriptor = client
            connections[slot].peer = peer
            connections[slot].deframer = OSCStreamDeframer(capacity: maxPacketSize)
            // A new client counts as active from its accept: it cannot be evicted before it
            // has had `evictableAfter` to send.
            connections[slot].lastActive = now
            connections[slot].frameDeadline = .max
            statistics.recordAccepted()
            onConnection(.accepted(peer.address))
        }
    }

    private func freeSlot() -> Int? {
        var i = 0
        while i < maxConnections {
            if connections[i].descriptor < 0 { return i }
            i += 1
        }
        return nil
    }

    /// Every slot is taken: closes the connection idle the longest, if it has been idle for
    /// ``evictableAfter`` and is not inside a frame, and returns its slot.
    private func evictIdlest(now: UInt64) -> Int? {
        var idlest = -1
        var oldest = UInt64.max
        var i = 0
        while i < maxConnections {
            let connection = connections[i]
            if connection.descriptor >= 0 && connection.frameDeadline == .max && connection.lastActive < oldest
                && now >= connection.lastActive && now - connection.lastActive >= evictableAfterNanoseconds
            {
                idlest = i
                oldest = connection.lastActive
            }
            i += 1
        }
        guard idlest >= 0 else { return nil }
        statistics.recordEvicted()
        let idle = Double(now - connections[idlest].lastActive) / 1e9
        resetConnection(idlest, .evicted(connections[idlest].peer.address, idleSeconds: idle))
        return idlest
    }

    /// Reads up to four buffers from one client, handing on every complete packet.
    private func read(slot: Int, now: UInt64, _ handler: (UnsafeRawBufferPointer, PacketSource) -> Void) {
        let connection = connections + slot
        let peer = connection.pointee.peer
        let buffer = connection.pointee.buffer!
        var packets = 0
        var bytes = 0
        defer { statistics.recordPackets(packets, bytes: bytes) }
        var reads = 0
        while reads < 4 {
            reads += 1
            let received = valueOrErrno(retryOnInterrupt: {
                recv(connection.pointee.descriptor, readBuffer, readSize, 0)
            })
            guard case .success(let count) = received else {
                if received == .failure(.wouldBlock) { break }
                end(slot, nil)  // ECONNRESET and the like: the peer is gone
                return
            }
            if count == 0 {
                end(slot, connection.pointee.deframer.finish())
                return
            }
            connection.pointee.lastActive = now
            let error = connection.pointee.deframer.feed(
                UnsafeRawBufferPointer(start: readBuffer, count: count), into: buffer
            ) { packet in
                packets += 1
                bytes += packet.count
                handler(packet, peer)
            }
            if let error {
                end(slot, error)
                return
            }
            if count < readSize { break }
        }
        // A frame begun in this round (none was under way, or one ended here and another began)
        // must be whole by the deadline; a frame still under way keeps the deadline it had.
        if connection.pointee.deframer.hasPartialPacket {
            if connection.pointee.frameDeadline == .max {
                partialFrames += 1
                connection.pointee.frameDeadline = now &+ frameTimeoutNanoseconds
            } else if packets > 0 {
                connection.pointee.frameDeadline = now &+ frameTimeoutNanoseconds
            }
        } else if connection.pointee.frameDeadline != .max {
            partialFrames -= 1
            connection.pointee.frameDeadline = .max
        }
    }

    private func end(_ slot: Int, _ error: OSCStreamError?) {
        statistics.recordClosed(error)
        let peer = connections[slot].peer.address
        Glibc.close(connections[slot].descriptor)
        release(slot)
        onConnection(.closed(peer, error))
    }

    /// Closes a connection we give up on (its counter already bumped) with a reset: it may have
    /// sent what we will never read, and its next send should fail rather than vanish.
    private func resetConnection(_ slot: Int, _ event: TCPConnectionEvent) {
        Self.reset(connections[slot].descriptor)
        release(slot)
        onConnection(event)
    }

    private func release(_ slot: Int) {
        connections[slot].descriptor = -1
        if connections[slot].frameDeadline != .max {
            partialFrames -= 1
            connections[slot].frameDeadline = .max
        }
    }

    /// Closes `descriptor` with a reset (`SO_LINGER` 0) instead of an orderly close: whatever
    /// the client sent is dropped and its next send or receive fails with `ECONNRESET`.
    private static func reset(_ descriptor: Int32) {
        _ = setSocketOption(descriptor, SOL_SOCKET, SO_LINGER, linger(l_onoff: 1, l_linger: 0))
        Glibc.close(descriptor)
    }
}
