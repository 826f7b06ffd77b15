import MIDI
import Storage

/// Why a mapping rule could not be built.
package enum OSCMappingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The address pattern does not start with `/`.
    case mustStartWithSlash(String)
    /// A `{` without `}`, an empty or non-alphabetic capture name, or two captures in one part.
    case badCapture(String, reason: String)
    /// A character OSC reserves (`#,?[]{}` outside a capture, space, control characters).
    case invalidCharacter(String, Character)
    /// A capture name used twice.
    case duplicateCapture(String, name: String)

    package var description: String {
        switch self {
        case .mustStartWithSlash(let text):
            "address '\(text)' must start with '/'"
        case .badCapture(let text, let reason):
            "address '\(text)': \(reason)"
        case .invalidCharacter(let text, let character):
            "address '\(text)': '\(character)' is not allowed (use {name} to capture a number, * for any one part)"
        case .duplicateCapture(let text, let name):
            "address '\(text)': the capture {\(name)} is used twice"
        }
    }
}

/// The address side of a mapping rule, such as `/1/fader{n}` or `/mixer/*/level`: literal parts,
/// `*` for any one part, and at most one `{name}` per part that captures a whole number
/// (`-?[0-9]+`) between the literal text before and after it.
package struct OSCMappingAddress: Hashable, Sendable, CustomStringConvertible {
    /// One part of the address between `/`s.
    package enum Part: Hashable, Sendable {
        /// Exactly these bytes.
        case literal([UInt8])
        /// Any one part.
        case any
        /// `prefix`, a whole number stored as capture `index`, then `suffix`.
        case capture(prefix: [UInt8], index: Int, suffix: [UInt8])
    }

    /// The most captures one address may have.
    static let maximumCaptures = 8

    /// The text the address was parsed from.
    package let description: String
    package let parts: [Part]
    /// The capture names, in order; capture `i` is `captureNames[i]`.
    package let captureNames: [String]

    /// Parses `text`, throwing with the address and the problem named.
    package init(_ text: String) throws(OSCMappingError) {
        guard text.hasPrefix("/") else { throw .mustStartWithSlash(text) }
        var parts: [Part] = []
        var names: [String] = []
        for piece in text.utf8.dropFirst().split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false) {
            let bytes = Array(piece)
            if bytes == [UInt8(ascii: "*")] {
                parts.append(.any)
                continue
            }
            guard let open = bytes.firstIndex(of: UInt8(ascii: "{")) else {
                try Self.checkLiteral(bytes, text)
                parts.append(.literal(bytes))
                continue
            }
            guard let close = bytes[open...].firstIndex(of: UInt8(ascii: "}")) else {
                throw .badCapture(text, reason: "'{' is never closed")
            }
            let name = String(decoding: bytes[(open + 1)..<close], as: UTF8.self)
            guard !name.isEmpty, name.utf8.allSatisfy({ Self.isNameByte($0) }), !name.utf8.first!.isDigit else {
                throw .badCapture(
                    text, reason: "'{\(name)}' is not a capture name (letters, digits and _, not first a digit)")
            }
            guard !names.contains(name) else { throw .duplicateCapture(text, name: name) }
            let prefix = Array(bytes[..<open])
            let suffix = Array(bytes[(close + 1)...])
            if suffix.contains(UInt8(ascii: "{")) {
                throw .badCapture(text, reason: "one capture per part of the address")
            }
            if let first = suffix.first, first.isDigit {
                throw .badCapture(text, reason: "a capture cannot be followed by a digit")
            }
            try Self.checkLiteral(prefix, text)
            try Self.checkLiteral(suffix, text)
            guard names.count < Self.maximumCaptures else {
                throw .badCapture(text, reason: "at most \(Self.maximumCaptures) captures")
            }
            parts.append(.capture(prefix: prefix, index: names.count, suffix: suffix))
            names.append(name)
        }
        description = text
        self.parts = parts
        captureNames = names
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        byte.isDigit || byte == UInt8(ascii: "_")
            || (byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "z"))
    }

    private static func checkLiteral(_ bytes: [UInt8], _ text: String) throws(OSCMappingError) {
        for byte in bytes {
            switch byte {
            case 0..<0x21, 0x7F, UInt8(ascii: "#"), UInt8(ascii: "*"), UInt8(ascii: ","), UInt8(ascii: "?"),
                UInt8(ascii: "["), UInt8(ascii: "]"), UInt8(ascii: "{"), UInt8(ascii: "}"):
                throw .invalidCharacter(text, Character(Unicode.Scalar(byte)))
            default: continue
            }
        }
    }

    /// Whether `address` matches, writing the captured numbers into `captures`. Allocation-free.
    func match(_ address: UnsafeRawBufferPointer, captures: inout TupleArray8<Int32>) -> Bool {
        guard address.first == UInt8(ascii: "/") else { return false }
        var start = 1
        var index = 0
        while index < parts.count {
            guard start <= address.count else { return false }
            var end = start
            while end < address.count, address[end] != UInt8(ascii: "/") { end += 1 }
            let part = UnsafeRawBufferPointer(rebasing: address[start..<end])
            switch parts[index] {
            case .any:
                break
            case .literal(let bytes):
                guard Self.equal(part, bytes) else { return false }
            case .capture(let prefix, let captureIndex, let suffix):
                guard let number = Self.capture(part, prefix, suffix) else { return false }
                captures[captureIndex] = number
            }
            start = end + 1
            index += 1
        }
        // Every part used, and nothing after the last one.
        return start == address.count + 1
    }

    private static func equal(_ part: UnsafeRawBufferPointer, _ bytes: [UInt8]) -> Bool {
        guard part.count == bytes.count else { return false }
        var i = 0
        while i < bytes.count {
            if part[i] != bytes[i] { return false }
            i += 1
        }
        return true
    }

    /// The number between `prefix` and `suffix`, or nil when the part is not that shape.
    private static func capture(_ part: UnsafeRawBufferPointer, _ prefix: [UInt8], _ suffix: [UInt8]) -> Int32? {
        prefix.withUnsafeBytes { prefix in
            suffix.withUnsafeBytes { suffix in capturedNumber(in: part, prefix: prefix, suffix: suffix) }
        }
    }

    /// How a `{name}` capture reads one part of an address: the whole number (an optional `-`,
    /// then 1-9 digits) between `prefix` and `suffix`, or nil when `part` is not that shape.
    /// The one reading, for a rule's ``match(_:captures:)`` and for the index over many rules.
    package static func capturedNumber(
        in part: UnsafeRawBufferPointer, prefix: UnsafeRawBufferPointer, suffix: UnsafeRawBufferPointer
    ) -> Int32? {
        guard part.count > prefix.count + suffix.count else { return nil }
        var i = 0
        while i < prefix.count {
            if part[i] != prefix[i] { return nil }
            i += 1
        }
        let digitsEnd = part.count - suffix.count
        var j = 0
        while j < suffix.count {
            if part[digitsEnd + j] != suffix[j] { return nil }
            j += 1
        }
        var negative = false
        if part[i] == UInt8(ascii: "-") {
            negative = true
            i += 1
        }
        guard i < digitsEnd, digitsEnd - i <= 9 else { return nil }
        var value: Int32 = 0
        while i < digitsEnd {
            let byte = part[i]
            guard byte.isDigit else { return nil }
            value = value * 10 + Int32(byte - UInt8(ascii: "0"))
            i += 1
        }
        return negative ? -value : value
    }
}

