import Foundation
import MIDI
import Pipeline
import XCTest

/// Two real threads move many events through a small ring; a checksum over every field and
/// the strict sequence numbers prove nothing is lost, duplicated, reordered or torn.
final class SPSCRingStressTests: XCTestCase {
    func testTenMillionEventsCrossThreadsIntactAndInOrder() throws {
        let total = 10_000_000
        let ring = SPSCRing<MIDIEvent>(capacity: 1024)
        let producerSum = LockedBox(0)
        let producerDone = DispatchSemaphore(value: 0)

        let producer = Thread {
            var sum = 0
            var sequence = 0
            while sequence < total {
                let event = Self.event(sequence)
                if ring.push(event) {
                    sum &+= Self.fingerprint(event)
                    sequence += 1
                }
            }
            producerSum.set(sum)
            producerDone.signal()
        }
        producer.start()

        var consumerSum = 0
        var expected = 0
        var outOfOrder = 0
        while expected < total {
            guard let event = ring.pop() else { continue }
            if event.timestamp != UInt64(expected) { outOfOrder += 1 }
            consumerSum &+= Self.fingerprint(event)
            expected += 1
        }
        producerDone.wait()

        XCTAssertEqual(outOfOrder, 0)
        XCTAssertEqual(consumerSum, producerSum.get())
        XCTAssertNil(ring.pop())
    }

    static func event(_ sequence: Int) -> MIDIEvent {
        MIDIEvent(
            .controlChange, channel: UInt8(sequence & 15), data1: UInt8((sequence >> 4) & 127),
            data2: UInt8((sequence >> 11) & 127), value: Int32(truncatingIfNeeded: sequence &* 31),
            parameter: UInt16(truncatingIfNeeded: sequence), timestamp: UInt64(sequence))
    }

    static func fingerprint(_ event: MIDIEvent) -> Int {
        var hash = Int(event.timestamp) &* 1_000_003
        hash = (hash ^ Int(event.value)) &* 31 &+ Int(event.parameter)
        hash = hash &* 31 &+ Int(event.channel) &* 7 &+ Int(event.data1) &* 131 &+ Int(event.data2)
        return hash | 1
    }
}

/// A tiny lock-protected cell for handing one result back from a thread.
final class LockedBox<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func get() -> Value { lock.withLock { value } }
    func set(_ newValue: Value) { lock.withLock { value = newValue } }
}
