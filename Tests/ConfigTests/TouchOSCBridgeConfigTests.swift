import Config
import Endpoints
import Foundation
import OSCMapping
import Testing

/// `touchoscBridge`: what it expands into when the config is read, and its mistakes.
@Suite struct TouchOSCBridgeConfigTests {
    static func parse(_ text: String) throws -> BridgeConfig {
        try ConfigParser.parse(Data(text.utf8))
    }

    @Test func trueExpandsIntoPortsAnInputARouteAndALearnedDestination() throws {
        let config = try Self.parse("{ touchoscBridge: true }")
        #expect(config.touchOSCBridge == TouchOSCBridgeConfig())
        #expect(config.inputs.map(\.name) == ["TouchOSC Bridge"] && config.inputs[0].from.isEmpty)
        #expect(config.outputs.map(\.name) == ["TouchOSC Bridge"])
        let osc = try #require(config.oscInput)
        #expect(osc.endpoint == "0.0.0.0:12101")
        #expect(osc.transports == [.udp])
        #expect(osc.families == [.touchosc])
        #expect(!osc.sysex && !osc.announce && osc.queryPort == nil)
        #expect(osc.allow.map(\.description) == TouchOSCBridgeConfig.defaultAllow)
        #expect(osc.touchOSCBridge?.replyPort == 12102)
        #expect(config.routes.count == 1)
        let route = config.routes[0]
        #expect(route.inputs == [0])
        let destination = try #require(route.chain.destinations.first)
        #expect(destination.resolvedScheme == .touchOSC)
        #expect(destination.service == OSCServiceName(name: "TouchOSC Bridge", type: "touchosc-bridge client"))
        #expect(try Self.parse("{ touchoscBridge: false }").touchOSCBridge == nil)
    }

    @Test func everyKeyIsRead() throws {
        let config = try Self.parse(
            "{ touchoscBridge: { port: 9000, name: \"TO\", allow: \"10.1.0.0/16\", announce: \"Studio\" } }")
        let bridge = try #require(config.touchOSCBridge)
        #expect(bridge.port == 9000 && bridge.replyPort == 9001 && bridge.name == "TO")
        #expect(bridge.serviceName == "Studio" && bridge.announce)
        #expect(config.oscInput?.endpoint == "0.0.0.0:9000")
        #expect(config.oscInput?.allow.map(\.description) == ["10.1.0.0/16"])
        #expect(config.inputs.map(\.name) == ["TO"] && config.outputs.map(\.name) == ["TO"])
        #expect(try Self.parse("{ touchoscBridge: { announce: false } }").touchOSCBridge?.announce == false)
    }

    /// Its ports are number 0 both ways, so TouchOSC's port byte 0 is the bridge's; the config's
    /// own ports and routes follow, and a route without `from` does not take the bridge's input.
    @Test func theConfigsOwnPortsAndRoutesComeAfterTheBridges() throws {
        let config = try Self.parse(
            """
            { touchoscBridge: true, inputs: [{ name: "keys" }], outputs: [{ name: "synth" }],
              routes: [{ destinations: [{ host: "127.0.0.1", port: 9000 }] }] }
            """)
        #expect(config.inputs.map(\.name) == ["TouchOSC Bridge", "keys"])
        #expect(config.outputs.map(\.name) == ["TouchOSC Bridge", "synth"])
        #expect(config.routes.map(\.inputs) == [[0], [1]])
        #expect(config.routes[1].chain.destinations[0].endpoint == "127.0.0.1:9000")
    }

    @Test(arguments: [
        ("{ touchoscBridge: 1 }", "touchoscBridge: expected true, false or { port, name, allow, announce }, found 1"),
        ("{ touchoscBridge: { port: 65535 } }", "touchoscBridge.port: expected 1-65534, found 65535"),
        ("{ touchoscBridge: { prot: 1 } }", "touchoscBridge.prot: unknown key; did you mean 'port'?"),
        ("{ touchoscBridge: { allow: [] } }", "touchoscBridge.allow: expected at least one network, e.g. [\"192.168.1.0/24\"]"),
        (
            "{ touchoscBridge: true, inputs: [{ name: \"TouchOSC Bridge\" }] }",
            "inputs[0].name: the port name 'TouchOSC Bridge' is used twice"
        ),
        (
            "{ touchoscBridge: true, outputs: [{ name: \"a\" }], osc: { listen: \"127.0.0.1:9000\" } }",
            "osc: does not go with touchoscBridge, whose UDP input on 0.0.0.0:12101 is the config's OSC input; remove one of them"
        ),
        (
            "{ touchoscBridge: true, routes: [{ destinations: [{ host: \"h\", port: 1 }] }] }",
            "routes[0]: a route needs 'from' or an input port of its own: the TouchOSC Bridge's input has its own route"
        ),
    ])
    func mistakesAreNamed(_ text: String, _ message: String) {
        #expect(throws: (any Error).self) { try Self.parse(text) }
        do {
            _ = try Self.parse(text)
        } catch {
            #expect("\(error)" == message)
        }
    }
}
