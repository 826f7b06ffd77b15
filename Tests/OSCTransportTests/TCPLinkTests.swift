// CLiblo: see OSCSenderTests (socket constants in a release build of this module).
import CAllocationCounter
import CLiblo
import Endpoints
import Glibc
import OSC
import OSCTransport
import TestSupport
import XCTest

/// ``TCPLink`` and a TCP destination of ``OSCSender`` against a plain TCP server on loopback:
/// the framed bytes on the wire, reconnection, and the queue's order and drops after an outage.
final class TCPLinkTests: XCTestCase {
    /// A listening TCP socket on 127.0.0.1 that can be closed and opened again on its port.
    final class StreamServer {
        private(set) var listener: Int32 = -1
        private(set) var port = 0

        init() throws { try open() }
        deinit { shut() }

        /// Listens on the port of last time (a free one the first time).
        func open() throws {
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var on: Int32 = 1
            setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
            let bound = withIPv4Loopback(port: port) { bind(descriptor, $0, $1) }
            guard bound == 0, listen(descriptor, 4) == 0 else {
                close(descriptor)
                throw XCTSkip("cannot listen on 127.0.0.1:\(port): errno \(errno)")
            }
            var address = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
            }
            port = Int(UInt16(bigEndian: address.sin_port))
            listener = descriptor
        }

        /// Stops listening (connections already accepted stay open).
        func shut() {
            if listener >= 0 { close(listener) }
            listener = -1
        }

