import BridgeSession
import MIDI
import Recovery
import Storage

/// When each note of each output port was last switched on and off, including notes scheduled on
/// the sequencer queue for later, so that stopping can silence every note that may be sounding
/// and no other.
///
/// Stopping removes what is still waiting in the queue, so at a cutoff time everything due
/// before it has played and nothing after it will. A note may be sounding at the cutoff when a
/// note-on for it was due by then, unless its latest note-off was also due by then and came after
/// its latest note-on. That answer is exact for the usual cases (a note-on now and its note-off
/// scheduled later: sounding; a note-on scheduled later: silent) and errs only towards a
/// note-off that was not needed, never towards a note left on.
///
/// Times are monotonic nanoseconds. Owned by the OSC thread; nothing here allocates after `init`.
final class OutputNoteLedger {
    let ports: Int
    // Per port, channel and note (index port * 2048 + channel * 128 + note): the earliest
    // note-on since the note was last known silent (`.max`: none), the latest note-on, and the
    // latest note-off.
    private let onFrom: FixedBuffer<UInt64>
    private let lastOn: FixedBuffer<UInt64>
    private let lastOff: FixedBuffer<UInt64>

    static let notesPerPort = 16 * 128

    init(ports: Int) {
        self.ports = ports
        let count = max(ports, 1) * Self.notesPerPort
        onFrom = FixedBuffer(repeating: .max, count: count)
        lastOn = FixedBuffer(repeating: 0, count: count)
        lastOff = FixedBuffer(repeating: 0, count: count)
    }

    /// Records `event` (for output `event.port`) taking effect at `time`; `now` is the time it
    /// was handed to the output (equal to `time` unless scheduled for later).
    @inline(__always)
    package func record(_ event: MIDIEvent, at time: UInt64, now: UInt64) {
        let port = Int(event.port)
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
