import MIDI
import Storage

// Every filter judges only the events it applies to and passes the rest, inverted or not (as in
// mididings): a note range filter never drops a clock, a controller filter never drops a note.
// Inside a chain, note-offs bypass filters altogether (see ``Chain``), so no filter can leave a
// note hanging.

/// A set of input port indices, 0..<``capacity``, as a bit mask.
package struct PortSet: Sendable, Hashable {
    /// Port indices at or above this are never members.
    package static let capacity = 256

    private var words = TupleArray4<UInt64>(repeating: 0)

    /// The set of `ports`; indices at or above ``capacity`` are ignored.
    package init(_ ports: some Sequence<UInt16>) {
        for port in ports where Int(port) < Self.capacity {
            words[Int(port) >> 6] |= 1 << UInt64(port & 63)
        }
    }

    /// Every port index below ``capacity``.
    package static var all: PortSet {
        var set = PortSet([])
        set.words = TupleArray4(repeating: .max)
        return set
    }

    /// Whether `port` is a member.
    @inline(__always)
    package func contains(_ port: UInt16) -> Bool {
        Int(port) < Self.capacity && bit(port)
    }

    @inline(__always)
    private func bit(_ port: UInt16) -> Bool {
        words[Int(port) >> 6] & (1 << UInt64(port & 63)) != 0
    }

    package static func == (lhs: PortSet, rhs: PortSet) -> Bool {
        lhs.words[0] == rhs.words[0] && lhs.words[1] == rhs.words[1] && lhs.words[2] == rhs.words[2]
            && lhs.words[3] == rhs.words[3]
    }

    package func hash(into hasher: inout Hasher) {
        var i = 0
        while i < 4 {
            hasher.combine(words[i])
            i += 1
        }
    }
}

/// Keeps events of the given kinds (or, inverted, drops them). Applies to every event.
package struct KindFilter: Sendable, Hashable {
    /// Bit *n* set: the kind with raw value *n* matches.
    let mask: UInt32
    /// Drop the matching kinds instead of keeping them.
    let inverted: Bool

    /// A filter matching `kinds`.
    package init(_ kinds: [MIDIEventKind], inverted: Bool = false) {
        var mask: UInt32 = 0
        var i = 0
        while i < kinds.count {
            mask |= 1 << UInt32(kinds[i].rawValue)
            i += 1
        }
        self.mask = mask
        self.inverted = inverted
    }

    /// Whether `event` passes.
    func keeps(_ event: MIDIEvent) -> Bool {
        (mask & (1 << UInt32(event.kind.rawValue)) != 0) != inverted
    }
}

/// Keeps channel messages on the given channels (0...15); other events pass.
package struct ChannelFilter: Sendable, Hashable {
    /// Bit *n* set: channel *n* matches.
    let mask: UInt16
    /// Drop the matching channels instead of keeping them.
    let inverted: Bool

    /// A filter matching `channels` (0...15; others are ignored).
    package init(_ channels: [UInt8], inverted: Bool = false) {
        var mask: UInt16 = 0
        var i = 0
        while i < channels.count {
            if channels[i] < 16 { mask |= 1 << UInt16(channels[i]) }
            i += 1
        }
        self.mask = mask
        self.inverted = inverted
    }

    /// Whether `event` passes.
    func keeps(_ event: MIDIEvent) -> Bool {
        guard event.kind.isChannelMessage else { return true }
        return (mask & (1 << UInt16(event.channel & 15)) != 0) != inverted
    }
}

/// Keeps note-ons, note-offs and poly pressure whose note is in a range; other events pass.
package struct NoteRangeFilter: Sendable, Hashable {
    /// The notes that match.
    package let notes: ClosedRange<UInt8>
    /// Drop the matching notes instead of keeping them.
    let inverted: Bool

    /// A filter matching the notes in `notes`.
    package init(_ notes: ClosedRange<UInt8>, inverted: Bool = false) {
        self.notes = notes
        self.inverted = inverted
    }

    /// Whether `event` passes.
    func keeps(_ event: MIDIEvent) -> Bool {
        switch event.kind {
        case .noteOn, .noteOff, .polyPressure:
            return notes.contains(event.data1) != inverted
        default:
            return true
        }
    }
}

/// Keeps note-ons (velocity above 0) whose velocity is in a range; every other event passes.
///
/// Note-offs and note-ons with velocity 0 always pass: filtering them by velocity would leave
/// notes hanging.
package struct VelocityFilter: Sendable, Hashable {
    /// The velocities that match.
    let velocities: ClosedRange<UInt8>
    /// Drop the matching velocities instead of keeping them.
    let inverted: Bool

    /// A filter matching note-ons with a velocity in `velocities`.
    package init(_ velocities: ClosedRange<UInt8>, inverted: Bool = false) {
        self.velocities = velocities
        self.inverted = inverted
    }

    /// Whether `event` passes.
    func keeps(_ event: MIDIEvent) -> Bool {
        guard event.kind == .noteOn, event.data2 > 0 else { return true }
        return velocities.contains(event.data2) != inverted
    }
}

/// Keeps control changes with the given controller numbers; other events pass.
///
/// Applies to 7-bit control changes (by ``MIDIEvent/data1``) and to assembled 14-bit
/// controllers (by their MSB number, ``MIDIEvent/parameter``).
package struct ControllerFilter: Sendable, Hashable {
    /// Bit *n* of `low` (0...63) or of `high` (64...127) set: controller *n* matches.
    let low: UInt64
    let high: UInt64
    /// Drop the matching controllers instead of keeping them.
    let inverted: Bool

    /// A filter matching `controllers` (0...127; others are ignored).
    package init(_ controllers: [UInt8], inverted: Bool = false) {
        var low: UInt64 = 0
        var high: UInt64 = 0
        var i = 0
        while i < controllers.count {
            let controller = controllers[i]
            if controller < 64 {
                low |= 1 << UInt64(controller)
            } else if controller < 128 {
                high |= 1 << UInt64(controller - 64)
            }
            i += 1
        }
        self.low = low
        self.high = high
        self.inverted = inverted
    }

    /// Whether `controller` (0...127) matches, ignoring `inverted`.
    func matches(_ controller: Int) -> Bool {
        guard controller >= 0, controller < 128 else { return false }
        let word = controller < 64 ? low : high
        return word & (1 << UInt64(controller & 63)) != 0
    }

    /// Whether `event` passes.
    func keeps(_ event: MIDIEvent) -> Bool {
        switch event.kind {
        case .controlChange: return matches(Int(event.data1)) != inverted
        case .controlChange14: return matches(Int(event.parameter)) != inverted
        default: return true
        }
    }
}

/// Keeps events from the given input ports. Applies to every event.
package struct PortFilter: Sendable, Hashable {
    /// The ports that match.
    package let ports: PortSet
    /// Drop events from the matching ports instead of keeping them.
    let inverted: Bool

    /// A filter matching events whose ``MIDIEvent/port`` is in `ports`.
    package init(_ ports: PortSet, inverted: Bool = false) {
        self.ports = ports
        self.inverted = inverted
    }

    /// Whether `event` passes.
    func keeps(_ event: MIDIEvent) -> Bool {
        ports.contains(event.port) != inverted
    }
}
