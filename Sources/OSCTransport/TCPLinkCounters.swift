/// The connection state of a ``TCPLink``.
package enum TCPLinkState: Int, Sendable, CustomStringConvertible {
    /// A connect is under way.
    case connecting
    /// Connected: packets go out as they come.
    case connected
    /// The last attempt failed or the connection broke; the next attempt waits out the backoff.
    case waiting

    package var description: String {
        switch self {
        case .connecting: "connecting"
        case .connected: "connected"
        case .waiting: "waiting"
        }
    }
}

/// A TCP link's counters at one moment.
package struct TCPLinkCounters: Hashable, Sendable {
    package var state: TCPLinkState
    /// Connections made after the first one.
    package var reconnects: Int
    package var packetsSent: Int
    package var bytesSent: Int
    /// Packets waiting for the connection (or for room in its socket buffer).
    package var queued: Int
    /// Packets dropped because the queue was full, by kind.
    package var droppedNoteOns: Int
    package var droppedNoteOffs: Int
    package var droppedOthers: Int
    /// Note-ons that waited longer than the link's note-on timeout and were not sent.
    package var staleNoteOns: Int
    /// Packets handed to a connection that then broke: the peer may or may not have read them.
    package var lostInBrokenConnections: Int
    /// Why the last connection attempt failed or the last connection ended (strerror), if it did.
    package var lastError: String?
}
