import Endpoints
import MIDI
import OSCMapping

/// The OSC -> MIDI direction as a config sets it up (the top-level `osc` key): where to listen,
/// who may send, what is accepted, the operators, and the mapping rules.
package struct OSCInputConfig: Sendable, Equatable {
    /// o2m's default port, so senders written for osmid's o2m reach aseqosc unchanged.
    static let defaultPort = 57200
    /// The largest `maxPacketSize`: OSC 1.0 length prefixes of up to 16 MiB start with a zero
    /// byte, which is how a TCP stream's framing is told from SLIP.
    static let packetSizeLimit = 8 << 20

    /// A transport the OSC input listens on.
    package enum Transport: String, Sendable, CaseIterable, Comparable {
        case udp, tcp

        package static func < (lhs: Self, rhs: Self) -> Bool { lhs == .udp && rhs == .tcp }
    }

    /// The numeric address to bind; loopback by default, so only this machine can send.
    package var host = "127.0.0.1"
    package var port = OSCInputConfig.defaultPort
    /// UDP, TCP, or both on the same port.
    package var transports: Set<Transport> = [.udp]
    /// TCP: the most clients connected at once.
    package var maxConnections = 16
    /// TCP: the largest packet a client may send (a larger one closes its connection).
    package var maxPacketSize = 65_536
    /// TCP: seconds a packet may take to arrive whole once its first byte has; a connection
    /// stuck inside one longer is closed, so it cannot hold its slot.
    package var frameTimeout = 5.0
    /// Sender networks; required (non-empty) when ``host`` is not a loopback address.
    package var allow: [IPNetwork] = []
    /// Whether SysEx from the network is sent (it can reprogram hardware, so it is off by default).
    package var sysex = false
    /// How fast SysEx leaves per output port (MIDI's wire speed is 3125 bytes/s); 0: no pacing.
    package var sysexBytesPerSecond = 3125
    /// Which built-in address families are accepted.
    package var families: Set<OSCAddressFamily> = Set(OSCAddressFamily.allCases)
    /// Operators every translated event runs through (`ports` names output ports here).
    package var operators: [OperatorConfig] = []
    /// The user's mapping rules, tried before the built-in addresses.
    package var mappings: [OSCMappingRule] = []
    /// Whether the input is announced over DNS-SD (`_osc._udp`, `_osc._tcp`) when it listens
    /// on an address other machines can reach (`announce: false` turns it off).
    package var announce = true
    /// The DNS-SD instance name (`announce: "NAME"`); nil: "aseqosc on HOSTNAME".
    package var serviceName: String?
    /// The TCP port of the OSCQuery server describing what the input accepts (`osc.query`; 0:
    /// any free port); nil when it is off. On by default, on the listen port + 1, when the
    /// input listens where other machines can reach it.
    package var queryPort: Int?
    /// Whether the OSCQuery server serves the status page to browsers (`query.page`; on unless
    /// false).
    package var page = true
    /// What the page may do (`query.actions`): some of ``pageActionNames``; none unless listed.
    package var pageActions: [String] = []
    /// Whom the page's actions are taken from (`query.actionsAllow`): this machine unless set.
    package var actionsAllow: [IPNetwork] = OSCInputConfig.loopback
    /// The actions a page can be given.
    static let pageActionNames = ["reload", "panic", "sync"]
    static let loopback = [try! IPNetwork(parsing: "127.0.0.0/8"), try! IPNetwork(parsing: "::1/128")]
    /// Set when this is the TouchOSC Bridge's input (`touchoscBridge`): the source address of
    /// what arrives is the client the bridge's route sends to.
    package var touchOSCBridge: TouchOSCBridgeConfig?

    /// Whether other machines can reach the input: it listens on a non-loopback address.
    package var isReachableFromNetwork: Bool { IPAddress(parsing: host).map { !$0.isLoopback } ?? false }

    /// `host:port`, with an IPv6 host in brackets.
    package var endpoint: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

extension ConfigParser {
    package static let oscKeys = [
        "enabled", "listen", "protocol", "maxConnections", "maxPacketSize", "frameTimeout", "allow", "sysex",
        "sysexBytesPerSecond", "accept", "operators", "mappings", "announce", "query",
    ]

    /// Reads the `osc` key (nil node: the defaults). Returns nil when the OSC input is off: no
    /// output ports, or `enabled: false`.
    package static func oscInput(
        _ node: ConfigNode?, outputs: [OutputPortConfig], middleCOctave: Int, mappingSets: MappingSets = MappingSets()
    ) throws(ConfigError) -> OSCInputConfig? {
        var config = OSCInputConfig()
        guard let node else { return outputs.isEmpty ? nil : config }
        let object = try node.object(allowing: oscKeys)
        if let enabled = object["enabled"], try !enabled.bool() { return nil }
        guard !outputs.isEmpty else {
            throw node.error("OSC input needs at least one output port (outputs: [{ name, to }]), or enabled: false")
        }
        if let listen = object["listen"] { (config.host, config.port) = try listenAddress(listen) }
        if let transports = object["protocol"] { config.transports = try self.transports(transports) }
        for (key, range) in [("maxConnections", 1...1024), ("maxPacketSize", 64...OSCInputConfig.packetSizeLimit)] {
            guard let limit = object[key] else { continue }
            let value = try limit.int(in: range)
            guard config.transports.contains(.tcp) else {
                throw limit.error("applies to TCP only; add \"tcp\" to osc.protocol, e.g. protocol: [\"udp\", \"tcp\"]")
            }
            if key == "maxConnections" { config.maxConnections = value } else { config.maxPacketSize = value }
        }
        if let timeout = object["frameTimeout"] {
            let value = try timeout.number(in: 0.01...3600)
            guard config.transports.contains(.tcp) else {
                throw timeout.error(
                    "applies to TCP only; add \"tcp\" to osc.protocol, e.g. protocol: [\"udp\", \"tcp\"]")
            }
            config.frameTimeout = value
        }
        if let allow = object["allow"] {
            let texts = try allow.strings()
            for (index, text) in texts.enumerated() {
                do {
                    config.allow.append(try IPNetwork(parsing: text))
                } catch {
                    let path = if case .array = allow.value { "\(allow.path)[\(index)]" } else { allow.path }
                    throw ConfigError(path: path, message: error.description)
                }
            }
        }
        if let address = IPAddress(parsing: config.host), !address.isLoopback, config.allow.isEmpty {
            throw ConfigError(
                path: ConfigNode.join(node.path, "allow"),
                message: "required when listening on \(config.endpoint), which is not a loopback address: "
                    + "list the networks that may send, e.g. [\"192.168.1.0/24\"]")
        }
        if let announce = object["announce"] { try self.announce(announce, into: &config) }
        try query(object["query"], into: &config)
        if let sysex = object["sysex"] { config.sysex = try sysex.bool() }
        if let rate = object["sysexBytesPerSecond"] { config.sysexBytesPerSecond = try rate.int(in: 0...1_000_000) }
        if let accept = object["accept"] {
            config.families = []
            for (index, name) in try accept.strings().enumerated() {
                guard let family = OSCAddressFamily(rawValue: name) else {
                    let path = if case .array = accept.value { "\(accept.path)[\(index)]" } else { accept.path }
                    let known = OSCAddressFamily.allCases.map(\.rawValue).joined(separator: ", ")
                    throw ConfigError(path: path, message: "unknown address family '\(name)'; expected one of \(known)")
                }
                config.families.insert(family)
            }
        }
        let outputNames = outputs.map(\.name)
        if let operators = object["operators"] {
            let context = Context(inputNames: outputNames, middleCOctave: middleCOctave)
            for element in try operators.array() { config.operators.append(try `operator`(element, context)) }
        }
        if let mappings = object["mappings"] {
            for parsed in try mappingList(mappings, sets: mappingSets, outputNames: outputNames) {
                if parsed.outputMissing && outputNames.count > 1 {
                    throw ConfigError(
                        path: ConfigNode.join(parsed.node.path, "output"),
                        message: "required with more than one output port: an output's name, or \"*\" for all"
                            + (parsed.node.path.hasPrefix(mappings.path) ? "" : " (used by \(mappings.path))"))
                }
                config.mappings.append(parsed.rule)
            }
        }
        return config
    }

    /// `announce: true`, `false` or the instance name. Given as anything but `false`, it needs a
    /// listen address other machines can reach (the default, unset, announces only then).
    package static func announce(_ node: ConfigNode, into config: inout OSCInputConfig) throws(ConfigError) {
        let usage = "expected true, false or a name for the announcement, e.g. \"Studio bridge\""
        switch node.value {
        case .bool(let on): config.announce = on
        case .string(let name):
            guard !name.isEmpty else { throw node.error("empty name; \(usage)") }
            guard name.utf8.count <= 63 else {
                throw node.error("'\(name)' is \(name.utf8.count) bytes; a DNS-SD name has at most 63")
            }
            config.serviceName = name
        default: throw node.error(usage)
        }
        guard config.announce, !config.isReachableFromNetwork else { return }
        throw node.error(
            "announcing needs a listen address other machines can reach; \(config.endpoint) is loopback "
                + "(e.g. listen: \"0.0.0.0:\(config.port)\" with allow: [\"192.168.1.0/24\"])")
    }

    /// `query: false`, `true` or `{ port: N }`; unset: on the listen port + 1 when the input
    /// listens beyond loopback, off otherwise (a loopback input can still ask for it).
    package static func query(_ node: ConfigNode?, into config: inout OSCInputConfig) throws(ConfigError) {
        let defaultPort = config.port < 65535 ? config.port + 1 : config.port - 1
        guard let node else {
            config.queryPort = config.isReachableFromNetwork ? defaultPort : nil
            return
        }
        var portPath = node.path
        switch node.value {
        case .bool(let on): config.queryPort = on ? defaultPort : nil
        case .object:
            portPath = ConfigNode.join(node.path, "port")
            let object = try node.object(allowing: ["port", "page", "actions", "actionsAllow"])
            config.queryPort =
                try object["port"].map { port throws(ConfigError) in try port.int(in: 0...65535) }
                ?? defaultPort
            if let page = object["page"] { config.page = try page.bool() }
            if let actions = object["actions"] {
                config.pageActions = try actions.array().map { action throws(ConfigError) in
                    let name = try action.string()
                    guard OSCInputConfig.pageActionNames.contains(name) else {
                        throw action.error(
                            "unknown action '\(name)'; the page can offer \(OSCInputConfig.pageActionNames.joined(separator: ", "))"
                        )
                    }
                    return name
                }
            }
            if let allow = object["actionsAllow"] {
                config.actionsAllow = try allow.array().map { network throws(ConfigError) in
                    let text = try network.string()
                    do { return try IPNetwork(parsing: text) } catch { throw network.error("\(error)") }
                }
            }
        default:
            throw node.error(
                "expected true, false or { port: N, page, actions, actionsAllow } (the OSCQuery server's TCP port; "
                    + "0: any free one)")
        }
        if let port = config.queryPort, port == config.port, config.transports.contains(.tcp) {
            throw ConfigError(
                path: portPath,
                message: "port \(port) is the OSC input's TCP port; OSCQuery needs another one")
        }
    }

    /// `"udp"`, `"tcp"` or both, `["udp", "tcp"]`.
    package static func transports(_ node: ConfigNode) throws(ConfigError) -> Set<OSCInputConfig.Transport> {
        let usage = "expected \"udp\", \"tcp\" or both, [\"udp\", \"tcp\"]"
        let names = try node.strings()
        guard !names.isEmpty else { throw node.error("no protocol; \(usage)") }
        var transports: Set<OSCInputConfig.Transport> = []
        for (index, name) in names.enumerated() {
            guard let transport = OSCInputConfig.Transport(rawValue: name) else {
                let path = if case .array = node.value { "\(node.path)[\(index)]" } else { node.path }
                throw ConfigError(path: path, message: "unknown protocol '\(name)'; \(usage)")
            }
            transports.insert(transport)
        }
        return transports
    }

    /// `"127.0.0.1:57200"`, `"[::]:57200"` or `"0.0.0.0:9000"`: a numeric address and a port.
    package static func listenAddress(_ node: ConfigNode) throws(ConfigError) -> (String, Int) {
        let text = try node.string()
        let usage = "expected a numeric address and port, e.g. \"127.0.0.1:57200\", \"0.0.0.0:57200\" or \"[::]:57200\""
        let host: Substring
        let port: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[close...].hasPrefix("]:") else { throw node.error(usage) }
            host = text[text.index(after: text.startIndex)..<close]
            port = text[text.index(close, offsetBy: 2)...]
        } else {
            guard let colon = text.lastIndex(of: ":"), !text[..<colon].contains(":") else { throw node.error(usage) }
            host = text[..<colon]
            port = text[text.index(after: colon)...]
        }
        guard IPAddress(parsing: String(host)) != nil else {
            throw node.error("'\(host)' is not a numeric IPv4 or IPv6 address; \(usage)")
        }
        guard port.count <= 5, port.allSatisfy(\.isASCII), let number = Int(port), (1...65535).contains(number) else {
            throw node.error("invalid port '\(port)'; ports are 1-65535")
        }
        return (String(host), number)
    }

    package static let mappingKeys = ["address", "args", "output", "type"]

    /// One mapping rule: `{ address, args, output, type, <fields of the type> }`. Without
    /// `outputRequired`, a missing `output` is left for the user of the rule to report.
    package static func mapping(_ node: ConfigNode, outputNames: [String], outputRequired: Bool = true)
        throws(ConfigError)
        -> OSCMappingRule
    {
        guard case .object(let members) = node.value else { throw node.expected("an object") }
        let typeNode = ConfigObject(members: members, path: node.path)["type"]
        guard let typeNode else {
            throw ConfigError(path: ConfigNode.join(node.path, "type"), message: "required key is missing")
        }
        let typeName = try typeNode.string()
        guard let kind = OSCMappingRule.kinds.first(where: { $0.description == typeName }) else {
            let known = OSCMappingRule.kinds.map(\.description).joined(separator: ", ")
            throw typeNode.error("unknown event type '\(typeName)'; expected one of \(known)")
        }
        let fields = OSCMappingRule.fields(for: kind)
        let object = try node.object(allowing: mappingKeys + fields.map(\.name))
        let addressNode = try object.required("address")
        let addressText = try addressNode.nonEmptyString()
        let address: OSCMappingAddress
        do {
            address = try OSCMappingAddress(addressText)
        } catch {
            throw addressNode.error(error.description)
        }
        var argumentTypes: [UInt8]?
        if let args = object["args"] {
            let tags = Array(try args.string().utf8)
            for tag in tags where !OSCTypeTags.accepted.contains(tag) {
                throw args.error(
                    "unknown type tag '\(Character(Unicode.Scalar(tag)))'; numbers are i, f, h or d "
                        + "(any of them accepts any number), and s, b, T, F, N, I, m must match exactly")
            }
            argumentTypes = tags
        }
        var output = OSCMappingOutput.port(0)
        if let outputNode = object["output"] {
            let name = try outputNode.nonEmptyString()
            if name == "*" {
                output = .all
            } else if let index = outputNames.firstIndex(of: name) {
                output = .port(index)
            } else if outputNames.isEmpty {
                throw outputNode.error("no output port named '\(name)': the config has no outputs")
            } else {
                let known = outputNames.map { "'\($0)'" }.joined(separator: ", ")
                throw outputNode.error("no output port named '\(name)'; outputs are \(known), or \"*\" for all")
            }
        } else if outputRequired && outputNames.count > 1 {
            throw ConfigError(
                path: ConfigNode.join(node.path, "output"),
                message: "required with more than one output port: an output's name, or \"*\" for all")
        }
        var values: [OSCMappingValue?] = []
        for field in fields {
            guard let fieldNode = object[field.name] else {
                if field.isRequired {
                    throw ConfigError(path: ConfigNode.join(node.path, field.name), message: "required key is missing")
                }
                values.append(nil)
                continue
            }
            values.append(try mappingValue(fieldNode, field: field, address: address, argumentTypes: argumentTypes))
        }
        return OSCMappingRule(
            address: address, argumentTypes: argumentTypes, output: output, kind: kind, values: values)
    }

    /// A field's value: a number, `"{name}"` (an address capture), `"{0}"` (an argument), or
    /// `{ from: "{0}", in: [a, b], out: [c, d] }` (scaled linearly, clamped).
    package static func mappingValue(
        _ node: ConfigNode, field: OSCMappingField, address: OSCMappingAddress, argumentTypes: [UInt8]?
    ) throws(ConfigError) -> OSCMappingValue {
        switch node.value {
        case .number:
            return OSCMappingValue(.constant(try node.number()))
        case .string:
            return OSCMappingValue(try mappingSource(node, address: address, argumentTypes: argumentTypes))
        case .object:
            let object = try node.object(allowing: ["from", "in", "out"])
            let source = try mappingSource(object.required("from"), address: address, argumentTypes: argumentTypes)
            func pair(_ key: String) throws(ConfigError) -> (Double, Double) {
                let pairNode = try object.required(key)
                let values = try pairNode.array()
                guard values.count == 2 else { throw pairNode.expected("[from, to]") }
                return (try values[0].number(), try values[1].number())
            }
            let input = try pair("in")
            let output = try pair("out")
            guard input.0 != input.1 else {
                throw ConfigError(path: ConfigNode.join(node.path, "in"), message: "the two ends are equal")
            }
            return OSCMappingValue(source, scale: OSCLinearScale(input: input, output: output))
        default:
            throw node.expected(
                "a number, \"{name}\" (a capture of the address), \"{0}\" (an argument) or { from, in, out }")
        }
    }

    package static func mappingSource(_ node: ConfigNode, address: OSCMappingAddress, argumentTypes: [UInt8]?)
        throws(ConfigError) -> OSCMappingValue.Source
    {
        if case .number = node.value { return .constant(try node.number()) }
        let text = try node.string()
        guard text.hasPrefix("{"), text.hasSuffix("}"), text.count > 2 else {
            throw node.error("expected \"{name}\" (a capture of the address) or \"{0}\" (the first argument)")
        }
        let name = String(text.dropFirst().dropLast())
        if let index = Int(name), name.allSatisfy(\.isASCII) {
            guard index >= 0, index < 16 else { throw node.error("argument numbers are 0-15") }
            if let argumentTypes {
                guard index < argumentTypes.count else {
                    throw node.error(
                        "argument {\(index)} does not exist: args is '\(String(decoding: argumentTypes, as: UTF8.self))'"
                    )
                }
                guard OSCTypeTags.numeric.contains(argumentTypes[index]) else {
                    throw node.error(
                        "argument {\(index)} is not a number in args '\(String(decoding: argumentTypes, as: UTF8.self))'"
                    )
                }
            }
            return .argument(index)
        }
        guard let capture = address.captureNames.firstIndex(of: name) else {
            let known =
                address.captureNames.isEmpty
                ? "it has none" : "its captures are " + address.captureNames.map { "{\($0)}" }.joined(separator: ", ")
            throw node.error("'{\(name)}' is not a capture of the address '\(address)'; \(known)")
        }
        return .capture(capture)
    }
}

