import Config
import Foundation
import Testing

/// `sync`: when a destination or an output port is sent its last values again; `true` takes
/// every trigger that can happen to it, a list names them, and one that cannot happen there is
/// refused with the reason.
@Suite struct SyncConfigTests {
    static func parse(destinations: String, outputs: String = "[]") throws -> BridgeConfig {
        let text = """
            { inputs: [{ name: "in" }], outputs: \(outputs), routes: [{ destinations: [\(destinations)] }] }
            """
        return try ConfigParser.parse(Data(text.utf8))
    }

    @Test func trueTakesWhatCanHappenToEachDestinationAndPort() throws {
        let config = try Self.parse(
            destinations: """
                { host: "10.0.0.5", port: 9000, sync: true },
                { host: "10.0.0.5", port: 9001, protocol: "tcp", sync: true },
                { service: "Synth", protocol: "tcp", sync: true },
                { host: "10.0.0.5", port: 9002 },
                { service: "Lights", sync: ["appear"] },
                { host: "10.0.0.6", port: 57300, recovery: true, sync: true },
                """, outputs: #"[{ name: "synth", sync: true }, { name: "lights", sync: ["device"] }]"#)
        let sync = config.routes[0].chain.destinations.map(\.sync)
        #expect(
            sync == [
                [.request], [.request, .reconnect], [.request, .reconnect, .appear], [], [.appear],
                [.request, .recovery],
            ])
        #expect(config.outputs.map(\.sync) == [[.device, .request], [.device]])
        #expect(SyncTriggers([.reconnect, .request]).description == "reconnect, request")
    }

    static let errors: [(String, String, String)] = [
        (
            #"{ host: "h", port: 1, sync: ["reconnect"] }"#, "[]",
            "routes[0].destinations[0].sync: sync 'reconnect' cannot happen here: only a TCP destination "
                + "(protocol: \"tcp\") reconnects; this one can have request"
        ),
        (
            #"{ host: "h", port: 1, protocol: "tcp", sync: ["appear"] }"#, "[]",
            "routes[0].destinations[0].sync: sync 'appear' cannot happen here: only a destination with 'service' "
                + "appears; this one can have reconnect, request"
        ),
        (
            #"{ host: "h", port: 1, sync: ["device"] }"#, "[]",
            "routes[0].destinations[0].sync: sync 'device' cannot happen here: 'device' is for output ports, whose "
                + "device can come back; this one can have request"
        ),
        (
            #"{ host: "h", port: 1, sync: ["soon"] }"#, "[]",
            "routes[0].destinations[0].sync: unknown sync trigger 'soon'; expected one of reconnect, appear, request, device, "
                + "recovery"
        ),
        (
            #"{ host: "h", port: 1, recovery: "note-offs", sync: ["recovery"] }"#, "[]",
            "routes[0].destinations[0].sync: sync 'recovery' cannot happen here: only a UDP destination with "
                + "recovery: true hears from its receiver; this one can have request"
        ),
        (
            #"{ host: "h", port: 1, sync: "yes" }"#, "[]",
            "routes[0].destinations[0].sync: expected true, false, or a list of request, found \"yes\""
        ),
        (
            #"{ host: "h", port: 1 }"#, #"[{ name: "synth", sync: ["reconnect"] }]"#,
            "outputs[0].sync: sync 'reconnect' cannot happen here: only a TCP destination (protocol: \"tcp\") "
                + "reconnects; this one can have request, device"
        ),
    ]

    @Test(arguments: errors)
    func mistakesAreNamed(_ destination: String, _ outputs: String, _ message: String) {
        do {
            _ = try Self.parse(destinations: destination, outputs: outputs)
            Issue.record("accepted: \(destination) \(outputs)")
        } catch {
            #expect("\(error)" == message)
        }
    }
}
