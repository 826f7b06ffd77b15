import Config
import Foundation
import MIDI
import OSCMapping
import Testing

/// Mappings both ways: the top-level named sets, `osc.mappings` and a destination's `mappings`
/// and `unmatched`, and every mistake named with its key path.
@Suite struct MappingConfigTests {
    static let fader = """
        { address: "/fader/{n}", args: "f", type: "control_change",
          controller: "{n}", value: { from: "{0}", in: [0, 1], out: [0, 127] } }
        """
    static let xy = """
        { address: "/xy", args: "ff", type: "pitch_bend", value: { from: "{0}", in: [0, 1], out: [-8192, 8191] } }
        """

    /// A config with one input, `outputs`, the top-level `mappings`, and one route to `destination`.
    static func parse(
        sets: String = "{ layout: [\(fader)] }", destination: String, osc: String? = nil,
        outputs: String = "[{ name: \"synth\" }]"
    ) throws -> BridgeConfig {
        let text = """
            { inputs: [{ name: "keys" }], outputs: \(outputs), mappings: \(sets),
              routes: [{ destinations: [\(destination)] }]\(osc.map { ", osc: \($0)" } ?? "") }
            """
        return try ConfigParser.parse(Data(text.utf8))
    }

    static func destination(_ config: BridgeConfig) throws -> DestinationConfig {
        try #require(config.routes.first?.chain.destinations.first)
    }

    @Test func oneSetServesTheOSCInputAndADestination() throws {
        let config = try Self.parse(
            destination: "{ host: \"127.0.0.1\", port: 9000, mappings: \"layout\" }",
            osc: "{ mappings: [\"layout\", \(Self.xy)] }")
        let destination = try Self.destination(config)
        let osc = try #require(config.oscInput)
        #expect(destination.mappings.map(\.address.description) == ["/fader/{n}"])
        #expect(osc.mappings.map(\.address.description) == ["/fader/{n}", "/xy"])
        #expect(destination.mappings[0] == osc.mappings[0])
        // Without a scheme, only what the mappings match is sent.
        #expect(destination.unmatched == .drop)
        #expect(destination.resolvedScheme == .none)
    }

    @Test func aSchemeOrUnmatchedSchemeSendsTheRest() throws {
        let named = try Self.destination(
            Self.parse(destination: "{ host: \"h\", port: 9000, scheme: \"touchosc\", mappings: \"layout\" }"))
        #expect(named.unmatched == .scheme)
        #expect(named.resolvedScheme == .touchOSC)
        let explicit = try Self.destination(
            Self.parse(destination: "{ host: \"h\", port: 9000, mappings: [\(Self.fader)], unmatched: \"scheme\" }"))
        #expect(explicit.unmatched == .scheme)
        #expect(explicit.resolvedScheme == .default)
        #expect(explicit.mappings.count == 1)
        let plain = try Self.destination(Self.parse(destination: "{ host: \"h\", port: 9000 }"))
        #expect(plain.mappings.isEmpty)
        #expect(plain.resolvedScheme == .default)
    }

    @Test func aSetNoDestinationSendsMayHoldOneWayRules() throws {
        let config = try Self.parse(
            sets: "{ layout: [\(Self.fader)], pads: [\(Self.xy)] }",
            destination: "{ host: \"h\", port: 9000, mappings: \"layout\" }", osc: "{ mappings: \"pads\" }")
        #expect(config.oscInput?.mappings.count == 1)
    }

    @Test func theSummaryShowsMappingsAndWhatBecomesOfTheRest() throws {
        let config = try Self.parse(
            destination: """
                { host: "127.0.0.1", port: 9000, mappings: "layout" },
                { host: "127.0.0.1", port: 9001, scheme: "osmid", mappings: ["layout", "layout"] }
                """)
        let lines = config.summary.split(separator: "\n").map(String.init)
        #expect(lines.contains("  -> osc.udp://127.0.0.1:9000 1 mapping, unmatched events dropped"))
        #expect(lines.contains("  -> osc.udp://127.0.0.1:9001 2 mappings, unmatched events by scheme osmid"))
        // What `aseqosc status` shows a destination sends.
        #expect(config.routes[0].chain.destinations.map(\.sends) == ["1 mapping", "2 mappings + osmid"])
    }

