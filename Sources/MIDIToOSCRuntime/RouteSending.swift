import BridgeSession
import Config
import Endpoints
import EventTap
import MIDI
import MIDIToOSC
import OSC
import OSCTransport
import Pipeline
import Platform
import Recovery
import Storage
import Synchronization

/// How a route's events leave: each destination's formatter, its socket or TCP link
/// (``OSCSender``), the bundles of the destinations that send time-tagged, and the status
/// page's copy of what goes out. A reload that re-resolves a destination to a new address makes
/// a new one (``resolvedAgain(_:realtime:)``), with new sockets around the same formatters.
package final class RouteSending: @unchecked Sendable {
    // @unchecked Sendable: built on the starting thread, then used only by the input thread
    // (or by the reloading thread while the input thread is paused).

    let formatters: [OSCEventFormatter]
    package let sender: OSCSender
    /// The addresses the destinations resolved to, by destination index.
    let resolved: [ResolvedOSCDestination]
    /// Each destination's `latency` in nanoseconds (nil: plain messages), by destination index.
    let latencies: [UInt64?]
    /// Whether any destination sends time-tagged bundles: the per-output check of a route without.
    let hasTimeTags: Bool
    /// The bundles the time-tagged destinations are filling in this batch.
    let bundles: OpenBundles
    /// Whether any destination is TCP, whose queue needs to know a note-on from a note-off.
    let hasTCP: Bool
    /// Where what the route sends is copied for the status page's monitor (nil: nowhere).
    let tap: EventTap?
    /// How the monitor's entries name this route, for as long as it runs (kept by a re-resolve).
    package let monitorID: Int
    private static let monitorIDs = Atomic<Int>(0)

    /// Formatters for `destinations` (their input ports named by `portNames`), and their
    /// sockets and links, opened for the addresses they resolved to; TCP links' threads take
    /// their scheduling from `realtime`.
    convenience init(
        destinations: [DestinationConfig], portNames: [String], sysexStore: SysExStore,
        realtime: RealtimeScheduler?, tap: EventTap?
    ) throws(BridgeError) {
        let formatters = destinations.map {
            OSCEventFormatter(
                scheme: $0.resolvedScheme, portNames: portNames, sysex: sysexStore, mappings: $0.mappings)
        }
        try self.init(
            destinations: destinations, formatters: formatters, resolved: try Self.resolve(destinations),
            realtime: realtime, tap: tap, monitorID: Self.monitorIDs.add(1, ordering: .relaxed).newValue & 0xFFFF)
    }

    private init(
        destinations: [DestinationConfig], formatters: [OSCEventFormatter], resolved: [ResolvedOSCDestination],
        realtime: RealtimeScheduler?, tap: EventTap?, monitorID: Int
    ) throws(BridgeError) {
        self.formatters = formatters
        self.resolved = resolved
        self.tap = tap
        self.monitorID = monitorID
        latencies = destinations.map { $0.latencyMilliseconds.map { UInt64($0) * 1_000_000 } }
        hasTimeTags = latencies.contains { $0 != nil }
        hasTCP = destinations.contains { $0.tcp != nil }
        do {
            var setup: (@Sendable () -> Void)? = nil
            if let realtime { setup = { realtime.enter(.tcp) } }
            sender = try OSCSender(destinations: resolved, linkThreadSetup: setup)
        } catch {
            throw .sender(error)
        }
        bundles = OpenBundles(destinations: hasTimeTags ? destinations.count : 0, capacity: sender.slotSize)
    }

    /// The same formatters and monitor name with sockets for `resolved`, the new addresses of
    /// `destinations`.
    func resolvedAgain(
        _ resolved: [ResolvedOSCDestination], destinations: [DestinationConfig], realtime: RealtimeScheduler?
    ) throws(BridgeError) -> RouteSending {
        try RouteSending(
            destinations: destinations, formatters: formatters, resolved: resolved, realtime: realtime, tap: tap,
            monitorID: monitorID)
    }

    /// Formats `event` for `destination` and queues it; false if the scheme does not send this
    /// kind (or it did not fit).
    @inline(__always)
    func send(_ event: MIDIEvent, to destination: Int, packet: UnsafeMutableRawBufferPointer) -> Bool {
        if hasTimeTags, let latency = latencies[destination] {
            return sendBundled(event, to: destination, ahead: latency, packet: packet)
        }
        let formatter = formatters[destination]
        // Straight into the sender's batch; only a message too long for a batch slot (a long
        // SysEx) takes the detour through `packet` and is sent on its own.
        let slot = sender.nextSlot()
        let size = formatter.write(event, into: slot)
        if size > 0 {
            if let tap, tap.isOn {
                tap.record(
                    .oscOut, index: monitorID, destination: destination, event,
                    message: UnsafeRawBufferPointer(rebasing: slot[0..<size]))
            }
            sender.commit(size, to: destination, kind: packetKind(event))
            return true
        }
        let long = formatter.write(event, into: packet)
        guard long > 0 else { return false }
        if let tap, tap.isOn {
            tap.record(
                .oscOut, index: monitorID, destination: destination, event,
                message: UnsafeRawBufferPointer(rebasing: packet[0..<long]))
        }
        sender.queue(UnsafeRawBufferPointer(rebasing: packet[0..<long]), to: destination, kind: packetKind(event))
        return true
    }

    /// What a TCP destination's queue needs to know of `event`: `.other` for a route without one.
    @inline(__always)
    private func packetKind(_ event: MIDIEvent) -> OSCPacketKind {
        guard hasTCP else { return .other }
        if event.endsNote { return .noteOff(channel: event.channel, note: event.note) }
        if event.kind == .noteOn { return .noteOn(channel: event.channel, note: event.note) }
        return .other
    }

    /// ``send(_:to:packet:)`` to a destination with `latency`: the message in a bundle whose
    /// time tag is when the event was read, in wall-clock time, plus `ahead`, shared by the
    /// other events of the same read to the same destination (``OpenBundles``).
    @inline(never)
    private func sendBundled(
        _ event: MIDIEvent, to destination: Int, ahead: UInt64, packet: UnsafeMutableRawBufferPointer
    ) -> Bool {
        // Inside a bundle the monitor shows the event, not the message.
        if let tap, tap.isOn { tap.record(.oscOut, index: monitorID, destination: destination, event) }
        let formatter = formatters[destination]
        let tag = OSCTimeTag.wallClock(atMonotonic: event.timestamp, ahead: ahead)
        let appended = bundles.append(
            to: destination, stamp: event.timestamp, tag: tag, kind: packetKind(event), sender: sender
        ) { room in formatter.write(event, into: room) }
        if appended { return true }
        // Too long for a bundle slot (a long SysEx): on its own, after the bundle before it.
        bundles.close(destination, onto: sender)
        let header = OSCTimeTag.bundleHeaderSize
        let long = formatter.write(event, into: UnsafeMutableRawBufferPointer(rebasing: packet[header...]))
        guard long > 0 else { return false }
        tag.writeBundleHeader(elementSize: long, into: packet.baseAddress!)
        sender.queue(
            UnsafeRawBufferPointer(rebasing: packet[0..<header + long]), to: destination, kind: packetKind(event))
        return true
    }

    /// Queues recovery's `message` for `destination`, after the events before it.
    func queue(_ message: HeldNotesMessage, to destination: Int) {
        if hasTimeTags { bundles.close(destination, onto: sender) }
        let size = message.write(into: sender.nextSlot())
        if size > 0 { sender.commit(size, to: destination) }
    }

    /// Sends what is queued: the open bundles, then every destination's packets.
    @inline(__always)
    func flush() {
        if hasTimeTags { bundles.closeAll(onto: sender) }
        sender.flush()
    }

    /// Runs a note and a controller through a copy of `chain` and formats every kind for every
    /// destination into scratch memory, sending nothing: the first event a user plays then
    /// finds the code and tables in memory instead of waiting for page faults.
    func warmUp(_ chain: Chain) {
        let scratch = FixedBytes(count: 1_536)
        var copy = chain.withFreshState()
        let events: [MIDIEvent] = [
            .noteOn(channel: 0, note: 60, velocity: 100), .controlChange(channel: 0, controller: 1, value: 64),
            .noteOff(channel: 0, note: 60),
        ]
        for event in events {
            copy.process(event, now: 0) { output, destination in
                if destination < formatters.count { _ = formatters[destination].write(output, into: scratch.bytes) }
            }
        }
        for formatter in formatters {
            for kind in MIDIEventKind.allCases where kind != .sysex {
                _ = formatter.write(MIDIEvent(kind, channel: 0), into: scratch.bytes)
            }
        }
    }

    /// Resolves every destination's host name (at start, and again on reload); a service's
    /// address comes from its ``ServiceTarget``.
    package static func resolve(_ destinations: [DestinationConfig]) throws(BridgeError) -> [ResolvedOSCDestination] {
        var resolved: [ResolvedOSCDestination] = []
        for config in destinations {
            do {
                if let service = config.service {
                    var destination = OSCDestination(service: service)
                    destination.tcp = config.tcp
                    resolved.append(try destination.resolve())
                    continue
                }
                var destination = try OSCDestination(
                    host: config.host, port: config.port, broadcast: config.broadcast,
                    multicastTTL: config.multicastTTL.map { UInt8($0) }, multicastInterface: config.multicastInterface,
                    multicastLoopback: config.multicastLoop)
                destination.tcp = config.tcp
                resolved.append(try destination.resolve())
            } catch {
                throw .destination(endpoint: config.endpoint, error)
            }
        }
        return resolved
    }
}
