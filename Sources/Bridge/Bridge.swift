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
        let formatters = destinations.map {
            OSCEventFormatter(scheme: $0.resolvedScheme, portNames: portNames, sysex: sysexStore)
        }
        do {
            sender = try UDPSender(destinations: try Self.resolve(destinations))
        } catch let error as BridgeError {
            throw error
        } catch {
            throw .network("\(error)")
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

    /// Resolves every destination's host name (at start, and again on reload).
    static func resolve(_ destinations: [DestinationConfig]) throws(BridgeError) -> [ResolvedOSCDestination] {
        var resolved: [ResolvedOSCDestination] = []
        for config in destinations {
            do {
                let destination = try OSCDestination(
                    host: config.host, port: config.port, broadcast: config.broadcast,
                    multicastTTL: config.multicastTTL.map { UInt8($0) }, multicastInterface: config.multicastInterface,
                    multicastLoopback: config.multicastLoop)
                resolved.append(try destination.resolve())
            } catch {
                throw .network("destination \(config.endpoint): \(error)")
            }
        }
        return resolved
    }
}
