import MIDI

/// One step of a chain: edits an event in place and says whether to keep it, like mididings'
/// `bool process(MidiEvent&)`. A closed set, so running one is a switch.
///
/// Operators are built once (from the configuration) and then run on the input thread, where
/// they never allocate, lock, log or throw.
package enum Operator: Sendable {
    /// Keeps (or drops) events by kind.
    case kindFilter(KindFilter)
    /// Keeps (or drops) channel messages by channel.
    case channelFilter(ChannelFilter)
    /// Keeps (or drops) note events by note number.
    case noteFilter(NoteRangeFilter)
    /// Keeps (or drops) note-ons by velocity.
    case velocityFilter(VelocityFilter)
    /// Keeps (or drops) control changes by controller number.
    case controllerFilter(ControllerFilter)
    /// Keeps (or drops) events by input port.
    case portFilter(PortFilter)
    /// Moves notes; drops those pushed out of 0...127.
    case transpose(Transpose)
    /// Rewrites channels.
    case channelMap(ChannelMap)
    /// Reshapes note-on velocities.
    case velocity(VelocityCurve)
    /// Renumbers controllers.
    case controllerMap(ControllerMap)
    /// Maps a value range linearly onto another.
    case valueMap(ValueMapping)
    /// Sets the form of the note-ends a chain emits (see ``NoteOffStyle``).
    case normaliseNoteOffs(NoteOffStyle)
    /// Assembles 14-bit controllers, RPN and NRPN (stateful).
    case assemble(ControllerAssembly)
    /// Drops repeated controller, pitch bend and pressure values (stateful).
    case dropRepeats(RepeatFilter)
    /// Limits controller, pitch bend and pressure rates (stateful).
    case throttle(Throttle)

    /// Why an operator dropped an event, for the route's counters.
    enum DropReason {
        case filtered, outOfRange, throttled, consumed
    }

    /// Edits `event` in place at time `now` (monotonic ns); returns `false` to drop it.
    package mutating func process(_ event: inout MIDIEvent, now: UInt64) -> Bool {
        switch self {
        case .kindFilter(let filter): filter.keeps(event)
        case .channelFilter(let filter): filter.keeps(event)
        case .noteFilter(let filter): filter.keeps(event)
        case .velocityFilter(let filter): filter.keeps(event)
        case .controllerFilter(let filter): filter.keeps(event)
        case .portFilter(let filter): filter.keeps(event)
        case .transpose(let transpose): transpose.process(&event)
        case .channelMap(let map): map.process(&event)
        case .velocity(let curve): curve.process(&event)
        case .controllerMap(let map): map.process(&event)
        case .valueMap(let mapping): mapping.process(&event)
        case .normaliseNoteOffs(let style): style.process(&event)
        case .assemble(let assembly): assembly.process(&event)
        case .dropRepeats(let filter): filter.process(&event)
        case .throttle(let throttle): throttle.process(&event, now: now)
        }
    }

    /// Emits the pending values of a throttle that are due at `now`; nothing for other operators.
    package mutating func flushDue(now: UInt64, into sink: (MIDIEvent) -> Void) {
        if case .throttle(let throttle) = self { throttle.flushDue(now: now, into: sink) }
    }

    /// When a throttle's next pending value falls due; `nil` for other operators.
    var nextDeadline: UInt64? {
        if case .throttle(let throttle) = self { return throttle.nextDeadline }
        return nil
    }

    /// The same operator with its own, empty state (stateful operators share state between
    /// copies; everything else is a plain value).
    func withFreshState() -> Operator {
        switch self {
        case .assemble(let assembly): .assemble(assembly.withFreshState())
        case .dropRepeats(let filter): .dropRepeats(filter.withFreshState())
        case .throttle(let throttle): .throttle(throttle.withFreshState())
        default: self
        }
    }

    var dropReason: DropReason {
        switch self {
        case .transpose: .outOfRange
        case .throttle: .throttled
        case .assemble, .dropRepeats: .consumed
        default: .filtered
        }
    }

    /// The note-off form this operator sets, if it is a ``normaliseNoteOffs(_:)``.
    var noteOffStyle: NoteOffStyle? {
        if case .normaliseNoteOffs(let style) = self { return style }
        return nil
    }
}
