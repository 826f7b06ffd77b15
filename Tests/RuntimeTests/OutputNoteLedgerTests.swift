import MIDI
import Testing

@testable import OSCToMIDIRuntime
@testable import Recovery
@testable import Status

/// Which notes stopping must silence, given what was sent now and what was scheduled for later:
/// every note that may sound at the cutoff, and (in the usual cases) no other.
@Suite struct OutputNoteLedgerTests {
    static func on(_ note: UInt8, port: UInt16 = 0) -> MIDIEvent {
        MIDIEvent(.noteOn, channel: 1, data1: note, data2: 100, port: port)
    }
    static func off(_ note: UInt8, port: UInt16 = 0) -> MIDIEvent {
        MIDIEvent(.noteOff, channel: 1, data1: note, port: port)
    }

    /// `event` handed to output `event.port` at `now` for `time`: sent now, or scheduled.
    static func record(_ ledger: OutputNoteLedger, _ event: MIDIEvent, at time: UInt64, now: UInt64) {
        if time == now {
            ledger.sent(event, port: Int(event.port), now: now)
        } else {
            ledger.scheduled(event, port: Int(event.port), at: time, now: now, inKernel: true)
        }
    }

    static func sounding(_ ledger: OutputNoteLedger, at cutoff: UInt64) -> [String] {
        var notes: [String] = []
        ledger.forEachMaySound(at: cutoff) { notes.append("\($0.port):\($0.channel):\($0.note)") }
        return notes
    }

    @Test func aNoteOnNowWithItsNoteOffScheduledLaterIsSoundingBeforeTheNoteOff() {
        let ledger = OutputNoteLedger(ports: 2)
        Self.record(ledger, Self.on(60, port: 1), at: 100, now: 100)
        Self.record(ledger, Self.off(60, port: 1), at: 5_000, now: 100)
        #expect(Self.sounding(ledger, at: 200) == ["1:1:60"])
        #expect(Self.sounding(ledger, at: 5_000) == [])
    }

    @Test func aNoteOnScheduledAfterTheCutoffNeverSounded() {
        let ledger = OutputNoteLedger(ports: 1)
        Self.record(ledger, Self.on(62), at: 3_000, now: 100)
        #expect(Self.sounding(ledger, at: 200) == [])
        #expect(Self.sounding(ledger, at: 3_000) == ["0:1:62"])
    }

    @Test func aNoteReleasedAndStruckAgainLaterIsSilentInBetweenOnceTheReleaseHasPlayed() {
        let ledger = OutputNoteLedger(ports: 1)
        Self.record(ledger, Self.on(64), at: 100, now: 100)
        Self.record(ledger, Self.off(64), at: 150, now: 150)
        Self.record(ledger, Self.on(64), at: 900, now: 200)
        #expect(Self.sounding(ledger, at: 300) == [])
        #expect(Self.sounding(ledger, at: 900) == ["0:1:64"])
    }

    @Test func whenInDoubtTheNoteCountsAsSounding() {
        // on 1, off 2, on 3, off 4, all scheduled at 0: at 2.5 the note is silent, but only the
        // latest times are kept, so the ledger asks for a note-off rather than risk a hung note.
        let ledger = OutputNoteLedger(ports: 1)
        for (time, event) in [(1_000, Self.on(65)), (2_000, Self.off(65)), (3_000, Self.on(65)), (4_000, Self.off(65))]
        {
            Self.record(ledger, event, at: UInt64(time), now: 0)
        }
        #expect(Self.sounding(ledger, at: 500) == [])
        #expect(Self.sounding(ledger, at: 2_500) == ["0:1:65"])
        #expect(Self.sounding(ledger, at: 4_000) == [])
    }

    @Test func allNotesOffAndVelocityZeroReleaseNotes() {
        let ledger = OutputNoteLedger(ports: 1)
        Self.record(ledger, Self.on(60), at: 10, now: 10)
        Self.record(ledger, Self.on(61), at: 10, now: 10)
        Self.record(ledger, MIDIEvent(.noteOn, channel: 1, data1: 61, data2: 0), at: 20, now: 20)
        #expect(Self.sounding(ledger, at: 30) == ["0:1:60"])
        Self.record(ledger, .controlChange(channel: 1, controller: 123, value: 0), at: 40, now: 40)
        #expect(Self.sounding(ledger, at: 50) == [])
    }
}
