import CGNUCalls
import Glibc
import Synchronization

/// The one way a thread ends another's wait in `poll()`: the input thread's read of the
/// sequencer, the OSC thread's receive, each TCP link thread's wait for packets. An `eventfd`:
/// one descriptor the sleeper polls beside its own, whose 8-byte counter a wake-up adds to and a
/// drain reads back to zero.
///
/// A producer with work for a busy consumer need not make a system call per item: the sleeper
/// announces itself (``announceSleep()``), then checks its queue once more before it blocks in
/// `poll()`; the producer publishes its work, then looks at that announcement (``notify()``). A
/// full fence on each side between the store and the load (Dekker's pattern) makes sure one of
/// them sees the other. ``wake()`` wakes whether or not the sleeper announced itself (a stop,
/// a reload).
package final class WakeSignal: @unchecked Sendable {
    // @unchecked Sendable: the descriptor is fixed after init; the flag is atomic.

    /// The descriptor the sleeper polls (for `POLLIN`), beside its own descriptors if it has any.
    package let descriptor: Int32
    private let sleeping = Atomic<Bool>(false)

    /// A signal no one has woken yet.
    package init() throws(SystemCallError) {
        switch valueOrErrno(eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))) {
        case .success(let descriptor): self.descriptor = descriptor
        case .failure(let error): throw SystemCallError("eventfd", error)
        }
    }

    deinit {
        close(descriptor)
    }

    /// Producer side, after publishing work: wakes the consumer if it is (about to be) asleep.
    @inline(__always)
    package func notify() {
        // Pairs with the fence in `announceSleep`: our published work is visible to the
        // consumer, or its `sleeping = true` is visible to us.
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        if sleeping.load(ordering: .relaxed) { wake() }
    }

    /// Wakes the consumer unconditionally (a stop, a reload, work handed over rarely); callable
    /// from any thread.
    package func wake() {
        var one: UInt64 = 1
        // Fails only when the counter is about to overflow, with wake-ups still pending.
        _ = valueOrErrno(retryOnInterrupt: { write(descriptor, &one, 8) })
    }

    /// Consumer side, for a sleeper that polls ``descriptor``: call before the last look at its
    /// queue, then poll unless it found work.
    package func announceSleep() {
        sleeping.store(true, ordering: .relaxed)
        // Pairs with the fence in `notify`.
        atomicMemoryFence(ordering: .sequentiallyConsistent)
    }

    /// Consumer side, after the poll.
    package func endSleep() {
        sleeping.store(false, ordering: .relaxed)
    }

    /// Consumer side, after `poll()` reported ``descriptor``: takes every wake-up made so far,
    /// so the next poll waits again.
    package func drain() {
        var count: UInt64 = 0
        // EAGAIN: none was pending.
        _ = valueOrErrno(retryOnInterrupt: { read(descriptor, &count, 8) })
    }
}
