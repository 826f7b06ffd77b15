import CALSA
import Endpoints
import Foundation
import Glibc
import MIDI
import Platform
import Synchronization
import TestSupport
import XCTest

@testable import ALSASequencer

/// The reader's wait on a real sequencer: with an announcements port it waits in a blocking
/// `read`, which ``SequencerReader/stop()`` must end however often it is paused and resumed,
/// and which must not make a scheduled write wait for a full output pool.
final class SequencerReaderALSATests: XCTestCase {
    override func setUpWithError() throws {
        try TestEnvironment.requireSequencer()
    }

    /// What a reader running on its own thread has seen.
    private final class Seen: @unchecked Sendable {
        private let lock = NSLock()
        private var midi: [MIDIEvent] = []
        private var others: [DecodedSequencerEvent] = []

        func add(_ event: MIDIEvent) { lock.withLock { midi.append(event) } }
        func add(_ event: DecodedSequencerEvent) { lock.withLock { others.append(event) } }
        var notes: [UInt8] { lock.withLock { midi.map(\.note) } }
        var lastTimestamp: UInt64? { lock.withLock { midi.last?.timestamp } }
        var otherCount: Int { lock.withLock { others.count } }
    }

    /// Runs `reader` on a new thread until it stops; the semaphore is signalled then.
    private func start(_ reader: SequencerReader, into seen: Seen) -> DispatchSemaphore {
        let finished = DispatchSemaphore(value: 0)
        Thread {
            do {
                try reader.run { decoded in
                    if case .midi(let event, _) = decoded { seen.add(event) } else { seen.add(decoded) }
                }
            } catch {
                XCTFail("reader: \(error)")
            }
            finished.signal()
        }.start()
        return finished
    }

    private func isBlocking(_ client: SequencerClient) throws -> Bool {
        let descriptor = client.kernelDescriptor
        return fcntl(descriptor, F_GETFL) & O_NONBLOCK == 0
    }

    func testStopEndsAWaitingReadEveryTimeAndTheWakeUpIsNotAnEvent() throws {
        let client = try SequencerClient(name: "reader-wait")
        let input = try client.createPort(name: "in", direction: .input)
        _ = try client.subscribeToAnnouncements()
        let keys = try SequencerClient(name: "reader-keys")
        let output = try keys.createPort(name: "out", direction: .output)
        try keys.connect(from: output, to: PortAddress(client: client.clientID, port: input))
        let reader = try SequencerReader(client: client, sysexStore: SysExStore(slots: 2, capacity: 64))
        let seen = Seen()
        XCTAssertFalse(try isBlocking(client), "the descriptor blocks before the reader runs")
        // The kernel's announcements of the keyboard's client, port and connection come before
        // the first note.
        var othersAtFirstNote = 0

        for cycle in 0..<20 {
            reader.rearm()
            let finished = start(reader, into: seen)
            XCTAssertTrue(
                waitUntil { (try? self.isBlocking(client)) == true },
                "cycle \(cycle): the reader does not wait in read")
            let note = UInt8(30 + cycle)
            Thread.sleep(forTimeInterval: 0.02)
            let sent = MonotonicClock.now()
            try keys.send(.noteOn(channel: 0, note: note, velocity: 90), from: output)
            XCTAssertTrue(waitUntil { seen.notes.last == note }, "cycle \(cycle): \(seen.notes)")
            // Stamped when the read returned, not when the reader began to wait.
            XCTAssertGreaterThanOrEqual(seen.lastTimestamp ?? 0, sent, "cycle \(cycle)")
            // Idle now: the reader is inside `read` with nothing to read.
            Thread.sleep(forTimeInterval: 0.02)
            reader.stop()
            XCTAssertEqual(finished.wait(timeout: .now() + 5), .success, "cycle \(cycle): stop() did not end the read")
            XCTAssertFalse(try isBlocking(client), "cycle \(cycle): the descriptor still blocks after run returned")
            if cycle == 0 { othersAtFirstNote = seen.otherCount }
        }
        XCTAssertEqual(seen.notes, (0..<20).map { UInt8(30 + $0) })
        // Every event read is handed over, as MIDI or as another event; a wake-up is neither.
        // Other clients coming and going meanwhile (other tests' processes ending) add a few
        // announcements, never one per cycle.
        XCTAssertEqual(reader.eventsRead, seen.notes.count + seen.otherCount, "the wake-ups were counted as read")
        XCTAssertLessThan(seen.otherCount - othersAtFirstNote, 19, "the wake-ups were handed over")

        // A note sent while the reader is stopped waits in the kernel and arrives on resuming.
        try keys.send(.noteOn(channel: 0, note: 99, velocity: 90), from: output)
        reader.rearm()
        let finished = start(reader, into: seen)
        XCTAssertTrue(waitUntil { seen.notes.last == 99 }, "\(seen.notes)")
        reader.stop()
        XCTAssertEqual(finished.wait(timeout: .now() + 5), .success)
    }

