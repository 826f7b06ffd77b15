import Glibc

/// An OSC service as DNS-SD names it: an instance name, `_osc._udp`, `_osc._tcp` or OSCQuery's
/// `_oscjson._tcp`, a port and the TXT record of the OSC 1.1 proposal ("OSC Service Discovery":
/// `txtvers`, `version`, and `framing` for streams).
package struct OSCService: Sendable, Equatable, CustomStringConvertible {
    /// The DNS-SD transport: the `_udp` or `_tcp` of the service type.
    package enum Transport: String, Sendable, CaseIterable {
        case udp, tcp
    }

    /// The instance name people see ("aseqosc on studio").
    package var name: String
    /// `_osc._udp`, `_osc._tcp` or `_oscjson._tcp`.
    package var type: String
    package var port: UInt16
    /// `key=value` strings, in order.
    package var txt: [String]

    /// Creates a service record.
    package init(name: String, type: String, port: UInt16, txt: [String]) {
        self.name = name
        self.type = type
        self.port = port
        self.txt = txt
    }

    /// The DNS-SD type of OSCQuery's HTTP servers.
    static let oscQueryType = "_oscjson._tcp"

    package var description: String { "'\(name)' (\(type), port \(port))" }

    /// The records of an OSC input listening on `port` over `transports`: one service per
    /// transport under one name. Streams are SLIP framed as OSC 1.1 says (the TCP input also
    /// takes OSC 1.0's length prefix, which needs no announcement).
    /// With `queryPort`, the OSCQuery server on that port is announced under the same name (its
    /// proposal defines no TXT keys).
    package static func announcements(name: String, port: UInt16, transports: [Transport], queryPort: UInt16? = nil)
        -> [OSCService]
    {
        let osc = transports.map { transport in
            var txt = ["txtvers=1", "version=1.1"]
            if transport == .tcp { txt.append("framing=slip") }
            return OSCService(name: name, type: "_osc._\(transport.rawValue)", port: port, txt: txt)
        }
        return osc + (queryPort.map { [OSCService(name: name, type: oscQueryType, port: $0, txt: [])] } ?? [])
    }

    /// The instance name used when the config gives none: "aseqosc on HOSTNAME".
    package static var defaultName: String { "aseqosc on \(hostName)" }

    /// This machine's host name, without its domain.
    package static var hostName: String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "localhost" }
        let name = String(nulTerminated: buffer)
        return name.split(separator: ".").first.map(String.init) ?? name
    }

    /// A DNS-SD instance name is at most 63 bytes of UTF-8 (one DNS label).
    static let nameLimit = 63
}
