import Endpoints
import MIDI
import OSCMapping

/// Everything a config file says, checked as a whole before anything starts.
package struct BridgeConfig: Sendable {
    /// The ALSA client name other programs see (`aconnect -l`).
    package var clientName = "aseqosc"
    /// The octave number of middle C (60) in note names: 4 (C4, the default) or 3 (Yamaha).
    package var middleCOctave = 4
    /// Our ALSA input ports, each bound to the sources its specs name.
    package var inputs: [InputPortConfig] = []
    /// Our ALSA output ports, each bound to the destinations its specs name.
    package var outputs: [OutputPortConfig] = []
    /// MIDI -> OSC routes.
    package var routes: [RouteConfig] = []
    /// The OSC -> MIDI direction (the `osc` key); nil when there are no output ports or it is off.
    package var oscInput: OSCInputConfig?
    /// Keys that older versions read and this one ignores, each with why, for the log.
    package var retiredKeys: [String] = []
    /// The longest SysEx message kept, in bytes; longer ones are dropped and counted.
    package var sysexCapacity = 65_536
    /// Real-time scheduling of the event threads (the `realtime` key).
    package var realtime = RealtimeConfig()
    /// The TouchOSC Bridge drop-in (`touchoscBridge`), already expanded into the first input
    /// port, the first output port, the OSC input and the first route; nil when off.
    package var touchOSCBridge: TouchOSCBridgeConfig?
    /// The file's text as it was loaded: the config in force, which the file on disk no longer
    /// is once edited and not yet reloaded.
    package var text = ""
}

/// SCHED_FIFO for the input and OSC threads, and locked memory.
package struct RealtimeConfig: Sendable, Equatable {
    /// Below the audio threads of JACK (its clients run at 5 by default) and PipeWire (88, or
    /// 20 through rtkit), so MIDI never pre-empts audio, and above every normal thread.
    static let defaultPriority = 4

    /// The SCHED_FIFO priority (1-99); nil runs the threads at normal priority.
    package var priority: Int? = defaultPriority
    /// Whether the process's memory is locked (`mlockall`) while the threads run real-time.
    package var lockMemory = true
    /// Where the MIDI -> OSC thread (the input thread) runs (the `realtime.cpu` key).
    package var cpu = SendingCPU.auto

    package init(priority: Int? = defaultPriority, lockMemory: Bool = true, cpu: SendingCPU = .auto) {
        self.priority = priority
        self.lockMemory = lockMemory
        self.cpu = cpu
    }

    /// `SCHED_FIFO 4, memory locked`, `off`: for `aseqosc check`.
    package var summary: String {
        let placement =
            switch cpu {
            case .auto: ""
            case .any: ", any CPU"
            case .fixed(let number): ", CPU \(number)"
            }
        guard let priority else { return "off (normal priority)" + placement }
        return "SCHED_FIFO \(priority)" + (lockMemory ? ", memory locked" : ", memory not locked") + placement
    }
}

/// The CPU the two threads that send MIDI -> OSC datagrams run on.
///
/// Linux hands a datagram to a receiver on this machine (loopback, or one of this host's own
/// addresses) through a queue of the sending CPU, which another CPU's queue can overtake when
/// softirq work is deferred to ksoftirqd: a note-off sent from one CPU can then arrive before
/// the note-on sent just before it from another. Datagrams sent from one CPU keep their order.
package enum SendingCPU: Sendable, Equatable {
    /// On the highest CPU the process may use when some destination is on this machine; else
    /// wherever the scheduler puts them.
    case auto
    /// Wherever the scheduler puts them (`cpu: false`).
    case any
    /// On this CPU, whatever the destinations.
    case fixed(Int)
}

/// One of our ALSA input ports.
package struct InputPortConfig: Sendable, Equatable {
    package var name: String
    /// Sources to connect; empty means "connect nothing, let others connect to us".
    package var from: [PortSpec]
}

