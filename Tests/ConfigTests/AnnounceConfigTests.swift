import Config
import Foundation
import Testing

/// `osc.announce`: DNS-SD announcement of the OSC input, only where other machines can reach it.
@Suite struct AnnounceConfigTests {
    static func parse(_ osc: String) throws -> OSCInputConfig? {
        let text = "{ outputs: [{ name: \"synth\" }], osc: \(osc) }"
        return try ConfigParser.parse(Data(text.utf8)).oscInput
    }

    @Test func anInputOnTheNetworkIsAnnouncedUnderTheDefaultNameUnlessTurnedOff() throws {
        let open = try #require(try Self.parse("{ listen: \"0.0.0.0:9000\", allow: [\"10.0.0.0/8\"] }"))
        #expect(open.announce && open.serviceName == nil && open.isReachableFromNetwork)
        let off = try #require(try Self.parse("{ listen: \"0.0.0.0:9000\", allow: [\"10.0.0.0/8\"], announce: false }"))
        #expect(!off.announce)
        let loopback = try #require(try Self.parse("{}"))
        #expect(!loopback.isReachableFromNetwork)
    }

    @Test func aNameIsTheInstanceName() throws {
        let named = try #require(
            try Self.parse("{ listen: \"[::]:9000\", allow: [\"::/0\"], announce: \"Studio bridge\" }"))
        #expect(named.announce && named.serviceName == "Studio bridge")
    }

    static let errors: [(String, String)] = [
        (
            "{ announce: true }",
            "osc.announce: announcing needs a listen address other machines can reach; 127.0.0.1:57200 is loopback "
                + "(e.g. listen: \"0.0.0.0:57200\" with allow: [\"192.168.1.0/24\"])"
        ),
        (
            "{ listen: \"0.0.0.0:9000\", allow: [\"10.0.0.0/8\"], announce: \"\" }",
            "osc.announce: empty name; expected true, false or a name for the announcement, e.g. \"Studio bridge\""
        ),
        (
            "{ listen: \"0.0.0.0:9000\", allow: [\"10.0.0.0/8\"], announce: \"\(String(repeating: "x", count: 64))\" }",
            "osc.announce: '\(String(repeating: "x", count: 64))' is 64 bytes; a DNS-SD name has at most 63"
        ),
        (
            "{ listen: \"0.0.0.0:9000\", allow: [\"10.0.0.0/8\"], announce: 1 }",
            "osc.announce: expected true, false or a name for the announcement, e.g. \"Studio bridge\""
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
