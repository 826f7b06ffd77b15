import MIDI
import OSC
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
    /// The built-in address families, which a config may switch off one by one.
    public enum Family: String, Sendable, Hashable, CaseIterable {
        /// `/midi/{port}/...`, the default scheme's mirror.
        case `default`
        /// `/midi ,m` and `/sysex ,b`.
        case touchosc
        /// `/{port}/{command}`, as osmid's o2m.
        case osmid
    }

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

    private let acceptsDefault: Bool
    private let acceptsTouchOSC: Bool
    private let acceptsOsmid: Bool
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

    // MARK: Resolving an address

    /// What `address` stands for, found from the address alone: rules, families and output
    /// names. Whatever depends on the arguments is left to ``perform(_:_:_:_:)``.
    func resolve(_ address: UnsafeRawBufferPointer) -> AddressResolution {
        var resolution = resolveAddress(address, scanning: false)
        resolution.singleOutput = resolution.outputs.single(below: outputNames.count)
        return resolution
    }

    /// ``resolve(_:)`` the plain way, matching every rule in turn instead of using
    /// ``ruleIndex``: the reference the index is tested against.
    func resolveScanning(_ address: UnsafeRawBufferPointer) -> AddressResolution {
        var resolution = resolveAddress(address, scanning: true)
        resolution.singleOutput = resolution.outputs.single(below: outputNames.count)
        return resolution
    }

    private func resolveAddress(_ address: UnsafeRawBufferPointer, scanning: Bool) -> AddressResolution {
        var resolution = AddressResolution()
        if scanning {
            var r = 0
            while r < rules.count {
                var captures = InlineArray<8, Int32>(repeating: 0)
                if rules[r].address.match(address, captures: &captures) {
                    if !resolution.addRule(r, captures) {
                        // More matching rules than a resolution holds: match them per message.
                        return AddressResolution(.manyRules)
                    }
                }
                r += 1
            }
        } else if !rules.isEmpty {
            // The first three matches, in order: a resolution holds two, a third means many.
            let matches = ruleIndex.matches(address)
            var m = 0
            while m < matches.count {
                if !resolution.addRule(matches.rule(m), matches.captures(m)) { return AddressResolution(.manyRules) }
                m += 1
            }
        }
        if resolution.ruleCount > 0 {
            resolution.action = .rules
            return resolution
        }
        let parts = AddressParts(address)
        if acceptsDefault, parts.count >= 3, parts.count <= 4, parts.equals(0, "midi") {
            return resolveDefault(parts)
        }
        if acceptsTouchOSC, parts.count == 1 {
            if parts.equals(0, "midi") { return AddressResolution(.touchOSCMIDI) }
            if parts.equals(0, "sysex") { return AddressResolution(.sysexBlob, outputs: .port(0)) }
        }
        if acceptsOsmid, parts.count == 2 {
            return resolveOsmid(parts)
        }
        return AddressResolution(.unknownAddress)
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

    // MARK: Mapping rules

    private func apply(
        _ rule: OSCMappingRule, _ message: OSCMessageView, _ arguments: NumericArguments,
        _ captures: InlineArray<8, Int32>, _ timestamp: UInt64, _ sink: (MIDIEvent) -> Void
    ) -> Bool {
        if let types = rule.argumentTypes {
            guard types.count == message.typeTags.count else { return false }
            var i = 0
            while i < types.count {
                let wanted = types[i]
                let got = message.typeTags[i]
                if NumericArguments.isNumeric(wanted) ? !NumericArguments.isNumeric(got) : wanted != got {
                    return false
                }
                i += 1
            }
        }
        var event = MIDIEvent(rule.kind, timestamp: timestamp)
        let fields = OSCMappingRule.fields(forKindIndex: rule.kind)
        var i = 0
        while i < fields.count {
            let field = fields[i]
            var result: Int
            if let value = rule.values[i] {
                var raw: Double
                switch value.source {
                case .constant(let constant): raw = constant
                case .capture(let index): raw = Double(captures[index])
                case .argument(let index):
                    guard let argument = arguments[index] else { return false }
                    raw = argument
                }
                if let scale = value.scale { raw = scale.apply(raw) }
                guard raw.isFinite else { return false }
                let rounded = raw.rounded()
                result =
                    rounded < Double(field.range.lowerBound)
                    ? field.range.lowerBound
                    : rounded > Double(field.range.upperBound) ? field.range.upperBound : Int(rounded)
            } else {
                result = field.target == .channel ? 1 : field.range.lowerBound
            }
            switch field.target {
            case .channel: event.channel = UInt8(result - 1)
            case .data1: event.data1 = UInt8(result)
            case .data2: event.data2 = UInt8(result)
            case .value: event.value = Int32(result)
            case .parameter: event.parameter = UInt16(result)
            }
            i += 1
        }
        switch rule.output {
        case .port(let index):
            event.port = UInt16(index)
            sink(event)
        case .all:
            var port = 0
            while port < outputNames.count {
                event.port = UInt16(port)
                sink(event)
                port += 1
            }
        }
        return true
    }

    // MARK: The default scheme's mirror

    private func resolveDefault(_ address: AddressParts) -> AddressResolution {
        let outputs = matchOutputs(address.part(1))
        guard outputs.any else { return AddressResolution(.unknownAddress) }
        if address.count == 3 {
            let type = address.part(2)
            if Self.equal(type, "sysex") { return AddressResolution(.sysexBlob, outputs: outputs) }
            if let kind = Self.argumentlessKind(type) {
                return AddressResolution(.argumentless, kind: kind, outputs: outputs)
            }
            if Self.equal(type, "mtc_quarter_frame") || Self.equal(type, "song_select") {
                let kind: MIDIEventKind = Self.equal(type, "song_select") ? .songSelect : .mtcQuarterFrame
                return AddressResolution(.dataByte, kind: kind, outputs: outputs)
            }
            if Self.equal(type, "song_position") {
                return AddressResolution(.songPosition, kind: .songPosition, outputs: outputs)
            }
            return AddressResolution(.unknownAddress)
        }
        let channelPart = address.part(2)
        guard let channel = Self.decimal(channelPart) else { return AddressResolution(.unknownAddress) }
        guard channel >= 1 && channel <= 16 else { return AddressResolution(.malformed) }
        let type = address.part(3)
        let action: AddressResolution.Action
        let kind: MIDIEventKind
        if Self.equal(type, "note_on") {
            (action, kind) = (.twoDataBytes, .noteOn)
        } else if Self.equal(type, "note_off") {
            (action, kind) = (.twoDataBytes, .noteOff)
        } else if Self.equal(type, "poly_pressure") {
            (action, kind) = (.twoDataBytes, .polyPressure)
        } else if Self.equal(type, "cc") {
            (action, kind) = (.twoDataBytes, .controlChange)
        } else if Self.equal(type, "program") {
            (action, kind) = (.dataByte, .programChange)
        } else if Self.equal(type, "pressure") {
            (action, kind) = (.dataByte, .channelPressure)
        } else if Self.equal(type, "pitch_bend") {
            (action, kind) = (.pitchBend, .pitchBend)
        } else if Self.equal(type, "cc14") {
            (action, kind) = (.parameter, .controlChange14)
        } else if Self.equal(type, "rpn") {
            (action, kind) = (.parameter, .rpn)
        } else if Self.equal(type, "nrpn") {
            (action, kind) = (.parameter, .nrpn)
        } else {
            return AddressResolution(.unknownAddress)
        }
        return AddressResolution(action, kind: kind, channel: UInt8(channel - 1), outputs: outputs)
    }

    private static func argumentlessKind(_ type: UnsafeRawBufferPointer) -> MIDIEventKind? {
        if equal(type, "clock") { return .clock }
        if equal(type, "start") { return .start }
        if equal(type, "stop") { return .stop }
        if equal(type, "continue") { return .continue }
        if equal(type, "active_sensing") { return .activeSensing }
        if equal(type, "reset") { return .reset }
        if equal(type, "tune_request") { return .tuneRequest }
        return nil
    }

    // MARK: TouchOSC

    private func translateTouchOSCMIDI(_ message: OSCMessageView, _ timestamp: UInt64, _ sink: (MIDIEvent) -> Void)
        -> Outcome
    {
        guard message.argumentCount > 0 else { return .malformed }
        var sent = false
        var outcome = Outcome.malformed
        for argument in message.arguments {
            guard case .midi(let port, let byte1, let byte2, let byte3) = argument else { return .malformed }
            // TouchOSC puts the status last, OSC 1.0 second; only a status byte has its top bit set.
            let status: UInt8
            let data1 = byte2
            let data2: UInt8
            if byte3 & 0x80 != 0 {
                (status, data2) = (byte3, byte1)
            } else if byte1 & 0x80 != 0 {
                (status, data2) = (byte1, byte3)
            } else {
                return .malformed
            }
            let length = Self.messageLength(status)
            guard length > 0 else { return .malformed }
            guard Int(port) < outputNames.count else {
                if !sent { outcome = .unknownAddress }
                continue
            }
            var parser = MIDIByteParser(store: nil, port: UInt16(port))
            let bytes = (status, data1 & 0x7F, data2 & 0x7F)
            withUnsafeBytes(of: bytes) { raw in
                parser.parse(UnsafeRawBufferPointer(rebasing: raw[0..<length]), timestamp: timestamp) { event in
                    sent = true
                    sink(event)
                }
            }
        }
        return sent ? .translated : outcome
    }

    /// Bytes in a message with this status byte; 0 for SysEx and undefined ones.
    private static func messageLength(_ status: UInt8) -> Int {
        switch status {
        case 0x80...0xBF, 0xE0...0xEF, 0xF2: 3
        case 0xC0...0xDF, 0xF1, 0xF3: 2
        case 0xF6, 0xF8, 0xFA, 0xFB, 0xFC, 0xFE, 0xFF: 1
        default: 0
        }
    }

    // MARK: osmid's o2m

    private func resolveOsmid(_ address: AddressParts) -> AddressResolution {
        let device = address.part(0)
        let command = address.part(1)
        let outputs = matchOutputs(device)
        guard outputs.any else { return AddressResolution(.unknownAddress) }
        if Self.equal(command, "clock") || Self.equal(command, "start") || Self.equal(command, "stop")
            || Self.equal(command, "continue") || Self.equal(command, "active_sensing")
        {
            // o2m ignores any arguments these carry. (Its active_sensing sends F0 F7, a JUCE
            // quirk; this sends FE, the active sensing byte.)
            return AddressResolution(.argumentless, kind: Self.argumentlessKind(command)!, outputs: outputs)
        }
        if Self.equal(command, "raw") { return AddressResolution(.raw, outputs: outputs) }
        if Self.equal(command, "sysex") { return AddressResolution(.sysexBlob, outputs: outputs) }
        let kind: MIDIEventKind
        let expected: UInt8
        if Self.equal(command, "note_on") {
            (kind, expected) = (.noteOn, 3)
        } else if Self.equal(command, "note_off") {
            (kind, expected) = (.noteOff, 3)
        } else if Self.equal(command, "control_change") {
            (kind, expected) = (.controlChange, 3)
        } else if Self.equal(command, "poly_pressure") {
            (kind, expected) = (.polyPressure, 3)
        } else if Self.equal(command, "pitch_bend") {
            (kind, expected) = (.pitchBend, 2)
        } else if Self.equal(command, "channel_pressure") {
            (kind, expected) = (.channelPressure, 2)
        } else if Self.equal(command, "program_change") {
            (kind, expected) = (.programChange, 2)
        } else {
            return AddressResolution(.unknownAddress)
        }
        var resolution = AddressResolution(.osmidChannel, kind: kind, outputs: outputs)
        resolution.expected = expected
        return resolution
    }

    /// o2m's channel messages: channel first; o2m sends to all 16 channels for a channel <= 0
    /// and to 16 for one above; values are masked to 7 bits, velocities clamped at 127 after a
    /// cast to a byte, pitch bend masked to 14 bits (JUCE's MidiMessage).
    private func translateOsmidChannel(
        _ template: MIDIEvent, _ expected: UInt8, _ outputs: OutputSet, _ arguments: NumericArguments,
        _ sink: (MIDIEvent) -> Void
    ) -> Outcome {
        var event = template
        guard arguments.count == Int(expected) else { return .malformed }
        if arguments.onlyInt32 {
            // All `i`, as o2m's senders send them: the words at fixed offsets, no checks left.
            let channel = arguments.fixedWord(0)
            let first = arguments.fixedWord(1)
            let last = expected == 3 ? arguments.fixedWord(2) : 0
            return sendOsmidChannel(&event, channel: channel, first: first, last: last, outputs, sink)
        }
        guard let channel = arguments.int32(0), let first = arguments.int32(1) else { return .malformed }
        var last: Int32 = 0
        if expected == 3 {
            guard let value = arguments.int32(2) else { return .malformed }
            last = value
        }
        return sendOsmidChannel(&event, channel: channel, first: first, last: last, outputs, sink)
    }

    /// The rest of ``translateOsmidChannel(_:_:_:_:_:)``, once the arguments are read (`last`:
    /// the third, for the kinds that take three).
    private func sendOsmidChannel(
        _ event: inout MIDIEvent, channel: Int32, first: Int32, last: Int32, _ outputs: OutputSet,
        _ sink: (MIDIEvent) -> Void
    ) -> Outcome {
        Self.fillOsmid(&event, first: first, last: last)
        if channel <= 0 {
            var each: UInt8 = 0
            while each < 16 {
                event.channel = each
                emit(event, to: outputs, sink)
                each += 1
            }
        } else {
            event.channel = UInt8(min(channel, 16) - 1)
            emit(event, to: outputs, sink)
        }
        return .translated
    }

    /// o2m's value handling for an event of `event.kind` from its arguments after the channel.
    @inline(__always)
    private static func fillOsmid(_ event: inout MIDIEvent, first: Int32, last: Int32) {
        switch event.kind {
        case .noteOn, .noteOff:
            event.data1 = UInt8(truncatingIfNeeded: first) & 0x7F
            event.data2 = min(UInt8(truncatingIfNeeded: last), 127)
        case .controlChange, .polyPressure:
            event.data1 = UInt8(truncatingIfNeeded: first) & 0x7F
            event.data2 = UInt8(truncatingIfNeeded: last) & 0x7F
        case .pitchBend:
            event.value = (first & 0x3FFF) - 8192
        default:
            event.data1 = UInt8(truncatingIfNeeded: first) & 0x7F
        }
    }

    /// o2m's `raw`: one blob of MIDI bytes, or numbers taken as bytes (other arguments skipped).
    private func raw(_ message: OSCMessageView, outputs: OutputSet, _ timestamp: UInt64, _ sink: (MIDIEvent) -> Void)
        -> Outcome
    {
        guard message.argumentCount > 0 else { return .malformed }
        if message.typeTags[0] == OSCTypeTag.blob {
            guard case .blob(let bytes)? = message.arguments.first(where: { _ in true }) else { return .malformed }
            return parseMIDI(bytes, outputs: outputs, timestamp, sink)
        }
        let capacity = 1024
        return withUnsafeTemporaryAllocation(byteCount: capacity, alignment: 1) { buffer in
            var count = 0
            for argument in message.arguments where count < capacity {
                let number: Int64
                switch argument {
                case .int32(let value): number = Int64(value)
                case .int64(let value): number = value
                case .float32(let value) where value.isFinite: number = Int64(max(min(value.rounded(), 1e9), -1e9))
                case .double(let value) where value.isFinite: number = Int64(max(min(value.rounded(), 1e9), -1e9))
                default: continue
                }
                buffer[count] = UInt8(truncatingIfNeeded: number)
                count += 1
            }
            return parseMIDI(UnsafeRawBufferPointer(rebasing: buffer[0..<count]), outputs: outputs, timestamp, sink)
        }
    }

    /// Parses a MIDI byte stream for every output in `outputs` (each gets its own SysEx slot).
    private func parseMIDI(
        _ bytes: UnsafeRawBufferPointer, outputs: OutputSet, _ timestamp: UInt64, _ sink: (MIDIEvent) -> Void
    ) -> Outcome {
        var sent = false
        var refused = false
        var dropped = false
        var port = 0
        while port < outputNames.count {
            if outputs.contains(port) {
                let storeDrops = sysex?.droppedCount ?? 0
                var parser = MIDIByteParser(store: sysex, port: UInt16(port))
                parser.parse(bytes, timestamp: timestamp) { event in
                    sent = true
                    sink(event)
                }
                if parser.counters.unstoredSysEx > 0 { refused = true }
                if let sysex, sysex.droppedCount != storeDrops { dropped = true }
            }
            port += 1
        }
        if refused { return .sysexDisabled }
        if dropped { return .sysexDropped }
        return sent ? .translated : .malformed
    }

    // MARK: SysEx

    private func sysexBlob(
        _ message: OSCMessageView, outputs: OutputSet, _ timestamp: UInt64, _ sink: (MIDIEvent) -> Void
    ) -> Outcome {
        guard message.argumentCount == 1, case .blob(let bytes)? = message.arguments.first(where: { _ in true }),
            bytes.count >= 2, bytes[0] == 0xF0, bytes[bytes.count - 1] == 0xF7
        else { return .malformed }
        // Only the framing bytes may have the top bit set.
        var i = 1
        while i < bytes.count - 1 {
            if bytes[i] & 0x80 != 0 { return .malformed }
            i += 1
        }
        guard let sysex else { return .sysexDisabled }
        var sent = false
        var port = 0
        while port < outputNames.count {
            if outputs.contains(port) {
                guard let reference = sysex.store(bytes) else { return sent ? .translated : .sysexDropped }
                sink(MIDIEvent(.sysex, sysex: reference, port: UInt16(port), timestamp: timestamp))
                sent = true
            }
            port += 1
        }
        return sent ? .translated : .unknownAddress
    }

    // MARK: Ports

    /// Output indices as a bit set (the bridge has at most 256 ports).
    struct OutputSet {
        var words = InlineArray<4, UInt64>(repeating: 0)
        var any = false

        static func port(_ index: Int) -> OutputSet {
            var set = OutputSet()
            set.insert(index)
            return set
        }

        mutating func insert(_ index: Int) {
            guard index >= 0 && index < 256 else { return }
            words[index >> 6] |= 1 << UInt64(index & 63)
            any = true
        }

        func contains(_ index: Int) -> Bool {
            index >= 0 && index < 256 && words[index >> 6] & (1 << UInt64(index & 63)) != 0
        }

        /// The one index below `count` in the set, or `UInt16.max` when there are none or several.
        func single(below count: Int) -> UInt16 {
            var found = -1
            var index = 0
            while index < count {
                if contains(index) {
                    guard found < 0 else { return .max }
                    found = index
                }
                index += 1
            }
            return found < 0 ? .max : UInt16(found)
        }
    }

    private func emit(_ event: MIDIEvent, to outputs: OutputSet, _ sink: (MIDIEvent) -> Void) {
        var copy = event
        var port = 0
        while port < outputNames.count {
            if outputs.contains(port) {
                copy.port = UInt16(port)
                sink(copy)
            }
            port += 1
        }
    }

    /// The outputs a `{port}` part names: by sanitised name, or every match of an OSC pattern.
    func matchOutputs(_ part: UnsafeRawBufferPointer) -> OutputSet {
        var set = OutputSet()
        let isPattern = OSCAddressPattern.isPattern(part)
        var index = 0
        while index < outputNames.count {
            let matched = outputNames[index].withUnsafeBytes { name in
                isPattern ? OSCAddressPattern.matches(pattern: part, address: name) : Self.sanitisedEqual(part, name)
            }
            if matched { set.insert(index) }
            index += 1
        }
        return set
    }

    /// Whether `part`, sanitised as m2o sanitises port names, equals `name` (already sanitised).
    private static func sanitisedEqual(_ part: UnsafeRawBufferPointer, _ name: UnsafeRawBufferPointer) -> Bool {
        guard part.count == name.count else { return false }
        var i = 0
        while i < part.count {
            var byte = part[i]
            switch byte {
            case 0..<0x21, 0x7F, UInt8(ascii: "#"), UInt8(ascii: "*"), UInt8(ascii: ","), UInt8(ascii: "/"),
                UInt8(ascii: "?"), UInt8(ascii: "["), UInt8(ascii: "]"), UInt8(ascii: "{"), UInt8(ascii: "}"):
                byte = UInt8(ascii: "_")
            case UInt8(ascii: "A")...UInt8(ascii: "Z"):
                byte += 0x20
            default:
                break
            }
            if byte != name[i] { return false }
            i += 1
        }
        return true
    }

    // MARK: Bytes

    static func equal(_ bytes: UnsafeRawBufferPointer, _ literal: StaticString) -> Bool {
        guard bytes.count == literal.utf8CodeUnitCount else { return false }
        let text = literal.utf8Start
        var i = 0
        while i < bytes.count {
            if bytes[i] != text[i] { return false }
            i += 1
        }
        return true
    }

    /// A plain decimal number of at most 5 digits, or nil.
    private static func decimal(_ bytes: UnsafeRawBufferPointer) -> Int? {
        guard !bytes.isEmpty, bytes.count <= 5 else { return nil }
        var value = 0
        var i = 0
        while i < bytes.count {
            let byte = bytes[i]
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
            i += 1
        }
        return value
    }
}

