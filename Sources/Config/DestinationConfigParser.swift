import Endpoints
import MIDI
import OSC
import OSCMapping

/// The OSC destinations of routes: host, port, scheme or custom messages, and what else a
/// destination is sent (recovery, time tags).
extension ConfigParser {
    package static func message(_ node: ConfigNode) throws(ConfigError) -> MessageConfig {
        let message = try node.object(allowing: ["address", "args", "style"])
        let address = try message.required("address").nonEmptyString()
        guard address.hasPrefix("/") else {
            throw ConfigError(path: "\(node.path).address", message: "an OSC address starts with '/'")
        }
        var arguments: [OSCArgumentField] = []
        if let args = message["args"] {
            for (index, name) in try args.strings().enumerated() {
                guard let field = OSCArgumentField(rawValue: name) else {
                    let known = OSCArgumentField.allCases.map(\.rawValue).joined(separator: ", ")
                    throw ConfigError(
                        path: "\(args.path)[\(index)]", message: "unknown argument '\(name)'; expected one of \(known)")
                }
                arguments.append(field)
            }
        }
        var style = OSCArgumentStyle.int
        if let styleNode = message["style"] {
            let name = try styleNode.string()
            guard let known = OSCArgumentStyle(rawValue: name) else {
                let names = OSCArgumentStyle.allCases.map(\.rawValue).joined(separator: ", ")
                throw styleNode.error("unknown style '\(name)'; expected one of \(names)")
            }
            style = known
        }
        return MessageConfig(address: address, arguments: arguments, style: style)
    }

    package static let destinationKeys = [
        "host", "port", "scheme", "messages", "mappings", "unmatched", "multicast", "broadcast", "recovery",
        "latency", "protocol", "framing", "queue", "noteOnTimeout", "service", "sync",
    ]

    /// `service: "NAME"` or `{ name, type }`: the DNS-SD service to follow, of `_osc._udp` or
    /// `_osc._tcp` as the destination's protocol says unless given.
    package static func service(_ node: ConfigNode, tcp: Bool) throws(ConfigError) -> OSCServiceName {
        let defaultType = tcp ? "_osc._tcp" : "_osc._udp"
        let name: String
        var type = defaultType
        switch node.value {
        case .string: name = try node.nonEmptyString()
        case .object:
            let object = try node.object(allowing: ["name", "type"])
            name = try object.required("name").nonEmptyString()
            if let typeNode = object["type"] {
                type = try typeNode.string()
                let transport = tcp ? "_tcp" : "_udp"
                guard type.hasPrefix("_"), type.hasSuffix("." + transport), type.count > transport.count + 2,
                    !type.dropLast(transport.count + 1).contains(".")
                else {
                    throw typeNode.error(
                        "expected a DNS-SD type over \(tcp ? "TCP" : "UDP") such as \"\(defaultType)\" (the protocol decides _udp or _tcp)"
                    )
                }
            }
        default:
            throw node.expected("a service name, e.g. \"TouchOSC on iPad\", or { name, type }")
        }
        guard name.utf8.count <= 63 else {
            throw node.error("'\(name)' is \(name.utf8.count) bytes; a DNS-SD name has at most 63")
        }
        return OSCServiceName(name: name, type: type)
    }

    /// `protocol`, and with `"tcp"` its `framing`, `queue` and `noteOnTimeout`.
    package static func transport(_ object: ConfigObject) throws(ConfigError) -> TCPOptions? {
        let name = try object["protocol"]?.string() ?? "udp"
        guard name == "tcp" else {
            guard name == "udp" else {
                throw object["protocol"]!.error("unknown protocol '\(name)'; expected udp or tcp")
            }
            for key in ["framing", "queue", "noteOnTimeout"] {
                if let option = object[key] {
                    throw option.error("'\(key)' is for TCP destinations (protocol: \"tcp\")")
                }
            }
            return nil
        }
        for key in ["broadcast", "multicast"] {
            if let option = object[key] {
                throw option.error("'\(key)' is for UDP destinations; TCP connects to one host")
            }
        }
        var options = TCPOptions(framing: .lengthPrefixed)
        if let framing = object["framing"] {
            switch try framing.string() {
            case "length": options.framing = .lengthPrefixed
            case "slip": options.framing = .slip
            case let other:
                throw framing.error(
                    "unknown framing '\(other)'; expected 'length' (OSC 1.0: liblo, SuperCollider) or 'slip' (OSC 1.1: python-osc, TouchOSC)"
                )
            }
        }
        if let queue = object["queue"] { options.queueCapacity = try queue.int(in: 1...65_536) }
        if let timeout = object["noteOnTimeout"] { options.noteOnTimeoutMilliseconds = try timeout.int(in: 0...60_000) }
        return options
    }

    /// `true` (held notes), `false`, or a mode's name.
    package static func recovery(_ node: ConfigNode) throws(ConfigError) -> NoteRecovery {
        let choices = "true, false, 'held-notes' or 'note-offs'"
        switch node.value {
        case .bool(let on):
            return on ? .heldNotes : .off
        case .string(let name):
            guard let mode = NoteRecovery(rawValue: name), mode != .off else {
                throw node.error("unknown recovery '\(name)'; expected \(choices)")
            }
            return mode
        default:
            throw node.expected(choices)
        }
    }