    static let errors: [(sets: String, destination: String, osc: String?, message: String)] = [
        (
            "{ layout: [\(fader)] }", "{ host: \"h\", port: 1, mappings: \"layuot\" }", nil,
            "routes[0].destinations[0].mappings: no mapping set named 'layuot'; the top-level mappings are 'layout'"
        ),
        (
            "{}", "{ host: \"h\", port: 1, mappings: [\"layout\"] }", nil,
            "routes[0].destinations[0].mappings[0]: no mapping set named 'layout'; define it in the top-level mappings: { layout: [ ... ] }"
        ),
        (
            "{ layout: [\(xy)] }", "{ host: \"h\", port: 1, mappings: \"layout\" }", nil,
            "mappings.layout[0].args: argument {1} ('f') is set by no field, so MIDI cannot fill it in (used by routes[0].destinations[0].mappings)"
        ),
        (
            "{}",
            "{ host: \"h\", port: 1, mappings: [{ address: \"/p\", type: \"program_change\", program: \"{0}\" }] }",
            nil,
            "routes[0].destinations[0].mappings[0].args: required to send MIDI as this mapping's OSC message: the argument types, e.g. \"f\""
        ),
        (
            "{}",
            "{ host: \"h\", port: 1, mappings: [{ address: \"/*/p\", args: \"i\", type: \"program_change\", program: \"{0}\" }] }",
            nil,
            "routes[0].destinations[0].mappings[0].address: '/*/p': a '*' part matches any address, so MIDI cannot be sent to it; name the part"
        ),
        (
            "{}",
            "{ host: \"h\", port: 1, mappings: [{ address: \"/p/{n}/{m}\", args: \"\", type: \"program_change\", program: \"{n}\" }] }",
            nil,
            "routes[0].destinations[0].mappings[0].address: '/p/{n}/{m}': no field sets {m}, so MIDI cannot be sent to this address"
        ),
        (
            "{}",
            "{ host: \"h\", port: 1, mappings: [{ address: \"/p\", args: \"is\", type: \"program_change\", program: \"{0}\" }] }",
            nil,
            "routes[0].destinations[0].mappings[0].args: argument {1} is 's'; a mapping sent as OSC carries numbers (i f h d) and T F N I only"
        ),
        (
            "{}", "{ host: \"h\", port: 1, unmatched: \"drop\" }", nil,
            "routes[0].destinations[0].unmatched: only a destination with mappings has unmatched events"
        ),
        (
            "{ layout: [\(fader)] }", "{ host: \"h\", port: 1, mappings: \"layout\", unmatched: \"send\" }", nil,
            "routes[0].destinations[0].unmatched: expected \"scheme\" (send them as the scheme does) or \"drop\""
        ),
        (
            "{ layout: [\(fader)] }",
            "{ host: \"h\", port: 1, scheme: \"osmid\", mappings: \"layout\", unmatched: \"drop\" }", nil,
            "routes[0].destinations[0].scheme: has no effect: unmatched: \"drop\" sends only what the mappings match"
        ),
        (
            "{ layout: [\(fader)] }", "{ host: \"h\", port: 1, mappings: 3 }", nil,
            "routes[0].destinations[0].mappings: expected a list of mappings, or the name of a set in the top-level mappings, found 3"
        ),
        (
            "[\(fader)]", "{ host: \"h\", port: 1 }", nil,
            "mappings: expected an object of named mapping lists, e.g. { touchosc: [{ address, args, type, ... }] }, found an array"
        ),
        (
            "{ layout: [{ address: \"/a\", type: \"cc\" }] }", "{ host: \"h\", port: 1 }", nil,
            "mappings.layout[0].type: unknown event type 'cc'; expected one of note_off, note_on, poly_pressure, control_change, program_change, channel_pressure, pitch_bend, control_change14, rpn, nrpn, mtc_quarter_frame, song_position, song_select, tune_request, clock, start, continue, stop, active_sensing, reset"
        ),
        (
            "{ layout: [\(fader)] }", "{ host: \"h\", port: 1 }", "{ mappings: \"layout\" }",
            "mappings.layout[0].output: required with more than one output port: an output's name, or \"*\" for all (used by osc.mappings)"
        ),
    ]

    @Test(arguments: errors)
    func mistakesAreNamedWithTheirKeyPath(_ test: (sets: String, destination: String, osc: String?, message: String)) {
        do {
            _ = try Self.parse(
                sets: test.sets, destination: test.destination, osc: test.osc,
                outputs: "[{ name: \"synth\" }, { name: \"drums\" }]")
            Issue.record("accepted: \(test.destination)")
        } catch {
            #expect("\(error)" == test.message)
        }
    }

    @Test func aMappingsOutputNeedsOutputPorts() {
        do {
            _ = try ConfigParser.parse(
                Data(
                    """
                    { inputs: [{ name: "keys" }],
                      mappings: { layout: [{ address: "/p", args: "i", output: "synth", type: "program_change", program: "{0}" }] },
                      routes: [{ destinations: [{ host: "h", port: 1, mappings: "layout" }] }] }
                    """.utf8))
            Issue.record("accepted")
        } catch {
            #expect("\(error)" == "mappings.layout[0].output: no output port named 'synth': the config has no outputs")
        }
    }
}
