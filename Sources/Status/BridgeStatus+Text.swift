import ALSASequencer
import MIDI
import MIDIToOSCRuntime
import OSC
import OSCToMIDIRuntime
import OSCTransport
import Pipeline
import Platform

/// What `aseqosc status` prints for people, and the OSC input's counters in one log line.
extension BridgeStatus {
    /// The text `aseqosc status` prints for people.
    package var text: String {
        var lines = [
            "aseqosc \(version), client '\(client)', up \(Self.duration(uptimeSeconds))",
            "events in \(eventsIn); input overruns \(inputOverruns) (notes ended \(notesEndedAfterOverrun)); "
                + "SysEx dropped \(sysexDropped); not sent by scheme \(unsentEvents); replays refused \(replaysRefused)",
        ]
        if let realtime { lines.append(realtime.text) }
        lines.append("bindings:")
        for binding in bindings {
            let arrow = binding.direction == "in" ? "<-" : "->"
            let target =
                binding.connected.isEmpty
                ? "waiting (\(binding.waiting ?? "no port"))" : binding.connected.joined(separator: ", ")
            lines.append("  \(binding.port) \(arrow) '\(binding.spec)': \(target)")
        }
        if let oscInput { lines += oscInput.lines }
        if let touchOSCBridge { lines.append(touchOSCBridge.text) }
        lines.append("routes:")
        for route in routes {
            lines.append(
                "  \(route.name): in \(route.eventsIn), passed \(route.passed), filtered \(route.droppedByFilter), "
                    + "out of range \(route.droppedOutOfRange), throttled \(route.throttled)")
            for destination in route.destinations {
                let errors =
                    destination.errors.isEmpty
                    ? "no errors"
                    : destination.errors.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(
                        separator: ", ")
                let recovery = destination.recovery.map { mode in
                    mode == "note-offs"
                        ? "; note-offs repeated \(destination.recoverySent)"
                        : "; held-notes messages \(destination.recoverySent)"
                }
                let latency = destination.latencyMilliseconds.map { "; time-tagged +\($0) ms" } ?? ""
                let sync = destination.sync.map { "; sync on \($0): \(destination.replayed) values replayed" } ?? ""
                let location = destination.serviceAt.map { $0 == "absent" ? ", not on the network" : " at \($0)" } ?? ""
                if let tcp = destination.tcp {
                    lines.append(
                        "    -> tcp \(destination.address)\(location) (\(destination.scheme), \(tcp.framing) framing): "
                            + "\(destination.packetsSent) packets, \(destination.bytesSent) bytes, \(tcp.text)"
                            + "\(recovery ?? "")\(latency)\(sync)")
                    continue
                }
                lines.append(
                    "    -> \(destination.address)\(location) (\(destination.scheme)): \(destination.receiverText)"
                        + "\(destination.packetsSent) packets, "
                        + "\(destination.bytesSent) bytes, \(errors)\(recovery ?? "")\(latency)\(sync)")
            }
        }
        return lines.joined(separator: "\n")
    }

    static func duration(_ seconds: Double) -> String {
        let whole = Int(seconds)
        return whole >= 3600
            ? "\(whole / 3600)h \(whole / 60 % 60)m" : whole >= 60 ? "\(whole / 60)m \(whole % 60)s" : "\(whole)s"
    }
}

extension BridgeStatus.OSCInput {
    /// Malformed datagrams (not OSC, or oversized), all reasons together.
    var malformedPackets: Int {
        malformed.filter { $0.key != "argumentsDoNotFit" }.values.reduce(0, +)
    }

