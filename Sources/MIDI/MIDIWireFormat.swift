/// MIDI 1.0's status bytes, data bytes and message lengths: what ``MIDIByteEncoder`` writes,
/// what OSC's `m` arguments and `status`/`data1`/`data2` fields carry, and how long a message
/// read from the network is.
extension MIDIEvent {
    /// The status byte of the event's first message on the wire: `0x90 | channel` for a note-on,
    /// `0xB0 | channel` for the assembled kinds (sent as control changes), `0xF0` for SysEx.
    @inlinable public var statusByte: UInt8 {
        let channel = self.channel & 0x0F
        return switch kind {
        case .noteOff: 0x80 | channel
        case .noteOn: 0x90 | channel
        case .polyPressure: 0xA0 | channel
        case .controlChange, .controlChange14, .rpn, .nrpn: 0xB0 | channel
        case .programChange: 0xC0 | channel
        case .channelPressure: 0xD0 | channel
        case .pitchBend: 0xE0 | channel
        case .sysex: 0xF0
        case .mtcQuarterFrame: 0xF1
        case .songPosition: 0xF2
        case .songSelect: 0xF3
        case .tuneRequest: 0xF6
        case .clock: 0xF8
        case .start: 0xFA
        case .continue: 0xFB
        case .stop: 0xFC
        case .activeSensing: 0xFE
        case .reset: 0xFF
        }
    }

    /// ``value`` of a pitch bend clamped to -8192...8191, the range MIDI can carry.
    @inlinable public var clampedBend: Int32 { min(max(value, -8192), 8191) }

    /// The 14-bit value as MIDI carries it: a pitch bend offset to 0...16383 (8192 at centre),
    /// any other kind's ``value`` clamped to 0...16383.
    @inlinable public var wireValue14: UInt16 {
        kind == .pitchBend ? UInt16(clampedBend + 8192) : UInt16(min(max(value, 0), 16383))
    }

    /// The first data byte of a one-message kind on the wire (pitch bend and song position: the
    /// LSB of ``wireValue14``).
    @inlinable public var wireData1: UInt8 {
        switch kind {
        case .pitchBend, .songPosition: UInt8(truncatingIfNeeded: wireValue14) & 0x7F
        default: data1 & 0x7F
        }
    }

    /// The second data byte of a one-message kind on the wire (pitch bend and song position: the
    /// MSB of ``wireValue14``).
    @inlinable public var wireData2: UInt8 {
        switch kind {
        case .pitchBend, .songPosition: UInt8(truncatingIfNeeded: wireValue14 >> 7) & 0x7F
        default: data2 & 0x7F
        }
    }

    /// Status, data 1 and data 2 of a one-message kind, the data bytes it does not have 0.
    @inlinable public var wireBytes: (status: UInt8, data1: UInt8, data2: UInt8) {
        let count = kind.dataByteCount
        return (statusByte, count >= 1 ? wireData1 : 0, count >= 2 ? wireData2 : 0)
    }

    /// Bytes in a message that starts with `status`; 0 for SysEx and the undefined status bytes.
    @inlinable public static func messageLength(status: UInt8) -> Int {
        switch status {
        case 0x80...0xBF, 0xE0...0xEF, 0xF2: 3
        case 0xC0...0xDF, 0xF1, 0xF3: 2
        case 0xF6, 0xF8, 0xFA, 0xFB, 0xFC, 0xFE, 0xFF: 1
        default: 0
        }
    }
}

extension MIDIEventKind {
    /// Data bytes after the status byte of a one-message kind; 0 for the assembled kinds and SysEx.
    @inlinable public var dataByteCount: Int {
        switch self {
        case .noteOff, .noteOn, .polyPressure, .controlChange, .pitchBend, .songPosition: 2
        case .programChange, .channelPressure, .mtcQuarterFrame, .songSelect: 1
        default: 0
        }
    }
}
