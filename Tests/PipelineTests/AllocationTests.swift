import CAllocationCounter
import MIDI
import Pipeline
import TestSupport
import XCTest

/// Proves the ring's push and pop never touch the heap, counting malloc and friends on this
/// thread through the test-only CAllocationCounter target.
final class RingAllocationTests: XCTestCase {
    func testCounterSeesAllocationsSoZeroMeansSomething() throws {
        try XCTSkipUnless(aseqosc_allocations_countable() == 1, "a sanitizer owns malloc in this build")
        XCTAssertEqual(aseqosc_allocations_interposed(), 1, "malloc is not interposed")
        aseqosc_allocations_start()
        var arrays: [[Int]] = []
        for size in 1...10 { arrays.append(Array(repeating: size, count: size * 100)) }
        let counted = aseqosc_allocations_stop()
        XCTAssertGreaterThanOrEqual(counted, 10)
        XCTAssertEqual(arrays.count, 10)
    }

    func testPushAndPopOfHundredThousandEventsAllocateNothing() throws {
        try requireOptimizedBuild()
        let ring = SPSCRing<MIDIEvent>(capacity: 256)
        let events = 100_000
        runRing(ring, events: 1_000)  // warm-up: lazy runtime metadata, first-touch pages

        aseqosc_allocations_start()
        let checksum = runRing(ring, events: events)
        let allocations = aseqosc_allocations_stop()

        XCTAssertEqual(allocations, 0, "\(allocations) allocations for \(events) events")
        XCTAssertEqual(checksum, (0..<events).reduce(0) { $0 &+ $1 % 128 })
        print("allocation test: ring push+pop, \(events) events, \(allocations) allocations")
    }

    @discardableResult
    private func runRing(_ ring: SPSCRing<MIDIEvent>, events: Int) -> Int {
        var checksum = 0
        var i = 0
        while i < events {
            _ = ring.push(.noteOn(channel: 0, note: UInt8(i % 128), velocity: 64))
            if let event = ring.pop() { checksum &+= Int(event.note) }
            i += 1
        }
        return checksum
    }
}