/// The type tags a mapping's `args` may list.
enum OSCTypeTags {
    static let numeric: [UInt8] = Array("ifhd".utf8)
    static let accepted: [UInt8] = Array("ifhdsbTFNIm".utf8)
}

extension OSCInputConfig {
    /// One line for `aseqosc check` and the start-up log.
    package var summary: String {
        let protocols = transports.sorted().map(\.rawValue).joined(separator: "+")
        var parts = ["osc input \(protocols) \(endpoint)"]
        if transports.contains(.tcp) {
            parts[0] +=
                " (TCP: up to \(maxConnections) connections, packets up to \(maxPacketSize) bytes"
                + " within \(ConfigValue.format(frameTimeout)) s)"
        }
        if !allow.isEmpty { parts.append("from " + allow.map(\.description).joined(separator: ", ")) }
        parts.append("accepting " + families.map(\.rawValue).sorted().joined(separator: ", "))
        if !mappings.isEmpty { parts.append("\(mappings.count) mapping\(mappings.count == 1 ? "" : "s")") }
        if !operators.isEmpty { parts.append("\(operators.count) operator\(operators.count == 1 ? "" : "s")") }
        parts.append(sysex ? "SysEx on" : "SysEx off")
        if let queryPort { parts.append(queryPort == 0 ? "OSCQuery on a free port" : "OSCQuery on port \(queryPort)") }
        return parts.joined(separator: ", ")
    }
}
