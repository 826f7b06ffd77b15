import Glibc
import OSC

/// Why a destination could not be parsed or resolved.
package enum OSCDestinationError: Error, Hashable, Sendable, CustomStringConvertible {
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

    package var description: String {
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
package struct TCPOptions: Hashable, Sendable {
    /// How packets are delimited on the stream.
    package var framing: OSCStreamFraming
    /// The most packets held while the connection is down.
    package var queueCapacity: Int
    /// How long a note-on may wait for the connection and still be sent, in milliseconds.
    package var noteOnTimeoutMilliseconds: Int

    package init(framing: OSCStreamFraming, queueCapacity: Int = 1_024, noteOnTimeoutMilliseconds: Int = 1_000) {
        self.framing = framing
        self.queueCapacity = queueCapacity
        self.noteOnTimeoutMilliseconds = noteOnTimeoutMilliseconds
    }
}

/// A DNS-SD service instance, by name and type: what a destination follows when the config
/// names a service rather than a host.
package struct OSCServiceName: Hashable, Sendable, CustomStringConvertible {
    /// The instance name (`TouchOSC on iPad`).
    package var name: String
    /// `_osc._udp` or `_osc._tcp`.
    package var type: String

    package init(name: String, type: String) {
        self.name = name
        self.type = type
    }

    /// `'NAME' (TYPE)`.
    package var description: String { "'\(name)' (\(type))" }
}

/// Where OSC packets go: a host and port, and how to reach it (UDP unless ``tcp`` is set).
package struct OSCDestination: Hashable, Sendable, CustomStringConvertible {
    /// A name, an IPv4 address or an IPv6 address (without brackets).
    package var host: String
    /// The UDP port, 1...65535.
    package var port: UInt16
    /// Whether the host is a broadcast address (sets `SO_BROADCAST`).
    package var broadcast: Bool
    /// Hops a multicast packet may take (`IP_MULTICAST_TTL`, `IPV6_MULTICAST_HOPS`); system default when nil.
    package var multicastTTL: UInt8?
    /// The network interface multicast leaves by, such as `eth0` (`IP_MULTICAST_IF`, `IPV6_MULTICAST_IF`).
    package var multicastInterface: String?
    /// Whether this host also receives its own multicast (`IP_MULTICAST_LOOP`); system default when nil.
    package var multicastLoopback: Bool?
    /// Over TCP, with these options, instead of UDP (nil).
    package var tcp: TCPOptions?
    /// The DNS-SD service the destination follows; nil for a fixed ``host`` and ``port``
    /// (which are then empty and 0).
    package var service: OSCServiceName?

    /// A destination that goes wherever the service `service` is (over IPv4).
    package init(service: OSCServiceName) {
        host = ""
        port = 0
        broadcast = false
        self.service = service
    }

    /// A destination; throws for a port outside 1...65535 or an empty host.
    package init(
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
    package init(
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
    package var description: String {
        if let service { return "service \(service)" }
        return Self.format(host: host, port: String(port))
    }

    private static func format(host: String, port: String) -> String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}
