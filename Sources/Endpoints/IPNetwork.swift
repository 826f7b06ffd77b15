import Glibc

/// An IPv4 or IPv6 address as a plain value, so a receive loop can carry a sender's address and
/// check it against an allow-list without allocating.
///
/// An IPv4-mapped IPv6 address (`::ffff:10.1.2.3`, what a dual-stack socket reports for an IPv4
/// sender) is stored as the IPv4 address, so `10.0.0.0/8` matches it.
package enum IPAddress: Hashable, Sendable, BitwiseCopyable, CustomStringConvertible {
    /// The address in host byte order.
    case v4(UInt32)
    /// The 128 bits as two halves in host byte order, high half first.
    case v6(UInt64, UInt64)

    /// Parses a numeric address (`10.1.2.3`, `::1`, `fe80::1`); nil for anything else.
    package init?(parsing text: String) {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            self = .v4(UInt32(bigEndian: v4.s_addr))
            return
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, text, &v6) == 1 else { return nil }
        self.init(v6)
    }

    /// The address of a `sockaddr_in` or `sockaddr_in6`; nil for other families.
    @inline(__always)  // in the receive loop, once per datagram
    package init?(_ address: UnsafePointer<sockaddr>) {
        switch Int32(address.pointee.sa_family) {
        case AF_INET:
            let raw = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr.s_addr }
            self = .v4(UInt32(bigEndian: raw))
        case AF_INET6:
            self.init(address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_addr })
        default:
            return nil
        }
    }

    package init(_ address: in6_addr) {
        var high: UInt64 = 0
        var low: UInt64 = 0
        withUnsafeBytes(of: address) { bytes in
            var i = 0
            while i < 8 {
                high = high << 8 | UInt64(bytes[i])
                low = low << 8 | UInt64(bytes[i + 8])
                i += 1
            }
        }
        // ::ffff:a.b.c.d is an IPv4 sender seen through an IPv6 socket.
        if high == 0, low >> 32 == 0xFFFF {
            self = .v4(UInt32(truncatingIfNeeded: low))
        } else {
            self = .v6(high, low)
        }
    }

    /// Whether this is a loopback address (127.0.0.0/8 or ::1), reachable only from this machine.
    package var isLoopback: Bool {
        switch self {
        case .v4(let address): address >> 24 == 127
        case .v6(let high, let low): high == 0 && low == 1
        }
    }

    /// Whether this is the wildcard address (`0.0.0.0` or `::`), which binds every interface.
    package var isUnspecified: Bool {
        switch self {
        case .v4(let address): address == 0
        case .v6(let high, let low): high == 0 && low == 0
        }
    }

    /// The address in its usual numeric form (`10.1.2.3`, `fe80::1`).
    package var description: String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        switch self {
        case .v4(let address):
            var raw = in_addr(s_addr: address.bigEndian)
            inet_ntop(AF_INET, &raw, &text, socklen_t(text.count))
        case .v6(let high, let low):
            var raw = in6_addr()
            withUnsafeMutableBytes(of: &raw) { bytes in
                var i = 0
                while i < 8 {
                    bytes[i] = UInt8(truncatingIfNeeded: high >> (56 - 8 * UInt64(i)))
                    bytes[i + 8] = UInt8(truncatingIfNeeded: low >> (56 - 8 * UInt64(i)))
                    i += 1
                }
            }
            inet_ntop(AF_INET6, &raw, &text, socklen_t(text.count))
        }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// Where a packet came from: the sender's address and port. The port tells two senders on one
/// host apart (two routes of one bridge each send from a socket of their own).
package struct PacketSource: Hashable, Sendable, BitwiseCopyable, CustomStringConvertible {
    package var address: IPAddress
    package var port: UInt16

    package init(address: IPAddress, port: UInt16) {
        self.address = address
        self.port = port
    }

    /// The address and port of a `sockaddr_in` or `sockaddr_in6`; nil for other families.
    @inline(__always)  // in the receive loop, once per datagram
    package init?(_ address: UnsafePointer<sockaddr>) {
        guard let ip = IPAddress(address) else { return nil }
        self.address = ip
        // sin_port and sin6_port sit at the same offset, in network byte order.
        port = UInt16(bigEndian: address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_port })
    }

    /// `10.1.2.3:9000` or `[fe80::1]:9000`.
    package var description: String {
        if case .v6 = address { return "[\(address)]:\(port)" }
        return "\(address):\(port)"
    }
}

/// Why a network in an allow-list could not be read.
package struct IPNetworkError: Error, Hashable, Sendable, CustomStringConvertible {
    package var text: String
    package var reason: String

    package var description: String { "'\(text)' is not a network: \(reason)" }
}

/// A network in CIDR notation (`10.0.0.0/8`, `fd00::/8`, or one host `192.168.1.20`), for the
/// senders an OSC input accepts.
package struct IPNetwork: Hashable, Sendable, BitwiseCopyable, CustomStringConvertible {
    /// The network's address, with the host bits cleared.
    package let address: IPAddress
    /// How many leading bits must match: 0...32 (IPv4) or 0...128 (IPv6).
    let prefixLength: Int

    /// Parses `address/prefix` or a bare address (a single host).
    package init(parsing text: String) throws(IPNetworkError) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = IPAddress(parsing: String(parts[0])) else {
            throw IPNetworkError(text: text, reason: "expected an IPv4 or IPv6 address, e.g. 10.0.0.0/8 or fd00::/8")
        }
        let maximum = if case .v4 = address { 32 } else { 128 }
        var length = maximum
        if parts.count == 2 {
            guard let number = Int(parts[1]), parts[1].allSatisfy(\.isASCII), (0...maximum).contains(number) else {
                throw IPNetworkError(text: text, reason: "the prefix length must be 0-\(maximum)")
            }
            length = number
        }
        self.address = Self.masked(address, length)
        prefixLength = length
    }

    /// Whether `candidate` is in this network (an IPv4 network never holds an IPv6 address).
    @inline(__always)
    package func contains(_ candidate: IPAddress) -> Bool {
        Self.masked(candidate, prefixLength) == address && Self.sameFamily(candidate, address)
    }

    /// `address/prefix`.
    package var description: String { "\(address)/\(prefixLength)" }

    private static func sameFamily(_ a: IPAddress, _ b: IPAddress) -> Bool {
        switch (a, b) {
        case (.v4, .v4), (.v6, .v6): true
        default: false
        }
    }

    private static func masked(_ address: IPAddress, _ length: Int) -> IPAddress {
        switch address {
        case .v4(let bits):
            let mask: UInt32 = length == 0 ? 0 : ~0 << UInt32(32 - min(length, 32))
            return .v4(bits & mask)
        case .v6(let high, let low):
            let highMask: UInt64 = length <= 0 ? 0 : length >= 64 ? ~0 : ~0 << UInt64(64 - length)
            let lowMask: UInt64 = length <= 64 ? 0 : length >= 128 ? ~0 : ~0 << UInt64(128 - length)
            return .v6(high & highMask, low & lowMask)
        }
    }
}

/// The senders an OSC input accepts: any address in any of the networks.
package struct IPAllowList: Sendable {
    package let networks: [IPNetwork]

    package init(_ networks: [IPNetwork]) {
        self.networks = networks
    }

    /// Whether `address` is in one of the networks.
    @inline(__always)
    package func allows(_ address: IPAddress) -> Bool {
        var i = 0
        while i < networks.count {
            if networks[i].contains(address) { return true }
            i += 1
        }
        return false
    }
}
