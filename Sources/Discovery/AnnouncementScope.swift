import CAvahi
import Glibc

/// The interface and protocol an announcement for a listen address goes out on: every
/// interface for a wildcard address, else only the interface that holds the address (so that
/// no peer is told an address it cannot reach); every interface too when none holds it.
struct AnnouncementScope: Equatable {
    var interface = AvahiIfIndex(AVAHI_IF_UNSPEC)
    var proto = AvahiProtocol(AVAHI_PROTO_UNSPEC)

    init(listeningOn host: String) {
        if host == "0.0.0.0" || host == "::" { return }
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return }
        defer { freeifaddrs(list) }
        var entry: UnsafeMutablePointer<ifaddrs>? = first
        while let current = entry {
            defer { entry = current.pointee.ifa_next }
            guard let address = current.pointee.ifa_addr, let name = current.pointee.ifa_name else { continue }
            let family = Int32(address.pointee.sa_family)
            guard family == AF_INET || family == AF_INET6 else { continue }
            var text = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            let length = socklen_t(family == AF_INET ? MemoryLayout<sockaddr_in>.size : MemoryLayout<sockaddr_in6>.size)
            guard getnameinfo(address, length, &text, socklen_t(text.count), nil, 0, NI_NUMERICHOST) == 0 else {
                continue
            }
            let numeric = String(nulTerminated: text)
            // A link-local IPv6 address comes back with its zone (`fe80::1%eth0`).
            guard numeric.split(separator: "%").first.map(String.init) == host else { continue }
            interface = AvahiIfIndex(if_nametoindex(name))
            proto = AvahiProtocol(family == AF_INET ? AVAHI_PROTO_INET : AVAHI_PROTO_INET6)
            return
        }
    }
}
