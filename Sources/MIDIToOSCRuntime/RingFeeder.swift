import BridgeSession
import MIDI
import Pipeline
import Recovery
import Storage

/// The input thread's end of the ring: pushes events, and keeps every note-off that found the
/// ring full, to push before anything else as soon as there is room, so an overload drops
/// events (counted) but never leaves a note hanging downstream.
///
/// Only notes whose note-on got into the ring are owed an end: a dropped all-notes-off or
/// all-sound-off controller owes the note-offs of its channel's notes, and the note-off of a
/// note whose note-on was dropped is lost with it, so owed note-offs never take room from
/// other events for notes nobody hears.
///
/// Order is kept: while note-offs are owed, later events wait behind them, which means they
/// are dropped (and counted) until the owed ones are in. Otherwise a note struck again during
/// the overload would be cut short by its earlier note-off arriving after it.
package struct RingFeeder: ~Copyable {
    let ring: SPSCRing<MIDIEvent>
    /// Notes whose note-on went into the ring and whose end has not, per ALSA port number (an
    /// event's `port`).
    /// Fixed buffers rather than arrays: an array element changed per push pays a uniqueness check.
    private let sounding = FixedBuffer(repeating: HeldNotes(), count: 256)
    /// Note-offs owed, per ALSA port number.
    private let owed = FixedBuffer(repeating: HeldNotes(), count: 256)
    /// Which ports owe anything: bit `port & 63` of word `port >> 6`.
    private var owingPorts = TupleArray4<UInt64>(repeating: 0)
    /// Note ends refused by the full ring so far (note-offs, and the notes of dropped
    /// all-notes-off controllers) for notes that were sounding; each is pushed later.
    private(set) var noteOffsOwed = 0
    /// Owed note-offs pushed so far.
    private(set) var noteOffsPaid = 0

    init(ring: SPSCRing<MIDIEvent>) {
        self.ring = ring
    }

    /// Whether note-offs are waiting for room; the caller retries ``payOwed(now:)`` soon. Kept
    /// rather than computed from `owingPorts`: every push asks.
    private(set) var isOwing = false

    /// Pushes `event` behind any owed note-offs; false if it was dropped (and counted in the
    /// ring's drops). A dropped note-off, or note-on with velocity 0, is owed instead of lost.
    @inline(__always)
    mutating func push(_ event: MIDIEvent, now: UInt64) -> Bool {
        if isOwing {
            payOwed(now: now)
            if isOwing {
                ring.countDrop()
                owe(event)
                return false
            }
        }
        if ring.push(event) {
            recordSounding(event)
            return true
        }
        owe(event)
        return false
    }

    /// Records what `event`, pushed on its way downstream, does to the notes sounding there, so
    /// that a later note-off that finds the ring full is owed for its note.
    @inline(__always)
    private func recordSounding(_ event: MIDIEvent) {
        sounding[Int(event.port & 0xFF)].track(event)
    }

    /// Pushes owed note-offs, stamped `now`, while the ring has room.
    mutating func payOwed(now: UInt64) {
        let ring = ring  // the closure below must not read `self` while `owed` is being changed
        var word = 0
        while word < 4 {
            var remaining = owingPorts[word]
            while remaining != 0 {
                let port = word * 64 + remaining.trailingZeroBitCount
                remaining &= remaining - 1
                guard ring.hasRoom() else { return }
                var stillOwed = HeldNotes()
                var paid = 0
                owed[port].releaseAll { noteOff in
                    guard ring.hasRoom() else {
                        stillOwed.hold(channel: noteOff.channel, note: noteOff.data1)
                        return
                    }
                    var event = noteOff
                    event.port = UInt16(port)
                    event.timestamp = now
                    // Cannot fail: only this thread pushes, and the consumer only makes room.
                    _ = ring.push(event)
                    paid += 1
                }
                noteOffsPaid += paid
                owed[port] = stillOwed
                if stillOwed.isEmpty { owingPorts[word] &= ~(1 << UInt64(port & 63)) }
            }
            word += 1
        }
        isOwing = owingPorts[0] | owingPorts[1] | owingPorts[2] | owingPorts[3] != 0
    }

    /// Owes the ends of the sounding notes that the dropped `event` would have ended.
    private mutating func owe(_ event: MIDIEvent) {
        let port = Int(event.port & 0xFF)
        let channel = event.channel
        if event.endsNote {
            guard sounding[port].isHeld(channel: channel, note: event.data1) else { return }
            oweNoteOff(port: port, channel: channel, note: event.data1)
        } else if event.kind == .controlChange && (event.data1 == 120 || event.data1 == 123) {
            var note: UInt8 = 0
            while note < 128 {
                if sounding[port].isHeld(channel: channel, note: note) {
                    oweNoteOff(port: port, channel: channel, note: note)
                }
                note += 1
            }
        }
    }

    private mutating func oweNoteOff(port: Int, channel: UInt8, note: UInt8) {
        // Owed means no longer sounding: the owed note-off will end it.
        sounding[port].release(channel: channel, note: note)
        owed[port].hold(channel: channel, note: note)
        owingPorts[port >> 6] |= 1 << UInt64(port & 63)
        isOwing = true
        noteOffsOwed += 1
    }
}
