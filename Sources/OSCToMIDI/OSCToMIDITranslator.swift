import MIDI
import OSC
import OSCMapping
import Synchronization

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
public struct OSCToMIDITranslator: Sendable {
    /// The built-in address families (``OSCAddressFamily``).
    public typealias Family = OSCAddressFamily

    /// What became of one message.
    public enum Outcome: Hashable, Sendable {
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
    public let outputNames: [[UInt8]]
    public let rules: [OSCMappingRule]
    /// The rules' addresses compiled for lookup: what a new address costs grows with its parts,
    /// not with the number of rules.
    public let ruleIndex: OSCMappingIndex
    public let families: Set<Family>
    /// Where SysEx goes; nil means SysEx from the network is refused (counted, never sent).
    public let sysex: SysExStore?

    let acceptsDefault: Bool
    let acceptsTouchOSC: Bool
    let acceptsOsmid: Bool
    /// Tells translators apart, so an ``OSCAddressCache`` never answers for another one.
    let identity: Int

    private static let identities = Atomic<Int>(0)

    /// A translator for outputs named `outputNames` (index = ``MIDIEvent/port`` of what it emits).
    public init(
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
        // Relaxed: only uniqueness matters.
        identity = Self.identities.add(1, ordering: .relaxed).newValue
    }

    /// Translates one message, handing each event (with ``MIDIEvent/port`` set to the output
    /// index) to `sink`. A SysEx event's slot in ``sysex`` belongs to the sink's side, which must
    /// release it.
    public func translate(
        _ message: OSCMessageView, timestamp: UInt64 = 0, into sink: (MIDIEvent) -> Void
    ) -> Outcome {
        perform(resolve(message.address), message, timestamp, sink)
    }

    /// ``translate(_:timestamp:into:)`` with what each address resolved to remembered in `cache`,
    /// so a repeated address runs no pattern matching or name comparison: the same outcomes and
    /// events, cheaper. The cache belongs to one thread; used with another translator, it
    /// empties itself first.
    public func translate(
        _ message: OSCMessageView, timestamp: UInt64 = 0, cache: OSCAddressCache, into sink: (MIDIEvent) -> Void
    ) -> Outcome {
        if let resolution = cache.lookup(message, owner: identity) {
            return perform(resolution.pointee, message, timestamp, sink)
        }
        let resolution = resolve(message.address)
        cache.insert(message, resolution, owner: identity)
        return perform(resolution, message, timestamp, sink)
    }

    /// The fast path for a datagram that is one message at an address `cache` knows: finds the
    /// address and its resolution in one pass over the address's words, validates only what
    /// follows the address (the cache's key proves the address bytes valid), and translates.
    /// Same events, outcome and errors as validating the datagram with `OSCPacketView` and
    /// calling ``translate(_:timestamp:cache:into:)``.
    ///
    /// - Returns: the message and the outcome, or nil when `cache` does not know the datagram's
    ///   address (or it is a bundle): then validate it and translate it the usual way, which
    ///   fills the cache.
    /// - Throws: what `OSCPacketView` throws for the datagram, when it is not valid OSC.
    public func translate(
        datagram: UnsafeRawBufferPointer, timestamp: UInt64 = 0, cache: OSCAddressCache,
        into sink: (MIDIEvent) -> Void
    ) throws(OSCDecodeError) -> (message: OSCMessageView, outcome: Outcome)? {
        guard let (resolution, addressLength) = cache.lookup(packet: datagram, owner: identity) else { return nil }
        let message = try OSCMessageView(datagram, validatedAddressLength: addressLength)
        return (message, perform(resolution.pointee, message, timestamp, sink))
    }

    /// The hot case of ``translate(datagram:timestamp:cache:into:)``, as one function with no
    /// sink: a datagram that is one message at an address `cache` knows, standing for one
    /// channel event to one output (o2m's `/{port}/note_on ,iii` and the like, or the default
    /// scheme's `/midi/{port}/{channel}/note_on ,ii` and the like), with all-`i` arguments that
    /// make one event. Returns that event, which the general path would hand to its sink once
    /// with the outcome ``Outcome/translated``.
    ///
    /// Returns nil for everything else (an unknown address, other tags or sizes, values the
    /// general path refuses, o2m's channel 0 sent to all 16 channels, several outputs): then
    /// translate the datagram the general way, which validates it and gives the outcome or the
    /// error. So this path never accepts what validation would refuse: it accepts only the tag
    /// strings `,ii` and `,iii` with exactly their arguments' bytes after an address the cache
    /// proves valid.
    @inline(__always)
    public func quickEvent(datagram: UnsafeRawBufferPointer, timestamp: UInt64, cache: OSCAddressCache) -> MIDIEvent? {
        guard let (resolution, addressLength) = cache.lookup(packet: datagram, owner: identity) else { return nil }
        return Self.quickEvent(resolution, datagram, tagsAt: (addressLength + 4) & ~3, timestamp: timestamp)
    }

    /// ``quickEvent(datagram:timestamp:cache:)`` once the address is found: the tag string
    /// starts at `offset`, the padded address's end.
    @inline(__always)
    static func quickEvent(
        _ resolution: UnsafePointer<AddressResolution>, _ bytes: UnsafeRawBufferPointer, tagsAt offset: Int,
        timestamp: UInt64
    ) -> MIDIEvent? {
        let port = resolution.pointee.singleOutput
        guard port != .max else { return nil }
        let remaining = bytes.count - offset
        guard remaining >= 12 else { return nil }
        // Byte k of the tag string is bits 8k..8k+7, whatever the machine's order.
        let tags = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
        @inline(__always)
        func int32(_ at: Int) -> Int32 {
            Int32(bitPattern: UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: at, as: UInt32.self)))
        }
        var event = MIDIEvent(resolution.pointee.kind, channel: resolution.pointee.channel, timestamp: timestamp)
        event.port = port
        switch resolution.pointee.action {
        case .osmidChannel:
            let channel: Int32
            if resolution.pointee.expected == 3 {
                // `,iii` and its padding word, then three words.
                guard remaining == 20, tags == 0x6969_692C,
                    bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self) == 0
                else { return nil }
                channel = int32(offset + 8)
                fillOsmid(&event, first: int32(offset + 12), last: int32(offset + 16))
            } else {
                // `,ii` with its NUL, then two words.
                guard remaining == 12, tags == 0x0069_692C else { return nil }
                channel = int32(offset + 4)
                fillOsmid(&event, first: int32(offset + 8), last: 0)
            }
            // o2m's channel 0 and below go to all 16 channels: the general path's case.
            guard channel > 0 else { return nil }
            event.channel = UInt8(truncatingIfNeeded: min(channel, 16) - 1)
            return event
        case .twoDataBytes:
            guard remaining == 12, tags == 0x0069_692C else { return nil }
            let first = int32(offset + 4)
            let second = int32(offset + 8)
            guard UInt32(bitPattern: first) <= 127, UInt32(bitPattern: second) <= 127 else { return nil }
            event.data1 = UInt8(truncatingIfNeeded: first)
            event.data2 = UInt8(truncatingIfNeeded: second)
            return event
        default:
            return nil
        }
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
