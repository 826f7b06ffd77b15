import CSyscall
import Glibc

/// Why a ``UDPSender`` could not set up a destination's socket.
public struct UDPSenderError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The destination, as `host:port`.
    public var destination: String
    /// The C call that failed.
    public var call: String
    public var code: Int32

    public var description: String { "\(call) for \(destination): \(String(cString: strerror(code)))" }
}

/// Fans OSC packets out over UDP: queue packets for any destinations, then ``flush()`` sends
/// them with one `sendmmsg` per destination.
///
/// Each destination has its own non-blocking socket, `connect`ed to it. A connected UDP socket
/// is how Linux reports an ICMP "port unreachable" (as `ECONNREFUSED` on a later send) to the
/// one destination it concerns, and it lets multicast options differ per destination; an
/// unconnected socket shared by a family would drop those errors or pin them on whichever
/// destination sends next. A failing destination is counted by reason in ``statistics`` and
/// never delays the others: every call uses `MSG_DONTWAIT`, and a full socket buffer drops
/// that destination's remaining packets for this flush.
///
/// Used by one thread. Nothing in ``queue(_:to:)`` or ``flush()`` allocates or blocks.
public final class UDPSender {
    /// The destinations, in the order ``queue(_:to:)`` numbers them.
    public let destinations: [ResolvedOSCDestination]
    @usableFromInline let destinationCount: Int
    /// Counters any thread may read.
    public let statistics: UDPSendStatistics
    /// The most packets ``queue(_:to:)`` holds before it flushes by itself.
    public let batchCapacity: Int
    /// The largest packet that is batched; a larger one is sent at once, after a flush.
    public let slotSize: Int

    private let sockets: UnsafeMutablePointer<Int32>
    // Per destination: how many queued packets are waiting.
    @usableFromInline let pending: UnsafeMutablePointer<Int>
    // The batch: slot i holds slotLengths[i] bytes for destination slotDestinations[i].
    @usableFromInline let slots: UnsafeMutableRawPointer
    @usableFromInline let slotLengths: UnsafeMutablePointer<Int>
    @usableFromInline let slotDestinations: UnsafeMutablePointer<Int>
    private let headers: UnsafeMutablePointer<aseqosc_mmsghdr>
    private let vectors: UnsafeMutablePointer<iovec>
    // One header and vector per slot, the vector's base fixed at its slot: with one destination,
    // every queued slot goes out in order, and a flush is one `sendmmsg` with no gathering.
    @usableFromInline let slotHeaders: UnsafeMutablePointer<aseqosc_mmsghdr>
    @usableFromInline let slotVectors: UnsafeMutablePointer<iovec>
    // The bytes queued: what a `sendmmsg` that sends everything sent, without summing per message.
    @usableFromInline let queuedBytes: UnsafeMutablePointer<Int>
    // How many packets the batch holds; plain memory rather than a stored `var`, which would
    // pay a dynamic exclusivity check on every queued packet.
    @usableFromInline let queuedCount: UnsafeMutablePointer<Int>
    @usableFromInline var queued: Int {
        @inline(__always) get { queuedCount.pointee }
        @inline(__always) set { queuedCount.pointee = newValue }
    }

    /// Opens one socket per destination and applies its options; throws naming the call that failed.
    public init(
        destinations: [ResolvedOSCDestination], batchCapacity: Int = 64, slotSize: Int = 1_536
    ) throws(UDPSenderError) {
        precondition(batchCapacity >= 1 && slotSize >= 1, "UDPSender: batch capacity and slot size must be positive")
        var descriptors: [Int32] = []
        do throws(UDPSenderError) {
            for destination in destinations { descriptors.append(try Self.openSocket(for: destination)) }
        } catch {
            for descriptor in descriptors { close(descriptor) }
            throw error
        }
        self.destinations = destinations
        destinationCount = destinations.count
        self.batchCapacity = batchCapacity
        self.slotSize = slotSize
        statistics = UDPSendStatistics(destinationCount: destinations.count)
        let count = max(destinations.count, 1)
        sockets = .allocate(capacity: count)
        sockets.initialize(repeating: -1, count: count)
        for (i, descriptor) in descriptors.enumerated() { sockets[i] = descriptor }
        pending = .allocate(capacity: count)
        pending.initialize(repeating: 0, count: count)
        slots = .allocate(byteCount: batchCapacity * slotSize, alignment: 16)
        // Touched now, so that no page fault waits for the first packets.
        slots.initializeMemory(as: UInt8.self, repeating: 0, count: batchCapacity * slotSize)
        slotLengths = .allocate(capacity: batchCapacity)
        slotLengths.initialize(repeating: 0, count: batchCapacity)
        slotDestinations = .allocate(capacity: batchCapacity)
        slotDestinations.initialize(repeating: 0, count: batchCapacity)
        headers = .allocate(capacity: batchCapacity)
        headers.initialize(repeating: aseqosc_mmsghdr(), count: batchCapacity)
        vectors = .allocate(capacity: batchCapacity)
        vectors.initialize(repeating: iovec(), count: batchCapacity)
        slotHeaders = .allocate(capacity: batchCapacity)
        slotHeaders.initialize(repeating: aseqosc_mmsghdr(), count: batchCapacity)
        slotVectors = .allocate(capacity: batchCapacity)
        for index in 0..<batchCapacity {
            headers[index].msg_hdr.msg_iov = vectors + index
            headers[index].msg_hdr.msg_iovlen = 1
            (slotVectors + index).initialize(to: iovec(iov_base: slots + index * slotSize, iov_len: 0))
            slotHeaders[index].msg_hdr.msg_iov = slotVectors + index
            slotHeaders[index].msg_hdr.msg_iovlen = 1
        }
        queuedCount = .allocate(capacity: 1)
        queuedCount.initialize(to: 0)
        queuedBytes = .allocate(capacity: 1)
        queuedBytes.initialize(to: 0)
    }

