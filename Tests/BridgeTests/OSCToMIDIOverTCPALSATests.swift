import Status
import CLiblo
import Foundation
import Glibc
import OSC
import TestSupport
import XCTest

/// OSC over TCP to `aseqosc run` (`osc.protocol`), in both stream framings: liblo's `oscsend`
/// with an `osc.tcp://` URL (OSC 1.0 length prefixes), liblo with `lo_address_set_stream_slip`
/// (OSC 1.1 SLIP), and double-END SLIP written here; exact MIDI bytes at the virmidi card's raw
/// side, and the TCP counters in `aseqosc status`.
extension OSCToMIDIALSATests {
    /// `oscsend osc.tcp://127.0.0.1:PORT ADDRESS [TYPES ARGS...]`: one connection per message.
    func sendOverTCP(_ port: Int, _ address: String, _ types: String = "", _ arguments: Any...) throws {
        var command = ["osc.tcp://127.0.0.1:\(port)", address]
        if !types.isEmpty { command += [types] + arguments.map { "\($0)" } }
        let result = try runProcess(oscsend, command)
        XCTAssertEqual(result.status, 0, "oscsend \(command): \(result.standardError)")
    }

    /// A TCP connection to the bridge, written to directly (framings liblo does not send).
    func connect(_ port: Int) throws -> Int32 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        let result = withIPv4Loopback(port: port) { Glibc.connect(descriptor, $0, $1) }
        guard result == 0 else {
            close(descriptor)
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
        return descriptor
    }

