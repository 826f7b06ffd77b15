import MIDI

extension BridgeConfig {
    /// What the config sets up, for `aseqosc check` and the start-up log: ports, then routes.
    package var summary: String {
        var lines: [String] = ["client '\(clientName)'"]
        for input in inputs {
            let from =
                input.from.isEmpty
                ? "nothing (others connect to it)" : input.from.map { "'\($0)'" }.joined(separator: ", ")
            lines.append("input '\(input.name)' <- \(from)")
        }
        for output in outputs {
            let to =
                output.to.isEmpty
                ? "nothing (others connect to it)" : output.to.map { "'\($0)'" }.joined(separator: ", ")
            lines.append("output '\(output.name)' -> \(to)")
        }
        if let oscInput { lines.append(oscInput.summary) }
        for route in routes {
            let from = route.inputs.map { "'\(inputs[$0].name)'" }.joined(separator: ", ")
            lines.append("route '\(route.name)' from \(from)")
            lines += route.chain.summaryLines(indent: "  ", middleCOctave: middleCOctave)
        }
        return lines.joined(separator: "\n")
    }
}

extension RouteConfig {
    /// The route's operators and destinations in words, one line each (the status page).
    package func operatorSummary(middleCOctave: Int) -> [String] {
        chain.summaryLines(indent: "", middleCOctave: middleCOctave)
    }
}

extension ChainConfig {
    func summaryLines(indent: String, middleCOctave: Int) -> [String] {
        var lines = operators.map { indent + "| " + $0.summary(middleCOctave: middleCOctave) }
        lines += destinations.map {
            let scheme =
                "scheme \($0.scheme)"
                + ($0.messages.isEmpty
                    ? "" : " (custom messages: \($0.messages.keys.sorted().joined(separator: ", ")))")
            let recovery =
                ($0.recovery == .off ? "" : ", recovery \($0.recovery.rawValue)")
                + ($0.latencyMilliseconds.map { ", time-tagged +\($0) ms" } ?? "")
                + ($0.sync.isEmpty ? "" : ", last values again on \($0.sync)")
                + ($0.tcp.map { tcp in
                    ", \(tcp.framing == .slip ? "SLIP" : "length-prefixed") framing, queue \(tcp.queueCapacity), "
                        + "note-ons sent up to \(tcp.noteOnTimeoutMilliseconds) ms late"
                } ?? "")
            let url =
                $0.service.map { "\($0.type) service '\($0.name)'" }
                ?? (($0.tcp == nil ? "osc.udp://" : "osc.tcp://") + $0.endpoint)
            guard !$0.mappings.isEmpty else { return indent + "-> \(url) " + scheme + recovery }
            let count = "\($0.mappings.count) mapping\($0.mappings.count == 1 ? "" : "s")"
            return indent + "-> \(url) \(count), "
                + ($0.unmatched == .drop ? "unmatched events dropped" : "unmatched events by " + scheme) + recovery
        }
        for (index, branch) in branches.enumerated() {
            let label =
                branch.notes.map {
                    "notes \(NoteName.format($0.lowerBound, middleCOctave: middleCOctave))..\(NoteName.format($0.upperBound, middleCOctave: middleCOctave))"
                } ?? "fork"
            lines.append(indent + "branch \(index + 1) (\(label))")
            lines += branch.chain.summaryLines(indent: indent + "  ", middleCOctave: middleCOctave)
        }
        return lines
    }
}

extension OperatorConfig {
    /// One line naming the operator and its settings, as the config would write them.
    func summary(middleCOctave: Int) -> String {
        func not(_ inverted: Bool) -> String { inverted ? "not " : "" }
        func list<T: Comparable>(_ values: Set<T>, _ show: (T) -> String) -> String {
            values.sorted().map(show).joined(separator: ", ")
        }
        func note(_ value: UInt8) -> String { NoteName.format(value, middleCOctave: middleCOctave) }
        switch self {
        case .kinds(let kinds, let inverted):
            return not(inverted) + "types " + kinds.map(\.description).sorted().joined(separator: ", ")
        case .channels(let channels, let inverted): return not(inverted) + "channels " + list(channels) { "\($0 + 1)" }
        case .notes(let range, let inverted):
            return not(inverted) + "notes \(note(range.lowerBound))..\(note(range.upperBound))"
        case .velocities(let range, let inverted):
            return not(inverted) + "velocities \(range.lowerBound)..\(range.upperBound)"
        case .controllers(let controllers, let inverted):
            return not(inverted) + "controllers " + list(controllers) { "\($0)" }
        case .ports(let ports, let inverted): return not(inverted) + "ports " + list(ports) { "#\($0)" }
        case .transpose(let semitones): return "transpose \(semitones > 0 ? "+" : "")\(semitones)"
        case .channelMap(let map):
            return "channel map " + map.keys.sorted().map { "\($0 + 1)->\(map[$0]! + 1)" }.joined(separator: ", ")
        case .controllerMap(let map):
            return "controller map " + map.keys.sorted().map { "\($0)->\(map[$0]!)" }.joined(separator: ", ")
        case .velocity(let velocity):
            var parts: [String] = []
            if let fixed = velocity.fixed { parts.append("fixed \(fixed)") }
            if let scale = velocity.scale { parts.append("scale \(scale)") }
            if let offset = velocity.offset { parts.append("offset \(offset)") }
            if let gamma = velocity.gamma { parts.append("gamma \(gamma)") }
            if let minimum = velocity.minimum { parts.append("min \(minimum)") }
            if let maximum = velocity.maximum { parts.append("max \(maximum)") }
            return "velocity " + parts.joined(separator: ", ")
        case .valueMap(let map):
            let from =
                map.inputReversed
                ? (map.input.upperBound, map.input.lowerBound) : (map.input.lowerBound, map.input.upperBound)
            return
                "value map \(map.target) \(ConfigValue.format(from.0))..\(ConfigValue.format(from.1)) -> \(ConfigValue.format(map.output.0))..\(ConfigValue.format(map.output.1))"
        case .noteOff(let style): return "note-offs as \(style.rawValue)"
        case .assemble(let assemble):
            return
                "assemble 14-bit controllers [\(assemble.fourteenBitControllers.map(String.init).joined(separator: ", "))], RPN/NRPN"
                + (assemble.dataEntryMSBOnly ? " (data entry MSB only)" : "")
        case .dropRepeats: return "drop repeated values"
        case .throttle(let perSecond): return "throttle controllers to \(ConfigValue.format(perSecond))/s"
        }
    }
}
