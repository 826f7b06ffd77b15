import MIDI
import MIDIOSC
import OSC
import OSCTransport
import Pipeline

/// One configured route as it runs: the pipeline's route (operators, held notes) with the
/// formatters and sockets of its own destinations. A reload keeps a route whose config did not
/// change (with its held notes) and releases the notes of one that did.
final class RouteRuntime: @unchecked Sendable {
    // @unchecked Sendable: built on the starting thread, then used only by the pipeline thread
    // (or by the reloading thread while the pipeline thread is paused).

    let config: RouteConfig
    /// The ALSA port numbers of the route's inputs, part of its identity across reloads.
    let inputPorts: [UInt8]
    let route: Route
    let destinations: [DestinationConfig]
    // `let`s, not `var`s: the pipeline thread reads them per event, and a class `var` would
    // pay a dynamic exclusivity check each time. A reload that re-resolves to new addresses
    // makes a new runtime around the same route instead (`refreshed()`).
    let formatters: [OSCEventFormatter]
    let sender: UDPSender
    let resolved: [ResolvedOSCDestination]

    init(
        config: RouteConfig, inputPorts: [UInt8], portNames: [String], sysexStore: SysExStore
    ) throws(BridgeError) {
        self.config = config
        self.inputPorts = inputPorts
        var builder = RouteBuilder(inputPorts: inputPorts)
        route = builder.build(config)
        destinations = builder.destinations
        formatters = destinations.map {
            OSCEventFormatter(
                scheme: $0.resolvedScheme, portNames: portNames, sysex: sysexStore, mappings: $0.mappings)
        }
        resolved = try Bridge.resolve(destinations)
        sender = try Self.sender(resolved)
    }

    private init(keeping old: RouteRuntime, resolved: [ResolvedOSCDestination]) throws(BridgeError) {
        config = old.config
        inputPorts = old.inputPorts
        route = old.route
        destinations = old.destinations
        formatters = old.formatters
        self.resolved = resolved
        sender = try Self.sender(resolved)
    }

    /// Resolves the destinations' names again: this runtime if every address is the same, else
    /// a new one with new sockets around the same route (its held notes stay).
    func refreshed() throws(BridgeError) -> RouteRuntime {
        let now = try Bridge.resolve(destinations)
        return now == resolved ? self : try RouteRuntime(keeping: self, resolved: now)
    }

    /// Sends a note-off for every note this route holds, to its own destinations.
    func releaseAll(packet: UnsafeMutableRawBufferPointer) {
        route.releaseAll { event, destination in
            send(event, to: destination, packet: packet)
        }
        sender.flush()
    }

    /// Formats `event` for `destination` into `packet` and queues it; false if the scheme does
    /// not send this kind (or it did not fit).
    @inline(__always)
    @discardableResult
    func send(_ event: MIDIEvent, to destination: Int, packet: UnsafeMutableRawBufferPointer) -> Bool {
        let size = formatters[destination].write(event, into: packet)
        guard size > 0 else { return false }
        sender.queue(UnsafeRawBufferPointer(rebasing: packet[0..<size]), to: destination)
        return true
    }

    private static func sender(_ resolved: [ResolvedOSCDestination]) throws(BridgeError) -> UDPSender {
        do {
            return try UDPSender(destinations: resolved)
        } catch {
            throw .network(error.description)
        }
    }
}
