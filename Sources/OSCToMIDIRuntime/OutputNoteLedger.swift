import MIDI
import Storage

/// What each output port's notes do, kept once for the two questions a silencing event (a
/// note-off, all-notes-off, all-sound-off) raises: whether a full queue must still make room
/// for it, and, at a stop, which notes may be sounding.
///
/// **Room for a silencing event**: it is needed while it would silence something: a note-off
/// for a note whose note-on went out (or was queued) with no note-off since, an all-notes-off or
/// all-sound-off for a channel with a note-on since the last of them. Scheduled events are
/// kept apart, in the order they were accepted: a scheduled silencing event is needed for a note
/// switched on by an earlier scheduled note-on, or sounding now and not yet silenced by one.
///
/// **At a stop**, stopping removes what is still waiting in the queue, so at a cutoff time
/// everything due before it has played and nothing after it will. A note may be sounding at the
/// cutoff when a note-on for it was due by then, unless its latest note-off was also due by then
/// and came after its latest note-on. That answer is exact for the usual cases (a note-on now
/// and its note-off scheduled later: sounding; a note-on scheduled later: silent) and errs only
/// towards a note-off that was not needed, never towards a note left on.
///
/// Times are monotonic nanoseconds. Owned by the OSC thread; nothing here allocates after `init`.
final class OutputNoteLedger {
    package let ports: Int
    // Per port, channel and note (index port * 2048 + channel * 128 + note): the earliest
    // note-on since the note was last known silent (`.max`: none), the latest note-on, and the
    // latest note-off.
    private let onFrom: FixedBuffer<UInt64>
    private let lastOn: FixedBuffer<UInt64>
    private let lastOff: FixedBuffer<UInt64>
    /// Per port: what the events that went out (or were queued) leave to silence.
    private let sent: FixedBuffer<NotesToSilence>
    /// Per port: the same for the scheduled events accepted, and the notes a silencing event
    /// was scheduled for since their last scheduled note-on.
    private let scheduled: FixedBuffer<NotesToSilence>
    private let scheduledSilenced: FixedBuffer<HeldNotes>

    static let notesPerPort = 16 * 128

    package init(ports: Int) {
        self.ports = ports
        let count = max(ports, 1) * Self.notesPerPort
        onFrom = FixedBuffer(repeating: .max, count: count)
        lastOn = FixedBuffer(repeating: 0, count: count)
        lastOff = FixedBuffer(repeating: 0, count: count)
        sent = FixedBuffer(repeating: NotesToSilence(), count: max(ports, 1))
        scheduled = FixedBuffer(repeating: NotesToSilence(), count: max(ports, 1))
        scheduledSilenced = FixedBuffer(repeating: HeldNotes(), count: max(ports, 1))
    }

    // MARK: Recording

    /// `event` went out of (or was queued for) output `port` at `now`.
    @inline(__always)
    func sent(_ event: MIDIEvent, port: Int, now: UInt64) {
        sent[port].track(event)
        record(event, port: port, at: now, now: now)
    }

    /// `event`, scheduled at `now` for `time`, was accepted for output `port`: by the kernel's
    /// queue (`inKernel`), where a note-on counts as gone out, or by the port's scheduled queue.
    func scheduled(_ event: MIDIEvent, port: Int, at time: UInt64, now: UInt64, inKernel: Bool) {
        // A scheduled note-off does not count as silencing anything yet, so a note-off sent now
        // for the same note still gets its reserve slot.
        if inKernel && event.kind == .noteOn && event.data2 > 0 { sent[port].track(event) }
        scheduled[port].track(event)
        if event.kind == .noteOn || event.kind == .noteOff {
            // A scheduled note-on leaves its note unsilenced; a silencing event silences it.
            var opposite = event
            opposite.kind = event.kind == .noteOn && event.data2 > 0 ? .noteOff : .noteOn
            opposite.data2 = opposite.kind == .noteOn ? 1 : 0
            scheduledSilenced[port].track(opposite)
        }
        record(event, port: port, at: time, now: now)
    }

