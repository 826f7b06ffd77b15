import Endpoints
import Testing

/// Allow-list networks: CIDR parsing for both families, and membership.
@Suite struct IPNetworkTests {
    @Test(arguments: [
        ("10.0.0.0/8", "10.0.0.0/8"), ("10.1.2.3/8", "10.0.0.0/8"), ("192.168.1.20", "192.168.1.20/32"),
        ("0.0.0.0/0", "0.0.0.0/0"), ("fd00::/8", "fd00::/8"), ("fe80::1:2/64", "fe80::/64"), ("::1", "::1/128"),
    ])
    func networksParseWithTheirHostBitsCleared(_ text: String, _ expected: String) throws {
        #expect(try IPNetwork(parsing: text).description == expected)
    }

    @Test(arguments: [
        ("10.0.0.0/33", "'10.0.0.0/33' is not a network: the prefix length must be 0-32"),
        ("fd00::/129", "'fd00::/129' is not a network: the prefix length must be 0-128"),
        ("10.0.0.0/", "'10.0.0.0/' is not a network: the prefix length must be 0-32"),
        ("10.0.0.0/8x", "'10.0.0.0/8x' is not a network: the prefix length must be 0-32"),
        (
            "example.org/8",
            "'example.org/8' is not a network: expected an IPv4 or IPv6 address, e.g. 10.0.0.0/8 or fd00::/8"
        ),
        ("10.0.0/8", "'10.0.0/8' is not a network: expected an IPv4 or IPv6 address, e.g. 10.0.0.0/8 or fd00::/8"),
    ])
    func badNetworksAreExplained(_ text: String, _ message: String) {
        do {
            _ = try IPNetwork(parsing: text)
            Issue.record("'\(text)' parsed")
        } catch {
            #expect("\(error)" == message)
        }
    }

    @Test(arguments: [
        ("10.0.0.0/8", "10.200.3.4", true), ("10.0.0.0/8", "11.0.0.1", false),
        ("192.168.1.0/24", "192.168.1.255", true), ("192.168.1.0/24", "192.168.2.1", false),
        ("192.168.1.20", "192.168.1.20", true), ("192.168.1.20", "192.168.1.21", false),
        ("0.0.0.0/0", "8.8.8.8", true), ("0.0.0.0/0", "::1", false),
        ("fd00::/8", "fd12:3456::1", true), ("fd00::/8", "fe80::1", false),
        ("2001:db8::/32", "2001:db8:ffff::1", true), ("2001:db8::/32", "2001:db9::1", false),
        ("2001:db8:0:1::/96", "2001:db8:0:1::ffff:1", true), ("2001:db8:0:1::/96", "2001:db8:0:2::1", false),
        // An IPv4 sender seen through a dual-stack socket is the IPv4 address.
        ("10.0.0.0/8", "::ffff:10.1.2.3", true), ("::/0", "::ffff:10.1.2.3", false),
    ])
    func membership(_ network: String, _ address: String, _ expected: Bool) throws {
        let parsed = try #require(IPAddress(parsing: address))
        #expect(try IPNetwork(parsing: network).contains(parsed) == expected)
    }

    @Test func anAllowListTakesAnyOfItsNetworks() throws {
        let list = IPAllowList([try IPNetwork(parsing: "10.0.0.0/8"), try IPNetwork(parsing: "fd00::/8")])
        #expect(list.allows(IPAddress(parsing: "10.9.9.9")!))
        #expect(list.allows(IPAddress(parsing: "fd00::5")!))
        #expect(!list.allows(IPAddress(parsing: "127.0.0.1")!))
        #expect(!IPAllowList([]).allows(IPAddress(parsing: "127.0.0.1")!))
    }

    @Test func loopbackAndWildcardAddressesAreRecognised() {
        #expect(IPAddress(parsing: "127.0.0.1")!.isLoopback)
        #expect(IPAddress(parsing: "127.8.9.10")!.isLoopback)
        #expect(IPAddress(parsing: "::1")!.isLoopback)
        #expect(!IPAddress(parsing: "0.0.0.0")!.isLoopback)
        #expect(IPAddress(parsing: "0.0.0.0")!.isUnspecified)
        #expect(IPAddress(parsing: "::")!.isUnspecified)
        #expect(IPAddress(parsing: "localhost") == nil)
    }
}
