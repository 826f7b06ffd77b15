import ALSASequencer
import Foundation
import MIDI
import MIDIOSC
import OSC
import OSCTransport
import Pipeline

/// The composition root: builds the running bridge from a config (ALSA client and ports,
/// bindings, ring, routes, OSC formatters and sockets, threads) and takes it down again.
public final class Bridge: @unchecked Sendable {
    // @unchecked Sendable: started and stopped from one thread (the command's); the parts it
    // owns synchronise their own threads.

    public let config: BridgeConfig
    let log: Logger
    let client: SequencerClient
    let input: MIDIInputSide
    let worker: MIDIToOSCWorker
    let ring: SPSCRing<MIDIEvent>
    let sender: UDPSender
    let destinations: [DestinationConfig]
    let startTime = Date()

    /// Builds everything; nothing runs until ``start()``.
    public init(config: BridgeConfig, log: Logger) throws(BridgeError) {
        self.config = config
        self.log = log
        do {
            client = try SequencerClient(name: config.clientName)
        } catch {
            throw .alsa(error.description)
        }
        ring = SPSCRing(capacity: config.ringCapacity)
        let sysexStore = SysExStore(slots: 16, capacity: config.sysexCapacity)
        let wake = try WakeSignal()

        var builder = RouteBuilder()
        let routes = builder.build(config.routes)
        destinations = builder.destinations
        let portNames = config.inputs.map(\.name)
        var formatters: [OSCEventFormatter] = []
        for (index, destination) in destinations.enumerated() {
            formatters.append(
                try Self.formatter(for: destination, portNames: portNames, sysex: sysexStore, index: index))
        }
        do {
            sender = try UDPSender(destinations: destinations.map(Self.transportDestination))
        } catch {
            throw .network(error.description)
        }
        do {
            input = try MIDIInputSide(
                client: client, inputs: config.inputs, ring: ring, sysexStore: sysexStore, wake: wake, log: log)
        } catch {
            throw .alsa(error.description)
        }
        worker = MIDIToOSCWorker(
            ring: ring, routes: routes, formatters: formatters, sender: sender, sysexStore: sysexStore, wake: wake)
    }

    /// Starts the pipeline thread, then the bindings and the input thread.
    public func start() {
        worker.start()
        input.start()
        for (index, destination) in destinations.enumerated() {
            log.info("destination \(index + 1): osc.udp://\(destination.endpoint) scheme \(destination.scheme)")
        }
    }

    /// Stops reading, lets the pipeline finish what is queued, sends every owed note-off, and
    /// flushes: after this returns, nothing is left sounding.
    public func stop() {
        input.stop()
        worker.stop()
    }

    /// Whether the pipeline thread made progress since `last` (for the watchdog).
    public func pipelineProgress() -> UInt64 { worker.progress.load(ordering: .relaxed) }

    /// A one-line status for systemd's `STATUS=`.
    public var statusLine: String {
        let bound = input.bindings.bindings.filter { !$0.connected.isEmpty }.count
        return "\(bound)/\(input.bindings.bindings.count) bindings, \(worker.eventsIn.load(ordering: .relaxed)) events, "
            + "\(ring.drops) dropped"
    }

    static func formatter(
        for destination: DestinationConfig, portNames: [String], sysex: SysExStore, index: Int
    ) throws(BridgeError) -> OSCEventFormatter {
        guard var scheme = OSCScheme.builtIns[destination.scheme] else {
            throw .config(ConfigError(path: "destinations[\(index)]", message: "unknown scheme"))
        }
        if !destination.messages.isEmpty {
            do {
                scheme = try scheme.overriding(destination.messages)
            } catch {
                throw .config(ConfigError(path: "destination \(destination.endpoint)", message: error.description))
            }
        }
        return OSCEventFormatter(scheme: scheme, portNames: portNames, sysex: sysex)
    }

    static func transportDestination(_ config: DestinationConfig) -> OSCDestination {
        OSCDestination(
            host: config.host, port: UInt16(config.port), broadcast: config.broadcast,
            multicastTTL: config.multicastTTL, multicastInterface: config.multicastInterface,
            multicastLoop: config.multicastLoop)
    }
}
