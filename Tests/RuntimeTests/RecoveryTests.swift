import Config
import Endpoints
import MIDI
import MIDIToOSC
import OSCMapping
import OSCToMIDI
import OSCTransport
import Testing

@testable import MIDIToOSCRuntime
@testable import OSCToMIDIRuntime
@testable import Recovery
@testable import Status

/// The two ends of note recovery by the clock: what a destination is sent and when, and what
/// the OSC input ends and when (docs/OSC.md, "Recovery").
@Suite struct RecoveryAnnouncerTests {
    static let ms: UInt64 = 1_000_000

    static func on(_ note: UInt8, channel: UInt8 = 0) -> MIDIEvent {
        .noteOn(channel: channel, note: note, velocity: 100)
    }
    static func off(_ note: UInt8, channel: UInt8 = 0) -> MIDIEvent { .noteOff(channel: channel, note: note) }

    /// What `sendDue` sends at `now`: "ch:notes" per message, "off ch:note" per note-off.
    static func due(_ announcer: RecoveryAnnouncer, at now: UInt64) -> [String] {
        var sent: [String] = []
        announcer.sendDue(
            now: now,
            message: { message in
                var notes: [String] = []
                message.notes.forEachNote { notes.append("\($0)") }
                sent.append("\(message.channel + 1):\(notes.joined(separator: ","))")
            }, noteOff: { sent.append("off \($0.channel + 1):\($0.note)") })
        return sent
    }

    @Test func aPhaseOpensBeforeItsFirstNoteRunsWhileNotesAreHeldAndEndsASecondAfterTheLast() {
        let announcer = RecoveryAnnouncer(mode: .heldNotes)
        #expect(announcer.nextDue == .max)
        let opening = announcer.opening(Self.on(60))
        #expect(opening?.channel == 0 && opening?.notes.isEmpty == true && opening?.periodMilliseconds == 500)
        announcer.sent(Self.on(60), now: 0)
        #expect(announcer.opening(Self.on(64)) == nil, "one opening per phase")
        announcer.sent(Self.on(64, channel: 2), now: 10 * Self.ms)
        #expect(announcer.nextDue == 100 * Self.ms)
        #expect(Self.due(announcer, at: 99 * Self.ms) == [])
        #expect(Self.due(announcer, at: 100 * Self.ms) == ["1:60", "3:64"])
        announcer.sent(Self.off(60), now: 150 * Self.ms)
        announcer.sent(Self.off(64, channel: 2), now: 160 * Self.ms)
        // The tail: a second of empty messages after the last note-off, then quiet.
        var time = announcer.nextDue
        var messages = 0
        while time != .max && time < 10_000 * Self.ms {
            #expect(Self.due(announcer, at: time) == ["1:", "3:"])
            messages += 1
            time = announcer.nextDue
        }
        #expect(time == .max)
        #expect((10...11).contains(messages), "\(messages) tail rounds")
        #expect(announcer.opening(Self.on(60)) != nil, "the next note opens a new phase")
        #expect(announcer.sentCount.load(ordering: .relaxed) == 1 + 2 + messages * 2 + 1)
    }

    @Test func aNoteHeldThroughTheTailKeepsThePhaseGoing() {
        let announcer = RecoveryAnnouncer(mode: .heldNotes)
        announcer.sent(Self.on(60), now: 0)
        announcer.sent(Self.off(60), now: 50 * Self.ms)
        announcer.sent(Self.on(62), now: 900 * Self.ms)
        for round in 1...30 { _ = Self.due(announcer, at: UInt64(round) * 100 * Self.ms) }
        #expect(announcer.nextDue == 3_100 * Self.ms)
        #expect(Self.due(announcer, at: 3_100 * Self.ms) == ["1:62"])
    }

    @Test func noteOffsAreRepeatedTwiceUnlessTheNoteIsPlayedAgain() {
        let announcer = RecoveryAnnouncer(mode: .repeatedNoteOffs)
        #expect(announcer.opening(Self.on(60)) == nil, "no held-notes messages in this mode")
        announcer.sent(Self.on(60), now: 0)
        #expect(announcer.nextDue == .max, "a note-on alone needs nothing repeated")
        announcer.sent(Self.off(60), now: 10 * Self.ms)
        announcer.sent(Self.off(61), now: 20 * Self.ms)
        #expect(Self.due(announcer, at: 110 * Self.ms) == ["off 1:60", "off 1:61"])
        announcer.sent(Self.on(61), now: 150 * Self.ms)
        #expect(Self.due(announcer, at: 210 * Self.ms) == ["off 1:60"])
        #expect(announcer.nextDue == .max)
        #expect(announcer.sentCount.load(ordering: .relaxed) == 3)
    }
}

