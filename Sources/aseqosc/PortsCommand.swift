import ALSASequencer
import JSON

/// `aseqosc ports`: every sequencer client and port, for people (a table) and scripts (JSON).
struct PortsCommand: Command {
    static let name = "ports"
    static let abstract = "List ALSA sequencer clients and ports"
    static let help = """
        usage: aseqosc ports [--json]

        Lists every ALSA sequencer port: address (client:port), direction as seen by aseqosc
        (in = a source aseqosc can read, out = a destination it can play), type (hardware or
        software), client name and port name. Use an address or a name as a port spec in the
        config or in `aseqosc monitor` and `aseqosc send --to`.

        options:
          --json    one JSON array of objects instead of the table
        """

    var json: Bool

    package init(arguments: inout ArgumentScanner) throws(UsageError) {
        json = arguments.flag("--json")
        try arguments.finish()
    }

    func run() -> ExitCode {
        let ports: [PortInfo]
        do {
            ports = try SequencerClient(name: "aseqosc-ports").ports()
        } catch {
            printError(error.description)
            return .unavailable
        }
        // Identical client names get " (2)", " (3)": the names port specs accept.
        let unique = PortInfo.uniqueClientNames(ports)
        let named = ports.map { port in
            var port = port
            port.clientName = unique[port.address.client] ?? port.clientName
            return port
        }
        print(json ? Self.json(named) : Self.table(named), terminator: "")
        return .ok
    }

    static func table(_ ports: [PortInfo]) -> String {
        let clientWidth = max(6, ports.map(\.clientName.count).max() ?? 0)
        var text = "PORT     DIR     TYPE      " + "CLIENT".padding(clientWidth) + "  PORT NAME\n"
        for port in ports {
            text +=
                port.address.description.padding(8) + " " + port.direction.padding(7) + " "
                + port.kind.padding(9) + " " + port.clientName.padding(clientWidth) + "  " + port.portName + "\n"
        }
        return text
    }

    static func json(_ ports: [PortInfo]) -> String {
        struct Entry: Encodable {
            var address: String, client: Int, port: Int
            var clientName: String, portName: String
            var direction: String, type: String, capabilities: [String]
        }
        let entries = ports.map { port in
            var capabilities: [String] = []
            if port.capabilities.contains(.read) { capabilities.append("read") }
            if port.capabilities.contains(.write) { capabilities.append("write") }
            if port.capabilities.contains(.subscribeRead) { capabilities.append("subscribe-read") }
            if port.capabilities.contains(.subscribeWrite) { capabilities.append("subscribe-write") }
            return Entry(
                address: port.address.description, client: Int(port.address.client), port: Int(port.address.port),
                clientName: port.clientName, portName: port.portName, direction: port.direction,
                type: port.kind, capabilities: capabilities)
        }
        return JSONWriter.text((try? JSONValueEncoder.encode(entries)) ?? .array([]), pretty: true) + "\n"
    }
}

extension String {
    /// The string left-aligned in a column `width` characters wide.
    func padding(_ width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
