import CAllocationCounter
// CLiblo: liblo's headers include <sys/socket.h> themselves, and in this test module (which
// loads them) a release build only shows `SOCK_DGRAM` to files that import CLiblo.
import CLiblo
import Endpoints
import Glibc
import OSCTransport
import Platform
import TestSupport
import XCTest

/// A UDP socket the test binds on loopback, to see what a ``OSCSender`` really sent.
final class LoopbackReceiver {
    let descriptor: Int32
    let port: Int

    /// Binds `127.0.0.1` or `::1` on `port` (0: a free one); nil when the family is unavailable
    /// here or the port is taken.
    init?(ipv6: Bool, port requested: Int = 0) {
        let descriptor = socket(ipv6 ? AF_INET6 : AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        var length: socklen_t
        var bound: Int32
        if ipv6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_addr = in6addr_loopback
            address.sin6_port = UInt16(requested).bigEndian
            length = socklen_t(MemoryLayout<sockaddr_in6>.size)
            bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
            }
            _ = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
            }
            port = Int(UInt16(bigEndian: address.sin6_port))
        } else {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
            address.sin_port = UInt16(requested).bigEndian
            length = socklen_t(MemoryLayout<sockaddr_in>.size)
            bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
            }
            _ = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
            }
            port = Int(UInt16(bigEndian: address.sin_port))
        }
        guard bound == 0 else {
            close(descriptor)
            return nil
        }
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// The next datagram, or nil after `timeout` milliseconds without one.
    func receive(timeout: Int32 = 2_000) -> [UInt8]? {
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, timeout) == 1 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 70_000)
        let count = recv(descriptor, &buffer, buffer.count, 0)
        return count >= 0 ? Array(buffer.prefix(count)) : nil
    }

    /// The next `count` datagrams, waiting up to `timeout` milliseconds for each; fewer if they
    /// stop coming.
    func receive(count: Int, timeout: Int32 = 2_000) -> [[UInt8]] {
        var packets: [[UInt8]] = []
        while packets.count < count, let packet = receive(timeout: timeout) { packets.append(packet) }
        return packets
    }

    /// Every datagram that arrives until none has for `quiet` milliseconds.
    func receiveAll(quiet: Int32 = 300) -> [[UInt8]] {
        var packets: [[UInt8]] = []
        while let packet = receive(timeout: quiet) { packets.append(packet) }
        return packets
    }
}

/// A port nothing listens on: bound to find a free one, then closed.
func closedPort() throws -> Int {
    let receiver = try XCTUnwrap(LoopbackReceiver(ipv6: false))
    return receiver.port
}

func resolved(_ text: String) throws -> ResolvedOSCDestination {
    try OSCDestination(parsing: text).resolve()
}

func packet(_ index: Int, size: Int = 16) -> [UInt8] {
    (0..<size).map { UInt8(truncatingIfNeeded: index &* 31 &+ $0) }
}

final class UDPSenderTests: XCTestCase {
    func testPacketsArriveByteForByteAndInOrderOverIPv4AndIPv6() throws {
        let v4 = try XCTUnwrap(LoopbackReceiver(ipv6: false))
        guard let v6 = LoopbackReceiver(ipv6: true) else { throw XCTSkip("no IPv6 loopback here") }
        let sender = try OSCSender(destinations: [
            resolved("127.0.0.1:\(v4.port)"), resolved("[::1]:\(v6.port)"),
        ])
        var expected4: [[UInt8]] = []
        var expected6: [[UInt8]] = []
        for i in 0..<40 {
            let bytes = packet(i, size: 4 + i * 13)
            let destination = i % 3 == 0 ? 1 : 0
            bytes.withUnsafeBytes { sender.queue($0, to: destination) }
            if destination == 0 { expected4.append(bytes) } else { expected6.append(bytes) }
        }
        sender.flush()

        XCTAssertEqual(v4.receiveAll(), expected4)
        XCTAssertEqual(v6.receiveAll(), expected6)
        XCTAssertEqual(sender.statistics.packetsSent(to: 0), expected4.count)
        XCTAssertEqual(sender.statistics.bytesSent(to: 1), expected6.map(\.count).reduce(0, +))
        XCTAssertEqual(sender.statistics.counters(for: 0).totalErrors, 0)
    }

