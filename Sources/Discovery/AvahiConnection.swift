import CAvahi

/// Avahi's event-loop thread and a client of avahi-daemon on it: the client waits for a daemon
/// that is not running yet, and ``reconnect()`` makes a new one after the daemon went away. Its
/// owner (the announcer, the follower) gets every state of the client on that thread, with the
/// loop's lock held, and does its own work with the client there or inside ``withLock(_:)``.
final class AvahiConnection {
    /// What the owner does when the client's state changes (Avahi's thread, lock held).
    typealias StateChange = (_ client: OpaquePointer, _ state: AvahiClientState) -> Void

    private let poll: OpaquePointer
    /// The client now; nil until ``start(_:)``, and when no new one could be made.
    private(set) var client: OpaquePointer?
    private var onChange: StateChange = { _, _ in }

    /// Makes the loop; nothing runs until ``start(_:)``.
    init() throws(AvahiError) {
        guard let poll = avahi_threaded_poll_new() else {
            throw AvahiError(code: Int32(AVAHI_ERR_NO_MEMORY), call: "avahi_threaded_poll_new")
        }
        self.poll = poll
    }

    deinit {
        stop()
        if let client { avahi_client_free(client) }
        avahi_threaded_poll_free(poll)
    }

    /// Makes the client, then starts the thread: `onChange` gets the first states during this
    /// call (with the client as its argument, before ``client`` is set), the others on the thread.
    func start(_ onChange: @escaping StateChange) throws(AvahiError) {
        self.onChange = onChange
        try connect()
        let started = avahi_threaded_poll_start(poll)
        guard started >= 0 else { throw AvahiError(code: started, call: "avahi_threaded_poll_start") }
    }

    /// Stops the thread: once it returns no callback runs, so the owner may free what it made
    /// with the client (its deinit, before this object's frees the client).
    func stop() { avahi_threaded_poll_stop(poll) }

    /// After `AVAHI_CLIENT_FAILURE` (on Avahi's thread): frees the client, whose browsers,
    /// resolvers and entry groups died with it, and makes a new one that waits for the daemon.
    /// The error when none could be made.
    package func reconnect() -> AvahiError? {
        if let client { avahi_client_free(client) }
        client = nil
        do {
            try connect()
            return nil
        } catch {
            return error
        }
    }

    /// Runs `body` with the loop's lock held, as Avahi's thread runs the callbacks.
    func withLock(_ body: () -> Void) {
        avahi_threaded_poll_lock(poll)
        body()
        avahi_threaded_poll_unlock(poll)
    }

    private func connect() throws(AvahiError) {
        var error: Int32 = 0
        client = avahi_client_new(
            avahi_threaded_poll_get(poll), AVAHI_CLIENT_NO_FAIL, Self.changed,
            Unmanaged.passUnretained(self).toOpaque(),
            &error)
        guard client != nil else { throw AvahiError(code: error, call: "avahi_client_new") }
    }

    private static let changed: AvahiClientCallback = { client, state, context in
        guard let client, let context else { return }
        Unmanaged<AvahiConnection>.fromOpaque(context).takeUnretainedValue().onChange(client, state)
    }
}
