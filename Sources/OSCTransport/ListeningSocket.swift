import Glibc

/// Why a receiver could not open its socket.
public struct ListenError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What was being bound, `host:port`.
    public var endpoint: String
    /// The C call that failed.
    public var call: String
    public var code: Int32

    public var description: String {
        let reason = call == "getaddrinfo" ? String(cString: gai_strerror(code)) : String(cString: strerror(code))
        return "\(call) for \(endpoint): \(reason)"
    }
}

/// Opening the bound, non-blocking sockets ``UDPReceiver`` and ``TCPReceiver`` read from, and
/// the one the OSCQuery server accepts on.
package enum ListeningSocket {
    /// A socket of `type` (`SOCK_DGRAM` or `SOCK_STREAM`) bound to `host:port` (a numeric IPv4
    /// or IPv6 address; port 0 picks a free port), listening if it is a stream socket, with the
    /// address it got.
    package static func open(host: String, port: Int, type: Int32) throws(ListenError) -> (Int32, SocketAddress) {
        let endpoint = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        func fail(_ call: String, _ code: Int32 = errno) -> ListenError {
            ListenError(endpoint: endpoint, call: call, code: code)
        }
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = type
        hints.ai_flags = AI_PASSIVE | AI_NUMERICHOST | AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        let code = getaddrinfo(host, String(port), &hints, &list)
        guard code == 0, let first = list else { throw fail("getaddrinfo", code) }
        defer { freeaddrinfo(list) }
        let family = first.pointee.ai_family
        let flags = Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        let descriptor = socket(family, type | flags, 0)
        guard descriptor >= 0 else { throw fail("socket") }
        let isStream = type == Int32(SOCK_STREAM.rawValue)
        do throws(ListenError) {
            var on: Int32 = 1
            var off: Int32 = 0
            let size = socklen_t(MemoryLayout<Int32>.size)
            // TCP: a restart or reload must rebind while closed connections sit in TIME_WAIT
            // (Linux still refuses a second listener). Not for UDP, where it would let a second
            // aseqosc bind the same port silently.
            if isStream { _ = setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &on, size) }
            // `::` should take IPv4 senders too (they arrive as ::ffff:a.b.c.d).
            if family == AF_INET6 { _ = setsockopt(descriptor, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &off, size) }
            guard bind(descriptor, first.pointee.ai_addr, first.pointee.ai_addrlen) == 0 else { throw fail("bind") }
            if isStream { guard listen(descriptor, 64) == 0 else { throw fail("listen") } }
        } catch {
            close(descriptor)
            throw error
        }
        var bound = sockaddr_storage()
        var boundLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
        withUnsafeMutablePointer(to: &bound) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = getsockname(descriptor, $0, &boundLength) }
        }
        let address = withUnsafePointer(to: &bound) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { SocketAddress($0, length: Int(boundLength)) }
        }
        return (descriptor, address)
    }
}

/// A self-pipe: any thread writes a byte to end a `poll()` at once.
struct WakePipe {
    /// The end `poll()` watches.
    let reader: Int32
    let writer: Int32

    init(endpoint: String) throws(ListenError) {
        var ends: (Int32, Int32) = (-1, -1)
        let created = withUnsafeMutableBytes(of: &ends) { pipe($0.baseAddress!.assumingMemoryBound(to: Int32.self)) }
        guard created == 0 else { throw ListenError(endpoint: endpoint, call: "pipe", code: errno) }
        (reader, writer) = ends
        for end in [reader, writer] {
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
    }

    func wake() {
        var byte: UInt8 = 1
        _ = write(writer, &byte, 1)
    }

    /// Empties the pipe after `poll()` reported it.
    func drain() {
        var sink = (UInt64(0), UInt64(0))
        while withUnsafeMutableBytes(of: &sink, { read(reader, $0.baseAddress, $0.count) }) > 0 {}
    }

    func close() {
        Glibc.close(reader)
        Glibc.close(writer)
    }
}

extension SocketAddress {
    /// The port, in host byte order.
    public var port: Int {
        withSockaddr { address, _ in
            if family == AF_INET6 {
                return Int(
                    UInt16(
                        bigEndian: address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                            $0.pointee.sin6_port
                        }))
            }
            return Int(
                UInt16(bigEndian: address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_port }))
        }
    }
}
