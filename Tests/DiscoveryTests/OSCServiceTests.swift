import Discovery
import Testing

@Suite struct OSCServiceTests {
    @Test func udpAndTcpAreAnnouncedUnderOneNameWithTheProposalsTxtKeys() {
        let services = OSCService.announcements(name: "Studio bridge", port: 57200, transports: [.udp, .tcp])
        #expect(services.map(\.type) == ["_osc._udp", "_osc._tcp"])
        #expect(services.allSatisfy { $0.name == "Studio bridge" && $0.port == 57200 })
        #expect(services[0].txt == ["txtvers=1", "version=1.1"])
        #expect(services[1].txt == ["txtvers=1", "version=1.1", "framing=slip"])
    }

    @Test func theOSCQueryServerIsAnnouncedUnderTheSameNameWithoutTxtKeys() {
        let services = OSCService.announcements(
            name: "Studio bridge", port: 57200, transports: [.udp], queryPort: 57201)
        #expect(services.map(\.type) == ["_osc._udp", "_oscjson._tcp"])
        #expect(services.map(\.port) == [57200, 57201])
        #expect(services[1].name == "Studio bridge" && services[1].txt.isEmpty)
    }

    @Test func theDefaultNameNamesThisHostWithoutItsDomain() {
        let name = OSCService.defaultName
        #expect(name.hasPrefix("aseqosc on "))
        #expect(!name.dropFirst("aseqosc on ".count).isEmpty)
        #expect(!name.dropFirst("aseqosc on ".count).contains("."))
    }

    @Test(arguments: [("_oscjson._tcp", "http"), ("_osc._tcp", "tcp"), ("_osc._udp", "udp")])
    func aFoundServiceSaysItsTransport(type: String, transport: String) {
        let found = FoundService(
            name: "x", type: type, host: "h.local", address: "10.0.0.2", port: 9000, interface: "eth0", txt: [])
        #expect(found.transport == transport)
    }
}