extension UInt8 {
    fileprivate var isDigit: Bool { self >= UInt8(ascii: "0") && self <= UInt8(ascii: "9") }
}

/// A linear map from one range onto another; input outside its range is clamped first, so the
/// output stays in its range. Either range may run downwards (`[1, 0]` inverts).
package struct OSCLinearScale: Hashable, Sendable {
    package var inputFrom: Double
    package var inputTo: Double
    package var outputFrom: Double
    package var outputTo: Double

    /// `input` must not be empty (its two ends differ).
    package init(input: (Double, Double), output: (Double, Double)) {
        precondition(input.0 != input.1, "OSCLinearScale: the input range is empty")
        (inputFrom, inputTo) = input
        (outputFrom, outputTo) = output
    }

    @inline(__always)
    package func apply(_ value: Double) -> Double {
        let low = min(inputFrom, inputTo)
        let high = max(inputFrom, inputTo)
        let clamped = min(max(value, low), high)
        return outputFrom + (clamped - inputFrom) / (inputTo - inputFrom) * (outputTo - outputFrom)
    }

    /// The way back, for sending a MIDI value as OSC: `value` clamped into the output range,
    /// then mapped onto the input range. An output range with equal ends gives the input's start.
    @inline(__always)
    package func invert(_ value: Double) -> Double {
        guard outputFrom != outputTo else { return inputFrom }
        let low = min(outputFrom, outputTo)
        let high = max(outputFrom, outputTo)
        let clamped = min(max(value, low), high)
        return inputFrom + (clamped - outputFrom) / (outputTo - outputFrom) * (inputTo - inputFrom)
    }
}

