import ALSASequencer
import CALSA
import CAllocationCounter
import Config
import EventTap
import Foundation
import MIDI
import MIDIToOSC
import OSC
import OSCMapping
import OSCToMIDI
import OSCTransport
import Pipeline
import Platform
import TestSupport
import XCTest

@testable import BridgeSession
@testable import MIDIToOSCRuntime
@testable import OSCToMIDIRuntime
@testable import Recovery
@testable import Status

/// The whole MIDI -> OSC hot path, in one thread as the input thread runs it: ALSA event decode -> routes with
/// operators -> OSC formatting for three destinations -> UDP to loopback sockets, with 0 heap
/// allocations per event after a warm-up (release builds: `make test`).
final class HotPathAllocationTests: XCTestCase {
    static let config = """
        { inputs: [{ name: "keys" }],
          routes: [{
            operators: [{ not: { types: "realtime" } }, { transpose: 7 }, { velocity: { gamma: 0.8, min: 10 } },
                        { noteOff: "note_off" }, { dropRepeats: true }],
            fork: [
              { operators: [{ channelMap: { "1": 2 } }], destinations: [{ host: "127.0.0.1", port: PORT1 }] },
              { destinations: [{ host: "127.0.0.1", port: PORT2, scheme: "osmid" },
                               { host: "127.0.0.1", port: PORT3, scheme: "touchosc" }] },
            ] }] }
        """

    func testHundredThousandEventsFromDecodeToSendAllocateNothing() throws {
        try requireOptimizedBuild()
        let path = try HotPath(config: Self.config, destinations: 3)
        path.pump(2_000)  // warm-up: lazily created runtime metadata, first-touch buffers

        let events = 100_000
        let allocations = path.allocations(pumping: events)
        let delivered = path.delivered.reduce(0, +)

        XCTAssertEqual(allocations, 0, "\(allocations) allocations for \(events) events")
        XCTAssertGreaterThan(delivered, events, "packets reached the loopback sockets")
        XCTAssertEqual(path.runner.eventsIn.load(ordering: .relaxed), events + 2_000)
        print(
            "allocation test: ALSA decode -> operators -> OSC x3 -> UDP, \(events) events, "
                + "\(delivered) packets received, \(allocations) allocations")
    }

    /// The commonest config: one route of destinations only (no operators)
    /// and one destination (one `sendmmsg` per batch without gathering).
    func testAForwardingRouteToOneDestinationAllocatesNothingAndSendsEveryEvent() throws {
        try requireOptimizedBuild()
        let path = try HotPath(
            config: """
                { inputs: [{ name: "keys" }], routes: [{ destinations: [{ host: "127.0.0.1", port: PORT1 }] }] }
                """, destinations: 1)
        XCTAssertEqual(path.runner.routes[0].route.chain.operators.count, 0)
        path.pump(2_000)

        let events = 100_000
        let allocations = path.allocations(pumping: events)

        XCTAssertEqual(allocations, 0, "\(allocations) allocations for \(events) events")
        XCTAssertEqual(path.delivered[0], events, "one packet per event: the default scheme sends every kind")
        let counts = path.runner.routes[0].route.counters.snapshot
        XCTAssertEqual(counts.eventsIn, events + 2_000)
        XCTAssertEqual(counts.passed, events + 2_000)
        XCTAssertEqual(path.runner.routes[0].sending.sender.statistics.packetsSent(to: 0), events + 2_000)
        print(
            "allocation test: ALSA decode -> forwarding route -> OSC -> UDP, \(events) events, "
                + "\(path.delivered[0]) packets received, \(allocations) allocations")
    }

    /// With a status page watching, each message sent is copied into the monitor's ring, which
    /// fills (nobody drains it here) and then drops and counts: still nothing allocated.
    func testWithTheMonitorOnEverySentMessageIsCopiedOrCountedAndNothingAllocated() throws {
        try requireOptimizedBuild()
        let tap = EventTap()
        let path = try HotPath(
            config: """
                { inputs: [{ name: "keys" }], routes: [{ destinations: [{ host: "127.0.0.1", port: PORT1 }] }] }
                """, destinations: 1, tap: tap)
        path.pump(2_000)
        _ = tap.drain { _, _ in }
        tap.set(on: true)

        let events = 100_000
        let allocations = path.allocations(pumping: events)

        XCTAssertEqual(allocations, 0, "\(allocations) allocations for \(events) events")
        XCTAssertEqual(path.delivered[0], events)
        var copied = 0
        var first = ""
        let dropped = tap.drain { entry, bytes in
            if copied == 0, case .message(let message)? = try? OSCPacket.decode(Array(bytes)) {
                first = message.address
            }
            copied += 1
            XCTAssertEqual(entry.kind, .oscOut)
        }
        XCTAssertGreaterThanOrEqual(copied, EventTap.capacity, "the ring holds at least its capacity")
        XCTAssertEqual(copied + Int(dropped), events)
        XCTAssertTrue(first.hasPrefix("/midi/keys/"), first)
    }

