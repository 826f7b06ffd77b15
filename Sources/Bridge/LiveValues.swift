import MIDI
import MIDIToOSC
import OSC
import OSCMapping
import OSCQuery
import Synchronization
import ValueStore

/// The OSCQuery namespace's live values, read from the last-value stores: every method the
/// namespace lists whose value the bridge keeps, written as that method's arguments.
///
/// - the `default` scheme's `/midi/{port}/{channel}/cc` and the others that hold a value, for
///   each output port (what the OSC input sent it) and input port (what it received);
/// - osmid's `/{port}/control_change` and the others, channel first: the output's latest of
///   its 16 channels;
/// - the TouchOSC Bridge's `/midi ,m`: the latest value-carrying message either way, from an
///   output port (port byte: its index) or sent to a `touchosc` destination;
/// - each address a mapping rule lists: the rule's MIDI side read from the output ports it
///   sends to, and from the destinations that send the rules back (what a keyboard played),
///   scaled back as the rule sends it.
///
/// Where one method reads several slots (an output and an input of one name, a mapped address
/// both ways, osmid's channels), the one that changed last is shown, as the changes are taken.
///
/// The bridge hands it the stores at each start and reload; the OSCQuery server's thread reads
/// it, and is the one reader of the stores' changes.
final class LiveValues: OSCQueryValueSource {
    /// The values a destination is sent, for the methods its addresses are: its mapping rules
    /// (nil: none) or the TouchOSC Bridge's `/midi`, and its store's tables.
    struct Sent {
        var mappings: [OSCMappingRule]
        var touchOSC: Bool
        var tables: [PortValues]
    }

    /// How one value of a method is written as the method's arguments.
    fileprivate enum Form {
        /// The `default` scheme's arguments.
        case `default`
        /// o2m's: channel (1-16) first, pitch bend 0...16383.
        case osmid
        /// One `m`, in TouchOSC's byte order, with this port byte.
        case touchOSC(port: UInt8)
        /// Through mapping formatter `index`, which must write the method's own address.
        case mapping(Int)
    }

    /// One place a method's value is read: a slot of a table, or for a method of one RPN or
    /// NRPN, that parameter (its slot then the channel's last word of the kind).
    fileprivate struct Source {
        var table: Int
        var slot: ValueSlot
        var parameter: UInt16?
        var form: Form
    }

    fileprivate struct Method {
        var path: String
        var sources: [Source]
        /// The source that changed last, once a change was taken.
        var newest: Int?
        /// Changed since ``LiveValues/takeChanges(_:)`` last reported it.
        var changed = false
    }

    /// A source by its table and slot, or RPN/NRPN number.
    fileprivate struct SourceKey: Hashable {
        var table: Int
        var slot: Int
        var parameter: Int
    }

    fileprivate struct State {
        var tables: [PortValues] = []
        var methods: [Method] = []
        var byPath: [String: Int] = [:]
        var bySource: [SourceKey: [(method: Int, source: Int)]] = [:]
        /// Methods changed since the last report, in the order their changes were taken.
        var changed: [Int] = []
        var formatters: [OSCMappingFormatter] = []
    }

    private let state = Mutex(State())

    /// The methods with a value, by the `default` scheme's last address part.
    static let kinds: [(name: String, kind: MIDIEventKind)] = [
        ("cc", .controlChange), ("cc14", .controlChange14), ("poly_pressure", .polyPressure),
        ("program", .programChange), ("pressure", .channelPressure), ("pitch_bend", .pitchBend), ("rpn", .rpn),
        ("nrpn", .nrpn),
    ]

    /// osmid's methods with a value, by their last address part.
    static let osmidKinds: [(name: String, kind: MIDIEventKind)] = [
        ("control_change", .controlChange), ("poly_pressure", .polyPressure), ("program_change", .programChange),
        ("channel_pressure", .channelPressure), ("pitch_bend", .pitchBend),
    ]

