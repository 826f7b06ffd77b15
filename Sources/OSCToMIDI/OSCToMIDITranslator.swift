import MIDI
import OSC
import OSCMapping

/// Turns incoming OSC messages into MIDI events for the bridge's output ports, reading each
/// message in place (``OSCMessageView``) and allocating nothing.
///
/// What it accepts, in this order (docs/OSC.md has the tables):
/// 1. the configured mapping rules (``OSCMappingRule``);
/// 2. the `default` scheme's own addresses, `/midi/{port}/{channel}/note_on ,ii` and so on;
/// 3. TouchOSC Bridge's `/midi ,m` (either byte order) and `/sysex ,b`;
/// 4. what osmid's `o2m` accepts, `/{port}/note_on ,iii` (channel, note, velocity) and so on,
///    with o2m's value handling (checked against Debian's o2m 0.8.0).
///
/// `{port}` names an output port: compared after both sides are sanitised the way `m2o` does it
/// (space and `#*,/?[]{}` as `_`, ASCII letters lowercased), or an OSC pattern (`*`) matched
/// against every output's sanitised name. Wherever a number is expected, `i`, `f`, `h` and `d`
/// are all accepted (a float is rounded).
package struct OSCToMIDITranslator: Sendable {
    /// The built-in address families (``OSCAddressFamily``).
    package typealias Family = OSCAddressFamily

    /// What became of one message.
    package enum Outcome: Hashable, Sendable {
        /// At least one event went to the sink.
        case translated
        /// No rule or built-in address matches (or the port names no output).
        case unknownAddress
        /// The address is known but the arguments are not what it takes.
        case malformed
        /// SysEx, which this translator was built without.
        case sysexDisabled
        /// SysEx that found no room in the store (every slot in flight, or too long).
        case sysexDropped
    }

    /// The output ports' names as rules and addresses compare them (sanitised, lowercase).
    let outputNames: [[UInt8]]
    package let rules: [OSCMappingRule]
    /// The rules' addresses compiled for lookup: what a new address costs grows with its parts,
    /// not with the number of rules.
    let ruleIndex: OSCMappingIndex
    let families: Set<Family>
    /// Where SysEx goes; nil means SysEx from the network is refused (counted, never sent).
    let sysex: SysExStore?

    let acceptsDefault: Bool
    let acceptsTouchOSC: Bool
    let acceptsOsmid: Bool
    /// The literal addresses accepted, resolved when the translator is built (set once, last
    /// in `init`: resolving needs the rest of the translator).
    private(set) var addressTable = OSCAddressTable()

    /// A translator for outputs named `outputNames` (index = ``MIDIEvent/port`` of what it emits).
    package init(
        outputNames: [String], rules: [OSCMappingRule] = [], families: Set<Family> = Set(Family.allCases),
        sysex: SysExStore? = nil
    ) {
        self.outputNames = outputNames.map { OSCPortNameStyle.osmid.sanitisedBytes($0) }
        self.rules = rules
        ruleIndex = OSCMappingIndex(rules)
        self.families = families
        self.sysex = sysex
        acceptsDefault = families.contains(.default)
        acceptsTouchOSC = families.contains(.touchosc)
        acceptsOsmid = families.contains(.osmid)
        addressTable = OSCAddressTable(literalAddresses(), resolve: resolve)
    }

    /// Translates one message, handing each event (with ``MIDIEvent/port`` set to the output
    /// index) to `sink`. A SysEx event's slot in ``sysex`` belongs to the sink's side, which must
    /// release it.
    package func translate(
        _ message: OSCMessageView, timestamp: UInt64 = 0, into sink: (MIDIEvent) -> Void
    ) -> Outcome {
        let address = message.address
        // A literal address the translator accepts is in the table; anything else (a pattern,
        // an unknown address, a rule left out of the table) is resolved the general way.
        if let resolution = addressTable.lookup(address) {
            return perform(resolution, message, timestamp, sink)
        }
        return perform(resolve(address), message, timestamp, sink)
    }

    /// Runs what `resolution` says on `message`'s arguments.
    func perform(
        _ resolution: AddressResolution, _ message: OSCMessageView, _ timestamp: UInt64,
        _ sink: (MIDIEvent) -> Void
    ) -> Outcome {
        var event = MIDIEvent(resolution.kind, channel: resolution.channel, timestamp: timestamp)
        let outputs = resolution.outputs
        switch resolution.action {
        case .unknownAddress:
            return .unknownAddress
        case .malformed:
            return .malformed
        case .osmidChannel:
            let arguments = NumericArguments(message)
            return translateOsmidChannel(event, resolution.expected, outputs, arguments, sink)
        case .argumentless:
            break
        case .dataByte:
            let arguments = NumericArguments(message)
            guard arguments.count == 1, let value = arguments.int(0, in: 0...127) else { return .malformed }
            event.data1 = UInt8(value)
        case .twoDataBytes:
            let arguments = NumericArguments(message)
            guard arguments.count == 2, let first = arguments.int(0, in: 0...127),
                let second = arguments.int(1, in: 0...127)
            else { return .malformed }
            event.data1 = UInt8(first)
            event.data2 = UInt8(second)
        case .songPosition:
            let arguments = NumericArguments(message)
            guard arguments.count == 1, let value = arguments.int(0, in: 0...16383) else { return .malformed }
            event.value = Int32(value)
        case .pitchBend:
            let arguments = NumericArguments(message)
            guard arguments.count == 1, let bend = arguments.int(0, in: -8192...8191) else { return .malformed }
            event.value = Int32(bend)
        case .parameter:
            let arguments = NumericArguments(message)
            let parameterRange = event.kind == .controlChange14 ? 0...31 : 0...16383
            guard arguments.count == 2, let parameter = arguments.int(0, in: parameterRange),
                let value = arguments.int(1, in: 0...16383)
            else { return .malformed }
            event.parameter = UInt16(parameter)
            event.value = Int32(value)
        case .sysexBlob:
            return sysexBlob(message, outputs: outputs, timestamp, sink)
        case .touchOSCMIDI:
            return translateTouchOSCMIDI(message, timestamp, sink)
        case .raw:
            return raw(message, outputs: outputs, timestamp, sink)
        case .rules:
            let arguments = NumericArguments(message)
            if apply(rules[Int(resolution.firstRule)], message, arguments, resolution.firstCaptures, timestamp, sink) {
                return .translated
            }
            if resolution.ruleCount > 1,
                apply(rules[Int(resolution.secondRule)], message, arguments, resolution.secondCaptures, timestamp, sink)
            {
                return .translated
            }
            return .malformed
        case .manyRules:
            // Each matching rule in order, found one after another through the index.
            let arguments = NumericArguments(message)
            var after = -1
            while let (r, captures) = ruleIndex.firstMatch(message.address, after: after) {
                if apply(rules[r], message, arguments, captures, timestamp, sink) { return .translated }
                after = r
            }
            return .malformed
        }
        emit(event, to: outputs, sink)
        return .translated
    }
}
