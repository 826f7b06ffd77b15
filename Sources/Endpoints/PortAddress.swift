/// An ALSA sequencer address, `client:port`.
public struct PortAddress: Hashable, Sendable, Comparable, CustomStringConvertible {
    public var client: UInt8
    public var port: UInt8

    public init(client: UInt8, port: UInt8) {
        self.client = client
        self.port = port
    }

    public var description: String { "\(client):\(port)" }

    public static func < (lhs: PortAddress, rhs: PortAddress) -> Bool {
        (lhs.client, lhs.port) < (rhs.client, rhs.port)
    }

    /// The system announce port, where the kernel reports clients and ports coming and going.
    public static let systemAnnounce = PortAddress(client: 0, port: 1)
}
