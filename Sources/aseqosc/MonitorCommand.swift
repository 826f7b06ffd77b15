import ALSASequencer
import Endpoints
import Glibc
import MIDI
import Platform

/// `aseqosc monitor`: prints every event from the given sources, like aseqdump, and keeps
/// printing across unplug and replug because it binds by spec.
struct MonitorCommand: Command {
    static let name = "monitor"
    static let abstract = "Print MIDI events from ALSA sources as they arrive"
    static let help = """
        usage: aseqosc monitor [--json] [PORTSPEC...]

        Subscribes to the given sources and prints one line per event:
          20:0   ch 1  note-on  C4 (60)  vel 100
        Without a PORTSPEC it listens to every readable port (hardware and software). A source
        that disappears is waited for and bound again when it returns; notes it held are shown
        released. Connection changes go to stderr. Stop with Ctrl-C.

        PORTSPEC: 20:0, 20, "Client Name", "Client Name:Port Name", "Client Name:1",
                  /regular expression/ over "client:port" names, or * (every hardware source)

        options:
          --json    one JSON object per line: source, type, channel (1-16) and the data
        """

    var json: Bool
    var specs: [PortSpec]

    package init(arguments: inout ArgumentScanner) throws(UsageError) {
        json = arguments.flag("--json")
        specs = []
        for word in try arguments.positionals() {
            do {
                specs.append(try PortSpec(parsing: word))
            } catch {
                throw UsageError(error.description)
            }
        }
    }

    func run() -> ExitCode {
        // Before anything else, so no thread takes the signals asynchronously.
        let signals = SignalSet([SIGINT, SIGTERM])
        let sysexStore = SysExStore(slots: 16, capacity: 1 << 20)
        let client: SequencerClient
        let reader: SequencerReader
        let bindings: PortBindings
        do {
            client = try SequencerClient(name: "aseqosc-monitor")
            let input = try client.createPort(name: "monitor", direction: .input)
            _ = try client.subscribeToAnnouncements()
            reader = try SequencerReader(client: client, sysexStore: sysexStore)
            bindings = PortBindings(client: client)
            if specs.isEmpty {
                bindings.bind(try! PortSpec(parsing: "/.*/"), to: input, direction: .source)
            }
            for spec in specs { bindings.bind(spec, to: input, direction: .source) }
        } catch {
            printError("\(error)")
            return .unavailable
        }
        let signalWaiter = Self.stop(reader, on: signals)
        defer { withExtendedLifetime(signalWaiter) {} }
        for change in bindings.reconcile() { printError("monitor: \(change)") }
        for binding in bindings.bindings where binding.connected.isEmpty {
            printError("monitor: '\(binding.spec)' is waiting: \(binding.waitingReason ?? "no port yet")")
        }

        do {
            try reader.run { decoded in
                switch decoded {
                case .midi(let event, let source):
                    let line =
                        json ? Self.jsonLine(event, source, sysexStore) : Self.textLine(event, source, sysexStore)
                    writeAll(line + "\n", to: STDOUT_FILENO)
                    if event.kind == .sysex { sysexStore.release(event.sysex) }
                case .announcement(let announcement) where PortBindings.affectsBindings(announcement):
                    for change in bindings.reconcile() { printError("monitor: \(change)") }
                default:
                    break
                }
            }
        } catch {
            printError(error.description)
            return .ioError
        }
        if reader.overruns > 0 { printError("monitor: \(reader.overruns) input overruns (events lost)") }
        return .ok
    }

    /// Ctrl-C and SIGTERM end the monitor cleanly (exit 0), as aseqdump does.
    static func stop(_ reader: SequencerReader, on signals: SignalSet) -> SystemThread {
        SystemThread(name: "aseqosc-signals") {
            _ = signals.wait()
            reader.stop()
        }
    }

    static func textLine(_ event: MIDIEvent, _ source: PortAddress, _ store: SysExStore) -> String {
        var line = source.description.padding(7) + event.description
        if event.kind == .sysex {
            line += "  " + store.withBytes(event.sysex) { Self.hex($0, limit: 16) }
        }
        return line
    }

    static func jsonLine(_ event: MIDIEvent, _ source: PortAddress, _ store: SysExStore) -> String {
        var fields: [(String, String)] = [
            ("source", "\"\(source)\""), ("type", "\"\(event.kind)\""),
        ]
        if event.kind.isChannelMessage { fields.append(("channel", "\(Int(event.channel) + 1)")) }
        switch event.kind {
        case .noteOn, .noteOff, .polyPressure:
            fields += [
                ("note", "\(event.data1)"), (event.kind == .polyPressure ? "pressure" : "velocity", "\(event.data2)"),
            ]
        case .controlChange:
            fields += [("controller", "\(event.data1)"), ("value", "\(event.data2)")]
        case .programChange: fields.append(("program", "\(event.data1)"))
        case .channelPressure: fields.append(("pressure", "\(event.data1)"))
        case .pitchBend, .songPosition: fields.append(("value", "\(event.value)"))
        case .controlChange14, .rpn, .nrpn:
            fields += [("parameter", "\(event.parameter)"), ("value", "\(event.value)")]
        case .mtcQuarterFrame, .songSelect: fields.append(("value", "\(event.data1)"))
        case .sysex:
            fields.append(("data", "\"" + store.withBytes(event.sysex) { Self.hex($0, limit: .max) } + "\""))
        default: break
        }
        fields.append(("time", Self.seconds(event.timestamp)))
        return "{" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
    }

    /// Nanoseconds as seconds with six decimals: `12.000345`.
    static func seconds(_ nanoseconds: UInt64) -> String {
        let micro = String(nanoseconds / 1000 % 1_000_000)
        return "\(nanoseconds / 1_000_000_000)." + String(repeating: "0", count: 6 - micro.count) + micro
    }

    static func hex(_ bytes: UnsafeRawBufferPointer, limit: Int) -> String {
        var text = bytes.prefix(limit).map { String($0, radix: 16, uppercase: true).leftPadded(2) }
            .joined(separator: " ")
        if bytes.count > limit { text += " ..." }
        return text
    }
}

extension String {
    /// The string right-aligned with zeros to `width` characters.
    func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
