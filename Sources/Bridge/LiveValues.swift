import MIDI
import OSC
import OSCMapping
import OSCQuery
import Synchronization
import ValueStore

/// The OSCQuery namespace's live values, read from the last-value stores: for each output port
/// what the OSC input sent it, for each input port what it received, under the `default`
/// scheme's addresses (`/midi/{port}/{channel}/cc` and the others that hold a value). Where an
/// input and an output share an address, the output's value is shown once it has one.
///
/// The bridge hands it the stores at each start and reload; the OSCQuery server's thread reads
/// it, and is the one reader of the stores' changes.
final class LiveValues: OSCQueryValueSource {
    private struct Tables {
        /// The tables of each address part (a sanitised port name), outputs first.
        var byPart: [String: [PortValues]] = [:]
        /// Each table's address part, in the order changes are read.
        var parts: [(part: String, table: PortValues)] = []
    }

    private let tables = Mutex(Tables())

    /// The methods with a value, by their last address part.
    static let kinds: [String: MIDIEventKind] = [
        "cc": .controlChange, "cc14": .controlChange14, "poly_pressure": .polyPressure, "program": .programChange,
        "pressure": .channelPressure, "pitch_bend": .pitchBend, "rpn": .rpn, "nrpn": .nrpn,
    ]

    /// Values of nothing, until ``update(outputs:inputs:)``.
    init() {}

    /// Reads the values of `outputs` (name, table) and `inputs` (name, table) from now on.
    func update(outputs: [(String, PortValues)], inputs: [(String, PortValues)]) {
        // Each as its addresses are spelled: an output's as the namespace lists what the OSC
        // input accepts, an input's as the `default` scheme sends it.
        let named =
            outputs.map { (OSCPortNameStyle.osmid.sanitise($0.0), $0.1) }
            + inputs.map { (OSCPortNameStyle.osc.sanitise($0.0), $0.1) }
        tables.withLock {
            $0.parts = named.map { (part: $0.0, table: $0.1) }
            $0.byPart = Dictionary(named.map { ($0.0, [$0.1]) }, uniquingKeysWith: +)
        }
    }

    /// The tables and the slot `path` names, if it names a method that keeps a value.
    private func lookup(_ path: String) -> (tables: [PortValues], slot: ValueSlot)? {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 5, parts[0].isEmpty, parts[1] == "midi",
            let channel = UInt8(parts[3]), (1...16).contains(channel), let kind = Self.kinds[String(parts[4])],
            let tables = tables.withLock({ $0.byPart[String(parts[2])] })
        else { return nil }
        let slot: ValueSlot
        switch kind {
        case .programChange: slot = .program(channel: channel - 1)
        case .channelPressure: slot = .channelPressure(channel: channel - 1)
        case .pitchBend: slot = .pitchBend(channel: channel - 1)
        default:
            guard let last = ValueSlot.last(kind, channel: channel - 1) else { return nil }
            slot = last
        }
        return (tables, slot)
    }

    func isReadable(_ path: String) -> Bool { lookup(path) != nil }

    func value(at path: String) -> [OSCArgument]? {
        guard let (tables, slot) = lookup(path) else { return nil }
        for table in tables {
            if let event = table.event(at: slot) { return Self.arguments(of: event) }
        }
        return nil
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

    func takeChanges(_ body: (String) -> Void) {
        for (part, table) in tables.withLock({ $0.parts }) {
            table.takeChanges { slot in
                // A keyed kind's method shows its last word, which changes with every key.
                guard slot.isLast || ValueSlot.last(slot.kind, channel: 0) == nil, let name = Self.name(of: slot.kind)
                else { return }
                body("/midi/\(part)/\(slot.channel + 1)/\(name)")
            }
        }
    }

    private static func name(of kind: MIDIEventKind) -> String? {
        kinds.first { $0.value == kind }?.key
    }
}
