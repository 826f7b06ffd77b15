import BridgeSession
import MIDI
import Recovery

/// What an output port would still need silenced: the notes whose note-on went out with no
/// note-off since, and the channels whose all-notes-off (bit `channel`) or all-sound-off (bit
/// `16 + channel`) went out with no note-on since. A full queue keeps room only for the
/// silencing events this says are needed.
struct NotesToSilence {
    private(set) var notes = HeldNotes()
    private var channelsReleased: UInt32 = 0

    /// Notes what `event`, gone out (or queued), changes.
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

    /// Whether the silencing event `event` (see ``PacedMIDIOutput/silencesNotes(_:)``) would
    /// silence anything: a note-off for a note on, an all-notes-off or all-sound-off for a
    /// channel not released by one since its last note-on.
    func needs(_ event: MIDIEvent) -> Bool {
        if event.kind == .controlChange { return channelsReleased & Self.channelBit(event) == 0 }
        return notes.isHeld(channel: event.channel & 15, note: event.data1 & 127)
    }

    private static func channelBit(_ event: MIDIEvent) -> UInt32 {
        1 << (UInt32(event.channel & 15) + (event.data1 == 120 ? 16 : 0))
    }
}
