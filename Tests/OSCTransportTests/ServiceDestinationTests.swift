// CLiblo: see OSCSenderTests (socket constants in a release build of this module).
import CLiblo
import Endpoints
import Glibc
import OSC
import OSCTransport
import TestSupport
import XCTest

/// Destinations named by DNS-SD service: a ``ServiceTarget`` moved by hand, as the follower
/// moves it, and what a receiver at each address gets.
final class ServiceDestinationTests: XCTestCase {
    private func serviceDestination(_ name: String, tcp: TCPOptions? = nil) throws -> ResolvedOSCDestination {
        var destination = OSCDestination(
            service: OSCServiceName(name: name, type: tcp == nil ? "_osc._udp" : "_osc._tcp"))
        destination.tcp = tcp
        return try destination.resolve()
    }

    private func loopback(_ port: Int) -> SocketAddress {
        withIPv4Loopback(port: port) { SocketAddress($0, length: Int($1)) }
    }

    func testAUDPDestinationDropsAndCountsWhileAbsentAndFollowsTheServiceWhereverItGoes() throws {
        let first = try XCTUnwrap(LoopbackReceiver(ipv6: false))
        let second = try XCTUnwrap(LoopbackReceiver(ipv6: false))
        let sender = try OSCSender(destinations: [try serviceDestination("Tablet synth")])
        let target = try XCTUnwrap(sender.serviceTargets[0])
        XCTAssertEqual(sender.destinations[0].destination.description, "service 'Tablet synth' (_osc._udp)")
        func send(_ index: Int) {
            packet(index).withUnsafeBytes { sender.queue($0, to: 0) }
            sender.flush()
        }
        send(0)
        XCTAssertEqual(sender.statistics.counters(for: 0).errors[.serviceAbsent], 1)
        XCTAssertNil(first.receive(timeout: 200))

        target.update(loopback(first.port))
        send(1)
        send(2)
        XCTAssertEqual(first.receive(count: 2), [packet(1), packet(2)])

        target.update(loopback(second.port))
        send(3)
        XCTAssertEqual(second.receive(count: 1), [packet(3)])
        XCTAssertNil(first.receive(timeout: 200))

        target.update(nil)
        send(4)
        XCTAssertEqual(sender.statistics.counters(for: 0).errors[.serviceAbsent], 2)
        XCTAssertEqual(sender.statistics.counters(for: 0).packetsSent, 3)
        XCTAssertNil(second.receive(timeout: 200))
    }

    func testATCPDestinationConnectsWhenTheServiceAppearsAndMovesWithIt() throws {
        let first = try TCPLinkTests.StreamServer()
        let second = try TCPLinkTests.StreamServer()
        let sender = try OSCSender(
            destinations: [try serviceDestination("Studio", tcp: TCPOptions(framing: .lengthPrefixed))])
        let target = try XCTUnwrap(sender.serviceTargets[0])
        defer { sender.stopLinks() }
        func send(_ name: String) {
            let bytes = try! OSCPacket.message(OSCMessage("/" + name)).serialize()
            bytes.withUnsafeBytes { sender.queue($0, to: 0) }
            sender.flush()
        }
        func framed(_ name: String) -> [UInt8] {
            let bytes = try! OSCPacket.message(OSCMessage("/" + name)).serialize()
            return withUnsafeBytes(of: UInt32(bytes.count).bigEndian, Array.init) + bytes
        }
        // Queued while absent, sent once the service is found.
        send("a")
        XCTAssertNil(first.accept(timeout: 300))
        target.update(loopback(first.port))
        let connection = try XCTUnwrap(first.accept())
        defer { close(connection) }
        XCTAssertEqual(first.read(connection, count: framed("a").count), framed("a"))
        // Moved: the link leaves the old connection and sends to the new address.
        target.update(loopback(second.port))
        let moved = try XCTUnwrap(second.accept())
        defer { close(moved) }
        send("b")
        XCTAssertEqual(second.read(moved, count: framed("b").count), framed("b"))
        XCTAssertEqual(first.read(connection, count: 1, timeout: 1_000), [], "the old connection is closed")
    }
}
