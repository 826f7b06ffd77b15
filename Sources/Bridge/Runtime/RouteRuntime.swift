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
    let formatters: [OSCEventFormatter]
    var sender: UDPSender
    var resolved: [ResolvedOSCDestination]

    init(
        config: RouteConfig, inputPorts: [UInt8], portNames: [String], sysexStore: SysExStore
    ) throws(BridgeError) {
        self.config = config
        self.inputPorts = inputPorts
        var builder = RouteBuilder(inputPorts: inputPorts)
        route = builder.build(config)
        destinations = builder.destinations
        formatters = destinations.map {
            OSCEventFormatter(scheme: $0.resolvedScheme, portNames: portNames, sysex: sysexStore)
        }
        resolved = try Bridge.resolve(destinations)
        sender = try Self.sender(resolved)
    }

    /// Resolves the destinations' names again; new sockets only if an address changed.
    func refreshDestinations() throws(BridgeError) {
        let now = try Bridge.resolve(destinations)
        guard now != resolved else { return }
        sender = try Self.sender(now)
        resolved = now
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