extension OSCMappingRule {
    /// ``fields(for:)`` without building an array on the hot path: one table, made once.
    static func fields(forKindIndex kind: MIDIEventKind) -> [OSCMappingField] {
        fieldTable[Int(kind.rawValue)]
    }

    private static let fieldTable: [[OSCMappingField]] = MIDIEventKind.allCases.map { fields(for: $0) }
}

/// The parts of an address between `/`s, found once, read in place.
struct AddressParts {
    /// The most parts recorded; an address with more has `count` past this and matches nothing.
    static let capacity = 8
    private let address: UnsafeRawBufferPointer
    private var starts = InlineArray<8, Int>(repeating: 0)
    private var ends = InlineArray<8, Int>(repeating: 0)
    private(set) var count = 0

    init(_ address: UnsafeRawBufferPointer) {
        self.address = address
        guard address.first == UInt8(ascii: "/") else { return }
        var start = 1
        while true {
            var end = start
            while end < address.count, address[end] != UInt8(ascii: "/") { end += 1 }
            if count < Self.capacity {
                starts[count] = start
                ends[count] = end
            }
            count += 1
            if end >= address.count { break }
            start = end + 1
        }
    }

    /// Part `index` (below ``capacity``).
    func part(_ index: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: address[starts[index]..<ends[index]])
    }

    func equals(_ index: Int, _ literal: StaticString) -> Bool {
        OSCToMIDITranslator.equal(part(index), literal)
    }
}

