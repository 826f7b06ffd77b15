import MIDI
import Pipeline
import Testing

@Suite struct SPSCRingTests {
    @Test(arguments: [(1, 2), (2, 2), (3, 4), (1000, 1024), (1024, 1024)])
    func capacityRoundsUpToAPowerOfTwo(requested: Int, expected: Int) {
        #expect(SPSCRing<Int>(capacity: requested).capacity == expected)
    }

    @Test func popsInPushOrder() {
        let ring = SPSCRing<Int>(capacity: 8)
        for value in 1...5 { #expect(ring.push(value)) }
        var popped: [Int] = []
        while let value = ring.pop() { popped.append(value) }
        #expect(popped == [1, 2, 3, 4, 5])
        #expect(ring.pop() == nil)
    }

    @Test func fullRingDropsAndCountsExactly() {
        let ring = SPSCRing<Int>(capacity: 4)
        var accepted = 0
        for value in 0..<1000 where ring.push(value) { accepted += 1 }
        #expect(accepted == 4)
        #expect(ring.drops == 996)
        #expect(ring.highWater == 4)
        #expect(ring.pop() == 0)
        #expect(ring.push(1000))
        var rest: [Int] = []
        while let value = ring.pop() { rest.append(value) }
        #expect(rest == [1, 2, 3, 1000])
    }

    /// The mark is the most the ring held at once: 3 pushed and popped at a time, 500 times,
    /// is 3, not the 1,500 a tail cached since the last full ring would make it.
    @Test func highWaterIsTheMostHeldAtOnce() {
        let ring = SPSCRing<Int>(capacity: 4096)
        for round in 0..<500 {
            for value in 0..<3 { #expect(ring.push(round * 3 + value)) }
            while ring.pop() != nil {}
        }
        #expect(ring.highWater == 3)
        for value in 0..<10 { #expect(ring.push(value)) }
        #expect(ring.highWater == 10)
    }

    @Test func indicesKeepWorkingAcrossManyWraps() {
        let ring = SPSCRing<MIDIEvent>(capacity: 4)
        for round in 0..<10_000 {
            let event = MIDIEvent.noteOn(channel: UInt8(round % 16), note: UInt8(round % 128), velocity: 1)
            #expect(ring.push(event))
            #expect(ring.pop() == event)
        }
        #expect(ring.count == 0)
        #expect(ring.drops == 0)
    }
}
