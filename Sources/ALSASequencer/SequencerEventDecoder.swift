import CALSA
import Endpoints
import MIDI
import Storage

/// A change the kernel announces on the system announce port (0:1).
package enum Announcement: Sendable, Equatable {
    case clientStarted(UInt8)
    case clientExited(UInt8)
    case clientChanged(UInt8)
    case portStarted(PortAddress)
    case portExited(PortAddress)
    case portChanged(PortAddress)
}

/// What one sequencer event turned into.
package enum DecodedSequencerEvent: Sendable {
    /// A MIDI event, with the address of the port it came from.
    case midi(MIDIEvent, source: PortAddress)
    /// A client or port came or went.
    case announcement(Announcement)
    /// A piece of a longer SysEx message (kept until its end), or an event with no MIDI meaning.
    case none
}

/// Turns `snd_seq_event_t` into ``MIDIEvent`` values, reassembling SysEx that ALSA delivers in
/// chunks (the kernel's rawmidi converter cuts long messages into pieces of a few hundred bytes,
/// and pieces of messages from several sources may interleave).
///
/// Runs on the input thread; it never allocates: SysEx bytes go into a preallocated
/// ``SysExStore``, and the table of messages in progress has a fixed size.
package struct SequencerEventDecoder {
    /// Where completed SysEx messages are published.
    let sysexStore: SysExStore
    private var pending: TupleArray8<PendingSysEx>
    /// SysEx chunks that arrived with no message in progress, or whose message could not be
    /// stored (store full, too long).
    private(set) var droppedSysExChunks = 0

    private struct PendingSysEx {
        var source: PortAddress
        var draft: SysExDraft?
        var active: Bool
    }

    package init(sysexStore: SysExStore) {
        self.sysexStore = sysexStore
        pending = TupleArray8(
            repeating: PendingSysEx(source: PortAddress(client: 0, port: 0), draft: nil, active: false))
    }

    /// Decodes one event; `timestamp` is the monotonic receive time in nanoseconds.
    @inline(__always)
    package mutating func decode(_ event: UnsafePointer<snd_seq_event_t>, timestamp: UInt64)
        -> DecodedSequencerEvent
    {
        // Notes and controllers, nearly everything a player sends, inline; the rest (SysEx
        // reassembly, announcements, the rarer kinds) in a call.
        if let midi = Self.decodeNoteOrController(event, timestamp: timestamp) {
            let source = PortAddress(client: event.pointee.source.client, port: event.pointee.source.port)
            return .midi(midi, source: source)
        }
        return decodeAny(event, timestamp: timestamp)
    }

    /// A note-on, note-off or controller event, decoded inline; `nil` for any other type.
    @inline(__always)
    static func decodeNoteOrController(_ event: UnsafePointer<snd_seq_event_t>, timestamp: UInt64)
        -> MIDIEvent?
    {
        let kind: MIDIEventKind
        switch UInt32(event.pointee.type) {
        case SND_SEQ_EVENT_NOTEON.rawValue: kind = .noteOn
        case SND_SEQ_EVENT_NOTEOFF.rawValue: kind = .noteOff
        case SND_SEQ_EVENT_CONTROLLER.rawValue:
            let control = event.pointee.data.control
            var midi = MIDIEvent(.controlChange, port: UInt16(event.pointee.dest.port), timestamp: timestamp)
            midi.channel = control.channel & 15
            midi.data1 = UInt8(truncatingIfNeeded: control.param & 127)
            midi.data2 = UInt8(truncatingIfNeeded: control.value & 127)
            return midi
        default: return nil
        }
        let note = event.pointee.data.note
        var midi = MIDIEvent(kind, port: UInt16(event.pointee.dest.port), timestamp: timestamp)
        midi.channel = note.channel & 15
        midi.data1 = note.note & 127
        midi.data2 = note.velocity & 127
        return midi
    }

    private mutating func decodeAny(_ event: UnsafePointer<snd_seq_event_t>, timestamp: UInt64)
        -> DecodedSequencerEvent
    {
        let source = PortAddress(client: event.pointee.source.client, port: event.pointee.source.port)
        let port = UInt16(event.pointee.dest.port)
        var midi = MIDIEvent(.clock, port: port, timestamp: timestamp)
        let note = event.pointee.data.note
        let control = event.pointee.data.control

        switch UInt32(event.pointee.type) {
        case SND_SEQ_EVENT_NOTEON.rawValue, SND_SEQ_EVENT_NOTE.rawValue:
            midi.kind = .noteOn
            midi.channel = note.channel & 15
            midi.data1 = note.note & 127
            midi.data2 = note.velocity & 127
        case SND_SEQ_EVENT_NOTEOFF.rawValue:
            midi.kind = .noteOff
            midi.channel = note.channel & 15
            midi.data1 = note.note & 127
            midi.data2 = note.velocity & 127
        case SND_SEQ_EVENT_KEYPRESS.rawValue:
            midi.kind = .polyPressure
            midi.channel = note.channel & 15
            midi.data1 = note.note & 127
            midi.data2 = note.velocity & 127
        case SND_SEQ_EVENT_CONTROLLER.rawValue:
            midi.kind = .controlChange
            midi.channel = control.channel & 15
            midi.data1 = UInt8(truncatingIfNeeded: control.param & 127)
            midi.data2 = UInt8(truncatingIfNeeded: control.value & 127)
        case SND_SEQ_EVENT_PGMCHANGE.rawValue:
            midi.kind = .programChange
            midi.channel = control.channel & 15
            midi.data1 = UInt8(truncatingIfNeeded: control.value & 127)
        case SND_SEQ_EVENT_CHANPRESS.rawValue:
            midi.kind = .channelPressure
            midi.channel = control.channel & 15
            midi.data1 = UInt8(truncatingIfNeeded: control.value & 127)
        case SND_SEQ_EVENT_PITCHBEND.rawValue:
            midi.kind = .pitchBend
            midi.channel = control.channel & 15
            midi.value = min(max(control.value, -8192), 8191)
        case SND_SEQ_EVENT_CONTROL14.rawValue:
            midi.kind = .controlChange14
            midi.channel = control.channel & 15
            midi.parameter = UInt16(truncatingIfNeeded: control.param & 31)
            midi.value = control.value & 0x3FFF
        case SND_SEQ_EVENT_REGPARAM.rawValue, SND_SEQ_EVENT_NONREGPARAM.rawValue:
            midi.kind = UInt32(event.pointee.type) == SND_SEQ_EVENT_REGPARAM.rawValue ? .rpn : .nrpn
            midi.channel = control.channel & 15
            midi.parameter = UInt16(truncatingIfNeeded: control.param & 0x3FFF)
            midi.value = control.value & 0x3FFF
        case SND_SEQ_EVENT_QFRAME.rawValue:
            midi.kind = .mtcQuarterFrame
            midi.data1 = UInt8(truncatingIfNeeded: control.value & 127)
        case SND_SEQ_EVENT_SONGPOS.rawValue:
            midi.kind = .songPosition
            midi.value = control.value & 0x3FFF
        case SND_SEQ_EVENT_SONGSEL.rawValue:
            midi.kind = .songSelect
            midi.data1 = UInt8(truncatingIfNeeded: control.value & 127)
        case SND_SEQ_EVENT_TUNE_REQUEST.rawValue: midi.kind = .tuneRequest
        case SND_SEQ_EVENT_CLOCK.rawValue: midi.kind = .clock
        case SND_SEQ_EVENT_START.rawValue: midi.kind = .start
        case SND_SEQ_EVENT_CONTINUE.rawValue: midi.kind = .continue
        case SND_SEQ_EVENT_STOP.rawValue: midi.kind = .stop
        case SND_SEQ_EVENT_SENSING.rawValue: midi.kind = .activeSensing
        case SND_SEQ_EVENT_RESET.rawValue: midi.kind = .reset
        case SND_SEQ_EVENT_SYSEX.rawValue:
            guard let reference = appendSysEx(event, from: source) else { return .none }
            midi.kind = .sysex
            midi.sysex = reference
        case SND_SEQ_EVENT_CLIENT_START.rawValue:
            return .announcement(.clientStarted(event.pointee.data.addr.client))
        case SND_SEQ_EVENT_CLIENT_EXIT.rawValue:
            abandonSysEx(fromClient: event.pointee.data.addr.client)
            return .announcement(.clientExited(event.pointee.data.addr.client))
        case SND_SEQ_EVENT_CLIENT_CHANGE.rawValue:
            return .announcement(.clientChanged(event.pointee.data.addr.client))
        case SND_SEQ_EVENT_PORT_START.rawValue:
            return .announcement(.portStarted(Self.address(event.pointee.data.addr)))
        case SND_SEQ_EVENT_PORT_EXIT.rawValue:
            return .announcement(.portExited(Self.address(event.pointee.data.addr)))
        case SND_SEQ_EVENT_PORT_CHANGE.rawValue:
            return .announcement(.portChanged(Self.address(event.pointee.data.addr)))
        default:
            return .none
        }
        return .midi(midi, source: source)
    }

    private static func address(_ address: snd_seq_addr_t) -> PortAddress {
        PortAddress(client: address.client, port: address.port)
    }

    /// Adds a SysEx chunk to its source's message; returns the reference once the message ends.
    private mutating func appendSysEx(_ event: UnsafePointer<snd_seq_event_t>, from source: PortAddress)
        -> SysExReference?
    {
        let length = Int(aseqosc_ev_ext_length(event))
        guard length > 0, let data = aseqosc_ev_ext_data(event) else { return nil }
        let chunk = UnsafeRawBufferPointer(start: data, count: length)
        let startsMessage = chunk[0] == 0xF0
        let endsMessage = chunk[length - 1] == 0xF7

        var index = slot(for: source)
        if startsMessage, let open = index {
            // A new F0 while one was open: the old message lost its end; drop it.
            abandon(at: open)
            index = nil
        }
        if index == nil {
            guard startsMessage, let free = freeSlot() else {
                droppedSysExChunks += 1
                return nil
            }
            pending[free] = PendingSysEx(source: source, draft: sysexStore.reserve(), active: true)
            index = free
        }
        guard let index else { return nil }
        guard var draft = pending[index].draft else {
            // The store had no room for this message: swallow its chunks up to the end.
            droppedSysExChunks += 1
            if endsMessage { pending[index].active = false }
            return nil
        }
        sysexStore.append(chunk, to: &draft)
        pending[index].draft = draft
        guard endsMessage else { return nil }
        pending[index].active = false
        pending[index].draft = nil
        return sysexStore.publish(draft)
    }

    private func slot(for source: PortAddress) -> Int? {
        var i = 0
        while i < pending.count {
            if pending[i].active && pending[i].source == source { return i }
            i += 1
        }
        return nil
    }

    private func freeSlot() -> Int? {
        var i = 0
        while i < pending.count {
            if !pending[i].active { return i }
            i += 1
        }
        return nil
    }

    private mutating func abandon(at index: Int) {
        if let draft = pending[index].draft { sysexStore.abandon(draft) }
        pending[index].active = false
        pending[index].draft = nil
        droppedSysExChunks += 1
    }

    private mutating func abandonSysEx(fromClient client: UInt8) {
        var i = 0
        while i < pending.count {
            if pending[i].active && pending[i].source.client == client { abandon(at: i) }
            i += 1
        }
    }
}
