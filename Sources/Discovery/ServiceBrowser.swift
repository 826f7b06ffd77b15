import CAvahi
import Glibc
import Platform

/// One service found on the network.
package struct FoundService: Sendable, Equatable {
    /// The instance name.
    package var name: String
    /// `_osc._udp`, `_osc._tcp` or `_oscjson._tcp`.
    package var type: String
    /// The host's mDNS name (`studio.local`).
    package var host: String
    /// The numeric address the host name resolved to.
    package var address: String
    package var port: UInt16
    /// The network interface it was seen on.
    var interface: String
    /// The TXT record, `key=value` strings.
    package var txt: [String]

    /// Creates a found service.
    package init(
        name: String, type: String, host: String, address: String, port: UInt16, interface: String, txt: [String]
    ) {
        self.name = name
        self.type = type
        self.host = host
        self.address = address
        self.port = port
        self.interface = interface
        self.txt = txt
    }

    /// `udp`, `tcp`, or `http` for an OSCQuery server.
    package var transport: String {
        switch type {
        case "_oscjson._tcp": "http"
        case "_osc._tcp": "tcp"
        default: "udp"
        }
    }
}

/// Lists the services of some types on the local network through avahi-daemon: browses each
/// type, resolves each instance found, and returns once the daemon says it has reported what
/// it knows (Avahi's "all for now") and every resolution has ended, or at the deadline.
package final class ServiceBrowser {
    private let poll: OpaquePointer
    private var client: OpaquePointer?
    private var browsersPending = 0
    private var resolversPending = 0
    private var found: [FoundService] = []
    private var failure: AvahiError?

    /// The DNS-SD types of OSC: servers over UDP and TCP, and OSCQuery's HTTP namespaces.
    static let oscTypes = ["_osc._udp", "_osc._tcp", "_oscjson._tcp"]

    /// Connects to avahi-daemon; throws (`isDaemonUnavailable`) when it is not running.
    package init() throws(AvahiError) {
        guard let poll = avahi_simple_poll_new() else {
            throw AvahiError(code: Int32(AVAHI_ERR_NO_MEMORY), call: "avahi_simple_poll_new")
        }
        self.poll = poll
        var error: Int32 = 0
        client = avahi_client_new(avahi_simple_poll_get(poll), AvahiClientFlags(0), nil, nil, &error)
        // deinit frees the poll: a class whose init throws once every property is set is deinited.
        guard client != nil else { throw AvahiError(code: error, call: "avahi_client_new") }
    }

    deinit {
        if let client { avahi_client_free(client) }
        avahi_simple_poll_free(poll)
    }

    /// The services of `types` found within `timeout` seconds, sorted by name, type and
    /// address; one entry per instance, interface and address family.
    package func browse(types: [String] = ServiceBrowser.oscTypes, timeout: Double) throws(AvahiError) -> [FoundService]
    {
        let context = Unmanaged.passUnretained(self).toOpaque()
        var browsers: [OpaquePointer] = []
        defer { for browser in browsers { avahi_service_browser_free(browser) } }
        for type in types {
            guard
                let browser = avahi_service_browser_new(
                    client, AvahiIfIndex(AVAHI_IF_UNSPEC), AvahiProtocol(AVAHI_PROTO_UNSPEC), type, nil,
                    AvahiLookupFlags(0), Self.browserEvent, context)
            else { throw AvahiError(code: avahi_client_errno(client), call: "avahi_service_browser_new") }
            browsers.append(browser)
            browsersPending += 1
        }
        let deadline = WallClock.monotonic + timeout
        while browsersPending > 0 || resolversPending > 0 {
            if let failure { throw failure }
            let left = Int(((deadline - WallClock.monotonic) * 1000).rounded(.up))
            guard left > 0 else { break }
            // Waits at most until the deadline for the daemon's next message.
            if avahi_simple_poll_iterate(poll, Int32(min(left, 100))) != 0 { break }
        }
        if let failure { throw failure }
        return found.sorted { ($0.name, $0.type, $0.address) < ($1.name, $1.type, $1.address) }
    }

    private static let browserEvent: AvahiServiceBrowserCallback = {
        _, interface, proto, event, name, type, domain, _, context in
        guard let context else { return }
        let browser = Unmanaged<ServiceBrowser>.fromOpaque(context).takeUnretainedValue()
        switch event {
        case AVAHI_BROWSER_NEW:
            guard let name, let type, let domain else { return }
            let resolver = avahi_service_resolver_new(
                browser.client, interface, proto, name, type, domain, AvahiProtocol(AVAHI_PROTO_UNSPEC),
                AvahiLookupFlags(0), ServiceBrowser.resolverEvent, context)
            if resolver != nil { browser.resolversPending += 1 }
        case AVAHI_BROWSER_ALL_FOR_NOW:
            browser.browsersPending -= 1
        case AVAHI_BROWSER_FAILURE:
            browser.failure = AvahiError(code: avahi_client_errno(browser.client), call: "browsing")
        default:
            break
        }
    }

    private static let resolverEvent: AvahiServiceResolverCallback = {
        resolver, interface, _, event, name, type, _, host, address, port, txt, _, context in
        guard let context else { return }
        let browser = Unmanaged<ServiceBrowser>.fromOpaque(context).takeUnretainedValue()
        browser.resolversPending -= 1
        defer { avahi_service_resolver_free(resolver) }
        guard event == AVAHI_RESOLVER_FOUND, let name, let type, let host, let address else { return }
        var text = [CChar](repeating: 0, count: Int(AVAHI_ADDRESS_STR_MAX))
        avahi_address_snprint(&text, text.count, address)
        var interfaceName = [CChar](repeating: 0, count: Int(IF_NAMESIZE) + 1)
        let named = if_indextoname(UInt32(bitPattern: interface), &interfaceName) != nil
        browser.found.append(
            FoundService(
                name: String(cString: name), type: String(cString: type), host: String(cString: host),
                address: String(nulTerminated: text), port: port,
                interface: named ? String(nulTerminated: interfaceName) : "\(interface)",
                txt: ServiceBrowser.strings(txt)))
    }

    private static func strings(_ list: UnsafeMutablePointer<AvahiStringList>?) -> [String] {
        var strings: [String] = []
        var entry = list
        while let current = entry {
            let size = avahi_string_list_get_size(current)
            let bytes = UnsafeBufferPointer(start: avahi_string_list_get_text(current), count: size)
            strings.append(String(decoding: bytes, as: UTF8.self))
            entry = avahi_string_list_get_next(current)
        }
        return strings
    }
}
