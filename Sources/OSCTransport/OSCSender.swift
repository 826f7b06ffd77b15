import CGNUCalls
import Glibc
import Platform
import Storage

/// Fans OSC packets out over UDP and TCP: queue packets for any destinations, then ``flush()``
/// sends them with one `sendmmsg` per UDP destination, and hands a TCP destination's to its
/// ``TCPLink``, whose own thread writes them.
///
/// Each destination has its own non-blocking socket, `connect`ed to it. A connected UDP socket
/// is how Linux reports an ICMP "port unreachable" (as `ECONNREFUSED` on a later send) to the
/// one destination it concerns, and it lets multicast options differ per destination; an
/// unconnected socket shared by a family would drop those errors or pin them on whichever
/// destination sends next. A failing destination is counted by reason in ``statistics`` and
/// never delays the others: every call uses `MSG_DONTWAIT`, and a full socket buffer drops
/// that destination's remaining packets for this flush.
///
/// Each destination has its own queue, filled as packets are queued: its packets' bytes go into
/// one arena shared by all, and their headers into the destination's own run of `sendmmsg`
/// headers, so a flush hands each destination's run to the kernel as it stands, with nothing
/// to gather or scan, and the cost of a destination does not depend on how many others there
/// are. The arena grows with the destinations (room for a full queue of small packets to each),
/// so a fan-out to many destinations still sends each one ``batchCapacity`` packets per call.
///
/// Used by one thread. Nothing in ``queue(_:to:)`` or ``flush()`` allocates or blocks.
package final class OSCSender {
    /// The destinations, in the order ``queue(_:to:)`` numbers them.
    package let destinations: [ResolvedOSCDestination]
    @usableFromInline let destinationCount: Int
    /// Counters any thread may read.
    package let statistics: UDPSendStatistics
    /// The most packets one destination's queue holds; one more flushes every queue first.
    package let batchCapacity: Int
    /// The largest packet that is batched; a larger one is sent at once, after a flush.
    package let slotSize: Int
    /// The bytes the queued packets share: ``batchCapacity`` packets of ``slotSize`` bytes, and
    /// ``batchCapacity`` packets of ``typicalPacketSize`` for each further destination. A packet
    /// that leaves less than ``slotSize`` free flushes every queue.
    let arenaCapacity: Int
    /// The room per packet the arena has for destinations after the first: more than a channel
    /// event takes in any scheme (20 to 48 bytes).
    static let typicalPacketSize = 64

    private let sockets: FixedBuffer<Int32>
    /// Each destination's TCP link, by destination index (nil: UDP).
    package let links: [TCPLink?]
    // Whether any destination is TCP: the per-flush check of a sender without.
    private let hasLinks: Bool
    /// Per destination, where the service it follows is now; nil for a fixed address.
    package let serviceTargets: [ServiceTarget?]
    private let hasServices: Bool
    // The sending thread's view of each service destination: the target's generation its
    // socket was last connected for, and whether the service was there then.
    private let followedGenerations: FixedBuffer<UInt64>
    private let servicePresent: FixedBuffer<Bool>
    // The packets' bytes, end to end in queue order (OSC packets are multiples of 4 bytes, so
    // each starts 4-byte aligned; nothing needs more).
    @usableFromInline let arenaBytes: FixedBytes
    @inlinable var arena: UnsafeMutableRawPointer { arenaBytes.baseAddress }
    // The most arena bytes the queued packets may take with room left for one more of
    // `slotSize`: what `nextSlot()` promises.
    @usableFromInline let arenaLimit: Int
    // One queue per destination, each with its own run of `batchCapacity` headers.
    @usableFromInline let queues: FixedBuffer<DestinationQueue>
    // What the queues' runs are cut from.
    private let headers: FixedBuffer<aseqosc_mmsghdr>
    private let vectors: FixedBuffer<iovec>
    private let kinds: FixedBuffer<OSCPacketKind>
    // The destinations with packets queued, in the order of their first packet, so a flush
    // visits only those.
    @usableFromInline let active: FixedBuffer<Int>
    // Plain memory rather than stored `var`s, which would pay a dynamic exclusivity check on
    // every queued packet: [0] the arena bytes the queued packets take, [1] how many
    // destinations are in `active` (none: nothing is queued).
    @usableFromInline let state = FixedBuffer(repeating: 0, count: 2)
    // The sending thread's record of each UDP destination's refusals, published as
    // ``UDPSendStatistics/reach(of:)``.
    private let watches: FixedBuffer<ReachWatch>
    /// How long datagrams must go unrefused after a refusal before a destination counts as
    /// reached again. Linux answers datagrams to a closed port on another host at most about
    /// once a second (its ICMP rate limit), so a shorter quiet may be the limit, not a receiver.
    package let refusalSettle: UInt64

    /// What the sending thread knows of one destination's refusals.
    private struct ReachWatch {
        /// When the last two sends that were not refused were made.
        var lastSend: UInt64 = 0
        var sendBefore: UInt64 = 0
        /// The start of the current run of refusals; 0 while not refused.
        var refusedSince: UInt64 = 0
        /// The first send after the last refusal; 0 before it.
        var quietSince: UInt64 = 0
    }

    /// One destination's packets waiting for a flush: a run of `sendmmsg` headers, each pointed
    /// once, in init, at its own vector, so queuing a packet writes only its vector, and a flush
    /// hands the first `count` headers to the kernel as they are.
    @usableFromInline struct DestinationQueue {
        @usableFromInline let headers: UnsafeMutablePointer<aseqosc_mmsghdr>
        @usableFromInline let vectors: UnsafeMutablePointer<iovec>
        /// What each packet is, for a TCP link's queue after an outage.
        @usableFromInline let kinds: UnsafeMutablePointer<OSCPacketKind>
        /// How many packets are queued.
        @usableFromInline var count: Int
        /// Their bytes: what a `sendmmsg` that sends everything sent, without summing per message.
        @usableFromInline var bytes: Int
    }

    /// Opens one socket per UDP destination and applies its options (throws naming the call that
    /// failed), and starts each TCP destination's link, whose thread first runs `linkThreadSetup`.
    package init(
        destinations: [ResolvedOSCDestination], batchCapacity: Int = 64, slotSize: Int = 1_536,
        refusalSettle: UInt64 = 2_000_000_000, linkThreadSetup: (@Sendable () -> Void)? = nil
    ) throws(UDPSenderError) {
        precondition(batchCapacity >= 1 && slotSize >= 1, "OSCSender: batch capacity and slot size must be positive")
        var descriptors: [Int32] = []
        do throws(UDPSenderError) {
            for destination in destinations {
                descriptors.append(destination.destination.tcp == nil ? try Self.openSocket(for: destination) : -1)
            }
        } catch {
            for descriptor in descriptors where descriptor >= 0 { close(descriptor) }
            throw error
        }
        self.destinations = destinations
        destinationCount = destinations.count
        let targets = destinations.map { resolved in
            resolved.destination.service.map { ServiceTarget(name: $0.name, type: $0.type) }
        }
        serviceTargets = targets
        hasServices = targets.contains { $0 != nil }
        links = destinations.indices.map { index in
            let resolved = destinations[index]
            return resolved.destination.tcp.map { options in
                TCPLink(
                    destination: resolved, framing: options.framing, queueCapacity: options.queueCapacity,
                    noteOnTimeout: options.noteOnTimeoutMilliseconds, service: targets[index],
                    threadSetup: linkThreadSetup)
            }
        }
        hasLinks = links.contains { $0 != nil }
        for link in links { link?.start() }
        self.batchCapacity = batchCapacity
        self.slotSize = slotSize
        statistics = UDPSendStatistics(destinationCount: destinations.count)
        let count = max(destinations.count, 1)
        arenaCapacity = batchCapacity * slotSize + (count - 1) * batchCapacity * Self.typicalPacketSize
        arenaLimit = arenaCapacity - slotSize
        sockets = FixedBuffer(count: count) { $0 < descriptors.count ? descriptors[$0] : -1 }
        arenaBytes = FixedBytes(count: arenaCapacity)
        // Touched now, so that no page fault waits for the first packets.
        arenaBytes.bytes.initializeMemory(as: UInt8.self, repeating: 0)
        headers = FixedBuffer(repeating: aseqosc_mmsghdr(), count: count * batchCapacity)
        vectors = FixedBuffer(repeating: iovec(), count: count * batchCapacity)
        kinds = FixedBuffer(repeating: OSCPacketKind.other, count: count * batchCapacity)
        let (headerBase, vectorBase, kindBase) = (headers.baseAddress, vectors.baseAddress, kinds.baseAddress)
        for index in 0..<count * batchCapacity {
            headerBase[index].msg_hdr.msg_iov = vectorBase + index
            headerBase[index].msg_hdr.msg_iovlen = 1
        }
        queues = FixedBuffer(count: count) { destination in
            DestinationQueue(
                headers: headerBase + destination * batchCapacity, vectors: vectorBase + destination * batchCapacity,
                kinds: kindBase + destination * batchCapacity, count: 0, bytes: 0)
        }
        active = FixedBuffer(repeating: 0, count: count)
        followedGenerations = FixedBuffer(repeating: 0, count: count)
        servicePresent = FixedBuffer(repeating: false, count: count)
        watches = FixedBuffer(repeating: ReachWatch(), count: count)
        self.refusalSettle = refusalSettle
    }

    /// Stops the TCP links, each first writing what is queued over a live connection (at most
    /// ``TCPLink/stopGrace``, all at once): the last thing a stopping bridge does with a sender.
    package func stopLinks() {
        for link in links { link?.beginStopping() }
        for link in links { link?.stop() }
    }

    deinit {
        // A link's thread holds it until stopped.
        stopLinks()
        var i = 0
        while i < destinations.count {
            if sockets[i] >= 0 { close(sockets[i]) }
            i += 1
        }
    }

    /// Copies `packet` into the queue of `destination` (an index into ``destinations``).
    /// A packet larger than ``slotSize`` is sent at once, after everything queued.
    package func queue(_ packet: UnsafeRawBufferPointer, to destination: Int, kind: OSCPacketKind = .other) {
        precondition(destination >= 0 && destination < destinations.count, "OSCSender: no destination \(destination)")
        guard packet.count <= slotSize else {
            // Whatever is queued goes first, so this destination's packets keep their order.
            flush()
            if hasLinks, let link = links[destination] {
                link.enqueue(packet, kind: kind)
                link.wake()
            } else {
                sendNow(packet.baseAddress, packet.count, to: destination, now: MonotonicClock.now())
            }
            return
        }
        if let source = packet.baseAddress { (arena + state[0]).copyMemory(from: source, byteCount: packet.count) }
        commit(packet.count, to: destination, kind: kind)
    }

    /// The room the next queued packet goes into, ``slotSize`` bytes, for writing a packet in
    /// place; ``commit(_:to:)`` queues it. Writing in place saves the copy that
    /// ``queue(_:to:)`` makes.
    @inlinable @inline(__always)
    public func nextSlot() -> UnsafeMutableRawBufferPointer {
        // Always room: a commit that leaves less than `slotSize` flushes.
        UnsafeMutableRawBufferPointer(start: arena + state[0], count: slotSize)
    }

    /// Queues the `byteCount` bytes written into ``nextSlot()`` for `destination`. A packet for
    /// a full queue flushes every queue first; a packet that leaves the arena less than
    /// ``slotSize`` flushes every queue after it. `kind` matters only to a TCP destination.
    @inlinable @inline(__always)
    public func commit(_ byteCount: Int, to destination: Int, kind: OSCPacketKind = .other) {
        precondition(
            destination >= 0 && destination < destinationCount && byteCount <= slotSize,
            "OSCSender: no destination \(destination), or \(byteCount) bytes past the slot")
        // Each read once: the stores below could alias them as far as the compiler knows.
        let offset = state[0]
        let queue = queues.baseAddress + destination
        var count = queue.pointee.count
        if count == batchCapacity {
            // What was queued before goes first. This packet stays where `nextSlot()` put it,
            // and the arena before it is not used again until the next flush.
            flush()
            count = 0
        }
        if count == 0 {
            active[state[1]] = destination
            state[1] &+= 1
        }
        queue.pointee.vectors[count] = iovec(iov_base: arena + offset, iov_len: byteCount)
        queue.pointee.kinds[count] = kind
        queue.pointee.count = count &+ 1
        queue.pointee.bytes &+= byteCount
        let used = offset &+ byteCount
        state[0] = used
        if used > arenaLimit { flush() }
    }

    /// Sends everything queued: one `sendmmsg` per destination with packets (a `send` for a
    /// destination with one packet), each destination's packets in queue order.
    package func flush() {
        let count = state[1]
        guard count > 0 else { return }
        // One reading for the whole flush: when each destination was last sent to, for its reach.
        let now = MonotonicClock.now()
        if destinationCount == 1 {
            // The common case, `flushActive` specialised: no list to read, no registers to save
            // for a loop.
            flush(0, now: now)
        } else {
            flushActive(count, now: now)
        }
        state[0] = 0
        state[1] = 0
    }

    /// Flushes the first `count` destinations of `active`.
    @inline(never)
    private func flushActive(_ count: Int, now: UInt64) {
        var index = 0
        while index < count {
            flush(active[index], now: now)
            index &+= 1
        }
    }

    @inline(__always)
    private func flush(_ destination: Int, now: UInt64) {
        let queue = queues.baseAddress + destination
        let packets = queue.pointee.count
        if hasLinks, let link = links[destination] {
            handOver(queue, packets, to: link)
        } else if hasServices, let target = serviceTargets[destination], !follow(target, destination) {
            statistics.recordFailure(destination, .serviceAbsent, count: packets)
        } else if packets == 1 {
            // A played note alone: `send` takes a shorter way through the kernel than a
            // `sendmmsg` of one (no header or vector to read from us).
            let vector = queue.pointee.vectors[0]
            sendNow(vector.iov_base, vector.iov_len, to: destination, now: now)
        } else {
            sendBatch(queue.pointee.headers, packets, to: destination, bytes: queue.pointee.bytes, now: now)
        }
        queue.pointee.count = 0
        queue.pointee.bytes = 0
    }

    /// Whether the service `destination` follows is on the network, its socket connected to
    /// where it is: connected again only after the target moved (one atomic load otherwise).
    @inline(__always)
    private func follow(_ target: ServiceTarget, _ destination: Int) -> Bool {
        let generation = target.generation
        if generation != followedGenerations[destination] { reconnect(destination, to: target) }
        return servicePresent[destination]
    }

    @inline(never)
    private func reconnect(_ destination: Int, to target: ServiceTarget) {
        let (current, generation) = target.snapshot
        followedGenerations[destination] = generation
        guard let address = current else {
            servicePresent[destination] = false
            return
        }
        // A UDP socket connected again sends to the new address from the next datagram on.
        let result = address.withSockaddr { connect(sockets[destination], $0, $1) }
        servicePresent[destination] = result == 0
    }

    /// Gives a TCP destination's queued packets to its link's thread.
    @inline(never)
    private func handOver(_ queue: UnsafeMutablePointer<DestinationQueue>, _ count: Int, to link: TCPLink) {
        var index = 0
        while index < count {
            let vector = queue.pointee.vectors[index]
            link.enqueue(
                UnsafeRawBufferPointer(start: vector.iov_base, count: vector.iov_len), kind: queue.pointee.kinds[index])
            index &+= 1
        }
        link.wake()
    }

    /// Sends the `count` messages of `headers`, `bytes` in all, to `destination`, counting what
    /// went and what failed.
    private func sendBatch(
        _ headers: UnsafeMutablePointer<aseqosc_mmsghdr>, _ count: Int, to destination: Int, bytes: Int, now: UInt64
    ) {
        let descriptor = sockets[destination]
        var next = 0
        while next < count {
            let result = valueOrErrno(retryOnInterrupt: {
                aseqosc_sendmmsg(descriptor, headers + next, UInt32(count - next), Int32(MSG_DONTWAIT))
            })
            statistics.recordSendCall(destination)
            switch result {
            case .success(let sent) where sent > 0:
                noteSent(destination, now: now)
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
            case .success:
                // None went, yet no error: count the first as failed and go on after it.
                statistics.recordFailure(destination, .other)
                next += 1
            case .failure(let error):
                // sendmmsg stops at the first message that fails and reports it only when it is
                // the first of the call: count it and go on after it.
                let reason = UDPSendFailure(error)
                if reason == .bufferFull {
                    // The rest would only fail the same way; they are dropped, not waited for.
                    statistics.recordFailure(destination, reason, count: count - next)
                    return
                }
                if reason == .connectionRefused { noteRefused(destination, now: now) }
                statistics.recordFailure(destination, reason)
                next += 1
            }
        }
    }

    /// Reads a datagram the receiver of UDP destination `destination` sent back (its socket is
    /// connected, so only that receiver's) into `buffer`; nil when none waits, or for a TCP
    /// destination. Never waits. An error the kernel noted on the socket (the receiver's port
    /// unreachable) is read as an empty datagram, and cleared.
    package func receiveReply(from destination: Int, into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        guard links[destination] == nil else { return nil }
        let received = valueOrErrno(retryOnInterrupt: {
            recv(sockets[destination], buffer.baseAddress, buffer.count, Int32(MSG_DONTWAIT))
        })
        switch received {
        case .success(let size): return size
        case .failure(.wouldBlock): return nil
        case .failure(let error):
            // The refusal a later send would have reported, taken here instead.
            if error == .connectionRefused { noteRefused(destination, now: MonotonicClock.now()) }
            return 0
        }
    }

    @inline(__always)
    private func sendNow(_ bytes: UnsafeRawPointer?, _ count: Int, to destination: Int, now: UInt64) {
        let result = valueOrErrno(retryOnInterrupt: { send(sockets[destination], bytes, count, Int32(MSG_DONTWAIT)) })
        statistics.recordSendCall(destination)
        switch result {
        case .success(let sent):
            noteSent(destination, now: now)
            statistics.recordSent(destination, bytes: sent)
        case .failure(let error):
            let reason = UDPSendFailure(error)
            if reason == .connectionRefused { noteRefused(destination, now: now) }
            statistics.recordFailure(destination, reason)
        }
    }

    // MARK: Reach

    /// A send to `destination` went out at `now`: after a run of refusals, ``refusalSettle`` of
    /// sends that came back unrefused ends the run.
    @inline(__always)
    private func noteSent(_ destination: Int, now: UInt64) {
        let watch = watches.baseAddress + destination
        if watch.pointee.refusedSince != 0 { settle(destination, watch, now: now) }
        watch.pointee.sendBefore = watch.pointee.lastSend
        watch.pointee.lastSend = now
    }

    @inline(never)
    private func settle(_ destination: Int, _ watch: UnsafeMutablePointer<ReachWatch>, now: UInt64) {
        if watch.pointee.quietSince == 0 {
            watch.pointee.quietSince = now
        } else if now &- watch.pointee.quietSince >= refusalSettle {
            watch.pointee.refusedSince = 0
            watch.pointee.quietSince = 0
            statistics.recordReach(destination, refusedSince: 0, lastThrough: 0)
        }
    }

    /// A send to `destination` at `now` reported that an earlier datagram was refused: the last
    /// one sent, most likely, so the one before it is the last known to have got through.
    @inline(never)
    private func noteRefused(_ destination: Int, now: UInt64) {
        let watch = watches.baseAddress + destination
        watch.pointee.quietSince = 0
        guard watch.pointee.refusedSince == 0 else { return }
        watch.pointee.refusedSince = now
        statistics.recordReach(destination, refusedSince: now, lastThrough: watch.pointee.sendBefore)
    }
}
