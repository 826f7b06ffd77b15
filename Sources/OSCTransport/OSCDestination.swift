import Glibc
import OSC

/// Why a destination could not be parsed or resolved.
public enum OSCDestinationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// No `:port` after the host.
    case missingPort(String)
    /// Nothing before the `:port`.
    case emptyHost(String)
    /// A port that is not a number in 1...65535.
    case invalidPort(String, port: String)
    /// An IPv6 address written without brackets, or a bracket left open.
    case malformedIPv6(String)
    /// `getaddrinfo` found no address; `code` is its `EAI_*` result.
    case unresolvable(host: String, code: Int32)
    /// A multicast interface name that no network interface has.
    case unknownInterface(String)

    public var description: String {
        switch self {
        case .missingPort(let text):
            "destination '\(text)' has no port: write host:port, e.g. 127.0.0.1:57120"
        case .emptyHost(let text):
            "destination '\(text)' has no host: write host:port, e.g. 127.0.0.1:57120"
        case .invalidPort(let text, let port):
            "destination '\(text)': invalid port '\(port)'; ports are 1-65535"
        case .malformedIPv6(let text):
            "destination '\(text)': write IPv6 addresses in brackets, e.g. [::1]:57120"
        case .unresolvable(let host, let code):
            "cannot resolve host '\(host)': \(String(cString: gai_strerror(code)))"
        case .unknownInterface(let name):
            "no network interface named '\(name)' (see `ip link`)"
        }
    }
}

/// How a TCP destination is spoken to (``OSCDestination/tcp``).
public struct TCPOptions: Hashable, Sendable {
    /// How packets are delimited on the stream.
    public var framing: OSCStreamFraming
    /// The most packets held while the connection is down.
    public var queueCapacity: Int
    /// How long a note-on may wait for the connection and still be sent, in milliseconds.
    public var noteOnTimeoutMilliseconds: Int

    public init(framing: OSCStreamFraming, queueCapacity: Int = 1_024, noteOnTimeoutMilliseconds: Int = 1_000) {
        self.framing = framing
        self.queueCapacity = queueCapacity
        self.noteOnTimeoutMilliseconds = noteOnTimeoutMilliseconds
    }
}

/// A DNS-SD service instance, by name and type: what a destination follows when the config
/// names a service rather than a host.
public struct OSCServiceName: Hashable, Sendable, CustomStringConvertible {
    /// The instance name (`TouchOSC on iPad`).
    public var name: String
    /// `_osc._udp` or `_osc._tcp`.
    public var type: String

    public init(name: String, type: String) {
        self.name = name
        self.type = type
    }

    /// `'NAME' (TYPE)`.
    public var description: String { "'\(name)' (\(type))" }
}

/// Where OSC packets go: a host and port, and how to reach it (UDP unless ``tcp`` is set).
public struct OSCDestination: Hashable, Sendable, CustomStringConvertible {
    /// A name, an IPv4 address or an IPv6 address (without brackets).
    public var host: String
    /// The UDP port, 1...65535.
    public var port: UInt16
    /// Whether the host is a broadcast address (sets `SO_BROADCAST`).
    public var broadcast: Bool
    /// Hops a multicast packet may take (`IP_MULTICAST_TTL`, `IPV6_MULTICAST_HOPS`); system default when nil.
    public var multicastTTL: UInt8?
    /// The network interface multicast leaves by, such as `eth0` (`IP_MULTICAST_IF`, `IPV6_MULTICAST_IF`).
    public var multicastInterface: String?
    /// Whether this host also receives its own multicast (`IP_MULTICAST_LOOP`); system default when nil.
    public var multicastLoopback: Bool?
    /// Over TCP, with these options, instead of UDP (nil).
    public var tcp: TCPOptions?
    /// The DNS-SD service the destination follows; nil for a fixed ``host`` and ``port``
    /// (which are then empty and 0).
    public var service: OSCServiceName?

    /// A destination that goes wherever the service `service` is (over IPv4).
    public init(service: OSCServiceName) {
        host = ""
        port = 0
        broadcast = false
        self.service = service
    }

