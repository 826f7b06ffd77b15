import CAllocationCounter
import XCTest

/// The test-only CAllocationCounter target counts malloc and friends on this thread: the
/// allocation tests (HotPathAllocationTests and others) rely on it seeing them.
final class AllocationCounterTests: XCTestCase {
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
}