/// One of our ALSA output ports.
package struct OutputPortConfig: Sendable, Equatable {
    package var name: String
    package var to: [PortSpec]
    /// When the port is sent its last values again (`device`, `request`); none by default.
    package var sync: SyncTriggers = []
}

/// When a destination or an output port is sent the last value of every controller, program,
/// pitch bend and pressure again, because its receiver may have lost them (`sync:`,
/// docs/CONFIG.md). Empty by default, so every scheme stays byte for byte what its peers expect.
package struct SyncTriggers: OptionSet, Sendable, Hashable, CustomStringConvertible {
    package let rawValue: UInt8

    package init(rawValue: UInt8) { self.rawValue = rawValue }

    /// A TCP destination connected again.
    package static let reconnect = SyncTriggers(rawValue: 1)
    /// A destination by service name appeared, or moved to another address.
    package static let appear = SyncTriggers(rawValue: 2)
    /// `/aseqosc/sync` arrived at the OSC input, for everything or by name.
    package static let request = SyncTriggers(rawValue: 4)
    /// An output port's device came back (it was unplugged, power-cycled, or started late).
    package static let device = SyncTriggers(rawValue: 8)
    /// The aseqosc receiving a `recovery: true` destination heard this sender anew: since it
    /// started, or since it released the sender's notes for falling silent (docs/OSC.md).
    package static let recovery = SyncTriggers(rawValue: 16)

    /// The names the config uses, in order.
    static let names: [(String, SyncTriggers)] = [
        ("reconnect", .reconnect), ("appear", .appear), ("request", .request), ("device", .device),
        ("recovery", .recovery),
    ]

    package var description: String {
        Self.names.filter { contains($0.1) }.map(\.0).joined(separator: ", ")
    }
}

/// A MIDI -> OSC route: input ports, operators, then OSC destinations (and branches).
package struct RouteConfig: Sendable, Equatable {
    package var name: String
    /// Indices into ``BridgeConfig/inputs``.
    package var inputs: [Int]
    package var chain: ChainConfig
}

/// Operators, then destinations, then branches that each get a copy of what is left.
package struct ChainConfig: Sendable, Equatable {
    package var operators: [OperatorConfig] = []
    package var destinations: [DestinationConfig] = []
    package var branches: [BranchConfig] = []
}

/// A branch of a fork or a key split.
package struct BranchConfig: Sendable, Equatable {
    /// For a key split: the notes this branch takes (other events go to every branch).
    package var notes: ClosedRange<UInt8>?
    package var chain: ChainConfig
}

/// One operator as written in the config.
package enum OperatorConfig: Sendable, Equatable {
    case kinds(Set<MIDIEventKind>, inverted: Bool)
    case channels(Set<UInt8>, inverted: Bool)
    case notes(ClosedRange<UInt8>, inverted: Bool)
    case velocities(ClosedRange<UInt8>, inverted: Bool)
    case controllers(Set<UInt8>, inverted: Bool)
    case ports(Set<Int>, inverted: Bool)
    case transpose(Int)
    case channelMap([UInt8: UInt8])
    case velocity(VelocityConfig)
    case controllerMap([UInt8: UInt8])
    case valueMap(ValueMapConfig)
    case noteOff(NoteOffForm)
    case assemble(AssembleConfig)
    case dropRepeats
    case throttle(perSecond: Double)
}

/// How note-velocity is changed; applied in this order: fixed, scale, offset, gamma, clamp.
package struct VelocityConfig: Sendable, Equatable {
    var fixed: UInt8?
    var scale: Double?
    var offset: Int?
    var gamma: Double?
    var minimum: UInt8?
    var maximum: UInt8?
}

/// A linear mapping of one value (a controller, pitch bend, pressure or velocity).
package struct ValueMapConfig: Sendable, Equatable {
    enum Target: Sendable, Equatable {
        case controller(UInt8)
        case pitchBend, channelPressure, polyPressure, velocity
    }
    var target: Target
    var input: ClosedRange<Double>
    var inputReversed: Bool
    var output: (Double, Double)

    package static func == (lhs: ValueMapConfig, rhs: ValueMapConfig) -> Bool {
        lhs.target == rhs.target && lhs.input == rhs.input && lhs.inputReversed == rhs.inputReversed
            && lhs.output == rhs.output
    }
}

