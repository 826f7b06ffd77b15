import Glibc

/// Calls `body` with 127.0.0.1:`port` as a `sockaddr` and its length, for a test's `sendto` or
/// `connect`.
package func withIPv4Loopback<Result>(port: Int, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Result) -> Result {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
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
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        inet_pton(AF_INET, source, &local.sin_addr)
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        if bound != 0 { return nil }
    }

    deinit { close(descriptor) }

    /// Sends `bytes` as one datagram to 127.0.0.1:`port`; returns what `sendto` returned.
    @discardableResult
    package func send(_ bytes: [UInt8], toLoopbackPort port: Int) -> Int {
        withIPv4Loopback(port: port) { sendto(descriptor, bytes, bytes.count, 0, $0, $1) }
    }
}
