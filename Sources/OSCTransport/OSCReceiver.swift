import Endpoints
import Glibc
import Platform
import Storage
import Synchronization

/// One thread's OSC input: a ``UDPReceiver``, a ``TCPReceiver``, or both (on the same port, as
/// a user who names one port expects), waited on together in `poll()` with a ``WakeSignal``, so
/// ``stop()`` ends the loop at once from any thread and every packet reaches the same handler
/// in arrival order, whichever transport brought it. UDP alone, with nothing timed to do, waits
/// in the receive itself (see ``UDPReceiver``).
package final class OSCReceiver: @unchecked Sendable {
    // @unchecked Sendable: the poll set and the receivers' buffers belong to the thread inside
    // `run`; other threads only call `stop()` and read the statistics.

    package let udp: UDPReceiver?
    package let tcp: TCPReceiver?

    private let wakeSignal: WakeSignal
    private let stopRequested = Atomic<Bool>(false)
    private let pollDescriptors: FixedBuffer<pollfd>
    private var descriptors: UnsafeMutablePointer<pollfd> { pollDescriptors.baseAddress }
    private let descriptorCount: Int

    /// Waits on `udp` and `tcp` (at least one of them).
    package init(udp: UDPReceiver?, tcp: TCPReceiver?) throws(ListenError) {
        precondition(udp != nil || tcp != nil, "OSCReceiver: nothing to receive from")
        self.udp = udp
        self.tcp = tcp
        do {
            wakeSignal = try WakeSignal()
        } catch {
            throw ListenError(endpoint: (udp?.boundAddress ?? tcp!.boundAddress).description, .system(error))
        }
        descriptorCount = 2 + (tcp?.pollDescriptorCount ?? 0)
        pollDescriptors = FixedBuffer(repeating: pollfd(fd: -1, events: 0, revents: 0), count: descriptorCount)
    }

    /// Makes ``run(tick:beforeBatch:_:)`` return soon; callable from any thread. The sockets
    /// receive nothing more.
    package func stop() {
        // Releasing: pairs with the acquiring loads in `run` and in the UDP receiver.
        stopRequested.store(true, ordering: .releasing)
        wakeSignal.wake()
        udp?.stop()
    }

    /// Ends the current wait of a ``run(tick:beforeBatch:clock:wakeable:_:)`` started
    /// `wakeable`, so `tick` runs soon; callable from any thread.
    package func wake() {
        wakeSignal.wake()
    }

    /// Closes every socket (after ``run(tick:beforeBatch:_:)`` has returned), freeing the port at once.
    package func close() {
        udp?.close()
        tcp?.close()
    }

    /// Receives until ``stop()``. `handler` gets each packet (valid only during the call) and
    /// its sender; `beforeBatch` runs before the packets of each UDP batch or TCP round are handed
    /// on (the place to read the clock once for them all); `tick` runs after every wake-up and
    /// returns how long `poll` may wait next, in milliseconds (-1: until a packet or a wake-up).
    /// `clock` gives the time of each TCP round on `MonotonicClock`, which the TCP receiver
    /// keeps its connections' idle times and frame deadlines by; it is called right after `beforeBatch`, so it may return what that one just read.
    ///
    /// `wakeable`: every wait is a `poll` that ``wake()`` can end. Otherwise a UDP-only receiver
    /// with nothing timed waits in a single `recvfrom`, one system call less per packet, which
    /// only ``stop()`` ends.
    package func run(
        tick: () -> Int32, beforeBatch: () -> Void = {}, clock: () -> UInt64 = MonotonicClock.now,
        wakeable: Bool = false, _ handler: (UnsafeRawBufferPointer, PacketSource) -> Void
    ) {
        descriptors[0] = pollfd(fd: wakeSignal.descriptor, events: Int16(POLLIN), revents: 0)
        descriptors[1] = pollfd(fd: udp?.socket ?? -1, events: Int16(POLLIN), revents: 0)
        // A frame under way on TCP may shorten the wait, to close its connection when overdue.
        var timeout = tick()
        if let tcp { timeout = tcp.pollTimeout(timeout) }
        // Acquiring: pairs with the releasing store in `stop()`.
        while !stopRequested.load(ordering: .acquiring) {
            if timeout < 0, tcp == nil, !wakeable, let udp {
                udp.receiveAvailable(handler, beforeBatch: beforeBatch, tick: tick, waitingForOne: true)
                timeout = tick()
                continue
            }
            // Connections come and go between rounds, so the TCP part is written afresh.
            tcp?.fillPollDescriptors(descriptors + 2)
            let ready = valueOrErrno(retryOnInterrupt: { poll(descriptors, nfds_t(descriptorCount), timeout) })
            guard case .success(let count) = ready else { return }
            if count > 0 {
                if descriptors[0].revents != 0 { wakeSignal.drain() }
                if let udp, descriptors[1].revents != 0 {
                    udp.receiveAvailable(handler, beforeBatch: beforeBatch, tick: tick)
                }
                if let tcp {
                    beforeBatch()
                    tcp.service(descriptors + 2, now: clock(), handler)
                }
            }
            timeout = tick()
            if let tcp { timeout = tcp.pollTimeout(timeout) }
        }
    }
}
