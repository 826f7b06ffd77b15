import ALSASequencer
import Glibc
import MIDI
import Testing

@testable import Bridge

/// A writer that records what would reach the kernel and refuses writes with `EAGAIN` while
/// `blocked`, which is how a port's queue fills in the field (the client's pool is full).
final class RecordingWriter: MIDIPortWriter {
    var blocked = false
    var written: [MIDIEvent] = []
    var scheduled: [(MIDIEvent, UInt64)] = []

    func send(_ event: MIDIEvent, from port: UInt8, sysexBytes: UnsafeRawBufferPointer?) throws(ALSAError) {
        if blocked { throw ALSAError(code: -EAGAIN, call: "snd_seq_event_output_direct") }
        var event = event
        event.port = UInt16(port)
        written.append(event)
    }

    func schedule(_ event: MIDIEvent, from port: UInt8, at time: UInt64, sysexBytes: UnsafeRawBufferPointer?)
        throws(ALSAError)
    {
        scheduled.append((event, time))
    }
}

/// The per-port queues of the OSC -> MIDI output when they fill: other events are dropped at the
/// capacity, but every note-off that silences a sounding note still goes out, and each kind of
/// drop is counted exactly.
@Suite struct PacedMIDIOutputTests {
    static func noteOn(_ channel: UInt8, _ note: UInt8) -> MIDIEvent {
        .noteOn(channel: channel, note: note, velocity: 100)
    }

    /// A port whose writes are refused until `writer.blocked` is cleared, with `capacity` slots.
    static func blockedOutput(capacity: Int) -> (RecordingWriter, PacedMIDIOutput<RecordingWriter>) {
        let writer = RecordingWriter()
        writer.blocked = true
        return (
            writer,
            PacedMIDIOutput(writer: writer, ports: [5], sysexStore: nil, bytesPerSecond: 0, queueCapacity: capacity)
        )
    }

    /// Runs the output until it has written everything it holds.
    static func drain(_ output: PacedMIDIOutput<RecordingWriter>, from now: UInt64) {
        var now = now
        while let next = output.service(now: now) { now = max(now + 1, next) }
    }

    @Test func noteOffsOfSoundingNotesGetThroughAQueueFullOfOtherEvents() throws {
        let (writer, output) = Self.blockedOutput(capacity: 1024)
        // 1,024 note-ons on 8 channels fill the queue exactly.
        for index in 0..<1024 { output.send(Self.noteOn(UInt8(index / 128), UInt8(index % 128)), now: 1) }
        // Then 100 control changes and 50 more note-ons: no room.
        for value in 0..<100 { output.send(.controlChange(channel: 9, controller: 1, value: UInt8(value)), now: 2) }
        for note in 0..<50 { output.send(Self.noteOn(9, UInt8(note)), now: 2) }
        // Every note that went in gets its note-off, half of them as note-on velocity 0.
        for index in 0..<1024 {
            let (channel, note) = (UInt8(index / 128), UInt8(index % 128))
            output.send(
                index % 2 == 0
                    ? .noteOff(channel: channel, note: note) : .noteOn(channel: channel, note: note, velocity: 0),
                now: 3)
        }
        // Note-offs for the 50 dropped note-ons, and a second note-off for a note already released,
        // silence nothing: dropped, counted on their own.
        for note in 0..<50 { output.send(.noteOff(channel: 9, note: UInt8(note)), now: 4) }
        output.send(.noteOff(channel: 0, note: 0), now: 4)

        let counters = output.counters[0]
        #expect(counters.droppedQueueFull.load(ordering: .relaxed) == 150)
        #expect(counters.droppedRedundantNoteOffs.load(ordering: .relaxed) == 51)
        #expect(counters.reservedNoteOffs.load(ordering: .relaxed) == 1024)
        #expect(counters.droppedNoteOffs.load(ordering: .relaxed) == 0)
        #expect(counters.queueHighWater.load(ordering: .relaxed) == 2048)

        writer.blocked = false
        Self.drain(output, from: 10)
        #expect(writer.written.count == 2048)
        #expect(counters.sent.load(ordering: .relaxed) == 2048)
        // Order kept: every note-on, then every note-off, each for the same notes.
        let ons = writer.written.prefix(1024)
        let offs = writer.written.suffix(1024)
        #expect(ons.allSatisfy { $0.kind == .noteOn && $0.velocity == 100 })
        #expect(offs.allSatisfy { $0.endsNote })
        #expect(ons.map { [$0.channel, $0.note] } == offs.map { [$0.channel, $0.note] })
        #expect(writer.written.allSatisfy { $0.port == 5 })
    }

    @Test func allNotesOffGetsThroughOncePerChannelAndController() {
        let (writer, output) = Self.blockedOutput(capacity: 4)
        for note in 0..<4 { output.send(Self.noteOn(0, UInt8(60 + note)), now: 1) }
        output.send(.controlChange(channel: 0, controller: 123, value: 0), now: 2)
        output.send(.controlChange(channel: 0, controller: 120, value: 0), now: 2)
        output.send(.controlChange(channel: 0, controller: 123, value: 0), now: 2)  // no note-on since
        output.send(.controlChange(channel: 0, controller: 7, value: 0), now: 2)
        output.send(.noteOff(channel: 0, note: 60), now: 2)  // released by the all-notes-off
        let counters = output.counters[0]
        #expect(counters.reservedNoteOffs.load(ordering: .relaxed) == 2)
        #expect(counters.droppedRedundantNoteOffs.load(ordering: .relaxed) == 2)
        #expect(counters.droppedQueueFull.load(ordering: .relaxed) == 1)
        writer.blocked = false
        Self.drain(output, from: 10)
        #expect(
            writer.written.map { "\($0.kind) \($0.data1)" }.suffix(2) == ["control_change 123", "control_change 120"])
    }

    @Test func aNoteOffForAScheduledNoteOnIsKeptWhenTheQueueIsFull() {
        let (writer, output) = Self.blockedOutput(capacity: 2)
        output.schedule(Self.noteOn(3, 64), at: 5_000_000_000)
        output.send(.controlChange(channel: 0, controller: 1, value: 1), now: 1)
        output.send(.controlChange(channel: 0, controller: 1, value: 2), now: 1)
        output.send(.noteOff(channel: 3, note: 64), now: 2)
        #expect(output.counters[0].reservedNoteOffs.load(ordering: .relaxed) == 1)
        #expect(writer.scheduled.count == 1)
        writer.blocked = false
        Self.drain(output, from: 10)
        #expect(writer.written.last == .noteOff(channel: 3, note: 64).withPort(5))
    }

    @Test func stoppingDropsWaitingEventsButWritesTheNoteOffs() {
        let (writer, output) = Self.blockedOutput(capacity: 8)
        output.send(Self.noteOn(0, 60), now: 1)
        output.send(.controlChange(channel: 0, controller: 1, value: 1), now: 1)
        output.send(.noteOff(channel: 0, note: 60), now: 1)
        output.send(.controlChange(channel: 0, controller: 1, value: 2), now: 1)
        writer.blocked = false
        output.finish()
        #expect(writer.written == [.noteOff(channel: 0, note: 60).withPort(5)])
        #expect(output.counters[0].droppedAtStop.load(ordering: .relaxed) == 3)
        #expect(output.isIdle)
    }
}

extension MIDIEvent {
    func withPort(_ port: UInt16) -> MIDIEvent {
        var event = self
        event.port = port
        return event
    }
}