    /// Records `event` for output `port` taking effect at `time`; `now` is when it was handed to
    /// the output (equal to `time` unless scheduled for later).
    @inline(__always)
    private func record(_ event: MIDIEvent, port: Int, at time: UInt64, now: UInt64) {
        guard port < ports, event.channel < 16 else { return }
        let base = port * Self.notesPerPort + Int(event.channel) * 128
        switch event.kind {
        case .noteOn where event.data2 > 0:
            guard event.data1 < 128 else { return }
            let key = base + Int(event.data1)
            if onFrom[key] == .max || (lastOff[key] > lastOn[key] && lastOff[key] <= now) {
                // Silent by now: whatever came before cannot sound at any later cutoff.
                onFrom[key] = time
            } else {
                onFrom[key] = min(onFrom[key], time)
            }
            lastOn[key] = max(lastOn[key], time)
        case .noteOn, .noteOff:
            guard event.data1 < 128 else { return }
            lastOff[base + Int(event.data1)] = max(lastOff[base + Int(event.data1)], time)
        case .controlChange where event.data1 == 120 || event.data1 == 123:
            var note = 0
            while note < 128 {
                if onFrom[base + note] != .max { lastOff[base + note] = max(lastOff[base + note], time) }
                note += 1
            }
        default:
            break
        }
    }

    // MARK: Asking

    /// Whether the silencing event `event`, sent now to output `port`, would silence anything.
    func needsNow(_ event: MIDIEvent, port: Int) -> Bool { sent[port].needs(event) }

    /// Whether the silencing event `event`, scheduled for output `port`, may be needed: its
    /// note was switched on by a scheduled note-on accepted before it with no silencing
    /// scheduled since, or is sounding from a note-on sent now and has no silencing scheduled
    /// yet; for all-notes-off and all-sound-off, unless one was scheduled for the channel with
    /// no note-on since.
    func needsScheduled(_ event: MIDIEvent, port: Int) -> Bool {
        if scheduled[port].needs(event) { return true }
        guard event.kind != .controlChange else { return false }
        return sent[port].needs(event)
            && !scheduledSilenced[port].isHeld(channel: event.channel & 15, note: event.data1 & 127)
    }

    /// Whether `note` on `channel` of output `port` may be sounding once everything due by
    /// `cutoff` has played and nothing after it will.
    func maySound(port: Int, channel: UInt8, note: UInt8, at cutoff: UInt64) -> Bool {
        guard port < ports, channel < 16, note < 128 else { return false }
        let key = port * Self.notesPerPort + Int(channel) * 128 + Int(note)
        guard onFrom[key] <= cutoff else { return false }
        return !(lastOff[key] <= cutoff && lastOff[key] > lastOn[key])
    }

    /// Calls `body` with a note-off (its port set) for every note that may be sounding at
    /// `cutoff`, lowest port, channel and note first.
    func forEachMaySound(at cutoff: UInt64, _ body: (MIDIEvent) -> Void) {
        var port = 0
        while port < ports {
            var index = 0
            while index < Self.notesPerPort {
                let channel = UInt8(index / 128)
                let note = UInt8(index % 128)
                if maySound(port: port, channel: channel, note: note, at: cutoff) {
                    var off = MIDIEvent.noteOff(channel: channel, note: note)
                    off.port = UInt16(port)
                    body(off)
                }
                index += 1
            }
            port += 1
        }
    }
}

/// One port's notes owed a silencing event: the notes whose note-on went out with no note-off
/// since, and the channels whose all-notes-off (bit `channel`) or all-sound-off (bit `16 +
/// channel`) went out with no note-on since.
private struct NotesToSilence {
    private var notes = HeldNotes()
    private var channelsReleased: UInt32 = 0

    @inline(__always)
    mutating func track(_ event: MIDIEvent) {
        switch event.kind {
        case .noteOn where event.data2 > 0:
            notes.track(event)
            let channel = UInt32(event.channel & 15)
            channelsReleased &= ~(1 << channel | 1 << (channel + 16))
        case .noteOn, .noteOff:
            notes.track(event)
        case .controlChange where event.data1 == 120 || event.data1 == 123:
            notes.track(event)
            channelsReleased |= Self.channelBit(event)
        default:
            break
        }
    }

    func needs(_ event: MIDIEvent) -> Bool {
        if event.kind == .controlChange { return channelsReleased & Self.channelBit(event) == 0 }
        return notes.isHeld(channel: event.channel & 15, note: event.data1 & 127)
    }

    private static func channelBit(_ event: MIDIEvent) -> UInt32 {
        1 << (UInt32(event.channel & 15) + (event.data1 == 120 ? 16 : 0))
    }
}
