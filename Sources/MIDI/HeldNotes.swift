import Storage

/// Which notes are sounding, per channel: 16 ``NoteSet``s, updated in place, never allocating.
///
/// Whoever forwards MIDI keeps one of these per source so that, when the source vanishes or a
/// route is removed, the note-offs it still owes can be sent: nothing is ever left hanging.
package struct HeldNotes: Sendable, Equatable {
    /// Channel `c`'s notes at `c`.
    @usableFromInline var channels = TupleArray16<NoteSet>(repeating: NoteSet())

    @inlinable
    public init() {}

    /// Records what `event` does to the held notes: a note-on holds, a note-off (or note-on with
    /// velocity 0) releases, an all-notes-off or all-sound-off controller releases the channel.
    @inlinable @inline(__always)
    public mutating func track(_ event: MIDIEvent) {
        // Inlinable, and note events first: every event on the input path passes here.
        if event.kind == .noteOn || event.kind == .noteOff {
            guard event.channel < 16, event.data1 < 128 else { return }
            if event.kind == .noteOn && event.data2 > 0 {
                channels[Int(event.channel)].insert(event.data1)
            } else {
                channels[Int(event.channel)].remove(event.data1)
            }
            return
        }
        switch event.kind {
        case .controlChange where event.data1 == 120 || event.data1 == 123:
            releaseChannel(event.channel)
        case .reset:
            self = HeldNotes()
        default:
            break
        }
    }

    /// Records `note` on `channel` (0...15) as held.
    @inlinable
    public mutating func hold(channel: UInt8, note: UInt8) {
        channels[Int(channel & 15)].insert(note)
    }

    /// Records `note` on `channel` (0...15) as no longer held.
    @inlinable
    public mutating func release(channel: UInt8, note: UInt8) {
        channels[Int(channel & 15)].remove(note)
    }

    /// Whether `note` on `channel` (0...15) is held.
    @inlinable
    public func isHeld(channel: UInt8, note: UInt8) -> Bool {
        channels[Int(channel & 15)].contains(note)
    }

    /// The notes held on `channel` (0...15).
    @inlinable
    public func notes(onChannel channel: UInt8) -> NoteSet {
        channels[Int(channel & 15)]
    }

    /// Whether any note on any channel is held.
    package var isEmpty: Bool {
        var channel = 0
        while channel < 16 {
            if !channels[channel].isEmpty { return false }
            channel += 1
        }
        return true
    }

    /// The number of held notes.
    package var count: Int {
        var total = 0
        var channel = 0
        while channel < 16 {
            total += channels[channel].count
            channel += 1
        }
        return total
    }

    /// Calls `body` with a note-off for every held note, lowest channel and note first, and
    /// forgets them all.
    package mutating func releaseAll(_ body: (MIDIEvent) -> Void) {
        var channel = 0
        while channel < 16 {
            channels[channel].forEachNote { body(.noteOff(channel: UInt8(channel), note: $0)) }
            channels[channel] = NoteSet()
            channel += 1
        }
    }

    /// Calls `body` with each held note of `channel` (0...15), lowest first.
    func forEachHeld(channel: UInt8, _ body: (UInt8) -> Void) {
        channels[Int(channel & 15)].forEachNote(body)
    }

    @usableFromInline
    mutating func releaseChannel(_ channel: UInt8) {
        guard channel < 16 else { return }
        channels[Int(channel)] = NoteSet()
    }

    package static func == (lhs: HeldNotes, rhs: HeldNotes) -> Bool {
        var channel = 0
        while channel < 16 {
            if lhs.channels[channel] != rhs.channels[channel] { return false }
            channel += 1
        }
        return true
    }
}

/// A set of MIDI note numbers (0...127) as 128 bits: one channel's notes. ``HeldNotes`` is 16
/// of them; the recovery message (`/aseqosc/held`) carries one.
package struct NoteSet: Equatable, Sendable, BitwiseCopyable {
    /// Notes 0...63, bit `n` for note `n`, and 64...127, bit `n - 64`.
    @usableFromInline var low: UInt64 = 0
    @usableFromInline var high: UInt64 = 0

    @inlinable
    public init() {}

    /// Whether `note` (0...127; the top bit is ignored) is in the set.
    @inlinable @inline(__always)
    public func contains(_ note: UInt8) -> Bool {
        (note & 64 == 0 ? low : high) & Self.bit(note) != 0
    }

    @inlinable @inline(__always)
    public mutating func insert(_ note: UInt8) {
        if note & 64 == 0 { low |= Self.bit(note) } else { high |= Self.bit(note) }
    }

    @inlinable @inline(__always)
    public mutating func remove(_ note: UInt8) {
        if note & 64 == 0 { low &= ~Self.bit(note) } else { high &= ~Self.bit(note) }
    }

    @inlinable
    public var isEmpty: Bool { low | high == 0 }

    package var count: Int { low.nonzeroBitCount + high.nonzeroBitCount }

    /// Calls `body` with each note, lowest first.
    package func forEachNote(_ body: (UInt8) -> Void) {
        var bits = low
        while bits != 0 {
            body(UInt8(bits.trailingZeroBitCount))
            bits &= bits &- 1
        }
        bits = high
        while bits != 0 {
            body(UInt8(64 + bits.trailingZeroBitCount))
            bits &= bits &- 1
        }
    }

    /// `note`'s bit in its word.
    @inlinable @inline(__always)
    static func bit(_ note: UInt8) -> UInt64 { 1 &<< UInt64(note & 63) }
}
