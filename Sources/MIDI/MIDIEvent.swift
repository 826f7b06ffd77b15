/// What a MIDI event is: one case per MIDI 1.0 message, plus the assembled forms
/// (14-bit controller, RPN, NRPN) that ALSA delivers and the pipeline produces.
public enum MIDIEventKind: UInt8, Sendable, BitwiseCopyable, CaseIterable, CustomStringConvertible {
    case noteOff = 0
    case noteOn
    case polyPressure
    case controlChange
    case programChange
    case channelPressure
    case pitchBend
    /// A 14-bit controller: `parameter` is the MSB controller number (0-31), `value` 0-16383.
    case controlChange14
    /// A registered parameter: `parameter` is the 14-bit number, `value` the 14-bit data.
    case rpn
    /// A non-registered parameter: `parameter` is the 14-bit number, `value` the 14-bit data.
    case nrpn
    case mtcQuarterFrame
    case songPosition
    case songSelect
    case tuneRequest
    case clock
    case start
    case `continue`
    case stop
    case activeSensing
    case reset
    /// System exclusive; the bytes live in a ``SysExStore`` named by ``MIDIEvent/sysex``.
    case sysex

    /// The name used in logs, the monitor and OSC addresses (`note_on`, `control_change`, ...).
    public var description: String {
        switch self {
        case .noteOff: "note_off"
        case .noteOn: "note_on"
        case .polyPressure: "poly_pressure"
        case .controlChange: "control_change"
        case .programChange: "program_change"
        case .channelPressure: "channel_pressure"
        case .pitchBend: "pitch_bend"
        case .controlChange14: "control_change14"
        case .rpn: "rpn"
        case .nrpn: "nrpn"
        case .mtcQuarterFrame: "mtc_quarter_frame"
        case .songPosition: "song_position"
        case .songSelect: "song_select"
        case .tuneRequest: "tune_request"
        case .clock: "clock"
        case .start: "start"
        case .continue: "continue"
        case .stop: "stop"
        case .activeSensing: "active_sensing"
        case .reset: "reset"
        case .sysex: "sysex"
        }
    }

    /// Whether the event belongs to a channel (has a meaningful ``MIDIEvent/channel``).
    @inlinable public var isChannelMessage: Bool { rawValue <= MIDIEventKind.nrpn.rawValue }

    /// Whether the event is a one-byte system realtime message.
    @inlinable public var isRealtime: Bool {
        rawValue >= MIDIEventKind.clock.rawValue && rawValue <= MIDIEventKind.reset.rawValue
    }
}

/// Where a SysEx message's bytes are in a ``SysExStore``: a slot and a length, never an Array,
/// so that an event stays a plain value that can cross a ring without touching the heap.
package struct SysExReference: Hashable, Sendable, BitwiseCopyable {
    /// The slot in the store, or `UInt16.max` for none.
    package var slot: UInt16
    /// The message length in bytes, including the `F0` and `F7` framing when complete.
    package var length: UInt32

    @inlinable
    public init(slot: UInt16, length: UInt32) {
        self.slot = slot
        self.length = length
    }

    /// No SysEx payload. Computed, not stored: every event is made with it, and a stored global
    /// is reached through a lazy-initialisation check each time.
    @inlinable public static var none: SysExReference { SysExReference(slot: .max, length: 0) }
}

/// One MIDI event: a small value (32 bytes) that is copied, never shared.
///
/// Field meanings by kind:
/// - note on/off, poly pressure: `data1` note, `data2` velocity or pressure
/// - control change: `data1` controller, `data2` value
/// - program change: `data1` program; channel pressure: `data1` pressure
/// - pitch bend: `value` -8192...8191 (0 is centre)
/// - 14-bit controller, RPN, NRPN: `parameter` number, `value` 0...16383
/// - MTC quarter frame: `data1` the data byte; song select: `data1` song;
///   song position: `value` 0...16383 (MIDI beats)
/// - SysEx: `sysex`
package struct MIDIEvent: Hashable, Sendable, BitwiseCopyable {
    /// Monotonic receive time in nanoseconds (0 when unknown).
    package var timestamp: UInt64
    /// A 14-bit value, for the kinds that have one (see the type's documentation).
    package var value: Int32
    /// Where the bytes of a SysEx event are.
    package var sysex: SysExReference
    /// A 14-bit parameter or controller number.
    package var parameter: UInt16
    /// The index of the bridge port (input or output) the event belongs to.
    package var port: UInt16
    package var kind: MIDIEventKind
    /// The channel, 0...15 (shown to people as 1...16).
    package var channel: UInt8
    package var data1: UInt8
    package var data2: UInt8

    @inlinable
    public init(
        _ kind: MIDIEventKind, channel: UInt8 = 0, data1: UInt8 = 0, data2: UInt8 = 0,
        value: Int32 = 0, parameter: UInt16 = 0, sysex: SysExReference = .none,
        port: UInt16 = 0, timestamp: UInt64 = 0
    ) {
        self.kind = kind
        self.channel = channel
        self.data1 = data1
        self.data2 = data2
        self.value = value
        self.parameter = parameter
        self.sysex = sysex
        self.port = port
        self.timestamp = timestamp
    }

    /// A note-on event.
    @inlinable public static func noteOn(channel: UInt8, note: UInt8, velocity: UInt8) -> MIDIEvent {
        MIDIEvent(.noteOn, channel: channel, data1: note, data2: velocity)
    }

    /// A note-off event.
    @inlinable public static func noteOff(channel: UInt8, note: UInt8, velocity: UInt8 = 0) -> MIDIEvent {
        MIDIEvent(.noteOff, channel: channel, data1: note, data2: velocity)
    }

    /// A control change event.
    @inlinable public static func controlChange(channel: UInt8, controller: UInt8, value: UInt8) -> MIDIEvent {
        MIDIEvent(.controlChange, channel: channel, data1: controller, data2: value)
    }

    /// A pitch bend event, `bend` in -8192...8191.
    @inlinable public static func pitchBend(channel: UInt8, bend: Int32) -> MIDIEvent {
        MIDIEvent(.pitchBend, channel: channel, value: bend)
    }

    /// The note number of a note or poly pressure event.
    @inlinable public var note: UInt8 { data1 }
    /// The velocity of a note event.
    @inlinable public var velocity: UInt8 { data2 }

    /// Whether this event ends a note: a note-off, or a note-on with velocity 0.
    @inlinable @inline(__always) public var endsNote: Bool {
        kind == .noteOff || (kind == .noteOn && data2 == 0)
    }
}