    /// `sync: true` (every trigger in `applying`), `false`, or a list of trigger names, each
    /// of which must be in `applying`: what can happen to this destination or port.
    package static func sync(_ node: ConfigNode, applying: SyncTriggers) throws(ConfigError) -> SyncTriggers {
        if case .bool(let on) = node.value { return on ? applying : [] }
        guard case .array = node.value else {
            throw node.expected("true, false, or a list of \(applying.description)")
        }
        var triggers: SyncTriggers = []
        for name in try node.strings() {
            guard let trigger = SyncTriggers.names.first(where: { $0.0 == name })?.1 else {
                let known = SyncTriggers.names.map(\.0).joined(separator: ", ")
                throw node.error("unknown sync trigger '\(name)'; expected one of \(known)")
            }
            guard applying.contains(trigger) else {
                let why =
                    switch trigger {
                    case .reconnect: "only a TCP destination (protocol: \"tcp\") reconnects"
                    case .appear: "only a destination with 'service' appears"
                    case .device: "'device' is for output ports, whose device can come back"
                    case .recovery: "only a UDP destination with recovery: true hears from its receiver"
                    default: "it does not apply here"
                    }
                throw node.error("sync '\(name)' cannot happen here: \(why); this one can have \(applying.description)")
            }
            triggers.insert(trigger)
        }
        return triggers
    }

    package static func destination(_ node: ConfigNode, _ context: Context) throws(ConfigError) -> DestinationConfig {
        let object = try node.object(allowing: destinationKeys)
        var host = ""
        var port = 0
        var service: OSCServiceName?
        if let serviceNode = object["service"] {
            for key in ["host", "port", "broadcast", "multicast"] {
                if let other = object[key] {
                    throw other.error("'\(key)' does not go with 'service': the service says where it is")
                }
            }
            service = try Self.service(serviceNode, tcp: try object["protocol"]?.string() == "tcp")
        } else {
            host = try object.required("host").nonEmptyString()
            port = try object.required("port").int(in: 1...65535)
        }
        let scheme = try object["scheme"]?.string() ?? "default"
        let schemes = OSCScheme.builtInNames
        if let schemeNode = object["scheme"], !schemes.contains(scheme) {
            throw schemeNode.error("unknown scheme '\(scheme)'; expected one of \(schemes.joined(separator: ", "))")
        }
        var messages: [String: MessageConfig?] = [:]
        if let messagesNode = object["messages"] {
            guard case .object(let members) = messagesNode.value else { throw messagesNode.expected("an object") }
            for kindName in members.keys.sorted() {
                let child = ConfigNode(members[kindName]!, path: ConfigNode.join(messagesNode.path, kindName))
                guard MIDIEventKind.allCases.contains(where: { $0.description == kindName }) else {
                    throw child.error("unknown event type '\(kindName)'")
                }
                if case .null = child.value {
                    messages[kindName] = .some(nil)
                    continue
                }
                messages[kindName] = try message(child)
            }
        }
        var resolvedScheme = OSCScheme.builtIn(named: scheme) ?? .default
        if !messages.isEmpty {
            let overrides = messages.mapValues { message in
                message.map { (address: $0.address, arguments: $0.arguments, style: $0.style) }
            }
            do {
                resolvedScheme = try resolvedScheme.overriding(overrides)
            } catch {
                throw ConfigError(path: ConfigNode.join(node.path, "messages"), message: error.description)
            }
        }
        let (mappings, unmatched) = try destinationMappings(object, context)
        if !mappings.isEmpty && unmatched == .drop { resolvedScheme = .none }
        var destination = DestinationConfig(
            host: host, port: port, scheme: scheme, messages: messages, resolvedScheme: resolvedScheme,
            multicastTTL: nil, multicastInterface: nil,
            multicastLoop: nil, broadcast: try object["broadcast"]?.bool() ?? false)
        destination.mappings = mappings
        destination.unmatched = unmatched
        if let recovery = object["recovery"] { destination.recovery = try Self.recovery(recovery) }
        destination.latencyMilliseconds = try object["latency"]?.int(in: 0...5000)
        destination.tcp = try transport(object)
        destination.service = service
        if let sync = object["sync"] {
            var applying: SyncTriggers = .request
            if destination.tcp != nil { applying.insert(.reconnect) }
            if service != nil { applying.insert(.appear) }
            if destination.recovery == .heldNotes && destination.tcp == nil { applying.insert(.recovery) }
            destination.sync = try Self.sync(sync, applying: applying)
        }
        if let multicast = object["multicast"] {
            let options = try multicast.object(allowing: ["ttl", "interface", "loop"])
            destination.multicastTTL = try options["ttl"]?.int(in: 0...255)
            destination.multicastInterface = try options["interface"]?.nonEmptyString()
            destination.multicastLoop = try options["loop"]?.bool()
        }
        return destination
    }
}
