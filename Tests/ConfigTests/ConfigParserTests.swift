import Config
import Endpoints
import Foundation
import MIDI
import Testing

/// Broken configs are refused with the key path of the mistake and what was expected.
@Suite struct ConfigErrorTests {
    static let route = "routes: [{ destinations: [{ host: \"127.0.0.1\", port: 57120 }] }]"
    static let input = "inputs: [{ name: \"in\" }]"

    static let cases: [(String, String)] = [
        (
            "{ \(input), routes: [{ destinations: [{ host: \"a\", port: 57120 }] }, { destinations: [{ host: \"b\", port: 70000 }] }] }",
            "routes[1].destinations[0].port: expected 1-65535, found 70000"
        ),
        (
            "{ \(input), routes: [{ destinations: [{ host: \"a\", port: 0 }] }] }",
            "routes[0].destinations[0].port: expected 1-65535, found 0"
        ),
        (
            "{ \(input), routes: [{ destinations: [{ host: \"a\", port: \"57120\" }] }] }",
            "routes[0].destinations[0].port: expected an integer, found \"57120\""
        ),
        (
            "{ \(input), routes: [{ destinations: [{ port: 57120 }] }] }",
            "routes[0].destinations[0].host: required key is missing"
        ),
        (
            "{ \(input), routes: [{ destinations: [{ host: \"\", port: 57120 }] }] }",
            "routes[0].destinations[0].host: expected a non-empty string"
        ),
        (
            "{ \(input), routes: [{ destinations: [{ host: \"a\", port: 1, scheme: \"m2o\" }] }] }",
            "routes[0].destinations[0].scheme: unknown scheme 'm2o'; expected one of default, osmid, touchosc"
        ),
        (
            "{ \(input), routes: [{ destinations: [{ host: \"a\", port: 1, recovery: \"yes\" }] }] }",
            "routes[0].destinations[0].recovery: unknown recovery 'yes'; expected true, false, 'held-notes' or 'note-offs'"
        ),
        (
            "{ \(input), routes: [{ destinations: [{ host: \"a\", port: 1, latency: 6000 }] }] }",
            "routes[0].destinations[0].latency: expected 0-5000, found 6000"
        ),
        (
            "{ \(input), routes: [{ destinations: [{ host: \"a\", port: 1, protocol: \"sctp\" }] }] }",
            "routes[0].destinations[0].protocol: unknown protocol 'sctp'; expected udp or tcp"
        ),
        (
            "{ \(input), routes: [{ destinations: [{ host: \"a\", port: 1, framing: \"slip\" }] }] }",
            "routes[0].destinations[0].framing: 'framing' is for TCP destinations (protocol: \"tcp\")"
        ),
        (
            "{ \(input), routes: [{ destinations: [{ host: \"a\", port: 1, protocol: \"tcp\", framing: \"cobs\" }] }] }",
            "routes[0].destinations[0].framing: unknown framing 'cobs'; expected 'length' (OSC 1.0: liblo, SuperCollider) or 'slip' (OSC 1.1: python-osc, TouchOSC)"
        ),
        (
            "{ \(input), routes: [{ destinations: [{ host: \"a\", port: 1, protocol: \"tcp\", broadcast: true }] }] }",
            "routes[0].destinations[0].broadcast: 'broadcast' is for UDP destinations; TCP connects to one host"
        ),
        (
            "{ \(input), routes: [{ destinations: [{ host: \"a\", port: 1, protocol: \"tcp\", queue: 0 }] }] }",
            "routes[0].destinations[0].queue: expected 1-65536, found 0"
        ),
        (
            "{ \(input), routes: [{ destinations: [{ host: \"a\", port: 1, recovery: 1 }] }] }",
            "routes[0].destinations[0].recovery: expected true, false, 'held-notes' or 'note-offs', found 1"
        ),
        (
            "{ \(input), routes: [{ operators: [{ tranpose: 12 }], destinations: [{ host: \"a\", port: 1 }] }] }",
            "routes[0].operators[0].tranpose: unknown key; did you mean 'transpose'?"
        ),
        (
            "{ \(input), routes: [{ operators: [{ transpose: 200 }], destinations: [{ host: \"a\", port: 1 }] }] }",
            "routes[0].operators[0].transpose: expected -127-127, found 200"
        ),
        (
            "{ \(input), routes: [{ operators: [{ transpose: 12, channels: [1] }], destinations: [{ host: \"a\", port: 1 }] }] }",
            "routes[0].operators[0]: expected an object with one operator key, such as { transpose: 12 }"
        ),
        (
            "{ \(input), routes: [{ operators: [{ channels: [0] }], destinations: [{ host: \"a\", port: 1 }] }] }",
            "routes[0].operators[0].channels[0]: expected 1-16, found 0"
        ),
        (
            "{ \(input), routes: [{ operators: [{ notes: \"C5..C2\" }], destinations: [{ host: \"a\", port: 1 }] }] }",
            "routes[0].operators[0].notes: the range C5..C2 is empty: its low note is above its high"
        ),
        (
            "{ \(input), routes: [{ operators: [{ notes: \"H2..C5\" }], destinations: [{ host: \"a\", port: 1 }] }] }",
            "routes[0].operators[0].notes: 'H2' is not a note (C-1..G9, F#3, Bb2 or 0-127)"
        ),
        (
            "{ \(input), routes: [{ operators: [{ types: [\"note\"] }], destinations: [{ host: \"a\", port: 1 }] }] }",
            "routes[0].operators[0].types[0]: unknown event type 'note'; expected one of note_off, note_on, poly_pressure, control_change, program_change, channel_pressure, pitch_bend, control_change14, rpn, nrpn, mtc_quarter_frame, song_position, song_select, tune_request, clock, start, continue, stop, active_sensing, reset, sysex, notes, realtime, system"
        ),
        (
            "{ \(input), routes: [{ operators: [{ not: { transpose: 1 } }], destinations: [{ host: \"a\", port: 1 }] }] }",
            "routes[0].operators[0].not.transpose: 'not' takes a filter (types, channels, notes, velocities, controllers, ports)"
        ),
        (
            "{ \(input), routes: [{ operators: [{ velocity: { min: 100, max: 20 } }], destinations: [{ host: \"a\", port: 1 }] }] }",
            "routes[0].operators[0].velocity: min (100) is above max (20)"
        ),
        (
            "{ \(input), routes: [{ operators: [{ velocity: {} }], destinations: [{ host: \"a\", port: 1 }] }] }",
            "routes[0].operators[0].velocity: expected one or more of fixed, scale, offset, gamma, min, max"
        ),
        (
            "{ \(input), routes: [{ operators: [{ channelMap: { \"17\": 1 } }], destinations: [{ host: \"a\", port: 1 }] }] }",
            "routes[0].operators[0].channelMap.17: the key '17' is not 1-16"
        ),
        (
            "{ \(input), routes: [{ operators: [{ valueMap: { controller: 1, in: [0, 0], out: [0, 127] } }], destinations: [{ host: \"a\", port: 1 }] }] }",
            "routes[0].operators[0].valueMap.in: the two ends are equal"
        ),
        (
            "{ \(input), routes: [{ operators: [{ valueMap: { of: \"pitch_bend\", in: [-9000, 8191], out: [0, 1] } }], destinations: [{ host: \"a\", port: 1 }] }] }",
            "routes[0].operators[0].valueMap.in[0]: expected -8192-8191, found -9000"
        ),
        (
            "{ \(input), routes: [{ operators: [{ throttle: { perSecond: 0 } }], destinations: [{ host: \"a\", port: 1 }] }] }",
            "routes[0].operators[0].throttle.perSecond: expected 0.1-10000, found 0"
        ),
        (
            "{ \(input), routes: [{ operators: [{ noteOff: \"off\" }], destinations: [{ host: \"a\", port: 1 }] }] }",
            "routes[0].operators[0].noteOff: expected \"note_off\" or \"note_on_zero\", found \"off\""
        ),
        (
            "{ \(input), routes: [{ from: [\"keys\"], destinations: [{ host: \"a\", port: 1 }] }] }",
            "routes[0].from[0]: no input port named 'keys'; inputs are 'in'"
        ),
        (
            "{ \(input), routes: [{ operators: [] }] }",
            "routes[0]: a route needs destinations (or a split or fork)"
        ),
        ("{ \(route) }", "inputs: routes need at least one input port"),
        ("{ inputs: [{ name: \"in\" }, { name: \"in\" }] }", "inputs[1].name: the port name 'in' is used twice"),
        (
            "{ inputs: [{ name: \"in\", from: [\"/[/\"] }] }",
            "inputs[0].from[0]: '/[/' is not a valid regular expression: expected custom character class members; "
                + PortSpecParseError.acceptedForms
        ),
        (
            "{ inputs: [{ name: \"in\", from: \"999:0\" }] }",
            "inputs[0].from: '999:0': 999 is not a client or port number (0-255); " + PortSpecParseError.acceptedForms
        ),
        ("{ inputs: [{ name: \"in\", form: [\"*\"] }] }", "inputs[0].form: unknown key; did you mean 'from'?"),
        ("{ client: \"\" }", "client: expected a non-empty string"),
        ("{ middleC: 7 }", "middleC: expected 3-5, found 7"),
        ("{ ring: { capacity: 1 } }", "ring.capacity: expected 16-1048576, found 1"),
        (
            "{ realtime: { priority: 0 } }",
            "realtime.priority: expected a SCHED_FIFO priority 1-99 (default 4; `realtime: false` for normal priority), found 0"
        ),
        (
            "{ realtime: { priority: 100 } }",
            "realtime.priority: expected a SCHED_FIFO priority 1-99 (default 4; `realtime: false` for normal priority), found 100"
        ),
        ("{ realtime: \"fifo\" }", "realtime: expected true, false or { priority: 1-99 }, found \"fifo\""),
        ("{ realtime: { priorty: 40 } }", "realtime.priorty: unknown key; did you mean 'priority'?"),
        (
            "{ realtime: { cpu: true } }",
            "realtime.cpu: expected \"auto\" (one CPU when a destination is on this machine, the default), false (any CPU) or a CPU number 0-1023, found true"
        ),
        (
            "{ realtime: { cpu: 1.5 } }",
            "realtime.cpu: expected \"auto\" (one CPU when a destination is on this machine, the default), false (any CPU) or a CPU number 0-1023, found 1.5"
        ),
        ("{ routs: [] }", "routs: unknown key; did you mean 'routes'?"),
        ("[1, 2]", "expected an object, found an array"),
        ("{ inputs: [{ name: \"in\" }, }", "not valid JSON5 at line 1, column 28: expected a value, found '}'"),
        ("", "not valid JSON5 at line 1, column 1: the text ends where a value should be"),
        (
            "{ \(input), routes: [{ destinations: [{ host: \"a\", port: 1, messages: { note_on: { address: \"synth/on\" } } }] }] }",
            "routes[0].destinations[0].messages.note_on.address: an OSC address starts with '/'"
        ),
        (
            "{ \(input), routes: [{ split: [{ operators: [] }], destinations: [{ host: \"a\", port: 1 }] }] }",
            "routes[0].split[0].notes: required key is missing"
        ),
    ]

