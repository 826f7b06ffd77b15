import CAvahi
import Glibc
import Synchronization

/// Announces OSC services through the system's mDNS responder (avahi-daemon, over D-Bus) on a
/// thread of Avahi's own. It waits for a daemon that is not running yet, announces again when
/// the daemon restarts, and takes Avahi's alternative name ("aseqosc on studio #2") when
/// another machine already uses the name. Nothing here touches the bridge's hot paths.
package final class ServiceAnnouncer: @unchecked Sendable {
    // @unchecked Sendable: `group`, `services` and `name` change only on Avahi's thread or with
    // its lock held (`connection.withLock`).

    /// What to say and how bad it is: the daemon's logger, kept apart from the Service module.
    package typealias Log = @Sendable (_ isError: Bool, _ message: String) -> Void

    private let connection: AvahiConnection
    private var group: OpaquePointer?
    private var services: [OSCService]
    private var scope: AnnouncementScope
    private let log: Log
    /// The name in use, which a collision changes.
    private var name: String
    private var waitingLogged = false
    private let stateText = Mutex("starting")

    /// Starts announcing `services` (all under the name of the first) for an input listening on
    /// `host`. Throws when Avahi's thread or client cannot be made at all; a daemon that is not
    /// running is not an error (one log line, and the announcement follows when it starts).
    package init(services: [OSCService], listeningOn host: String, log: @escaping Log) throws(AvahiError) {
        connection = try AvahiConnection()
        self.services = services
        self.scope = AnnouncementScope(listeningOn: host)
        self.log = log
        self.name = services.first?.name ?? OSCService.defaultName
        // deinit frees what was made: a class whose init throws once every property is set is
        // deinited.
        try connection.start { [unowned self] client, state in clientChanged(client, state) }
    }

    deinit {
        connection.stop()
        // The connection's deinit frees the client next, which withdraws the announcement (the
        // daemon sends its goodbyes).
    }

    /// One line for `status`: what is announced, or why nothing is.
    package var state: String { stateText.withLock { $0 } }

    /// Announces `services` instead (after a reload changed the port, the transports or the
    /// name); nothing happens when they are the same.
    package func update(services new: [OSCService], listeningOn host: String) {
        connection.withLock {
            let newScope = AnnouncementScope(listeningOn: host)
            guard new != services || newScope != scope else { return }
            services = new
            scope = newScope
            name = new.first?.name ?? name
            if let group { avahi_entry_group_reset(group) }
            if let client = connection.client, avahi_client_get_state(client) == AVAHI_CLIENT_S_RUNNING {
                register(client)
            }
        }
    }

    private func setState(_ text: String) { stateText.withLock { $0 = text } }

    /// Logs `error` and shows it in `status` until the next change of state.
    private func fail(_ error: AvahiError) {
        log(true, "announce: \(error)")
        setState("failed: \(error)")
    }

    private static let groupChanged: AvahiEntryGroupCallback = { group, state, context in
        guard let group, let context else { return }
        Unmanaged<ServiceAnnouncer>.fromOpaque(context).takeUnretainedValue().groupChanged(group, state)
    }

    private func clientChanged(_ client: OpaquePointer, _ state: AvahiClientState) {
        switch state {
        case AVAHI_CLIENT_S_RUNNING:
            waitingLogged = false
            register(client)
        case AVAHI_CLIENT_S_COLLISION, AVAHI_CLIENT_S_REGISTERING:
            // The host name is being (re)registered: withdraw until the server runs again.
            if let group { avahi_entry_group_reset(group) }
        case AVAHI_CLIENT_CONNECTING:
            setState("waiting for avahi-daemon")
            if !waitingLogged {
                waitingLogged = true
                log(false, "announce: avahi-daemon is not running; \(name) is announced when it starts")
            }
        case AVAHI_CLIENT_FAILURE:
            let error = AvahiError(code: avahi_client_errno(client), call: "avahi client")
            // The daemon went away (restarted, or stopped): a new client waits for it to come
            // back, and announces again then. The entry group died with the old client.
            group = nil
            if error.isDaemonUnavailable {
                log(false, "announce: avahi-daemon went away; announcing again when it is back")
            } else {
                log(true, "announce: \(error); trying again")
            }
            setState("waiting for avahi-daemon")
            waitingLogged = true
            if let failure = connection.reconnect() {
                log(true, "announce: \(failure); not announcing")
                setState("off: \(failure)")
            }
        default:
            break
        }
    }

    private func groupChanged(_ group: OpaquePointer, _ state: AvahiEntryGroupState) {
        switch state {
        case AVAHI_ENTRY_GROUP_ESTABLISHED:
            let what = services.map { "\($0.type) port \($0.port)" }.joined(separator: ", ")
            log(false, "announce: '\(name)' as \(what)")
            setState("announced as '\(name)' (\(what))")
        case AVAHI_ENTRY_GROUP_COLLISION:
            renameAfterCollision()
            if let client = avahi_entry_group_get_client(group) { register(client) }
        case AVAHI_ENTRY_GROUP_FAILURE:
            let error = AvahiError(
                code: avahi_client_errno(avahi_entry_group_get_client(group)), call: "avahi entry group")
            fail(error)
        default:
            break
        }
    }

    /// Takes Avahi's alternative to the name another service on the network already has.
    private func renameAfterCollision() {
        guard let alternative = avahi_alternative_service_name(name) else { return }
        let next = String(cString: alternative)
        avahi_free(alternative)
        log(false, "announce: the name '\(name)' is taken on the network; announcing as '\(next)'")
        name = next
    }

    /// Adds every service to the entry group and commits it (on Avahi's thread, or locked).
    private func register(_ client: OpaquePointer) {
        if group == nil {
            group = avahi_entry_group_new(client, Self.groupChanged, Unmanaged.passUnretained(self).toOpaque())
            guard group != nil else {
                let error = AvahiError(code: avahi_client_errno(client), call: "avahi_entry_group_new")
                fail(error)
                return
            }
        }
        guard let group, avahi_entry_group_is_empty(group) != 0 else { return }
        // A name taken by a service of our own host comes back as a collision at once.
        for _ in 0..<16 {
            let added = addServices(to: group)
            if added == AVAHI_ERR_COLLISION {
                avahi_entry_group_reset(group)
                renameAfterCollision()
                continue
            }
            if added < 0 {
                let error = AvahiError(code: added, call: "avahi_entry_group_add_service")
                fail(error)
                return
            }
            let committed = avahi_entry_group_commit(group)
            if committed < 0 {
                let error = AvahiError(code: committed, call: "avahi_entry_group_commit")
                fail(error)
            }
            return
        }
    }

    /// 0, or the first error.
    private func addServices(to group: OpaquePointer) -> Int32 {
        for service in services {
            let txt = Self.stringList(service.txt)
            defer { avahi_string_list_free(txt) }
            let added = avahi_entry_group_add_service_strlst(
                group, scope.interface, scope.proto, AvahiPublishFlags(0), name, service.type, nil, nil, service.port,
                txt)
            if added < 0 { return added }
        }
        return 0
    }

    private static func stringList(_ strings: [String]) -> UnsafeMutablePointer<AvahiStringList>? {
        var list: UnsafeMutablePointer<AvahiStringList>? = nil
        // avahi_string_list_add prepends: add in reverse to keep the order.
        for string in strings.reversed() { list = avahi_string_list_add(list, string) }
        return list
    }
}
