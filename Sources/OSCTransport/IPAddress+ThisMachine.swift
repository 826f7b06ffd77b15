import Endpoints
import Platform

extension IPAddress {
    /// The addresses of this machine's interfaces, loopback included (`getifaddrs`); a datagram
    /// to any of them never leaves the machine.
    package static func ofThisMachine() -> Set<IPAddress> {
        var found: Set<IPAddress> = []
        InterfaceAddresses.each { _, address in
            if let ip = IPAddress(address) { found.insert(ip) }
        }
        return found
    }
}