    func testAFullBatchFlushesItselfAndALargePacketGoesAfterTheQueuedOnes() throws {
        let receiver = try XCTUnwrap(LoopbackReceiver(ipv6: false))
        let sender = try OSCSender(
            destinations: [resolved("127.0.0.1:\(receiver.port)")], batchCapacity: 4, slotSize: 64)
        var expected: [[UInt8]] = []
        for i in 0..<10 {
            let bytes = packet(i, size: i == 9 ? 3_000 : 20)
            bytes.withUnsafeBytes { sender.queue($0, to: 0) }
            expected.append(bytes)
        }
        sender.flush()
        XCTAssertEqual(receiver.receiveAll(), expected)
        XCTAssertEqual(sender.statistics.packetsSent(to: 0), 10)
    }

    func testOneDestinationSendsItsWholeBatchInOrderAndCountsItsBytes() throws {
        // One destination takes the flush without gathering: slots written in place and copied
        // ones alike, across batches that fill up and flush by themselves.
        let receiver = try XCTUnwrap(LoopbackReceiver(ipv6: false))
        let sender = try OSCSender(
            destinations: [resolved("127.0.0.1:\(receiver.port)")], batchCapacity: 8, slotSize: 256)
        var expected: [[UInt8]] = []
        for i in 0..<30 {
            let bytes = packet(i, size: 4 + (i * 37) % 200)
            if i % 2 == 0 {
                bytes.withUnsafeBytes { sender.queue($0, to: 0) }
            } else {
                let slot = sender.nextSlot()
                bytes.withUnsafeBytes { slot.copyMemory(from: $0) }
                sender.commit(bytes.count, to: 0)
            }
            expected.append(bytes)
        }
        sender.flush()
        sender.flush()  // nothing queued: sends nothing
        XCTAssertEqual(receiver.receiveAll(), expected)
        XCTAssertEqual(sender.statistics.packetsSent(to: 0), 30)
        XCTAssertEqual(sender.statistics.bytesSent(to: 0), expected.map(\.count).reduce(0, +))
        XCTAssertEqual(sender.statistics.counters(for: 0).totalErrors, 0)
    }

    func testAClosedPortAsTheOnlyDestinationIsCountedPacketForPacket() throws {
        let sender = try OSCSender(destinations: [resolved("127.0.0.1:\(try closedPort())")])
        for i in 0..<30 {
            packet(i).withUnsafeBytes { sender.queue($0, to: 0) }
            sender.flush()
            usleep(2_000)  // time for the ICMP port-unreachable to come back
        }
        let refused = sender.statistics.errors(to: 0, reason: .connectionRefused)
        XCTAssertGreaterThan(refused, 0)
        XCTAssertEqual(sender.statistics.packetsSent(to: 0) + refused, 30)
        XCTAssertEqual(sender.statistics.bytesSent(to: 0), sender.statistics.packetsSent(to: 0) * 16)
    }

    func testAClosedPortIsCountedWhileTheOtherDestinationGetsEveryPacket() throws {
        let receiver = try XCTUnwrap(LoopbackReceiver(ipv6: false))
        let sender = try OSCSender(destinations: [
            resolved("127.0.0.1:\(try closedPort())"), resolved("127.0.0.1:\(receiver.port)"),
        ])
        var expected: [[UInt8]] = []
        for i in 0..<50 {
            let bytes = packet(i)
            bytes.withUnsafeBytes {
                sender.queue($0, to: 0)
                sender.queue($0, to: 1)
            }
            expected.append(bytes)
            sender.flush()
            usleep(2_000)  // time for the ICMP port-unreachable to come back
        }

        XCTAssertEqual(receiver.receiveAll(), expected)
        XCTAssertEqual(sender.statistics.packetsSent(to: 1), 50)
        XCTAssertEqual(sender.statistics.counters(for: 1).totalErrors, 0)
        let refused = sender.statistics.errors(to: 0, reason: .connectionRefused)
        XCTAssertGreaterThan(refused, 0)
        XCTAssertEqual(sender.statistics.packetsSent(to: 0) + refused, 50)
    }