    deinit {
        var i = 0
        while i < destinations.count {
            close(sockets[i])
            i += 1
        }
        sockets.deallocate()
        pending.deallocate()
        slots.deallocate()
        slotLengths.deallocate()
        slotDestinations.deallocate()
        headers.deallocate()
        vectors.deallocate()
        slotHeaders.deallocate()
        slotVectors.deallocate()
        queuedCount.deallocate()
        queuedBytes.deallocate()
    }

    /// Copies `packet` into the batch for `destination` (an index into ``destinations``).
    /// A full batch is flushed first; a packet larger than ``slotSize`` is sent at once.
    public func queue(_ packet: UnsafeRawBufferPointer, to destination: Int) {
        precondition(destination >= 0 && destination < destinations.count, "UDPSender: no destination \(destination)")
        guard packet.count <= slotSize else {
            // Whatever is queued goes first, so this destination's packets keep their order.
            flush()
            sendNow(packet, to: destination)
            return
        }
        if queued == batchCapacity { flush() }
        let slot = slots + queued * slotSize
        if let source = packet.baseAddress { slot.copyMemory(from: source, byteCount: packet.count) }
        commit(packet.count, to: destination)
    }

    /// The slot the next queued packet goes into, ``slotSize`` bytes, for writing a packet in
    /// place; ``commit(_:to:)`` queues it. A full batch is flushed first. Writing in place saves
    /// the copy that ``queue(_:to:)`` makes.
    @inlinable @inline(__always)
    public func nextSlot() -> UnsafeMutableRawBufferPointer {
        if queued == batchCapacity { flush() }
        return UnsafeMutableRawBufferPointer(start: slots + queued &* slotSize, count: slotSize)
    }

    /// Queues the `byteCount` bytes written into ``nextSlot()`` for `destination`.
    @inlinable @inline(__always)
    public func commit(_ byteCount: Int, to destination: Int) {
        precondition(
            destination >= 0 && destination < destinationCount && byteCount <= slotSize,
            "UDPSender: no destination \(destination), or \(byteCount) bytes past the slot")
        // `queued` read once: the stores below could alias it as far as the compiler knows.
        let slot = queued
        slotLengths[slot] = byteCount
        slotVectors[slot].iov_len = byteCount
        slotDestinations[slot] = destination
        pending[destination] &+= 1
        queuedBytes.pointee &+= byteCount
        queued = slot &+ 1
    }

    /// Sends everything queued: one `sendmmsg` per destination with packets (a `send` for a
    /// lone packet to the only destination), in queue order.
    public func flush() {
        guard queued > 0 else { return }
        if destinationCount == 1 {
            pending[0] = 0
            if queued == 1 {
                // A played note alone: `send` takes a shorter way through the kernel than a
                // `sendmmsg` of one (no header or vector to read from us; BENCHMARKS.md).
                sendNow(UnsafeRawBufferPointer(start: slots, count: slotLengths[0]), to: 0)
            } else {
                sendBatch(slotHeaders, queued, to: 0, bytes: queuedBytes.pointee)
            }
        } else {
            var destination = 0
            while destination < destinationCount {
                if pending[destination] > 0 { flush(destination) }
                destination += 1
            }
        }
        queuedBytes.pointee = 0
        queued = 0
    }

    private func flush(_ destination: Int) {
        var count = 0
        var bytes = 0
        var slot = 0
        while slot < queued {
            if slotDestinations[slot] == destination {
                // Only the vector changes: every header was pointed at its vector once, in init,
                // and the kernel writes nothing into a header but `msg_len`.
                vectors[count] = iovec(iov_base: slots + slot * slotSize, iov_len: slotLengths[slot])
                bytes &+= slotLengths[slot]
                count += 1
            }
            slot += 1
        }
        pending[destination] = 0
        sendBatch(headers, count, to: destination, bytes: bytes)
    }

