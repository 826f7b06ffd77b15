/// The connection state of a ``TCPLink``.
public enum TCPLinkState: Int, Sendable, CustomStringConvertible {
    /// A connect is under way.
    case connecting
    /// Connected: packets go out as they come.
    case connected
    /// The last attempt failed or the connection broke; the next attempt waits out the backoff.
    case waiting

    public var description: String {
        switch self {
        case .connecting: "connecting"
        case .connected: "connected"
        case .waiting: "waiting"
        }
    }
}

/// A TCP link's counters at one moment.
public struct TCPLinkCounters: Hashable, Sendable {
    public var state: TCPLinkState
    /// Connections made after the first one.
    public var reconnects: Int
    public var packetsSent: Int
    public var bytesSent: Int
    /// Packets waiting for the connection (or for room in its socket buffer).
    public var queued: Int
    /// Packets dropped because the queue was full, by kind.
    public var droppedNoteOns: Int
    public var droppedNoteOffs: Int
    public var droppedOthers: Int
    /// Note-ons that waited longer than the link's note-on timeout and were not sent.
    public var staleNoteOns: Int
    /// Packets handed to a connection that then broke: the peer may or may not have read them.
    public var lostInBrokenConnections: Int
    /// Why the last connection attempt failed or the last connection ended (strerror), if it did.
    public var lastError: String?
}
