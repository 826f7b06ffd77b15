// libFuzzer target: arbitrary bytes as a config file.
//
// ConfigParser.parse must either return a config or throw a ConfigError with a message; a
// config it accepts must summarise (`aseqosc check`), build every route, and run a few events
// through each and release them, without trapping.
@testable import Config
@testable import MIDI

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let config: BridgeConfig
    do {
        config = try ConfigParser.parse(UnsafeBufferPointer(start: data, count: size))
    } catch {
        if error.message.isEmpty { fatalError("a config error without a message: \(error)") }
        return 0
    }
    _ = config.summary
    let ports = (0..<config.inputs.count).map { UInt8($0) }
    for routeConfig in config.routes {
        var builder = RouteBuilder(inputPorts: ports)
        let route = builder.build(routeConfig)
        var outputs = 0
        let sink = { (_: MIDIEvent, destination: Int) in
            if destination >= builder.destinations.count { fatalError("output to destination \(destination)") }
            outputs += 1
        }
        for port in ports {
            var events: [MIDIEvent] = [
                .noteOn(channel: 0, note: 60, velocity: 100), .controlChange(channel: 1, controller: 7, value: 64),
                .pitchBend(channel: 2, bend: -8192), .noteOff(channel: 0, note: 60),
                .noteOn(channel: 15, note: 127, velocity: 1),
            ]
            for index in events.indices { events[index].port = UInt16(port) }
            for (index, event) in events.enumerated() {
                route.process(event, now: UInt64(index) * 1_000_000, into: sink)
            }
        }
        if let deadline = route.nextDeadline { route.flushDue(now: deadline, into: sink) }
        route.releaseAll(into: sink)
        if route.heldNoteCount != 0 { fatalError("notes still held after releaseAll") }
    }
    return 0
}
