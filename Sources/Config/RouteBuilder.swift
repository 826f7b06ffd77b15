import MIDI
import Pipeline

/// Turns one configured route into the pipeline's route, numbering its OSC destinations in the
/// order met (depth first), which is how the worker finds a destination's formatter and socket.
///
/// Events carry the ALSA port number of the input they arrived on (stable across reloads), so
/// config input indices are translated through `inputPorts`.
package struct RouteBuilder {
    /// The ALSA port number of each config input, by input index.
    let inputPorts: [UInt8]
    /// The OSC destinations of the routes built so far, numbered in the order met.
    package private(set) var destinations: [DestinationConfig] = []

    /// A builder for routes whose config input `i` arrives on ALSA port `inputPorts[i]`.
    package init(inputPorts: [UInt8]) {
        self.inputPorts = inputPorts
    }

    /// The pipeline route for `route`, its destinations appended to ``destinations``.
    package mutating func build(_ route: RouteConfig) -> Route {
        Route(inputPorts: PortSet(route.inputs.map { UInt16(inputPorts[$0]) }), chain: chain(route.chain))
    }

    private mutating func chain(_ config: ChainConfig) -> Chain {
        let operators = config.operators.flatMap { Self.operators($0, inputPorts: inputPorts) }
        var indices: [Int] = []
        for destination in config.destinations {
            indices.append(destinations.count)
            destinations.append(destination)
        }
        let branching: Chain.Branching
        if config.branches.isEmpty {
            branching = .none
        } else if config.branches.allSatisfy({ $0.notes != nil }) {
            branching = .keySplit(config.branches.map { Chain.KeyZone($0.notes!, chain($0.chain)) })
        } else {
            branching = .fork(config.branches.map { chain($0.chain) })
        }
        return Chain(operators, destinations: indices, then: branching)
    }

    /// One config operator as pipeline operators (a velocity setting may be several steps).
    package static func operators(_ config: OperatorConfig, inputPorts: [UInt8]) -> [Operator] {
        switch config {
        case .kinds(let kinds, let inverted):
            return [.kindFilter(KindFilter(kinds.sorted { $0.rawValue < $1.rawValue }, inverted: inverted))]
        case .channels(let channels, let inverted):
            return [.channelFilter(ChannelFilter(channels.sorted(), inverted: inverted))]
        case .notes(let range, let inverted):
            return [.noteFilter(NoteRangeFilter(range, inverted: inverted))]
        case .velocities(let range, let inverted):
            return [.velocityFilter(VelocityFilter(range, inverted: inverted))]
        case .controllers(let controllers, let inverted):
            return [.controllerFilter(ControllerFilter(controllers.sorted(), inverted: inverted))]
        case .ports(let ports, let inverted):
            return [.portFilter(PortFilter(PortSet(ports.map { UInt16(inputPorts[$0]) }), inverted: inverted))]
        case .transpose(let semitones):
            return [.transpose(Transpose(semitones: semitones))]
        case .channelMap(let map):
            return [.channelMap(ChannelMap(map.sorted { $0.key < $1.key }.map { (from: $0.key, to: $0.value) }))]
        case .controllerMap(let map):
            return [.controllerMap(ControllerMap(map.sorted { $0.key < $1.key }.map { (from: $0.key, to: $0.value) }))]
        case .velocity(let velocity):
            var steps: [VelocityCurve.Shape] = []
            if let fixed = velocity.fixed { steps.append(.fixed(fixed)) }
            if let scale = velocity.scale { steps.append(.scale(scale)) }
            if let offset = velocity.offset { steps.append(.offset(offset)) }
            if let gamma = velocity.gamma { steps.append(.gamma(gamma)) }
            if velocity.minimum != nil || velocity.maximum != nil {
                steps.append(.clamp((velocity.minimum ?? 1)...(velocity.maximum ?? 127)))
            }
            return steps.map { .velocity(VelocityCurve($0)) }
        case .valueMap(let map):
            let target: ValueMapping.Target =
                switch map.target {
                case .controller(let number): .controller(number)
                case .pitchBend: .pitchBend
                case .channelPressure: .channelPressure
                case .polyPressure: .polyPressure
                case .velocity: .velocity
                }
            let low = Int(map.input.lowerBound.rounded())
            let high = Int(map.input.upperBound.rounded())
            let input = map.inputReversed ? ValueSpan(high, low) : ValueSpan(low, high)
            let output = ValueSpan(Int(map.output.0.rounded()), Int(map.output.1.rounded()))
            return [.valueMap(ValueMapping(target, from: input, to: output))]
        case .noteOff(let form):
            return [.normaliseNoteOffs(form == .noteOff ? .noteOff : .noteOnWithZeroVelocity)]
        case .assemble(let assemble):
            return [
                .assemble(
                    ControllerAssembly(
                        fourteenBitControllers: assemble.fourteenBitControllers,
                        dataEntry: assemble.dataEntryMSBOnly ? .msbOnly : .msbThenLSB))
            ]
        case .dropRepeats:
            return [.dropRepeats(RepeatFilter())]
        case .throttle(let perSecond):
            return [.throttle(Throttle(interval: UInt64(1_000_000_000 / perSecond)))]
        }
    }
}
