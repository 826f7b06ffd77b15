import Endpoints

/// The TouchOSC Bridge drop-in (the top-level `touchoscBridge` key): what Hexler's TouchOSC
/// Bridge and touchosc2midi do on UDP, expanded when the config is read into an input port and
/// an output port, the OSC input, a route and an announcement (docs/CONFIG.md).
package struct TouchOSCBridgeConfig: Sendable, Equatable {
    /// The port TouchOSC sends to; it is not configurable in TouchOSC (mk1).
    static let defaultPort = 12101
    /// The name of both ALSA ports, as the other bridges name theirs.
    static let defaultName = "TouchOSC Bridge"
    /// The DNS-SD service type TouchOSC browses for.
    package static let serviceType = "_touchoscbridge._udp"
    /// The ``OSCServiceName/type`` of the route's destination: not a DNS-SD type, so no browser
    /// follows it; the OSC input moves it to the latest client instead.
    package static let clientType = "touchosc-bridge client"
    /// Networks that may send by default: loopback and the private and link-local IPv4 ones.
    package static let defaultAllow = [
        "127.0.0.0/8", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16",
    ]

    /// The name of both ALSA ports.
    package var name = TouchOSCBridgeConfig.defaultName
    /// The UDP port listened on; the client is sent to on this port + 1.
    package var port = TouchOSCBridgeConfig.defaultPort
    /// The DNS-SD instance name; nil: the host name, as touchosc2midi announces.
    package var serviceName: String?
    /// Whether `_touchoscbridge._udp` is announced.
    package var announce = true

    /// The defaults: `touchoscBridge: true`.
    package init() {}

    /// Where the client is sent to: the port after the one listened on.
    package var replyPort: Int { port + 1 }
}

extension ConfigParser {
    package static let touchOSCBridgeKeys = ["port", "name", "allow", "announce"]

    /// Reads `touchoscBridge`: `true`, `false`, or `{ port, name, allow, announce }`. Returns the
    /// settings and the networks that may send (nil: the default ones).
    package static func touchOSCBridge(_ node: ConfigNode) throws(ConfigError) -> (TouchOSCBridgeConfig, [IPNetwork])? {
        var bridge = TouchOSCBridgeConfig()
        var allowTexts = TouchOSCBridgeConfig.defaultAllow
        var allowNode: ConfigNode?
        switch node.value {
        case .bool(let on):
            guard on else { return nil }
        case .object:
            let object = try node.object(allowing: touchOSCBridgeKeys)
            if let port = object["port"] { bridge.port = try port.int(in: 1...65534) }
            if let name = object["name"] { bridge.name = try portName(name, taken: []) }
            if let allow = object["allow"] {
                allowTexts = try allow.strings()
                allowNode = allow
            }
            if let announce = object["announce"] {
                switch announce.value {
                case .bool(let on): bridge.announce = on
                case .string(let name) where !name.isEmpty && name.utf8.count <= 63: bridge.serviceName = name
                default: throw announce.expected("true, false or an instance name of at most 63 bytes")
                }
            }
        default:
            throw node.expected("true, false or { port, name, allow, announce }")
        }
        var allow: [IPNetwork] = []
        for (index, text) in allowTexts.enumerated() {
            do {
                allow.append(try IPNetwork(parsing: text))
            } catch {
                let path = allowNode.map { if case .array = $0.value { "\($0.path)[\(index)]" } else { $0.path } }
                throw ConfigError(path: path ?? node.path, message: error.description)
            }
        }
        if let allowNode, allow.isEmpty {
            throw allowNode.error("expected at least one network, e.g. [\"192.168.1.0/24\"]")
        }
        return (bridge, allow)
    }

    /// The bridge's route: its input port (index 0) to the latest client, in the `touchosc`
    /// scheme, whose port byte is the input's index, 0.
    package static func touchOSCBridgeRoute(_ bridge: TouchOSCBridgeConfig) -> RouteConfig {
        var destination = DestinationConfig(
            host: "", port: 0, scheme: "touchosc", messages: [:], resolvedScheme: .touchOSC, multicastTTL: nil,
            multicastInterface: nil, multicastLoop: nil, broadcast: false)
        destination.service = OSCServiceName(name: bridge.name, type: TouchOSCBridgeConfig.clientType)
        // A new client (another tablet, or the same after a restart) gets the faders' and
        // buttons' last values, and so does one that asks with /aseqosc/sync.
        destination.sync = [.appear, .request]
        return RouteConfig(name: bridge.name, inputs: [0], chain: ChainConfig(destinations: [destination]))
    }

    /// The bridge's OSC input: UDP on every IPv4 address, TouchOSC's addresses only.
    package static func touchOSCBridgeInput(_ bridge: TouchOSCBridgeConfig, allow: [IPNetwork]) -> OSCInputConfig {
        var input = OSCInputConfig()
        input.host = "0.0.0.0"
        input.port = bridge.port
        input.allow = allow
        input.families = [.touchosc]
        // Its announcement is `_touchoscbridge._udp`; no `_osc._udp` and no OSCQuery server.
        input.announce = false
        input.queryPort = nil
        input.touchOSCBridge = bridge
        return input
    }
}
