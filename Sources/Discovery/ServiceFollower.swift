import CAvahi
import Glibc
import OSCTransport
import Synchronization

/// Keeps destinations named by DNS-SD service pointed at their services: browses each type the
/// targets name through avahi-daemon (on Avahi's own thread, over IPv4), resolves the instance
/// with the target's name wherever it appears, and moves the targets when it is found, changes
/// address or port, or goes away (then they wait, their packets counted as `service_absent`).
/// A daemon that is not running, or restarts, is waited for; the targets keep the last address.
package final class ServiceFollower: @unchecked Sendable {
    // @unchecked Sendable: everything below `connection` changes on Avahi's thread or with its
    // lock held (`connection.withLock`).

    /// What to say and how bad it is: the daemon's logger, kept apart from the Service module.
    package typealias Log = @Sendable (_ isError: Bool, _ message: String) -> Void

    private struct Key: Hashable {
        var name: String
        var type: String
    }

    /// One instance as one interface sees it.
    private struct Sighting: Hashable {
        var interface: Int32
        var name: String
        var type: String
    }

    private let connection: AvahiConnection
    private var browsers: [String: OpaquePointer] = [:]
    private var resolvers: [Sighting: OpaquePointer] = [:]
    /// Where each service was last resolved, by the interface that saw it.
    private var found: [Key: [Int32: SocketAddress]] = [:]
    private var targets: [Key: [ServiceTarget]] = [:]
    private let log: Log
    private var waitingLogged = false

    /// Starts following nothing; ``follow(_:)`` gives the targets. Throws only when Avahi's
    /// thread cannot be made; a daemon that is not running is waited for.
    package init(log: @escaping Log) throws(AvahiError) {
        connection = try AvahiConnection()
        self.log = log
        try connection.start { [unowned self] client, state in clientChanged(client, state) }
    }

    deinit {
        connection.stop()
        for resolver in resolvers.values { avahi_service_resolver_free(resolver) }
        for browser in browsers.values { avahi_service_browser_free(browser) }
    }

    /// Follows `new` from now on (after a reload, the new routes' targets): each is moved to
    /// where its service is known to be at once, and browsing starts for types not browsed yet.
    package func follow(_ new: [ServiceTarget]) {
        connection.withLock {
            let followed = Set(targets.keys)
            targets = Dictionary(grouping: new) { Key(name: $0.name, type: $0.type) }
            for key in targets.keys {
                if !followed.contains(key), let address = Self.preferred(found[key]) {
                    log(false, "service destinations: '\(key.name)' (\(key.type)) found at \(address)")
                }
                moved(key)
            }
            if let client = connection.client, avahi_client_get_state(client) == AVAHI_CLIENT_S_RUNNING {
                browseAll(client)
            }
        }
    }

    /// One address when several interfaces see the service: a LAN one over loopback's, lowest
    /// interface first, so the choice does not flap.
    private static func preferred(_ sightings: [Int32: SocketAddress]?) -> SocketAddress? {
        guard let sightings, !sightings.isEmpty else { return nil }
        let ordered = sightings.sorted { $0.key < $1.key }.map(\.value)
        return ordered.first { !($0.ip?.isLoopback ?? false) } ?? ordered.first
    }

    private func browseAll(_ client: OpaquePointer) {
        let context = Unmanaged.passUnretained(self).toOpaque()
        for type in Set(targets.keys.map(\.type)) where browsers[type] == nil {
            guard
                let browser = avahi_service_browser_new(
                    client, AvahiIfIndex(AVAHI_IF_UNSPEC), AvahiProtocol(AVAHI_PROTO_INET), type, nil,
                    AvahiLookupFlags(0), Self.browserEvent, context)
            else {
                log(
                    true,
                    "service destinations: \(AvahiError(code: avahi_client_errno(client), call: "browsing \(type)"))")
                continue
            }
            browsers[type] = browser
        }
    }

    /// Moves the targets of `key` to where the service is now (``ServiceTarget/update(_:)``
    /// does nothing for a target already there).
    private func moved(_ key: Key) {
        let address = Self.preferred(found[key])
        for target in targets[key] ?? [] { target.update(address) }
    }

    // MARK: Avahi's callbacks (its thread, lock held)

    private func clientChanged(_ client: OpaquePointer, _ state: AvahiClientState) {
        switch state {
        case AVAHI_CLIENT_S_RUNNING:
            waitingLogged = false
            browseAll(client)
        case AVAHI_CLIENT_CONNECTING:
            if !waitingLogged && !targets.isEmpty {
                waitingLogged = true
                log(false, "service destinations: avahi-daemon is not running; they wait for it")
            }
        case AVAHI_CLIENT_FAILURE:
            // The daemon went away: browsers and resolvers died with the client. The targets
            // keep their addresses (the services are likely still there) until a new client's
            // browsing says otherwise.
            resolvers.removeAll()
            browsers.removeAll()
            found.removeAll()
            log(false, "service destinations: avahi-daemon went away; following again when it is back")
            waitingLogged = true
            if let failure = connection.reconnect() { log(true, "service destinations: \(failure); not following") }
        default:
            break
        }
    }

    private static let browserEvent: AvahiServiceBrowserCallback = {
        _, interface, proto, event, name, type, domain, _, context in
        guard let context, let name, let type else { return }
        let follower = Unmanaged<ServiceFollower>.fromOpaque(context).takeUnretainedValue()
        let sighting = Sighting(interface: interface, name: String(cString: name), type: String(cString: type))
        let key = Key(name: sighting.name, type: sighting.type)
        switch event {
        case AVAHI_BROWSER_NEW:
            // Every instance of a browsed type, followed or not: the browser reports each one
            // once, and a reload may name one that is already on the network.
            guard follower.resolvers[sighting] == nil, let domain else { return }
            // Kept until the instance goes: it reports the service again when its port or
            // address changes.
            if let resolver = avahi_service_resolver_new(
                follower.connection.client, interface, proto, name, type, domain, AvahiProtocol(AVAHI_PROTO_INET),
                AvahiLookupFlags(0), ServiceFollower.resolverEvent, context)
            {
                follower.resolvers[sighting] = resolver
            }
        case AVAHI_BROWSER_REMOVE:
            if let resolver = follower.resolvers.removeValue(forKey: sighting) { avahi_service_resolver_free(resolver) }
            guard follower.found[key]?.removeValue(forKey: interface) != nil else { return }
            if follower.found[key]?.isEmpty ?? true {
                follower.found[key] = nil
                guard follower.targets[key] != nil else { return }
                follower.log(
                    false, "service destinations: '\(key.name)' (\(key.type)) left the network; waiting for it")
            }
            follower.moved(key)
        default:
            break
        }
    }

    private static let resolverEvent: AvahiServiceResolverCallback = {
        _, interface, _, event, name, type, _, _, address, port, _, _, context in
        guard let context, let name, let type else { return }
        let follower = Unmanaged<ServiceFollower>.fromOpaque(context).takeUnretainedValue()
        let key = Key(name: String(cString: name), type: String(cString: type))
        guard event == AVAHI_RESOLVER_FOUND, let address, address.pointee.proto == AVAHI_PROTO_INET else { return }
        var socketAddress = sockaddr_in()
        socketAddress.sin_family = sa_family_t(AF_INET)
        socketAddress.sin_port = port.bigEndian
        socketAddress.sin_addr.s_addr = address.pointee.data.ipv4.address
        let resolved = withUnsafePointer(to: &socketAddress) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                SocketAddress($0, length: MemoryLayout<sockaddr_in>.size)
            }
        }
        let before = ServiceFollower.preferred(follower.found[key])
        follower.found[key, default: [:]][interface] = resolved
        let after = ServiceFollower.preferred(follower.found[key])
        if after != before, let after, follower.targets[key] != nil {
            let verb = before == nil ? "found at" : "moved to"
            follower.log(false, "service destinations: '\(key.name)' (\(key.type)) \(verb) \(after)")
        }
        follower.moved(key)
    }
}
