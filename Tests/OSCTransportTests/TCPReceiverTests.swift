import CAllocationCounter
import CLiblo
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
        var packets: [([UInt8], IPAddress)] = []
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

        init(port: Int) throws {
            descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var on: Int32 = 1
            _ = setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
            let result = withIPv4Loopback(port: port) { connect(descriptor, $0, $1) }
            guard result == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        }

        deinit { close(descriptor) }

        func write(_ bytes: [UInt8]) {
            XCTAssertEqual(
                bytes.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }, bytes.count)
        }

        /// Whether the server closed this connection (a read returns end of file or a reset)
        /// within `timeout`.
        func isClosedByServer(timeout: TimeInterval = 5) -> Bool {
            var descriptors = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptors, 1, Int32(timeout * 1000)) == 1 else { return false }
            var byte: UInt8 = 0
            return recv(descriptor, &byte, 1, Int32(MSG_DONTWAIT)) <= 0
        }
    }

    static func lengthPrefixed(_ packet: [UInt8]) -> [UInt8] { TestSupport.lengthPrefixed(packet) }

    static func slip(_ packet: [UInt8]) -> [UInt8] { slipFramed(packet) }

    static func message(_ address: String, _ arguments: [OSCArgument]) -> [UInt8] {
        try! OSCPacket.message(OSCMessage(address, arguments)).serialize()
    }

    func makeReceiver(
        allowList: IPAllowList? = nil, maxConnections: Int = 16, maxPacketSize: Int = 65_536, readSize: Int = 16_384
    ) throws -> (TCPReceiver, Collector) {
        let tcp = try TCPReceiver(
            host: "127.0.0.1", port: 0, allowList: allowList, maxConnections: maxConnections,
            maxPacketSize: maxPacketSize, readSize: readSize)
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
        if slip { lo_address_set_stream_slip(target, 1) }
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
        let senders = collector.lock.withLock { collector.packets.map(\.1.description) }
        XCTAssertEqual(senders, ["127.0.0.1", "127.0.0.1", "127.0.0.1"])
        // Optimised builds may end an object's life at its last use: the clients must stay open.
        withExtendedLifetime(clients) {}
    }

    func testAClientOutsideTheAllowListIsClosedAndCounted() throws {
        let (tcp, collector) = try makeReceiver(allowList: IPAllowList([try IPNetwork(parsing: "10.0.0.0/8")]))
        defer { collector.stop() }
        let client = try Client(port: tcp.port)
        client.write(Self.lengthPrefixed(Self.message("/a", [])))
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
