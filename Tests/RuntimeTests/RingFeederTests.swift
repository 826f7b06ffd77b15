import MIDI
import Pipeline
import Testing

@testable import BridgeSession
@testable import MIDIToOSCRuntime
@testable import OSCToMIDIRuntime
@testable import Recovery
@testable import Status

/// The input side's pushes into a full ring: drops are counted, note-offs of sounding notes are
/// owed and pushed first once there is room, and nothing overtakes them.
@Suite struct RingFeederTests {
    static func drain(_ ring: SPSCRing<MIDIEvent>) -> [String] {
        var seen: [String] = []
        while let event = ring.pop() { seen.append("\(event.kind) \(event.channel) \(event.data1) \(event.data2)") }
        return seen
    }

    @Test func noteOffThatFindsTheRingFullIsPushedOnceThereIsRoom() {
        let ring = SPSCRing<MIDIEvent>(capacity: 2)
        let feeder = Feeder(ring: ring)
        #expect(feeder.push(.noteOn(channel: 0, note: 60, velocity: 100), now: 1))
        #expect(feeder.push(.controlChange(channel: 0, controller: 1, value: 5), now: 2))
        #expect(!feeder.push(.noteOff(channel: 0, note: 60, velocity: 64), now: 3))
        #expect(feeder.isOwing && ring.drops == 1 && feeder.noteOffsOwed == 1)

        feeder.payOwed(now: 4)
        #expect(feeder.isOwing, "still no room")
        #expect(Self.drain(ring) == ["note_on 0 60 100", "control_change 0 1 5"])
        feeder.payOwed(now: 5)
        #expect(!feeder.isOwing && feeder.noteOffsPaid == 1)
        #expect(Self.drain(ring) == ["note_off 0 60 0"])
        #expect(ring.drops == 1, "paying never counts a drop")
    }

    @Test func laterEventsWaitBehindOwedNoteOffs() {
        let ring = SPSCRing<MIDIEvent>(capacity: 2)
        let feeder = Feeder(ring: ring)
        _ = feeder.push(.noteOn(channel: 0, note: 60, velocity: 100), now: 1)
        _ = feeder.push(.noteOn(channel: 0, note: 62, velocity: 100), now: 2)
        #expect(!feeder.push(.noteOff(channel: 0, note: 60), now: 3))
        #expect(!feeder.push(.noteOn(channel: 0, note: 62, velocity: 0), now: 4))
        _ = ring.pop()  // room for one: the first owed note-off takes it, the other still waits
        #expect(!feeder.push(.noteOn(channel: 0, note: 60, velocity: 90), now: 5), "the new note-on waits (dropped)")
        #expect(ring.drops == 3)
        _ = Self.drain(ring)
        feeder.payOwed(now: 6)
        #expect(!feeder.isOwing)
        #expect(Self.drain(ring) == ["note_off 0 62 0"])
        #expect(feeder.push(.noteOn(channel: 0, note: 60, velocity: 90), now: 7))
        #expect(Self.drain(ring) == ["note_on 0 60 90"])
    }

    @Test func noteOffOfANoteWhoseNoteOnWasDroppedIsNotOwed() {
        let ring = SPSCRing<MIDIEvent>(capacity: 2)
        let feeder = Feeder(ring: ring)
        _ = feeder.push(.controlChange(channel: 0, controller: 1, value: 1), now: 1)
        _ = feeder.push(.controlChange(channel: 0, controller: 1, value: 2), now: 2)
        #expect(!feeder.push(.noteOn(channel: 0, note: 60, velocity: 100), now: 3))
        #expect(!feeder.push(.noteOff(channel: 0, note: 60), now: 4))
        #expect(!feeder.isOwing && feeder.noteOffsOwed == 0 && ring.drops == 2)
    }

    @Test func droppedAllNotesOffOwesTheNoteOffsOfItsChannelsSoundingNotes() {
        let ring = SPSCRing<MIDIEvent>(capacity: 4)
        let feeder = Feeder(ring: ring)
        _ = feeder.push(.noteOn(channel: 0, note: 60, velocity: 100), now: 1)
        _ = feeder.push(.noteOn(channel: 0, note: 64, velocity: 100), now: 2)
        _ = feeder.push(.noteOn(channel: 1, note: 67, velocity: 100), now: 3)
        _ = feeder.push(.controlChange(channel: 0, controller: 1, value: 1), now: 4)
        #expect(!feeder.push(.controlChange(channel: 0, controller: 123, value: 0), now: 5))
        #expect(feeder.noteOffsOwed == 2)
        _ = Self.drain(ring)
        feeder.payOwed(now: 6)
        #expect(Self.drain(ring) == ["note_off 0 60 0", "note_off 0 64 0"])
    }

    @Test func owedNoteOffsKeepTheirPort() {
        let ring = SPSCRing<MIDIEvent>(capacity: 2)
        let feeder = Feeder(ring: ring)
        for (index, port) in [UInt16(3), 200].enumerated() {
            var on = MIDIEvent.noteOn(channel: 2, note: 50, velocity: 100)
            on.port = port
            _ = feeder.push(on, now: UInt64(index))
        }
        for port in [UInt16(3), 200] {
            var off = MIDIEvent.noteOff(channel: 2, note: 50)
            off.port = port
            #expect(!feeder.push(off, now: 9))
        }
        _ = Self.drain(ring)
        feeder.payOwed(now: 10)
        var ports: [UInt16] = []
        while let event = ring.pop() {
            #expect(event.kind == .noteOff && event.timestamp == 10)
            ports.append(event.port)
        }
        #expect(ports == [3, 200])
    }

    /// A note-off refused by a full ring is owed only for a note that was pushed: one for a
    /// note that never started is not.
    @Test func onlyANotePushedIsOwedItsNoteOff() {
        let ring = SPSCRing<MIDIEvent>(capacity: 2)
        let feeder = Feeder(ring: ring)
        var played = MIDIEvent.noteOn(channel: 1, note: 60, velocity: 100)
        played.port = 7
        #expect(feeder.push(played, now: 1))
        _ = feeder.push(.controlChange(channel: 0, controller: 1, value: 1), now: 2)
        var neverStarted = MIDIEvent.noteOff(channel: 1, note: 61)
        neverStarted.port = 7
        #expect(!feeder.push(neverStarted, now: 3))
        #expect(!feeder.isOwing, "note 61 was never delivered")
        var end = MIDIEvent.noteOff(channel: 1, note: 60)
        end.port = 7
        #expect(!feeder.push(end, now: 4))
        #expect(feeder.isOwing && feeder.noteOffsOwed == 1)
        _ = Self.drain(ring)
        feeder.payOwed(now: 5)
        let paid = ring.pop()
        #expect(paid?.kind == .noteOff && paid?.port == 7 && paid?.channel == 1 && paid?.data1 == 60)
    }
}

/// A RingFeeder in a class, so that `#expect` can call its mutating methods.
final class Feeder {
    var feeder: RingFeeder

    init(ring: SPSCRing<MIDIEvent>) { feeder = RingFeeder(ring: ring) }

    func push(_ event: MIDIEvent, now: UInt64) -> Bool { feeder.push(event, now: now) }
    func payOwed(now: UInt64) { feeder.payOwed(now: now) }
    var isOwing: Bool { feeder.isOwing }
    var noteOffsOwed: Int { feeder.noteOffsOwed }
    var noteOffsPaid: Int { feeder.noteOffsPaid }
}