/// Where a mapped value comes from, and how it is scaled.
package struct OSCMappingValue: Hashable, Sendable {
    package enum Source: Hashable, Sendable {
        case constant(Double)
        /// The message's argument at this index (a number: `i`, `f`, `h` or `d`).
        case argument(Int)
        /// The address capture at this index.
        case capture(Int)
    }

    package var source: Source
    package var scale: OSCLinearScale?

    package init(_ source: Source, scale: OSCLinearScale? = nil) {
        self.source = source
        self.scale = scale
    }
    /// What `field` becomes when this value reads `raw` (the constant, capture or argument):
    /// scaled, rounded (halves away from zero) and clamped into the field's range; nil when the
    /// scaled value is not a finite number. Both directions call this: the translator to set the
    /// field, the way back to know which constant a rule's event has.
    @inline(__always)
    package func result(_ raw: Double, for field: OSCMappingField) -> Int? {
        let scaled = scale.map { $0.apply(raw) } ?? raw
        guard scaled.isFinite else { return nil }
        let rounded = scaled.rounded()
        if rounded < Double(field.range.lowerBound) { return field.range.lowerBound }
        if rounded > Double(field.range.upperBound) { return field.range.upperBound }
        return Int(rounded)
    }
}

/// Which MIDI value a mapped field sets.
package enum OSCMappingTarget: Hashable, Sendable {
    /// The channel, 1-16 as written.
    case channel
    case data1
    case data2
    /// The 14-bit (or signed pitch bend) value.
    case value
    /// The 14-bit parameter or controller number.
    case parameter
}

/// One field a rule can set for its event type, as a config names it.
package struct OSCMappingField: Hashable, Sendable {
    package var name: String
    package var target: OSCMappingTarget
    /// Results are rounded, then clamped into this range.
    package var range: ClosedRange<Int>
    package var isRequired: Bool

    /// What the field is when a rule does not set it: channel 1, otherwise the range's start.
    package var unsetResult: Int { target == .channel ? 1 : range.lowerBound }
}

/// Where a rule's events go.
package enum OSCMappingOutput: Hashable, Sendable {
    /// One output port, by index.
    case port(Int)
    /// Every output port.
    case all
}

/// A user's mapping from an OSC message to a MIDI event (OSC2MIDI-style): an address with
/// captures, the argument types, and per MIDI field a constant, an argument or a capture, each
/// optionally scaled linearly and always clamped to the field's range.
package struct OSCMappingRule: Hashable, Sendable {
    package var address: OSCMappingAddress
    /// The type tags the message must carry (numbers `i f h d` stand for each other); nil
    /// accepts any arguments as long as the ones used are numbers.
    package var argumentTypes: [UInt8]?
    package var output: OSCMappingOutput
    package var kind: MIDIEventKind
    /// Fields in ``fields(for:)`` order: `fields[i]` sets `OSCMappingRule.fields(for: kind)[i]`
    /// (nil: not set, the field's default).
    package var values: [OSCMappingValue?]

    package init(
        address: OSCMappingAddress, argumentTypes: [UInt8]?, output: OSCMappingOutput, kind: MIDIEventKind,
        values: [OSCMappingValue?]
    ) {
        precondition(values.count == Self.fields(for: kind).count, "OSCMappingRule: one value per field")
        self.address = address
        self.argumentTypes = argumentTypes
        self.output = output
        self.kind = kind
        self.values = values
    }

    /// The event types a rule can send (SysEx has its own messages).
    package static var kinds: [MIDIEventKind] { MIDIEventKind.allCases.filter { $0 != .sysex } }

    /// The fields a rule for `kind` sets, in order.
    package static func fields(for kind: MIDIEventKind) -> [OSCMappingField] {
        let channel = OSCMappingField(name: "channel", target: .channel, range: 1...16, isRequired: false)
        func field(_ name: String, _ target: OSCMappingTarget, _ range: ClosedRange<Int>) -> OSCMappingField {
            OSCMappingField(name: name, target: target, range: range, isRequired: true)
        }
        switch kind {
        case .noteOn: return [channel, field("note", .data1, 0...127), field("velocity", .data2, 0...127)]
        case .noteOff:
            return [
                channel, field("note", .data1, 0...127),
                OSCMappingField(name: "velocity", target: .data2, range: 0...127, isRequired: false),
            ]
        case .polyPressure: return [channel, field("note", .data1, 0...127), field("value", .data2, 0...127)]
        case .controlChange: return [channel, field("controller", .data1, 0...127), field("value", .data2, 0...127)]
        case .programChange: return [channel, field("program", .data1, 0...127)]
        case .channelPressure: return [channel, field("value", .data1, 0...127)]
        case .pitchBend: return [channel, field("value", .value, -8192...8191)]
        case .controlChange14:
            return [channel, field("controller", .parameter, 0...31), field("value", .value, 0...16383)]
        case .rpn, .nrpn:
            return [channel, field("parameter", .parameter, 0...16383), field("value", .value, 0...16383)]
        case .mtcQuarterFrame, .songSelect: return [field("value", .data1, 0...127)]
        case .songPosition: return [field("value", .value, 0...16383)]
        case .tuneRequest, .clock, .start, .continue, .stop, .activeSensing, .reset, .sysex: return []
        }
    }
}