    /// A varied stream of sequencer events: notes (some off as note-on 0), controllers, bends,
    /// pressure, program changes and clocks.
    static func fill(_ raw: inout snd_seq_event_t, sequence: Int) {
        aseqosc_ev_clear(&raw)
        raw.dest.port = 0
        raw.source.client = 20
        let note = UInt8(36 + sequence % 48)
        switch sequence % 8 {
        case 0, 1:
            raw.type = snd_seq_event_type_t(SND_SEQ_EVENT_NOTEON.rawValue)
            raw.data.note.note = note
            raw.data.note.velocity = sequence % 16 == 0 ? 0 : UInt8(1 + sequence % 126)
        case 2:
            raw.type = snd_seq_event_type_t(SND_SEQ_EVENT_NOTEOFF.rawValue)
            raw.data.note.note = note
        case 3, 4:
            raw.type = snd_seq_event_type_t(SND_SEQ_EVENT_CONTROLLER.rawValue)
            raw.data.control.param = UInt32(sequence % 8)
            raw.data.control.value = Int32(sequence % 128)
        case 5:
            raw.type = snd_seq_event_type_t(SND_SEQ_EVENT_PITCHBEND.rawValue)
            raw.data.control.value = Int32(sequence % 16384) - 8192
        case 6:
            raw.type = snd_seq_event_type_t(SND_SEQ_EVENT_CHANPRESS.rawValue)
            raw.data.control.value = Int32(sequence % 128)
        default:
            raw.type = snd_seq_event_type_t(SND_SEQ_EVENT_CLOCK.rawValue)
        }
    }
}

/// The MIDI -> OSC hot path on the calling thread, for the allocation tests: synthetic sequencer
/// events (``HotPathAllocationTests/fill(_:sequence:)``) through the decoder and the routes, a
/// batch's end every 16 events, and loopback sockets, one per destination, drained as it goes.
final class HotPath {
    let receivers: [UDPReceiverSocket]
    let runner: RouteRunner
    /// Datagrams each receiver got since the last ``resetDelivered()``.
    private(set) var delivered: [Int]
    private var decoder: SequencerEventDecoder
    private var raw = snd_seq_event_t()

    /// `config` names its destination ports `PORT1`, `PORT2`, ...: `destinations` of them.
    init(config: String, destinations: Int, tap: EventTap? = nil) throws {
        receivers = try (0..<destinations).map { _ in try UDPReceiverSocket() }
        var text = config
        for (index, receiver) in receivers.enumerated() {
            text = text.replacingOccurrences(of: "PORT\(index + 1)", with: String(receiver.port))
        }
        let parsed = try ConfigParser.parse(Data(text.utf8))
        let store = SysExStore(slots: 4, capacity: 1024)
        let routes = try parsed.routes.map {
            try RouteRuntime(config: $0, configInputPorts: [0], portNames: ["keys"], sysexStore: store, tap: tap)
        }
        runner = RouteRunner(routes: routes)
        decoder = SequencerEventDecoder(sysexStore: store)
        delivered = [Int](repeating: 0, count: destinations)
    }

    /// Zeroes ``delivered`` in place: a new array (even a literal) would be copied on its first
    /// change, inside the measured run.
    func resetDelivered() {
        var r = 0
        while r < delivered.count {
            delivered[r] = 0
            r += 1
        }
    }

    /// Runs `count` events through with ``delivered`` zeroed first, and returns the heap
    /// allocations this thread made meanwhile.
    func allocations(pumping count: Int) -> Int {
        resetDelivered()
        aseqosc_allocations_start()
        pump(count)
        return Int(aseqosc_allocations_stop())
    }

    /// Runs `count` events through, adding what arrives to ``delivered``.
    func pump(_ count: Int) {
        var i = 0
        while i < count {
            HotPathAllocationTests.fill(&raw, sequence: i)
            if case .midi(let event, _) = decoder.decode(&raw, timestamp: UInt64(i) * 1000) {
                runner.run(event)
            }
            if i & 15 == 15 {
                _ = runner.endBatch(idleWakeMilliseconds: -1)
                var r = 0
                while r < receivers.count {
                    delivered[r] += receivers[r].drain()
                    r += 1
                }
            }
            i += 1
        }
    }
}

extension UDPReceiverSocket {
    /// Every datagram waiting, decoded: waits up to 2 s for the first, then takes what follows
    /// within 100 ms of the one before.
    func datagrams() throws -> [OSCPacket] {
        var packets: [OSCPacket] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        while poll(&poller, 1, packets.isEmpty ? 2_000 : 100) == 1 {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            guard count > 0 else { break }
            packets.append(try OSCPacket.decode(Array(buffer[0..<count])))
        }
        return packets
    }
}

/// A non-blocking UDP socket on 127.0.0.1 and an OS-chosen port, drained without allocating.
final class UDPReceiverSocket {
    let descriptor: Int32
    let port: UInt16
    private let buffer = UnsafeMutableRawPointer.allocate(byteCount: 2048, alignment: 8)

    init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        self.descriptor = descriptor
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var size = Int32(4 << 20)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, 4)
        _ = fcntl(descriptor, F_SETFL, O_NONBLOCK)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else { throw XCTSkip("cannot bind a loopback UDP socket") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        port = UInt16(bigEndian: address.sin_port)
    }

    /// Reads every waiting datagram; returns how many there were.
    func drain() -> Int {
        var count = 0
        while recv(descriptor, buffer, 2048, 0) > 0 { count += 1 }
        return count
    }

    deinit {
        close(descriptor)
        buffer.deallocate()
    }
}
