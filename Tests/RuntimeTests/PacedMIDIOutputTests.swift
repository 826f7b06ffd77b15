import ALSASequencer
import Glibc
import MIDI
import Testing

@testable import BridgeSession
@testable import MIDIToOSCRuntime
@testable import OSCToMIDIRuntime
@testable import Recovery
@testable import Status

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

    /// How many more scheduled events the kernel's pool takes before refusing with `EAGAIN`
    /// (nil: no limit).
    var scheduleRoom: Int?
    /// Whether the queue runs (a schedule starts it), and how often it was stopped.
    var queueRunning = false
    var queueStops = 0

    func schedule(_ event: MIDIEvent, from port: UInt8, at time: UInt64, sysexBytes: UnsafeRawBufferPointer?)
        throws(ALSAError)
    {
        if let room = scheduleRoom {
            guard room > 0 else { throw ALSAError(code: -EAGAIN, call: "snd_seq_event_output_direct") }
            scheduleRoom = room - 1
        }
        queueRunning = true
        var event = event
        event.port = UInt16(port)
        scheduled.append((event, time))
    }

    func stopQueueIfEmpty() -> Bool {
        if queueRunning { queueStops += 1 }
        queueRunning = false
        return true
    }

    /// The staging slots, and the writes of them (each a list of events), as the kernel got them.
    var slots = [MIDIEvent](repeating: MIDIEvent(.clock), count: DirectOutput.stageCapacity)
    var stagedWrites: [[MIDIEvent]] = []
    /// Once set, how many more staged events are taken before the rest are refused with
    /// `EAGAIN` (as a filling pool does); the kernel's answer to a write cut short is the count
    /// alone.
    var acceptBeforeBlocking: Int?
    /// Events the kernel refuses for good (a subscriber gone), with `ENOENT`.
    var refuse: (MIDIEvent) -> Bool = { _ in false }

    func stage(_ event: MIDIEvent, from port: UInt8, at index: Int) {
        var event = event
        event.port = UInt16(port)
        slots[index] = event
    }

    func writeStaged(_ range: Range<Int>) -> (written: Int, error: ALSAError?) {
        var written = 0
        var error: ALSAError?
        for index in range {
            if blocked || acceptBeforeBlocking == 0 {
                error = ALSAError(code: -EAGAIN, call: "write")
                break
            }
            if refuse(slots[index]) {
                error = ALSAError(code: -ENOENT, call: "write")
                break
            }
            acceptBeforeBlocking = acceptBeforeBlocking.map { $0 - 1 }
            written += 1
        }
        stagedWrites.append(Array(slots[range.lowerBound..<range.lowerBound + written]))
        self.written += slots[range.lowerBound..<range.lowerBound + written]
        return (written, written > 0 ? nil : error)
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
        // The end of a receive batch: the kernel refuses them, and they fill the queue.
        output.flush(now: 1)
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
        output.schedule(Self.noteOn(3, 64), at: 5_000_000_000, now: 1)
        output.send(.controlChange(channel: 0, controller: 1, value: 1), now: 1)
        output.send(.controlChange(channel: 0, controller: 1, value: 2), now: 1)
        output.flush(now: 1)
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
        output.flush(now: 1)
        writer.blocked = false
        output.finish()
        #expect(writer.written == [.noteOff(channel: 0, note: 60).withPort(5)])
        #expect(output.counters[0].droppedAtStop.load(ordering: .relaxed) == 3)
        #expect(output.isIdle)
    }

    // MARK: Staged writes

    /// Two output ports (ours 5 and 6) over a writer that takes everything.
    static func twoPortOutput() -> (RecordingWriter, PacedMIDIOutput<RecordingWriter>) {
        let writer = RecordingWriter()
        return (writer, PacedMIDIOutput(writer: writer, ports: [5, 6], sysexStore: nil, bytesPerSecond: 0))
    }

    static func note(_ index: Int, port: UInt16) -> MIDIEvent {
        Self.noteOn(0, UInt8(index)).withPort(port)
    }

    @Test func aBatchOfEventsReachesTheKernelInOneWriteAtTheFlush() {
        let (writer, output) = Self.twoPortOutput()
        let events = (0..<10).map { Self.note($0, port: UInt16($0 % 2)) }
        for event in events { output.send(event, now: 1) }
        #expect(writer.stagedWrites.isEmpty)
        #expect(!output.isIdle)
        output.flush(now: 1)
        #expect(writer.stagedWrites.map(\.count) == [10])
        #expect(writer.written.map(\.note) == events.map(\.note))
        #expect(writer.written.map(\.port) == events.map { $0.port + 5 })
        #expect(output.counters.map { $0.sent.load(ordering: .relaxed) } == [5, 5])
        #expect(output.isIdle)
    }

    @Test func aFullStageIsWrittenWithoutWaitingForTheFlush() {
        let (writer, output) = Self.twoPortOutput()
        for index in 0..<(DirectOutput.stageCapacity + 3) { output.send(Self.note(index % 128, port: 0), now: 1) }
        #expect(writer.stagedWrites.map(\.count) == [DirectOutput.stageCapacity])
        output.flush(now: 1)
        #expect(writer.stagedWrites.map(\.count) == [DirectOutput.stageCapacity, 3])
    }

    /// The pool fills part-way through a batch: what the kernel took counts as sent, the rest
    /// waits at the head of its port's queue, ahead of what comes later, and leaves in order.
    @Test func eventsTheKernelRefusesMidBatchWaitInTheirPortsQueuesInOrder() {
        let (writer, output) = Self.twoPortOutput()
        writer.acceptBeforeBlocking = 3
        let batch = (0..<8).map { Self.note($0, port: UInt16($0 % 2)) }
        for event in batch { output.send(event, now: 1) }
        output.flush(now: 1)
        // The kernel's answer to the cut-short write was the count alone; writing the rest
        // again brought the refusal.
        #expect(writer.stagedWrites.map(\.count) == [3, 0])
        #expect(output.counters.map { $0.sent.load(ordering: .relaxed) } == [2, 1])
        // Both ports now hold events back: later ones queue behind them.
        output.send(Self.note(20, port: 0), now: 2)
        output.send(Self.note(21, port: 1), now: 2)
        #expect(output.counters.map { $0.queueHighWater.load(ordering: .relaxed) } == [3, 4])
        writer.acceptBeforeBlocking = nil
        Self.drain(output, from: 1 + PacedMIDIOutput<RecordingWriter>.retryInterval)
        let byPort = { (port: UInt16) in writer.written.filter { $0.port == port }.map(\.note) }
        #expect(byPort(5) == [0, 2, 4, 6, 20])
        #expect(byPort(6) == [1, 3, 5, 7, 21])
        #expect(output.counters.map { $0.sent.load(ordering: .relaxed) } == [5, 5])
        #expect(output.counters.map { $0.failed.load(ordering: .relaxed) } == [0, 0])
    }

    /// A note-off refused with a full pool was already taken as silencing its note; it must still
    /// be retried, not dropped as redundant, however full the queue.
    @Test func aRefusedNoteOffIsRetriedEvenPastTheQueueCapacity() {
        let writer = RecordingWriter()
        let output = PacedMIDIOutput(writer: writer, ports: [5], sysexStore: nil, bytesPerSecond: 0, queueCapacity: 1)
        output.send(Self.noteOn(0, 60), now: 1)
        output.flush(now: 1)
        writer.blocked = true
        output.send(.controlChange(channel: 0, controller: 1, value: 1), now: 2)
        output.send(.noteOff(channel: 0, note: 60), now: 2)
        output.flush(now: 2)
        writer.blocked = false
        Self.drain(output, from: 2 + PacedMIDIOutput<RecordingWriter>.retryInterval)
        #expect(writer.written.map(\.kind) == [.noteOn, .controlChange, .noteOff])
        #expect(output.counters[0].droppedRedundantNoteOffs.load(ordering: .relaxed) == 0)
        #expect(output.counters[0].droppedQueueFull.load(ordering: .relaxed) == 0)
    }

    @Test func anEventRefusedForGoodIsCountedAndTheRestOfTheBatchGoesOut() {
        let (writer, output) = Self.twoPortOutput()
        writer.refuse = { $0.note == 2 }
        for index in 0..<5 { output.send(Self.note(index, port: 1), now: 1) }
        output.flush(now: 1)
        #expect(writer.stagedWrites.map(\.count) == [2, 0, 2])
        #expect(writer.written.map(\.note) == [0, 1, 3, 4])
        #expect(output.counters[1].failed.load(ordering: .relaxed) == 1)
        #expect(output.counters[1].sent.load(ordering: .relaxed) == 4)
        #expect(output.isIdle)
    }

    /// The last event of a receive with nothing staged is written at once, without staging; with
    /// events staged before it, it joins them (order first).
    @Test func theLastEventOfAReceiveIsWrittenAtOnceUnlessOthersAreStaged() {
        let (writer, output) = Self.twoPortOutput()
        output.send(Self.note(60, port: 0), now: 1, moreToCome: false)
        #expect(writer.written.map(\.note) == [60])
        #expect(writer.stagedWrites.isEmpty)
        #expect(output.counters[0].sent.load(ordering: .relaxed) == 1)
        output.send(Self.note(61, port: 1), now: 2)
        output.send(Self.note(62, port: 0), now: 2, moreToCome: false)
        #expect(writer.written.map(\.note) == [60])
        output.flush(now: 2)
        #expect(writer.written.map(\.note) == [60, 61, 62])
        #expect(writer.stagedWrites.map(\.count) == [2])
    }

    /// An event written at once (an RPN: several control changes) goes after what was staged
    /// before it, not ahead.
    @Test func anEventWrittenAtOnceFollowsWhatWasStagedBeforeIt() {
        let (writer, output) = Self.twoPortOutput()
        output.send(Self.note(60, port: 0), now: 1)
        output.send(MIDIEvent(.rpn, channel: 0, value: 2, parameter: 0), now: 1)
        output.send(Self.note(61, port: 0), now: 1)
        output.flush(now: 1)
        #expect(writer.written.map(\.kind) == [.noteOn, .rpn, .noteOn])
        #expect(writer.stagedWrites.map(\.count) == [1, 1])
    }
}

