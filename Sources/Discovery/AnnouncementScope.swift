import CAvahi
import Glibc
import Platform

/// The interface and protocol an announcement for a listen address goes out on: every
/// interface for a wildcard address (over IPv4 only for `0.0.0.0`, whose sockets take no IPv6),
/// else only the interface that holds the address (so that no peer is told an address it
/// cannot reach); every interface too when none holds it.
struct AnnouncementScope: Equatable {
    var interface = AvahiIfIndex(AVAHI_IF_UNSPEC)
    var proto = AvahiProtocol(AVAHI_PROTO_UNSPEC)

    package init(listeningOn host: String) {
        if host == "0.0.0.0" { proto = AvahiProtocol(AVAHI_PROTO_INET) }
        if host == "0.0.0.0" || host == "::" { return }
        var found = false
        InterfaceAddresses.each { name, address in
            guard !found else { return }
            let family = Int32(address.pointee.sa_family)
            var text = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            let length = socklen_t(family == AF_INET ? MemoryLayout<sockaddr_in>.size : MemoryLayout<sockaddr_in6>.size)
            guard getnameinfo(address, length, &text, socklen_t(text.count), nil, 0, NI_NUMERICHOST) == 0 else {
                return
            }
            let numeric = String(nulTerminated: text)
            // A link-local IPv6 address comes back with its zone (`fe80::1%eth0`).
            guard numeric.split(separator: "%").first.map(String.init) == host else { return }
            interface = AvahiIfIndex(if_nametoindex(name))
            proto = AvahiProtocol(family == AF_INET ? AVAHI_PROTO_INET : AVAHI_PROTO_INET6)
            found = true
        }
    }
}
