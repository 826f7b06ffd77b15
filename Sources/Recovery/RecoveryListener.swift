import Endpoints
import MIDI
import OSCMapping
import OSCTransport
import Storage
import Synchronization

/// The OSC input's side of note recovery (docs/OSC.md, "Recovery"): the senders that announce
/// their held notes, what each of them has sounding here, and when each was last heard from.
///
/// A sender is known from its first `/aseqosc/held` message on; from then on its note-ons and
/// note-offs (as translated, before the OSC input's operators) are recorded by channel and
/// note. The notes of senders not followed are remembered for a while in a ring, so that a
/// sender whose opening message was lost is followed with the notes it played before the next
/// one (without them, a note-off lost then would leave its note stuck). A held-notes message
/// ends each note of its channel it does not list, unless that note's note-on arrived within ``grace`` of it (it may have passed the message on the way);
/// a sender silent for twice its period has everything of it ended and is forgotten.
///
/// A sender heard anew, for the first time since this listener started or for the first time
/// since it fell silent with notes sounding, may have sent values meanwhile that never arrived:
/// ``received(_:from:now:release:)`` says so, and the OSC input asks it for them
/// (`/aseqosc/sync`, which a destination with `sync: ["recovery"]` answers). A sender that ended
/// its phase cleanly is not asked again when it plays on. Used only by the OSC thread; the
/// counters are read by `status`.
package final class RecoveryListener {
    /// The most senders followed at once; a further one is counted and not followed.
    package static let capacity = 16
    /// How long a note-on must have arrived before a held-notes message that does not list it.
    static let grace: UInt64 = 30_000_000

    /// A class: its two tables are ~Copyable, freed with it when the sender is forgotten.
    private final class Sender {
        let source: PacketSource
        var period: UInt64
        var lastHeard: UInt64
        /// By `channel * 128 + note`: the output the note sounds on, or `silent`.
        let outputs = FixedBuffer(repeating: RecoveryListener.silent, count: 16 * 128)
        /// By `channel * 128 + note`: when its note-on arrived.
        let started = FixedBuffer(repeating: UInt64(0), count: 16 * 128)

        package init(source: PacketSource, period: UInt64, lastHeard: UInt64) {
            self.source = source
            self.period = period
            self.lastHeard = lastHeard
        }
    }
    static let silent = UInt16.max

    private var senders: [Sender] = []
    /// Senders heard since start that have not fallen silent with notes sounding, oldest first;
    /// past ``knownCapacity`` the oldest is forgotten (and asked again when it comes back).
    private var known: [PacketSource] = []
    static let knownCapacity = 64

    package init() {}

    /// A note-on or note-off of a sender not followed, remembered in ``recent`` as it came (what
    /// it means is worked out only if its sender is followed).
    private struct HeardNote: BitwiseCopyable {
        var source: PacketSource
        var event: MIDIEvent
        var at: UInt64
    }
    /// How many note events of senders not followed are remembered: those of the last 100 ms
    /// (the time to a sender's next held-notes message) at up to 2,560 notes a second.
    static let recentCapacity = 256
    /// The latest of them, oldest first; a new one pushes out the oldest.
    private var recent = FixedRing<HeardNote>(capacity: recentCapacity)

    /// Held-notes messages handled (well-formed; ``malformed`` counts the others).
    package let messages = Atomic<Int>(0)
    /// Note-offs sent because a held-notes message did not list a sounding note.
    package let repaired = Atomic<Int>(0)
    /// Note-offs sent because their sender fell silent.
    package let releasedSilent = Atomic<Int>(0)
    /// Senders that went silent with notes sounding or not.
    package let sendersLost = Atomic<Int>(0)
    /// Senders not followed: ``capacity`` were already.
    package let sendersRefused = Atomic<Int>(0)
    /// Messages at `/aseqosc/held` whose arguments do not fit it.
    package let malformed = Atomic<Int>(0)
    /// Senders asked for their last values: heard anew (see ``received(_:from:now:release:)``).
    package let sendersAsked = Atomic<Int>(0)
    /// How many senders are followed now.
    package let following = Atomic<Int>(0)

    /// Whether no sender is followed: the per-packet check of an input no sender uses this with.
    // From the atomic `status` reads too: one load, not a look into the senders cell.
    package var isEmpty: Bool { following.load(ordering: .relaxed) == 0 }

    /// The followed sender `source`, if it is one; counts as hearing from it.
    @inline(__always)
    package func index(of source: PacketSource, now: UInt64) -> Int? {
        var index = 0
        while index < senders.count {
            if senders[index].source == source {
                senders[index].lastHeard = now
                return index
            }
            index += 1
        }
        return nil
    }

    /// Records a translated event of sender `index`, arrived at `now`.
    @inline(__always)
    package func record(_ event: MIDIEvent, sender index: Int, now: UInt64) {
        record(event, in: senders[index], now: now)
    }

    @inline(__always)
    private func record(_ event: MIDIEvent, in sender: Sender, now: UInt64) {
        guard event.kind == .noteOn || event.kind == .noteOff else { return }
        let key = Int(event.channel & 15) << 7 | Int(event.note & 127)
        if event.endsNote {
            sender.outputs[key] = Self.silent
        } else {
            sender.outputs[key] = event.port
            sender.started[key] = now
        }
    }

    /// Remembers a translated event of `source`, a sender not followed, arrived at `now`: if its
    /// held-notes message comes soon, it is followed with this note.
    @inline(__always)
    package func remember(_ event: MIDIEvent, from source: PacketSource, now: UInt64) {
        guard event.kind == .noteOn || event.kind == .noteOff else { return }
        if recent.isFull { recent.removeFirst() }
        recent.append(HeardNote(source: source, event: event, at: now))
    }

    /// Handles a held-notes message from `source` at `now`: follows the sender if it is new, and
    /// passes `release` a note-off for each of its notes on the channel the message does not
    /// list. Returns whether the sender is heard anew and should be asked for its last values.
    @discardableResult
    package func received(
        _ message: HeldNotesMessage, from source: PacketSource, now: UInt64, release: (MIDIEvent) -> Void
    ) -> Bool {
        messages.add(1, ordering: .relaxed)
        let period = UInt64(message.periodMilliseconds) * 1_000_000
        var heardAnew = false
        let followed: Int?
        if let index = index(of: source, now: now) {
            followed = index
        } else {
            followed = follow(source, period: period, now: now)
            heardAnew = followed != nil && learn(source)
        }
        guard let index = followed else { return false }
        senders[index].period = period
        let channel = message.channel & 15
        let base = Int(channel) << 7
        var note = 0
        while note < 128 {
            let output = senders[index].outputs[base + note]
            if output != Self.silent && !message.notes.contains(UInt8(note))
                && senders[index].started[base + note] &+ Self.grace <= now
            {
                senders[index].outputs[base + note] = Self.silent
                repaired.add(1, ordering: .relaxed)
                release(MIDIEvent(.noteOff, channel: channel, data1: UInt8(note), port: output, timestamp: now))
            }
            note += 1
        }
        if heardAnew { sendersAsked.add(1, ordering: .relaxed) }
        return heardAnew
    }

    /// Adds `source` to the senders known; false if it was already.
    private func learn(_ source: PacketSource) -> Bool {
        guard !known.contains(source) else { return false }
        if known.count == Self.knownCapacity { known.removeFirst() }
        known.append(source)
        return true
    }

    /// When the next sender falls silent (monotonic ns), if it says nothing before; `.max`
    /// with none followed.
    package var nextDeadline: UInt64 {
        var earliest = UInt64.max
        for sender in senders { earliest = min(earliest, sender.lastHeard &+ 2 &* sender.period) }
        return earliest
    }

    /// Ends everything of each sender silent for twice its period at `now`, and forgets it.
    package func expire(now: UInt64, release: (MIDIEvent) -> Void) {
        var index = senders.count - 1
        while index >= 0 {
            let sender = senders[index]
            if sender.lastHeard &+ 2 &* sender.period < now {
                var key = 0
                var wasSounding = false
                while key < 16 * 128 {
                    if sender.outputs[key] != Self.silent {
                        wasSounding = true
                        releasedSilent.add(1, ordering: .relaxed)
                        release(
                            MIDIEvent(
                                .noteOff, channel: UInt8(key >> 7), data1: UInt8(key & 127), port: sender.outputs[key],
                                timestamp: now))
                    }
                    key += 1
                }
                sendersLost.add(1, ordering: .relaxed)
                // Cut off mid-phase: what it sent meanwhile may be lost too.
                if wasSounding { known.removeAll { $0 == sender.source } }
                senders.remove(at: index)
                following.store(senders.count, ordering: .relaxed)
            }
            index -= 1
        }
    }

    /// Starts following `source` (an allocation, once per sender, not per event).
    private func follow(_ source: PacketSource, period: UInt64, now: UInt64) -> Int? {
        guard senders.count < Self.capacity else {
            sendersRefused.add(1, ordering: .relaxed)
            return nil
        }
        let sender = Sender(source: source, period: period, lastHeard: now)
        adoptRecent(of: sender, now: now)
        senders.append(sender)
        following.store(senders.count, ordering: .relaxed)
        return senders.count - 1
    }

    /// Gives a newly followed sender what it played in the two periods before, oldest first:
    /// the notes still sounding of it, which its first message then repairs like any other.
    private func adoptRecent(of sender: Sender, now: UInt64) {
        var position = 0
        while position < recent.count {
            let heard = recent[position]
            if heard.source == sender.source && heard.at &+ 2 &* sender.period >= now {
                record(heard.event, in: sender, now: heard.at)
            }
            position += 1
        }
    }
}
