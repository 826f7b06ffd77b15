import ALSASequencer
import Endpoints
import Testing

/// A binding change's log line names the side of the bridge it belongs to: the input and
/// output ports' bindings are kept and reconciled together, so the text must tell them apart.
@Suite struct PortBindingsChangeTests {
    static let synth = PortInfo(
        address: PortAddress(client: 24, port: 0), clientName: "Synth", portName: "Synth MIDI 1",
        capabilities: [], typeBits: 0, isKernelClient: true, card: 1)

    @Test(arguments: [
        (PortSpec.Direction.source, "input: 'Synth' bound to 24:0 Synth:Synth MIDI 1"),
        (.destination, "output: 'Synth' bound to 24:0 Synth:Synth MIDI 1"),
    ])
    func connectedLogLineNamesItsSide(direction: PortSpec.Direction, expected: String) throws {
        let change = PortBindings.Change(
            .connected, spec: try PortSpec(parsing: "Synth"), port: Self.synth, direction: direction, ourPort: 0)
        #expect(change.logLine == expected)
    }

    @Test func lostOutputSaysOutput() throws {
        let change = PortBindings.Change(
            .lost, spec: try PortSpec(parsing: "Synth"), port: Self.synth, direction: .destination, ourPort: 0)
        #expect(change.logLine.hasPrefix("output: 'Synth' lost 24:0"))
    }
}
