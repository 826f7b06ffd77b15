import MIDI
import Storage

/// What a chain leaf emitted for each note it holds: for every incoming (channel, note) of the
/// route, the (channel, note) of the note-on it sent, so the note-off can end exactly that note
/// whatever happened to the operators in between.
///
/// A fixed 16 x 128-entry table, allocated once; copies of a chain share it (a ``Route`` gives
/// its chain fresh tables).
package final class NoteTable: @unchecked Sendable {
    // @unchecked Sendable: mutated only by the one thread running the route that owns it.

    static let entries = 16 * 128
    /// No note-on sent for this key.
    private static let none = UInt32.max

    /// Index `channel << 7 | note` of the route's input; value `port << 11 | channel << 7 | note`
    /// emitted (the port, so that a note-off made up on release names the input it ends).
    private let emitted = FixedBuffer(repeating: none, count: entries)
    /// The number of keys held.
    private(set) var count = 0

    /// The key of `event`'s (channel, note) as it arrives at the route; packed as an emitted
    /// value is without its port.
    @inline(__always)
    static func key(of event: MIDIEvent) -> Int {
        Int(event.channel & 15) << 7 | Int(event.data1 & 127)
    }

    /// What was emitted for `key`, as `channel << 7 | note` (without the port), or `nil`.
    func emitted(for key: Int) -> Int? {
        let value = emitted[key]
        return value == Self.none ? nil : Int(value & 0x7FF)
    }

    /// Records that the note-on for `key`, from input `port`, went out as (`channel`, `note`).
    func record(_ key: Int, channel: UInt8, note: UInt8, port: UInt16) {
        if emitted[key] == Self.none { count += 1 }
        emitted[key] = UInt32(port) << 11 | UInt32(channel & 15) << 7 | UInt32(note & 127)
    }

    /// The (channel, note, port) packed in an emitted value.
    @inline(__always)
    static func unpack(_ value: Int) -> (channel: UInt8, note: UInt8, port: UInt16) {
        (UInt8(value >> 7 & 15), UInt8(value & 127), UInt16(truncatingIfNeeded: value >> 11))
    }

    /// Points `event` at the (channel, note) packed in `emitted`, keeping its port: how every
    /// path turns a note-end, or the end of a re-struck key, into the note that was sent.
    @inline(__always)
    static func aim(_ event: inout MIDIEvent, at emitted: Int) {
        let (channel, note, _) = unpack(emitted)
        event.channel = channel
        event.data1 = note
    }

    /// What was emitted for `key` when it is not the (channel, note) `event` goes out as: the
    /// note a re-struck key has to end first. Nil when the key holds nothing or the same note.
    @inline(__always)
    func otherNote(for key: Int, than event: MIDIEvent) -> Int? {
        guard let previous = emitted(for: key), previous != Self.key(of: event) else { return nil }
        return previous
    }

    /// Forgets `key`; returns what was emitted for it, or `nil`.
    func remove(_ key: Int) -> Int? {
        let value = emitted[key]
        guard value != Self.none else { return nil }
        emitted[key] = Self.none
        count -= 1
        return Int(value)
    }

    /// Calls `body` with every held (key, emitted), lowest key first, and forgets them.
    func removeAll(_ body: (_ key: Int, _ emitted: Int) -> Void) {
        var key = 0
        while key < Self.entries && count > 0 {
            if let value = remove(key) { body(key, value) }
            key += 1
        }
    }
}
