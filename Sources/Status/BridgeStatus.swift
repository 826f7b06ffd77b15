import ALSASequencer
import MIDI
import MIDIToOSCRuntime
import OSC
import OSCToMIDIRuntime
import OSCTransport
import Pipeline
import Platform

/// What `aseqosc status` shows: bindings, routes and destinations with their counters, the
/// ring, drops and uptime. Encoded as JSON on the control socket.
package struct BridgeStatus: Codable, Sendable, Equatable {
    struct Binding: Codable, Sendable, Equatable {
        /// Our port's name.
        var port: String
        /// `in` (a source bound to our input) or `out` (our output bound to a destination).
        var direction: String
        var spec: String
        /// `client:port name` of each connected port; empty while waiting.
        var connected: [String]
        var waiting: String?
    }

    struct Destination: Codable, Sendable, Equatable {
        var address: String
        var scheme: String
        var packetsSent: Int
        var bytesSent: Int
        /// Send errors by reason (connection refused, buffer full, ...).
        var errors: [String: Int]
        /// The destination's `recovery` (`held-notes`, `note-offs`), nil when off.
        var recovery: String? = nil
        /// What recovery sent: `/aseqosc/held` messages, or note-offs sent again.
        var recoverySent: Int = 0
        /// The destination's `latency` in milliseconds (events sent as time-tagged bundles), nil
        /// for plain messages.
        var latencyMilliseconds: Int? = nil
        /// How long a UDP destination's datagrams have been refused (nothing listens there), in
        /// seconds; nil while they are not.
        var refusedSeconds: Double? = nil
        /// While refused: how long ago the last datagram known to have got through was sent, in
        /// seconds; nil when none is known to have.
        var lastThroughSeconds: Double? = nil
        /// The connection of a TCP destination; nil for UDP.
        var tcp: TCPDestination? = nil
        /// Where the service a destination by service name follows is now (`10.0.0.5:9000`),
        /// or `absent`; nil for a destination with a fixed host.
        var serviceAt: String? = nil
        /// The destination's `sync` triggers (`reconnect, request`), nil when off.
        var sync: String? = nil
        /// Values its replays sent.
        var replayed: Int = 0
    }

    /// A TCP destination's connection and queue.
    struct TCPDestination: Codable, Sendable, Equatable {
        /// `length` (OSC 1.0) or `slip` (OSC 1.1).
        var framing: String
        /// `connecting`, `connected` or `waiting` (to retry after a failure).
        var state: String
        /// Connections made after the first.
        var reconnects: Int
        /// Packets waiting for the connection.
        var queued: Int
        /// Packets dropped from a full queue, by kind (`note_on`, `note_off`, `other`); only
        /// kinds with drops are listed.
        var dropped: [String: Int]
        /// Note-ons that waited past `noteOnTimeout` and were not sent.
        var lateNoteOns: Int
        /// Packets written to a connection that then broke, which may not have arrived.
        var lostInBrokenConnections: Int
        /// Why the last connect failed or the last connection ended.
        var lastError: String?

        package init(_ counters: TCPLinkCounters, framing: OSCStreamFraming) {
            self.framing = framing == .slip ? "slip" : "length"
            state = counters.state.description
            reconnects = counters.reconnects
            queued = counters.queued
            dropped = [
                "note_on": counters.droppedNoteOns, "note_off": counters.droppedNoteOffs,
                "other": counters.droppedOthers,
            ].filter { $0.value > 0 }
            lateNoteOns = counters.staleNoteOns
            lostInBrokenConnections = counters.lostInBrokenConnections
            lastError = counters.lastError
        }

        /// `connected, 1 reconnect, 0 queued, no drops`, and what was dropped or went wrong.
        var text: String {
            var state = self.state
            if state != "connected", let lastError { state += " (\(lastError))" }
            var parts = [state, "\(reconnects) reconnect\(reconnects == 1 ? "" : "s")", "\(queued) queued"]
            var drops = dropped.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
            if lateNoteOns > 0 { drops.append("late note_on \(lateNoteOns)") }
            if lostInBrokenConnections > 0 { drops.append("in broken connections \(lostInBrokenConnections)") }
            parts.append(drops.isEmpty ? "no drops" : "dropped " + drops.joined(separator: ", "))
            return parts.joined(separator: ", ")
        }
    }

    package struct Route: Codable, Sendable, Equatable {
        var name: String
        var eventsIn: Int
        var passed: Int
        var droppedByFilter: Int
        var droppedOutOfRange: Int
        var throttled: Int
        var destinations: [Destination]
    }

    /// The OSC -> MIDI side: what arrived, what was dropped and why, and each output port.
    package struct OSCInput: Codable, Sendable, Equatable {
        /// `osc.udp://host:port`, `osc.tcp://host:port`, or both joined by " and ".
        package var listen: String
        /// Packets received from allowed senders (UDP datagrams and TCP frames), and their bytes.
        package var packets: Int
        var bytes: Int
        /// OSC messages read (a bundle counts its messages), and those that became MIDI.
        package var messages: Int
        package var translated: Int
        /// Malformed input by reason: `oversized` datagrams, packets that are not OSC by decoder
        /// error (`unterminatedString`, `nestingTooDeep`, ...), and `argumentsDoNotFit` for
        /// messages at a known address with the wrong arguments. Only reasons seen are listed.
        var malformed: [String: Int]
        var unknownAddresses: Int
        /// Datagrams from senders outside the allow-list.
        var notAllowed: Int
        /// Bundles scheduled on the sequencer queue, and bundles whose time had passed.
        package var scheduled: Int
        var late: Int
        /// SysEx refused because `osc.sysex` is off, and SysEx with no room in the store.
        var sysexDisabled: Int
        var sysexDropped: Int
        var outputs: [OSCOutputPort]
        /// The TCP listener's counters, when `osc.protocol` includes TCP.
        package var tcp: OSCTCPInput?
        /// Note recovery from senders that announce their held notes, once one has.
        var recovery: OSCRecovery? = nil
        /// `/aseqosc/sync` requests read.
        var syncRequests: Int = 0
        /// Values the output ports' replays sent.
        var replayed: Int = 0
    }

    /// The OSC input's side of note recovery (docs/OSC.md, "Recovery").
    package struct OSCRecovery: Codable, Sendable, Equatable {
        /// Senders followed now; `/aseqosc/held` messages read, and those that did not fit.
        var senders: Int
        var messages: Int
        var malformed: Int
        /// Note-offs sent for notes a held-notes message did not list (their note-off was lost).
        var repaired: Int
        /// Note-offs sent because their sender was silent for twice its period, and such senders.
        var releasedSilent: Int
        var sendersLost: Int
        /// Senders not followed because 16 already were.
        var sendersRefused: Int
        /// Senders heard anew and asked for their last values (`/aseqosc/sync` sent back).
        var sendersAsked: Int = 0
    }

    /// The OSC input's TCP clients.
    package struct OSCTCPInput: Codable, Sendable, Equatable {
        /// Packets handed on (also counted in ``OSCInput/packets``), and their bytes.
        package var packets: Int
        var bytes: Int
        /// Connections taken, open now, and ended (by the client, or for a framing error).
        package var accepted: Int
        package var open: Int
        package var closed: Int
        /// Connections reset at once: the client is not in the allow-list, or
        /// `osc.maxConnections` were open and none had been idle for a second.
        package var refusedNotAllowed: Int
        package var refusedTooMany: Int
        /// Connections closed to make room (also in ``closed``): idle ones that gave way to a new
        /// client when every slot was taken, and ones stuck inside a packet for longer than
        /// `osc.frameTimeout`.
        package var evictedIdle: Int
        package var partialFrameTimeouts: Int
        /// Connections closed because their stream broke its framing, by reason (`oversized`,
        /// `badLength`, `badEscape`, `unknownFraming`, `truncated`). Only reasons seen are listed.
        package var framingErrors: [String: Int]
    }

    /// One ALSA output port of the OSC -> MIDI side.
    struct OSCOutputPort: Codable, Sendable, Equatable {
        var name: String
        /// Events written (now or scheduled).
        var sent: Int
        /// Events dropped because the port's queue was full (never a needed note-off).
        var droppedQueueFull: Int
        /// Note-offs dropped from a full queue because no note-on of theirs had gone out.
        var droppedRedundantNoteOffs: Int
        /// Note-offs lost with the reserve full too (0 unless something is badly wrong).
        var droppedNoteOffs: Int
        /// Note-offs queued past the capacity, in the reserve kept for them.
        var reservedNoteOffs: Int
        /// Events still waiting when the side stopped, dropped (note-offs excepted).
        var droppedAtStop: Int
        /// Writes the kernel refused.
        var failed: Int
        /// The most events the port's queue has held, and how many it holds before dropping.
        var queueHighWater: Int
        var queueCapacity: Int
        /// Scheduled events that found the kernel's pool full and waited in our scheduled queue
        /// (they leave at their time all the same).
        var scheduledHeld: Int = 0
        /// The most events the scheduled queue has held.
        var scheduledHighWater: Int = 0
        /// Scheduled events a full scheduled queue dropped, by event kind (`note_on`, ...; never
        /// a note-off still needed). Only kinds dropped are listed.
        var droppedScheduled: [String: Int] = [:]
    }

    /// How the event threads are scheduled and whether memory is locked (`realtime` in the config).
    struct Realtime: Codable, Sendable, Equatable {
        /// A running thread's role and how it is scheduled, side by side in one JSON object
        /// (`name`, `policy`, `priority`, `refused`, `cpu`).
        struct Thread: Codable, Sendable, Equatable {
            /// `input`, `osc` or `tcp`.
            var name: String
            var schedule: ThreadSchedule

            private enum CodingKeys: String, CodingKey { case name }

            package init(name: String, schedule: ThreadSchedule) {
                self.name = name
                self.schedule = schedule
            }

            package init(from decoder: any Decoder) throws {
                name = try decoder.container(keyedBy: CodingKeys.self).decode(String.self, forKey: .name)
                schedule = try ThreadSchedule(from: decoder)
            }

            package func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(name, forKey: .name)
                try schedule.encode(to: encoder)
            }
        }

        /// The SCHED_FIFO priority the config asks for; nil with `realtime: false`.
        var requestedPriority: Int?
        /// The threads that are running, in the order input, osc, tcp.
        var threads: [Thread]
        var memoryLocked: Bool
        /// Why locking memory was refused, when it was asked for and refused.
        var memoryRefused: String?

        /// `threads: input fifo/4, osc fifo/4; memory locked`, or with the
        /// reasons: `threads: input other (SCHED_FIFO refused: EPERM), ...; memory not locked (...)`.
        var text: String {
            let threadText = threads.map { "\($0.name) \($0.schedule.text)" }
            let memory =
                if memoryLocked { "memory locked" } else if let memoryRefused {
                    "memory not locked (\(memoryRefused))"
                } else { requestedPriority == nil ? "memory not locked (realtime off)" : "memory not locked" }
            let running = threadText.isEmpty ? "none running" : threadText.joined(separator: ", ")
            return "threads: \(running); \(memory)"
        }
    }

    var version: String
    var client: String
    var uptimeSeconds: Double
    var bindings: [Binding]
    var routes: [Route]
    var eventsIn: Int
    /// Times the kernel dropped the events queued for the input thread (its queue was full).
    var inputOverruns: Int
    /// Notes ended after those overruns, since any of them may have lost its note-off there.
    var notesEndedAfterOverrun: Int
    var sysexDropped: Int
    var unsentEvents: Int
    /// Replay requests refused: too many at once, or within a second of the last replay of the
    /// same destination or output.
    var replaysRefused: Int = 0
    /// The OSC -> MIDI side's counters, when it runs.
    package var oscInput: OSCInput?
    /// The event threads' scheduling, when the bridge reports it.
    var realtime: Realtime? = nil
    /// The TouchOSC Bridge drop-in's client, when `touchoscBridge` is on.
    package var touchOSCBridge: TouchOSCBridge? = nil

    /// The TouchOSC Bridge's client: where its route sends, and how many clients it has had.
    package struct TouchOSCBridge: Codable, Sendable, Equatable {
        /// `IP:PORT` of the latest client; nil before any (its route's packets are then dropped
        /// and counted as `serviceAbsent`).
        var client: String?
        var clientsSeen: Int
        /// How many times the client at the same address was heard anew (a new source port:
        /// the app started again; or back after a silence) and sent the last values again.
        var clientsRenewed: Int

        package init(client: String?, clientsSeen: Int, clientsRenewed: Int) {
            self.client = client
            self.clientsSeen = clientsSeen
            self.clientsRenewed = clientsRenewed
        }

        var text: String {
            "touchosc bridge: " + (client.map { "client \($0)" } ?? "no client yet (its MIDI is dropped and counted)")
                + ", clients seen \(clientsSeen), heard anew \(clientsRenewed)"
        }
    }
}