    func testAPortNobodyListensOnIsRefusedUntilAReceiverTakesItsDatagramsAndAgainWhenItLeaves() throws {
        let port = try closedPort()
        let settle: UInt64 = 300_000_000
        let sender = try OSCSender(destinations: [resolved("127.0.0.1:\(port)")], refusalSettle: settle)
        func send() {
            packet(1).withUnsafeBytes { sender.queue($0, to: 0) }
            sender.flush()
        }
        XCTAssertEqual(sender.statistics.reach(of: 0), .sending, "nothing sent yet")
        let firstSend = MonotonicClock.now()
        XCTAssertTrue(
            waitUntil(timeout: 5) {
                send()
                return sender.statistics.reach(of: 0) != .sending
            })
        guard case .refused(let since, let through) = sender.statistics.reach(of: 0) else { return XCTFail() }
        XCTAssertGreaterThanOrEqual(since, firstSend)
        XCTAssertNil(through, "no datagram got through to a port nobody ever listened on")
        XCTAssertGreaterThan(sender.statistics.errors(to: 0, reason: .connectionRefused), 0)

        // A receiver starts: once datagrams have gone unrefused for the settle time, sending.
        var receiver: LoopbackReceiver? = try XCTUnwrap(LoopbackReceiver(ipv6: false, port: port))
        let listening = MonotonicClock.now()
        XCTAssertTrue(
            waitUntil(timeout: 5) {
                send()
                return sender.statistics.reach(of: 0) == .sending
            })
        XCTAssertGreaterThanOrEqual(
            MonotonicClock.now() - listening, settle, "sending again only after the settle time")
        XCTAssertNotNil(receiver?.receive(timeout: 1_000), "the receiver got the datagrams")

        // It leaves: refused again, and the last datagram through was sent after it started.
        receiver = nil
        XCTAssertTrue(
            waitUntil(timeout: 5) {
                send()
                return sender.statistics.reach(of: 0) != .sending
            })
        guard case .refused(_, let lastThrough) = sender.statistics.reach(of: 0) else { return XCTFail() }
        XCTAssertGreaterThanOrEqual(try XCTUnwrap(lastThrough), listening)
    }

    func testSixtyFourDestinationsEachReceiveEveryPacketInOrderFromBatchesOfMixedDestinations() throws {
        // Small queues and a small arena, so queues fill and flush mid-batch, the arena runs out
        // (packets up to `slotSize` bytes), packets too large for a slot go out at once, and a
        // batch holds every destination in a shuffled order.
        let receivers = try (0..<64).map { _ in try XCTUnwrap(LoopbackReceiver(ipv6: false)) }
        let sender = try OSCSender(
            destinations: receivers.map { try resolved("127.0.0.1:\($0.port)") }, batchCapacity: 8, slotSize: 256)
        var expected = [[[UInt8]]](repeating: [], count: 64)
        var random = SplitMix(seed: 20)
        // The send calls that flushes asked for here would make; the queues' and the arena's
        // own flushes add more.
        var waiting = Set<Int>()
        var askedCalls = 0
        for i in 0..<2_400 {
            let destination = Int(random.next() % 64)
            let size = i % 331 == 0 ? 300 + Int(random.next() % 200) : 1 + Int(random.next() % 256)
            let bytes = packet(i, size: size)
            if size > 256 {
                bytes.withUnsafeBytes { sender.queue($0, to: destination) }
                askedCalls += waiting.count + 1
                waiting = []
            } else {
                if i % 2 == 0 {
                    let slot = sender.nextSlot()
                    bytes.withUnsafeBytes { slot.copyMemory(from: $0) }
                    sender.commit(bytes.count, to: destination)
                } else {
                    bytes.withUnsafeBytes { sender.queue($0, to: destination) }
                }
                waiting.insert(destination)
            }
            expected[destination].append(bytes)
            if random.next() % 400 == 0 {
                sender.flush()
                askedCalls += waiting.count
                waiting = []
            }
        }
        sender.flush()
        askedCalls += waiting.count
        let calls = (0..<64).map { sender.statistics.sendCalls(to: $0) }.reduce(0, +)
        XCTAssertGreaterThan(calls, askedCalls, "full queues and a full arena flushed by themselves")

        for (destination, receiver) in receivers.enumerated() {
            let want = expected[destination]
            XCTAssertEqual(receiver.receive(count: want.count), want, "destination \(destination)")
            XCTAssertNil(receiver.receive(timeout: 10), "destination \(destination) got more")
            XCTAssertEqual(sender.statistics.packetsSent(to: destination), want.count)
            XCTAssertEqual(sender.statistics.bytesSent(to: destination), want.map(\.count).reduce(0, +))
            XCTAssertEqual(sender.statistics.counters(for: destination).totalErrors, 0)
        }
    }

