import Discovery
import JSON

/// `aseqosc browse`: the OSC services on the local network, for picking destinations.
struct BrowseCommand: Command {
    static let name = "browse"
    static let abstract = "List OSC services announced on the network (DNS-SD)"
    static let help = """
        usage: aseqosc browse [--json] [--timeout SECONDS]

        Lists the OSC servers on the local network that announce themselves over DNS-SD
        (Zeroconf, Bonjour): TouchOSC, SuperCollider setups, other aseqosc bridges... For each:
        name, protocol (udp, tcp, or http for an OSCQuery server), host, address, port, and
        whether the same host serves an OSCQuery namespace (_oscjson._tcp). Asks the system's
        mDNS responder, avahi-daemon, and returns once it has said what it knows.

        options:
          --json               one JSON array of objects instead of the table
          --timeout SECONDS    the longest to wait for answers (default 5)
        """

    var json: Bool
    var timeout = 5.0

    package init(arguments: inout ArgumentScanner) throws(UsageError) {
        json = arguments.flag("--json")
        if let text = try arguments.option("--timeout") {
            guard let seconds = Double(text), seconds > 0, seconds <= 600 else {
                throw UsageError("--timeout takes seconds, more than 0 and at most 600 (e.g. --timeout 2)")
            }
            timeout = seconds
        }
        try arguments.finish()
    }

    func run() -> ExitCode {
        let found: [FoundService]
        do {
            found = try ServiceBrowser().browse(timeout: timeout)
        } catch {
            if error.isDaemonUnavailable {
                printError(
                    "avahi-daemon is not running: browsing needs the system's mDNS responder "
                        + "(sudo apt install avahi-daemon; sudo systemctl start avahi-daemon)")
            } else {
                printError("browse: \(error)")
            }
            return .unavailable
        }
        let services = Self.listed(found)
        print(json ? Self.json(services) : Self.table(services), terminator: "")
        return .ok
    }

    /// A service as listed: one line per name, type and address.
    struct Listed: Encodable, Equatable {
        var name: String
        var `protocol`: String
        var type: String
        var host: String
        var address: String
        var port: Int
        var oscQuery: Bool
        var txt: [String]
    }

    /// The same instance seen on several interfaces once per address; IPv4 before IPv6.
    static func listed(_ found: [FoundService]) -> [Listed] {
        let queryHosts = Set(found.filter { $0.type == "_oscjson._tcp" }.map(\.host))
        var seen = Set<String>()
        var listed: [Listed] = []
        for service in found {
            guard seen.insert("\(service.name)\u{0}\(service.type)\u{0}\(service.address)").inserted else { continue }
            listed.append(
                Listed(
                    name: service.name, protocol: service.transport, type: service.type, host: service.host,
                    address: service.address, port: Int(service.port), oscQuery: queryHosts.contains(service.host),
                    txt: service.txt))
        }
        return listed.sorted {
            ($0.name, $0.type, $0.address.contains(":") ? 1 : 0, $0.address)
                < ($1.name, $1.type, $1.address.contains(":") ? 1 : 0, $1.address)
        }
    }

    static func table(_ services: [Listed]) -> String {
        guard !services.isEmpty else { return "no OSC services announced on the network\n" }
        let nameWidth = max(4, services.map(\.name.count).max() ?? 0)
        let hostWidth = max(4, services.map(\.host.count).max() ?? 0)
        let addressWidth = max(7, services.map(\.address.count).max() ?? 0)
        var text =
            "NAME".padding(nameWidth) + "  PROTO  " + "HOST".padding(hostWidth) + "  "
            + "ADDRESS".padding(addressWidth) + "  PORT   OSCQUERY\n"
        for service in services {
            text +=
                service.name.padding(nameWidth) + "  " + service.protocol.padding(5) + "  "
                + service.host.padding(hostWidth) + "  " + service.address.padding(addressWidth) + "  "
                + String(service.port).padding(5) + "  " + (service.oscQuery ? "yes" : "no") + "\n"
        }
        return text
    }

    static func json(_ services: [Listed]) -> String {
        JSONWriter.text((try? JSONValueEncoder.encode(services)) ?? .array([]), pretty: true) + "\n"
    }
}
