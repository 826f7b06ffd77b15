import Foundation
import Storage
import Synchronization
import Testing
import XCTest

/// The hand-off ring on one thread: records come out in order with their tags and bytes, wrap
/// at the end of the ring without being split, and a full ring refuses without waiting.
@Suite struct SPSCRingTests {
    /// Writes a record of `bytes` tagged `tag`.
    static func write(_ ring: SPSCRing, tag: UInt32, _ bytes: [UInt8]) -> Bool {
        ring.write(tag: tag, size: bytes.count) { record in
            bytes.withUnsafeBytes {
                if let base = $0.baseAddress { record.copyMemory(from: base, byteCount: $0.count) }
            }
        }
    }

    /// Everything waiting, as tags and bytes.
    static func readAll(_ ring: SPSCRing) -> [(UInt32, [UInt8])] {
        var records: [(UInt32, [UInt8])] = []
        let left = ring.read { tag, bytes in
            records.append((tag, Array(bytes)))
            return true
        }
        #expect(!left)
        return records
    }

    @Test func anEmptyRingHasNothingToRead() {
        let ring = SPSCRing(minimumCapacity: 100)
        #expect(ring.capacity == 128 && ring.maximumRecordSize == 56)
        #expect(ring.isEmpty)
        let left = ring.read { _, _ in
            Issue.record("read from an empty ring")
            return true
        }
        #expect(!left)
    }

    @Test func recordsComeOutInOrderWithTheirTagsAndBytes() {
        let ring = SPSCRing(minimumCapacity: 1_024)
        #expect(Self.write(ring, tag: 7, [1, 2, 3]))
        #expect(Self.write(ring, tag: 0, []))
        #expect(Self.write(ring, tag: .max - 1, Array(0..<200)))
        #expect(!ring.isEmpty)
        let records = Self.readAll(ring)
        #expect(records.map { $0.0 } == [7, 0, UInt32.max - 1])
        #expect(records.map { $0.1 } == [[1, 2, 3], [], Array(0..<200)])
        #expect(ring.isEmpty)
        #expect(Self.readAll(ring).isEmpty, "read once")
    }

    @Test func aRecordThatWouldCrossTheEndStartsAgainAtZero() {
        // Records of 24 or 32 bytes in 128, two at a time: each lap ends with a record that
        // does not fit before the end, somewhere else each time.
        let ring = SPSCRing(minimumCapacity: 128)
        var expected: [[UInt8]] = []
        for lap in 0..<20 {
            let record = [UInt8](repeating: UInt8(lap), count: 10 + lap % 15)
            #expect(Self.write(ring, tag: UInt32(lap), record))
            expected.append(record)
            if lap % 2 == 1 {
                let records = Self.readAll(ring)
                #expect(records.map { $0.1 } == expected)
                #expect(records.map { $0.0 } == records.indices.map { UInt32(lap - expected.count + 1 + $0) })
                expected = []
            }
        }
    }

    @Test func aFullRingRefusesWithoutWaitingAndTakesMoreOnceRead() {
        let ring = SPSCRing(minimumCapacity: 256)
        var written = 0
        while Self.write(ring, tag: UInt32(written), [UInt8](repeating: 1, count: 8)) { written += 1 }
        #expect(written == 256 / SPSCRing.space(forRecordOf: 8))
        #expect(!Self.write(ring, tag: 0, []), "still full")
        // The consumer takes one and leaves the rest: room for one more.
        var taken: [UInt32] = []
        let left = ring.read { tag, _ in
            guard taken.isEmpty else { return false }
            taken.append(tag)
            return true
        }
        #expect(left && taken == [0])
        #expect(Self.write(ring, tag: 99, [2]))
        #expect(!Self.write(ring, tag: 100, [3]))
        let records = Self.readAll(ring)
        #expect(records.map { $0.0 } == Array(1..<UInt32(written)) + [99])
    }

    @Test func aRecordOverTheLargestIsRefusedAndOneOfTheLargestFitsAnywhere() {
        let ring = SPSCRing(minimumCapacity: 128)
        #expect(!Self.write(ring, tag: 0, [UInt8](repeating: 0, count: ring.maximumRecordSize + 1)))
        // Wherever the ring stands, an empty ring takes a record of the largest size.
        for start in 0..<16 {
            #expect(Self.write(ring, tag: 0, [UInt8](repeating: 0, count: start)))
            #expect(Self.readAll(ring).count == 1)
            let largest = [UInt8](repeating: UInt8(start), count: ring.maximumRecordSize)
            #expect(Self.write(ring, tag: 1, largest))
            #expect(Self.readAll(ring).map { $0.1 } == [largest])
        }
    }
}

/// The hand-off ring across two threads, as the event threads use it.
final class SPSCRingThreadTests: XCTestCase {
    /// Record `index`'s size and bytes: sizes 0...300 in a ring of 4,096 bytes, so it fills,
    /// wraps and refuses all the time.
    static func size(_ index: Int) -> Int { (index &* 7_919) % 301 }
    static func byte(_ index: Int, _ offset: Int) -> UInt8 { UInt8(truncatingIfNeeded: index &* 31 &+ offset) }

    /// 200,000 records from a producer thread reach a consumer thread complete, in order,
    /// each exactly once, while the producer retries every refusal.
    func testEveryRecordCrossesIntactAndInOrder() {
        let total = 200_000
        let ring = SPSCRing(minimumCapacity: 4_096)
        let refusals = Atomic<Int>(0)
        let producerDone = DispatchSemaphore(value: 0)
        let producer = Thread {
            var index = 0
            var refused = 0
            while index < total {
                let size = Self.size(index)
                let written = ring.write(tag: UInt32(truncatingIfNeeded: index), size: size) { record in
                    var offset = 0
                    while offset < size {
                        record.storeBytes(of: Self.byte(index, offset), toByteOffset: offset, as: UInt8.self)
                        offset += 1
                    }
                }
                if written {
                    index += 1
                } else {
                    refused += 1
                    sched_yield()
                }
            }
            refusals.store(refused, ordering: .relaxed)
            producerDone.signal()
        }
        producer.start()

        var next = 0
        var mismatches = 0
        let deadline = Date().addingTimeInterval(60)
        while next < total && Date() < deadline {
            let left = ring.read { tag, bytes in
                if tag != UInt32(truncatingIfNeeded: next) || bytes.count != Self.size(next) {
                    mismatches += 1
                } else {
                    var offset = 0
                    while offset < bytes.count {
                        if bytes[offset] != Self.byte(next, offset) { mismatches += 1 }
                        offset += 1
                    }
                }
                next += 1
                return true
            }
            if !left { sched_yield() }
        }
        XCTAssertEqual(producerDone.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(next, total, "every record arrived")
        XCTAssertEqual(mismatches, 0, "each in order with its bytes")
        XCTAssertTrue(ring.isEmpty)
        XCTAssertGreaterThan(refusals.load(ordering: .relaxed), 0, "the ring was full at times")
    }
}
