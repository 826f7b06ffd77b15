import CAllocationCounter
import Storage
import TestSupport
import XCTest

/// The rings are used on the event threads: after `init`, nothing they do allocates, counting
/// malloc and friends on this thread.
final class RingAllocationTests: XCTestCase {
    func testAFixedRingQueuingAndRemovingAllocatesNothing() throws {
        try requireOptimizedBuild()
        XCTAssertEqual(aseqosc_allocations_interposed(), 1, "malloc is not interposed")
        let ring = FixedRing<UInt64>(capacity: 3_104)
        var sum: UInt64 = 0
        func run(_ rounds: Int) {
            var round = 0
            while round < rounds {
                var value: UInt64 = 0
                while ring.append(value) { value += 1 }  // fills, then refuses
                _ = ring.insert(1, at: 0)  // refused: full
                sum &+= ring.remove(at: 1_000)
                _ = ring.insert(7, at: 10)
                if let found = ring.lastIndex(where: { $0 == 7 }) { sum &+= UInt64(found) }
                while !ring.isEmpty { sum &+= ring.removeFirst() }
                round += 1
            }
        }
        run(2)  // warm-up
        aseqosc_allocations_start()
        run(100)
        let allocations = aseqosc_allocations_stop()
        XCTAssertEqual(allocations, 0, "\(allocations) allocations for 100 fills and drains")
        XCTAssertGreaterThan(sum, 0)
    }

    func testAnSPSCRingWritingReadingAndRefusingAllocatesNothing() throws {
        try requireOptimizedBuild()
        let ring = SPSCRing(minimumCapacity: 4_096)
        var bytes = (UInt64(1), UInt64(2), UInt64(3), UInt64(4), UInt64(5), UInt64(6), UInt64(7), UInt64(8))
        var read = 0
        var refused = 0
        func run(_ records: Int) {
            withUnsafeBytes(of: &bytes) { source in
                var index = 0
                while index < records {
                    let size = index % source.count
                    let written = ring.write(tag: UInt32(index), size: size) {
                        $0.copyMemory(from: source.baseAddress!, byteCount: size)
                    }
                    if !written { refused += 1 }
                    // Read every 100 records: the ring fills and refuses in between.
                    if index % 100 == 99 {
                        ring.read { _, record in
                            read += record.count
                            return true
                        }
                    }
                    index += 1
                }
            }
        }
        run(1_000)  // warm-up
        aseqosc_allocations_start()
        run(100_000)
        let allocations = aseqosc_allocations_stop()
        XCTAssertEqual(allocations, 0, "\(allocations) allocations for 100,000 records")
        XCTAssertGreaterThan(read, 0)
        XCTAssertGreaterThan(refused, 0, "the ring was full at times")
    }
}