/// Scheduled events the kernel's pool has no room for wait in our own time-ordered queue per
/// port, go to the kernel as room frees or leave at their time, and never cost a needed note-off;
/// the queue's timer stops once nothing scheduled is left.
@Suite struct ScheduledOutputTests {
    static let second: UInt64 = 1_000_000_000

    static func output(room: Int?, scheduledCapacity: Int = 4096) -> (RecordingWriter, PacedMIDIOutput<RecordingWriter>) {
        let writer = RecordingWriter()
        writer.scheduleRoom = room
        return (
            writer,
            PacedMIDIOutput(
                writer: writer, ports: [5], sysexStore: nil, bytesPerSecond: 0, scheduledCapacity: scheduledCapacity)
        )
    }

    @Test func eventsTheKernelRefusesWaitThenGoToItAsRoomFreesOrLeaveAtTheirTime() {
        let (writer, output) = Self.output(room: 2)
        for note in UInt8(60)..<63 { output.schedule(.noteOn(channel: 0, note: note, velocity: 100), at: Self.second, now: 0) }
        for note in UInt8(60)..<63 { output.schedule(.noteOff(channel: 0, note: note), at: 3 * Self.second, now: 0) }
        #expect(writer.scheduled.count == 2)
        #expect(output.scheduledWaiting == 4)
        #expect(output.counters[0].scheduledHeld.load(ordering: .relaxed) == 4)
        // At its time the third note-on leaves as an event sent now; the pool is still full.
        _ = output.service(now: Self.second)
        #expect(writer.written == [MIDIEvent.noteOn(channel: 0, note: 62, velocity: 100).withPort(5)])
        #expect(output.scheduledWaiting == 3)
        // Room again: the note-offs go to the kernel for their time, in order.
        writer.scheduleRoom = 10
        _ = output.service(now: Self.second + PacedMIDIOutput<RecordingWriter>.kernelRetryInterval)
        #expect(output.scheduledWaiting == 0)
        #expect(writer.scheduled.suffix(3).map { "\($0.0.kind) \($0.0.note) \($0.1)" } == (60..<63).map { "note_off \($0) \(3 * Self.second)" })
        #expect(output.counters[0].failed.load(ordering: .relaxed) == 0)
        #expect(output.counters[0].sent.load(ordering: .relaxed) == 6)
    }

