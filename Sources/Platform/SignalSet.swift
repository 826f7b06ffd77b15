import Glibc

/// Signals taken out of asynchronous delivery and waited for instead (`sigtimedwait`): made
/// before any thread starts, so every thread inherits the blocked mask and only the waiter sees
/// them, in order, with nothing running in a signal handler.
package struct SignalSet: Sendable {
    private let numbers: [Int32]

    /// Blocks `numbers` in the calling thread and every thread it starts from now on.
    package init(_ numbers: [Int32]) {
        self.numbers = numbers
        var set = Self.set(numbers)
        pthread_sigmask(SIG_BLOCK, &set, nil)
    }

    /// Waits for one of the signals; nil when `timeout` (seconds) passes first. No timeout
    /// waits for as long as it takes.
    package func wait(timeout: Double? = nil) -> Int32? {
        var set = Self.set(numbers)
        // Interrupted by a signal outside the set (SIGSTOP and SIGCONT among them): wait again.
        let result: Result<Int32, Errno>
        if let timeout {
            var limit = timespec(tv_sec: Int(timeout), tv_nsec: Int((timeout - timeout.rounded(.down)) * 1e9))
            result = valueOrErrno(retryOnInterrupt: { sigtimedwait(&set, nil, &limit) })
        } else {
            result = valueOrErrno(retryOnInterrupt: { sigwaitinfo(&set, nil) })
        }
        // EAGAIN: the timeout passed.
        guard case .success(let number) = result else { return nil }
        return number
    }

    private static func set(_ numbers: [Int32]) -> sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        for number in numbers { sigaddset(&set, number) }
        return set
    }
}
