import MIDI

/// A value an ``OSCAddressTemplate`` can put in an address.
package enum OSCAddressPlaceholder: String, Sendable, CaseIterable, CustomStringConvertible {
    /// The input port's name, sanitised for OSC (see ``OSCPortNameStyle``).
    case port
    /// The input port's index in the bridge's list of ports.
    case id
    /// The channel, 1...16.
    case channel
    /// The channel, 0...15.
    case channel0
    /// The event kind's name (``MIDIEventKind/description``: `note_on`, `control_change`, ...).
    case type
    /// The note number of a note or poly pressure event.
    case note
    /// The controller of a control change; the parameter number of a 14-bit controller, RPN or NRPN.
    case controller

    /// `{name}`, as written in a template.
    package var description: String { "{\(rawValue)}" }

    /// Whether events of `kind` have a value for this placeholder.
    func isAvailable(for kind: MIDIEventKind) -> Bool {
        switch self {
        case .port, .id, .type: true
        case .channel, .channel0: kind.isChannelMessage
        case .note: kind == .noteOn || kind == .noteOff || kind == .polyPressure
        case .controller: kind == .controlChange || kind == .controlChange14 || kind == .rpn || kind == .nrpn
        }
    }
}

/// Why an address template could not be parsed.
package enum OSCTemplateError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The template is empty or does not start with `/`.
    case mustStartWithSlash(template: String)
    /// A `{` without its `}`; `offset` is the `{`'s position in UTF-8 bytes.
    case unclosedBrace(template: String, offset: Int)
    /// A `}` without a `{` before it.
    case unexpectedClosingBrace(template: String, offset: Int)
    /// A `{name}` that is not an ``OSCAddressPlaceholder``.
    case unknownPlaceholder(template: String, name: String)
    /// A character OSC reserves for patterns (`#*,?[]`), a space or a control character.
    case invalidCharacter(template: String, character: Character)

    package var description: String {
        switch self {
        case .mustStartWithSlash(let template):
            "address template '\(template)' must start with '/'"
        case .unclosedBrace(let template, let offset):
            "address template '\(template)': '{' at offset \(offset) is never closed"
        case .unexpectedClosingBrace(let template, let offset):
            "address template '\(template)': '}' at offset \(offset) has no matching '{'"
        case .unknownPlaceholder(let template, let name):
            "address template '\(template)': unknown placeholder '{\(name)}'; known: "
                + OSCAddressPlaceholder.allCases.map(\.description).joined(separator: ", ")
        case .invalidCharacter(let template, let character):
            "address template '\(template)': \(Self.quoted(character)) is not allowed in an OSC address"
        }
    }

    private static func quoted(_ character: Character) -> String {
        if character == " " { return "a space" }
        if let scalar = character.unicodeScalars.first, scalar.value < 0x20 || scalar.value == 0x7F {
            return "control character U+" + String(scalar.value, radix: 16, uppercase: true)
        }
        return "'\(character)'"
    }
}

/// An OSC address with placeholders, such as `/midi/{port}/{channel}/note_on`, parsed once so that
/// rendering it for an event only copies bytes and writes digits.
package struct OSCAddressTemplate: Hashable, Sendable, CustomStringConvertible {
    /// One piece of the address: text copied as is, or a placeholder filled in per event.
    package enum Segment: Hashable, Sendable {
        case literal([UInt8])
        case placeholder(OSCAddressPlaceholder)
    }

    /// The text the template was parsed from.
    package let description: String
    /// The literal text and placeholders, in order.
    package let segments: [Segment]

    /// Parses `text`; throws with the template and the offending part named.
    package init(_ text: String) throws(OSCTemplateError) {
        let bytes = Array(text.utf8)
        guard bytes.first == UInt8(ascii: "/") else { throw .mustStartWithSlash(template: text) }
        var segments: [Segment] = []
        var literal: [UInt8] = []
        var i = 0
        while i < bytes.count {
            let byte = bytes[i]
            if byte == UInt8(ascii: "{") {
                guard let close = bytes[(i + 1)...].firstIndex(of: UInt8(ascii: "}")) else {
                    throw .unclosedBrace(template: text, offset: i)
                }
                let name = String(decoding: bytes[(i + 1)..<close], as: UTF8.self)
                guard let placeholder = OSCAddressPlaceholder(rawValue: name) else {
                    throw .unknownPlaceholder(template: text, name: name)
                }
                if !literal.isEmpty { segments.append(.literal(literal)) }
                literal = []
                segments.append(.placeholder(placeholder))
                i = close + 1
                continue
            }
            if byte == UInt8(ascii: "}") { throw .unexpectedClosingBrace(template: text, offset: i) }
            if Self.isReserved(byte) {
                throw .invalidCharacter(template: text, character: Character(Unicode.Scalar(byte)))
            }
            literal.append(byte)
            i += 1
        }
        if !literal.isEmpty { segments.append(.literal(literal)) }
        self.description = text
        self.segments = segments
    }

    /// The placeholders the template uses, in order.
    package var placeholders: [OSCAddressPlaceholder] {
        segments.compactMap { if case .placeholder(let placeholder) = $0 { placeholder } else { nil } }
    }

    /// Bytes a template literal may not contain: OSC's pattern characters, space and controls.
    static func isReserved(_ byte: UInt8) -> Bool {
        switch byte {
        case 0..<0x21, 0x7F: true
        case UInt8(ascii: "#"), UInt8(ascii: "*"), UInt8(ascii: ","), UInt8(ascii: "?"),
            UInt8(ascii: "["), UInt8(ascii: "]"):
            true
        default: false
        }
    }
}