/// The message's arguments as numbers where they are numbers (`i f h d`), read in place.
///
/// Nothing is decoded up front: asking for argument `n` walks the first `n` type tags to its
/// data and loads it big-endian, and an `i` argument never goes through `Double`. Only the
/// first ``capacity`` arguments can be read as numbers.
struct NumericArguments {
    static let capacity = 16
    private let bytes: UnsafeRawBufferPointer
    private let typeTags: UnsafeRawBufferPointer
    private let start: Int
    /// How many arguments the message has (numbers or not).
    let count: Int
    /// Every argument is an `i`: argument `n` is the word at `start + 4n`.
    let onlyInt32: Bool

    init(_ message: OSCMessageView) {
        bytes = message.bytes
        typeTags = message.typeTags
        start = message.argumentsOffset
        count = typeTags.count
        onlyInt32 = message.hasOnlyInt32Arguments
    }

    /// Argument `index` of an all-`i` message, which has at least `index + 1` arguments.
    @inline(__always)
    func fixedWord(_ index: Int) -> Int32 {
        Int32(bitPattern: UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: start + 4 * index, as: UInt32.self)))
    }

    /// Argument `index` of an all-`i` message, or nil past the last (or the ``capacity``).
    @inline(__always)
    private func fixedInt32(_ index: Int) -> Int32? {
        guard index >= 0 && index < count && index < Self.capacity else { return nil }
        return fixedWord(index)
    }

    /// Where argument `index`'s data starts. The view validated every length, so the data is
    /// walked without checks.
    private func offset(_ index: Int) -> Int {
        var offset = start
        var i = 0
        while i < index {
            switch typeTags[i] {
            case OSCTypeTag.int32, OSCTypeTag.float32, OSCTypeTag.midi: offset += 4
            case OSCTypeTag.int64, OSCTypeTag.double, OSCTypeTag.timeTag: offset += 8
            case OSCTypeTag.string:
                var end = offset
                while bytes[end] != 0 { end += 1 }
                offset = OSCWriter.padded(end + 1)
            case OSCTypeTag.blob:
                let size = Int(UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
                offset += 4 + OSCWriter.padded(size)
            default: break
            }
            i += 1
        }
        return offset
    }

    static func isNumeric(_ tag: UInt8) -> Bool {
        tag == OSCTypeTag.int32 || tag == OSCTypeTag.float32 || tag == OSCTypeTag.int64 || tag == OSCTypeTag.double
    }

    private func word(_ index: Int) -> UInt32 {
        UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: offset(index), as: UInt32.self))
    }

    private func doubleWord(_ index: Int) -> UInt64 {
        UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: offset(index), as: UInt64.self))
    }

    /// The type tag of argument `index` if it is one of the first ``capacity``, else 0.
    private func tag(_ index: Int) -> UInt8 {
        index >= 0 && index < count && index < Self.capacity ? typeTags[index] : 0
    }

    /// Argument `index` as a number, or nil when it is missing or not a number.
    subscript(_ index: Int) -> Double? {
        if onlyInt32 { return fixedInt32(index).map { Double($0) } }
        return switch tag(index) {
        case OSCTypeTag.int32: Double(Int32(bitPattern: word(index)))
        case OSCTypeTag.float32: Double(Float(bitPattern: word(index)))
        case OSCTypeTag.int64: Double(Int64(bitPattern: doubleWord(index)))
        case OSCTypeTag.double: Double(bitPattern: doubleWord(index))
        default: nil
        }
    }

    /// Argument `index` rounded, or nil when it is not a number or (rounded) outside `range`.
    func int(_ index: Int, in range: ClosedRange<Int>) -> Int? {
        if onlyInt32 {
            guard let value = fixedInt32(index) else { return nil }
            return range.contains(Int(value)) ? Int(value) : nil
        }
        if tag(index) == OSCTypeTag.int32 {
            let value = Int(Int32(bitPattern: word(index)))
            return range.contains(value) ? value : nil
        }
        guard let value = self[index], value.isFinite else { return nil }
        let rounded = value.rounded()
        guard rounded >= Double(range.lowerBound), rounded <= Double(range.upperBound) else { return nil }
        return Int(rounded)
    }

    /// Argument `index` as C would hold it in an `int`: rounded, and clamped to Int32 for floats.
    func int32(_ index: Int) -> Int32? {
        if onlyInt32 { return fixedInt32(index) }
        if tag(index) == OSCTypeTag.int32 { return Int32(bitPattern: word(index)) }
        guard let value = self[index], value.isFinite else { return nil }
        return Int32(max(min(value.rounded(), Double(Int32.max)), Double(Int32.min)))
    }
}

