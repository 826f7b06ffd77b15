import MIDI
import OSCMapping

/// Where an int argument's value is, for one kind of event: a byte of the event for the common
/// fields, else ``OSCEventFormatter/int`` works it out.
enum OSCIntSource: UInt8 {
    case data1, data2, channel, channel0, port, other

    package init(_ field: OSCArgumentField, of kind: MIDIEventKind) {
        switch field {
        case .note, .program: self = .data1
        case .velocity: self = .data2
        case .pressure: self = kind == .polyPressure ? .data2 : .data1
        case .controller: self = kind == .controlChange ? .data1 : .other
        case .value:
            switch kind {
            case .pitchBend, .controlChange14, .rpn, .nrpn, .songPosition: self = .other
            case .noteOn, .noteOff, .polyPressure, .controlChange: self = .data2
            default: self = .data1
            }
        case .channel: self = .channel
        case .channel0: self = .channel0
        case .port: self = .port
        case .bend, .status, .data1, .data2, .dataBytes: self = .other
        }
    }

    /// The value in `event`, for every source but ``other``.
    @inline(__always)
    func value(in event: MIDIEvent) -> Int32 {
        switch self {
        case .data1: Int32(event.data1 & 0x7F)
        case .data2: Int32(event.data2 & 0x7F)
        case .channel: Int32(event.channel & 0x0F) &+ 1
        case .channel0: Int32(event.channel & 0x0F)
        case .port: Int32(event.port)
        case .other: 0  // not a byte of the event: OSCEventFormatter.int works it out
        }
    }
}

extension OSCEventFormatter {
    /// The value of `field` in `event` as an `i` argument.
    package static func int(_ field: OSCArgumentField, _ event: MIDIEvent) -> Int32 {
        let source = OSCIntSource(field, of: event.kind)
        if source != .other { return source.value(in: event) }
        return switch field {
        case .controller: Int32(event.parameter)
        case .value: Int32(event.wireValue14)
        case .bend: event.clampedBend
        case .status: Int32(event.statusByte)
        case .data1: Int32(event.wireData1)
        case .data2: Int32(event.wireData2)
        // Written byte by byte by the caller; the rest are always a byte of the event.
        case .dataBytes, .note, .velocity, .pressure, .program, .channel, .channel0, .port: 0
        }
    }

    /// The value of `field` in `event` as an `f` argument: values normalised, identifiers whole.
    package static func float(_ field: OSCArgumentField, _ event: MIDIEvent) -> Float {
        switch field {
        case .velocity, .pressure, .data1, .data2: Float(int(field, event)) / 127
        case .value:
            switch event.kind {
            case .pitchBend, .controlChange14, .rpn, .nrpn, .songPosition: Float(int(field, event)) / 16383
            default: Float(int(field, event)) / 127
            }
        case .bend:
            // Asymmetric so that both ends are exactly ±1 and the centre exactly 0.
            event.value >= 0 ? Float(event.clampedBend) / 8191 : Float(event.clampedBend) / 8192
        case .note, .program, .controller, .channel, .channel0, .port, .status, .dataBytes:
            Float(int(field, event))
        }
    }
}
