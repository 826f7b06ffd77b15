import Config
import Foundation
import MIDI
import OSCMapping
import Testing

/// The `osc` key: defaults, what it sets up, and every mistake named with its key path.
@Suite struct OSCInputConfigTests {
    static let outputs = "outputs: [{ name: \"synth\", to: \"20:0\" }, { name: \"drums\" }]"

    static func parse(_ osc: String?, outputs: String = outputs) throws -> BridgeConfig {
        let text = "{ \(outputs)" + (osc.map { ", osc: \($0)" } ?? "") + " }"
        return try ConfigParser.parse(Data(text.utf8))
    }

    @Test func outputsAloneListenOnLoopbackAtO2MsPort() throws {
        let osc = try #require(try Self.parse(nil).oscInput)
        #expect(osc.endpoint == "127.0.0.1:57200")
        #expect(osc.allow.isEmpty)
        #expect(!osc.sysex)
        #expect(osc.sysexBytesPerSecond == 3125)
        #expect(osc.families == Set(OSCAddressFamily.allCases))
        #expect(osc.transports == [.udp])
        #expect(try Self.parse(nil, outputs: "inputs: []").oscInput == nil)
        #expect(try Self.parse("{ enabled: false }").oscInput == nil)
    }

    @Test func everyKeyIsRead() throws {
        let osc = try #require(
            try Self.parse(
                """
                { listen: "[::]:9000", allow: ["192.168.1.0/24", "fd00::/8"], sysex: true, sysexBytesPerSecond: 0,
                  accept: ["osmid"], operators: [{ transpose: 12 }, { ports: ["drums"] }],
                  mappings: [{ address: "/fader/{n}", args: "f", output: "drums", type: "control_change",
                               channel: 10, controller: "{n}", value: { from: "{0}", in: [0, 1], out: [0, 127] } }] }
                """
            ).oscInput)
        #expect(osc.endpoint == "[::]:9000")
        #expect(osc.allow.map(\.description) == ["192.168.1.0/24", "fd00::/8"])
        #expect(osc.sysex && osc.sysexBytesPerSecond == 0)
        #expect(osc.families == [.osmid])
        #expect(osc.operators == [.transpose(12), .ports([1], inverted: false)])
        let rule = try #require(osc.mappings.first)
        #expect(rule.address.description == "/fader/{n}")
        #expect(rule.argumentTypes == Array("f".utf8))
        #expect(rule.output == .port(1))
        #expect(rule.kind == .controlChange)
        #expect(
            rule.values == [
                OSCMappingValue(.constant(10)), OSCMappingValue(.capture(0)),
                OSCMappingValue(.argument(0), scale: OSCLinearScale(input: (0, 1), output: (0, 127))),
            ])
    }

    static let errors: [(String, String)] = [
        (
            "{ listen: \"0.0.0.0:57200\" }",
            "osc.allow: required when listening on 0.0.0.0:57200, which is not a loopback address: list the networks that may send, e.g. [\"192.168.1.0/24\"]"
        ),
        (
            "{ listen: \"localhost:57200\" }",
            "osc.listen: 'localhost' is not a numeric IPv4 or IPv6 address; expected a numeric address and port, e.g. \"127.0.0.1:57200\", \"0.0.0.0:57200\" or \"[::]:57200\""
        ),
        ("{ listen: \"127.0.0.1:0\" }", "osc.listen: invalid port '0'; ports are 1-65535"),
        (
            "{ listen: \"::1:57200\" }",
            "osc.listen: expected a numeric address and port, e.g. \"127.0.0.1:57200\", \"0.0.0.0:57200\" or \"[::]:57200\""
        ),
        (
            "{ listen: \"0.0.0.0:9000\", allow: [\"10.0.0.0/8\", \"10.0.0.0/33\"] }",
            "osc.allow[1]: '10.0.0.0/33' is not a network: the prefix length must be 0-32"
        ),
        (
            "{ protocol: \"osc.tcp\" }",
            "osc.protocol: unknown protocol 'osc.tcp'; expected \"udp\", \"tcp\" or both, [\"udp\", \"tcp\"]"
        ),
        (
            "{ protocol: [\"udp\", \"TCP\"] }",
            "osc.protocol[1]: unknown protocol 'TCP'; expected \"udp\", \"tcp\" or both, [\"udp\", \"tcp\"]"
        ),
        ("{ protocol: [] }", "osc.protocol: no protocol; expected \"udp\", \"tcp\" or both, [\"udp\", \"tcp\"]"),
        ("{ protocol: 6 }", "osc.protocol: expected a string or an array of strings, found 6"),
        (
            "{ maxConnections: 4 }",
            "osc.maxConnections: applies to TCP only; add \"tcp\" to osc.protocol, e.g. protocol: [\"udp\", \"tcp\"]"
        ),
        ("{ protocol: \"tcp\", maxConnections: 0 }", "osc.maxConnections: expected 1-1024, found 0"),
        ("{ protocol: \"tcp\", maxPacketSize: 16777216 }", "osc.maxPacketSize: expected 64-8388608, found 16777216"),
        (
            "{ protocol: \"udp\", maxPacketSize: 1024 }",
            "osc.maxPacketSize: applies to TCP only; add \"tcp\" to osc.protocol, e.g. protocol: [\"udp\", \"tcp\"]"
        ),
        ("{ protocol: \"tcp\", frameTimeout: 0 }", "osc.frameTimeout: expected 0.01-3600, found 0"),
        (
            "{ frameTimeout: 2 }",
            "osc.frameTimeout: applies to TCP only; add \"tcp\" to osc.protocol, e.g. protocol: [\"udp\", \"tcp\"]"
        ),
        ("{ sysex: \"yes\" }", "osc.sysex: expected true or false, found \"yes\""),
        ("{ sysexBytesPerSecond: -1 }", "osc.sysexBytesPerSecond: expected 0-1000000, found -1"),
        (
            "{ accept: [\"default\", \"m2o\"] }",
            "osc.accept[1]: unknown address family 'm2o'; expected one of default, touchosc, osmid"
        ),
        ("{ alow: [] }", "osc.alow: unknown key; did you mean 'allow'?"),
        ("{ operators: [{ ports: [\"keys\"] }] }", "osc.operators[0].ports[0]: no input port named 'keys'"),
        (
            "{ mappings: [{ address: \"/a\", type: \"cc\" }] }",
            "osc.mappings[0].type: unknown event type 'cc'; expected one of note_off, note_on, poly_pressure, control_change, program_change, channel_pressure, pitch_bend, control_change14, rpn, nrpn, mtc_quarter_frame, song_position, song_select, tune_request, clock, start, continue, stop, active_sensing, reset"
        ),
        ("{ mappings: [{ address: \"/a\", output: \"synth\" }] }", "osc.mappings[0].type: required key is missing"),
        (
            "{ mappings: [{ address: \"/a\", output: \"synth\", type: \"note_on\", note: 60 }] }",
            "osc.mappings[0].velocity: required key is missing"
        ),
        (
            "{ mappings: [{ address: \"/a\", type: \"clock\" }] }",
            "osc.mappings[0].output: required with more than one output port: an output's name, or \"*\" for all"
        ),
        (
            "{ mappings: [{ address: \"/a\", type: \"clock\", output: \"piano\" }] }",
            "osc.mappings[0].output: no output port named 'piano'; outputs are 'synth', 'drums', or \"*\" for all"
        ),
        (
            "{ mappings: [{ address: \"/a\", type: \"clock\", output: \"*\", note: 1 }] }",
            "osc.mappings[0].note: unknown key; expected one of address, args, output, type"
        ),
        (
            "{ mappings: [{ address: \"/a/{n\", type: \"clock\", output: \"*\" }] }",
            "osc.mappings[0].address: address '/a/{n': '{' is never closed"
        ),
        (
            "{ mappings: [{ address: \"/a\", args: \"fx\", type: \"clock\", output: \"*\" }] }",
            "osc.mappings[0].args: unknown type tag 'x'; numbers are i, f, h or d (any of them accepts any number), and s, b, T, F, N, I, m must match exactly"
        ),
        (
            "{ mappings: [{ address: \"/a/{n}\", args: \"f\", type: \"program_change\", output: \"*\", program: \"{m}\" }] }",
            "osc.mappings[0].program: '{m}' is not a capture of the address '/a/{n}'; its captures are {n}"
        ),
        (
            "{ mappings: [{ address: \"/a\", args: \"f\", type: \"program_change\", output: \"*\", program: \"{1}\" }] }",
            "osc.mappings[0].program: argument {1} does not exist: args is 'f'"
        ),
        (
            "{ mappings: [{ address: \"/a\", args: \"s\", type: \"program_change\", output: \"*\", program: \"{0}\" }] }",
            "osc.mappings[0].program: argument {0} is not a number in args 's'"
        ),
        (
            "{ mappings: [{ address: \"/a\", type: \"program_change\", output: \"*\", program: \"0\" }] }",
            "osc.mappings[0].program: expected \"{name}\" (a capture of the address) or \"{0}\" (the first argument)"
        ),
        (
            "{ mappings: [{ address: \"/a\", type: \"program_change\", output: \"*\", program: { from: \"{0}\", in: [1, 1], out: [0, 127] } }] }",
            "osc.mappings[0].program.in: the two ends are equal"
        ),
        (
            "{ mappings: [{ address: \"/a\", type: \"program_change\", output: \"*\", program: { from: \"{0}\", in: [0, 1] } }] }",
            "osc.mappings[0].program.out: required key is missing"
        ),
        (
            "{ mappings: [{ address: \"/a\", type: \"program_change\", output: \"*\", program: true }] }",
            "osc.mappings[0].program: expected a number, \"{name}\" (a capture of the address), \"{0}\" (an argument) or { from, in, out }, found true"
        ),
    ]

    @Test(arguments: errors)
    func mistakesAreNamedWithTheirKeyPath(_ osc: String, _ message: String) {
        do {
            _ = try Self.parse(osc)
            Issue.record("accepted: \(osc)")
        } catch {
            #expect("\(error)" == message)
        }
    }

    @Test func anOSCSectionNeedsOutputs() {
        do {
            _ = try Self.parse("{ sysex: true }", outputs: "inputs: []")
            Issue.record("accepted")
        } catch {
            #expect(
                "\(error)"
                    == "osc: OSC input needs at least one output port (outputs: [{ name, to }]), or enabled: false")
        }
    }

    @Test func aNonLoopbackListenerWithAnAllowListIsFine() throws {
        let osc = try #require(try Self.parse("{ listen: \"0.0.0.0:57200\", allow: \"10.0.0.0/8\" }").oscInput)
        #expect(osc.allow.map(\.description) == ["10.0.0.0/8"])
    }

    @Test func theSummaryShowsTheInput() throws {
        let config = try Self.parse("{ listen: \"0.0.0.0:9000\", allow: \"10.0.0.0/8\", sysex: true }")
        #expect(
            config.summary.split(separator: "\n").contains(
                "osc input udp 0.0.0.0:9000, from 10.0.0.0/8, accepting default, osmid, touchosc, SysEx on, OSCQuery on port 9001"
            ))
        let both = try Self.parse("{ protocol: [\"tcp\", \"udp\"], maxConnections: 4, maxPacketSize: 1024 }")
        #expect(
            both.summary.split(separator: "\n").contains(
                "osc input udp+tcp 127.0.0.1:57200 (TCP: up to 4 connections, packets up to 1024 bytes within 5 s), "
                    + "accepting default, osmid, touchosc, SysEx off"))
    }

    @Test func theProtocolIsUDPTCPOrBothWithTCPLimits() throws {
        let tcp = try #require(try Self.parse("{ protocol: \"tcp\" }").oscInput)
        #expect(tcp.transports == [.tcp])
        #expect(tcp.maxConnections == 16 && tcp.maxPacketSize == 65_536 && tcp.frameTimeout == 5)
        let both = try #require(
            try Self.parse(
                "{ protocol: [\"udp\", \"tcp\"], maxConnections: 2, maxPacketSize: 4096, frameTimeout: 0.5 }"
            ).oscInput)
        #expect(both.transports == [.udp, .tcp])
        #expect(both.maxConnections == 2 && both.maxPacketSize == 4096 && both.frameTimeout == 0.5)
        #expect(try Self.parse("{ protocol: \"udp\" }").oscInput?.transports == [.udp])
    }
}
