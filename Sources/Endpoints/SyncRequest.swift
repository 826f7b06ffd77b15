/// Whom an `/aseqosc/sync` message arriving at the OSC input asks the last values to be sent
/// again to (docs/OSC.md, "Replay"): the destinations at the sender's own address (a control
/// surface asking for its state), or the destinations, routes and output ports of one name.
package enum SyncRequest: Hashable, Sendable, CustomStringConvertible {
    /// `/aseqosc/sync` with no argument: the destinations whose host is this address.
    case from(IPAddress)
    /// `/aseqosc/sync ,s NAME`: an output port, a route, a destination's service name or its
    /// `host:port`.
    case named(String)

    package var description: String {
        switch self {
        case .from(let address): "from \(address)"
        case .named(let name): "'\(name)'"
        }
    }
}
