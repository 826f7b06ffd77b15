import Storage

/// Which notes are sounding, per channel: 16 x 128 bits, updated in place, never allocating.
///
/// Whoever forwards MIDI keeps one of these per source so that, when the source vanishes or a
/// route is removed, the note-offs it still owes can be sent: nothing is ever left hanging.
public struct HeldNotes: Sendable, Equatable {
    @usableFromInline var bits = TupleArray32<UInt64>(repeating: 0)

    @inlinable
    public init() {}

    /// Records what `event` does to the held notes: a note-on holds, a note-off (or note-on with
    /// velocity 0) releases, an all-notes-off or all-sound-off controller releases the channel.
    @inlinable @inline(__always)
    public mutating func track(_ event: MIDIEvent) {
        // Inlinable, and note events first: every event on the input path passes here.
        if event.kind == .noteOn || event.kind == .noteOff {
            guard event.channel < 16, event.data1 < 128 else { return }
            let (word, bit) = Self.position(channel: event.channel, note: event.data1)
            if event.kind == .noteOn && event.data2 > 0 {
                bits[word] |= 1 &<< bit
            } else {
                bits[word] &= ~(1 &<< bit)
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
    public mutating func hold(channel: UInt8, note: UInt8) {
        let (word, bit) = Self.position(channel: channel, note: note)
        bits[word] |= 1 &<< bit
    }

    /// Records `note` on `channel` (0...15) as no longer held.
    public mutating func release(channel: UInt8, note: UInt8) {
        let (word, bit) = Self.position(channel: channel, note: note)
        bits[word] &= ~(1 &<< bit)
    }

    /// Whether `note` on `channel` (0...15) is held.
    @inlinable
    public func isHeld(channel: UInt8, note: UInt8) -> Bool {
        let (word, bit) = Self.position(channel: channel, note: note)
        return bits[word] & (1 << bit) != 0
    }

    /// Whether any note on any channel is held.
    public var isEmpty: Bool {
        var word = 0
        while word < 32 {
            if bits[word] != 0 { return false }
            word += 1
        }
        return true
    }

    /// The number of held notes.
    public var count: Int {
        var total = 0
        var word = 0
        while word < 32 {
            total += bits[word].nonzeroBitCount
            word += 1
        }
        return total
    }

    /// Calls `body` with a note-off for every held note, lowest channel and note first, and
    /// forgets them all.
    public mutating func releaseAll(_ body: (MIDIEvent) -> Void) {
        var word = 0
        while word < 32 {
            var remaining = bits[word]
            while remaining != 0 {
                let bit = remaining.trailingZeroBitCount
                remaining &= remaining - 1
                let channel = UInt8(word / 2)
                let note = UInt8((word % 2) * 64 + bit)
                body(.noteOff(channel: channel, note: note))
            }
            bits[word] = 0
            word += 1
        }
    }

    /// Calls `body` with each held note of `channel` (0...15), lowest first.
    public func forEachHeld(channel: UInt8, _ body: (UInt8) -> Void) {
        var half = 0
        while half < 2 {
            var remaining = bits[Int(channel & 15) * 2 + half]
            while remaining != 0 {
                body(UInt8(half * 64 + remaining.trailingZeroBitCount))
                remaining &= remaining - 1
            }
            half += 1
        }
    }

    @usableFromInline
    mutating func releaseChannel(_ channel: UInt8) {
        guard channel < 16 else { return }
        bits[Int(channel) * 2] = 0
        bits[Int(channel) * 2 + 1] = 0
    }

    @inlinable
    static func position(channel: UInt8, note: UInt8) -> (Int, UInt64) {
        (Int(channel & 15) &* 2 &+ Int(note >> 6 & 1), UInt64(note & 63))
    }

    public static func == (lhs: HeldNotes, rhs: HeldNotes) -> Bool {
        var word = 0
        while word < 32 {
            if lhs.bits[word] != rhs.bits[word] { return false }
            word += 1
        }
        return true
    }
}
