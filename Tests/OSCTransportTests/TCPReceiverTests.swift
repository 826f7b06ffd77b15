import CAllocationCounter
import CLiblo
import Endpoints
import Foundation
import Glibc
import OSC
import OSCTransport
import TestSupport
import XCTest

/// A ``TCPReceiver`` on loopback, run by an ``OSCReceiver``: liblo's own TCP sender in both
/// framings, several clients at once, frames cut across writes, and every way a client gets
/// refused or closed, counted.
final class TCPReceiverTests: XCTestCase {
    /// Runs an ``OSCReceiver`` on a thread until `stop()`, collecting each packet and its sender.
    final class Collector: @unchecked Sendable {
        let lock = NSLock()
        var packets: [([UInt8], PacketSource)] = []
        let done = DispatchSemaphore(value: 0)
        let receiver: OSCReceiver

        init(_ receiver: OSCReceiver) {
            self.receiver = receiver
            Thread {
                receiver.run(tick: { -1 }) { bytes, sender in
                    self.lock.withLock { self.packets.append((Array(bytes), sender)) }
                }
                self.done.signal()
            }.start()
        }

        var received: [[UInt8]] { lock.withLock { packets.map(\.0) } }

        func waitFor(_ count: Int) -> [[UInt8]] {
            _ = waitUntil { self.received.count >= count }
            return received
        }

        func stop() {
            receiver.stop()
            XCTAssertEqual(done.wait(timeout: .now() + 5), .success, "stop() did not end the loop")
            receiver.close()
        }
    }

    /// A connected TCP client socket, with Nagle off so each `write` leaves as its own segment.
    final class Client {
        let descriptor: Int32
        // A reset that arrived before `connect` returned, which `connect` then reports: the
        // receiver may accept and refuse a client that soon.
        private var resetWhileConnecting = false

        init(port: Int) throws {
            descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var on: Int32 = 1
            _ = setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
            let result = withIPv4Loopback(port: port) { connect(descriptor, $0, $1) }
            if result != 0 && errno == ECONNRESET {
                resetWhileConnecting = true
            } else if result != 0 {
                throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            }
        }

        deinit { close(descriptor) }

        func write(_ bytes: [UInt8]) {
            XCTAssertEqual(
                bytes.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }, bytes.count)
        }

        /// Writes `bytes` to a server that may already have reset the connection (a refused
        /// client is reset at once, so the write can come after the reset): whole, or refused
        /// with `ECONNRESET` or `EPIPE`.
        func writeMayBeRefused(_ bytes: [UInt8]) {
            let sent = bytes.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            let refused = sent == -1 && (errno == ECONNRESET || errno == EPIPE)
            XCTAssertTrue(sent == bytes.count || refused, "send returned \(sent), errno \(errno)")
        }

        /// Whether the server closed this connection (a read returns end of file or a reset)
        /// within `timeout`.
        func isClosedByServer(timeout: TimeInterval = 5) -> Bool {
            closing(timeout: timeout) != nil
        }

