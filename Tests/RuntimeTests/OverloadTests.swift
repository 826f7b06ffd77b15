import Foundation
import MIDI
import Pipeline
import Synchronization
import XCTest

@testable import BridgeSession
@testable import MIDIToOSCRuntime
@testable import OSCToMIDIRuntime
@testable import Recovery
@testable import Status

/// A burst far beyond what the pipeline keeps up with, into a small ring: the input side drops
/// and counts, stays flat in memory, and still delivers every note's end.
final class OverloadTests: XCTestCase {
    /// The input thread's side, as MIDIInputSide drives it: push each event, and after each
    /// batch (here every 32 events) pay owed note-offs; once the burst ends, keep paying while
    /// anything is owed, as the reader's 1 ms poll timeout does.
    func testMillionEventBurstIntoRingOf64CountsEveryDropAndEndsEveryNote() throws {
        let ring = SPSCRing<MIDIEvent>(capacity: 64)
        var feeder = RingFeeder(ring: ring)
        let consumer = SlowConsumer(ring: ring)
        var residentBefore = 0

        var offered = 0
        func offer(_ event: MIDIEvent) {
            _ = feeder.push(event, now: UInt64(offered))
            offered += 1
            if offered & 31 == 0 { feeder.payOwed(now: UInt64(offered)) }
        }
        var index = 0
        while index < 1_000_000 {
            offer(Self.event(index))
            index += 1
            // Measured after a warm-up, so first-touch pages (and a sanitizer's shadow of them)
            // do not count as growth.
            if index == 100_000 { residentBefore = try Self.residentBytes() }
        }
        // The notes still sounding at the end of the stream, groups 333_330...333_333: the
        // last note-off in it (index 999_998) ended group 333_329.
        var group = index / 3 - 3
        while group <= index / 3 {
            offer(Self.noteEnd(group: group))
            group += 1
        }
        var retries = 0
        while feeder.isOwing {
            usleep(1_000)
            feeder.payOwed(now: UInt64(offered))
            retries += 1
            XCTAssertLessThan(retries, 5_000, "owed note-offs never went out")
            if retries >= 5_000 { break }
        }
        let delivered = consumer.finish()
        let residentAfter = try Self.residentBytes()

        XCTAssertEqual(offered, 1_000_004)
        XCTAssertGreaterThan(ring.drops, 10_000, "the burst did overflow the ring")
        XCTAssertGreaterThan(feeder.noteOffsOwed, 100, "note-offs did hit the full ring")
        XCTAssertGreaterThan(feeder.noteOffsPaid, 0)
        XCTAssertLessThanOrEqual(feeder.noteOffsPaid, feeder.noteOffsOwed)
        XCTAssertEqual(
            delivered.events, offered - ring.drops + feeder.noteOffsPaid,
            "every event offered is delivered or counted as a drop; owed note-offs come on top")
        XCTAssertEqual(delivered.stillHeld, 0, "every note-on that got through got its note-off")
        XCTAssertEqual(delivered.outOfOrder, 0, "an owed note-off never arrives after the same note struck again")
        let growth = residentAfter - residentBefore
        XCTAssertLessThan(growth, 2 << 20, "resident memory grew by \(growth) bytes over 900,000 events")
        print(
            "overload: \(offered) events offered to a ring of \(ring.capacity): \(delivered.events) delivered, "
                + "\(ring.drops) dropped, \(feeder.noteOffsOwed) note-offs owed, \(feeder.noteOffsPaid) paid; "
                + "RSS \(residentBefore >> 10) KiB -> \(residentAfter >> 10) KiB")
    }

    /// Three events per group: a note-on, a controller, and the note-off of the note struck three
    /// groups before (some as note-on with velocity 0), on two ports and all 16 channels.
    static func event(_ index: Int) -> MIDIEvent {
        let group = index / 3
        switch index % 3 {
        case 0:
            var event = MIDIEvent.noteOn(channel: UInt8(group % 16), note: note(group), velocity: 100)
            event.port = port(group)
            return event
        case 1:
            var event = MIDIEvent.controlChange(channel: UInt8(group % 16), controller: 1, value: UInt8(group % 128))
            event.port = port(group)
            return event
        default:
            return group >= 3 ? noteEnd(group: group - 3) : MIDIEvent(.clock, port: port(group))
        }
    }

    static func noteEnd(group: Int) -> MIDIEvent {
        var event =
            group % 5 == 0
            ? MIDIEvent.noteOn(channel: UInt8(group % 16), note: note(group), velocity: 0)
            : MIDIEvent.noteOff(channel: UInt8(group % 16), note: note(group))
        event.port = port(group)
        return event
    }

    static func note(_ group: Int) -> UInt8 { UInt8(36 + group % 61) }
    static func port(_ group: Int) -> UInt16 { group / 16 % 2 == 0 ? 0 : 200 }

    static func residentBytes() throws -> Int {
        let statm = try String(contentsOfFile: "/proc/self/statm", encoding: .utf8)
        let pages = Int(statm.split(separator: " ")[1]) ?? 0
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}

/// The pipeline thread, slowed down: takes at most 16 events per pass, then sleeps a little,
/// and keeps the notes it has seen sounding, per port.
final class SlowConsumer: @unchecked Sendable {
    // @unchecked Sendable: the counters below belong to the consumer thread until `finish()`
    // has joined it.
    struct Result {
        var events = 0
        var stillHeld = 0
        var outOfOrder = 0
    }

    private let ring: SPSCRing<MIDIEvent>
    private let stop = Atomic<Bool>(false)
    private let done = DispatchSemaphore(value: 0)
    private var result = Result()
    private var held = [HeldNotes](repeating: HeldNotes(), count: 256)

    init(ring: SPSCRing<MIDIEvent>) {
        self.ring = ring
        let thread = Thread { [self] in
            run()
            done.signal()
        }
        thread.start()
    }

    private func run() {
        while true {
            let stopping = stop.load(ordering: .acquiring)
            var taken = 0
            while taken < 16, let event = ring.pop() {
                take(event)
                taken += 1
            }
            if stopping && taken == 0 { return }
            usleep(20)
        }
    }

    private func take(_ event: MIDIEvent) {
        result.events += 1
        let port = Int(event.port)
        if event.kind == .noteOn && event.data2 > 0 && held[port].isHeld(channel: event.channel, note: event.data1) {
            // The test's notes never overlap themselves, so a second note-on while held means
            // the first one's note-off came late.
            result.outOfOrder += 1
        }
        held[port].track(event)
    }

    /// Stops after the ring is empty; returns what the consumer saw.
    func finish() -> Result {
        stop.store(true, ordering: .releasing)
        done.wait()
        result.stillHeld = held.reduce(0) { $0 + $1.count }
        return result
    }
}
