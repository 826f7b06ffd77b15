import ALSASequencer
import Endpoints
import Testing

@Suite struct DuplicateNamesTests {
    @Test func theFirstOfTwoIdenticalClientsKeepsItsNameAndTheSecondGetsASuffix() {
        let names = PortInfo.uniqueClientNames(FakeStudio.ports)
        #expect(names[28] == "Launchkey MK3")
        #expect(names[32] == "Launchkey MK3 (2)")
        #expect(names[24] == "KeyStep Pro")
        #expect(names[129] == "Foo:Bar")
        #expect(Set(names.values).count == names.count)
    }

    @Test(arguments: [[20, 21, 22], [22, 21, 20], [21, 22, 20]] as [[UInt8]])
    func suffixesFollowClientNumbersWhateverTheListOrder(clients: [UInt8]) {
        let ports = clients.map { FakeStudio.port($0, 0, "X", "in") }
        #expect(PortInfo.uniqueClientNames(ports) == [20: "X", 21: "X (2)", 22: "X (3)"])
    }

    @Test func aSuffixThatIsAnotherClientsRealNameIsSkipped() {
        let ports = [
            FakeStudio.port(20, 0, "X", "in"),
            FakeStudio.port(21, 0, "X (2)", "in"),
            FakeStudio.port(22, 0, "X", "in"),
        ]
        #expect(PortInfo.uniqueClientNames(ports) == [20: "X", 21: "X (2)", 22: "X (3)"])
        #expect(FakeStudio.outcome("X (2)", .source, in: ports) == "21:0")
        #expect(FakeStudio.outcome("X (3)", .source, in: ports) == "22:0")
        #expect(FakeStudio.outcome("X", .source, in: ports) == "20:0")
    }

    @Test func namedPortsAreInAddressOrderWithUniqueNames() {
        let named = PortInfo.named(FakeStudio.ports.reversed())
        #expect(named.map(\.address) == FakeStudio.ports.map(\.address))
        let second = named.first { $0.address == PortAddress(client: 32, port: 1) }
        #expect(second?.name == "Launchkey MK3 (2):Launchkey MK3 LKMK3 DAW In")
        #expect(second?.description == "32:1 Launchkey MK3 (2):Launchkey MK3 LKMK3 DAW In")
        #expect(second?.info.clientName == "Launchkey MK3")
    }
}