/// Which form note-offs take on the way out.
package enum NoteOffForm: String, Sendable, Equatable {
    /// A note-on with velocity 0 becomes a note-off.
    case noteOff = "note_off"
    /// A note-off becomes a note-on with velocity 0.
    case noteOnZero = "note_on_zero"
}

/// 14-bit controller and RPN/NRPN assembly.
package struct AssembleConfig: Sendable, Equatable {
    var fourteenBitControllers: [UInt8]
    var dataEntryMSBOnly: Bool
}

/// An OSC destination as written in the config.
package struct DestinationConfig: Sendable, Equatable {
    package var host: String
    package var port: Int
    /// The scheme's name as written (`default`, `osmid`, `touchosc`).
    package var scheme: String
    /// Per-kind overrides of the scheme: kind name -> address template, arguments, style
    /// (nil: that kind is not sent).
    var messages: [String: MessageConfig?]
    /// The scheme with the overrides applied, checked when the config was read.
    package var resolvedScheme: OSCScheme
    package var multicastTTL: Int?
    package var multicastInterface: String?
    package var multicastLoop: Bool?
    package var broadcast: Bool
    /// Mapping rules tried before the scheme: a matching event is sent as the rule's OSC message.
    package var mappings: [OSCMappingRule] = []
    /// What becomes of an event no mapping matches (``resolvedScheme`` is ``OSCScheme/none``
    /// when it is dropped).
    package var unmatched = UnmatchedEvents.scheme
    /// What the destination is sent besides its events, so that a receiver can repair a note-off
    /// the network lost.
    package var recovery = NoteRecovery.off
    /// With `latency: MS`, each event goes in a bundle whose time tag is when it was read plus
    /// this many milliseconds, as wall-clock (NTP) time; nil: plain messages.
    package var latencyMilliseconds: Int?
    /// With `protocol: "tcp"`, the framing and queue of the connection; nil: UDP.
    package var tcp: TCPOptions?
    /// With `service: NAME`, the DNS-SD service the destination follows instead of ``host``
    /// and ``port`` (then empty and 0).
    package var service: OSCServiceName?
    /// When the destination is sent its last values again; none by default.
    package var sync: SyncTriggers = []

    /// `host:port`, with IPv6 hosts in brackets; `service 'NAME' (TYPE)`.
    package var endpoint: String {
        if let service { return "service \(service)" }
        return host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// What the destination sends, for `aseqosc status`: the scheme's name, or its mappings and
    /// the scheme that sends the rest (`3 mappings + touchosc`, `3 mappings`).
    package var sends: String {
        guard !mappings.isEmpty else { return scheme }
        let count = "\(mappings.count) mapping\(mappings.count == 1 ? "" : "s")"
        return unmatched == .drop ? count : "\(count) + \(scheme)"
    }
}

/// How a destination helps its receiver end notes whose note-off a lossy network lost
/// (docs/OSC.md, "Recovery").
package enum NoteRecovery: String, Sendable, Equatable, CaseIterable {
    /// Only the events (the default: every scheme stays byte for byte what its peers expect).
    case off
    /// `/aseqosc/held` messages, while notes are held and for a second after: the held notes per
    /// channel, and the period the sender promises not to stay silent for; aseqosc's OSC input
    /// releases what a sender no longer holds, and everything of a sender gone silent.
    case heldNotes = "held-notes"
    /// Every note-off sent again twice, 100 and 200 ms later (unless the note was played again),
    /// for receivers that know nothing of `/aseqosc/held`.
    case repeatedNoteOffs = "note-offs"
}

/// One kind's OSC message in a custom scheme.
package struct MessageConfig: Sendable, Equatable {
    var address: String
    var arguments: [OSCArgumentField]
    var style: OSCArgumentStyle
}