    /// Values of nothing, until ``update(outputs:inputs:families:mappings:sent:)``.
    init() {}

    /// No methods, for a config that serves no OSCQuery namespace.
    func clear() { state.withLock { $0 = State() } }

    /// Reads, from now on, the values of `outputs` (name, table, by output index) and `inputs`
    /// (name, table) under the addresses of `families`, of the OSC input's `mappings`, and of
    /// the destinations that send them back or speak TouchOSC (`sent`).
    func update(
        outputs: [(String, PortValues)], inputs: [(String, PortValues)],
        families: Set<OSCAddressFamily> = [.default], mappings: [OSCMappingRule] = [], sent: [Sent] = []
    ) {
        var new = State()
        var indices: [ObjectIdentifier: Int] = [:]
        // Each table once, however many methods read it: its changes are taken once.
        func index(of table: PortValues) -> Int {
            if let index = indices[ObjectIdentifier(table)] { return index }
            new.tables.append(table)
            indices[ObjectIdentifier(table)] = new.tables.count - 1
            return new.tables.count - 1
        }
        let outputTables = outputs.map { index(of: $0.1) }
        let inputTables = inputs.map { index(of: $0.1) }
        func add(_ path: String, _ sources: [Source]) {
            guard !sources.isEmpty, new.byPath[path] == nil else { return }
            let method = new.methods.count
            new.byPath[path] = method
            new.methods.append(Method(path: path, sources: sources))
            for (index, source) in sources.enumerated() {
                let key = SourceKey(
                    table: source.table, slot: source.slot.index, parameter: source.parameter.map(Int.init) ?? -1)
                new.bySource[key, default: []].append((method, index))
            }
        }

        // Mapping rules first, as the namespace lists them (and the translator tries them).
        let sentByRules = sent.filter { !$0.mappings.isEmpty }.map { destination in
            new.formatters.append(OSCMappingFormatter(rules: destination.mappings))
            return (formatter: new.formatters.count - 1, tables: destination.tables.map { index(of: $0) })
        }
        for rule in mappings {
            guard let addresses = OSCQueryNamespace.addresses(of: rule) else { continue }
            new.formatters.append(OSCMappingFormatter(rules: [rule]))
            let own = new.formatters.count - 1
            let targets: [Int] =
                switch rule.output {
                case .all: outputTables
                case .port(let index): index < outputs.count ? [outputTables[index]] : []
                }
            for address in addresses {
                guard let (slot, parameter) = Self.slot(of: rule, captures: address.captures) else { continue }
                var sources = targets.map { Source(table: $0, slot: slot, parameter: parameter, form: .mapping(own)) }
                for destination in sentByRules {
                    for table in destination.tables {
                        sources.append(
                            Source(
                                table: table, slot: slot, parameter: parameter, form: .mapping(destination.formatter)))
                    }
                }
                add(address.path, sources)
            }
        }

        // The `default` scheme's: each output's where the input takes that family, and each
        // input's, where no output took the address.
        let outputParts = outputs.map { OSCPortNameStyle.osmid.sanitise($0.0) }
        var defaultSources: [String: [Source]] = [:]
        var defaultOrder: [String] = []
        func addDefault(_ part: String, table: Int) {
            for channel in UInt8(0)..<16 {
                for (name, kind) in Self.kinds {
                    let path = "/midi/\(part)/\(channel + 1)/\(name)"
                    if defaultSources[path] == nil { defaultOrder.append(path) }
                    defaultSources[path, default: []].append(
                        Source(table: table, slot: Self.slot(of: kind, channel: channel), form: .default))
                }
            }
        }
        if families.contains(.default) {
            for (part, table) in zip(outputParts, outputTables) { addDefault(part, table: table) }
        }
        for (input, table) in zip(inputs, inputTables) {
            addDefault(OSCPortNameStyle.osc.sanitise(input.0), table: table)
        }
        for path in defaultOrder { add(path, defaultSources[path]!) }

        if families.contains(.osmid) {
            for (part, table) in zip(outputParts, outputTables) {
                for (name, kind) in Self.osmidKinds {
                    add(
                        "/\(part)/\(name)",
                        (UInt8(0)..<16).map {
                            Source(table: table, slot: Self.slot(of: kind, channel: $0), form: .osmid)
                        })
                }
            }
        }

        if families.contains(.touchosc) {
            var sources: [Source] = []
            func addTouchOSC(table: Int, port: UInt8) {
                for channel in UInt8(0)..<16 {
                    for kind in [
                        MIDIEventKind.controlChange, .polyPressure, .programChange, .channelPressure, .pitchBend,
                    ] {
                        sources.append(
                            Source(
                                table: table, slot: Self.slot(of: kind, channel: channel), form: .touchOSC(port: port)))
                    }
                }
            }
            for (port, table) in outputTables.enumerated() {
                addTouchOSC(table: table, port: UInt8(truncatingIfNeeded: port))
            }
            for destination in sent where destination.touchOSC {
                for table in destination.tables {
                    addTouchOSC(table: index(of: table), port: UInt8(truncatingIfNeeded: table.port))
                }
            }
            add("/midi", sources)
        }
        // A table's changes until now belong to the old methods: taken, not reported.
        for table in new.tables { table.takeChanges { _ in } }
        state.withLock { $0 = new }
    }

