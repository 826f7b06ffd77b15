// libFuzzer target: arbitrary text as a port spec (`--from`, a config's `from`/`to`), parsed
// and resolved against a fixed list of ports in both directions.
//
// Parsing must return a spec or a PortSpecParseError; resolving must return ports of the
// asked direction from the list (never our own client) or a PortResolutionError; every
// error must have a message.
@testable import ALSASequencer
@testable import Endpoints

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

// The studio of the resolution tests (Tests/ALSASequencerTests/FakeStudio.swift, which Fuzz/run
// compiles in), and a client whose names are not ASCII.
let ownClient = FakeStudio.ownClient
let ports = FakeStudio.ports + [FakeStudio.port(131, 0, "Ümlaut ♪ Synth", "Port: 1")]
