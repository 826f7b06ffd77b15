import Config
import EventTap
import JSON
import MIDI
import OSC
import OSCQuery

/// What the status page shows and does (docs/CONFIG.md, "Status page"), for the OSCQuery
/// server's thread: the daemon's status with the config file and the routes in words, the
/// events the bridge's taps copied out, and the actions.
final class StatusPage: StatusPageSource {
    private let bridge: Bridge
    private let configPath: String
    /// `aseqosc status --json`, as the daemon answers it.
    private let status: @Sendable () -> JSONValue
    /// A reload, as SIGHUP does it: the new status line, or why it was refused.
    private let reload: @Sendable () -> Result<String, StatusPageRefusal>
    /// The most monitor lines one call gives; the rest are counted as dropped.
    static let linesPerCall = 200
    /// The most of the config in force the page shows, in bytes.
    static let configBytes = 65_536

    init(
        bridge: Bridge, configPath: String, status: @escaping @Sendable () -> JSONValue,
        reload: @escaping @Sendable () -> Result<String, StatusPageRefusal>
    ) {
        self.bridge = bridge
        self.configPath = configPath
        self.status = status
        self.reload = reload
    }

    func statusJSON() -> String {
        guard case .object(var fields) = status() else { return "{}" }
        let config = bridge.currentConfig
        let routes: [JSONValue] = config.routes.map { route in
            .object([
                "name": .string(route.name),
                "operators": .array(route.operatorSummary(middleCOctave: config.middleCOctave).map { .string($0) }),
            ])
        }
        let text = String(decoding: config.text.utf8.prefix(Self.configBytes), as: UTF8.self)
        fields["page"] = .object([
            "configPath": .string(configPath), "config": .string(text), "routes": .array(routes),
            "actions": .array((config.oscInput?.pageActions ?? []).map { .string($0) }),
        ])
        return JSONWriter.text(.object(fields))
    }

    func setMonitoring(_ on: Bool) {
        bridge.input.tap.set(on: on)
        bridge.oscTap.set(on: on)
    }

    func takeMonitorLines(_ body: (_ line: String, _ read: UInt64) -> Void) -> UInt64 {
        var dropped: UInt64 = 0
        var shown = 0
        // An entry's event carries when it was read (MIDIEvent.timestamp): the MIDI event's
        // read, or, for what an OSC message made, the message's.
        var read: UInt64 = 0
        func line(_ text: String) {
            guard shown < Self.linesPerCall else {
                dropped += 1
                return
            }
            body(text, read)
            shown += 1
        }
        let routes = Dictionary(
            bridge.routeSnapshot.map { ($0.sending.monitorID, $0) }, uniquingKeysWith: { first, _ in first })
        dropped += bridge.input.tap.drain { entry, bytes in
            read = entry.event.timestamp
            switch entry.kind {
            case .midiIn:
                let port = bridge.input.portName(UInt8(truncatingIfNeeded: entry.index)) ?? "port \(entry.index)"
                line("in \(port): \(entry.event)")
            case .oscOut:
                let runtime = routes[Int(entry.index)]
                let destination = Int(entry.destination)
                let to = runtime.flatMap { runtime in
                    runtime.resolved.indices.contains(destination)
                        ? runtime.resolved[destination].destination.description : nil
                }
                let message = Self.message(bytes) ?? "\(entry.event) (in a bundle)"
                line("out \(runtime?.config.name ?? "route") -> \(to ?? "?"): \(message)")
            default:
                break
            }
        }
        let outputs = bridge.oscInputSnapshot?.outputNames ?? []
        dropped += bridge.oscTap.drain { entry, bytes in
            read = entry.event.timestamp
            switch entry.kind {
            case .oscIn:
                line("in osc: \(Self.message(bytes) ?? "(\(bytes.count) bytes, not an OSC message)")")
            case .midiOut:
                let index = Int(entry.index)
                line("out \(outputs.indices.contains(index) ? outputs[index] : "output \(index)"): \(entry.event)")
            default:
                break
            }
        }
        return dropped
    }

    /// An OSC message as a line, `/midi/keys/1/note_on ,ii i:60 i:100`; nil when the bytes are
    /// not one (cut at the tap's length, a long message may not be).
    private static func message(_ bytes: UnsafeRawBufferPointer) -> String? {
        guard !bytes.isEmpty, case .message(let message)? = try? OSCPacket.decode(Array(bytes)) else { return nil }
        return message.description
    }

    func perform(_ action: StatusPageAction) -> Result<String, StatusPageRefusal> {
        switch action {
        case .reload:
            return reload()
        case .panic:
            bridge.panic()
            return .success("every output sent sustain off and All Notes Off, every route's held notes ended")
        case .sync:
            let count = bridge.replayAll()
            guard count > 0 else { return .failure(StatusPageRefusal("nothing has sync in the config")) }
            return .success("\(count) destination\(count == 1 ? "" : "s") and output\(count == 1 ? "" : "s") replaying")
        }
    }
}

extension Bridge {
    /// Ends every note: the routes' held notes get their note-offs (on the input thread), and
    /// every output port, on every channel, sustain off and All Notes Off (on the OSC thread).
    func panic() {
        runner.replaySignal.panic()
        oscInputSnapshot?.panic()
    }

    /// Asks every destination and output port with `sync` for a replay of its last values;
    /// returns how many there are.
    func replayAll() -> Int {
        var count = 0
        for runtime in routeSnapshot {
            for destination in runtime.destinations.indices where !runtime.destinations[destination].sync.isEmpty {
                runtime.wantReplay(destination)
                count += 1
            }
        }
        if count > 0 { runner.replaySignal.raise() }
        return count + (oscInputSnapshot?.replayAll() ?? 0)
    }
}
