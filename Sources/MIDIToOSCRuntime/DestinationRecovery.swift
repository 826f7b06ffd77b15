import Config
import MIDI
import Platform
import Recovery

/// Note recovery for a route's destinations (docs/OSC.md, "Recovery"): each destination with
/// `recovery` announces its held notes (``RecoveryAnnouncer``) or repeats its note-offs, and
/// reads what its receiver sends back: an aseqosc receiver that hears it anew asks for its
/// last values (`/aseqosc/sync`), which a destination with `sync: ["recovery"]` gets.
package final class DestinationRecovery: @unchecked Sendable {
    // @unchecked Sendable: the input thread's (or the reloading thread's while it is paused).

    private let destinations: [DestinationConfig]
    /// By destination index; nil: `recovery: false`.
    package let announcers: [RecoveryAnnouncer?]

    /// The announcers of the `destinations` that have `recovery`; nil when none has.
    init?(destinations: [DestinationConfig]) {
        let announcers = destinations.map { $0.recovery == .off ? nil : RecoveryAnnouncer(mode: $0.recovery) }
        guard announcers.contains(where: { $0 != nil }) else { return nil }
        self.destinations = destinations
        self.announcers = announcers
    }

    /// When a destination's recovery is due next (monotonic ns), `.max` if none is.
    var due: UInt64 {
        var earliest = UInt64.max
        for announcer in announcers { if let due = announcer?.nextDue, due < earliest { earliest = due } }
        return earliest
    }

    /// Sends `event` to `destination` through `sending`, after the held-notes message a note
    /// that starts a phase needs, and records what went.
    @inline(never)
    func send(
        _ event: MIDIEvent, to destination: Int, through sending: RouteSending, packet: UnsafeMutableRawBufferPointer
    ) -> Bool {
        guard let announcer = announcers[destination] else {
            return sending.send(event, to: destination, packet: packet)
        }
        if let opening = announcer.opening(event) { sending.queue(opening, to: destination) }
        guard sending.send(event, to: destination, packet: packet) else { return false }
        announcer.sent(event, now: MonotonicClock.now())
        return true
    }

    /// Sends what recovery has due at `now`, and reads what the receivers sent back; a
    /// destination asked for its values that may replay them is handed to `replays`, which
    /// `signal` then wakes the input thread for.
    func sendDue(
        now: UInt64, through sending: RouteSending, replays: DestinationReplays, signal: ReplaySignal?,
        packet: UnsafeMutableRawBufferPointer
    ) {
        for (destination, announcer) in announcers.enumerated() {
            guard let announcer else { continue }
            announcer.sendDue(
                now: now, message: { sending.queue($0, to: destination) },
                noteOff: { _ = sending.send($0, to: destination, packet: packet) })
            guard askedForValues(destination, sending: sending, into: packet),
                destinations[destination].sync.contains(.recovery), replays.request(destination, now: now)
            else { continue }
            signal?.raise()
        }
    }

    /// Reads what `destination`'s receiver sent back, at most 8 datagrams, so nothing piles up
    /// in the socket; whether one was `/aseqosc/sync`.
    private func askedForValues(
        _ destination: Int, sending: RouteSending, into packet: UnsafeMutableRawBufferPointer
    ) -> Bool {
        var asked = false
        var budget = 8
        while budget > 0, let size = sending.sender.receiveReply(from: destination, into: packet) {
            budget -= 1
            if SyncRequestMessage.isRequest(UnsafeRawBufferPointer(rebasing: packet.prefix(size))) { asked = true }
        }
        return asked
    }

    /// Queues every destination's held notes at once (after a release of all the route's
    /// notes): a receiver repairs a lost one of those note-offs now, and this may be the
    /// bridge's last word (a stop).
    func announceHeld(through sending: RouteSending) {
        for (destination, announcer) in announcers.enumerated() {
            announcer?.sendHeld { sending.queue($0, to: destination) }
        }
    }
}