        /// How the server ended this connection within `timeout`: 0 for end of file, the
        /// `errno` of a failed read (`ECONNRESET` for a reset), nil while it stays open.
        func closing(timeout: TimeInterval = 5) -> Int32? {
            if resetWhileConnecting { return ECONNRESET }
            var descriptors = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptors, 1, Int32(timeout * 1000)) == 1 else { return nil }
            var byte: UInt8 = 0
            let count = recv(descriptor, &byte, 1, Int32(MSG_DONTWAIT))
            return count == 0 ? 0 : count < 0 ? errno : nil
        }
    }

    static func lengthPrefixed(_ packet: [UInt8]) -> [UInt8] { TestSupport.lengthPrefixed(packet) }

    static func slip(_ packet: [UInt8]) -> [UInt8] { slipFramed(packet) }

    static func message(_ address: String, _ arguments: [OSCArgument]) -> [UInt8] {
        try! OSCPacket.message(OSCMessage(address, arguments)).serialize()
    }

    func makeReceiver(
        allowList: IPAllowList? = nil, maxConnections: Int = 16, maxPacketSize: Int = 65_536, readSize: Int = 16_384,
        frameTimeout: Duration = .seconds(5), evictableAfter: Duration = .seconds(1)
    ) throws -> (TCPReceiver, Collector) {
        let tcp = try TCPReceiver(
            host: "127.0.0.1", port: 0, allowList: allowList, maxConnections: maxConnections,
            maxPacketSize: maxPacketSize, readSize: readSize, frameTimeout: frameTimeout,
            evictableAfter: evictableAfter)
        return (tcp, Collector(try OSCReceiver(udp: nil, tcp: tcp)))
    }

    // MARK: liblo as the sender

    /// liblo messages with the bytes liblo serialises them to: what must arrive.
    static func libloMessages() -> [(lo_message, String, [UInt8])] {
        var result: [(lo_message, String, [UInt8])] = []
        for (index, address) in ["/midi/synth/1/note_on", "/synth/control_change", "/sysex"].enumerated() {
            let message = lo_message_new()!
            if address == "/sysex" {
                // END and ESC bytes inside, which SLIP must escape.
                let bytes: [UInt8] = [0xF0, 0xC0, 0xDB, 0xDC, 0xDD, 0xF7]
                let blob = lo_blob_new(Int32(bytes.count), bytes)
                _ = lo_message_add_blob(message, blob)
                lo_blob_free(blob)
            } else {
                _ = lo_message_add_int32(message, Int32(index))
                _ = lo_message_add_float(message, 0.5)
                _ = lo_message_add_string(message, "x")
            }
            var size = lo_message_length(message, address)
            var bytes = [UInt8](repeating: 0, count: size)
            _ = lo_message_serialise(message, address, &bytes, &size)
            result.append((message, address, bytes))
        }
        return result
    }

    func sendWithLiblo(slip: Bool) throws {
        let (tcp, collector) = try makeReceiver()
        defer { collector.stop() }
        let target = try XCTUnwrap(lo_address_new_from_url("osc.tcp://127.0.0.1:\(tcp.port)"))
        // 1: SLIP on (liblo 0.31 takes an int, 0.32 an lo_slip_encoding whose 1 is LO_SLIP_SINGLE).
        if slip { lo_address_set_stream_slip(target, .init(1)) }
        let messages = Self.libloMessages()
        for (message, address, _) in messages {
            XCTAssertGreaterThan(
                lo_send_message(target, address, message), 0, String(cString: lo_address_errstr(target)))
            lo_message_free(message)
        }
        lo_address_free(target)
        let got = collector.waitFor(messages.count)
        XCTAssertEqual(got, messages.map(\.2), slip ? "SLIP" : "length-prefixed")
        XCTAssertTrue(waitUntil { tcp.statistics.closed == 1 }, "liblo closed its connection")
        XCTAssertEqual(tcp.statistics.accepted, 1)
        XCTAssertEqual(tcp.statistics.packets, messages.count)
        XCTAssertEqual(tcp.statistics.bytes, messages.reduce(0) { $0 + $1.2.count })
        XCTAssertEqual(tcp.statistics.framingErrors.total, 0)
    }

    func testLiblosLengthPrefixedTCPArrivesAsTheExactPackets() throws {
        try sendWithLiblo(slip: false)
    }

    func testLiblosSLIPArrivesAsTheExactPackets() throws {
        try sendWithLiblo(slip: true)
    }

    // MARK: Streams cut anywhere, several clients

    func testFramesCutAcrossWritesFromSeveralInterleavedClientsArriveWhole() throws {
        let (tcp, collector) = try makeReceiver(readSize: 7)
        defer { collector.stop() }
        let packets = (0..<3).map {
            Self.message("/client/\($0)", [.int32(Int32($0)), .blob([0xC0, 0xDB, UInt8($0)])])
        }
        let clients = try (0..<3).map { _ in try Client(port: tcp.port) }
        let streams = [Self.lengthPrefixed(packets[0]), Self.slip(packets[1]), Self.lengthPrefixed(packets[2])]
        // A few bytes from each client in turn, with pauses so each write is its own read.
        var offset = 0
        while offset < streams.map(\.count).max()! {
            for (client, stream) in zip(clients, streams) where offset < stream.count {
                client.write(Array(stream[offset..<min(offset + 3, stream.count)]))
            }
            offset += 3
            usleep(1_000)
        }
        let got = collector.waitFor(3)
        XCTAssertEqual(Set(got), Set(packets))
        XCTAssertEqual(tcp.statistics.accepted, 3)
        XCTAssertEqual(tcp.statistics.open, 3)
        let senders = collector.lock.withLock { collector.packets.map(\.1.address.description) }
        XCTAssertEqual(senders, ["127.0.0.1", "127.0.0.1", "127.0.0.1"])
        // Each connection is its own sender: the port tells them apart.
        let ports = collector.lock.withLock { Set(collector.packets.map(\.1.port)) }
        XCTAssertEqual(ports.count, 3, "\(ports)")
        XCTAssertFalse(ports.contains(0))
        // Optimised builds may end an object's life at its last use: the clients must stay open.
        withExtendedLifetime(clients) {}
    }

    func testAClientOutsideTheAllowListIsClosedAndCounted() throws {
        let (tcp, collector) = try makeReceiver(allowList: IPAllowList([try IPNetwork(parsing: "10.0.0.0/8")]))
        defer { collector.stop() }
        let client = try Client(port: tcp.port)
        client.writeMayBeRefused(Self.lengthPrefixed(Self.message("/a", [])))
        XCTAssertTrue(client.isClosedByServer())
        XCTAssertEqual(tcp.statistics.refusedNotAllowed, 1)
        XCTAssertEqual(tcp.statistics.accepted, 0)
        usleep(50_000)
        XCTAssertTrue(collector.received.isEmpty)
    }

    func testAClientBeyondMaxConnectionsIsClosedAndCountedAndItsSlotIsReusedLater() throws {
        let (tcp, collector) = try makeReceiver(maxConnections: 2)
        defer { collector.stop() }
        var clients = [try Client(port: tcp.port), try Client(port: tcp.port)]
        XCTAssertTrue(waitUntil { tcp.statistics.accepted == 2 })
        let third = try Client(port: tcp.port)
        XCTAssertTrue(third.isClosedByServer())
        XCTAssertEqual(tcp.statistics.refusedTooMany, 1)
        clients.removeFirst()
        XCTAssertTrue(waitUntil { tcp.statistics.closed == 1 }, "the first client's close was seen")
        let fourth = try Client(port: tcp.port)
        fourth.write(Self.slip(Self.message("/fourth", [])))
        clients[0].write(Self.slip(Self.message("/second", [])))
        XCTAssertEqual(Set(collector.waitFor(2)), [Self.message("/fourth", []), Self.message("/second", [])])
        XCTAssertEqual(tcp.statistics.accepted, 3)
        XCTAssertEqual(tcp.statistics.open, 2)
        withExtendedLifetime((clients, fourth)) {}
    }

    // MARK: Slots cannot be held hostage

    func testWithEverySlotHeldByIdleClientsTheIdlestGivesWayToANewClient() throws {
        let (tcp, collector) = try makeReceiver(evictableAfter: .milliseconds(200))
        defer { collector.stop() }
        var idle: [Client] = []
        for _ in 0..<16 {
            idle.append(try Client(port: tcp.port))
            // In order, so the first is the one idle the longest.
            XCTAssertTrue(waitUntil { tcp.statistics.accepted == idle.count })
        }
        usleep(300_000)
        let good = try Client(port: tcp.port)
        let packet = Self.message("/midi/synth/1/note_on", [.int32(60), .int32(100)])
        good.write(Self.lengthPrefixed(packet))
        XCTAssertEqual(collector.waitFor(1), [packet])
        XCTAssertEqual(tcp.statistics.evictedIdle, 1)
        XCTAssertNotNil(idle[0].closing(), "the connection idle the longest was not closed")
        XCTAssertEqual(idle.dropFirst().filter { $0.closing(timeout: 0.01) != nil }.count, 0, "only one gave way")
        XCTAssertEqual(
            [tcp.statistics.accepted, tcp.statistics.open, tcp.statistics.closed, tcp.statistics.refusedTooMany],
            [17, 16, 1, 0])
        // The survivors still play.
        idle[15].write(Self.slip(Self.message("/still", [])))
        XCTAssertEqual(collector.waitFor(2).last, Self.message("/still", []))
        withExtendedLifetime((idle, good)) {}
    }

    func testWhenNoSlotCanBeFreedTheNewClientIsResetAndItsSendsFail() throws {
        // Every slot busy: one inside a frame (for longer than `evictableAfter`, but a frame
        // under way is not idle), one just connected (not idle long enough: the second leaves
        // a busy machine time to connect the third).
        let (tcp, collector) = try makeReceiver(maxConnections: 2, evictableAfter: .seconds(1))
        defer { collector.stop() }
        let framing = try Client(port: tcp.port)
        framing.write(Array(Self.lengthPrefixed(Self.message("/half", [])).prefix(6)))
        usleep(1_100_000)
        let fresh = try Client(port: tcp.port)
        XCTAssertTrue(waitUntil { tcp.statistics.accepted == 2 })
        let refused = try Client(port: tcp.port)
        XCTAssertEqual(refused.closing(), ECONNRESET, "refused with a reset, not an orderly close")
        let bytes = Self.lengthPrefixed(Self.message("/lost", []))
        XCTAssertEqual(
            bytes.withUnsafeBytes { send(refused.descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }, -1,
            "a send after the reset fails")
        XCTAssertEqual(tcp.statistics.refusedTooMany, 1)
        XCTAssertEqual(tcp.statistics.evictedIdle, 0)
        XCTAssertNil(fresh.closing(timeout: 0.01))
        XCTAssertNil(framing.closing(timeout: 0.01))
        XCTAssertTrue(collector.received.isEmpty)
        withExtendedLifetime((fresh, framing)) {}
    }

    func testAConnectionStuckInsideAFrameIsClosedAfterTheFrameTimeout() throws {
        let (tcp, collector) = try makeReceiver(frameTimeout: .milliseconds(300))
        defer { collector.stop() }
        let stuck = try Client(port: tcp.port)
        let started = Date()
        stuck.write(Array(Self.lengthPrefixed(Self.message("/a", [.int32(1)])).prefix(6)))
        XCTAssertNil(stuck.closing(timeout: 0.15), "closed before its time")
        XCTAssertEqual(stuck.closing(), ECONNRESET)
        let after = Date().timeIntervalSince(started)
        XCTAssertGreaterThanOrEqual(after, 0.29)
        XCTAssertLessThan(after, 2)
        XCTAssertEqual(tcp.statistics.partialFrameTimeouts, 1)
        XCTAssertEqual([tcp.statistics.closed, tcp.statistics.open], [1, 0])
        XCTAssertEqual(tcp.statistics.framingErrors.total, 0)
        XCTAssertTrue(collector.received.isEmpty)
    }

    func testAFrameDribbledAByteAtATimeStillTimesOut() throws {
        let (tcp, collector) = try makeReceiver(frameTimeout: .milliseconds(300))
        defer { collector.stop() }
        let slow = try Client(port: tcp.port)
        let whole = Self.message("/ok", [])
        slow.write(Self.slip(whole))
        XCTAssertEqual(collector.waitFor(1), [whole])
        // A packet whose bytes keep coming, too slowly: its deadline runs from its first byte.
        let started = Date()
        var written = 0
        while slow.closing(timeout: 0.05) == nil && Date().timeIntervalSince(started) < 3 {
            _ = send(slow.descriptor, [UInt8(ascii: "/")], 1, Int32(MSG_NOSIGNAL))
            written += 1
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), 1, "\(written) bytes written")
        XCTAssertEqual(tcp.statistics.partialFrameTimeouts, 1)
    }

    func testWithSlotsFreeAnIdleConnectionStaysOpenPastBothTimes() throws {
        let (tcp, collector) = try makeReceiver(
            maxConnections: 2, frameTimeout: .milliseconds(100), evictableAfter: .milliseconds(100))
        defer { collector.stop() }
        let tablet = try Client(port: tcp.port)
        tablet.write(Self.slip(Self.message("/first", [])))
        XCTAssertEqual(collector.waitFor(1).count, 1)
        XCTAssertNil(tablet.closing(timeout: 0.5), "an idle connection was closed with a slot free")
        tablet.write(Self.slip(Self.message("/later", [])))
        XCTAssertEqual(collector.waitFor(2).last, Self.message("/later", []))
        XCTAssertEqual(
            [tcp.statistics.closed, tcp.statistics.evictedIdle, tcp.statistics.partialFrameTimeouts], [0, 0, 0])
    }

    /// A broken stream closes its own connection only; the other client's packets still arrive.
    func assertBrokenStreamIsClosed(
        _ stream: [UInt8], maxPacketSize: Int = 256,
        counted: KeyPath<
            TCPReceiveStatistics.FramingErrors, Int
        >, file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let (tcp, collector) = try makeReceiver(maxPacketSize: maxPacketSize)
        defer { collector.stop() }
        let good = try Client(port: tcp.port)
        let bad = try Client(port: tcp.port)
        good.write(Self.lengthPrefixed(Self.message("/before", [])))
        bad.write(stream)
        XCTAssertTrue(bad.isClosedByServer(), "the broken stream's connection was not closed", file: file, line: line)
        good.write(Self.lengthPrefixed(Self.message("/after", [])))
        XCTAssertEqual(
            collector.waitFor(2), [Self.message("/before", []), Self.message("/after", [])], file: file, line: line)
        XCTAssertEqual(tcp.statistics.framingErrors[keyPath: counted], 1, file: file, line: line)
        XCTAssertEqual(tcp.statistics.framingErrors.total, 1, file: file, line: line)
        XCTAssertEqual(tcp.statistics.closed, 1, file: file, line: line)
        XCTAssertEqual(tcp.statistics.open, 1, file: file, line: line)
    }

    func testAnOversizedLengthPrefixClosesTheConnection() throws {
        try assertBrokenStreamIsClosed([0, 0, 1, 4] + Array(repeating: 0x2F, count: 100), counted: \.oversized)
    }

    func testAnEndlessSLIPPacketClosesTheConnectionAtTheLimit() throws {
        try assertBrokenStreamIsClosed([0xC0] + Array(repeating: 0x2F, count: 2000), counted: \.oversized)
    }

    func testABadSLIPEscapeClosesTheConnection() throws {
        try assertBrokenStreamIsClosed([0xC0, 0x2F, 0xDB, 0x00, 0xC0], counted: \.badEscape)
    }

    func testALengthThatIsNotWholeWordsClosesTheConnection() throws {
        try assertBrokenStreamIsClosed([0, 0, 0, 5, 0x2F, 0, 0, 0, 0], counted: \.badLength)
    }

    func testGarbageClosesTheConnection() throws {
        try assertBrokenStreamIsClosed(Array("GET / HTTP/1.1\r\n\r\n".utf8), counted: \.unknownFraming)
    }

    func testAStreamEndingInsideAPacketIsCountedAsCutOff() throws {
        let (tcp, collector) = try makeReceiver()
        defer { collector.stop() }
        var clients = [try Client(port: tcp.port)]
        clients[0].write(Array(Self.lengthPrefixed(Self.message("/a", [])).prefix(6)))
        usleep(20_000)
        clients.removeAll()
        XCTAssertTrue(waitUntil { tcp.statistics.closed == 1 })
        XCTAssertEqual(tcp.statistics.framingErrors.truncated, 1)
        XCTAssertTrue(collector.received.isEmpty)
    }

    // MARK: The hot path

    func testHundredThousandPacketsOverBothFramingsAllocateNothing() throws {
        try requireOptimizedBuild()
        let tcp = try TCPReceiver(host: "127.0.0.1", port: 0)
        let receiver = try OSCReceiver(udp: nil, tcp: tcp)
        final class Count: @unchecked Sendable {
            var packets = 0
            var allocations: Int64 = -1
        }
        let count = Count()
        let measured = 100_000
        let done = DispatchSemaphore(value: 0)
        // Counting runs on the receiving thread, from the first packet after each connection's
        // first (which allocated its buffer) to the last.
        Thread {
            receiver.run(tick: { -1 }) { _, _ in
                count.packets += 1
                if count.packets == 2 {
                    aseqosc_allocations_start()
                } else if count.packets == 2 + measured {
                    count.allocations = aseqosc_allocations_stop()
                }
            }
            done.signal()
        }.start()
        let packet = Self.message("/midi/synth/1/note_on", [.int32(60), .int32(100), .blob([0xC0, 0xDB])])
        let clients = [try Client(port: tcp.port), try Client(port: tcp.port)]
        clients[0].write(Self.lengthPrefixed(packet))
        clients[1].write(Self.slip(packet))
        XCTAssertTrue(waitUntil { tcp.statistics.packets == 2 })
        let batch = 1_000
        let streams = [
            Array((0..<batch).map { _ in Self.lengthPrefixed(packet) }.joined()),
            Array((0..<batch).map { _ in Self.slip(packet) }.joined()),
        ]
        for _ in 0..<measured / batch / 2 {
            clients[0].write(streams[0])
            clients[1].write(streams[1])
        }
        XCTAssertTrue(waitUntil(timeout: 30) { tcp.statistics.packets == 2 + measured }, "\(tcp.statistics.packets)")
        receiver.stop()
        done.wait()
        XCTAssertEqual(count.allocations, 0, "\(count.allocations) allocations for \(measured) packets")
        print(
            "allocation test: TCP receive, \(measured) packets (length-prefixed and SLIP), \(count.allocations) allocations"
        )
    }

    // MARK: Both transports, shutdown

    func testUDPAndTCPOnTheSamePortReachOneHandler() throws {
        let tcp = try TCPReceiver(host: "127.0.0.1", port: 0)
        let udp = try UDPReceiver(host: "127.0.0.1", port: tcp.port)
        let collector = Collector(try OSCReceiver(udp: udp, tcp: tcp))
        defer { collector.stop() }
        let overTCP = Self.message("/tcp", [.int32(1)])
        let overUDP = Self.message("/udp", [.int32(2)])
        let client = try Client(port: tcp.port)
        client.write(Self.lengthPrefixed(overTCP))
        XCTAssertEqual(collector.waitFor(1), [overTCP])
        let target = lo_address_new("127.0.0.1", String(tcp.port))
        defer { lo_address_free(target) }
        let message = lo_message_new()
        _ = lo_message_add_int32(message, 2)
        _ = lo_send_message(target, "/udp", message)
        lo_message_free(message)
        XCTAssertEqual(collector.waitFor(2), [overTCP, overUDP])
        XCTAssertEqual(udp.statistics.datagrams, 1)
        XCTAssertEqual(tcp.statistics.packets, 1)
    }

    func testCloseEndsEveryConnectionAndFreesThePortAtOnce() throws {
        let (tcp, collector) = try makeReceiver()
        let port = tcp.port
        let client = try Client(port: port)
        client.write(Self.slip(Self.message("/a", [])))
        XCTAssertEqual(collector.waitFor(1).count, 1)
        collector.stop()
        XCTAssertTrue(client.isClosedByServer())
        XCTAssertEqual(tcp.statistics.open, 0)
        // The closed connection sits in TIME_WAIT on our side; the port must still be free.
        let again = try TCPReceiver(host: "127.0.0.1", port: port)
        XCTAssertEqual(again.port, port)
        XCTAssertThrowsError(try TCPReceiver(host: "127.0.0.1", port: port), "a second listener on a busy port") {
            XCTAssertEqual("\($0)", "bind for 127.0.0.1:\(port): Address already in use")
        }
    }
}
