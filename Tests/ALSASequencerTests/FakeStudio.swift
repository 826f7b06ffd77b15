import ALSASequencer
import Endpoints

/// A port list as `aseqosc ports` could see it on a small studio machine, for resolution tests.
enum FakeStudio {
    static let inOut: PortCapabilities = [.read, .subscribeRead, .write, .subscribeWrite]
    static let sourceOnly: PortCapabilities = [.read, .subscribeRead]
    static let destinationOnly: PortCapabilities = [.write, .subscribeWrite]

    /// aseqosc's own client, which specs never resolve to.
    static let ownClient: UInt8 = 128

    static let ports: [PortInfo] = [
        port(0, 0, "System", "Timer", kernel: true),
        port(0, 1, "System", "Announce", sourceOnly, kernel: true),
        port(14, 0, "Midi Through", "Midi Through Port-0", kernel: true),
        port(16, 0, "Virtual Raw MIDI 0-0", "VirMIDI 0-0", card: 0),
        port(17, 0, "Virtual Raw MIDI 0-1", "VirMIDI 0-1", card: 0),
        port(18, 0, "Virtual Raw MIDI 0-2", "VirMIDI 0-2", card: 0),
        port(19, 0, "Virtual Raw MIDI 0-3", "VirMIDI 0-3", card: 0),
        port(24, 0, "KeyStep Pro", "KeyStep Pro MIDI 1", card: 1),
        port(24, 1, "KeyStep Pro", "KeyStep Pro MIDI 2", card: 1),
        // Two identical keyboards: same client name, same port names.
        port(28, 0, "Launchkey MK3", "Launchkey MK3 LKMK3 MIDI In", card: 2),
        port(28, 1, "Launchkey MK3", "Launchkey MK3 LKMK3 DAW In", card: 2),
        port(32, 0, "Launchkey MK3", "Launchkey MK3 LKMK3 MIDI In", card: 3),
        port(32, 1, "Launchkey MK3", "Launchkey MK3 LKMK3 DAW In", card: 3),
        // A pedal only sends: the one hardware port that is not a destination.
        port(36, 0, "USB MIDI Pedal", "USB MIDI Pedal MIDI 1", sourceOnly, card: 4),
        port(ownClient, 0, "aseqosc", "midi in", destinationOnly),
        port(ownClient, 1, "aseqosc", "midi out", sourceOnly),
        port(129, 0, "Foo:Bar", "Baz"),
        port(130, 0, "SuperCollider", "in", destinationOnly),
        port(130, 1, "SuperCollider", "out", sourceOnly),
    ]

    static func port(
        _ client: UInt8, _ port: UInt8, _ clientName: String, _ portName: String,
        _ capabilities: PortCapabilities = inOut, card: Int32? = nil, kernel: Bool = false
    ) -> PortInfo {
        PortInfo(
            address: PortAddress(client: client, port: port), clientName: clientName, portName: portName,
            capabilities: capabilities, typeBits: 0, isKernelClient: kernel || card != nil, card: card)
    }

    /// What resolving `text` gives: the addresses separated by spaces, or the error message.
    static func outcome(
        _ text: String, _ direction: PortSpec.Direction, in ports: [PortInfo] = ports
    ) -> String {
        do {
            let spec = try PortSpec(parsing: text)
            let found = try spec.resolve(in: ports, direction: direction, excludingClient: ownClient)
            return found.map(\.address.description).joined(separator: " ")
        } catch {
            return "\(error)"
        }
    }
}
