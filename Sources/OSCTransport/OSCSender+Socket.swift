import Glibc
import Platform

/// Why an ``OSCSender`` could not set up a destination's socket.
package struct UDPSenderError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The destination, as `host:port`.
    package var destination: String
    /// The call that failed, and why.
    package var failure: SystemCallError

    package init(destination: String, _ failure: SystemCallError) {
        self.destination = destination
        self.failure = failure
    }

    package var description: String { "\(failure.call) for \(destination): \(failure.error)" }
}

// Each destination's socket, opened at setup: connected, non-blocking, with its multicast and
// broadcast options.
extension OSCSender {
    static func openSocket(for resolved: ResolvedOSCDestination) throws(UDPSenderError) -> Int32 {
        let destination = resolved.destination
        let address = resolved.address
        let name = destination.description
        func fail(_ call: String, _ error: Errno) -> UDPSenderError {
            UDPSenderError(destination: name, SystemCallError(call, error))
        }

        let type = Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        let descriptor: Int32
        switch valueOrErrno(socket(address.family, type, 0)) {
        case .success(let opened): descriptor = opened
        case .failure(let error): throw fail("socket", error)
        }
        // A service's socket is connected once the service is found (``ServiceTarget``).
        if destination.service != nil { return descriptor }
        do throws(UDPSenderError) {
            if destination.broadcast {
                try setOption(descriptor, SOL_SOCKET, SO_BROADCAST, Int32(1), "setsockopt(SO_BROADCAST)", name)
            }
            if address.isMulticast { try applyMulticastOptions(descriptor, resolved) }
            if case .failure(let error) = address.withSockaddr({ nothingOrErrno(connect(descriptor, $0, $1)) }) {
                throw fail("connect", error)
            }
        } catch {
            close(descriptor)
            throw error
        }
        return descriptor
    }

    static func applyMulticastOptions(
        _ descriptor: Int32, _ resolved: ResolvedOSCDestination
    ) throws(UDPSenderError) {
        let destination = resolved.destination
        let name = destination.description
        var interfaceIndex: Int32 = 0
        if let interface = destination.multicastInterface {
            // 0 for an unknown name, with the reason left for `Errno.current`.
            interfaceIndex = Int32(bitPattern: if_nametoindex(interface))
            guard interfaceIndex != 0 else {
                throw UDPSenderError(destination: name, SystemCallError("if_nametoindex(\(interface))", .current))
            }
        }
        if resolved.address.family == AF_INET6 {
            let level = Int32(IPPROTO_IPV6)
            if let ttl = destination.multicastTTL {
                try setOption(
                    descriptor, level, IPV6_MULTICAST_HOPS, Int32(ttl), "setsockopt(IPV6_MULTICAST_HOPS)", name)
            }
            if let loop = destination.multicastLoopback {
                try setOption(
                    descriptor, level, IPV6_MULTICAST_LOOP, UInt32(loop ? 1 : 0), "setsockopt(IPV6_MULTICAST_LOOP)",
                    name)
            }
            if interfaceIndex != 0 {
                try setOption(
                    descriptor, level, IPV6_MULTICAST_IF, interfaceIndex, "setsockopt(IPV6_MULTICAST_IF)", name)
            }
        } else {
            let level = Int32(IPPROTO_IP)
            if let ttl = destination.multicastTTL {
                try setOption(descriptor, level, IP_MULTICAST_TTL, Int32(ttl), "setsockopt(IP_MULTICAST_TTL)", name)
            }
            if let loop = destination.multicastLoopback {
                try setOption(
                    descriptor, level, IP_MULTICAST_LOOP, Int32(loop ? 1 : 0), "setsockopt(IP_MULTICAST_LOOP)", name)
            }
            if interfaceIndex != 0 {
                var request = ip_mreqn()
                request.imr_ifindex = interfaceIndex
                try setOption(descriptor, level, IP_MULTICAST_IF, request, "setsockopt(IP_MULTICAST_IF)", name)
            }
        }
    }

    static func setOption<T: BitwiseCopyable>(
        _ descriptor: Int32, _ level: Int32, _ option: Int32, _ value: T, _ call: String, _ destination: String
    ) throws(UDPSenderError) {
        if case .failure(let error) = setSocketOption(descriptor, level, option, value) {
            throw UDPSenderError(destination: destination, SystemCallError(call, error))
        }
    }
}
