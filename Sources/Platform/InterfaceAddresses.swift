import Glibc

/// The IPv4 and IPv6 addresses of this machine's network interfaces, as `getifaddrs` lists them
/// (loopback included): the one walk of that list for the modules that need it.
package enum InterfaceAddresses {
    /// Calls `body` with each interface's name and each of its IPv4 and IPv6 addresses, in the
    /// kernel's order; other families (link-layer entries) are skipped.
    package static func each(_ body: (_ interface: String, _ address: UnsafePointer<sockaddr>) -> Void) {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0 else { return }
        defer { freeifaddrs(list) }
        var entry = list
        while let current = entry {
            entry = current.pointee.ifa_next
            guard let address = current.pointee.ifa_addr, let name = current.pointee.ifa_name else { continue }
            let family = Int32(address.pointee.sa_family)
            guard family == AF_INET || family == AF_INET6 else { continue }
            body(String(cString: name), UnsafePointer(address))
        }
    }
}
