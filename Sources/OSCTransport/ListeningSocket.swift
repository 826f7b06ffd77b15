import Glibc
import Platform

/// Why a receiver could not open its socket.
package struct ListenError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What was being bound, `host:port`.
    package var endpoint: String
    package var reason: Reason

    /// What failed: the address, or a system call.
    package enum Reason: Hashable, Sendable, CustomStringConvertible {
        /// `getaddrinfo` did not take the address (its `EAI_` code: not a numeric address).
        case address(Int32)
        /// A system call failed: `socket`, `bind`, `listen`, `eventfd`.
        case system(SystemCallError)

        /// The reason alone, as a person reads it: "Address already in use".
        package var description: String {
            switch self {
            case .address(let code): String(cString: gai_strerror(code))
            case .system(let failure): failure.error.description
            }
        }
    }

    package init(endpoint: String, _ reason: Reason) {
        self.endpoint = endpoint
        self.reason = reason
    }

    package var description: String {
        switch reason {
        case .address: "getaddrinfo for \(endpoint): \(reason)"
        case .system(let error): "\(error.call) for \(endpoint): \(reason)"
        }
    }
}

/// Opening the bound sockets ``UDPReceiver`` and ``TCPReceiver`` read from, and the one the
/// OSCQuery server accepts on.
package enum ListeningSocket {
    /// A socket of `type` (`SOCK_DGRAM` or `SOCK_STREAM`) bound to `host:port` (a numeric IPv4
    /// or IPv6 address; port 0 picks a free port), listening if it is a stream socket, with the
    /// address it got. Non-blocking unless `blocking`.
    package static func open(
        host: String, port: Int, type: Int32, blocking: Bool = false
    ) throws(ListenError) -> (Int32, SocketAddress) {
        let endpoint = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        func fail(_ call: String, _ error: Errno) -> ListenError {
            ListenError(endpoint: endpoint, .system(SystemCallError(call, error)))
        }
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = type
        hints.ai_flags = AI_PASSIVE | AI_NUMERICHOST | AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        let code = getaddrinfo(host, String(port), &hints, &list)
        guard code == 0, let first = list else { throw ListenError(endpoint: endpoint, .address(code)) }
        defer { freeaddrinfo(list) }
        let family = first.pointee.ai_family
        let flags = (blocking ? 0 : Int32(SOCK_NONBLOCK.rawValue)) | Int32(SOCK_CLOEXEC.rawValue)
        let descriptor: Int32
        switch valueOrErrno(socket(family, type | flags, 0)) {
        case .success(let opened): descriptor = opened
        case .failure(let error): throw fail("socket", error)
        }
        let isStream = type == Int32(SOCK_STREAM.rawValue)
        do throws(ListenError) {
            // TCP: a restart or reload must rebind while closed connections sit in TIME_WAIT
            // (Linux still refuses a second listener). Not for UDP, where it would let a second
            // aseqosc bind the same port silently.
            if isStream { _ = setSocketOption(descriptor, SOL_SOCKET, SO_REUSEADDR, Int32(1)) }
            // `::` should take IPv4 senders too (they arrive as ::ffff:a.b.c.d).
            if family == AF_INET6 { _ = setSocketOption(descriptor, Int32(IPPROTO_IPV6), IPV6_V6ONLY, Int32(0)) }
            if case .failure(let error) = nothingOrErrno(
                bind(descriptor, first.pointee.ai_addr, first.pointee.ai_addrlen))
            {
                throw fail("bind", error)
            }
            if isStream, case .failure(let error) = nothingOrErrno(listen(descriptor, 64)) {
                throw fail("listen", error)
            }
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

extension SocketAddress {
    /// The port, in host byte order.
    var port: Int {
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
