import Config
import MIDI
import OSCMapping
import Storage
import Synchronization

/// One destination's side of note recovery (docs/OSC.md, "Recovery"): the notes it was sent
/// and not yet released, and when it is due its next `/aseqosc/held` messages or repeated
/// note-offs. Used only by the thread that consumes the route (no locks).
///
/// With `held-notes`, a phase starts with the first note-on after a quiet time: a message for
/// its channel goes out before the note, so that the receiver knows the sender before the note
/// arrives. Every ``interval`` after that, each channel played in the phase is sent its held
/// notes; a second after the last note-off the phase ends and the destination is quiet again.
/// The messages go five times a period, so only ten lost in a row look like silence to a
/// receiver (which waits two periods).
package final class RecoveryAnnouncer {
    // Not Sendable: the input thread's, and the owner's while that thread is paused.
    package let mode: NoteRecovery

    /// How often the held notes (or a repeated note-off) go out while due.
    static let interval: UInt64 = 100_000_000
    /// The period announced: the longest the sender stays silent while it holds notes.
    static let periodMilliseconds: Int32 = 500
    /// How long the held notes keep going out after the last note-off, to repair that one too.
    static let tail: UInt64 = 1_000_000_000
    /// How many times a note-off is sent again with `note-offs`.
    static let repeats: UInt8 = 2
    /// The note-offs waiting to be repeated; an older one gives way to a newer one.
    static let repeatCapacity = 64

    /// The channels played in this phase (bit `c`), each sent its held notes while it lasts.
    private var inPlay: UInt16 = 0
    /// When the phase ends: `.max` while notes are held.
    private var phaseEnds: UInt64 = .max
    /// When messages are due next; `.max` when quiet.
    package private(set) var nextDue: UInt64 = .max
    /// The note-offs in `pendingRepeats` still to be repeated, and the slot the next one takes.
    private var repeatCount = 0
    private var nextRepeat = 0
    /// The notes held.
    private var held = HeldNotes()
    private let pendingRepeats = FixedBuffer<(event: MIDIEvent, remaining: UInt8)>(
        repeating: (MIDIEvent(.noteOff), 0), count: repeatCapacity)

    /// `/aseqosc/held` messages sent, or note-offs sent again (any thread reads it).
    package let sentCount = Atomic<Int>(0)

    package init(mode: NoteRecovery) {
        self.mode = mode
    }

    /// The held-notes message that must go before `event`, if it starts a note after a quiet
    /// time (the receiver then knows this sender before the note arrives).
    package func opening(_ event: MIDIEvent) -> HeldNotesMessage? {
        guard mode == .heldNotes, event.kind == .noteOn, event.velocity > 0, nextDue == .max else {
            return nil
        }
        sentCount.add(1, ordering: .relaxed)
        return message(channel: event.channel)
    }

    private func message(channel: UInt8) -> HeldNotesMessage {
        HeldNotesMessage(
            periodMilliseconds: Self.periodMilliseconds, channel: channel, notes: held.notes(onChannel: channel))
    }

    /// Records an event that went to the destination, at `now`.
    package func sent(_ event: MIDIEvent, now: UInt64) {
        guard event.kind == .noteOn || event.kind == .noteOff else { return }
        let channel = Int(event.channel & 15)
        let note = event.note & 127
        switch mode {
        case .off:
            return
        case .heldNotes:
            held.track(event)
            if event.endsNote {
                if phaseEnds == .max && held.isEmpty { phaseEnds = now &+ Self.tail }
            } else {
                inPlay |= 1 << UInt16(channel)
                phaseEnds = .max
                if nextDue == .max { nextDue = now &+ Self.interval }
            }
        case .repeatedNoteOffs:
            cancelRepeats(channel: UInt8(channel), note: note)
            guard event.endsNote else { return }
            let slot = nextRepeat
            if pendingRepeats[slot].remaining == 0 { repeatCount += 1 }
            pendingRepeats[slot] = (event, Self.repeats)
            nextRepeat = (slot + 1) % Self.repeatCapacity
            if nextDue == .max { nextDue = now &+ Self.interval }
        }
    }

    /// A note played again is not ended by a note-off repeated from before.
    private func cancelRepeats(channel: UInt8, note: UInt8) {
        guard repeatCount > 0 else { return }
        var slot = 0
        while slot < Self.repeatCapacity {
            let pending = pendingRepeats[slot]
            if pending.remaining > 0 && pending.event.channel & 15 == channel && pending.event.note & 127 == note {
                pendingRepeats[slot].remaining = 0
                repeatCount -= 1
            }
            slot += 1
        }
    }

    /// Sends what is due at `now`: the held notes of every channel in play (`message`), or the
    /// note-offs to repeat (`noteOff`, which must not come back through ``sent(_:now:)``).
    package func sendDue(now: UInt64, message: (HeldNotesMessage) -> Void, noteOff: (MIDIEvent) -> Void) {
        guard nextDue <= now else { return }
        switch mode {
        case .off:
            nextDue = .max
        case .heldNotes:
            sendHeld(message)
            if phaseEnds <= now {
                inPlay = 0
                phaseEnds = .max
                nextDue = .max
            } else {
                nextDue = now &+ Self.interval
            }
        case .repeatedNoteOffs:
            var slot = 0
            while slot < Self.repeatCapacity && repeatCount > 0 {
                if pendingRepeats[slot].remaining > 0 {
                    noteOff(pendingRepeats[slot].event)
                    sentCount.add(1, ordering: .relaxed)
                    pendingRepeats[slot].remaining -= 1
                    if pendingRepeats[slot].remaining == 0 { repeatCount -= 1 }
                }
                slot += 1
            }
            nextDue = repeatCount > 0 ? now &+ Self.interval : .max
        }
    }

    /// Sends the held notes of every channel in play now, out of turn (after the note-offs of a
    /// stop or a reload, so a receiver repairs a lost one at once).
    package func sendHeld(_ message: (HeldNotesMessage) -> Void) {
        guard mode == .heldNotes else { return }
        var channel: UInt8 = 0
        while channel < 16 {
            if inPlay & (1 << UInt16(channel)) != 0 {
                message(self.message(channel: channel))
                sentCount.add(1, ordering: .relaxed)
            }
            channel += 1
        }
    }
}
