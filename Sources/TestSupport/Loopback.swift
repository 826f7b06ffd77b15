import Glibc

/// Calls `body` with `host`:`port` (127.0.0.1 unless another loopback address is named) as a
/// `sockaddr` and its length, for a test's `sendto`, `connect` or `bind`.
package func withIPv4Loopback<Result>(
    host: String = "127.0.0.1", port: Int, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Result
) -> Result {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    inet_pton(AF_INET, host, &address.sin_addr)
    address.sin_port = UInt16(truncatingIfNeeded: port).bigEndian
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
}

/// Sends `bytes` as one UDP datagram from a fresh socket to 127.0.0.1:`port`; returns what
/// `sendto` returned.
@discardableResult
package func sendUDPDatagram(_ bytes: [UInt8], toLoopbackPort port: Int) -> Int {
    let descriptor = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
    defer { close(descriptor) }
    return withIPv4Loopback(port: port) { sendto(descriptor, bytes, bytes.count, 0, $0, $1) }
}

/// One UDP socket that sends every datagram from the same port, as a long-running sender does
/// (a receiver that tells senders apart by address and port sees one sender).
package final class UDPPeer {
    private let descriptor = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)

    package init() {}

    /// A sender on `source` (a loopback address such as 127.0.0.2) with a port the system
    /// picks: another machine, or another run of the same app, as the receiver sees it; nil when
    /// it cannot bind there.
    package init?(source: String) {
        guard withIPv4Loopback(host: source, port: 0, { bind(descriptor, $0, $1) }) == 0 else { return nil }
    }

    deinit { close(descriptor) }

    /// Sends `bytes` as one datagram to 127.0.0.1:`port`; returns what `sendto` returned.
    @discardableResult
    package func send(_ bytes: [UInt8], toLoopbackPort port: Int) -> Int {
        withIPv4Loopback(port: port) { sendto(descriptor, bytes, bytes.count, 0, $0, $1) }
    }
}