    func testAFlushMakesOneSendCallPerDestinationWithPackets() throws {
        // 64 packets for each of 64 destinations, queued event by event as a route fans out,
        // fit one flush: each destination gets its 64 in one `sendmmsg`, not one per event.
        let receivers = try (0..<64).map { _ in try XCTUnwrap(LoopbackReceiver(ipv6: false)) }
        let sender = try OSCSender(destinations: receivers.map { try resolved("127.0.0.1:\($0.port)") })
        var expected = [[[UInt8]]](repeating: [], count: 64)
        for event in 0..<64 {
            for index in 0..<64 {
                let destination = (index + event * 7) % 64
                let bytes = packet(event * 64 + destination, size: 40)
                bytes.withUnsafeBytes { sender.queue($0, to: destination) }
                expected[destination].append(bytes)
            }
        }
        for destination in 0..<64 { XCTAssertEqual(sender.statistics.sendCalls(to: destination), 0) }
        sender.flush()
        for (destination, receiver) in receivers.enumerated() {
            XCTAssertEqual(receiver.receive(count: 64), expected[destination], "destination \(destination)")
            XCTAssertEqual(sender.statistics.sendCalls(to: destination), 1, "destination \(destination)")
        }

        // A flush calls only for the destinations with packets: one call each, a lone packet
        // included (a `send`).
        let lone = packet(1, size: 24)
        let pair = [packet(2, size: 28), packet(3, size: 32)]
        lone.withUnsafeBytes { sender.queue($0, to: 9) }
        for bytes in pair { bytes.withUnsafeBytes { sender.queue($0, to: 40) } }
        sender.flush()
        sender.flush()  // nothing queued: no call
        XCTAssertEqual(receivers[9].receive(count: 1), [lone])
        XCTAssertEqual(receivers[40].receive(count: 2), pair)
        for destination in 0..<64 {
            let calls = destination == 9 || destination == 40 ? 2 : 1
            XCTAssertEqual(sender.statistics.sendCalls(to: destination), calls, "destination \(destination)")
            XCTAssertNil(receivers[destination].receive(timeout: 0), "destination \(destination) got more")
        }
    }

    func testAFullQueueFlushesEveryQueueBeforeTheNextPacketAndKeepsEachOrder() throws {
        let first = try XCTUnwrap(LoopbackReceiver(ipv6: false))
        let second = try XCTUnwrap(LoopbackReceiver(ipv6: false))
        let sender = try OSCSender(
            destinations: [resolved("127.0.0.1:\(first.port)"), resolved("127.0.0.1:\(second.port)")],
            batchCapacity: 4, slotSize: 64)
        packet(100).withUnsafeBytes { sender.queue($0, to: 1) }
        for i in 0..<4 { packet(i).withUnsafeBytes { sender.queue($0, to: 0) } }
        XCTAssertNil(first.receive(timeout: 50), "a full queue waits for one more packet or a flush")
        packet(4).withUnsafeBytes { sender.queue($0, to: 0) }
        XCTAssertEqual(first.receive(count: 4), (0..<4).map { packet($0) })
        XCTAssertEqual(second.receive(count: 1), [packet(100)])
        sender.flush()
        XCTAssertEqual(first.receive(count: 1), [packet(4)])
        XCTAssertEqual(sender.statistics.sendCalls(to: 0), 2)
        XCTAssertEqual(sender.statistics.sendCalls(to: 1), 1)
    }

    func testQueueAndFlushOfHundredThousandPacketsAllocateNothing() throws {
        try requireOptimizedBuild()
        let receiver = try XCTUnwrap(LoopbackReceiver(ipv6: false))
        let sender = try OSCSender(destinations: [
            resolved("127.0.0.1:\(receiver.port)"), resolved("127.0.0.1:\(try closedPort())"),
        ])
        let bytes = packet(7, size: 48)
        try bytes.withUnsafeBytes { packet in
            sendPackets(sender, packet, count: 1_000)  // warm-up
            aseqosc_allocations_start()
            sendPackets(sender, packet, count: 100_000)
            let allocations = aseqosc_allocations_stop()
            XCTAssertEqual(allocations, 0, "\(allocations) allocations for 100,000 packets")
            print("allocation test: UDP queue+flush, 100000 packets, \(allocations) allocations")
            let counted = try XCTUnwrap(Optional(sender.statistics.counters(for: 0)))
            XCTAssertEqual(counted.packetsSent + counted.totalErrors, 50_500)
        }
    }

    func testFanOutToSixtyFourDestinationsAllocatesNothing() throws {
        try requireOptimizedBuild()
        let receivers = try (0..<64).map { _ in try XCTUnwrap(LoopbackReceiver(ipv6: false)) }
        let sender = try OSCSender(destinations: receivers.map { try resolved("127.0.0.1:\($0.port)") })
        let bytes = packet(7, size: 48)
        bytes.withUnsafeBytes { packet in
            func fanOut(events: Int) {
                var event = 0
                while event < events {
                    var destination = 0
                    while destination < 64 {
                        sender.queue(packet, to: destination)
                        destination += 1
                    }
                    event += 1
                    if event & 63 == 0 { sender.flush() }
                }
                sender.flush()
            }
            fanOut(events: 64)  // warm-up
            aseqosc_allocations_start()
            fanOut(events: 2_000)
            let allocations = aseqosc_allocations_stop()
            XCTAssertEqual(allocations, 0, "\(allocations) allocations for 2,000 events to 64 destinations")
            print("allocation test: UDP fan-out to 64 destinations, 2000 events, \(allocations) allocations")
        }
        XCTAssertEqual(sender.statistics.packetsSent(to: 63) + sender.statistics.counters(for: 63).totalErrors, 2_064)
    }