    /// The slot of a `default`-scheme or osmid method of `kind` on `channel` (0-15): the
    /// channel's last word for a kind with a key (controller, note, parameter).
    private static func slot(of kind: MIDIEventKind, channel: UInt8) -> ValueSlot {
        switch kind {
        case .programChange: .program(channel: channel)
        case .channelPressure: .channelPressure(channel: channel)
        case .pitchBend: .pitchBend(channel: channel)
        default: .last(kind, channel: channel)!
        }
    }

    /// Where the value of a mapping rule's address (with `captures`) is kept: the slot its
    /// constants and captures name, or the channel's last word of the kind where an argument
    /// gives the key; nil for a kind the stores do not keep (notes, system messages) or a
    /// channel an argument gives.
    static func slot(of rule: OSCMappingRule, captures: [Int]) -> (ValueSlot, UInt16?)? {
        var fixed: [OSCMappingTarget: Int] = [:]
        for (field, value) in zip(OSCMappingRule.fields(for: rule.kind), rule.values) {
            guard let value else {
                fixed[field.target] = field.unsetResult
                continue
            }
            switch value.source {
            case .constant(let constant): fixed[field.target] = value.result(constant, for: field)
            case .capture(let index): fixed[field.target] = value.result(Double(captures[index]), for: field)
            case .argument: break
            }
        }
        guard let channel = fixed[.channel].map({ UInt8($0 - 1) }) else { return nil }
        switch rule.kind {
        case .controlChange:
            return (
                fixed[.data1].map { .controller(UInt8($0), channel: channel) } ?? .last(
                    .controlChange, channel: channel)!, nil
            )
        case .polyPressure:
            return (
                fixed[.data1].map { .polyPressure(note: UInt8($0), channel: channel) } ?? .last(
                    .polyPressure, channel: channel)!, nil
            )
        case .controlChange14:
            return (
                fixed[.parameter].map { .controller14(UInt8($0), channel: channel) }
                    ?? .last(.controlChange14, channel: channel)!, nil
            )
        case .programChange, .channelPressure, .pitchBend: return (slot(of: rule.kind, channel: channel), nil)
        case .rpn, .nrpn: return (.last(rule.kind, channel: channel)!, fixed[.parameter].map { UInt16($0) })
        default: return nil
        }
    }

    func isReadable(_ path: String) -> Bool { state.withLock { $0.byPath[path] != nil } }