/// What an address resolved to (see ``OSCToMIDITranslator/resolve(_:)``): a plain value, so
/// ``OSCAddressCache`` can keep it in preallocated memory.
struct AddressResolution {
    enum Action: UInt8 {
        case unknownAddress
        /// Known, but wrong whatever the arguments (a channel outside 1...16).
        case malformed
        /// `kind` to `outputs`, no arguments read.
        case argumentless
        /// One argument 0...127 as data 1.
        case dataByte
        /// Two arguments 0...127 as data 1 and 2.
        case twoDataBytes
        /// One argument 0...16383 as the value.
        case songPosition
        /// One argument -8192...8191 as the value.
        case pitchBend
        /// A parameter (0...31 for cc14, else 0...16383) and a value 0...16383.
        case parameter
        /// One SysEx blob to `outputs`.
        case sysexBlob
        /// TouchOSC's `/midi ,m`.
        case touchOSCMIDI
        /// o2m's `raw` to `outputs`.
        case raw
        /// o2m's channel messages: `expected` arguments, the channel first.
        case osmidChannel
        /// `ruleCount` (1 or 2) mapping rules, tried in order.
        case rules
        /// More mapping rules match than a resolution holds: every rule is matched per message.
        case manyRules
    }

    var action: Action
    var kind: MIDIEventKind
    var channel: UInt8
    var expected: UInt8 = 0
    var ruleCount: UInt8 = 0
    var firstRule: UInt16 = 0
    var secondRule: UInt16 = 0
    var outputs: OSCToMIDITranslator.OutputSet
    /// The output when `outputs` names exactly one (of the translator's), else `UInt16.max`: the
    /// quick path's test (``OSCToMIDITranslator/quickEvent(datagram:timestamp:cache:)``).
    var singleOutput: UInt16 = .max
    var firstCaptures = InlineArray<8, Int32>(repeating: 0)
    var secondCaptures = InlineArray<8, Int32>(repeating: 0)

    init(
        _ action: Action = .unknownAddress, kind: MIDIEventKind = .clock, channel: UInt8 = 0,
        outputs: OSCToMIDITranslator.OutputSet = .init()
    ) {
        self.action = action
        self.kind = kind
        self.channel = channel
        self.outputs = outputs
    }

    /// Records a matching rule; false when two are recorded already.
    mutating func addRule(_ index: Int, _ captures: InlineArray<8, Int32>) -> Bool {
        guard index <= Int(UInt16.max) else { return false }
        switch ruleCount {
        case 0:
            firstRule = UInt16(truncatingIfNeeded: index)
            firstCaptures = captures
        case 1:
            secondRule = UInt16(truncatingIfNeeded: index)
            secondCaptures = captures
        default:
            return false
        }
        ruleCount += 1
        return true
    }
}
