import Endpoints
import MIDI
import OSC
import OSCTransport
import Platform
import Recovery

/// Note recovery at the OSC input (docs/OSC.md, "Recovery"): whose notes the packet being
/// handled carries, recorded for the ``RecoveryListener``; the `/aseqosc/held` messages; and a
/// sender heard anew asked for the values it sent meanwhile.
package final class RecoveryIntake: @unchecked Sendable {
    // @unchecked Sendable: used by the OSC thread only; status reads the listener's atomics.
    /// The senders that announce their held notes (`recovery: true` on an aseqosc destination).
    package let listener = RecoveryListener()
    /// Whose events ``record(_:now:)`` records: the sender of the packet being handled, or nobody.
    private var recording = Recording.nobody

    init() {}

    /// The packet now handled is `sender`'s.
    @inline(__always)
    func begin(from sender: PacketSource, now: UInt64) {
        // One look at an empty table for every packet when no sender uses recovery.
        recording = Recording(listener.isEmpty ? nil : listener.index(of: sender, now: now), sender)
    }

    /// Records a translated event for note recovery, as the packet's sender says.
    @inline(__always)
    func record(_ event: MIDIEvent, now: UInt64) {
        switch recording {
        case .followed(let index): listener.record(event, sender: index, now: now)
        case .unfollowed(let source): listener.remember(event, from: source, now: now)
        case .nobody: break
        }
    }

    /// An `/aseqosc/held` from `sender`: the notes of its channel it no longer holds end
    /// (`release`), and a sender heard anew is asked for its values through `udp`.
    func received(
        _ message: OSCMessageView, from sender: PacketSource, now: UInt64, udp: UDPReceiver?, log: Logger,
        release: (MIDIEvent) -> Void
    ) {
        guard let held = HeldNotesMessage(message) else {
            listener.malformed.add(1, ordering: .relaxed)
            log.debug("osc input: \(message.addressString) from \(sender): arguments do not fit the address")
            return
        }
        recording = .nobody
        if listener.received(held, from: sender, now: now, release: release) {
            askForValues(sender, udp: udp, log: log)
        }
        // What follows in the same bundle is the now followed sender's.
        recording = Recording(listener.index(of: sender, now: now), sender)
    }

    /// When a followed sender falls silent next (monotonic ns), `.max` if none is followed.
    var nextDeadline: UInt64 { listener.nextDeadline }

    /// Ends everything of the senders gone silent by `now`, as if their note-offs had come.
    func expire(now: UInt64, release: (MIDIEvent) -> Void) {
        recording = .nobody
        listener.expire(now: now, release: release)
    }

    /// Asks a recovery sender heard anew for the values it sent meanwhile: `/aseqosc/sync` back
    /// to the address it sends from, which its destination's socket reads (docs/OSC.md).
    private func askForValues(_ sender: PacketSource, udp: UDPReceiver?, log: Logger) {
        withUnsafeTemporaryAllocation(byteCount: 32, alignment: 4) { buffer in
            let request = UnsafeRawBufferPointer(rebasing: buffer.prefix(SyncRequestMessage.write(into: buffer)))
            if request.isEmpty || udp?.reply(request, to: sender) != true {
                log.debug("osc input: could not ask \(sender) for its last values")
            }
        }
    }
}

/// Whose events the OSC input records for note recovery.
private enum Recording {
    /// A followed sender, by its index in the listener.
    case followed(Int)
    /// A sender not followed: its notes are remembered, in case its first held-notes message
    /// was lost on the way.
    case unfollowed(PacketSource)
    /// Nobody: the note-offs recovery itself sends.
    case nobody

    /// `source`, followed at `index` or not.
    @inline(__always)
    package init(_ index: Int?, _ source: PacketSource) {
        if let index { self = .followed(index) } else { self = .unfollowed(source) }
    }
}
