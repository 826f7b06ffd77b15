import Config
import Foundation
import Testing

/// `osc.query`: the OSCQuery server, on by default only where other machines can reach the input.
@Suite struct QueryConfigTests {
    static func parse(_ osc: String) throws -> OSCInputConfig? {
        let text = "{ outputs: [{ name: \"synth\" }], osc: \(osc) }"
        return try ConfigParser.parse(Data(text.utf8)).oscInput
    }

    static let network = "listen: \"0.0.0.0:9000\", allow: [\"10.0.0.0/8\"]"

    @Test func onTheNetworkItIsOnByDefaultOnTheNextPortAndOffOnLoopback() throws {
        #expect(try Self.parse("{ \(Self.network) }")?.queryPort == 9001)
        #expect(try Self.parse("{ listen: \"[::]:65535\", allow: [\"::/0\"] }")?.queryPort == 65534)
        #expect(try Self.parse("{}")?.queryPort == nil)
        #expect(try Self.parse("{ \(Self.network), query: false }")?.queryPort == nil)
    }

    @Test func aPortOrTrueTurnsItOnEvenOnLoopbackAndZeroTakesAnyFreePort() throws {
        #expect(try Self.parse("{ query: true }")?.queryPort == 57201)
        #expect(try Self.parse("{ query: { port: 8080 } }")?.queryPort == 8080)
        #expect(try Self.parse("{ \(Self.network), query: { port: 0 } }")?.queryPort == 0)
        #expect(try Self.parse("{ query: {} }")?.queryPort == 57201)
        // UDP and TCP ports are apart: the input's UDP port is free for HTTP.
        #expect(try Self.parse("{ \(Self.network), query: { port: 9000 } }")?.queryPort == 9000)
    }

    @Test func theSummarySaysWhere() throws {
        let text = "{ outputs: [{ name: \"synth\" }], osc: { \(Self.network) } }"
        let summary = try ConfigParser.parse(Data(text.utf8)).summary
        #expect(summary.contains(", SysEx off, OSCQuery on port 9001"), "\(summary)")
    }

    @Test func theStatusPageIsOnWithoutActionsWhichAreTakenFromThisMachineUnlessSet() throws {
        let plain = try #require(try Self.parse("{ \(Self.network) }"))
        #expect(plain.page && plain.pageActions.isEmpty)
        #expect(plain.actionsAllow.map(\.description) == ["127.0.0.0/8", "::1/128"])
        let acting = try #require(
            try Self.parse(
                "{ query: { page: true, actions: [\"reload\", \"panic\"], actionsAllow: [\"192.168.1.0/24\"] } }"))
        #expect(
            acting.pageActions == ["reload", "panic"] && acting.actionsAllow.map(\.description) == ["192.168.1.0/24"])
        #expect(try Self.parse("{ query: { page: false } }")?.page == false)
    }

    static let errors: [(String, String)] = [
        (
            "{ query: 8080 }",
            "osc.query: expected true, false or { port: N, page, actions, actionsAllow } (the OSCQuery server's TCP "
                + "port; 0: any free one)"
        ),
        ("{ query: { port: 70000 } }", "osc.query.port: expected 0-65535, found 70000"),
        (
            "{ query: { port: 8080, path: \"/\" } }",
            "osc.query.path: unknown key; did you mean 'page'?"
        ),
        (
            "{ query: { actions: [\"shutdown\"] } }",
            "osc.query.actions[0]: unknown action 'shutdown'; the page can offer reload, panic, sync"
        ),
        (
            "{ \(network), protocol: [\"udp\", \"tcp\"], query: { port: 9000 } }",
            "osc.query.port: port 9000 is the OSC input's TCP port; OSCQuery needs another one"
        ),
    ]

    @Test(arguments: errors)
    func mistakesAreNamed(_ osc: String, _ message: String) {
        do {
            _ = try Self.parse(osc)
            Issue.record("accepted: \(osc)")
        } catch {
            #expect("\(error)" == message)
        }
    }
}
