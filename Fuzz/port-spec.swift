// libFuzzer target: arbitrary text as a port spec (`--from`, a config's `from`/`to`), parsed
// and resolved against a fixed list of ports in both directions.
//
// Parsing must return a spec or a PortSpecParseError; resolving must return ports of the
// asked direction from the list (never our own client) or a PortResolutionError; every
// error must have a message.
import ALSASequencer

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let text = String(decoding: UnsafeRawBufferPointer(start: data, count: size), as: UTF8.self)
    let spec: PortSpec
    do {
        spec = try PortSpec(parsing: text)
    } catch {
        if error.description.isEmpty { fatalError("a parse error without a message") }
        return 0
    }
    if spec.text != text { fatalError("the spec lost its text") }
    for direction in [PortSpec.Direction.source, .destination] {
        do {
            let found = try spec.resolve(in: ports, direction: direction, excludingClient: ownClient)
            for port in found {
                if !direction.admits(port) { fatalError("'\(text)' resolved to \(port.address), not a \(direction)") }
                if port.address.client == ownClient { fatalError("'\(text)' resolved to our own client") }
                if !ports.contains(where: { $0.address == port.address }) { fatalError("a port not in the list") }
            }
        } catch {
            if error.description.isEmpty { fatalError("a resolution error without a message") }
        }
    }
    return 0
}

let ownClient: UInt8 = 128
let inOut: PortCapabilities = [.read, .subscribeRead, .write, .subscribeWrite]
let sourceOnly: PortCapabilities = [.read, .subscribeRead]
let destinationOnly: PortCapabilities = [.write, .subscribeWrite]

/// A small studio, as in Tests/ALSASequencerTests/FakeStudio.swift.
let ports: [PortInfo] = [
    port(0, 0, "System", "Timer", kernel: true),
    port(0, 1, "System", "Announce", sourceOnly, kernel: true),
    port(14, 0, "Midi Through", "Midi Through Port-0", kernel: true),
    port(16, 0, "Virtual Raw MIDI 0-0", "VirMIDI 0-0", card: 0),
    port(17, 0, "Virtual Raw MIDI 0-1", "VirMIDI 0-1", card: 0),
    port(24, 0, "KeyStep Pro", "KeyStep Pro MIDI 1", card: 1),
    port(24, 1, "KeyStep Pro", "KeyStep Pro MIDI 2", card: 1),
    port(28, 0, "Launchkey MK3", "Launchkey MK3 LKMK3 MIDI In", card: 2),
    port(28, 1, "Launchkey MK3", "Launchkey MK3 LKMK3 DAW In", card: 2),
    port(32, 0, "Launchkey MK3", "Launchkey MK3 LKMK3 MIDI In", card: 3),
    port(36, 0, "USB MIDI Pedal", "USB MIDI Pedal MIDI 1", sourceOnly, card: 4),
    port(ownClient, 0, "aseqosc", "midi in", destinationOnly),
    port(ownClient, 1, "aseqosc", "midi out", sourceOnly),
    port(129, 0, "Foo:Bar", "Baz"),
    port(130, 0, "SuperCollider", "in", destinationOnly),
    port(130, 1, "SuperCollider", "out", sourceOnly),
    port(131, 0, "Ümlaut ♪ Synth", "Port: 1"),
]

func port(
    _ client: UInt8, _ port: UInt8, _ clientName: String, _ portName: String,
    _ capabilities: PortCapabilities = inOut, card: Int32? = nil, kernel: Bool = false
) -> PortInfo {
    PortInfo(
        address: PortAddress(client: client, port: port), clientName: clientName, portName: portName,
        capabilities: capabilities, typeBits: 0, isKernelClient: kernel || card != nil, card: card)
}