    func testAStopAtAnyMomentOfTheStartIsNotLost() throws {
        let client = try SequencerClient(name: "reader-race")
        _ = try client.subscribeToAnnouncements()
        let reader = try SequencerReader(client: client, sysexStore: SysExStore(slots: 2, capacity: 64))
        let seen = Seen()
        var random = SplitMix64(seed: 7)
        for cycle in 0..<200 {
            reader.rearm()
            let finished = start(reader, into: seen)
            // From before the thread runs to well inside the waiting read.
            let spinUntil = MonotonicClock.now() + random.next() % 2_000_000
            while MonotonicClock.now() < spinUntil {}
            reader.stop()
            XCTAssertEqual(finished.wait(timeout: .now() + 5), .success, "cycle \(cycle): stop() was lost")
        }
        XCTAssertEqual(reader.eventsRead, seen.otherCount, "the wake-ups were counted as read")
    }

    func testATimeoutPendingIsKeptAndAStopEndsItsWait() throws {
        let client = try SequencerClient(name: "reader-timeout")
        _ = try client.subscribeToAnnouncements()
        let reader = try SequencerReader(client: client, sysexStore: SysExStore(slots: 2, capacity: 64))
        // The caller asks for 1 ms waits (as for owed note-offs) until told otherwise.
        let calls = Atomic<Int>(0)
        let wantsTimeout = Atomic<Bool>(true)
        let finished = DispatchSemaphore(value: 0)
        Thread {
            do {
                try reader.run(
                    { _ in },
                    afterBatch: {
                        calls.add(1, ordering: .relaxed)
                        return wantsTimeout.load(ordering: .relaxed) ? 1 : -1
                    })
            } catch {
                XCTFail("reader: \(error)")
            }
            finished.signal()
        }.start()
        // More than 10 calls within 2 s: waits of 1 ms, not of 1 s (or none).
        XCTAssertTrue(waitUntil(timeout: 2) { calls.load(ordering: .relaxed) > 10 }, "the 1 ms timeout was not kept")
        // Then waiting in read: no more calls without an event.
        wantsTimeout.store(false, ordering: .relaxed)
        XCTAssertTrue(waitUntil { (try? self.isBlocking(client)) == true })
        Thread.sleep(forTimeInterval: 0.1)
        let waiting = calls.load(ordering: .relaxed)
        Thread.sleep(forTimeInterval: 0.2)
        XCTAssertEqual(calls.load(ordering: .relaxed), waiting, "the read did not wait")
        // A stop while a timeout is pending ends the poll, not a read left waiting.
        wantsTimeout.store(true, ordering: .relaxed)
        reader.stop()  // a wake-up for the read; the next waits are polls
        XCTAssertEqual(finished.wait(timeout: .now() + 5), .success)
        reader.rearm()
        let again = DispatchSemaphore(value: 0)
        Thread {
            try? reader.run({ _ in }, afterBatch: { 1 })
            again.signal()
        }.start()
        Thread.sleep(forTimeInterval: 0.1)
        reader.stop()
        XCTAssertEqual(again.wait(timeout: .now() + 5), .success, "a stop during a poll left the reader waiting")
    }

    func testTheInputPoolIsNotResizedWhileAReadWaitsAndTheFlagsComeBack() throws {
        let client = try SequencerClient(name: "reader-pool")
        _ = try client.subscribeToAnnouncements()
        try client.setBlocking(true)  // as `aseqosc send` has it: kept after the reader stops
        let reader = try SequencerReader(client: client, sysexStore: SysExStore(slots: 2, capacity: 64))
        let finished = start(reader, into: Seen())
        // Refused from the moment the reader waits (the descriptor blocked before it started).
        var refusal: ALSAError?
        XCTAssertTrue(
            waitUntil {
                do throws(ALSAError) {
                    try client.setInputPool(500)
                    return false
                } catch {
                    refusal = error
                    return true
                }
            })
        XCTAssertEqual(refusal?.code, -EBUSY)
        reader.stop()
        XCTAssertEqual(finished.wait(timeout: .now() + 5), .success)
        XCTAssertTrue(try isBlocking(client), "the reader made a blocking descriptor non-blocking")
        XCTAssertNoThrow(try client.setInputPool(500))
    }

