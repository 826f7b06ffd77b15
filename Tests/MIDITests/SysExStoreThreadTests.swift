import Foundation
import MIDI
import Synchronization
import XCTest

/// A minimal single-producer single-consumer queue of references, standing in for the
/// pipeline's ring so that the store can be tested across two threads on its own.
private final class ReferenceQueue: @unchecked Sendable {
    private let capacity = 16
    private let slots: UnsafeMutablePointer<SysExReference>
    private let head = Atomic<Int>(0)  // next to read, written by the consumer
    private let tail = Atomic<Int>(0)  // next to write, written by the producer

    init() {
        slots = .allocate(capacity: capacity)
        slots.initialize(repeating: .none, count: capacity)
    }

    deinit { slots.deallocate() }

    func push(_ reference: SysExReference) -> Bool {
        let t = tail.load(ordering: .relaxed)
        // Acquiring pairs with the releasing store of `head` in `pop`.
        guard t - head.load(ordering: .acquiring) < capacity else { return false }
        slots[t % capacity] = reference
        // Releasing pairs with the acquiring load of `tail` in `pop`.
        tail.store(t + 1, ordering: .releasing)
        return true
    }

    func pop() -> SysExReference? {
        let h = head.load(ordering: .relaxed)
        // Acquiring pairs with the releasing store of `tail` in `push`.
        guard h < tail.load(ordering: .acquiring) else { return nil }
        let reference = slots[h % capacity]
        // Releasing pairs with the acquiring load of `head` in `push`.
        head.store(h + 1, ordering: .releasing)
        return reference
    }
}

final class SysExStoreThreadTests: XCTestCase {
    /// 100,000 messages of 2...1,024 bytes cross from a producer thread to a consumer thread
    /// through an 8-slot store; every byte must arrive as written, and the checksums agree.
    func testProducerAndConsumerThreadsPassEveryMessageIntact() {
        let total = 100_000
        let capacity = 1024
        let store = SysExStore(slots: 8, capacity: capacity)
        let queue = ReferenceQueue()
        let producerChecksum = Atomic<UInt64>(0)
        let producerWaits = Atomic<Int>(0)
        let producerDone = DispatchSemaphore(value: 0)

        let producer = Thread {
            var checksum: UInt64 = 0
            var waits = 0
            var chunk = [UInt8](repeating: 0, count: capacity)
            var i = 0
            while i < total {
                let length = 2 + (i &* 7919) % (capacity - 1)
                var draft: SysExDraft? = store.reserve()
                while draft == nil {
                    waits += 1
                    sched_yield()
                    draft = store.reserve()
                }
                // Write the message in up to three chunks to exercise appends that continue.
                var k = 0
                while k < length {
                    let end = min(length, k + 1 + (i + k) % 400)
                    var n = 0
                    while k + n < end {
                        chunk[n] = messageByte(i, k + n, length)
                        checksum = checksum &* 31 &+ UInt64(chunk[n])
                        n += 1
                    }
                    chunk.withUnsafeBytes {
                        store.append(UnsafeRawBufferPointer(rebasing: $0[0..<n]), to: &draft!)
                    }
                    k = end
                }
                let reference = store.publish(draft!)!
                while !queue.push(reference) { sched_yield() }
                i += 1
            }
            producerChecksum.store(checksum, ordering: .relaxed)
            producerWaits.store(waits, ordering: .relaxed)
            producerDone.signal()
        }
        producer.start()

        var checksum: UInt64 = 0
        var mismatches = 0
        var i = 0
        while i < total {
            guard let reference = queue.pop() else {
                sched_yield()
                continue
            }
            let length = 2 + (i &* 7919) % (capacity - 1)
            store.withBytes(reference) { bytes in
                if bytes.count != length { mismatches += 1 }
                var k = 0
                while k < bytes.count {
                    if bytes[k] != messageByte(i, k, length) { mismatches += 1 }
                    checksum = checksum &* 31 &+ UInt64(bytes[k])
                    k += 1
                }
            }
            store.release(reference)
            i += 1
        }
        producerDone.wait()
        XCTAssertEqual(mismatches, 0)
        XCTAssertEqual(checksum, producerChecksum.load(ordering: .relaxed))
        // This producer waits instead of dropping, but each full-store reservation still counts.
        XCTAssertEqual(store.droppedNoFreeSlot, producerWaits.load(ordering: .relaxed))
        XCTAssertEqual(store.droppedTooLong, 0)
    }
}

/// Byte `k` of message `i`: `F0`, a pattern that differs per message, `F7`.
private func messageByte(_ i: Int, _ k: Int, _ length: Int) -> UInt8 {
    if k == 0 { return 0xF0 }
    if k == length - 1 { return 0xF7 }
    return sysexPatternByte(seed: i, at: k)
}
