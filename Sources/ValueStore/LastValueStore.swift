import MIDI

/// The last values of one direction's ports, one ``PortValues`` per port: the MIDI -> OSC side
/// keeps one for its input ports, the OSC -> MIDI side one for its output ports.
///
/// Sized when the bridge is built (``PortValues/memory(parameterCapacity:)`` per port) and
/// never grown: a port added at reload gets a new store. Its threads are its tables'.
public final class LastValueStore: Sendable {
    /// The tables, by port index.
    public let ports: [PortValues]

    /// A store for ports `0 ..< portCount`, each keeping up to `parameterCapacity` RPN and NRPN
    /// values.
    public init(portCount: Int, parameterCapacity: Int = 256) {
        ports = (0..<max(portCount, 0)).map {
            PortValues(port: UInt16(truncatingIfNeeded: $0), parameterCapacity: parameterCapacity)
        }
    }

    /// The table of `port` (0 ..< `ports.count`).
    public subscript(port: Int) -> PortValues { ports[port] }

    /// Keeps what `event` sets, in the table of its ``MIDIEvent/port``; an event of a port
    /// beyond the store is ignored. On the direction's own thread only.
    public func record(_ event: MIDIEvent) {
        let port = Int(event.port)
        guard port < ports.count else { return }
        ports[port].record(event)
    }

    /// Forgets every value of `port`, which went away. On the direction's own thread only.
    public func clear(port: Int) {
        guard port >= 0 && port < ports.count else { return }
        ports[port].clear()
    }
}
