import MIDIToOSC
import OSCMapping
import OSCToMIDI
import OSC
import Pipeline

/// OSC -> MIDI through mapping rules, as the bridge's OSC thread handles a datagram short of
/// the ALSA write (``BridgePath``, then the route), for `Benchmarks/mappings.sh`: `rules`
/// literal rules (`/layout/ctl{i} ,f` -> a CC, a TouchOSC layout with a rule per control) while
/// senders cycle `addresses` of them; or one template rule (`/layout/ctl{n}`) over `addresses`
/// controls; or every message at a new address no rule matches (a hostile sender).
///
/// Uses only API the translator has had since mappings existed, so the script can build it
/// against an older commit, with that commit's ``BridgePath``.
final class MappingsWorkload {
    enum Shape { case literal, template, spray }

    let events: Int
    private let packets: [UnsafeRawBufferPointer]
    private let path: BridgePath
    private var next = 0
    private let route = Route(inputPorts: .all, chain: Chain([], destinations: [0]))

    /// Mapping rules for controls `0..<count`, or one template rule.
    static func rules(_ count: Int, template: Bool = false) -> [OSCMappingRule] {
        let scale = OSCLinearScale(input: (0, 1), output: (0, 127))
        if template {
            return [
                OSCMappingRule(
                    address: try! OSCMappingAddress("/layout/ctl{n}"), argumentTypes: Array("f".utf8),
                    output: .port(0), kind: .controlChange,
                    values: [nil, OSCMappingValue(.capture(0)), OSCMappingValue(.argument(0), scale: scale)])
            ]
        }
        return (0..<count).map { i in
            OSCMappingRule(
                address: try! OSCMappingAddress("/layout/ctl\(i)"), argumentTypes: Array("f".utf8), output: .port(0),
                kind: .controlChange,
                values: [
                    OSCMappingValue(.constant(Double(1 + i % 16))), OSCMappingValue(.constant(Double(i % 128))),
                    OSCMappingValue(.argument(0), scale: scale),
                ])
        }
    }

    init(rules count: Int, addresses: Int, shape: Shape = .literal, events: Int) {
        self.events = events
        let rules = Self.rules(count, template: shape == .template)
        path = BridgePath(OSCToMIDITranslator(outputNames: ["synth"], rules: rules), rules: rules.count)
        // A spray never repeats an address (an older commit's largest cache could hold); the
        // others cycle through `addresses` controls in an order that is not the rules' order.
        let distinct = shape == .spray ? 65_536 : addresses
        packets = (0..<distinct).map { k in
            let i = shape == .spray ? k : (k &* 7919) % addresses
            let address = shape == .spray ? "/layout/x\(i)" : "/layout/ctl\(i)"
            let bytes = try! OSCMessage(address, [.float32(Float(k % 128) / 127)]).serialize()
            let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 16)
            copy.copyBytes(from: bytes)
            return UnsafeRawBufferPointer(copy)
        }
    }

    deinit {
        for packet in packets { packet.deallocate() }
    }

    func run() -> Int {
        var sent = 0
        var i = 0
        while i < events {
            // Each run goes on where the last one stopped.
            let datagram = packets[next]
            next = next + 1 == packets.count ? 0 : next + 1
            let now = UInt64(i)
            path.translate(datagram, now: now) { event in
                route.process(event, now: now) { output, _ in sent &+= Int(output.data2) }
            }
            i += 1
        }
        return sent
    }

    /// Loading `count` rules as the bridge does: parse each address, build the translator (and
    /// what its bridge path holds). Returns a checksum.
    static func load(_ count: Int) -> Int {
        let path = BridgePath(OSCToMIDITranslator(outputNames: ["synth"], rules: rules(count)), rules: count)
        return path.translator.rules.count
    }

    /// The `--only` workload `name` (see main.swift's help), built only when asked for.
    static func workload(named name: String, scale: Int) -> (Int, () -> Int)? {
        let parts = name.split(separator: "_")
        guard parts.count >= 2, let n = Int(parts[parts.count - 1]) else { return nil }
        let workload: MappingsWorkload
        switch parts.count == 2 ? "literal" : parts[1] {
        case "literal": workload = MappingsWorkload(rules: n, addresses: n, events: 200_000 / scale)
        case "template": workload = MappingsWorkload(rules: 1, addresses: n, shape: .template, events: 200_000 / scale)
        case "spray": workload = MappingsWorkload(rules: n, addresses: 0, shape: .spray, events: 20_000 / scale)
        case "load": return (n, { load(n) })
        default: return nil
        }
        return (workload.events, workload.run)
    }
}