    func write(_ descriptor: Int32, _ bytes: [UInt8]) {
        XCTAssertEqual(
            bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }, bytes.count
        )
    }

    /// Connects and sends `bytes`; whether the bridge refused the connection: reset it (which
    /// `connect` itself may report, when the reset comes that soon), or closed it within 5 s.
    func isRefused(_ port: Int, sending bytes: [UInt8]) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        let result = withIPv4Loopback(port: port) { Glibc.connect(descriptor, $0, $1) }
        if result != 0 { return errno == ECONNRESET }
        let sent = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        return sent < 0 || isClosedByBridge(descriptor)
    }

    /// Whether the bridge closed `descriptor`'s connection (end of file or a reset) within 5 s.
    func isClosedByBridge(_ descriptor: Int32) -> Bool {
        var ready = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&ready, 1, 5000) == 1 else { return false }
        var byte: UInt8 = 0
        return recv(descriptor, &byte, 1, Int32(MSG_DONTWAIT)) <= 0
    }

    /// Double-END SLIP (RFC 1055 with an END before each packet too).
    func slip(_ packet: OSCPacket) throws -> [UInt8] { slipFramed(try packet.serialize()) }

    /// An OSC 1.0 frame: the packet's size as a big-endian int32, then the packet.
    func lengthPrefixed(_ packet: OSCPacket) throws -> [UInt8] { TestSupport.lengthPrefixed(try packet.serialize()) }

    /// Sends active sensing over its own TCP connection until `dump` prints it: amidi and the
    /// output's binding take a moment to be ready in the VM, and MIDI before that is lost.
    /// Returns how many it sent; the connection is closed when this returns.
    func waitUntilPlaying(_ port: Int, _ dump: BackgroundProcess) throws -> Int {
        let connection = try connect(port)
        defer { close(connection) }
        let probe = try lengthPrefixed(.message(OSCMessage("/midi/synth/active_sensing", [])))
        var sent = 0
        var polls = 0
        // One probe every 100 ms (the wait polls every 5 ms).
        let ready = RunningBridge.waitUntil(timeout: 60) {
            if polls % 20 == 0 {
                write(connection, probe)
                sent += 1
            }
            polls += 1
            return dump.standardOutput.contains("FE")
        }
        XCTAssertTrue(ready, "no active sensing at amidi")
        return sent
    }

    /// What amidi printed, without the active sensing of ``waitUntilPlaying(_:_:)``.
    func played(_ dump: BackgroundProcess, count: Int) -> [String] {
        _ = RunningBridge.waitUntil(timeout: 60) { self.messages(dump).filter { $0 != "FE" }.count >= count }
        return messages(dump).filter { $0 != "FE" }
    }

    /// `aseqosc status` as people read it, and the OSC input's counters from `status --json`.
    func oscStatus(_ bridge: RunningBridge) throws -> (text: String, osc: BridgeStatus.OSCInput) {
        let text = try runProcess(TestEnvironment.aseqoscBinary, ["status", "--control", bridge.controlPath])
        XCTAssertEqual(text.status, 0, text.standardError)
        let json = try runProcess(TestEnvironment.aseqoscBinary, ["status", "--json", "--control", bridge.controlPath])
        let status = try JSONDecoder().decode(BridgeStatus.self, from: Data(json.standardOutput.utf8))
        return (text.standardOutput, try XCTUnwrap(status.oscInput, text.standardOutput))
    }

    func testOscsendOverTCPLeavesAsTheExactMIDIBytes() throws {
        let port = 57320
        let bridge = try startBridge(port: port, osc: "protocol: \"tcp\", sysex: true")
        XCTAssertTrue(bridge.bridge.standardError.contains("listening on osc.tcp://127.0.0.1:\(port) "))
        let dump = try dumpRawMIDI()
        let probes = try waitUntilPlaying(port, dump)
        try sendOverTCP(port, "/midi/synth/1/note_on", "ii", 60, 100)
        try sendOverTCP(port, "/midi/synth/3/cc", "ii", 7, 101)
        try sendOverTCP(port, "/midi/synth/3/pitch_bend", "i", -8192)
        try sendOverTCP(port, "/midi/synth/3/nrpn", "ff", 1000.0, 300.0)
        try sendOverTCP(port, "/synth/note_on", "iii", 2, 61, 101)
        try sendOverTCP(port, "/synth/raw", "iiiiii", 240, 126, 127, 6, 1, 247)
        try sendOverTCP(port, "/midi", "m", "00643C90")
        try sendOverTCP(port, "/midi/synth/clock")
        let expected = [
            "90 3C 64", "B2 07 65", "E2 00 00", "B2 63 07", "B2 62 68", "B2 06 02", "B2 26 2C", "91 3D 65",
            "F0 7E 7F 06 01 F7", "90 3C 64", "F8",
        ]
        XCTAssertEqual(played(dump, count: expected.count), expected)
        dump.stop()
        let (text, osc) = try oscStatus(bridge)
        XCTAssertEqual(osc.listen, "osc.tcp://127.0.0.1:\(port)")
        XCTAssertEqual([osc.packets, osc.messages, osc.translated], Array(repeating: 8 + probes, count: 3))
        let tcp = try XCTUnwrap(osc.tcp)
        XCTAssertEqual(tcp.packets, 8 + probes)
        XCTAssertEqual([tcp.accepted, tcp.open, tcp.closed], [9, 0, 9], "oscsend connects once per message")
        XCTAssertEqual(tcp.framingErrors, [:])
        XCTAssertTrue(text.contains("connections 9 accepted, 0 open, 9 closed"), text)
        _ = bridge.stop()
    }

    func testSLIPFromLibloAndDoubleEndSLIPWithABundleAheadLeaveAsMIDI() throws {
        let port = 57321
        let bridge = try startBridge(port: port, osc: "protocol: \"tcp\", sysex: true")
        let dump = try dumpRawMIDI()
        let probes = try waitUntilPlaying(port, dump)

        // liblo's SLIP: 0xC0 (a program change's status) must be escaped in the stream.
        let target = try XCTUnwrap(lo_address_new_from_url("osc.tcp://127.0.0.1:\(port)"))
        // 1: SLIP on (liblo 0.31 takes an int, 0.32 an lo_slip_encoding whose 1 is LO_SLIP_SINGLE).
        lo_address_set_stream_slip(target, .init(1))
        func libloSend(_ address: String, _ build: (lo_message) -> Void) {
            let message = lo_message_new()!
            build(message)
            XCTAssertGreaterThan(
                lo_send_message(target, address, message), 0, String(cString: lo_address_errstr(target)))
            lo_message_free(message)
        }
        libloSend("/midi") {
            var midi: [UInt8] = [0x00, 0x00, 0x05, 0xC0]
            _ = lo_message_add_midi($0, &midi)
        }
        libloSend("/midi/synth/1/note_on") {
            _ = lo_message_add_int32($0, 64)
            _ = lo_message_add_int32($0, 99)
        }
        libloSend("/synth/raw") {
            let bytes: [UInt8] = [0xF0, 0x43, 0x10, 0x4C, 0x00, 0x00, 0x7E, 0x00, 0xF7]
            let blob = lo_blob_new(Int32(bytes.count), bytes)
            _ = lo_message_add_blob($0, blob)
            lo_blob_free(blob)
        }
        lo_address_free(target)
        XCTAssertEqual(played(dump, count: 3), ["C0 05", "90 40 63", "F0 43 10 4C 00 00 7E 00 F7"])

        // Double-END SLIP on one connection: a bundle 200 ms ahead, then a note at once.
        let connection = try connect(port)
        defer { close(connection) }
        let ahead = OSCBundle(
            timeTag: OSCTimeTag(unixTime: Date().timeIntervalSince1970 + 0.2),
            [.message(OSCMessage("/midi/synth/1/note_on", [.int32(62), .int32(1)]))])
        let sent = Date()
        // The program change's status byte, 0xC0, is SLIP's END: escaped in the stream.
        let programChange = OSCMessage("/midi", [.midi(port: 0, status: 0xC0, data1: 0x40, data2: 0)])
        write(connection, try slip(.bundle(ahead)) + slip(.message(programChange)))
        XCTAssertEqual(played(dump, count: 5).suffix(2), ["C0 40", "90 3E 01"])
        let delay = Date().timeIntervalSince(sent)
        print("SLIP bundle 200 ms ahead arrived after \(Int(delay * 1000)) ms")
        XCTAssertGreaterThanOrEqual(delay, 0.19)
        dump.stop()
        let osc = try oscStatus(bridge).osc
        XCTAssertEqual(osc.tcp?.packets, 5 + probes)
        XCTAssertEqual(osc.scheduled, 1)
        XCTAssertEqual([osc.tcp?.accepted, osc.tcp?.open, osc.tcp?.closed], [3, 1, 2])
        _ = bridge.stop()
    }

    func testBrokenStreamsAndExtraClientsAreClosedAndCountedWhileOthersPlayOn() throws {
        let port = 57322
        let bridge = try startBridge(port: port, osc: "protocol: \"tcp\", maxConnections: 2, maxPacketSize: 256")
        let dump = try dumpRawMIDI()
        _ = try waitUntilPlaying(port, dump)
        let good = try connect(port)
        defer { close(good) }
        write(good, try slip(.message(OSCMessage("/midi/synth/1/note_on", [.int32(60), .int32(1)]))))
        XCTAssertEqual(played(dump, count: 1), ["90 3C 01"])

        let brokenStreams: [[UInt8]] = [
            [0x00, 0x00, 0x01, 0x04] + Array(repeating: 0x2F, count: 300),  // 260 bytes announced, over 256
            [0xC0, 0x2F, 0xDB, 0x41, 0xC0],  // ESC then 'A'
            Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8),
        ]
        for stream in brokenStreams {
            let bad = try connect(port)
            defer { close(bad) }
            write(bad, stream)
            XCTAssertTrue(isClosedByBridge(bad), "\(stream.prefix(4))")
        }
        // Two open already (good and the one below), both active within the last second, so
        // neither gives way: a third is refused.
        let second = try connect(port)
        defer { close(second) }
        write(second, try slip(.message(OSCMessage("/midi/synth/1/note_on", [.int32(61), .int32(2)]))))
        XCTAssertEqual(played(dump, count: 2), ["90 3C 01", "90 3D 02"])
        write(good, try slip(.message(OSCMessage("/midi/synth/1/note_on", [.int32(62), .int32(3)]))))
        XCTAssertEqual(played(dump, count: 3), ["90 3C 01", "90 3D 02", "90 3E 03"])
        XCTAssertTrue(isRefused(port, sending: try slip(.message(OSCMessage("/midi/synth/1/note_on", [.int32(63)])))))
        dump.stop()
        let (text, osc) = try oscStatus(bridge)
        let tcp = try XCTUnwrap(osc.tcp)
        XCTAssertEqual([tcp.accepted, tcp.open, tcp.closed], [6, 2, 4])
        XCTAssertEqual([tcp.refusedNotAllowed, tcp.refusedTooMany], [0, 1])
        XCTAssertEqual(tcp.framingErrors, ["oversized": 1, "badEscape": 1, "unknownFraming": 1])
        XCTAssertTrue(
            text.contains(
                "connections 6 accepted, 2 open, 4 closed, refused 0 not allowed, 1 too many; "
                    + "closed 0 idle to make room, 0 partial frame timeouts; "
                    + "framing errors: badEscape 1, oversized 1, unknownFraming 1"), text)
        _ = bridge.stop()
    }

    /// The lockout of issue 20: 16 clients (`maxConnections`) that connect and send nothing
    /// held every slot, and a good client's data was lost. Now the one idle the longest gives way.
    func testAGoodClientPlaysAfterSixteenIdleOnesHoldEverySlot() throws {
        let port = 57326
        let bridge = try startBridge(port: port, osc: "protocol: \"tcp\"")
        let dump = try dumpRawMIDI()
        let probes = try waitUntilPlaying(port, dump)
        var idle: [Int32] = []
        defer { idle.forEach { close($0) } }
        for _ in 0..<16 { idle.append(try connect(port)) }
        XCTAssertTrue(
            RunningBridge.waitUntil(timeout: 60) { (try? self.oscStatus(bridge).osc.tcp?.open) == 16 },
            "16 idle connections open")
        // Idle for longer than the second a connection is given before it may be evicted.
        usleep(1_200_000)
        try sendOverTCP(port, "/midi/synth/1/note_on", "ii", 60, 100)
        XCTAssertEqual(played(dump, count: 1), ["90 3C 64"])
        XCTAssertTrue(isClosedByBridge(idle[0]), "the connection idle the longest was not closed")
        dump.stop()
        let (text, osc) = try oscStatus(bridge)
        let tcp = try XCTUnwrap(osc.tcp)
        XCTAssertEqual(tcp.packets, 1 + probes)
        XCTAssertEqual([tcp.evictedIdle, tcp.refusedTooMany, tcp.partialFrameTimeouts], [1, 0, 0])
        XCTAssertEqual([tcp.accepted, tcp.open], [18, 15], "the probe's, 16 idle and oscsend's; oscsend closed")
        XCTAssertTrue(text.contains("closed 1 idle to make room, 0 partial frame timeouts"), text)
        XCTAssertTrue(bridge.bridge.standardError.contains("to make room for a new client"), bridge.bridge.standardError)
        _ = bridge.stop()
    }

    func testAClientStuckInsideAFrameIsClosedAfterTheFrameTimeout() throws {
        let port = 57327
        let bridge = try startBridge(port: port, osc: "protocol: \"tcp\", maxConnections: 1, frameTimeout: 0.5")
        let dump = try dumpRawMIDI()
        let probes = try waitUntilPlaying(port, dump)
        let stuck = try connect(port)
        defer { close(stuck) }
        let frame = try lengthPrefixed(.message(OSCMessage("/midi/synth/1/note_on", [.int32(61), .int32(1)])))
        write(stuck, Array(frame.prefix(10)))
        let started = Date()
        XCTAssertTrue(isClosedByBridge(stuck), "the connection inside a frame was not closed")
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(started), 0.45)
        // Its slot, the only one, serves the next client.
        try sendOverTCP(port, "/midi/synth/1/note_on", "ii", 62, 2)
        XCTAssertEqual(played(dump, count: 1), ["90 3E 02"])
        dump.stop()
        let tcp = try XCTUnwrap(try oscStatus(bridge).osc.tcp)
        XCTAssertEqual(tcp.packets, 1 + probes)
        XCTAssertEqual([tcp.partialFrameTimeouts, tcp.evictedIdle, tcp.refusedTooMany], [1, 0, 0])
        XCTAssertEqual(tcp.framingErrors, [:])
        _ = bridge.stop()
    }

    func testTCPClientsOutsideTheAllowListAreRefusedAndCounted() throws {
        let port = 57323
        let bridge = try startBridge(
            port: port, osc: "listen: \"0.0.0.0:\(port)\", allow: [\"10.0.0.0/8\"], protocol: \"tcp\"")
        let dump = try dumpRawMIDI()
        XCTAssertTrue(
            isRefused(port, sending: try slip(.message(OSCMessage("/midi/synth/1/note_on", [.int32(60), .int32(1)])))))
        usleep(300_000)
        XCTAssertEqual(messages(dump), [])
        dump.stop()
        let tcp = try XCTUnwrap(try oscStatus(bridge).osc.tcp)
        XCTAssertEqual([tcp.accepted, tcp.refusedNotAllowed, tcp.refusedTooMany], [0, 1, 0])
        _ = bridge.stop()
    }

    func testUDPAndTCPShareThePortAndSurviveAReloadOnIt() throws {
        let port = 57324
        let bridge = try startBridge(port: port, osc: "protocol: [\"udp\", \"tcp\"]")
        XCTAssertTrue(
            bridge.bridge.standardError.contains(
                "listening on osc.udp://127.0.0.1:\(port) and osc.tcp://127.0.0.1:\(port) "),
            bridge.bridge.standardError)
        let dump = try dumpRawMIDI()
        _ = try waitUntilPlaying(port, dump)
        try send(port, "/midi/synth/1/note_on", "ii", 60, 1)
        try sendOverTCP(port, "/midi/synth/1/note_on", "ii", 61, 2)
        XCTAssertEqual(played(dump, count: 2), ["90 3C 01", "90 3D 02"])
        // A held connection across the reload: the old side closes it, the new one binds the port.
        let held = try connect(port)
        defer { close(held) }
        XCTAssertTrue(
            try bridge.reload(
                """
                { outputs: [{ name: "synth", to: "Virtual Raw MIDI 0-0" }],
                  osc: { listen: "127.0.0.1:\(port)", protocol: ["udp", "tcp"], sysex: true } }
                """))
        XCTAssertTrue(bridge.bridge.standardError.contains("restarting it"), bridge.bridge.standardError)
        XCTAssertTrue(isClosedByBridge(held), "the old listener's connection was not closed")
        try send(port, "/midi/synth/1/note_on", "ii", 62, 3)
        let connection = try connect(port)
        defer { close(connection) }
        write(
            connection,
            try lengthPrefixed(
                .message(OSCMessage("/midi/synth/sysex", [.blob([0xF0, 0x7E, 0x7F, 0x06, 0x01, 0xF7])]))))
        try sendOverTCP(port, "/midi/synth/1/note_on", "ii", 63, 4)
        // The restart released the notes the old side held.
        XCTAssertEqual(
            played(dump, count: 7),
            ["90 3C 01", "90 3D 02", "80 3C 00", "80 3D 00", "90 3E 03", "F0 7E 7F 06 01 F7", "90 3F 04"],
            bridge.bridge.standardError)
        dump.stop()
        let osc = try oscStatus(bridge).osc
        XCTAssertEqual(osc.listen, "osc.udp://127.0.0.1:\(port) and osc.tcp://127.0.0.1:\(port)")
        XCTAssertEqual(osc.packets, 3, "one datagram and two TCP packets since the reload")
        XCTAssertEqual(osc.tcp?.packets, 2)
        _ = bridge.stop()
    }
}
