import CALSA
import MIDI

/// Fills `snd_seq_event_t` from ``MIDIEvent`` values: the inverse of ``SequencerEventDecoder``.
///
/// 14-bit controllers, RPN and NRPN go out as ALSA's own event types (`CONTROL14`, `REGPARAM`,
/// `NONREGPARAM`); the kernel turns them into controller sequences for hardware ports.
enum SequencerEventEncoder {
    /// Writes `event` into `target` (cleared first), leaving source and destination to the
    /// caller. A SysEx event points at `sysexBytes`, which must outlive the write.
    static func encode(
        _ event: MIDIEvent, into target: inout snd_seq_event_t, sysexBytes: UnsafeRawBufferPointer? = nil
    ) {
        aseqosc_ev_clear(&target)
        if event.kind != .sysex {
            encodeFixedSize(event, into: &target)
            return
        }
        target.type = snd_seq_event_type_t(SND_SEQ_EVENT_SYSEX.rawValue)
        if let sysexBytes, let base = sysexBytes.baseAddress {
            aseqosc_ev_set_variable(&target, UInt32(sysexBytes.count), base)
        } else {
            aseqosc_ev_set_variable(&target, 0, nil)
        }
    }

    /// ``encode(_:into:sysexBytes:)`` for every kind but SysEx: the type, the fixed-size flag and
    /// the whole data union (cleared first), leaving the other fields of `target` as they are.
    @inline(__always)
    static func encodeFixedSize(_ event: MIDIEvent, into target: inout snd_seq_event_t) {
        aseqosc_ev_set_fixed(&target)
        let channel = event.channel & 15
        // The data goes in through the shim: see aseqosc_ev_set_note_data.
        func note(_ type: snd_seq_event_type) {
            aseqosc_ev_set_note_data(
                &target, snd_seq_event_type_t(type.rawValue), channel, event.data1 & 127, event.data2 & 127)
        }
        func control(_ type: snd_seq_event_type, parameter: UInt32 = 0, value: Int32) {
            aseqosc_ev_set_control_data(&target, snd_seq_event_type_t(type.rawValue), channel, parameter, value)
        }
        func bare(_ type: snd_seq_event_type) {
            aseqosc_ev_set_bare(&target, snd_seq_event_type_t(type.rawValue))
        }
        switch event.kind {
        case .noteOn: note(SND_SEQ_EVENT_NOTEON)
        case .noteOff: note(SND_SEQ_EVENT_NOTEOFF)
        case .polyPressure: note(SND_SEQ_EVENT_KEYPRESS)
        case .controlChange:
            control(SND_SEQ_EVENT_CONTROLLER, parameter: UInt32(event.data1 & 127), value: Int32(event.data2 & 127))
        case .programChange: control(SND_SEQ_EVENT_PGMCHANGE, value: Int32(event.data1 & 127))
        case .channelPressure: control(SND_SEQ_EVENT_CHANPRESS, value: Int32(event.data1 & 127))
        case .pitchBend: control(SND_SEQ_EVENT_PITCHBEND, value: min(max(event.value, -8192), 8191))
        case .controlChange14:
            control(SND_SEQ_EVENT_CONTROL14, parameter: UInt32(event.parameter & 31), value: event.value & 0x3FFF)
        case .rpn:
            control(SND_SEQ_EVENT_REGPARAM, parameter: UInt32(event.parameter & 0x3FFF), value: event.value & 0x3FFF)
        case .nrpn:
            control(
                SND_SEQ_EVENT_NONREGPARAM, parameter: UInt32(event.parameter & 0x3FFF), value: event.value & 0x3FFF)
        case .mtcQuarterFrame: control(SND_SEQ_EVENT_QFRAME, value: Int32(event.data1 & 127))
        case .songPosition: control(SND_SEQ_EVENT_SONGPOS, value: event.value & 0x3FFF)
        case .songSelect: control(SND_SEQ_EVENT_SONGSEL, value: Int32(event.data1 & 127))
        case .tuneRequest: bare(SND_SEQ_EVENT_TUNE_REQUEST)
        case .clock: bare(SND_SEQ_EVENT_CLOCK)
        case .start: bare(SND_SEQ_EVENT_START)
        case .continue: bare(SND_SEQ_EVENT_CONTINUE)
        case .stop: bare(SND_SEQ_EVENT_STOP)
        case .activeSensing: bare(SND_SEQ_EVENT_SENSING)
        case .reset: bare(SND_SEQ_EVENT_RESET)
        case .sysex: break  // variable-size: see encode(_:into:sysexBytes:)
        }
    }
}
