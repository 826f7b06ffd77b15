import CGNUCalls
import Endpoints
import Glibc
import Platform
import Storage
import Synchronization

/// Counters of a ``UDPReceiver``, readable from any thread (relaxed: statistics only).
package final class UDPReceiveStatistics: Sendable {
    private let datagramCount = Atomic<Int>(0)
    private let byteCount = Atomic<Int>(0)
    private let notAllowedCount = Atomic<Int>(0)
    private let truncatedCount = Atomic<Int>(0)

    /// Datagrams received from allowed senders and handed on.
    package var datagrams: Int { datagramCount.load(ordering: .relaxed) }
    /// Their bytes.
    package var bytes: Int { byteCount.load(ordering: .relaxed) }
    /// Datagrams dropped because the sender is not in the allow-list.
    package var notAllowed: Int { notAllowedCount.load(ordering: .relaxed) }
    /// Datagrams dropped because they were larger than a receive slot.
    package var truncated: Int { truncatedCount.load(ordering: .relaxed) }

    func record(datagrams: Int, bytes: Int, notAllowed: Int, truncated: Int) {
        if datagrams > 0 {
            datagramCount.add(datagrams, ordering: .relaxed)
            byteCount.add(bytes, ordering: .relaxed)
        }
        if notAllowed > 0 { notAllowedCount.add(notAllowed, ordering: .relaxed) }
        if truncated > 0 { truncatedCount.add(truncated, ordering: .relaxed) }
    }
}

