// CLiblo: liblo's headers include <sys/socket.h> themselves, and in this test module (which
// loads them) a release build only shows `SOCK_DGRAM` to files that import CLiblo.
import CLiblo
import Endpoints
import Foundation
import Glibc
import OSCTransport
import TestSupport
import XCTest

/// A ``UDPReceiver`` on loopback, run alone by an ``OSCReceiver`` as the OSC thread runs it:
/// datagrams arrive whole with their sender, allow-lists drop and count, `stop()` ends the loop.
final class UDPReceiverTests: XCTestCase {
    /// Runs `receiver` on a thread until `stop()`, collecting each datagram and its sender.
    final class Collector: @unchecked Sendable {
        let lock = NSLock()
        var datagrams: [([UInt8], PacketSource)] = []
        let done = DispatchSemaphore(value: 0)
        private var input: OSCReceiver?

        func run(_ receiver: UDPReceiver) throws {
            let input = try OSCReceiver(udp: receiver, tcp: nil)
            self.input = input
            Thread {
                input.run(tick: { -1 }) { bytes, sender in
                    self.lock.withLock { self.datagrams.append((Array(bytes), sender)) }
                }
                self.done.signal()
            }.start()
        }

        /// Ends the loop, as the OSC side's stop does.
        func stop() { input?.stop() }

        func waitFor(_ count: Int) -> [([UInt8], PacketSource)] {
            let deadline = Date().addingTimeInterval(5)
            while Date() < deadline {
                let got = lock.withLock { datagrams }
                if got.count >= count { return got }
                usleep(2_000)
            }
            return lock.withLock { datagrams }
        }
    }