    @Test(arguments: cases)
    func brokenConfigIsRefusedWithPathAndExpectation(text: String, message: String) {
        #expect(throws: ConfigError.self) { try ConfigParser.parse(Data(text.utf8)) }
        do {
            _ = try ConfigParser.parse(Data(text.utf8))
        } catch {
            #expect(error.description == message)
        }
    }

    @Test func thereAreAtLeastTwentyBrokenConfigs() {
        #expect(Self.cases.count >= 20)
    }
}

/// The shipped default and every example parse, and mean what their comments say.
@Suite struct ShippedConfigTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    static var shippedFiles: [String] {
        let examples = repository.appendingPathComponent("Config/examples")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: examples.path)) ?? []
        return ["Config/aseqosc.json5"]
            + names.filter { $0.hasSuffix(".json5") }.sorted().map { "Config/examples/\($0)" }
    }

    @Test func everyShippedConfigIsValid() throws {
        #expect(Self.shippedFiles.count >= 5)
        for file in Self.shippedFiles {
            #expect(throws: Never.self, "\(file)") {
                try ConfigParser.load(path: Self.repository.appendingPathComponent(file).path)
            }
        }
    }

    @Test func defaultConfigSendsEverythingFromHardwareToSuperCollider() throws {
        let config = try ConfigParser.load(path: Self.repository.appendingPathComponent("Config/aseqosc.json5").path)
        #expect(config.clientName == "aseqosc")
        #expect(config.inputs.map(\.name) == ["in"])
        #expect(config.inputs[0].from.map(\.description) == ["*"])
        #expect(config.routes.count == 1)
        #expect(config.routes[0].chain.operators.isEmpty)
        #expect(config.routes[0].chain.destinations.map(\.endpoint) == ["127.0.0.1:57120"])
        #expect(config.routes[0].chain.destinations.map(\.scheme) == ["default"])
    }

    /// The status page shows the config in force: the text that was parsed, not the file as
    /// it is on disk later.
    @Test func aLoadedConfigKeepsTheTextItWasParsedFrom() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("aseqosc-text-\(getpid()).json5")
        defer { try? FileManager.default.removeItem(at: file) }
        let text = "// in force\n{ \(ConfigErrorTests.input), \(ConfigErrorTests.route) }\n"
        try text.write(to: file, atomically: true, encoding: .utf8)
        let config = try ConfigParser.load(path: file.path)
        try "{ client: \"edited\" }".write(to: file, atomically: true, encoding: .utf8)
        #expect(config.text == text)
    }

    @Test func splitExampleSendsEachHalfOfTheKeyboardToItsOwnHost() throws {
        let config = try ConfigParser.load(
            path: Self.repository.appendingPathComponent("Config/examples/split-keyboard-two-synths.json5").path)
        let branches = config.routes[0].chain.branches
        #expect(branches.map(\.notes) == [0...59, 60...127])
        #expect(branches.map { $0.chain.destinations.map(\.host) } == [["192.0.2.10"], ["192.0.2.11"]])
        #expect(branches[1].chain.operators == [.transpose(12), .channelMap([0: 1])])
    }

    @Test func json5CommentsTrailingCommasAndHexAreAccepted() throws {
        let text = """
            // a comment
            { client: 'studio', /* block */ middleC: 3, sysex: { maxBytes: 0x100, }, }
            """
        let config = try ConfigParser.parse(Data(text.utf8))
        #expect(config.clientName == "studio")
        #expect(config.middleCOctave == 3)
        #expect(config.sysexCapacity == 256)
    }

    /// `ring` sized the queue between two threads that are now one: a config with it still
    /// loads, and says it is ignored.
    @Test func theRetiredRingKeyLoadsAndIsNamedAsIgnored() throws {
        let config = try ConfigParser.parse(Data("{ ring: { capacity: 4096 } }".utf8))
        #expect(config.retiredKeys.count == 1)
        #expect(config.retiredKeys.first?.hasPrefix("ring: ignored") == true)
        #expect(try ConfigParser.parse(Data("{}".utf8)).retiredKeys.isEmpty)
    }

    @Test func aTCPDestinationHasItsFramingQueueAndNoteOnTimeout() throws {
        let text = """
            { inputs: [{ name: "in" }], routes: [{ destinations: [
              { host: "a", port: 1 },
              { host: "b", port: 2, protocol: "tcp" },
              { host: "c", port: 3, protocol: "tcp", framing: "slip", queue: 64, noteOnTimeout: 250 },
            ] }] }
            """
        let destinations = try ConfigParser.parse(Data(text.utf8)).routes[0].chain.destinations
        #expect(destinations[0].tcp == nil)
        #expect(
            destinations[1].tcp
                == TCPOptions(framing: .lengthPrefixed, queueCapacity: 1_024, noteOnTimeoutMilliseconds: 1_000))
        #expect(destinations[2].tcp == TCPOptions(framing: .slip, queueCapacity: 64, noteOnTimeoutMilliseconds: 250))
    }

    @Test func noteNamesFollowTheConfiguredMiddleC() throws {
        let text = """
            { middleC: 3, inputs: [{ name: "in" }],
              routes: [{ operators: [{ notes: "C3..C4" }], destinations: [{ host: "a", port: 1 }] }] }
            """
        let config = try ConfigParser.parse(Data(text.utf8))
        #expect(config.routes[0].chain.operators == [.notes(60...72, inverted: false)])
    }
}