    private func sendPackets(_ sender: OSCSender, _ packet: UnsafeRawBufferPointer, count: Int) {
        var i = 0
        while i < count {
            sender.queue(packet, to: i & 1)
            if i & 63 == 63 { sender.flush() }
            i += 1
        }
        sender.flush()
    }
}

/// A deterministic pseudo-random sequence (SplitMix64), so a failing order can be replayed.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

final class OSCDestinationTests: XCTestCase {
    func testParsesIPv4IPv6AndNames() throws {
        let v4 = try OSCDestination(parsing: "127.0.0.1:57120")
        XCTAssertEqual([v4.host, String(v4.port)], ["127.0.0.1", "57120"])
        let v6 = try OSCDestination(parsing: "[::1]:57120")
        XCTAssertEqual([v6.host, v6.description], ["::1", "[::1]:57120"])
        let name = try OSCDestination(parsing: "synth.local:9000")
        XCTAssertEqual([name.host, String(name.port)], ["synth.local", "9000"])
        XCTAssertEqual(try v4.resolve().address.description, "127.0.0.1:57120")
        XCTAssertEqual(try v6.resolve().address.description, "[::1]:57120")
        XCTAssertEqual(try OSCDestination(parsing: "localhost:1").resolve().address.family == AF_INET6 ? 6 : 4, 4)
        XCTAssertTrue(try OSCDestination(parsing: "239.1.2.3:9000").resolve().address.isMulticast)
        XCTAssertFalse(try v4.resolve().address.isMulticast)
    }

    func testErrorsSayWhatIsWrong() {
        let cases: [(String, String)] = [
            ("127.0.0.1:70000", "destination '127.0.0.1:70000': invalid port '70000'; ports are 1-65535"),
            ("127.0.0.1:0", "destination '127.0.0.1:0': invalid port '0'; ports are 1-65535"),
            ("127.0.0.1:osc", "destination '127.0.0.1:osc': invalid port 'osc'; ports are 1-65535"),
            (":57120", "destination ':57120' has no host: write host:port, e.g. 127.0.0.1:57120"),
            ("[]:57120", "destination '[]:57120' has no host: write host:port, e.g. 127.0.0.1:57120"),
            ("127.0.0.1", "destination '127.0.0.1' has no port: write host:port, e.g. 127.0.0.1:57120"),
            ("synth:", "destination 'synth:' has no port: write host:port, e.g. 127.0.0.1:57120"),
            ("::1:57120", "destination '::1:57120': write IPv6 addresses in brackets, e.g. [::1]:57120"),
            ("[::1:57120", "destination '[::1:57120': write IPv6 addresses in brackets, e.g. [::1]:57120"),
        ]
        for (text, message) in cases {
            XCTAssertThrowsError(try OSCDestination(parsing: text), text) { error in
                XCTAssertEqual((error as? OSCDestinationError)?.description, message)
            }
        }
        XCTAssertThrowsError(try OSCDestination(host: "", port: 57120)) { error in
            XCTAssertEqual("\(error)", "destination ':57120' has no host: write host:port, e.g. 127.0.0.1:57120")
        }
    }

    func testAnUnresolvableHostIsNamedInTheError() throws {
        let destination = try OSCDestination(parsing: "no-such-host.invalid:57120")
        XCTAssertThrowsError(try destination.resolve()) { error in
            guard case .unresolvable(let host, let code) = error as? OSCDestinationError else {
                return XCTFail("\(error)")
            }
            XCTAssertEqual(host, "no-such-host.invalid")
            XCTAssertEqual(
                "\(error)", "cannot resolve host 'no-such-host.invalid': \(String(cString: gai_strerror(code)))")
            XCTAssertTrue("\(error)".hasPrefix("cannot resolve host 'no-such-host.invalid': "))
        }
    }

    func testAnUnknownMulticastInterfaceIsATypedError() throws {
        let destination = try OSCDestination(parsing: "239.1.2.3:9000", multicastInterface: "nosuchif0")
        XCTAssertThrowsError(try OSCSender(destinations: [destination.resolve()])) { error in
            XCTAssertEqual(
                "\(error)", "if_nametoindex(nosuchif0) for 239.1.2.3:9000: \(String(cString: strerror(ENODEV)))")
        }
    }
}
