import Endpoints

/// A port with the client name users address it by: unique, even when two clients share a name.
public struct NamedPort: Hashable, Sendable, CustomStringConvertible {
    /// The port as the sequencer lists it.
    public var info: PortInfo
    /// The client's name, with ` (2)`, ` (3)` appended when an earlier client has the same name.
    public var clientName: String

    public init(info: PortInfo, clientName: String) {
        self.info = info
        self.clientName = clientName
    }

    /// The port's address.
    public var address: PortAddress { info.address }
    /// `"<client name>:<port name>"`, with the unique client name.
    public var name: String { clientName + ":" + info.portName }
    /// `"16:0 Virtual Raw MIDI 0-0:VirMIDI 0-0"`, as error messages list candidates.
    public var description: String { "\(info.address) \(name)" }
}

extension PortInfo {
    /// Unique client names for a port list, by client number.
    ///
    /// Two identical USB keyboards give two clients with the same name. In the order of their
    /// client numbers, the first keeps the bare name and the others get ` (2)`, ` (3)`, ...,
    /// so `"Launchkey MK3 (2)"` addresses the second one. A suffix that another client already
    /// has as its real name is skipped, so every unique name stays unique. Pass the complete
    /// port list: the numbering depends on which clients are present.
    public static func uniqueClientNames(_ ports: [PortInfo]) -> [UInt8: String] {
        var realNames: [UInt8: String] = [:]
        for port in ports { realNames[port.address.client] = port.clientName }
        // Skipping suffixes that are real names is enough for uniqueness: a bare name is a real
        // name, and "<name> (<n>)" spells its base name and number, so two bases never collide.
        let taken = Set(realNames.values)

        var unique: [UInt8: String] = [:]
        // The next suffix to try for each name seen so far.
        var nextSuffix: [String: Int] = [:]
        for (client, name) in realNames.sorted(by: { $0.key < $1.key }) {
            var uniqueName = name
            if var number = nextSuffix[name] {
                repeat {
                    uniqueName = "\(name) (\(number))"
                    number += 1
                } while taken.contains(uniqueName)
                nextSuffix[name] = number
            } else {
                nextSuffix[name] = 2
            }
            unique[client] = uniqueName
        }
        return unique
    }

    /// The ports with unique client names (see ``uniqueClientNames(_:)``), in address order.
    public static func named(_ ports: [PortInfo]) -> [NamedPort] {
        let names = uniqueClientNames(ports)
        return ports.sorted { $0.address < $1.address }.map { port in
            NamedPort(info: port, clientName: names[port.address.client] ?? port.clientName)
        }
    }
}