/// Receives OSC over UDP: one socket read with `recvmmsg`, a batch of datagrams per system
/// call, each handed to a handler with its sender's address, in place (nothing is copied or
/// allocated after `init`). ``OSCReceiver`` runs it, alone or beside a ``TCPReceiver``.
///
/// With nothing timed to do, ``OSCReceiver`` has it wait in the receive itself on the blocking
/// socket (`recvfrom` while the sender is quiet, `recvmmsg` with `MSG_WAITFORONE` during a
/// burst): one system call per datagram instead of `poll` and then a receive
/// (docs/benchmark-history.md, fifth round). ``stop()`` ends that wait with `shutdown(SHUT_RD)`,
/// which Linux applies to an unconnected UDP socket too (it answers `ENOTCONN` but wakes the
/// reader); every other receive passes `MSG_DONTWAIT`. With an allow-list, datagrams from other
/// senders are dropped and counted before the handler sees them.
package final class UDPReceiver: @unchecked Sendable {
    // @unchecked Sendable: the buffers belong to the thread inside `OSCReceiver.run`; other
    // threads only call `stop()` (an atomic and a shutdown) and read the statistics.

    /// The address the socket is bound to (with the real port when asked for port 0).
    let boundAddress: SocketAddress
    /// Counters any thread may read.
    package let statistics = UDPReceiveStatistics()
    /// Datagrams read per `recvmmsg`.
    let batchCapacity: Int
    /// The largest datagram kept; a larger one is dropped and counted as truncated.
    let slotSize: Int

    /// The socket, for ``OSCReceiver``'s `poll()`.
    let socket: Int32
    private let allowList: IPAllowList?
    private var isClosed = false
    /// Whether the waits take batches: a batch read found datagrams queued behind the one waited
    /// for (see ``receiveAvailable(_:beforeBatch:tick:waitingForOne:)``).
    private var inBurst = false
    /// Single receives since start, for when to look for a burst.
    private var quietReceives = 0
    private let stopRequested = Atomic<Bool>(false)
    private let slotBytes: FixedBytes
    private let headerBuffer: FixedBuffer<aseqosc_mmsghdr>
    private let vectorBuffer: FixedBuffer<iovec>
    private let senderBuffer: FixedBuffer<sockaddr_storage>
    private var slots: UnsafeMutableRawPointer { slotBytes.baseAddress }
    private var headers: UnsafeMutablePointer<aseqosc_mmsghdr> { headerBuffer.baseAddress }
    private var vectors: UnsafeMutablePointer<iovec> { vectorBuffer.baseAddress }
    private var senders: UnsafeMutablePointer<sockaddr_storage> { senderBuffer.baseAddress }

    /// Binds `host:port` (a numeric IPv4 or IPv6 address; port 0 picks a free port). With
    /// `allowList`, only its senders are handed on.
    package init(
        host: String, port: Int, allowList: IPAllowList? = nil, batchCapacity: Int = 16, slotSize: Int = 65_536
    ) throws(ListenError) {
        precondition(batchCapacity >= 1 && slotSize >= 16, "UDPReceiver: batch capacity and slot size too small")
        // Blocking, for the waiting receive; every other receive passes MSG_DONTWAIT.
        (socket, boundAddress) = try ListeningSocket.open(
            host: host, port: port, type: Int32(SOCK_DGRAM.rawValue), blocking: true)
        self.allowList = allowList
        self.batchCapacity = batchCapacity
        self.slotSize = slotSize
        slotBytes = FixedBytes(count: batchCapacity * slotSize)
        headerBuffer = FixedBuffer(repeating: aseqosc_mmsghdr(), count: batchCapacity)
        vectorBuffer = FixedBuffer(repeating: iovec(), count: batchCapacity)
        senderBuffer = FixedBuffer(repeating: sockaddr_storage(), count: batchCapacity)
        var i = 0
        while i < batchCapacity {
            vectors[i] = iovec(iov_base: slots + i * slotSize, iov_len: slotSize)
            headers[i].msg_hdr.msg_iov = vectors + i
            headers[i].msg_hdr.msg_iovlen = 1
            headers[i].msg_hdr.msg_name = UnsafeMutableRawPointer(senders + i)
            headers[i].msg_hdr.msg_namelen = socklen_t(MemoryLayout<sockaddr_storage>.size)
            i += 1
        }
    }

    deinit {
        close()
    }

    /// The bound UDP port.
    package var port: Int { boundAddress.port }

    /// Sends `bytes` to `source` from this socket, whose port is the one senders send to, so a
    /// sender's connected socket takes it (the receiving thread's; never waits). False when the
    /// kernel refused it.
    package func reply(_ bytes: UnsafeRawBufferPointer, to source: PacketSource) -> Bool {
        let sent = SocketAddress(source.address, port: source.port).withSockaddr {
            sendto(socket, bytes.baseAddress, bytes.count, Int32(MSG_DONTWAIT), $0, $1)
        }
        return sent == bytes.count
    }

    /// Closes the socket, so the port is free at once (for a restart on the same port); the
    /// statistics stay readable. Only after the loop has returned.
    func close() {
        guard !isClosed else { return }
        isClosed = true
        Glibc.close(socket)
    }

    /// Ends a receive waiting for a datagram, now or later, and hands nothing more on; callable
    /// from any thread (``OSCReceiver/stop()``'s). The socket receives nothing more.
    func stop() {
        // Releasing: pairs with the acquiring loads in `receiveOne` and `receiveBatches`.
        stopRequested.store(true, ordering: .releasing)
        // The socket reads end-of-input from here on.
        _ = shutdown(socket, Int32(SHUT_RD))
    }

    /// Reads batches until the socket is empty, ticking between batches so paced output keeps
    /// moving during a flood; `beforeBatch` runs before each batch is handed on. With
    /// `waitingForOne`, the first receive waits until there is a datagram. Hands nothing on once
    /// ``stop()`` was called.
    ///
    /// A quiet socket's wait is a single `recvfrom`: `recvmmsg` with `MSG_WAITFORONE` looks for
    /// a second datagram after the first, a second pass through the kernel's receive path for
    /// every paced message (docs/benchmark-history.md, sixth round).
    /// Every ``probeInterval``th single receive is followed by a batch read that does not wait;
    /// if that finds datagrams queued, the sender is in a burst and the waits take batches again
    /// until one finds a single datagram.
    func receiveAvailable(
        _ handler: (UnsafeRawBufferPointer, PacketSource) -> Void, beforeBatch: () -> Void, tick: () -> Int32,
        waitingForOne: Bool = false
    ) {
        guard waitingForOne else {
            _ = receiveBatches(handler, beforeBatch: beforeBatch, tick: tick, flags: Int32(MSG_DONTWAIT))
            return
        }
        if inBurst {
            inBurst = receiveBatches(handler, beforeBatch: beforeBatch, tick: tick, flags: Int32(MSG_WAITFORONE)) > 1
            return
        }
        guard receiveOne(handler, beforeBatch: beforeBatch) else { return }
        quietReceives &+= 1
        if quietReceives % Self.probeInterval == 0 {
            // What the datagram became is written before the look for more.
            _ = tick()
            inBurst = receiveBatches(handler, beforeBatch: beforeBatch, tick: tick, flags: Int32(MSG_DONTWAIT)) > 0
        }
    }

    /// How many single receives pass before a batch read looks for a burst.
    package static let probeInterval = 8

    /// Waits for one datagram with `recvfrom` into the first slot and hands it on; false when
    /// nothing was (an error, or ``stop()``).
    private func receiveOne(_ handler: (UnsafeRawBufferPointer, PacketSource) -> Void, beforeBatch: () -> Void) -> Bool
    {
        // `recvfrom`, not `recvmsg`: the kernel reads no header and no vector from us. With
        // MSG_TRUNC it answers a datagram's whole length, larger than the slot if it was cut.
        let received = valueOrErrno(retryOnInterrupt: {
            recvfrom(
                socket, slots, slotSize, Int32(MSG_TRUNC),
                UnsafeMutableRawPointer(senders).assumingMemoryBound(to: sockaddr.self),
                &headers[0].msg_hdr.msg_namelen)
        })
        // ICMP reports: the caller waits again. Acquiring: pairs with the releasing store in
        // `stop()`, whose shutdown ends the wait with an empty "datagram".
        guard case .success(let length) = received, !stopRequested.load(ordering: .acquiring) else { return false }
        headers[0].msg_len = UInt32(min(length, slotSize))
        headers[0].msg_hdr.msg_flags = length > slotSize ? Int32(MSG_TRUNC) : 0
        beforeBatch()
        handOn(1, handler)
        return true
    }

    /// Reads batches with `recvmmsg` (`flags` for the first, then `MSG_DONTWAIT`) until one
    /// is not full; returns how many datagrams the first read got (-1: none, an error or
    /// nothing waiting).
    private func receiveBatches(
        _ handler: (UnsafeRawBufferPointer, PacketSource) -> Void, beforeBatch: () -> Void, tick: () -> Int32,
        flags firstFlags: Int32
    ) -> Int {
        // The headers point at their slots from `init` on; of what they hold, the kernel changes
        // only the sender length (set back once read), the flags and the length received.
        var flags = firstFlags
        var first = -1
        while true {
            let received = valueOrErrno(retryOnInterrupt: {
                aseqosc_recvmmsg(socket, headers, UInt32(batchCapacity), flags, nil)
            })
            // EAGAIN: nothing more; other errors (ICMP reports) are not ours to act on.
            guard case .success(let count) = received else { return first }
            // Acquiring: pairs with the releasing store in `stop()`, whose shutdown ends a
            // receive with an empty "datagram" that is not one.
            if stopRequested.load(ordering: .acquiring) { return first }
            if first < 0 { first = Int(count) }
            flags = Int32(MSG_DONTWAIT)
            if count > 0 { beforeBatch() }
            handOn(Int(count), handler)
            if Int(count) < batchCapacity { return first }
            _ = tick()
        }
    }

    /// Hands on the first `count` datagrams received, but those that were truncated or whose
    /// sender is not allowed, which are counted instead.
    private func handOn(_ count: Int, _ handler: (UnsafeRawBufferPointer, PacketSource) -> Void) {
        var accepted = 0
        var bytes = 0
        var notAllowed = 0
        var truncated = 0
        var i = 0
        while i < count {
            let length = Int(headers[i].msg_len)
            if headers[i].msg_hdr.msg_flags & Int32(MSG_TRUNC) != 0 {
                truncated += 1
            } else if let sender = (senders + i).withMemoryRebound(to: sockaddr.self, capacity: 1, { PacketSource($0) })
            {
                if let allowList, !allowList.allows(sender.address) {
                    notAllowed += 1
                } else {
                    accepted += 1
                    bytes += length
                    handler(UnsafeRawBufferPointer(start: slots + i * slotSize, count: length), sender)
                }
            }
            headers[i].msg_hdr.msg_namelen = socklen_t(MemoryLayout<sockaddr_storage>.size)
            i += 1
        }
        statistics.record(datagrams: accepted, bytes: bytes, notAllowed: notAllowed, truncated: truncated)
    }
}
