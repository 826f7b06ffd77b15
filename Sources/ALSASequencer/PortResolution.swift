import Endpoints

extension PortSpec.Direction {
    /// Whether `port` can be used in this direction.
    package func admits(_ port: PortInfo) -> Bool {
        switch self {
        case .source: port.capabilities.isSource
        case .destination: port.capabilities.isDestination
        }
    }
}

extension PortSpec {
    /// The ports this spec names among `ports`, in address order.
    ///
    /// Only ports of `direction` are considered, and never those of `ownClient` (aseqosc's own
    /// client). Names, regular expressions and `*` never match the System client (0); its ports
    /// can still be named by number.
    ///
    /// - Numbers (`20:0`, `20`) resolve by number only: the port, or the client's lowest-numbered
    ///   port of the direction.
    /// - A name resolves to one port, looked up in two rounds; the first that finds anything wins:
    ///   1. Exact: the text is a client name (its lowest-numbered port), a `client:port` name,
    ///      or a client name, `:` and a port number (`KeyStep Pro:1`).
    ///   2. Prefix: the text starts a client name or a `client:port` name (`KeyStep`,
    ///      `KeyStep Pro:KeyStep Pro MIDI`), case-sensitively.
    ///
    ///   So an exact name beats a prefix, and a prefix beats a regular expression (which must be
    ///   written between slashes). If the round that finds ports finds them in more than one
    ///   client, the spec is ambiguous and nothing is chosen; within one client it is the
    ///   lowest-numbered port. Client names are the unique ones of ``PortInfo/named(_:)``, so when
    ///   two keyboards share a name, `Launchkey MK3` is the first and `Launchkey MK3 (2)` the
    ///   second.
    /// - A regular expression resolves to every port whose `"<client name>:<port name>"`, with
    ///   the real or the unique client name, contains a match.
    /// - `*` resolves to every hardware port (see ``PortInfo/isHardware``).
    ///
    /// - Throws: ``PortResolutionError``: nothing matches, the name is ambiguous, the ports it
    ///   names are of the other direction, or a number names `ownClient`.
    package func resolve(
        in ports: [PortInfo], direction: Direction, excludingClient ownClient: UInt8?
    ) throws(PortResolutionError) -> [PortInfo] {
        switch form {
        case .address(let address) where address.client == ownClient: throw .ownClient(self)
        case .client(let client) where client == ownClient: throw .ownClient(self)
        default: break
        }
        let eligible = PortInfo.named(ports).filter { $0.address.client != ownClient }
        switch match(eligible.filter { direction.admits($0.info) }) {
        case .ports(let found): return found.map(\.info)
        case .ambiguous(let candidates): throw .ambiguous(self, candidates: candidates)
        case .none: break
        }
        // Tell "that port exists but goes the other way" apart from "no such port".
        switch match(eligible.filter { !direction.admits($0.info) }) {
        case .ports(let found), .ambiguous(let found):
            throw .wrongDirection(self, ports: found, wanted: direction)
        case .none:
            throw .noMatch(self)
        }
    }

    private enum Match {
        case none
        case ports([NamedPort])
        case ambiguous([NamedPort])
    }

    /// What this spec matches among `candidates`, which are in address order.
    private func match(_ candidates: [NamedPort]) -> Match {
        switch form {
        case .address(let address):
            return Self.all(candidates.filter { $0.address == address })
        case .client(let client):
            return Self.all(candidates.filter { $0.address.client == client }.prefix(1))
        case .name(let name):
            let named = candidates.filter { !$0.info.isSystem }
            let numbered = Self.numberedReadings(of: name)
            let exact = named.filter { port in
                port.clientName == name || port.name == name
                    || numbered.contains { $0.client == port.clientName && $0.port == port.address.port }
            }
            if !exact.isEmpty { return Self.oneClient(exact) }
            return Self.oneClient(named.filter { $0.clientName.hasPrefix(name) || $0.name.hasPrefix(name) })
        case .pattern(let pattern):
            // Parsing compiled it once already; Regex is not Sendable, so it is not kept.
            guard let regex = try? Regex(pattern) else { return .none }
            return Self.all(
                candidates.filter { port in
                    !port.info.isSystem
                        && (port.name.contains(regex)
                            || (port.info.clientName + ":" + port.info.portName).contains(regex))
                })
        case .allHardware:
            return Self.all(candidates.filter { !$0.info.isSystem && $0.info.isHardware })
        }
    }

    private static func all(_ found: some Collection<NamedPort>) -> Match {
        found.isEmpty ? .none : .ports(Array(found))
    }

    /// One port if all of `found` belong to one client, else the candidates to choose from.
    private static func oneClient(_ found: [NamedPort]) -> Match {
        guard let first = found.first else { return .none }
        if found.contains(where: { $0.address.client != first.address.client }) { return .ambiguous(found) }
        return .ports([first])
    }

    /// Every way to read `name` as `<client name>:<port number>`, splitting at each `:` whose
    /// right side is a port number, since client names may contain `:` too.
    private static func numberedReadings(of name: String) -> [(client: Substring, port: UInt8)] {
        var readings: [(client: Substring, port: UInt8)] = []
        var index = name.startIndex
        while let colon = name[index...].firstIndex(of: ":") {
            let digits = name[name.index(after: colon)...]
            if PortSpec.isDigits(digits), let port = UInt8(digits) {
                readings.append((name[..<colon], port))
            }
            index = name.index(after: colon)
        }
        return readings
    }
}

/// Why a port spec named no usable port; the message names the spec and what to do.
package enum PortResolutionError: Error, Hashable, Sendable, CustomStringConvertible {
    /// No port of either direction matches.
    case noMatch(PortSpec)
    /// A name matches ports of more than one client at the same precedence.
    case ambiguous(PortSpec, candidates: [NamedPort])
    /// Only ports of the other direction match.
    case wrongDirection(PortSpec, ports: [NamedPort], wanted: PortSpec.Direction)
    /// A number names aseqosc's own client.
    case ownClient(PortSpec)

    package var description: String {
        switch self {
        case .noMatch(let spec):
            "no ALSA port matches '\(spec)'; ports are listed by `aseqosc ports`"
        case .ambiguous(let spec, let candidates):
            "'\(spec)' is ambiguous: \(Self.list(candidates)); write more of the name or use client:port"
        case .wrongDirection(let spec, let ports, .source):
            "'\(spec)' is not a source: aseqosc cannot read from \(Self.list(ports)); "
                + "ports are listed by `aseqosc ports`"
        case .wrongDirection(let spec, let ports, .destination):
            "'\(spec)' is not a destination: aseqosc cannot write to \(Self.list(ports)); "
                + "ports are listed by `aseqosc ports`"
        case .ownClient(let spec):
            "'\(spec)' is aseqosc's own client; name another client's port, as listed by `aseqosc ports`"
        }
    }

    private static func list(_ ports: [NamedPort]) -> String {
        ports.map(\.description).joined(separator: ", ")
    }
}
