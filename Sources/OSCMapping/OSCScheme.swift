import MIDI

/// A value of a MIDI event that a scheme sends as an OSC argument.
///
/// Under ``OSCArgumentStyle/float`` the identifiers (note, controller, program, channel, port,
/// status) stay whole numbers and the values are normalised, as documented per case.
public enum OSCArgumentField: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// The note number (notes, poly pressure).
    case note
    /// The velocity of a note (float: /127).
    case velocity
    /// Poly or channel pressure (float: /127).
    case pressure
    /// A control change's controller; the parameter number of a 14-bit controller, RPN or NRPN.
    case controller
    /// The event's value as MIDI carries it: a 7-bit data byte, or 14 bits unsigned (pitch bend
    /// 0...16383 with 8192 at centre). Float: /127, or /16383 for 14-bit values.
    case value
    /// A program change's program.
    case program
    /// Pitch bend, -8192...8191 with 0 at centre (float: -1...1, exactly ±1 at the ends).
    case bend
    /// The channel, 1...16.
    case channel
    /// The channel, 0...15.
    case channel0
    /// The input port's index.
    case port
    /// The status byte (`0x90 | channel` for a note on).
    case status
    /// The first data byte on the wire (pitch bend and song position: the LSB). Float: /127.
    case data1
    /// The second data byte on the wire (pitch bend and song position: the MSB). Float: /127.
    case data2
    /// Every data byte of the message, one argument each: for SysEx the bytes between `F0` and
    /// `F7`, for the other kinds the bytes after the status byte. Float: /127.
    case dataBytes = "data_bytes"

    public var description: String { rawValue }

    /// Whether events of `kind` have this value.
    func isAvailable(for kind: MIDIEventKind) -> Bool {
        switch self {
        case .note: kind == .noteOn || kind == .noteOff || kind == .polyPressure
        case .velocity: kind == .noteOn || kind == .noteOff
        case .pressure: kind == .polyPressure || kind == .channelPressure
        case .controller: OSCAddressPlaceholder.controller.isAvailable(for: kind)
        case .value:
            kind.isChannelMessage || kind == .mtcQuarterFrame || kind == .songPosition || kind == .songSelect
        case .program: kind == .programChange
        case .bend: kind == .pitchBend
        case .channel, .channel0: kind.isChannelMessage
        case .port, .status: true
        case .data1: kind.dataByteCount >= 1
        case .data2: kind.dataByteCount >= 2
        case .dataBytes: kind != .controlChange14 && kind != .rpn && kind != .nrpn
        }
    }
}

/// How a scheme entry encodes its arguments.
public enum OSCArgumentStyle: String, Sendable, Hashable, CaseIterable {
    /// Each field as an `i`, with its raw MIDI value.
    case int
    /// Each field as an `f`: values normalised, identifiers as whole numbers (see ``OSCArgumentField``).
    case float
    /// One `m` argument, in OSC 1.0's order: port, status, data 1, data 2 (missing bytes 0).
    /// The fields are ignored; kinds that take more than one MIDI message (SysEx, 14-bit, RPN,
    /// NRPN) cannot be sent this way.
    case midi
    /// One `m` argument in the order TouchOSC and its bridge use on the wire: port, data 2,
    /// data 1, status (see docs/OSC.md). Otherwise as ``midi``.
    case touchOSCMIDI = "touchosc_midi"
    /// One `b` argument holding the MIDI bytes (SysEx: `F0` ... `F7` from the ``SysExStore``).
    /// The fields are ignored.
    case blob
}

/// How one kind of event is sent: the address, the arguments and their encoding.
package struct OSCSchemeEntry: Hashable, Sendable {
    package var address: OSCAddressTemplate
    package var arguments: [OSCArgumentField]
    package var style: OSCArgumentStyle

    package init(address: OSCAddressTemplate, arguments: [OSCArgumentField] = [], style: OSCArgumentStyle = .int) {
        self.address = address
        self.arguments = arguments
        self.style = style
    }

    /// Parses `address` as an ``OSCAddressTemplate``.
    package init(_ address: String, _ arguments: [OSCArgumentField] = [], _ style: OSCArgumentStyle = .int)
        throws(OSCTemplateError)
    {
        self.init(address: try OSCAddressTemplate(address), arguments: arguments, style: style)
    }
}

