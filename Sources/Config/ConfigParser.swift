import Endpoints
import Glibc
import MIDI
import OSCMapping
import Platform

/// Reads a config file into a ``BridgeConfig``, checking everything and naming the key path of
/// the first mistake.
package enum ConfigParser {
    /// Reads and checks the file at `path`.
    package static func load(path: String) throws(ConfigError) -> BridgeConfig {
        let bytes: [UInt8]
        do {
            bytes = try FileSystem.contents(of: path)
        } catch {
            throw ConfigError(path: "", message: unreadable(path, error), file: path)
        }
        do {
            var config = try parse(bytes)
            config.text = String(decoding: bytes, as: UTF8.self)
            return config
        } catch {
            throw ConfigError(path: error.path, message: error.message, file: path)
        }
    }

    /// Why `path` cannot be read, and what to do about it: a file the service's user may not
    /// read names that user, since under systemd it is not the one who wrote the file.
    static func unreadable(_ path: String, _ error: Errno) -> String {
        guard error == .permissionDenied else { return "cannot be read: \(error)" }
        let uid = getuid()
        let user = getpwuid(uid).map { String(cString: $0.pointee.pw_name) } ?? "uid \(uid)"
        let service =
            ProcessEnvironment.current["INVOCATION_ID"] != nil
            ? " (the service runs as the dynamic user '\(user)', uid \(uid), which cannot own files: "
                + "make the file readable by others, `sudo chmod 644 \(path)`)"
            : " (make it readable: `chmod 644 \(path)`)"
        return "cannot be read by user '\(user)': \(error)" + service
    }

    /// Checks JSON5 text.
    package static func parse(_ bytes: some Sequence<UInt8>) throws(ConfigError) -> BridgeConfig {
        try parse(ConfigNode(ConfigValue.parseJSON5(Array(bytes))))
    }

    static let topLevelKeys = [
        "client", "middleC", "inputs", "outputs", "mappings", "routes", "ring", "sysex", "osc", "realtime",
        "touchoscBridge",
    ]

    package static func parse(_ root: ConfigNode) throws(ConfigError) -> BridgeConfig {
        let top = try root.object(allowing: topLevelKeys)
        var config = BridgeConfig()
        if let client = top["client"] {
            config.clientName = try client.nonEmptyString()
            guard config.clientName.utf8.count < 64 else { throw client.error("expected at most 63 bytes") }
        }
        if let middleC = top["middleC"] { config.middleCOctave = try middleC.int(in: 3...5) }
        if let ring = top["ring"] {
            // Still checked, so a config that loaded before loads now, and a broken one is refused.
            let object = try ring.object(allowing: ["capacity"])
            if let capacity = object["capacity"] { _ = try capacity.int(in: 16...1_048_576) }
            config.retiredKeys.append(
                "ring: ignored; the input thread reads, routes and sends each event, with no ring between threads "
                    + "(events wait in the sequencer's input queue of 2000)")
        }
        if let sysex = top["sysex"] {
            let object = try sysex.object(allowing: ["maxBytes"])
            if let maxBytes = object["maxBytes"] { config.sysexCapacity = try maxBytes.int(in: 16...16_777_216) }
        }
        if let realtime = top["realtime"] { config.realtime = try self.realtime(realtime) }
        // The bridge's ports come first, so that its input and output are port 0 in TouchOSC's
        // port byte, both ways; the config's own ports follow and may not reuse its name.
        var bridge: (settings: TouchOSCBridgeConfig, allow: [IPNetwork])?
        if let node = top["touchoscBridge"] { bridge = try touchOSCBridge(node) }
        if let settings = bridge?.settings {
            config.touchOSCBridge = settings
            config.inputs.append(InputPortConfig(name: settings.name, from: []))
            config.outputs.append(OutputPortConfig(name: settings.name, to: []))
        }
        if let inputs = top["inputs"] {
            for node in try inputs.array() {
                let object = try node.object(allowing: ["name", "from"])
                let name = try portName(object.required("name"), taken: config.inputs.map(\.name))
                let specs = try object["from"].map(portSpecs) ?? []
                config.inputs.append(InputPortConfig(name: name, from: specs))
            }
        }
        if let outputs = top["outputs"] {
            for node in try outputs.array() {
                let object = try node.object(allowing: ["name", "to", "sync"])
                let name = try portName(object.required("name"), taken: config.outputs.map(\.name))
                let specs = try object["to"].map(portSpecs) ?? []
                var output = OutputPortConfig(name: name, to: specs)
                if let sync = object["sync"] { output.sync = try Self.sync(sync, applying: [.device, .request]) }
                config.outputs.append(output)
            }
        }
        let outputNames = config.outputs.map(\.name)
        let mappingSets = try mappingSets(top["mappings"], outputNames: outputNames)
        if let routes = top["routes"] {
            var context = Context(
                inputNames: config.inputs.map(\.name), middleCOctave: config.middleCOctave, outputNames: outputNames,
                mappingSets: mappingSets)
            // A route without `from` takes the config's own inputs, not the bridge's.
            if bridge != nil { context.defaultInputs = Array(config.inputs.indices.dropFirst()) }
            for (index, node) in try routes.array().enumerated() {
                config.routes.append(try route(node, index: index, context))
            }
        }
        if let (settings, allow) = bridge {
            if let osc = top["osc"] {
                throw osc.error(
                    "does not go with touchoscBridge, whose UDP input on 0.0.0.0:\(settings.port) is the config's "
                        + "OSC input; remove one of them")
            }
            config.routes.insert(touchOSCBridgeRoute(settings), at: 0)
            config.oscInput = touchOSCBridgeInput(settings, allow: allow)
        } else {
            config.oscInput = try oscInput(
                top["osc"], outputs: config.outputs, middleCOctave: config.middleCOctave, mappingSets: mappingSets)
        }
        if config.inputs.isEmpty && !config.routes.isEmpty {
            throw ConfigError(path: "inputs", message: "routes need at least one input port")
        }
        return config
    }

    /// `true` (the default), `false` (normal priority), or
    /// `{ priority: 1-99, lockMemory: bool, cpu: "auto" | false | N }`.
    static func realtime(_ node: ConfigNode) throws(ConfigError) -> RealtimeConfig {
        if case .bool(let on) = node.value { return on ? RealtimeConfig() : RealtimeConfig(priority: nil) }
        guard case .object = node.value else { throw node.expected("true, false or { priority: 1-99 }") }
        let object = try node.object(allowing: ["priority", "lockMemory", "cpu"])
        var realtime = RealtimeConfig()
        if let priority = object["priority"] {
            guard case .number(let number) = priority.value, number == number.rounded(), (1...99).contains(number)
            else {
                throw priority.expected(
                    "a SCHED_FIFO priority 1-99 (default \(RealtimeConfig.defaultPriority); `realtime: false` for "
                        + "normal priority)")
            }
            realtime.priority = Int(number)
        }
        if let lockMemory = object["lockMemory"] { realtime.lockMemory = try lockMemory.bool() }
        if let cpu = object["cpu"] {
            switch cpu.value {
            case .string("auto"): realtime.cpu = .auto
            case .bool(false): realtime.cpu = .any
            case .number(let number) where number == number.rounded() && (0...1023).contains(number):
                realtime.cpu = .fixed(Int(number))
            default:
                throw cpu.expected(
                    "\"auto\" (one CPU when a destination is on this machine, the default), false (any CPU) or a CPU "
                        + "number 0-1023")
            }
        }
        return realtime
    }

    package struct Context {
        var inputNames: [String]
        var middleCOctave: Int
        /// For the mappings a destination sends (their `output` keys name output ports).
        var outputNames: [String] = []
        var mappingSets = MappingSets()
        /// The inputs of a route without `from`; nil: every input.
        var defaultInputs: [Int]?
    }

    static func portName(_ node: ConfigNode, taken: [String]) throws(ConfigError) -> String {
        let name = try node.nonEmptyString()
        guard name.utf8.count < 64 else { throw node.error("expected at most 63 bytes") }
        guard !taken.contains(name) else { throw node.error("the port name '\(name)' is used twice") }
        return name
    }

    static func portSpecs(_ node: ConfigNode) throws(ConfigError) -> [PortSpec] {
        var specs: [PortSpec] = []
        let texts = try node.strings()
        for (index, text) in texts.enumerated() {
            do {
                specs.append(try PortSpec(parsing: text))
            } catch {
                let path = if case .array = node.value { "\(node.path)[\(index)]" } else { node.path }
                throw ConfigError(path: path, message: error.description)
            }
        }
        return specs
    }

    static func route(_ node: ConfigNode, index: Int, _ context: Context) throws(ConfigError) -> RouteConfig {
        let object = try node.object(allowing: ["name", "from", "operators", "destinations", "split", "fork"])
        let name = try object["name"]?.nonEmptyString() ?? "route \(index + 1)"
        var inputs: [Int] = []
        if let from = object["from"] {
            for (position, portName) in try from.strings().enumerated() {
                guard let input = context.inputNames.firstIndex(of: portName) else {
                    let path = if case .array = from.value { "\(from.path)[\(position)]" } else { from.path }
                    let known = context.inputNames.map { "'\($0)'" }.joined(separator: ", ")
                    throw ConfigError(path: path, message: "no input port named '\(portName)'; inputs are \(known)")
                }
                inputs.append(input)
            }
        } else {
            inputs = context.defaultInputs ?? Array(context.inputNames.indices)
            if inputs.isEmpty, context.defaultInputs != nil {
                throw ConfigError(
                    path: node.path,
                    message: "a route needs 'from' or an input port of its own: the TouchOSC Bridge's input has "
                        + "its own route")
            }
        }
        let chain = try self.chain(object, context)
        if chain.destinations.isEmpty && chain.branches.isEmpty {
            throw ConfigError(path: node.path, message: "a route needs destinations (or a split or fork)")
        }
        return RouteConfig(name: name, inputs: inputs, chain: chain)
    }

    static func chain(_ object: ConfigObject, _ context: Context) throws(ConfigError) -> ChainConfig {
        var chain = ChainConfig()
        if let operators = object["operators"] {
            for node in try operators.array() { chain.operators.append(try `operator`(node, context)) }
        }
        if let destinations = object["destinations"] {
            for node in try destinations.array() { chain.destinations.append(try destination(node, context)) }
        }
        if object["split"] != nil && object["fork"] != nil {
            throw ConfigError(path: object.path, message: "use either split or fork, not both")
        }
        if let split = object["split"] {
            for node in try split.array() {
                let branch = try node.object(allowing: ["notes", "operators", "destinations", "split", "fork"])
                let notes = try noteRange(branch.required("notes"), context)
                chain.branches.append(BranchConfig(notes: notes, chain: try self.chain(branch, context)))
            }
        }
        if let fork = object["fork"] {
            for node in try fork.array() {
                let branch = try node.object(allowing: ["operators", "destinations", "split", "fork"])
                chain.branches.append(BranchConfig(notes: nil, chain: try self.chain(branch, context)))
            }
        }
        return chain
    }

    static let operatorKeys = [
        "types", "channels", "notes", "velocities", "controllers", "ports", "not", "transpose", "channelMap",
        "velocity", "controllerMap", "valueMap", "noteOff", "assemble", "dropRepeats", "throttle",
    ]

    static func `operator`(_ node: ConfigNode, _ context: Context, inverted: Bool = false) throws(ConfigError)
        -> OperatorConfig
    {
        let object = try node.object(allowing: operatorKeys)
        guard object.keys.count == 1, let key = object.keys.first, let value = object[key] else {
            throw node.error("expected an object with one operator key, such as { transpose: 12 }")
        }
        let filterOnly = ["types", "channels", "notes", "velocities", "controllers", "ports", "not"]
        if inverted && !filterOnly.contains(key) {
            throw value.error("'not' takes a filter (types, channels, notes, velocities, controllers, ports)")
        }
        switch key {
        case "not":
            return try `operator`(value, context, inverted: !inverted)
        case "types":
            var kinds: Set<MIDIEventKind> = []
            for element in try elements(value) { kinds.formUnion(try kindNames(element)) }
            return .kinds(kinds, inverted: inverted)
        case "channels":
            var channels: Set<UInt8> = []
            for element in try elements(value) { channels.insert(UInt8(try element.int(in: 1...16) - 1)) }
            return .channels(channels, inverted: inverted)
        case "notes":
            return .notes(try noteRange(value, context), inverted: inverted)
        case "velocities":
            return .velocities(try byteRange(value, in: 0...127), inverted: inverted)
        case "controllers":
            var controllers: Set<UInt8> = []
            for element in try elements(value) { controllers.insert(UInt8(try element.int(in: 0...127))) }
            return .controllers(controllers, inverted: inverted)
        case "ports":
            var ports: Set<Int> = []
            for element in try elements(value) {
                let name = try element.string()
                guard let index = context.inputNames.firstIndex(of: name) else {
                    throw element.error("no input port named '\(name)'")
                }
                ports.insert(index)
            }
            return .ports(ports, inverted: inverted)
        case "transpose":
            return .transpose(try value.int(in: -127...127))
        case "channelMap":
            return .channelMap(try byteMap(value, keys: 1...16, values: 1...16, offset: 1))
        case "controllerMap":
            return .controllerMap(try byteMap(value, keys: 0...127, values: 0...127, offset: 0))
        case "velocity":
            return .velocity(try velocity(value))
        case "valueMap":
            return .valueMap(try valueMap(value))
        case "noteOff":
            let text = try value.string()
            guard let style = NoteOffForm(rawValue: text) else {
                throw value.expected("\"note_off\" or \"note_on_zero\"")
            }
            return .noteOff(style)
        case "assemble":
            let object = try value.object(allowing: ["cc14", "dataEntry"])
            var controllers: [UInt8] = []
            if let cc14 = object["cc14"] {
                for element in try elements(cc14) { controllers.append(UInt8(try element.int(in: 0...31))) }
            }
            var msbOnly = false
            if let dataEntry = object["dataEntry"] {
                switch try dataEntry.string() {
                case "msb_lsb": msbOnly = false
                case "msb": msbOnly = true
                default: throw dataEntry.expected("\"msb_lsb\" or \"msb\"")
                }
            }
            return .assemble(AssembleConfig(fourteenBitControllers: controllers, dataEntryMSBOnly: msbOnly))
        case "dropRepeats":
            guard try value.bool() else { throw value.error("expected true (leave the operator out to keep repeats)") }
            return .dropRepeats
        case "throttle":
            let object = try value.object(allowing: ["perSecond"])
            return .throttle(perSecond: try object.required("perSecond").number(in: 0.1...10_000))
        default:
            throw node.error("unknown operator '\(key)'")
        }
    }

    /// One element or an array of them.
    static func elements(_ node: ConfigNode) throws(ConfigError) -> [ConfigNode] {
        if case .array = node.value { return try node.array() }
        return [node]
    }

    static let kindGroups: [String: [MIDIEventKind]] = [
        "notes": [.noteOn, .noteOff],
        "realtime": [.clock, .start, .continue, .stop, .activeSensing, .reset],
        "system": [.mtcQuarterFrame, .songPosition, .songSelect, .tuneRequest],
    ]

    static func kindNames(_ node: ConfigNode) throws(ConfigError) -> [MIDIEventKind] {
        let name = try node.string()
        if let kind = MIDIEventKind.allCases.first(where: { $0.description == name }) { return [kind] }
        if let group = kindGroups[name] { return group }
        throw node.error(
            "unknown event type '\(name)'; expected one of "
                + (MIDIEventKind.allCases.map(\.description) + kindGroups.keys.sorted()).joined(separator: ", "))
    }

    /// The pieces of `text` between each `separator`, empty ones kept ("a....b" is three).
    static func split(_ text: String, at separator: String) -> [String] {
        var parts: [String] = []
        var rest = Substring(text)
        while let range = rest.firstRange(of: separator) {
            parts.append(String(rest[..<range.lowerBound]))
            rest = rest[range.upperBound...]
        }
        return parts + [String(rest)]
    }

    /// `"C2..C5"`, `"36..72"`, `[36, 72]`, or one note (`"C4"`, `60`).
    static func noteRange(_ node: ConfigNode, _ context: Context) throws(ConfigError) -> ClosedRange<UInt8> {
        func note(_ text: Substring) throws(ConfigError) -> UInt8 {
            let trimmed = String(
                text.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
            guard let note = NoteName.parse(trimmed, middleCOctave: context.middleCOctave) else {
                throw node.error("'\(trimmed)' is not a note (C-1..G9, F#3, Bb2 or 0-127)")
            }
            return note
        }
        switch node.value {
        case .number:
            let note = UInt8(try node.int(in: 0...127))
            return note...note
        case .string(let text):
            let parts = Self.split(text, at: "..")
            guard parts.count <= 2 else { throw node.error("expected a note range like \"C2..C5\"") }
            let low = try note(Substring(parts[0]))
            let high = parts.count == 2 ? try note(Substring(parts[1])) : low
            guard low <= high else { throw node.error("the range \(text) is empty: its low note is above its high") }
            return low...high
        case .array:
            return try byteRange(node, in: 0...127)
        default:
            throw node.expected("a note range like \"C2..C5\" or [36, 72]")
        }
    }

    /// `[low, high]` of whole numbers within `bounds`.
    static func byteRange(_ node: ConfigNode, in bounds: ClosedRange<Int>) throws(ConfigError) -> ClosedRange<UInt8> {
        let pair = try node.array()
        guard pair.count == 2 else { throw node.expected("[low, high]") }
        let low = try pair[0].int(in: bounds)
        let high = try pair[1].int(in: bounds)
        guard low <= high else { throw node.error("the range [\(low), \(high)] is empty") }
        return UInt8(low)...UInt8(high)
    }

    /// `{ "1": 2, ... }`: a map between numbers, stored zero-based when `offset` is 1.
    static func byteMap(_ node: ConfigNode, keys: ClosedRange<Int>, values: ClosedRange<Int>, offset: Int)
        throws(ConfigError) -> [UInt8: UInt8]
    {
        guard case .object(let members) = node.value else { throw node.expected("an object like { \"1\": 2 }") }
        var map: [UInt8: UInt8] = [:]
        for key in members.keys.sorted() {
            let child = ConfigNode(members[key]!, path: ConfigNode.join(node.path, key))
            guard let number = Int(key), keys.contains(number) else {
                throw child.error("the key '\(key)' is not \(keys.lowerBound)-\(keys.upperBound)")
            }
            map[UInt8(number - offset)] = UInt8(try child.int(in: values) - offset)
        }
        return map
    }

    package static func velocity(_ node: ConfigNode) throws(ConfigError) -> VelocityConfig {
        let object = try node.object(allowing: ["fixed", "scale", "offset", "gamma", "min", "max"])
        var velocity = VelocityConfig()
        velocity.fixed = try object["fixed"].map { node throws(ConfigError) in UInt8(try node.int(in: 1...127)) }
        velocity.scale = try object["scale"]?.number(in: 0...16)
        velocity.offset = try object["offset"]?.int(in: -127...127)
        velocity.gamma = try object["gamma"]?.number(in: 0.05...20)
        velocity.minimum = try object["min"].map { node throws(ConfigError) in UInt8(try node.int(in: 1...127)) }
        velocity.maximum = try object["max"].map { node throws(ConfigError) in UInt8(try node.int(in: 1...127)) }
        if let minimum = velocity.minimum, let maximum = velocity.maximum, minimum > maximum {
            throw ConfigError(path: node.path, message: "min (\(minimum)) is above max (\(maximum))")
        }
        if object.keys.isEmpty { throw node.error("expected one or more of fixed, scale, offset, gamma, min, max") }
        return velocity
    }

    static func valueMap(_ node: ConfigNode) throws(ConfigError) -> ValueMapConfig {
        let object = try node.object(allowing: ["controller", "of", "in", "out"])
        let target: ValueMapConfig.Target
        let bounds: ClosedRange<Double>
        switch (object["controller"], object["of"]) {
        case (let controller?, nil):
            target = .controller(UInt8(try controller.int(in: 0...127)))
            bounds = 0...127
        case (nil, let of?):
            switch try of.string() {
            case "pitch_bend": (target, bounds) = (.pitchBend, -8192...8191)
            case "channel_pressure": (target, bounds) = (.channelPressure, 0...127)
            case "poly_pressure": (target, bounds) = (.polyPressure, 0...127)
            case "velocity": (target, bounds) = (.velocity, 1...127)
            default: throw of.expected("\"pitch_bend\", \"channel_pressure\", \"poly_pressure\" or \"velocity\"")
            }
        default:
            throw node.error("expected either controller or of (pitch_bend, channel_pressure, ...)")
        }
        func pair(_ key: String) throws(ConfigError) -> (Double, Double) {
            let node = try object.required(key)
            let values = try node.array()
            guard values.count == 2 else { throw node.expected("[from, to]") }
            return (try values[0].number(in: bounds), try values[1].number(in: bounds))
        }
        let input = try pair("in")
        let output = try pair("out")
        guard input.0 != input.1 else { throw ConfigError(path: "\(node.path).in", message: "the two ends are equal") }
        return ValueMapConfig(
            target: target, input: min(input.0, input.1)...max(input.0, input.1), inputReversed: input.0 > input.1,
            output: output)
    }
}
