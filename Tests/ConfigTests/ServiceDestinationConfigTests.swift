import Config
import Endpoints
import Foundation
import Testing

/// `service`: a destination that follows a DNS-SD service instead of a host and port.
@Suite struct ServiceDestinationConfigTests {
    static func destinations(_ list: String) throws -> [DestinationConfig] {
        let text = "{ inputs: [{ name: \"in\" }], routes: [{ destinations: [\(list)] }] }"
        return try ConfigParser.parse(Data(text.utf8)).routes[0].chain.destinations
    }

    @Test func theProtocolGivesTheTypeUnlessTheConfigDoes() throws {
        let found = try Self.destinations(
            """
            { service: "TouchOSC on iPad" },
            { service: "Studio", protocol: "tcp", framing: "slip" },
            { service: { name: "Mixer", type: "_x32._udp" } },
            """)
        #expect(found[0].service == OSCServiceName(name: "TouchOSC on iPad", type: "_osc._udp"))
        #expect(found[0].endpoint == "service 'TouchOSC on iPad' (_osc._udp)")
        #expect(found[1].service == OSCServiceName(name: "Studio", type: "_osc._tcp"))
        #expect(found[1].tcp?.framing == .slip)
        #expect(found[2].service == OSCServiceName(name: "Mixer", type: "_x32._udp"))
    }

    @Test func theSummaryNamesTheService() throws {
        let text = "{ inputs: [{ name: \"in\" }], routes: [{ destinations: [{ service: \"TouchOSC on iPad\" }] }] }"
        let summary = try ConfigParser.parse(Data(text.utf8)).summary
        #expect(summary.contains("-> _osc._udp service 'TouchOSC on iPad' scheme default"), "\(summary)")
    }

    static let errors: [(String, String)] = [
        (
            "{ service: \"Pad\", host: \"10.0.0.2\" }",
            "routes[0].destinations[0].host: 'host' does not go with 'service': the service says where it is"
        ),
        (
            "{ service: \"Pad\", broadcast: true }",
            "routes[0].destinations[0].broadcast: 'broadcast' does not go with 'service': the service says where it is"
        ),
        (
            "{ service: \"\" }",
            "routes[0].destinations[0].service: expected a non-empty string"
        ),
        (
            "{ service: 7 }",
            "routes[0].destinations[0].service: expected a service name, e.g. \"TouchOSC on iPad\", or { name, type }, found 7"
        ),
        (
            "{ service: { name: \"Pad\", type: \"_osc._tcp\" } }",
            "routes[0].destinations[0].service.type: expected a DNS-SD type over UDP such as \"_osc._udp\" "
                + "(the protocol decides _udp or _tcp)"
        ),
        (
            "{ service: \"\(String(repeating: "x", count: 64))\" }",
            "routes[0].destinations[0].service: '\(String(repeating: "x", count: 64))' is 64 bytes; a DNS-SD name has at most 63"
        ),
        ("{ port: 9000 }", "routes[0].destinations[0].host: required key is missing"),
    ]

    @Test(arguments: errors)
    func mistakesAreNamed(_ destination: String, _ message: String) {
        do {
            _ = try Self.destinations(destination)
            Issue.record("accepted: \(destination)")
        } catch {
            #expect("\(error)" == message)
        }
    }
}