/// `realtime`: on by default, below the audio servers' threads; `false` or an object.
@Suite struct RealtimeConfigTests {
    @Test(arguments: [
        ("{}", RealtimeConfig(priority: 4, lockMemory: true)),
        ("{ realtime: true }", RealtimeConfig(priority: 4, lockMemory: true)),
        ("{ realtime: false }", RealtimeConfig(priority: nil)),
        ("{ realtime: { priority: 70 } }", RealtimeConfig(priority: 70, lockMemory: true)),
        ("{ realtime: { priority: 1, lockMemory: false } }", RealtimeConfig(priority: 1, lockMemory: false)),
        ("{ realtime: { priority: 99 } }", RealtimeConfig(priority: 99, lockMemory: true)),
        ("{ realtime: { cpu: \"auto\" } }", RealtimeConfig(priority: 4, cpu: .auto)),
        ("{ realtime: { cpu: false } }", RealtimeConfig(priority: 4, cpu: .any)),
        ("{ realtime: { cpu: 3, priority: 10 } }", RealtimeConfig(priority: 10, cpu: .fixed(3))),
    ])
    func realtimeKeyGivesPriorityAndMemoryLocking(text: String, expected: RealtimeConfig) throws {
        #expect(try ConfigParser.parse(Data(text.utf8)).realtime == expected)
    }
}
