// CLiblo: see UDPSenderTests.swift (a release build shows `SOCK_DGRAM` only to files importing it).
import CLiblo
import Endpoints
import Glibc
import OSCTransport
import XCTest

/// A UDP socket bound to every address on a free port, optionally a member of a multicast group
/// on the loopback interface: where multicast and broadcast sent on this host arrive.
final class WildcardReceiver {
    let descriptor: Int32
    let port: Int

    init(joining group: String? = nil) throws {
        let descriptor = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard descriptor >= 0 else { throw XCTSkip("no IPv4 sockets here") }
        self.descriptor = descriptor
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        guard bound == 0 else { throw XCTSkip("cannot bind a wildcard UDP socket here") }
        // (`deinit` closes the socket when a skip below is thrown.)
        if let group {
            var membership = ip_mreq()
            inet_pton(AF_INET, group, &membership.imr_multiaddr)
            membership.imr_interface.s_addr = UInt32(0x7F00_0001).bigEndian
            let joined = setsockopt(
                descriptor, Int32(IPPROTO_IP), IP_ADD_MEMBERSHIP, &membership,
                socklen_t(MemoryLayout<ip_mreq>.size))
            guard joined == 0 else { throw XCTSkip("cannot join a multicast group on loopback here") }
        }
    }

    deinit { close(descriptor) }

    /// Every datagram that arrives until none has for `quiet` milliseconds.
    func receiveAll(quiet: Int32 = 500) -> [[UInt8]] {
        var packets: [[UInt8]] = []
        var buffer = [UInt8](repeating: 0, count: 2_048)
        while true {
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, quiet) == 1 else { return packets }
            let count = recv(descriptor, &buffer, buffer.count, 0)
            guard count >= 0 else { return packets }
            packets.append(Array(buffer.prefix(count)))
        }
    }
}

final class MulticastBroadcastTests: XCTestCase {
    func testMulticastWithLoopbackReachesAGroupMemberOnThisHost() throws {
        let group = "239.255.77.77"
        let receiver = try WildcardReceiver(joining: group)
        let destination = try OSCDestination(
            host: group, port: receiver.port, multicastTTL: 0, multicastInterface: "lo", multicastLoopback: true)
        let sender = try OSCSender(destinations: [destination.resolve()])
        let sent = (0..<5).map { packet($0, size: 12 + $0 * 4) }
        for bytes in sent { bytes.withUnsafeBytes { sender.queue($0, to: 0) } }
        sender.flush()

        XCTAssertEqual(receiver.receiveAll(), sent)
        XCTAssertEqual(sender.statistics.packetsSent(to: 0), 5)
        XCTAssertEqual(sender.statistics.counters(for: 0).totalErrors, 0)
    }

    func testAnUnknownMulticastInterfaceIsRefusedNamingIt() throws {
        let destination = try OSCDestination(host: "239.255.77.79", port: 9000, multicastInterface: "nosuchif0")
        XCTAssertThrowsError(try OSCSender(destinations: [destination.resolve()])) { error in
            XCTAssertTrue("\(error)".contains("if_nametoindex(nosuchif0)"), "\(error)")
        }
    }

    func testBroadcastArrivesWithTheFlagAndIsRefusedAtSetUpWithoutIt() throws {
        let receiver = try WildcardReceiver()
        let flagged = try OSCDestination(host: "127.255.255.255", port: receiver.port, broadcast: true)
        let sender = try OSCSender(destinations: [flagged.resolve()])
        let sent = (0..<3).map { packet($0) }
        for bytes in sent { bytes.withUnsafeBytes { sender.queue($0, to: 0) } }
        sender.flush()
        XCTAssertEqual(receiver.receiveAll(), sent)
        XCTAssertEqual(sender.statistics.packetsSent(to: 0), 3)

        let unflagged = try OSCDestination(host: "127.255.255.255", port: receiver.port)
        XCTAssertThrowsError(try OSCSender(destinations: [unflagged.resolve()])) { error in
            XCTAssertEqual("\(error)", "connect for 127.255.255.255:\(receiver.port): Permission denied")
        }
    }
}