    func testAScheduledWriteMeetingAFullPoolFailsWhileTheReaderWaits() throws {
        let client = try SequencerClient(name: "reader-schedule")
        let output = try client.createPort(name: "out", direction: .output)
        _ = try client.subscribeToAnnouncements()
        let queue = try SequencerQueue(client: client, name: "reader-schedule")
        let reader = try SequencerReader(client: client, sysexStore: SysExStore(slots: 2, capacity: 64))
        let finished = start(reader, into: Seen())
        defer {
            reader.stop()
            XCTAssertEqual(finished.wait(timeout: .now() + 5), .success)
        }
        XCTAssertTrue(waitUntil { (try? self.isBlocking(client)) == true })

        // A minute ahead: nothing leaves the output pool while this runs.
        let later = try queue.now() + 60_000_000_000
        let scheduler = DispatchSemaphore(value: 0)
        let outcome = Mutex<(scheduled: Int, error: ALSAError?)>((0, nil))
        Thread {
            for note in 0..<2000 {
                do throws(ALSAError) {
                    try client.send(
                        .noteOn(channel: 0, note: UInt8(note % 128), velocity: 1), from: output, on: queue, at: later)
                    outcome.withLock { $0.scheduled += 1 }
                } catch {
                    outcome.withLock { $0.error = error }
                    break
                }
            }
            scheduler.signal()
        }.start()
        XCTAssertEqual(scheduler.wait(timeout: .now() + 10), .success, "a scheduled write waited for the full pool")
        let (scheduled, error) = outcome.withLock { $0 }
        XCTAssertEqual(error?.code, -EAGAIN, "\(scheduled) scheduled, then \(String(describing: error))")
        XCTAssertGreaterThan(scheduled, 100)
        XCTAssertTrue(try isBlocking(client), "the reader's wait was switched off by the write")
        queue.removePendingEvents()
    }

    /// The kernel hands over no part of an event that does not fit the read's buffer: a SysEx
    /// sent as one event longer than libasound's default 14,000 bytes (a client with a large
    /// pool may) must still arrive whole through the reader's 64 KiB, and the notes after it.
    func testASysExLongerThanLibasoundsDefaultBufferArrivesWhole() throws {
        let client = try SequencerClient(name: "reader-sysex")
        let input = try client.createPort(name: "in", direction: .input)
        _ = try client.subscribeToAnnouncements()
        try client.setInputPool(2000)  // the kernel's most: 56,000 bytes
        let dump = try SequencerClient(name: "reader-dump")
        let output = try dump.createPort(name: "out", direction: .output)
        try dump.connect(from: output, to: PortAddress(client: client.clientID, port: input))
        let store = SysExStore(slots: 2, capacity: 65_536)
        let reader = try SequencerReader(client: client, sysexStore: store)
        let received = Mutex<(sysex: [[UInt8]], notes: [UInt8])>(([], []))
        let finished = DispatchSemaphore(value: 0)
        Thread {
            do {
                try reader.run { decoded in
                    guard case .midi(let event, _) = decoded else { return }
                    if event.kind == .sysex {
                        let bytes = store.withBytes(event.sysex) { Array($0) }
                        store.release(event.sysex)
                        received.withLock { $0.sysex.append(bytes) }
                    } else if event.kind == .noteOn {
                        received.withLock { $0.notes.append(event.note) }
                    }
                }
            } catch {
                XCTFail("reader: \(error)")
            }
            finished.signal()
        }.start()
        defer {
            reader.stop()
            XCTAssertEqual(finished.wait(timeout: .now() + 5), .success)
        }
        XCTAssertTrue(waitUntil { (try? self.isBlocking(client)) == true })

        let message = [0xF0] + (0..<39_998).map { UInt8($0 % 128) } + [0xF7]
        var event = snd_seq_event_t()
        event.type = snd_seq_event_type_t(SND_SEQ_EVENT_SYSEX.rawValue)
        aseqosc_ev_set_source(&event, output)
        aseqosc_ev_set_subs(&event)
        aseqosc_ev_set_direct(&event)
        let written = message.withUnsafeBytes { bytes in
            aseqosc_ev_set_variable(&event, UInt32(bytes.count), bytes.baseAddress)
            return snd_seq_event_output_direct(dump.handle, &event)
        }
        XCTAssertEqual(Int(written), MemoryLayout<snd_seq_event_t>.size + message.count, "the kernel refused it")
        try dump.send(.noteOn(channel: 0, note: 64, velocity: 90), from: output)

        XCTAssertTrue(waitUntil { received.withLock { $0.notes } == [64] }, "the note after the SysEx never came")
        let sysex = received.withLock { $0.sysex }
        XCTAssertEqual(sysex.map(\.count), [message.count])
        // Not XCTAssertEqual: its message would print 80,000 numbers.
        XCTAssertTrue(sysex.first == message, "the SysEx arrived changed")
    }
}