    /// The counters in one line, for the log when the side stops.
    package var summary: String {
        let outputs = outputs
        func total(_ field: KeyPath<BridgeStatus.OSCOutputPort, Int>) -> Int {
            outputs.reduce(0) { $0 + $1[keyPath: field] }
        }
        return [
            // "datagrams" as ever when only UDP listens; "packets" when TCP frames count too.
            tcp == nil ? "\(packets) datagrams" : "\(packets) packets", "\(bytes) bytes", "\(messages) messages",
            "\(translated) translated",
            "\(total(\.sent)) MIDI events sent", "\(scheduled) bundles scheduled",
            "\(late) late; dropped: \(notAllowed) not allowed", "\(malformedPackets) malformed packets",
            "\(malformed["argumentsDoNotFit"] ?? 0) malformed messages", "\(unknownAddresses) unknown addresses",
            "\(sysexDisabled) SysEx disabled", "\(sysexDropped) SysEx without room",
            "\(total(\.droppedQueueFull)) output queue full", "\(total(\.droppedAtStop)) at stop",
            "\(total(\.failed)) output failed",
            "\(outputs.reduce(0) { $0 + $1.droppedScheduled.values.reduce(0, +) }) scheduled dropped",
        ].joined(separator: ", ") + (tcp.map { "; TCP " + $0.text } ?? "")
    }

    /// The section of `aseqosc status` for people: a label column, then the counters.
    var lines: [String] {
        let malformedText =
            malformed.isEmpty
            ? "none" : malformed.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        var rows: [(String, String)] = [
            ("received", "\(packets) packets, \(bytes) bytes, \(messages) messages, \(translated) translated"),
            ("bundles", "\(scheduled) scheduled, \(late) late"),
            ("dropped", "\(notAllowed) not allowed, \(unknownAddresses) unknown address"),
            ("malformed", malformedText),
            ("SysEx", "\(sysexDisabled) refused (osc.sysex off), \(sysexDropped) without room"),
            ("sync", "\(syncRequests) /aseqosc/sync requests; \(replayed) values replayed to output ports"),
        ]
        if let tcp { rows.insert(("TCP", tcp.text), at: 1) }
        if let recovery {
            rows.append(
                (
                    "recovery",
                    "\(recovery.senders) senders followed, \(recovery.messages) held-notes messages "
                        + "(\(recovery.malformed) malformed); note-offs: \(recovery.repaired) repaired, "
                        + "\(recovery.releasedSilent) for \(recovery.sendersLost) senders gone silent; "
                        + "\(recovery.sendersRefused) senders refused (16 followed); "
                        + "\(recovery.sendersAsked) heard anew and asked for their last values"
                ))
        }
        for output in outputs {
            rows.append(
                (
                    "-> \(output.name)",
                    "\(output.sent) sent, queue \(output.queueHighWater)/\(output.queueCapacity) high water, "
                        + "dropped \(output.droppedQueueFull) queue full, \(output.droppedRedundantNoteOffs) "
                        + "redundant note-offs, \(output.droppedNoteOffs) note-offs, \(output.droppedAtStop) at stop; "
                        + "\(output.reservedNoteOffs) note-offs in reserve, \(output.failed) failed; scheduled "
                        + "\(output.scheduledHeld) waited for room (high water \(output.scheduledHighWater)), dropped "
                        + (output.droppedScheduled.isEmpty
                            ? "none"
                            : output.droppedScheduled.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
                                .joined(separator: ", "))
                ))
        }
        let width = rows.map(\.0.count).max() ?? 0
        return ["osc input \(listen):"]
            + rows.map { "  " + $0.0 + String(repeating: " ", count: width - $0.0.count) + "  " + $0.1 }
    }
}

extension BridgeStatus.OSCTCPInput {
    /// `9 packets, 3 connections accepted, ...` for the status section and the log line.
    var text: String {
        let framing =
            framingErrors.isEmpty
            ? "none" : framingErrors.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        return "\(packets) packets, \(bytes) bytes; connections \(accepted) accepted, \(open) open, \(closed) closed, "
            + "refused \(refusedNotAllowed) not allowed, \(refusedTooMany) too many; "
            + "closed \(evictedIdle) idle to make room, \(partialFrameTimeouts) partial frame timeouts; "
            + "framing errors: \(framing)"
    }
}

extension BridgeStatus.Destination {
    /// `no receiver (refused for 12s, last got through 3m ago); ` while a UDP destination's
    /// datagrams are refused, else nothing.
    var receiverText: String {
        guard let refused = refusedSeconds else { return "" }
        let through =
            lastThroughSeconds.map { "last got through \(BridgeStatus.duration($0)) ago" } ?? "nothing got through"
        return "no receiver (refused for \(BridgeStatus.duration(refused)), \(through)); "
    }
}
