import CAllocationCounter
import Endpoints
import Foundation
import MIDI
import Synchronization
import TestSupport
import XCTest

@testable import ALSASequencer

/// Notes written by ``DirectOutput`` and read by ``SequencerReader`` through libasound, on a
/// real sequencer: after a warm-up, neither side allocates (libasound's input buffer is its own,
/// made once when the reader is made).
final class SequencerIOAllocationALSATests: XCTestCase {
    override func setUpWithError() throws {
        try TestEnvironment.requireSequencer()
        try requireOptimizedBuild()
        guard aseqosc_allocations_countable() != 0 else { throw XCTSkip("malloc is not interposed here") }
    }

    /// What the reader's thread counted: events, and the allocations of the measured part.
    private final class ReaderSide: Sendable {
        let events = Atomic<Int>(0)
        let allocations = Atomic<Int>(-1)
    }

    func testWritingAndReadingNotesAllocatesNothing() throws {
        let client = try SequencerClient(name: "alloc-reader")
        let input = try client.createPort(name: "in", direction: .input)
        _ = try client.subscribeToAnnouncements()
        let keys = try SequencerClient(name: "alloc-keys")
        let port = try keys.createPort(name: "out", direction: .output)
        try keys.connect(from: port, to: PortAddress(client: client.clientID, port: input))
        let reader = try SequencerReader(client: client, sysexStore: SysExStore(slots: 2, capacity: 64))
        let output = DirectOutput(client: keys)

        let warmUp = 200
        let measured = 2_000
        let side = ReaderSide()
        let finished = DispatchSemaphore(value: 0)
        Thread {
            do {
                try reader.run(
                    midiBatch: { events, _ in
                        let before = side.events.load(ordering: .relaxed)
                        if before < warmUp && before + events.count >= warmUp { aseqosc_allocations_start() }
                        let after = before + events.count
                        if before < warmUp + measured && after >= warmUp + measured {
                            side.allocations.store(Int(aseqosc_allocations_stop()), ordering: .relaxed)
                        }
                        side.events.store(after, ordering: .releasing)
                    }, other: { _ in })
            } catch {
                XCTFail("reader: \(error)")
            }
            finished.signal()
        }.start()

        // In rounds the reader's input pool (200 events) can hold, each read before the next.
        var sent = 0
        var written = 0
        var writerAllocations: Int64 = 0
        while sent < warmUp + measured {
            let round = min(50, warmUp + measured - sent)
            if sent >= warmUp { aseqosc_allocations_start() }
            for index in 0..<round {
                let note = UInt8(truncatingIfNeeded: (sent + index) % 100)
                let event =
                    index % 2 == 0
                    ? MIDIEvent.noteOn(channel: 0, note: note, velocity: 90) : MIDIEvent.noteOff(channel: 0, note: note)
                if (try? output.send(event, from: port)) != nil { written += 1 }
            }
            if sent >= warmUp { writerAllocations += aseqosc_allocations_stop() }
            sent += round
            let deadline = Date().addingTimeInterval(30)
            while side.events.load(ordering: .acquiring) < written && Date() < deadline { usleep(200) }
        }
        reader.stop()
        XCTAssertEqual(finished.wait(timeout: .now() + 30), .success)

        XCTAssertEqual(written, warmUp + measured, "the kernel took every note")
        XCTAssertEqual(side.events.load(ordering: .acquiring), warmUp + measured)
        XCTAssertEqual(side.allocations.load(ordering: .relaxed), 0, "reader allocations")
        XCTAssertEqual(writerAllocations, 0, "writer allocations")
        print(
            "allocation test: DirectOutput -> kernel -> SequencerReader, \(measured) notes, "
                + "reader \(side.allocations.load(ordering: .relaxed)), writer \(writerAllocations) allocations")
    }
}
