import CGNUCalls
import Glibc

/// A named POSIX thread that runs a closure once; ``join()`` waits for it to end.
package final class SystemThread: @unchecked Sendable {
    // @unchecked Sendable: `handle` is written once, before `start` returns.
    private var handle = pthread_t()
    private var joined = false

    /// Starts `body` on a new thread named `name` (the kernel keeps 15 bytes of it, shown by
    /// `top -H` and in `/proc/PID/task/*/comm`).
    package init(name: String, _ body: @escaping @Sendable () -> Void) {
        let start = Unmanaged.passRetained(Start(name: name, body: body)).toOpaque()
        let result = pthread_create(
            &handle, nil,
            { pointer in
                let start = Unmanaged<Start>.fromOpaque(pointer!).takeRetainedValue()
                var name = Array(start.name.utf8.prefix(15)).map { CChar(bitPattern: $0) } + [0]
                _ = aseqosc_pthread_setname(pthread_self(), &name)
                start.body()
                return nil
            }, start)
        // Without its threads the bridge cannot work at all; EAGAIN here means the system is
        // out of threads or memory.
        precondition(result == 0, "pthread_create failed: \(Errno(result))")
    }

    /// Waits until the thread's closure has returned (once; later calls return at once).
    package func join() {
        guard !joined else { return }
        joined = true
        pthread_join(handle, nil)
    }

    deinit {
        if !joined { pthread_detach(handle) }
    }

    private final class Start {
        let name: String
        let body: @Sendable () -> Void
        package init(name: String, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }
}