    /// Sends the `count` messages of `headers`, `bytes` in all, to `destination`, counting what
    /// went and what failed.
    private func sendBatch(
        _ headers: UnsafeMutablePointer<aseqosc_mmsghdr>, _ count: Int, to destination: Int, bytes: Int
    ) {
        let descriptor = sockets[destination]
        var next = 0
        while next < count {
            let sent = aseqosc_sendmmsg(descriptor, headers + next, UInt32(count - next), Int32(MSG_DONTWAIT))
            if sent > 0 {
                if next == 0 && Int(sent) == count {
                    // All of them, the usual case: UDP sends a datagram whole or not at all.
                    statistics.recordSent(destination, bytes: bytes, packets: count)
                    return
                }
                var sentBytes = 0
                var i = 0
                while i < Int(sent) {
                    sentBytes &+= Int(headers[next + i].msg_len)
                    i += 1
                }
                statistics.recordSent(destination, bytes: sentBytes, packets: Int(sent))
                next += Int(sent)
                continue
            }
            // sendmmsg stops at the first message that fails and reports it only when it is the
            // first of the call: count it and go on after it.
            let code = errno
            if code == EINTR { continue }
            let reason = UDPSendFailure(errno: code)
            if reason == .bufferFull {
                // The rest would only fail the same way; they are dropped, not waited for.
                statistics.recordFailure(destination, reason, count: count - next)
                return
            }
            statistics.recordFailure(destination, reason)
            next += 1
        }
    }

    private func sendNow(_ packet: UnsafeRawBufferPointer, to destination: Int) {
        while true {
            // Made directly, not through libc: see CSyscall.
            let sent = aseqosc_send_now(
                sockets[destination], packet.baseAddress, UInt(packet.count), Int32(MSG_DONTWAIT))
            if sent >= 0 {
                statistics.recordSent(destination, bytes: sent)
                return
            }
            let code = Int32(truncatingIfNeeded: -sent)
            if code == EINTR { continue }
            statistics.recordFailure(destination, UDPSendFailure(errno: code))
            return
        }
    }

    // MARK: Setup

    private static func openSocket(for resolved: ResolvedOSCDestination) throws(UDPSenderError) -> Int32 {
        let destination = resolved.destination
        let address = resolved.address
        let name = destination.description
        func fail(_ call: String) -> UDPSenderError { UDPSenderError(destination: name, call: call, code: errno) }

        let type = Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        let descriptor = socket(address.family, type, 0)
        guard descriptor >= 0 else { throw fail("socket") }
        do throws(UDPSenderError) {
            if destination.broadcast {
                try setOption(descriptor, SOL_SOCKET, SO_BROADCAST, Int32(1), "setsockopt(SO_BROADCAST)", name)
            }
            if address.isMulticast { try applyMulticastOptions(descriptor, resolved) }
            let result = address.withSockaddr { connect(descriptor, $0, $1) }
            guard result == 0 else { throw fail("connect") }
        } catch {
            close(descriptor)
            throw error
        }
        return descriptor
    }

    private static func applyMulticastOptions(
        _ descriptor: Int32, _ resolved: ResolvedOSCDestination
    ) throws(UDPSenderError) {
        let destination = resolved.destination
        let name = destination.description
        var interfaceIndex: Int32 = 0
        if let interface = destination.multicastInterface {
            interfaceIndex = Int32(bitPattern: if_nametoindex(interface))
            guard interfaceIndex != 0 else {
                throw UDPSenderError(destination: name, call: "if_nametoindex(\(interface))", code: errno)
            }
        }
        if resolved.address.family == AF_INET6 {
            let level = Int32(IPPROTO_IPV6)
            if let ttl = destination.multicastTTL {
                try setOption(
                    descriptor, level, IPV6_MULTICAST_HOPS, Int32(ttl), "setsockopt(IPV6_MULTICAST_HOPS)", name)
            }
            if let loop = destination.multicastLoopback {
                try setOption(
                    descriptor, level, IPV6_MULTICAST_LOOP, UInt32(loop ? 1 : 0), "setsockopt(IPV6_MULTICAST_LOOP)",
                    name)
            }
            if interfaceIndex != 0 {
                try setOption(
                    descriptor, level, IPV6_MULTICAST_IF, interfaceIndex, "setsockopt(IPV6_MULTICAST_IF)", name)
            }
        } else {
            let level = Int32(IPPROTO_IP)
            if let ttl = destination.multicastTTL {
                try setOption(descriptor, level, IP_MULTICAST_TTL, Int32(ttl), "setsockopt(IP_MULTICAST_TTL)", name)
            }
            if let loop = destination.multicastLoopback {
                try setOption(
                    descriptor, level, IP_MULTICAST_LOOP, Int32(loop ? 1 : 0), "setsockopt(IP_MULTICAST_LOOP)", name)
            }
            if interfaceIndex != 0 {
                var request = ip_mreqn()
                request.imr_ifindex = interfaceIndex
                try setOption(descriptor, level, IP_MULTICAST_IF, request, "setsockopt(IP_MULTICAST_IF)", name)
            }
        }
    }

    private static func setOption<T: BitwiseCopyable>(
        _ descriptor: Int32, _ level: Int32, _ option: Int32, _ value: T, _ call: String, _ destination: String
    ) throws(UDPSenderError) {
        let result = withUnsafeBytes(of: value) {
            setsockopt(descriptor, level, option, $0.baseAddress, socklen_t($0.count))
        }
        guard result == 0 else { throw UDPSenderError(destination: destination, call: call, code: errno) }
    }
}
