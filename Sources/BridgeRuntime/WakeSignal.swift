import Glibc
import Platform
import Synchronization

/// Lets the input thread wake the pipeline thread only when it is asleep, so that in a busy
/// stream of events neither side makes a system call per event.
///
/// The sleeper announces itself in `sleeping`, then checks its queue once more before it blocks
/// in `poll()`; the waker publishes its work, then looks at `sleeping`. A full fence on each side
/// between the store and the load (Dekker's pattern) makes sure one of them sees the other.
public final class WakeSignal: @unchecked Sendable {
    // @unchecked Sendable: the descriptors are fixed after init; the flag is atomic.

    private let readEnd: Int32
    private let writeEnd: Int32
    private let sleeping = Atomic<Bool>(false)

    public init() throws(BridgeError) {
        var ends: (Int32, Int32) = (-1, -1)
        let created = withUnsafeMutableBytes(of: &ends) { pipe($0.baseAddress!.assumingMemoryBound(to: Int32.self)) }
        guard created == 0 else { throw .system(.current("pipe")) }
        (readEnd, writeEnd) = ends
        for end in [readEnd, writeEnd] {
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
    }

    deinit {
        close(readEnd)
        close(writeEnd)
    }

    /// Producer side, after publishing work: wakes the consumer if it is (about to be) asleep.
    @inline(__always)
    public func notify() {
        // Pairs with the fence in `sleep`: our published work is visible to the consumer, or
        // its `sleeping = true` is visible to us.
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
        sleeping.store(true, ordering: .relaxed)
        // Pairs with the fence in `notify`.
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        if !hasWork() {
            var descriptor = pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)
            _ = poll(&descriptor, 1, timeoutMilliseconds)
        }
        sleeping.store(false, ordering: .relaxed)
        var sink = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        while withUnsafeMutableBytes(of: &sink, { read(readEnd, $0.baseAddress, $0.count) }) > 0 {}
    }
}
