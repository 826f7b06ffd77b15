import Glibc
import Synchronization

/// Lets a producer wake a consumer thread only when it is asleep, so that in a busy stream
/// neither side makes a system call per item: each TCP link thread, woken by the input thread's
/// flush.
///
/// The sleeper announces itself (`sleeping`), then checks its queue once more before it blocks
/// in `poll()`; the waker publishes its work, then looks at `sleeping`. A full fence on each side
/// between the store and the load (Dekker's pattern) makes sure one of them sees the other.
public final class WakeSignal: @unchecked Sendable {
    // @unchecked Sendable: the descriptors are fixed after init; the flag is atomic.

    /// The end the sleeper polls, beside its own descriptors if it has any.
    public let descriptor: Int32
    private let writeEnd: Int32
    private let sleeping = Atomic<Bool>(false)

    public init() throws(SystemCallError) {
        var ends: (Int32, Int32) = (-1, -1)
        let created = withUnsafeMutableBytes(of: &ends) { pipe($0.baseAddress!.assumingMemoryBound(to: Int32.self)) }
        guard created == 0 else { throw .current("pipe") }
        (descriptor, writeEnd) = ends
        for end in [descriptor, writeEnd] {
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
    }

    deinit {
        close(descriptor)
        close(writeEnd)
    }

    /// Producer side, after publishing work: wakes the consumer if it is (about to be) asleep.
    @inline(__always)
    public func notify() {
        // Pairs with the fence in `announceSleep`: our published work is visible to the
        // consumer, or its `sleeping = true` is visible to us.
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        if sleeping.load(ordering: .relaxed) { wake() }
    }

    /// Wakes the consumer unconditionally (shutdown, reload).
    public func wake() {
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }

    /// Consumer side: blocks until notified or `timeoutMilliseconds` pass (-1: no timeout),
    /// unless `hasWork()` says there is work after all.
    public func sleep(timeoutMilliseconds: Int32, unless hasWork: () -> Bool) {
        announceSleep()
        if !hasWork() {
            var polled = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            _ = poll(&polled, 1, timeoutMilliseconds)
        }
        endSleep()
        drain()
    }

    /// Consumer side, for a sleeper that polls ``descriptor`` with descriptors of its own: call
    /// before the last look at its queue, then poll unless it found work.
    public func announceSleep() {
        sleeping.store(true, ordering: .relaxed)
        // Pairs with the fence in `notify`.
        atomicMemoryFence(ordering: .sequentiallyConsistent)
    }

    /// Consumer side, after the poll.
    public func endSleep() {
        sleeping.store(false, ordering: .relaxed)
    }

    /// Empties the pipe of the wake-ups written to it.
    public func drain() {
        var sink = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        while withUnsafeMutableBytes(of: &sink, { read(descriptor, $0.baseAddress, $0.count) }) > 0 {}
    }
}
