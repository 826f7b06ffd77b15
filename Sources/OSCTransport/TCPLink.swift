import CGNUCalls
import Glibc
import OSC
import Platform
import Storage
import Synchronization

/// One OSC-over-TCP destination: a connection kept up by its own thread, and a bounded queue
/// that carries packets across an outage.
///
/// The input thread hands packets over with ``enqueue(_:kind:)`` and ``wake()``; neither
/// blocks nor allocates (a lock-free byte ring, then a ``WakeSignal`` woken only while the
/// link's thread sleeps). That thread connects without blocking anything else, reconnects with a
/// backoff (0.1 s doubling to 2 s, so a synth's machine that comes back is heard from within
/// two seconds), frames packets (OSC 1.0 length prefix or OSC 1.1 SLIP) and writes them.
///
/// While the connection is down, packets wait, up to ``queueCapacity``. On a full queue a
/// note-on or controller pushes out the oldest packet that is not a note-off; note-offs are
/// kept before anything else, since a lost one leaves a note sounding. When the link connects
/// again, the note-offs of notes whose note-on went out before the outage are sent first, then
/// the rest in order, without the note-ons that waited longer than ``noteOnTimeout`` (a chord
/// played into a dead link should not sound a second later). Every drop is counted by kind.
package final class TCPLink: @unchecked Sendable {
    // @unchecked Sendable: the ring is the one hand-over between the producer and the link
    // thread (an `SPSCRing`); everything else below the ring is the link thread's own.

    /// Where it connects.
    let destination: ResolvedOSCDestination
    package let framing: OSCStreamFraming
    /// The most packets held while the connection is down.
    let queueCapacity: Int
    /// How long a note-on may wait for the connection and still be sent, in nanoseconds.
    let noteOnTimeout: UInt64

    /// The largest packet the link carries; a longer one is dropped and counted.
    static let maximumPacketSize = 65_536
    static let firstBackoff: UInt64 = 100_000_000
    static let longestBackoff: UInt64 = 2_000_000_000
    /// How long a connect may take before it counts as failed: a host that drops SYNs (gone
    /// from the network) would otherwise hold the link for the kernel's two minutes of retries.
    static let connectTimeout: UInt64 = 3_000_000_000
    /// How long ``stop()`` lets a live connection take what is queued.
    static let stopGrace: UInt64 = 500_000_000

    // Producer -> link thread: a record per packet, tagged with its kind.
    private let ring: SPSCRing
    // Written only while the link thread sleeps, so a busy stream costs no system call per flush.
    private let wakeSignal: WakeSignal?
    private let stopping = Atomic<Bool>(false)
    private let stopDeadline = Atomic<UInt64>(0)
    private var thread: SystemThread?
    private let threadSetup: (@Sendable () -> Void)?

    // Counters, relaxed: statistics only.
    private let stateValue = Atomic<Int>(TCPLinkState.connecting.rawValue)
    private let connections = Atomic<Int>(0)
    private let packetsSent = Atomic<Int>(0)
    private let bytesSent = Atomic<Int>(0)
    private let queuedCount = Atomic<Int>(0)
    private let drops = TCPDropCounters()
    private let lostPackets = Atomic<Int>(0)
    private let lastErrorCode = Atomic<Int32>(0)
    private let connectionObservers = Mutex<[@Sendable () -> Void]>([])

    /// The service the link follows, connecting to wherever it is; nil: ``destination``'s address.
    private let service: ServiceTarget?
    // The service's generation the connection was made for (the link thread's).
    private var connectedGeneration: UInt64 = 0
    // The link thread's queue of packets waiting for the connection.
    private let queue: TCPSendQueue
    // Framed bytes handed to the socket but not yet taken by it, and how many packets they hold.
    private let outBytes: FixedBytes
    private var out: UnsafeMutableRawPointer { outBytes.baseAddress }
    private let outCapacity: Int
    private var outStart = 0
    private var outEnd = 0
    private var outPackets = 0

    /// A link to `destination`; ``start()`` begins connecting. `threadSetup` runs first thing on
    /// the link's thread (its scheduling).
    package init(
        destination: ResolvedOSCDestination, framing: OSCStreamFraming, queueCapacity: Int = 1_024,
        noteOnTimeout milliseconds: Int = 1_000, service: ServiceTarget? = nil,
        threadSetup: (@Sendable () -> Void)? = nil
    ) {
        self.threadSetup = threadSetup
        self.service = service
        precondition(queueCapacity >= 1, "TCPLink: a queue needs room")
        self.destination = destination
        self.framing = framing
        self.queueCapacity = queueCapacity
        noteOnTimeout = UInt64(max(milliseconds, 0)) * 1_000_000
        // Room for a burst of full-size packets between two turns of the link thread.
        ring = SPSCRing(minimumCapacity: 1 << 20)
        queue = TCPSendQueue(
            capacity: queueCapacity, noteOnTimeout: noteOnTimeout, largestPacket: Self.maximumPacketSize, drops: drops)
        outCapacity = framing.maximumFramedSize(of: Self.maximumPacketSize)
        outBytes = FixedBytes(count: outCapacity, alignment: 8)
        // Without a wake signal (out of descriptors) the link still works, polling every 10 ms.
        wakeSignal = try? WakeSignal()
        // A service that moved: the thread leaves the old address at once.
        service?.observe { [weak self] in self?.wake() }
    }

    deinit {
        stop()
    }

    /// Starts the link's thread, which connects and keeps the connection up until ``stop()``.
    package func start() {
        guard thread == nil else { return }
        thread = SystemThread(name: "aseqosc-tcp") { [self] in run() }
    }

    /// Ends the thread: over a live connection, what is queued (the note-offs a stopping bridge
    /// sends last) is written first, for at most ``stopGrace``; then the connection is closed.
    package func stop() {
        guard let thread else { return }
        beginStopping()
        thread.join()
        self.thread = nil
    }

    /// Starts ``stop()`` without waiting for it, so that several links write their last
    /// packets at the same time; ``stop()`` then waits.
    func beginStopping() {
        guard thread != nil, !stopping.load(ordering: .relaxed) else { return }
        stopDeadline.store(MonotonicClock.now() &+ Self.stopGrace, ordering: .relaxed)
        stopping.store(true, ordering: .releasing)
        wake()
    }

    // MARK: Producer (the input thread)

    /// Queues `packet` for the link thread; counts a drop if the hand-over ring is full or the
    /// packet is longer than ``maximumPacketSize``. Call ``wake()`` after a batch.
    package func enqueue(_ packet: UnsafeRawBufferPointer, kind: OSCPacketKind) {
        let handed =
            packet.count <= Self.maximumPacketSize
            && ring.write(tag: kind.raw, size: packet.count) { record in
                if let source = packet.baseAddress { record.copyMemory(from: source, byteCount: packet.count) }
            }
        if !handed { drops.count(kind) }
    }

    /// Tells the link thread that packets are waiting (a system call only if it sleeps).
    package func wake() {
        if stopping.load(ordering: .relaxed) { wakeSignal?.wake() } else { wakeSignal?.notify() }
    }

    // MARK: Statistics

    /// Calls `body` on the link's thread each time a connection is made (the first one too),
    /// after the queue was put in order for it: where a replay of last values starts.
    package func observeConnections(_ body: @escaping @Sendable () -> Void) {
        connectionObservers.withLock { $0.append(body) }
    }

    /// Whether the link is connected and its queue at most half full: room for a replay's
    /// values that leaves the rest to live events.
    package var hasRoomForReplay: Bool {
        stateValue.load(ordering: .relaxed) == TCPLinkState.connected.rawValue
            && queuedCount.load(ordering: .relaxed) < queueCapacity / 2
    }

    /// Whether the link is connected now.
    package var isConnected: Bool { stateValue.load(ordering: .relaxed) == TCPLinkState.connected.rawValue }

    /// The counters as they stand (any thread).
    package var counters: TCPLinkCounters {
        let code = lastErrorCode.load(ordering: .relaxed)
        return TCPLinkCounters(
            state: TCPLinkState(rawValue: stateValue.load(ordering: .relaxed)) ?? .waiting,
            reconnects: max(connections.load(ordering: .relaxed) - 1, 0),
            packetsSent: packetsSent.load(ordering: .relaxed), bytesSent: bytesSent.load(ordering: .relaxed),
            queued: queuedCount.load(ordering: .relaxed), droppedNoteOns: drops.noteOns.load(ordering: .relaxed),
            droppedNoteOffs: drops.noteOffs.load(ordering: .relaxed),
            droppedOthers: drops.others.load(ordering: .relaxed),
            staleNoteOns: drops.lateNoteOns.load(ordering: .relaxed),
            lostInBrokenConnections: lostPackets.load(ordering: .relaxed),
            lastError: code == 0 ? nil : Errno(code).description)
    }

    // MARK: The link thread

    private func run() {
        threadSetup?()
        var socket: Int32 = -1
        var connecting = false
        var retryAt: UInt64 = 0
        var connectDeadline: UInt64 = 0
        var backoff = Self.firstBackoff
        var descriptors = [pollfd](repeating: pollfd(), count: 2)

        func disconnect(_ code: Int32) {
            close(socket)
            socket = -1
            connecting = false
            if code != 0 { lastErrorCode.store(code, ordering: .relaxed) }
            if outPackets > 0 { lostPackets.add(outPackets, ordering: .relaxed) }
            outStart = 0
            outEnd = 0
            outPackets = 0
            retryAt = MonotonicClock.now() &+ backoff
            backoff = min(backoff &* 2, Self.longestBackoff)
            stateValue.store(TCPLinkState.waiting.rawValue, ordering: .relaxed)
        }

        func connected() {
            connecting = false
            backoff = Self.firstBackoff
            connections.add(1, ordering: .relaxed)
            stateValue.store(TCPLinkState.connected.rawValue, ordering: .relaxed)
            // After an outage (or before the first connection) the queue is put in the order a
            // receiver needs it: note-offs that end sounding notes first, late note-ons out.
            queue.reorderAfterOutage(now: MonotonicClock.now())
            for observer in connectionObservers.withLock({ $0 }) { observer() }
        }

        while true {
            let ending = stopping.load(ordering: .acquiring)
            // What the queue has room for; the rest waits in the ring while the socket takes
            // packets, and is queued by the queue's rules (drops) only once it stops taking them.
            var ringLeft = drainRing(makingRoom: false)
            if let service, service.generation != connectedGeneration {
                // The service moved (or left, or came back): connect again to where it is now.
                if socket >= 0 { disconnect(0) }
                retryAt = MonotonicClock.now()
                backoff = Self.firstBackoff
            }
            if socket < 0 && !ending && MonotonicClock.now() >= retryAt {
                stateValue.store(TCPLinkState.connecting.rawValue, ordering: .relaxed)
                switch openConnection() {
                case .failure(let code): disconnect(code)
                case .success(let (descriptor, done)):
                    socket = descriptor
                    connecting = !done
                    connectDeadline = MonotonicClock.now() &+ Self.connectTimeout
                    if done { connected() }
                }
            }
            while socket >= 0 && !connecting {
                let (code, blocked) = writeOut(socket)
                if code != 0 {
                    disconnect(code)
                } else if !blocked && ringLeft {
                    ringLeft = drainRing(makingRoom: false)
                    continue
                }
                break
            }
            if ringLeft { _ = drainRing(makingRoom: true) }
            queuedCount.store(queue.count + outPackets, ordering: .relaxed)
            if ending {
                // Only a live connection with something left to write is worth the wait.
                let idle = queue.count == 0 && outEnd == outStart
                if socket < 0 || connecting || idle || MonotonicClock.now() >= stopDeadline.load(ordering: .relaxed) {
                    break
                }
            }

            descriptors[0] = pollfd(fd: wakeSignal?.descriptor ?? -1, events: Int16(POLLIN), revents: 0)
            var events = Int16(POLLIN)
            if connecting || outEnd > outStart || queue.count > 0 { events |= Int16(POLLOUT) }
            descriptors[1] = pollfd(fd: socket, events: events, revents: 0)
            var timeout: Int32 = -1
            if socket < 0 || connecting {
                let now = MonotonicClock.now()
                let until = socket < 0 ? retryAt : connectDeadline
                timeout = until > now ? Int32(clamping: (until - now + 999_999) / 1_000_000) : 0
            }
            if wakeSignal == nil && (timeout < 0 || timeout > 10) { timeout = 10 }
            wakeSignal?.announceSleep()
            // A move of the service after the check at the top found the link awake.
            let moved = service.map { $0.generation != connectedGeneration } ?? false
            if !ring.isEmpty
                || (stopping.load(ordering: .relaxed) && !ending) || moved
            {
                timeout = 0
            }
            if ending { timeout = 10 }
            let polled = valueOrErrno(poll(&descriptors, socket >= 0 ? 2 : 1, timeout))
            wakeSignal?.endSleep()
            guard case .success(let ready) = polled else { continue }
            if connecting && ready == 0 && MonotonicClock.now() >= connectDeadline {
                disconnect(ETIMEDOUT)
                continue
            }
            if descriptors[0].revents != 0 {
                wakeSignal?.drain()
            }
            guard socket >= 0, descriptors[1].revents != 0 else { continue }
            let revents = Int32(descriptors[1].revents)
            if connecting {
                let error = pendingSocketError(socket)
                if error == nil && revents & Int32(POLLOUT) != 0 {
                    connected()
                } else {
                    disconnect(error?.code ?? ECONNREFUSED)
                }
                continue
            }
            if revents & (Int32(POLLIN) | Int32(POLLERR) | Int32(POLLHUP)) != 0 {
                // A receiver may answer (OSCQuery servers, /status replies); nothing is read
                // from it, but a closed or reset connection shows up here first.
                let code = discardIncoming(socket)
                if code != 0 { disconnect(code) }
            }
        }
        if socket >= 0 { close(socket) }
    }

    private enum Opened {
        case success((Int32, Bool))
        case failure(Int32)
    }

    /// A non-blocking connect: the descriptor and whether it connected already.
    private func openConnection() -> Opened {
        var address = destination.address
        if let service {
            let (current, generation) = service.snapshot
            connectedGeneration = generation
            // Absent: tried again after the backoff, and sooner when the target moves (wake).
            guard let current else { return .failure(EHOSTDOWN) }
            address = current
        }
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        let descriptor: Int32
        switch valueOrErrno(socket(address.family, type, 0)) {
        case .success(let opened): descriptor = opened
        case .failure(let error): return .failure(error.code)
        }
        // A keypress goes out now, not after Nagle's wait for the previous packet's ACK.
        setOption(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, 1)
        // A receiver that vanished (Wi-Fi out of range, a machine switched off) is noticed in
        // seconds rather than in the kernel's default quarter of an hour.
        setOption(descriptor, SOL_SOCKET, SO_KEEPALIVE, 1)
        setOption(descriptor, Int32(IPPROTO_TCP), TCP_KEEPIDLE, 2)
        setOption(descriptor, Int32(IPPROTO_TCP), TCP_KEEPINTVL, 1)
        setOption(descriptor, Int32(IPPROTO_TCP), TCP_KEEPCNT, 3)
        setOption(descriptor, Int32(IPPROTO_TCP), TCP_USER_TIMEOUT, 5_000)
        switch address.withSockaddr({ nothingOrErrno(connect(descriptor, $0, $1)) }) {
        case .success: return .success((descriptor, true))
        case .failure(.inProgress): return .success((descriptor, false))
        case .failure(let error):
            close(descriptor)
            return .failure(error.code)
        }
    }

    private func setOption(_ descriptor: Int32, _ level: Int32, _ option: Int32, _ value: Int32) {
        _ = setSocketOption(descriptor, level, option, value)
    }

    /// Reads and throws away what the receiver sent; an errno (or EPIPE for an orderly close)
    /// if the connection is over.
    private func discardIncoming(_ socket: Int32) -> Int32 {
        var buffer = (UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        while true {
            let received = withUnsafeMutableBytes(of: &buffer) { buffer in
                valueOrErrno(retryOnInterrupt: { recv(socket, buffer.baseAddress, buffer.count, Int32(MSG_DONTWAIT)) })
            }
            switch received {
            case .success(let count): if count == 0 { return EPIPE }
            case .failure(let error): return error == .wouldBlock ? 0 : error.code
            }
        }
    }

    /// Writes framed packets while the socket takes them: the errno that broke the connection
    /// (0 if none), and whether the socket stopped taking bytes (rather than the queue running dry).
    private func writeOut(_ socket: Int32) -> (Int32, blocked: Bool) {
        while true {
            if outStart == outEnd {
                outStart = 0
                outEnd = 0
                outPackets = 0
                guard fillOut() else { return (0, false) }
            }
            let sent: Int
            switch valueOrErrno(retryOnInterrupt: {
                send(socket, out + outStart, outEnd - outStart, Int32(MSG_DONTWAIT) | Int32(MSG_NOSIGNAL))
            }) {
            case .success(let count): sent = count
            case .failure(let error): return error == .wouldBlock ? (0, true) : (error.code, false)
            }
            outStart += sent
            if outStart == outEnd {
                packetsSent.add(outPackets, ordering: .relaxed)
                bytesSent.add(outEnd, ordering: .relaxed)
            }
        }
    }

    /// Frames queued packets into `out` while they fit; false if nothing was queued.
    private func fillOut() -> Bool {
        var moved = false
        while let packet = queue.first, outEnd + framing.maximumFramedSize(of: packet.count) <= outCapacity {
            outEnd += framing.frame(packet, into: out + outEnd)
            outPackets += 1
            queue.removeFirst()
            moved = true
        }
        return moved
    }

    /// Moves what the producer handed over into the link's own queue: with `makingRoom`, all of
    /// it, by the queue's rules when it is full; without, only what fits as it is. Returns
    /// whether records are left in the ring.
    private func drainRing(makingRoom: Bool) -> Bool {
        // One clock reading per drain, taken only when there is something to queue.
        var now: UInt64?
        return ring.read { tag, packet in
            if !makingRoom && !queue.fits(packetOf: packet.count) { return false }
            let time = now ?? MonotonicClock.now()
            now = time
            queue.append(packet, kind: OSCPacketKind(raw: tag), now: time)
            return true
        }
    }
}
