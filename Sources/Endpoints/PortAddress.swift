/// An ALSA sequencer address, `client:port`.
package struct PortAddress: Hashable, Sendable, Comparable, CustomStringConvertible {
    package var client: UInt8
    package var port: UInt8

    package init(client: UInt8, port: UInt8) {
        self.client = client
        self.port = port
    }

    package var description: String { "\(client):\(port)" }

    package static func < (lhs: PortAddress, rhs: PortAddress) -> Bool {
        (lhs.client, lhs.port) < (rhs.client, rhs.port)
    }

    /// The system announce port, where the kernel reports clients and ports coming and going.
    package static let systemAnnounce = PortAddress(client: 0, port: 1)
}
