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