/// Why a scheme could not be built.
package enum OSCSchemeError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A key that is not a ``MIDIEventKind/description``.
    case unknownEventType(String)
    /// An entry's address template does not parse.
    case invalidTemplate(eventType: String, OSCTemplateError)
    /// The template names a placeholder that events of this kind have no value for.
    case placeholderNotAvailable(eventType: String, OSCAddressPlaceholder)
    /// An argument field that events of this kind have no value for.
    case argumentNotAvailable(eventType: String, OSCArgumentField)

    package var description: String {
        switch self {
        case .unknownEventType(let name):
            "unknown event type '\(name)'; known: "
                + MIDIEventKind.allCases.map(\.description).joined(separator: ", ")
        case .invalidTemplate(let eventType, let error):
            "\(eventType): \(error)"
        case .placeholderNotAvailable(let eventType, let placeholder):
            "\(eventType): placeholder '\(placeholder)' has no value for \(eventType) events"
        case .argumentNotAvailable(let eventType, let field):
            "\(eventType): argument '\(field)' has no value for \(eventType) events"
        }
    }
}

/// Which events go out as OSC, and how: one optional ``OSCSchemeEntry`` per ``MIDIEventKind``.
package struct OSCScheme: Hashable, Sendable {
    /// The entries by kind; a missing kind is not sent.
    private(set) var entries: [MIDIEventKind: OSCSchemeEntry]
    /// How `{port}` renders input port names.
    package var portNameStyle: OSCPortNameStyle

    /// A scheme from checked entries: every placeholder and field must exist for its kind.
    init(
        entries: [MIDIEventKind: OSCSchemeEntry], portNameStyle: OSCPortNameStyle = .osc
    ) throws(OSCSchemeError) {
        for (kind, entry) in entries { try Self.check(entry, for: kind) }
        self.entries = entries
        self.portNameStyle = portNameStyle
    }

    /// A scheme from configuration: keys are ``MIDIEventKind/description`` names (`note_on`,
    /// `control_change`, ...); kinds not listed are not sent.
    package init(
        _ entries: [String: (address: String, arguments: [OSCArgumentField], style: OSCArgumentStyle)],
        portNameStyle: OSCPortNameStyle = .osc
    ) throws(OSCSchemeError) {
        self = try OSCScheme(entries: [:], portNameStyle: portNameStyle).overriding(entries)
    }

    /// The entry for `kind`, or `nil` when the scheme does not send it.
    package subscript(kind: MIDIEventKind) -> OSCSchemeEntry? { entries[kind] }

    /// This scheme with some kinds replaced (`nil`: that kind is no longer sent). Keys are
    /// ``MIDIEventKind/description`` names.
    package func overriding(
        _ overrides: [String: (address: String, arguments: [OSCArgumentField], style: OSCArgumentStyle)?]
    ) throws(OSCSchemeError) -> OSCScheme {
        var scheme = self
        // Sorted so that, of several bad entries, the same one is always reported.
        for name in overrides.keys.sorted() {
            guard let kind = MIDIEventKind.allCases.first(where: { $0.description == name }) else {
                throw .unknownEventType(name)
            }
            guard let override = overrides[name], let (address, arguments, style) = override else {
                scheme.entries[kind] = nil
                continue
            }
            let entry: OSCSchemeEntry
            do {
                entry = try OSCSchemeEntry(address, arguments, style)
            } catch {
                throw .invalidTemplate(eventType: name, error)
            }
            try Self.check(entry, for: kind)
            scheme.entries[kind] = entry
        }
        return scheme
    }

    private static func check(_ entry: OSCSchemeEntry, for kind: MIDIEventKind) throws(OSCSchemeError) {
        for placeholder in entry.address.placeholders where !placeholder.isAvailable(for: kind) {
            throw .placeholderNotAvailable(eventType: kind.description, placeholder)
        }
        guard entry.style == .int || entry.style == .float else { return }
        for field in entry.arguments where !field.isAvailable(for: kind) {
            throw .argumentNotAvailable(eventType: kind.description, field)
        }
    }
}

// MARK: Built-in schemes

