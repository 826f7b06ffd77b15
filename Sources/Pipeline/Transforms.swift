import MIDI
import Storage

/// Moves note-ons, note-offs and poly pressure by a number of semitones; drops what would leave
/// 0...127. Other events pass.
///
/// Inside a chain a note-off is not transposed: it follows its note-on (see ``Chain``), so a
/// note-on pushed out of range is dropped and so is its note-off.
package struct Transpose: Sendable, Hashable {
    /// The semitones to add (negative: down).
    let semitones: Int

    /// Transposes by `semitones`.
    package init(semitones: Int) {
        self.semitones = semitones
    }

    /// Rewrites `event`; returns `false` when the note left 0...127.
    package func process(_ event: inout MIDIEvent) -> Bool {
        switch event.kind {
        case .noteOn, .noteOff, .polyPressure:
            let note = Int(event.data1) + semitones
            guard note >= 0, note <= 127 else { return false }
            event.data1 = UInt8(note)
            return true
        default:
            return true
        }
    }
}

/// Rewrites the channel of channel messages through a 16-entry table; other events pass.
package struct ChannelMap: Sendable, Hashable {
    private var table = TupleArray16<UInt8>(repeating: 0)

    /// Maps each channel `from` to `to` (both 0...15; other entries are ignored); channels not
    /// named stay as they are.
    package init(_ mapping: [(from: UInt8, to: UInt8)]) {
        var channel: UInt8 = 0
        while channel < 16 {
            table[Int(channel)] = channel
            channel += 1
        }
        var i = 0
        while i < mapping.count {
            let (from, to) = mapping[i]
            if from < 16, to < 16 { table[Int(from)] = to }
            i += 1
        }
    }

    /// Moves every channel to `channel` (0...15).
    package init(allTo channel: UInt8) {
        table = TupleArray16(repeating: channel & 15)
    }

    /// The channel that `channel` (0...15) becomes.
    package func map(_ channel: UInt8) -> UInt8 { table[Int(channel & 15)] }

    /// Rewrites `event`; always keeps it.
    package func process(_ event: inout MIDIEvent) -> Bool {
        if event.kind.isChannelMessage { event.channel = table[Int(event.channel & 15)] }
        return true
    }

    package static func == (lhs: ChannelMap, rhs: ChannelMap) -> Bool {
        var i = 0
        while i < 16 {
            if lhs.table[i] != rhs.table[i] { return false }
            i += 1
        }
        return true
    }

    package func hash(into hasher: inout Hasher) {
        var i = 0
        while i < 16 {
            hasher.combine(table[i])
            i += 1
        }
    }
}

/// Renumbers 7-bit control changes through a 128-entry table; other events pass.
package struct ControllerMap: Sendable, Hashable {
    private let table = ByteTable()

    /// Maps each controller `from` to `to` (both 0...127; other entries are ignored);
    /// controllers not named stay as they are.
    package init(_ mapping: [(from: UInt8, to: UInt8)]) {
        var controller: UInt8 = 0
        while controller < 128 {
            table[Int(controller)] = controller
            controller += 1
        }
        var i = 0
        while i < mapping.count {
            let (from, to) = mapping[i]
            if from < 128, to < 128 { table[Int(from)] = to }
            i += 1
        }
    }

    /// The controller that `controller` (0...127) becomes.
    package func map(_ controller: UInt8) -> UInt8 { table[Int(controller & 127)] }

    /// Rewrites `event`; always keeps it.
    package func process(_ event: inout MIDIEvent) -> Bool {
        if event.kind == .controlChange { event.data1 = table[Int(event.data1 & 127)] }
        return true
    }

    package static func == (lhs: ControllerMap, rhs: ControllerMap) -> Bool {
        var i = 0
        while i < 128 {
            if lhs.table[i] != rhs.table[i] { return false }
            i += 1
        }
        return true
    }

    package func hash(into hasher: inout Hasher) {
        var i = 0
        while i < 128 {
            hasher.combine(table[i])
            i += 1
        }
    }
}

/// The one form in which a chain emits the end of a note.
///
/// As an operator it rewrites note-ends. Inside a chain note-ends never run through operators
/// (they follow their note-ons, see ``Chain``); instead the last `normaliseNoteOffs` operator of a
/// chain (or, if it has none, of its nearest ancestor) sets the form of every note-end the chain
/// emits, at its output. With none anywhere, a note-end leaves in the form it arrived in.
package enum NoteOffStyle: Sendable, Hashable {
    /// Note-on with velocity 0 becomes a note-off (velocity 0).
    case noteOff
    /// Note-off becomes a note-on with velocity 0 (its release velocity is lost).
    case noteOnWithZeroVelocity

    /// Rewrites a note-end in this form; leaves every other event alone. Always keeps it.
    package func process(_ event: inout MIDIEvent) -> Bool {
        guard event.endsNote else { return true }
        switch self {
        case .noteOff:
            if event.kind == .noteOn { event.kind = .noteOff }
        case .noteOnWithZeroVelocity:
            event.kind = .noteOn
            event.data2 = 0
        }
        return true
    }
}

/// 128 bytes behind a reference, written once at construction: an operator is copied out of
/// its enum each time it runs, and a 128-byte inline table made every operator of every event
/// copy that much.
final class ByteTable: @unchecked Sendable {
    // @unchecked Sendable: written only by the initialiser of the value that owns it.
    private let bytes = FixedBuffer<UInt8>(repeating: 0, count: 128)

    init() {}

    subscript(_ index: Int) -> UInt8 {
        get { bytes[index] }
        set { bytes[index] = newValue }
    }
}