    func value(at path: String) -> [OSCArgument]? {
        state.withLock { state in
            state.takeStoreChanges()
            guard let index = state.byPath[path] else { return nil }
            let method = state.methods[index]
            if let newest = method.newest, let value = state.arguments(of: method.sources[newest], at: path) {
                return value
            }
            for source in method.sources {
                if let value = state.arguments(of: source, at: path) { return value }
            }
            return nil
        }
    }

    func takeChanges(_ body: (String) -> Void) {
        let paths = state.withLock { state in
            state.takeStoreChanges()
            defer { state.changed.removeAll(keepingCapacity: true) }
            return state.changed.map { index in
                state.methods[index].changed = false
                return state.methods[index].path
            }
        }
        for path in paths { body(path) }
    }

    /// The `default` scheme's arguments for a stored event.
    static func arguments(of event: MIDIEvent) -> [OSCArgument] {
        switch event.kind {
        case .controlChange, .polyPressure: [.int32(Int32(event.data1)), .int32(Int32(event.data2))]
        case .programChange, .channelPressure: [.int32(Int32(event.data1))]
        case .pitchBend: [.int32(event.value)]
        default: [.int32(Int32(event.parameter)), .int32(event.value)]
        }
    }
}

extension LiveValues.State {
    /// Takes every table's changes since the last call: each source that changed becomes its
    /// methods' newest, and the methods are noted as changed.
    fileprivate mutating func takeStoreChanges() {
        for (index, table) in tables.enumerated() {
            table.takeChanges { slot in
                note(LiveValues.SourceKey(table: index, slot: slot.index, parameter: -1))
                // An RPN or NRPN shows as its channel's last word: the parameter it names.
                if slot.isLast, slot.kind == .rpn || slot.kind == .nrpn, let event = table.event(at: slot) {
                    note(LiveValues.SourceKey(table: index, slot: slot.index, parameter: Int(event.parameter)))
                }
            }
        }
    }

    private mutating func note(_ key: LiveValues.SourceKey) {
        guard let hits = bySource[key] else { return }
        for (method, source) in hits {
            methods[method].newest = source
            if !methods[method].changed {
                methods[method].changed = true
                changed.append(method)
            }
        }
    }

    /// The stored value `source` reads, as the arguments of the method at `path`; nil when it
    /// has none (or, for a mapping, when the rule writes another address for it).
    fileprivate func arguments(of source: LiveValues.Source, at path: String) -> [OSCArgument]? {
        let table = tables[source.table]
        let slot = source.slot
        let event: MIDIEvent
        if let number = source.parameter {
            guard let value = table.parameter(slot.kind, channel: slot.channel, number: number) else { return nil }
            event = MIDIEvent(slot.kind, channel: slot.channel, value: value, parameter: number, port: table.port)
        } else {
            guard let stored = table.event(at: slot) else { return nil }
            event = stored
        }
        switch source.form {
        case .default:
            return LiveValues.arguments(of: event)
        case .osmid:
            let channel = Int32(event.channel) + 1
            switch event.kind {
            case .controlChange, .polyPressure:
                return [.int32(channel), .int32(Int32(event.data1)), .int32(Int32(event.data2))]
            case .programChange, .channelPressure: return [.int32(channel), .int32(Int32(event.data1))]
            case .pitchBend: return [.int32(channel), .int32(event.value + 8192)]
            default: return nil
            }
        case .touchOSC(let port):
            let (status, data1, data2) = event.wireBytes
            // TouchOSC's order: the status byte last.
            return [.midi(port: port, status: data2, data1: data1, data2: status)]
        case .mapping(let index):
            return withUnsafeTemporaryAllocation(byteCount: 1_024, alignment: 4) { buffer in
                guard let size = formatters[index].write(event, into: buffer), size > 0,
                    case .message(let message)? = try? OSCPacket.decode(Array(buffer[..<size])),
                    message.address == path
                else { return nil }
                return message.arguments
            }
        }
    }
}