extension OSCScheme {
    /// aseqosc's own scheme, which it also accepts back; see docs/OSC.md.
    package static let `default`: OSCScheme = {
        let channel = "/midi/{port}/{channel}/"
        let system = "/midi/{port}/"
        return builtIn([
            .noteOn: (channel + "note_on", [.note, .velocity], .int),
            .noteOff: (channel + "note_off", [.note, .velocity], .int),
            .polyPressure: (channel + "poly_pressure", [.note, .pressure], .int),
            .controlChange: (channel + "cc", [.controller, .value], .int),
            .programChange: (channel + "program", [.program], .int),
            .channelPressure: (channel + "pressure", [.pressure], .int),
            .pitchBend: (channel + "pitch_bend", [.bend], .int),
            .controlChange14: (channel + "cc14", [.controller, .value], .int),
            .rpn: (channel + "rpn", [.controller, .value], .int),
            .nrpn: (channel + "nrpn", [.controller, .value], .int),
            .mtcQuarterFrame: (system + "mtc_quarter_frame", [.value], .int),
            .songPosition: (system + "song_position", [.value], .int),
            .songSelect: (system + "song_select", [.value], .int),
            .tuneRequest: (system + "tune_request", [], .int),
            .clock: (system + "clock", [], .int),
            .start: (system + "start", [], .int),
            .continue: (system + "continue", [], .int),
            .stop: (system + "stop", [], .int),
            .activeSensing: (system + "active_sensing", [], .int),
            .reset: (system + "reset", [], .int),
            .sysex: (system + "sysex", [], .blob),
        ])
    }()

    /// Byte for byte what osmid's `m2o` 0.8.0 sends (captured from Debian's `m2o`; see docs/OSC.md).
    ///
    /// `m2o` sees raw MIDI, so it has no 14-bit, RPN or NRPN messages: those kinds are not sent,
    /// and a destination using this scheme should get the control changes unassembled.
    package static let osmid: OSCScheme = {
        let channel = "/midi/{port}/{id}/{channel}/"
        let system = "/midi/{port}/{id}/"
        return builtIn(
            [
                .noteOn: (channel + "note_on", [.data1, .data2], .int),
                .noteOff: (channel + "note_off", [.data1, .data2], .int),
                .polyPressure: (channel + "polyphonic_key_pressure", [.data1, .data2], .int),
                .controlChange: (channel + "control_change", [.data1, .data2], .int),
                .programChange: (channel + "program_change", [.data1], .int),
                .channelPressure: (channel + "channel_pressure", [.data1], .int),
                .pitchBend: (channel + "pitch_bend", [.value], .int),
                .mtcQuarterFrame: (system + "MTC", [.data1], .int),
                .songPosition: (system + "song_position", [.data1, .data2], .int),
                .songSelect: (system + "song_select", [.data1], .int),
                .tuneRequest: (system + "tune_request", [], .int),
                .clock: (system + "clock", [], .int),
                .start: (system + "start", [], .int),
                .continue: (system + "continue", [], .int),
                .stop: (system + "stop", [], .int),
                .activeSensing: (system + "active_sensing", [], .int),
                .reset: (system + "unknown_message", [], .int),
                .sysex: (system + "sysex", [.dataBytes], .int),
            ], portNameStyle: .osmid)
    }()

    /// TouchOSC Bridge's protocol: every one-message event as `/midi ,m` in TouchOSC's byte order;
    /// SysEx as `/sysex ,b` (an aseqosc extension: the bridge protocol has none). See docs/OSC.md.
    package static let touchOSC: OSCScheme = {
        var entries: [MIDIEventKind: (String, [OSCArgumentField], OSCArgumentStyle)] = [:]
        for kind in MIDIEventKind.allCases where kind != .controlChange14 && kind != .rpn && kind != .nrpn {
            entries[kind] = ("/midi", [], .touchOSCMIDI)
        }
        entries[.sysex] = ("/sysex", [], .blob)
        return builtIn(entries)
    }()

    /// A scheme that sends nothing: for a destination that sends only what its mapping rules match.
    package static let none: OSCScheme = builtIn([:])

    /// The built-in schemes by the name a configuration uses.
    package static var builtIns: [String: OSCScheme] {
        Dictionary(uniqueKeysWithValues: builtInNames.map { ($0, builtIn(named: $0)!) })
    }

    /// The names of the built-in schemes.
    package static let builtInNames = ["default", "osmid", "touchosc"]

    /// The built-in scheme a configuration calls `name`. Each is made the first time it is
    /// asked for, so that a config pays only for those it names.
    package static func builtIn(named name: String) -> OSCScheme? {
        switch name {
        case "default": .default
        case "osmid": .osmid
        case "touchosc": .touchOSC
        default: nil
        }
    }

    private static func builtIn(
        _ table: [MIDIEventKind: (String, [OSCArgumentField], OSCArgumentStyle)],
        portNameStyle: OSCPortNameStyle = .osc
    ) -> OSCScheme {
        do {
            var entries: [MIDIEventKind: OSCSchemeEntry] = [:]
            for (kind, (address, arguments, style)) in table {
                entries[kind] = try OSCSchemeEntry(address, arguments, style)
            }
            return try OSCScheme(entries: entries, portNameStyle: portNameStyle)
        } catch {
            fatalError("built-in OSC scheme is invalid: \(error)")
        }
    }
}