@Suite struct RecoveryListenerTests {
    static let ms: UInt64 = 1_000_000
    static let sender = PacketSource(address: .v4(0x7F00_0001), port: 40_000)
    static let other = PacketSource(address: .v4(0x7F00_0001), port: 40_001)

    static func held(_ notes: [UInt8], channel: UInt8 = 0) -> HeldNotesMessage {
        var set = NoteSet()
        for note in notes { set.insert(note) }
        return HeldNotesMessage(periodMilliseconds: 500, channel: channel, notes: set)
    }

    static func ended(_ listener: RecoveryListener, _ body: (RecoveryListener, (MIDIEvent) -> Void) -> Void) -> [String]
    {
        var ended: [String] = []
        body(listener) { ended.append("\($0.port):\($0.channel + 1):\($0.note)") }
        return ended
    }

    @Test func aHeldNotesMessageEndsTheUnlistedNotesOfItsChannelAfterTheGrace() {
        let listener = RecoveryListener()
        #expect(listener.isEmpty)
        #expect(Self.ended(listener) { $0.received(Self.held([]), from: Self.sender, now: 0, release: $1) } == [])
        let index = listener.index(of: Self.sender, now: 1 * Self.ms)
        #expect(index == 0)
        listener.record(.noteOn(channel: 0, note: 60, velocity: 100), sender: 0, now: 1 * Self.ms)
        listener.record(MIDIEvent(.noteOn, channel: 0, data1: 62, data2: 90, port: 1), sender: 0, now: 2 * Self.ms)
        listener.record(.noteOn(channel: 1, note: 64, velocity: 100), sender: 0, now: 3 * Self.ms)
        listener.record(.noteOn(channel: 0, note: 67, velocity: 100), sender: 0, now: 90 * Self.ms)
        // 67 arrived 10 ms before: it may have passed this message on the way, and stays.
        let ended = Self.ended(listener) {
            $0.received(Self.held([]), from: Self.sender, now: 100 * Self.ms, release: $1)
        }
        #expect(ended == ["0:1:60", "1:1:62"])
        #expect(listener.repaired.load(ordering: .relaxed) == 2)
        let later = Self.ended(listener) {
            $0.received(Self.held([]), from: Self.sender, now: 200 * Self.ms, release: $1)
        }
        #expect(later == ["0:1:67"], "channel 2's note stays: the message was for channel 1")
        listener.record(.noteOff(channel: 1, note: 64), sender: 0, now: 210 * Self.ms)
        #expect(
            Self.ended(listener) {
                $0.received(Self.held([], channel: 1), from: Self.sender, now: 300 * Self.ms, release: $1)
            } == [])
    }

    @Test func aSenderSilentForTwicesItsPeriodHasItsNotesEndedAndIsForgotten() {
        let listener = RecoveryListener()
        _ = Self.ended(listener) { $0.received(Self.held([]), from: Self.sender, now: 0, release: $1) }
        _ = Self.ended(listener) { $0.received(Self.held([]), from: Self.other, now: 0, release: $1) }
        listener.record(.noteOn(channel: 3, note: 40, velocity: 1), sender: 0, now: 5 * Self.ms)
        #expect(listener.nextDeadline == 1_000 * Self.ms)
        // The other sender speaks up; this one's events count as hearing from it.
        _ = listener.index(of: Self.other, now: 800 * Self.ms)
        #expect(Self.ended(listener) { $0.expire(now: 1_000 * Self.ms, release: $1) } == [])
        #expect(Self.ended(listener) { $0.expire(now: 1_001 * Self.ms, release: $1) } == ["0:4:40"])
        #expect(listener.following.load(ordering: .relaxed) == 1)
        #expect(listener.index(of: Self.sender, now: 1_002 * Self.ms) == nil)
        #expect(listener.nextDeadline == 1_800 * Self.ms)
        #expect(listener.sendersLost.load(ordering: .relaxed) == 1)
        #expect(listener.releasedSilent.load(ordering: .relaxed) == 1)
    }

    @Test func atMostSixteenSendersAreFollowedAndTheRestCounted() {
        let listener = RecoveryListener()
        for port in 0..<20 {
            _ = Self.ended(listener) {
                $0.received(Self.held([]), from: PacketSource(address: .v4(1), port: UInt16(port)), now: 0, release: $1)
            }
        }
        #expect(listener.following.load(ordering: .relaxed) == RecoveryListener.capacity)
        #expect(listener.sendersRefused.load(ordering: .relaxed) == 4)
    }

    /// The opening message of a phase lost: the notes played before the next message are the
    /// sender's all the same, and a lost note-off among them is repaired. Another sender's notes,
    /// and what is older than two periods, are not adopted.
    @Test func notesHeardBeforeASendersFirstMessageAreItsOwn() {
        let listener = RecoveryListener()
        listener.remember(.noteOn(channel: 0, note: 40, velocity: 100), from: Self.sender, now: 1 * Self.ms)
        listener.remember(.noteOn(channel: 0, note: 60, velocity: 100), from: Self.sender, now: 1_500 * Self.ms)
        listener.remember(.noteOn(channel: 0, note: 62, velocity: 100), from: Self.sender, now: 1_550 * Self.ms)
        listener.remember(.noteOff(channel: 0, note: 62), from: Self.sender, now: 1_580 * Self.ms)
        listener.remember(
            MIDIEvent(.noteOn, channel: 0, data1: 64, data2: 90, port: 1), from: Self.sender, now: 1_590 * Self.ms)
        listener.remember(.noteOn(channel: 0, note: 67, velocity: 100), from: Self.other, now: 1_560 * Self.ms)
        listener.remember(.controlChange(channel: 0, controller: 1, value: 2), from: Self.sender, now: 1_591 * Self.ms)
        // 60's note-off was lost; the message lists 64, still held. 40 is older than two periods.
        let ended = Self.ended(listener) {
            $0.received(Self.held([64]), from: Self.sender, now: 1_600 * Self.ms, release: $1)
        }
        #expect(ended == ["0:1:60"])
        #expect(listener.repaired.load(ordering: .relaxed) == 1)
        // 64 is the sender's now: when it falls silent, 64 ends with it.
        #expect(Self.ended(listener) { $0.expire(now: 2_601 * Self.ms, release: $1) } == ["1:1:64"])
    }

    /// A sender is asked for its last values when heard for the first time, and again only
    /// when it comes back after falling silent with notes sounding (cut off mid-phase), not
    /// after a phase it ended cleanly.
    @Test func aSenderHeardAnewIsAskedForItsLastValuesOnce() {
        let listener = RecoveryListener()
        var asked: [Bool] = []
        func hear(_ source: PacketSource, at ms: UInt64) {
            asked.append(listener.received(Self.held([]), from: source, now: ms * Self.ms, release: { _ in }))
        }
        hear(Self.sender, at: 0)
        hear(Self.sender, at: 100)
        hear(Self.other, at: 100)
        #expect(asked == [true, false, true])
        // A clean end: nothing sounding when it falls silent; back later, not asked.
        _ = Self.ended(listener) { $0.expire(now: 5_000 * Self.ms, release: $1) }
        #expect(listener.following.load(ordering: .relaxed) == 0)
        hear(Self.sender, at: 6_000)
        #expect(asked.last == false)
        // Cut off with a note sounding: asked when it is heard again.
        listener.record(.noteOn(channel: 0, note: 60, velocity: 100), sender: 0, now: 6_001 * Self.ms)
        #expect(Self.ended(listener) { $0.expire(now: 8_000 * Self.ms, release: $1) } == ["0:1:60"])
        hear(Self.sender, at: 9_000)
        #expect(asked.last == true)
        #expect(listener.sendersAsked.load(ordering: .relaxed) == 3)
    }

    /// What the listener sends back is `/aseqosc/sync` without arguments: 16 bytes of address,
    /// 4 of type tags; it does not fit in fewer, and the sender's check knows it.
    @Test func theRequestSentBackIsSyncWithoutArguments() {
        withUnsafeTemporaryAllocation(byteCount: 64, alignment: 4) { buffer in
            let size = SyncRequestMessage.write(into: buffer)
            #expect(Array(buffer.prefix(size)) == Array("/aseqosc/sync\0\0\0,\0\0\0".utf8))
            #expect(SyncRequestMessage.isRequest(UnsafeRawBufferPointer(rebasing: buffer.prefix(size))))
            #expect(SyncRequestMessage.write(into: UnsafeMutableRawBufferPointer(rebasing: buffer.prefix(19))) == 0)
            let held = Self.held([60]).write(into: buffer)
            #expect(!SyncRequestMessage.isRequest(UnsafeRawBufferPointer(rebasing: buffer.prefix(held))))
        }
    }

    /// The ring is read oldest first: the last note-on of 5 wins over its earlier note-offs.
    @Test func theRingOfRecentNotesIsReadInTheOrderHeard() {
        let listener = RecoveryListener()
        for index in 0..<(RecoveryListener.recentCapacity + 10) {
            let note = UInt8(index % 100)
            listener.remember(.noteOn(channel: 1, note: note, velocity: 1), from: Self.sender, now: UInt64(index))
            listener.remember(.noteOff(channel: 1, note: note), from: Self.sender, now: UInt64(index))
        }
        listener.remember(.noteOn(channel: 1, note: 5, velocity: 1), from: Self.sender, now: 400)
        let ended = Self.ended(listener) {
            $0.received(Self.held([], channel: 1), from: Self.sender, now: 100 * Self.ms, release: $1)
        }
        #expect(ended == ["0:2:5"])
    }
}