        /// The next connection, or nil after `timeout` ms.
        func accept(timeout: Int32 = 10_000) -> Int32? {
            var poller = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, timeout) == 1 else { return nil }
            let connection = Glibc.accept(listener, nil, nil)
            return connection >= 0 ? connection : nil
        }

        /// Reads from `connection` until `count` bytes came or `timeout` ms passed without more.
        func read(_ connection: Int32, count: Int, timeout: Int32 = 5_000) -> [UInt8] {
            var bytes: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4_096)
            while bytes.count < count {
                var poller = pollfd(fd: connection, events: Int16(POLLIN), revents: 0)
                guard poll(&poller, 1, timeout) == 1 else { break }
                let got = recv(connection, &buffer, buffer.count, 0)
                guard got > 0 else { break }
                bytes += buffer[0..<got]
            }
            return bytes
        }

        func destination(_ framing: OSCStreamFraming, queue: Int = 1_024, noteOnTimeout: Int = 1_000) throws
            -> ResolvedOSCDestination
        {
            var destination = try OSCDestination(host: "127.0.0.1", port: port)
            destination.tcp = TCPOptions(
                framing: framing, queueCapacity: queue, noteOnTimeoutMilliseconds: noteOnTimeout)
            return try destination.resolve()
        }
    }

    /// An OSC message `/name` with no arguments: distinct packets that show their order.
    private func packet(_ name: String) -> [UInt8] {
        try! OSCPacket.message(OSCMessage("/" + name)).serialize()
    }

    private func link(to server: StreamServer, queue: Int = 1_024, noteOnTimeout: Int = 1_000) throws -> TCPLink {
        let destination = try server.destination(.lengthPrefixed, queue: queue, noteOnTimeout: noteOnTimeout)
        return TCPLink(
            destination: destination, framing: .lengthPrefixed, queueCapacity: queue, noteOnTimeout: noteOnTimeout)
    }

    private func enqueue(_ link: TCPLink, _ name: String, _ kind: OSCPacketKind) {
        let bytes = packet(name)
        bytes.withUnsafeBytes { link.enqueue($0, kind: kind) }
    }

    func testASendersTCPDestinationGetsEachPacketFramedInOrderInBothFramings() throws {
        for framing in [OSCStreamFraming.lengthPrefixed, .slip] {
            let server = try StreamServer()
            let sender = try OSCSender(destinations: [try server.destination(framing)])
            // Bytes SLIP must escape (END, ESC) inside a blob, and a plain message.
            let blob = try OSCPacket.message(OSCMessage("/blob", [.blob([0xC0, 0xDB, 0x01, 0xC0])])).serialize()
            let packets = [blob, packet("second")]
            for bytes in packets { bytes.withUnsafeBytes { sender.queue($0, to: 0) } }
            sender.flush()
            let connection = try XCTUnwrap(server.accept(), "\(framing): the link never connected")
            defer { close(connection) }
            let expected = packets.flatMap { framing == .slip ? slipFramed($0) : lengthPrefixed($0) }
            XCTAssertEqual(server.read(connection, count: expected.count), expected, "\(framing)")
            let link = try XCTUnwrap(sender.links[0])
            XCTAssertTrue(waitUntil { link.counters.packetsSent == 2 }, "\(framing): \(link.counters)")
            XCTAssertEqual(link.counters.state, .connected)
            XCTAssertEqual(link.counters.bytesSent, expected.count)
        }
    }

    func testAfterAnOutageNoteOffsOfSoundingNotesGoFirstAndLateNoteOnsStayOut() throws {
        let server = try StreamServer()
        // Longer than the 2 s backoff, so a note-on played just before the receiver is back is
        // never late, whatever point of the backoff the link is at.
        let link = try link(to: server, noteOnTimeout: 2_500)
        link.start()
        defer { link.stop() }
        enqueue(link, "on60", .noteOn(channel: 0, note: 60))
        link.wake()
        let first = try XCTUnwrap(server.accept())
        XCTAssertEqual(server.read(first, count: 4 + packet("on60").count), lengthPrefixed(packet("on60")))

        // The receiver goes away with note 60 sounding.
        close(first)
        server.shut()
        XCTAssertTrue(waitUntil { link.counters.state != .connected }, "the link did not notice the close")
        enqueue(link, "on62", .noteOn(channel: 0, note: 62))
        link.wake()
        let late = monotonicNow()
        XCTAssertTrue(waitUntil { monotonicNow() - late > 2_600_000_000 })
        enqueue(link, "cc1", .other)
        enqueue(link, "off62", .noteOff(channel: 0, note: 62))
        enqueue(link, "off60", .noteOff(channel: 0, note: 60))
        enqueue(link, "on64", .noteOn(channel: 0, note: 64))
        link.wake()

        try server.open()
        let second = try XCTUnwrap(server.accept(), "no reconnect: \(link.counters)")
        defer { close(second) }
        // off62's note-on was too late to send, so its note-off goes first too: harmless.
        let expected = ["off62", "off60", "cc1", "on64"].flatMap { lengthPrefixed(packet($0)) }
        XCTAssertEqual(server.read(second, count: expected.count), expected)
        XCTAssertTrue(waitUntil { link.counters.packetsSent == 5 }, "\(link.counters)")
        let counters = link.counters
        XCTAssertEqual(counters.reconnects, 1)
        XCTAssertEqual(counters.staleNoteOns, 1)
        XCTAssertEqual(counters.droppedNoteOns + counters.droppedNoteOffs + counters.droppedOthers, 0)
        XCTAssertEqual(counters.queued, 0)
    }

    func testAFullQueueKeepsItsNoteOffsAndCountsWhatItDrops() throws {
        let server = try StreamServer()
        server.shut()
        let link = try link(to: server, queue: 4)
        link.start()
        defer { link.stop() }
        XCTAssertTrue(waitUntil { link.counters.lastError != nil }, "no refused connect: \(link.counters)")
        enqueue(link, "on60", .noteOn(channel: 0, note: 60))
        enqueue(link, "c1", .other)
        enqueue(link, "c2", .other)
        enqueue(link, "off60", .noteOff(channel: 0, note: 60))
        // Full: each of these pushes out the oldest packet that is not a note-off.
        enqueue(link, "c3", .other)
        enqueue(link, "off61", .noteOff(channel: 0, note: 61))
        link.wake()
        XCTAssertTrue(waitUntil { link.counters.queued == 4 }, "\(link.counters)")

        try server.open()
        let connection = try XCTUnwrap(server.accept(), "no reconnect: \(link.counters)")
        defer { close(connection) }
        let expected = ["off60", "off61", "c2", "c3"].flatMap { lengthPrefixed(packet($0)) }
        XCTAssertEqual(server.read(connection, count: expected.count), expected)
        let counters = link.counters
        XCTAssertEqual(counters.droppedNoteOns, 1, "\(counters)")
        XCTAssertEqual(counters.droppedOthers, 1, "\(counters)")
        XCTAssertEqual(counters.droppedNoteOffs, 0, "\(counters)")
        XCTAssertEqual(counters.reconnects, 0, "the first connection is not a reconnect")
        XCTAssertEqual(counters.lastError, "Connection refused")
    }

    func testStopWritesWhatIsQueuedToALiveConnectionFirst() throws {
        let server = try StreamServer()
        let link = try link(to: server)
        link.start()
        let connection = try XCTUnwrap(server.accept())
        defer { close(connection) }
        XCTAssertTrue(waitUntil { link.counters.state == .connected })
        // The note-offs a stopping bridge sends, handed over just before the stop.
        let names = (60..<64).map { "off\($0)" }
        for (index, name) in names.enumerated() { enqueue(link, name, .noteOff(channel: 0, note: UInt8(60 + index))) }
        link.stop()
        let expected = names.flatMap { lengthPrefixed(packet($0)) }
        XCTAssertEqual(server.read(connection, count: expected.count + 1, timeout: 2_000), expected, "then closed")
    }

    func testAReceiverThatStopsReadingFillsTheQueueNotThePipeline() throws {
        let server = try StreamServer()
        let link = try link(to: server, queue: 64)
        link.start()
        let connection = try XCTUnwrap(server.accept())
        defer { close(connection) }
        XCTAssertTrue(waitUntil { link.counters.state == .connected })
        // Controllers of 1 KB into a connection nobody reads, paced so that the link keeps up:
        // the socket's buffers fill, then the queue, and from then on packets are dropped,
        // counted; no enqueue waits.
        let blob = try OSCPacket.message(OSCMessage("/cc", [.blob([UInt8](repeating: 7, count: 1_000))])).serialize()
        var enqueued = 0
        var slowest: UInt64 = 0
        while enqueued < 200_000 {
            let before = monotonicNow()
            blob.withUnsafeBytes { link.enqueue($0, kind: .other) }
            link.wake()
            slowest = max(slowest, monotonicNow() - before)
            enqueued += 1
            if enqueued % 100 == 0 {
                usleep(500)
                let counters = link.counters
                if counters.droppedOthers > 100 && counters.queued >= 64 { break }
            }
        }
        // An enqueue that waited on the connection would wait for good (nothing reads it); a
        // second is a bound a busy machine's scheduling stays under.
        XCTAssertLessThan(slowest, 1_000_000_000, "an enqueue waited on the connection")
        let counters = link.counters
        XCTAssertGreaterThan(counters.droppedOthers, 100, "\(counters)")
        XCTAssertEqual(counters.reconnects, 0, "\(counters)")
        // Everything is accounted for: in the socket, queued, or dropped (the last enqueues may
        // still be on their way from the ring).
        XCTAssertTrue(
            waitUntil {
                let c = link.counters
                return c.packetsSent + c.queued + c.droppedOthers == enqueued
            },
            "\(link.counters), \(enqueued) enqueued")
        let stopping = monotonicNow()
        link.stop()
        XCTAssertLessThan(monotonicNow() - stopping, 2_000_000_000, "stop() waited past its grace")
    }

    func testHandingPacketsToTheLinkAllocatesNothingWhetherTheRingTakesThemOrIsFull() throws {
        try requireOptimizedBuild()
        let server = try StreamServer()
        server.shut()
        let link = try link(to: server, queue: 64)
        link.start()
        defer { link.stop() }
        let bytes = packet("cc")
        func hand(_ count: Int) {
            bytes.withUnsafeBytes { packet in
                var index = 0
                while index < count {
                    link.enqueue(packet, kind: .other)
                    index += 1
                    if index % 64 == 0 { link.wake() }
                }
            }
        }
        hand(1_000)  // warm-up
        aseqosc_allocations_start()
        // More than the ring holds between two turns of the link thread, at times.
        hand(100_000)
        let allocations = aseqosc_allocations_stop()
        XCTAssertEqual(allocations, 0, "\(allocations) allocations for 100,000 packets")
        XCTAssertTrue(
            waitUntil { link.counters.queued + link.counters.droppedOthers == 101_000 }, "\(link.counters)")
    }

    func testAHostThatNeverAnswersTimesOutAndIsRetried() throws {
        // TEST-NET-1 (RFC 5737): routed nowhere, so the SYN goes unanswered or is refused
        // at once; either way the link must leave `connecting` on its own.
        var destination = try OSCDestination(host: "192.0.2.1", port: 9)
        destination.tcp = TCPOptions(framing: .slip)
        let link = TCPLink(destination: try destination.resolve(), framing: .slip)
        link.start()
        defer { link.stop() }
        XCTAssertTrue(
            waitUntil(timeout: 8) { link.counters.lastError != nil && link.counters.state != .connected },
            "\(link.counters)")
        let started = monotonicNow()
        link.stop()
        XCTAssertLessThan(monotonicNow() - started, 1_000_000_000, "stop() waited on the connect")
    }
}

private func monotonicNow() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}