    func send(_ bytes: [UInt8], toPort port: Int, ipv6: Bool = false) {
        let descriptor = socket(ipv6 ? AF_INET6 : AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(descriptor) }
        if ipv6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_addr = in6addr_loopback
            address.sin6_port = UInt16(port).bigEndian
            _ = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(descriptor, bytes, bytes.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            }
        } else {
            _ = withIPv4Loopback(port: port) { sendto(descriptor, bytes, bytes.count, 0, $0, $1) }
        }
    }

    func testDatagramsArriveWholeWithTheirSenderInOrder() throws {
        let receiver = try UDPReceiver(host: "127.0.0.1", port: 0, batchCapacity: 4, slotSize: 2048)
        let collector = Collector()
        try collector.run(receiver)
        let packets = (0..<10).map { i in [UInt8](repeating: UInt8(i), count: 4 * (i + 1)) }
        for packet in packets { send(packet, toPort: receiver.port) }
        let got = collector.waitFor(10)
        collector.stop()
        XCTAssertEqual(collector.done.wait(timeout: .now() + 5), .success, "stop() did not end the loop")
        XCTAssertEqual(got.map(\.0), packets)
        XCTAssertEqual(got.map(\.1.address.description), Array(repeating: "127.0.0.1", count: 10))
        XCTAssertEqual(receiver.statistics.datagrams, 10)
        XCTAssertEqual(receiver.statistics.bytes, packets.reduce(0) { $0 + $1.count })
    }

    /// Runs `receiver` with `tick` until `count` datagrams arrived, then, with `later`, sends
    /// it while the receiver waits and waits for it; returns, for each datagram, how many times
    /// `beforeBatch` had run when it was handed on.
    func batchNumbers(
        _ receiver: UDPReceiver, tick: @escaping @Sendable () -> Int32, count: Int, thenSend later: [UInt8]? = nil
    ) throws -> [Int] {
        let lock = NSLock()
        nonisolated(unsafe) var batches = 0
        nonisolated(unsafe) var batchOfEach: [Int] = []
        let done = DispatchSemaphore(value: 0)
        let input = try OSCReceiver(udp: receiver, tcp: nil)
        Thread {
            input.run(tick: tick, beforeBatch: { lock.withLock { batches += 1 } }) { _, _ in
                lock.withLock { batchOfEach.append(batches) }
            }
            done.signal()
        }.start()
        func waitFor(_ count: Int) {
            let deadline = Date().addingTimeInterval(5)
            while lock.withLock({ batchOfEach.count }) < count && Date() < deadline { usleep(2_000) }
        }
        waitFor(count)
        if let later {
            usleep(50_000)
            send(later, toPort: receiver.port)
            waitFor(count + 1)
        }
        input.stop()
        XCTAssertEqual(done.wait(timeout: .now() + 5), .success, "stop() did not end the loop")
        return lock.withLock { batchOfEach }
    }

    /// `beforeBatch` runs once per `recvmmsg`, before that batch's datagrams: the OSC side reads
    /// the clock there once for them all. With a tick due the loop polls and reads whole batches.
    func testBeforeBatchRunsOnceBeforeEachBatch() throws {
        let receiver = try UDPReceiver(host: "127.0.0.1", port: 0, batchCapacity: 4, slotSize: 2048)
        // Queued before the loop starts: the batches are 4, 4 and 2.
        for i in 0..<10 { send([UInt8](repeating: UInt8(i), count: 4), toPort: receiver.port) }
        XCTAssertEqual(try batchNumbers(receiver, tick: { 50 }, count: 10), [1, 1, 1, 1, 2, 2, 2, 2, 3, 3])
    }

    /// Waiting in the receive, a quiet socket is read one datagram at a time; every eighth
    /// single receive is followed by a batch read, which finds the queue of a burst and reads it
    /// in batches; the wait after the burst reads the one datagram there is.
    func testWaitsReadOneDatagramUntilABatchReadFindsMoreQueued() throws {
        let receiver = try UDPReceiver(host: "127.0.0.1", port: 0, batchCapacity: 4, slotSize: 2048)
        XCTAssertEqual(UDPReceiver.probeInterval, 8)
        for i in 0..<30 { send([UInt8](repeating: UInt8(i), count: 4), toPort: receiver.port) }
        let singles = Array(1...8)
        let burst = [9, 10, 11, 12, 13].flatMap { Array(repeating: $0, count: 4) } + [14, 14]
        XCTAssertEqual(try batchNumbers(receiver, tick: { -1 }, count: 30, thenSend: [99]), singles + burst + [15])
        XCTAssertEqual(receiver.statistics.datagrams, 31)
    }

    /// With nothing timed to do the loop waits in the receive itself; `stop()` must end that
    /// wait (by shutting the socket's reading side) without handing on the empty read it makes.
    func testStopEndsAReceiveThatIsWaitingAndHandsOnNothing() throws {
        let receiver = try UDPReceiver(host: "127.0.0.1", port: 0, batchCapacity: 4, slotSize: 2048)
        let collector = Collector()
        try collector.run(receiver)
        usleep(50_000)  // the thread is inside recvmmsg by now (a later stop is the same case)
        collector.stop()
        XCTAssertEqual(collector.done.wait(timeout: .now() + 5), .success, "stop() did not end a waiting receive")
        XCTAssertEqual(collector.lock.withLock { collector.datagrams.count }, 0)
        XCTAssertEqual(receiver.statistics.datagrams, 0)
    }

    /// A real empty datagram is still one: the stop check does not swallow it.
    func testAnEmptyDatagramIsHandedOn() throws {
        let receiver = try UDPReceiver(host: "127.0.0.1", port: 0, batchCapacity: 4, slotSize: 2048)
        let collector = Collector()
        try collector.run(receiver)
        send([], toPort: receiver.port)
        send([1, 2, 3, 4], toPort: receiver.port)
        let got = collector.waitFor(2)
        collector.stop()
        XCTAssertEqual(collector.done.wait(timeout: .now() + 5), .success, "stop() did not end the loop")
        XCTAssertEqual(got.map(\.0), [[], [1, 2, 3, 4]])
    }

    /// The loop moves between waiting with a timeout (`poll`, so `tick` runs when it is due)
    /// and waiting in the receive (`tick` returns -1), and `stop()` ends either.
    func testTicksRunWhileATimeoutIsAskedForThenTheReceiveWaits() throws {
        let receiver = try UDPReceiver(host: "127.0.0.1", port: 0, batchCapacity: 4, slotSize: 2048)
        let lock = NSLock()
        nonisolated(unsafe) var ticks = 0
        nonisolated(unsafe) var received: [[UInt8]] = []
        let done = DispatchSemaphore(value: 0)
        let input = try OSCReceiver(udp: receiver, tcp: nil)
        Thread {
            // 2 ms timeouts for the first 20 ticks, then none.
            let tick = {
                lock.withLock {
                    ticks += 1
                    return ticks <= 20 ? Int32(2) : -1
                }
            }
            input.run(tick: tick) { bytes, _ in
                lock.withLock { received.append(Array(bytes)) }
            }
            done.signal()
        }.start()
        let deadline = Date().addingTimeInterval(5)
        while lock.withLock({ ticks }) <= 20 && Date() < deadline { usleep(2_000) }
        XCTAssertGreaterThan(lock.withLock { ticks }, 20, "timeouts did not wake the loop to tick")
        usleep(20_000)
        let ticksWhileWaiting = lock.withLock { ticks }
        usleep(50_000)
        XCTAssertEqual(lock.withLock { ticks }, ticksWhileWaiting, "the loop ticked with no timeout and no datagram")
        send([9, 9, 9, 9], toPort: receiver.port)
        while lock.withLock({ received.count }) < 1 && Date() < deadline { usleep(2_000) }
        XCTAssertEqual(lock.withLock { received }, [[9, 9, 9, 9]])
        XCTAssertEqual(lock.withLock { ticks }, ticksWhileWaiting + 1, "one tick after the datagram's batch")
        input.stop()
        XCTAssertEqual(done.wait(timeout: .now() + 5), .success, "stop() did not end the loop")
    }

    func testSendersOutsideTheAllowListAreDroppedAndCounted() throws {
        let receiver = try UDPReceiver(
            host: "127.0.0.1", port: 0, allowList: IPAllowList([try IPNetwork(parsing: "10.0.0.0/8")]))
        let collector = Collector()
        try collector.run(receiver)
        send([1, 2, 3, 4], toPort: receiver.port)
        send([5, 6, 7, 8], toPort: receiver.port)
        let deadline = Date().addingTimeInterval(5)
        while receiver.statistics.notAllowed < 2 && Date() < deadline { usleep(2_000) }
        collector.stop()
        collector.done.wait()
        XCTAssertEqual(receiver.statistics.notAllowed, 2)
        XCTAssertEqual(receiver.statistics.datagrams, 0)
        XCTAssertTrue(collector.datagrams.isEmpty)
    }

    func testTheWildcardIPv6AddressTakesIPv4SendersAsIPv4() throws {
        let receiver: UDPReceiver
        do {
            receiver = try UDPReceiver(
                host: "::", port: 0, allowList: IPAllowList([try IPNetwork(parsing: "127.0.0.0/8")]))
        } catch {
            throw XCTSkip("no IPv6 here: \(error)")
        }
        let collector = Collector()
        try collector.run(receiver)
        send([9, 9, 9, 9], toPort: receiver.port)
        send([8, 8, 8, 8], toPort: receiver.port, ipv6: true)
        let deadline = Date().addingTimeInterval(5)
        while receiver.statistics.datagrams + receiver.statistics.notAllowed < 2 && Date() < deadline { usleep(2_000) }
        collector.stop()
        collector.done.wait()
        XCTAssertEqual(collector.datagrams.map(\.1.address.description), ["127.0.0.1"])
        XCTAssertEqual(receiver.statistics.notAllowed, 1, "::1 is not in 127.0.0.0/8")
    }

    func testDatagramsLargerThanASlotAreCountedAsTruncated() throws {
        let receiver = try UDPReceiver(host: "127.0.0.1", port: 0, batchCapacity: 2, slotSize: 64)
        let collector = Collector()
        try collector.run(receiver)
        send([UInt8](repeating: 1, count: 100), toPort: receiver.port)
        send([1, 2, 3, 4], toPort: receiver.port)
        _ = collector.waitFor(1)
        collector.stop()
        collector.done.wait()
        XCTAssertEqual(collector.datagrams.map(\.0), [[1, 2, 3, 4]])
        XCTAssertEqual(receiver.statistics.truncated, 1)
    }

    func testBindingANameOrABusyPortFailsWithTheCall() throws {
        XCTAssertThrowsError(try UDPReceiver(host: "localhost", port: 0)) { error in
            XCTAssertTrue("\(error)".hasPrefix("getaddrinfo for localhost:0: "), "\(error)")
        }
        let first = try UDPReceiver(host: "127.0.0.1", port: 0)
        XCTAssertThrowsError(try UDPReceiver(host: "127.0.0.1", port: first.port)) { error in
            XCTAssertEqual("\(error)", "bind for 127.0.0.1:\(first.port): Address already in use")
        }
    }
}
