import Endpoints
import Glibc

extension OSCDestination {
    /// Looks the host up with `getaddrinfo` (at start, and again at reload) and takes its first
    /// IPv4 address, or its first address when it has none. A service's address comes later,
    /// from a ``ServiceTarget``.
    ///
    /// IPv4 first: a stock Debian `/etc/hosts` maps `localhost` to `::1` too, which glibc sorts
    /// first, while OSC receivers (scsynth, Pure Data, liblo's tools) mostly listen on IPv4 only,
    /// so `localhost:57120` would reach nobody. `[::1]:57120` still sends over IPv6.
    package func resolve() throws(OSCDestinationError) -> ResolvedOSCDestination {
        if service != nil {
            // Not known until the service is found: 0.0.0.0:0 until then, never connected to.
            var unknown = sockaddr_in()
            unknown.sin_family = sa_family_t(AF_INET)
            let address = withUnsafePointer(to: &unknown) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    SocketAddress($0, length: MemoryLayout<sockaddr_in>.size)
                }
            }
            return ResolvedOSCDestination(destination: self, address: address)
        }
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let code = getaddrinfo(host, String(port), &hints, &list)
        guard code == 0, let first = list else { throw .unresolvable(host: host, code: code) }
        defer { freeaddrinfo(list) }
        var chosen = first
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let candidate = entry {
            if candidate.pointee.ai_family == AF_INET {
                chosen = candidate
                break
            }
            entry = candidate.pointee.ai_next
        }
        let address = SocketAddress(chosen.pointee.ai_addr, length: Int(chosen.pointee.ai_addrlen))
        return ResolvedOSCDestination(destination: self, address: address)
    }
}

/// A destination with its address looked up, ready for a ``OSCSender``.
package struct ResolvedOSCDestination: Hashable, Sendable, CustomStringConvertible {
    package let destination: OSCDestination
    package let address: SocketAddress

    package init(destination: OSCDestination, address: SocketAddress) {
        self.destination = destination
        self.address = address
    }

    package var description: String { "\(destination) (\(address))" }
}

/// An IPv4 or IPv6 socket address, held as the bytes of its `sockaddr_in` / `sockaddr_in6`.
package struct SocketAddress: Hashable, Sendable, CustomStringConvertible {
    /// `AF_INET` or `AF_INET6`.
    package let family: Int32
    private let bytes: [UInt8]

    /// Copies `length` bytes of the socket address at `address`.
    package init(_ address: UnsafePointer<sockaddr>, length: Int) {
        family = Int32(address.pointee.sa_family)
        bytes = Array(UnsafeRawBufferPointer(start: address, count: length))
    }

    /// `ip` and `port` as a `sockaddr_in` or `sockaddr_in6`.
    package init(_ ip: IPAddress, port: UInt16) {
        switch ip {
        case .v4(let bits):
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            address.sin_addr.s_addr = bits.bigEndian
            self = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    SocketAddress($0, length: MemoryLayout<sockaddr_in>.size)
                }
            }
        case .v6(let high, let low):
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = port.bigEndian
            withUnsafeMutableBytes(of: &address.sin6_addr) { raw in
                raw.storeBytes(of: high.bigEndian, toByteOffset: 0, as: UInt64.self)
                raw.storeBytes(of: low.bigEndian, toByteOffset: 8, as: UInt64.self)
            }
            self = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    SocketAddress($0, length: MemoryLayout<sockaddr_in6>.size)
                }
            }
        }
    }

    /// Calls `body` with the address as the C calls take it.
    func withSockaddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) throws -> R) rethrows -> R {
        try bytes.withUnsafeBytes { raw in
            try body(raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(raw.count))
        }
    }

    /// The IP address without the port.
    package var ip: IPAddress? { withSockaddr { address, _ in IPAddress(address) } }

    /// Whether this is a multicast group (224.0.0.0/4 or ff00::/8).
    package var isMulticast: Bool {
        withSockaddr { address, _ in
            if family == AF_INET {
                let ip = UInt32(
                    bigEndian: address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                        $0.pointee.sin_addr.s_addr
                    })
                return ip >> 28 == 0xE
            }
            return address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                $0.pointee.sin6_addr.__in6_u.__u6_addr8.0 == 0xFF
            }
        }
    }

    /// The numeric address and port, `127.0.0.1:57120` or `[::1]:57120`.
    package var description: String {
        withSockaddr { address, length in
            var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            var service = [CChar](repeating: 0, count: Int(NI_MAXSERV))
            let code = getnameinfo(
                address, length, &host, socklen_t(host.count), &service, socklen_t(service.count),
                NI_NUMERICHOST | NI_NUMERICSERV)
            guard code == 0 else { return "(unprintable address)" }
            let hostText = String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let portText = String(decoding: service.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            return family == AF_INET6 ? "[\(hostText)]:\(portText)" : "\(hostText):\(portText)"
        }
    }
}