    @Test func aBundleForSoonTakesThePlaceOfTheLatestWhenTheScheduledQueueIsFull() {
        let (writer, output) = Self.output(room: 0, scheduledCapacity: 4)
        for index in 0..<6 {
            output.schedule(.controlChange(channel: 0, controller: 1, value: UInt8(index)), at: 3600 * Self.second + UInt64(index), now: 0)
        }
        let counters = output.counters[0]
        #expect(counters.droppedScheduled[Int(MIDIEventKind.controlChange.rawValue)].load(ordering: .relaxed) == 2)
        output.schedule(.noteOn(channel: 0, note: 60, velocity: 100), at: Self.second * 3 / 10, now: 0)
        #expect(counters.droppedScheduled[Int(MIDIEventKind.controlChange.rawValue)].load(ordering: .relaxed) == 3)
        #expect(output.scheduledWaiting == 4)
        _ = output.service(now: Self.second * 3 / 10)
        #expect(writer.written == [MIDIEvent.noteOn(channel: 0, note: 60, velocity: 100).withPort(5)])
    }

    @Test func noteOffsOfScheduledNotesGetPastAFullScheduledQueueAndRedundantOnesAreCounted() {
        let (writer, output) = Self.output(room: 0, scheduledCapacity: 4)
        for note in UInt8(60)..<64 { output.schedule(.noteOn(channel: 0, note: note, velocity: 100), at: Self.second, now: 0) }
        for note in UInt8(60)..<64 { output.schedule(.noteOff(channel: 0, note: note), at: 3 * Self.second, now: 0) }
        // A second note-off for a note already given one, and one for a note never on.
        output.schedule(.noteOff(channel: 0, note: 60), at: 4 * Self.second, now: 0)
        output.schedule(.noteOff(channel: 0, note: 70), at: 4 * Self.second, now: 0)
        // Another event, later than everything: no room.
        output.schedule(.controlChange(channel: 0, controller: 1, value: 1), at: 5 * Self.second, now: 0)
        let counters = output.counters[0]
        #expect(counters.reservedNoteOffs.load(ordering: .relaxed) == 4)
        #expect(counters.droppedScheduled[Int(MIDIEventKind.noteOff.rawValue)].load(ordering: .relaxed) == 2)
        #expect(counters.droppedScheduled[Int(MIDIEventKind.controlChange.rawValue)].load(ordering: .relaxed) == 1)
        var now: UInt64 = 0
        while let next = output.service(now: now) { now = max(now + 1, next) }
        #expect(writer.written.filter { $0.kind == .noteOn }.count == 4)
        #expect(writer.written.filter { $0.kind == .noteOff }.map(\.note) == [60, 61, 62, 63])
        #expect(output.isIdle)
    }

    @Test func theQueueStopsOnceNothingScheduledIsLeftAndStartsWithTheNext() {
        let (writer, output) = Self.output(room: nil)
        output.schedule(.noteOn(channel: 0, note: 60, velocity: 100), at: Self.second, now: 0)
        #expect(writer.queueRunning)
        #expect(!output.isIdle)
        let next = output.service(now: Self.second / 2)
        #expect(next == Self.second + PacedMIDIOutput<RecordingWriter>.queueStopDelay)
        #expect(output.service(now: next!) == nil)
        #expect(writer.queueStops == 1 && !writer.queueRunning)
        #expect(output.isIdle)
        output.schedule(.noteOff(channel: 0, note: 60), at: 2 * Self.second, now: next!)
        #expect(writer.queueRunning && !output.isIdle)
    }
}

extension MIDIEvent {
    func withPort(_ port: UInt16) -> MIDIEvent {
        var event = self
        event.port = port
        return event
    }
}
