import Endpoints
import Synchronization

/// How other threads ask the input thread for replays of last values (a TCP link that
/// connected, a service that appeared, an `/aseqosc/sync` the OSC thread read) and for a panic
/// (the status page's: every held note ended). They mark what
/// they want (``RouteRuntime/wantReplay(_:)`` or ``request(_:)``), then ``raise()`` wakes the
/// input thread, which starts the replays after its live events (``RouteRunner``).
package final class ReplaySignal: Sendable {
    /// Whether something was asked for since the input thread last looked.
    let raised = Atomic<Bool>(false)
    private let wakeUp = Mutex<(@Sendable () -> Void)?>(nil)
    private let requests = Mutex<[SyncRequest]>([])
    /// The most `/aseqosc/sync` requests waiting at once; more are refused (counted).
    static let requestLimit = 16
    /// Requests refused because too many waited, or because the destination's last replay
    /// started less than a second before.
    package let refused = Atomic<Int>(0)

    /// A signal that wakes nobody until ``wake(with:)``.
    init() {}

    /// Sets what ends the input thread's wait (its reader's wake-up).
    func wake(with body: @escaping @Sendable () -> Void) {
        wakeUp.withLock { $0 = body }
    }

    /// Asks the input thread to end every note its routes hold (the status page's panic).
    package func panic() {
        panicWanted.store(true, ordering: .releasing)
        raise()
    }

    /// Set by ``panic()``, taken by the input thread.
    let panicWanted = Atomic<Bool>(false)

    /// Tells the input thread something was asked for, and wakes it (any thread).
    package func raise() {
        raised.store(true, ordering: .releasing)
        if let wake = wakeUp.withLock({ $0 }) { wake() }
    }

    /// Asks for the replays an `/aseqosc/sync` names (any thread).
    package func request(_ request: SyncRequest) {
        let taken = requests.withLock { waiting in
            guard waiting.count < Self.requestLimit else { return false }
            waiting.append(request)
            return true
        }
        if taken { raise() } else { refused.add(1, ordering: .relaxed) }
    }

    /// The requests that arrived since the last call.
    func takeRequests() -> [SyncRequest] {
        requests.withLock { waiting in
            defer { waiting.removeAll() }
            return waiting
        }
    }
}
