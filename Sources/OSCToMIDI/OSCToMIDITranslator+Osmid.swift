import MIDI
import OSC
import OSCMapping

/// What osmid's `o2m` accepts, `/{port}/note_on ,iii` (channel, note, velocity) and so on, with
/// o2m's value handling (checked against Debian's o2m 0.8.0).
extension OSCToMIDITranslator {
    package func resolveOsmid(_ address: AddressParts) -> AddressResolution {
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
    package func translateOsmidChannel(
        _ template: MIDIEvent, _ expected: UInt8, _ outputs: OutputSet, _ arguments: NumericArguments,
        _ sink: (MIDIEvent) -> Void
    ) -> Outcome {
        var event = template
        guard arguments.count == Int(expected) else { return .malformed }
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
    package func sendOsmidChannel(
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
    package static func fillOsmid(_ event: inout MIDIEvent, first: Int32, last: Int32) {
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
    package func raw(_ message: OSCMessageView, outputs: OutputSet, _ timestamp: UInt64, _ sink: (MIDIEvent) -> Void)
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
}