    /// A destination; throws for a port outside 1...65535 or an empty host.
    public init(
        host: String, port: Int, broadcast: Bool = false, multicastTTL: UInt8? = nil,
        multicastInterface: String? = nil, multicastLoopback: Bool? = nil
    ) throws(OSCDestinationError) {
        let text = Self.format(host: host, port: String(port))
        guard !host.isEmpty else { throw .emptyHost(text) }
        guard port >= 1, port <= 65535 else { throw .invalidPort(text, port: String(port)) }
        self.host = host
        self.port = UInt16(port)
        self.broadcast = broadcast
        self.multicastTTL = multicastTTL
        self.multicastInterface = multicastInterface
        self.multicastLoopback = multicastLoopback
    }

    /// Parses `host:port`: `127.0.0.1:57120`, `[::1]:57120` or `synth.local:57120`.
    public init(
        parsing text: String, broadcast: Bool = false, multicastTTL: UInt8? = nil,
        multicastInterface: String? = nil, multicastLoopback: Bool? = nil
    ) throws(OSCDestinationError) {
        let host: Substring
        let portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { throw .malformedIPv6(text) }
            host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else { throw rest.isEmpty ? .missingPort(text) : .malformedIPv6(text) }
            portText = rest.dropFirst()
        } else {
            guard let colon = text.lastIndex(of: ":") else { throw .missingPort(text) }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
            if host.contains(":") { throw .malformedIPv6(text) }
        }
        guard !host.isEmpty else { throw .emptyHost(text) }
        guard !portText.isEmpty else { throw .missingPort(text) }
        guard portText.count <= 5, portText.allSatisfy(\.isASCII), let port = Int(portText), port >= 1,
            port <= 65535
        else { throw .invalidPort(text, port: String(portText)) }
        try self.init(
            host: String(host), port: port, broadcast: broadcast, multicastTTL: multicastTTL,
            multicastInterface: multicastInterface, multicastLoopback: multicastLoopback)
    }

    /// `host:port`, with an IPv6 host in brackets; `service 'NAME' (TYPE)`.
    public var description: String {
        if let service { return "service \(service)" }
        return Self.format(host: host, port: String(port))
    }

    private static func format(host: String, port: String) -> String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// Looks the host up with `getaddrinfo` (at start, and again at reload) and takes the first
    /// address. A service's address comes later, from a ``ServiceTarget``.
    public func resolve() throws(OSCDestinationError) -> ResolvedOSCDestination {
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
        let address = SocketAddress(first.pointee.ai_addr, length: Int(first.pointee.ai_addrlen))
        return ResolvedOSCDestination(destination: self, address: address)
    }
}

/// A destination with its address looked up, ready for a ``OSCSender``.
public struct ResolvedOSCDestination: Hashable, Sendable, CustomStringConvertible {
    public let destination: OSCDestination
    public let address: SocketAddress

    public init(destination: OSCDestination, address: SocketAddress) {
        self.destination = destination
        self.address = address
    }

    public var description: String { "\(destination) (\(address))" }
}

/// An IPv4 or IPv6 socket address, held as the bytes of its `sockaddr_in` / `sockaddr_in6`.
public struct SocketAddress: Hashable, Sendable, CustomStringConvertible {
    /// `AF_INET` or `AF_INET6`.
    public let family: Int32
    private let bytes: [UInt8]

    /// Copies `length` bytes of the socket address at `address`.
    public init(_ address: UnsafePointer<sockaddr>, length: Int) {
        family = Int32(address.pointee.sa_family)
        bytes = Array(UnsafeRawBufferPointer(start: address, count: length))
    }

    /// Calls `body` with the address as the C calls take it.
    public func withSockaddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) throws -> R) rethrows -> R {
        try bytes.withUnsafeBytes { raw in
            try body(raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(raw.count))
        }
    }

    /// The IP address without the port.
    public var ip: IPAddress? { withSockaddr { address, _ in IPAddress(address) } }

    /// Whether this is a multicast group (224.0.0.0/4 or ff00::/8).
    public var isMulticast: Bool {
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
    public var description: String {
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
