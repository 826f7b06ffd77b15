import Storage
import Testing

/// The single-thread ring: a bounded queue that wraps, refuses past its capacity, and inserts
/// and removes in the middle, checked against an array doing the same. (A ring cannot be
/// copied, so what is checked is read into values first.)
@Suite struct FixedRingTests {
    /// The elements, head first.
    static func elements<Element>(_ ring: FixedRing<Element>) -> [Element] {
        var elements: [Element] = []
        var position = 0
        while position < ring.count {
            elements.append(ring[position])
            position += 1
        }
        return elements
    }

    @Test func anEmptyRingHasNoFirstAndNothingToFind() {
        let ring = FixedRing<Int>(capacity: 4)
        let (isEmpty, isFull, count, capacity) = (ring.isEmpty, ring.isFull, ring.count, ring.capacity)
        #expect(isEmpty && !isFull && count == 0 && capacity == 4)
        let first = ring.first
        let found = ring.lastIndex { _ in true }
        #expect(first == nil && found == nil)
    }

    @Test func aFullRingRefusesAndTakesMoreOnceTheHeadIsRemoved() {
        let ring = FixedRing<Int>(capacity: 3)
        let taken = [ring.append(1), ring.append(2), ring.append(3)]
        let isFull = ring.isFull
        #expect(taken == [true, true, true] && isFull)
        let refused = [ring.append(4), ring.insert(4, at: 0)]
        #expect(refused == [false, false], "full, at the tail and at the head")
        let (count, first) = (ring.count, ring.first)
        #expect(count == 3 && first == 1)
        let removed = ring.removeFirst()
        let appended = ring.append(4)
        #expect(removed == 1 && appended)
        #expect(Self.elements(ring) == [2, 3, 4])
    }

    @Test func appendingAndRemovingWrapsAroundTheEndManyTimes() {
        let ring = FixedRing<UInt16>(capacity: 5)
        var model: [UInt16] = []
        var next: UInt16 = 0
        // Three in, two out while there is room: the head goes round the five slots many times.
        for _ in 0..<40 {
            for _ in 0..<3 where model.count < 5 {
                let appended = ring.append(next)
                #expect(appended)
                model.append(next)
                next += 1
            }
            for _ in 0..<2 {
                let removed = ring.removeFirst()
                #expect(removed == model.removeFirst())
            }
            #expect(Self.elements(ring) == model)
        }
        #expect(next > 40)
    }

    @Test func insertsAndRemovalsInTheMiddleMatchAnArrayAcrossTheWrap() {
        let ring = FixedRing<Int>(capacity: 7)
        var model: [Int] = []
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func random(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int(state >> 33) % bound
        }
        for step in 0..<2_000 {
            switch random(5) {
            case 0, 1:
                let appended = ring.append(step)
                #expect(appended == (model.count < 7))
                if model.count < 7 { model.append(step) }
            case 2:
                let position = random(model.count + 1)
                let inserted = ring.insert(step, at: position)
                #expect(inserted == (model.count < 7))
                if model.count < 7 { model.insert(step, at: position) }
            case 3 where !model.isEmpty:
                let position = random(model.count)
                let removed = ring.remove(at: position)
                #expect(removed == model.remove(at: position))
            default:
                if !model.isEmpty {
                    let removed = ring.removeFirst()
                    #expect(removed == model.removeFirst())
                }
            }
            #expect(Self.elements(ring) == model)
            let first = ring.first
            let odd = ring.lastIndex { $0 % 2 == 1 }
            #expect(first == model.first && odd == model.lastIndex { $0 % 2 == 1 })
        }
    }

    @Test func anElementIsReplacedInPlaceAndRemoveAllEmpties() {
        let ring = FixedRing<Int>(capacity: 3)
        ring.append(1)
        ring.append(2)
        ring.removeFirst()
        ring.append(3)
        ring.append(4)  // wrapped: the slots hold 4, 2, 3 with the head at 1
        ring[2] = 40
        #expect(Self.elements(ring) == [2, 3, 40])
        ring.removeAll()
        let (isEmpty, first) = (ring.isEmpty, ring.first)
        #expect(isEmpty && first == nil)
        let taken = [ring.append(5), ring.append(6), ring.append(7), ring.append(8)]
        #expect(taken == [true, true, true, false])
        #expect(Self.elements(ring) == [5, 6, 7])
    }

    @Test func aRingOfAnyCapacityWraps() {
        // Not a power of two: the per-port queues are their capacity plus a reserve.
        let ring = FixedRing<Int>(capacity: 3_104)
        var value = 0
        while ring.append(value) { value += 1 }
        #expect(value == 3_104)
        var removed: [Int] = []
        for _ in 0..<1_000 { removed.append(ring.removeFirst()) }
        #expect(removed == Array(0..<1_000))
        while ring.append(value) { value += 1 }
        let (isFull, first, last) = (ring.isFull, ring.first, ring[3_103])
        #expect(value == 4_104 && isFull && first == 1_000 && last == 4_103)
    }
}
