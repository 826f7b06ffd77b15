import Endpoints

/// A port with the client name users address it by: unique, even when two clients share a name.
package struct NamedPort: Hashable, Sendable, CustomStringConvertible {
    /// The port as the sequencer lists it.
    package var info: PortInfo
    /// The client's name, with ` (2)`, ` (3)` appended when an earlier client has the same name.
    var clientName: String

    package init(info: PortInfo, clientName: String) {
        self.info = info
        self.clientName = clientName
    }

    /// The port's address.
    package var address: PortAddress { info.address }
    /// `"<client name>:<port name>"`, with the unique client name.
    package var name: String { clientName + ":" + info.portName }
    /// `"16:0 Virtual Raw MIDI 0-0:VirMIDI 0-0"`, as error messages list candidates.
    package var description: String { "\(info.address) \(name)" }
}

extension PortInfo {
    /// Unique client names for a port list, by client number.
    ///
    /// Two identical USB keyboards give two clients with the same name. In the order of their
    /// client numbers, the first keeps the bare name and the others get ` (2)`, ` (3)`, ...,
    /// so `"Launchkey MK3 (2)"` addresses the second one. A suffix that another client already
    /// has as its real name is skipped, so every unique name stays unique. Pass the complete
    /// port list: the numbering depends on which clients are present.
    package static func uniqueClientNames(_ ports: [PortInfo]) -> [UInt8: String] {
        Dictionary(uniqueKeysWithValues: uniqueNames(ports).map { ($0.client, $0.name) })
    }

    /// The ports with unique client names (see ``uniqueClientNames(_:)``), in address order.
    package static func named(_ ports: [PortInfo]) -> [NamedPort] {
        let names = uniqueNames(ports)
        return ports.sorted { $0.address < $1.address }.map { port in
            NamedPort(
                info: port, clientName: names.first { $0.client == port.address.client }?.name ?? port.clientName)
        }
    }

    /// ``uniqueClientNames(_:)`` as a list in client order. Lists, not dictionaries: a command's
    /// first dictionary or set of a type makes the runtime search every protocol conformance
    /// in the binary, and `aseqosc send` resolves its port before it needs any other.
    private static func uniqueNames(_ ports: [PortInfo]) -> [(client: UInt8, name: String)] {
        // Each client's real name (every port of a client carries it), in client order.
        var clients: [(client: UInt8, name: String)] = []
        for port in ports.sorted(by: { $0.address < $1.address }) where clients.last?.client != port.address.client {
            clients.append((port.address.client, port.clientName))
        }
        // Skipping suffixes that are real names is enough for uniqueness: a bare name is a real
        // name, and "<name> (<n>)" spells its base name and number, so two bases never collide.
        var unique = clients
        // The next suffix to try for each name seen so far.
        var nextSuffix: [(name: String, number: Int)] = []
        for index in clients.indices {
            let name = clients[index].name
            guard let seen = nextSuffix.firstIndex(where: { $0.name == name }) else {
                nextSuffix.append((name, 2))
                continue
            }
            var number = nextSuffix[seen].number
            var uniqueName: String
            repeat {
                uniqueName = "\(name) (\(number))"
                number += 1
            } while clients.contains(where: { $0.name == uniqueName })
            nextSuffix[seen].number = number
            unique[index].name = uniqueName
        }
        return unique
    }
}
