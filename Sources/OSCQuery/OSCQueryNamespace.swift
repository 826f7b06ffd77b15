import MIDI
import OSCMapping

/// The OSCQuery address space of everything the OSC input accepts: each mapping rule, then the
/// built-in families the config accepts, one method per address with its type tags and ranges.
/// Built once per config; the HTTP server only reads it.
package struct OSCQueryNamespace: Sendable, Equatable {
    /// The root container, `/`.
    package private(set) var root: OSCQueryNode
    /// The indices of the mapping rules whose addresses cannot be listed: a `*` part, or a
    /// capture no field gives a range to (or one of too many values). They still work.
    package private(set) var unlistedMappings: [Int] = []

    /// The most addresses one mapping rule may list (its captures' values multiplied): 16
    /// channels times 128 notes.
    static let addressesPerMappingLimit = 2048

    /// The namespace of an input with outputs `outputNames` accepting `families`, `mappings`
    /// first, with SysEx addresses only when `sysex` is on; then, read-only, the methods with a
    /// value of each of `inputNames` (the input ports), as the `default` scheme sends them.
    package init(
        outputNames: [String], families: Set<OSCAddressFamily>, mappings: [OSCMappingRule], sysex: Bool,
        inputNames: [String] = []
    ) {
        let quoted = outputNames.map { "'\($0)'" }.joined(separator: ", ")
        root = OSCQueryNode(fullPath: "/", containerDescription: "aseqosc: OSC to MIDI for output ports \(quoted)")
        for (index, rule) in mappings.enumerated() where !insert(rule, number: index + 1, outputNames: outputNames) {
            unlistedMappings.append(index)
        }
        let ports = outputNames.map { ($0, OSCPortNameStyle.osmid.sanitise($0)) }
        if families.contains(.default) {
            for (name, part) in ports { insertDefault(output: name, part: part, sysex: sysex) }
        }
        if families.contains(.touchosc) {
            root.insert(
                Method(
                    types: "m", ranges: [nil],
                    description: "TouchOSC Bridge: MIDI messages, the first byte the output's index"),
                at: ["midi"])
            if sysex {
                root.insert(
                    Method(
                        types: "b", ranges: [nil], description: "TouchOSC Bridge: SysEx, F0 ... F7, to the first output"
                    ),
                    at: ["sysex"])
            }
        }
        if families.contains(.osmid) {
            for (name, part) in ports { insertOsmid(output: name, part: part, sysex: sysex) }
        }
        for name in inputNames { insertValues(input: name, part: OSCPortNameStyle.osc.sanitise(name)) }
    }

    /// The methods of one input port whose last value can be read (ACCESS 1): what it received,
    /// as the `default` scheme sends it. Where an output took the address, the output's stays.
    private mutating func insertValues(input name: String, part: String) {
        let kinds: [(String, String, [ClosedRange<Double>], String)] = [
            ("cc", "ii", [Self.sevenBit, Self.sevenBit], "the last control change: controller, value"),
            ("cc14", "ii", [0...31, Self.fourteenBit], "the last 14-bit control change: controller 0-31, value"),
            ("rpn", "ii", [Self.fourteenBit, Self.fourteenBit], "the last RPN: parameter, value"),
            ("nrpn", "ii", [Self.fourteenBit, Self.fourteenBit], "the last NRPN: parameter, value"),
            ("program", "i", [Self.sevenBit], "the program"),
            ("pressure", "i", [Self.sevenBit], "the channel pressure"),
            ("pitch_bend", "i", [-8192...8191], "the pitch bend, 0 the centre"),
            ("poly_pressure", "ii", [Self.sevenBit, Self.sevenBit], "the last poly pressure: note, pressure"),
        ]
        for channel in 1...16 {
            for (type, tags, ranges, what) in kinds {
                let path = ["midi", part, "\(channel)", type]
                guard root.node(at: path.map { Substring($0) }) == nil else { continue }
                root.insert(
                    Method(
                        types: tags, ranges: ranges,
                        description: "\(what) received on channel \(channel) of input '\(name)'",
                        readOnly: true),
                    at: path[...])
            }
        }
    }

    package typealias Method = OSCQueryNode.Method

    private static let sevenBit: ClosedRange<Double> = 0...127
    private static let fourteenBit: ClosedRange<Double> = 0...16383
    private static let channels: ClosedRange<Double> = 1...16

    /// The default scheme's addresses for one output: `/midi/{part}/{channel}/note_on` and the rest.
    private mutating func insertDefault(output name: String, part: String, sysex: Bool) {
        let channelKinds: [(String, String, [ClosedRange<Double>], String)] = [
            ("note_on", "ii", [Self.sevenBit, Self.sevenBit], "note on: note, velocity"),
            ("note_off", "ii", [Self.sevenBit, Self.sevenBit], "note off: note, velocity"),
            ("poly_pressure", "ii", [Self.sevenBit, Self.sevenBit], "poly pressure: note, pressure"),
            ("cc", "ii", [Self.sevenBit, Self.sevenBit], "control change: controller, value"),
            ("program", "i", [Self.sevenBit], "program change: program"),
            ("pressure", "i", [Self.sevenBit], "channel pressure: pressure"),
            ("pitch_bend", "i", [-8192...8191], "pitch bend: -8192...8191, 0 the centre"),
            ("cc14", "ii", [0...31, Self.fourteenBit], "14-bit control change: controller 0-31, value"),
            ("rpn", "ii", [Self.fourteenBit, Self.fourteenBit], "RPN: parameter, value"),
            ("nrpn", "ii", [Self.fourteenBit, Self.fourteenBit], "NRPN: parameter, value"),
        ]
        for channel in 1...16 {
            for (type, tags, ranges, what) in channelKinds {
                root.insert(
                    Method(types: tags, ranges: ranges, description: "\(what); channel \(channel) of output '\(name)'"),
                    at: ["midi", part, "\(channel)", type])
            }
        }
        let systemKinds: [(String, String, [ClosedRange<Double>?], String)] =
            [
                ("mtc_quarter_frame", "i", [Self.sevenBit], "MTC quarter frame: the data byte"),
                ("song_position", "i", [Self.fourteenBit], "song position in MIDI beats"),
                ("song_select", "i", [Self.sevenBit], "song select: song"),
                ("tune_request", "", [], "tune request"),
                ("clock", "", [], "clock"),
                ("start", "", [], "start"),
                ("continue", "", [], "continue"),
                ("stop", "", [], "stop"),
                ("active_sensing", "", [], "active sensing"),
                ("reset", "", [], "reset"),
            ] + (sysex ? [("sysex", "b", [nil], "SysEx: the whole message, F0 ... F7")] : [])
        for (type, tags, ranges, what) in systemKinds {
            root.insert(
                Method(types: tags, ranges: ranges, description: "\(what), to output '\(name)'"),
                at: ["midi", part, type])
        }
    }

    /// What osmid's o2m accepts for one output: `/{part}/note_on ,iii` (channel first) and the rest.
    private mutating func insertOsmid(output name: String, part: String, sysex: Bool) {
        let kinds: [(String, String, [ClosedRange<Double>?], String)] =
            [
                (
                    "note_on", "iii", [Self.channels, Self.sevenBit, Self.sevenBit],
                    "o2m note on: channel, note, velocity"
                ),
                (
                    "note_off", "iii", [Self.channels, Self.sevenBit, Self.sevenBit],
                    "o2m note off: channel, note, velocity"
                ),
                (
                    "control_change", "iii", [Self.channels, Self.sevenBit, Self.sevenBit],
                    "o2m control change: channel, controller, value"
                ),
                (
                    "poly_pressure", "iii", [Self.channels, Self.sevenBit, Self.sevenBit],
                    "o2m poly pressure: channel, note, value"
                ),
                ("channel_pressure", "ii", [Self.channels, Self.sevenBit], "o2m channel pressure: channel, value"),
                ("program_change", "ii", [Self.channels, Self.sevenBit], "o2m program change: channel, program"),
                (
                    "pitch_bend", "ii", [Self.channels, Self.fourteenBit],
                    "o2m pitch bend: channel, value, 8192 the centre"
                ),
                ("clock", "", [], "o2m clock"),
                ("start", "", [], "o2m start"),
                ("continue", "", [], "o2m continue"),
                ("stop", "", [], "o2m stop"),
                ("active_sensing", "", [], "o2m active sensing"),
                ("raw", "b", [nil], "o2m raw MIDI bytes, to every output"),
            ] + (sysex ? [("sysex", "b", [nil], "SysEx: the whole message, F0 ... F7")] : [])
        for (command, tags, ranges, what) in kinds {
            let target = command == "raw" ? "" : " to output '\(name)'"
            root.insert(Method(types: tags, ranges: ranges, description: what + target), at: [part, command])
        }
    }

    /// Lists a mapping rule's addresses; false when they cannot be listed.
    private mutating func insert(_ rule: OSCMappingRule, number: Int, outputNames: [String]) -> Bool {
        guard let addresses = Self.addresses(of: rule) else { return false }
        let method = Self.method(of: rule, number: number, outputNames: outputNames)
        for address in addresses { root.insert(method, at: address.parts[...]) }
        return true
    }

    /// One address a mapping rule lists: its parts, and the number each capture is there.
    package struct MappedAddress: Sendable, Equatable {
        var parts: [String]
        package var captures: [Int]
        /// `/parts/joined`.
        package var path: String { "/" + parts.joined(separator: "/") }
    }

    /// Every address `rule` lists: one per value its captures can take (the values the fields
    /// reading them accept); nil when they cannot be listed (a `*` part, a capture no field
    /// gives a range to, or more than ``addressesPerMappingLimit``).
    package static func addresses(of rule: OSCMappingRule) -> [MappedAddress]? {
        let fields = OSCMappingRule.fields(for: rule.kind)
        // The values each capture can take: what the fields reading it accept.
        var captureValues: [[Int]] = []
        for capture in rule.address.captureNames.indices {
            var domain: ClosedRange<Int>?
            for (field, value) in zip(fields, rule.values) {
                guard let value, value.source == .capture(capture) else { continue }
                let accepted = Self.inputs(of: value, field: field)
                domain = domain.map { $0.clamped(to: accepted) } ?? accepted
            }
            guard let domain else { return nil }
            captureValues.append(Array(domain))
        }
        let count = captureValues.reduce(1) { $0 * $1.count }
        guard count > 0, count <= Self.addressesPerMappingLimit else { return nil }
        var addresses = [MappedAddress(parts: [], captures: Array(repeating: 0, count: captureValues.count))]
        for part in rule.address.parts {
            switch part {
            case .any: return nil
            case .literal(let bytes):
                let text = String(decoding: bytes, as: UTF8.self)
                for i in addresses.indices { addresses[i].parts.append(text) }
            case .capture(let prefix, let index, let suffix):
                let before = String(decoding: prefix, as: UTF8.self)
                let after = String(decoding: suffix, as: UTF8.self)
                addresses = addresses.flatMap { address in
                    captureValues[index].map { value in
                        var next = address
                        next.parts.append("\(before)\(value)\(after)")
                        next.captures[index] = value
                        return next
                    }
                }
            }
        }
        return addresses
    }

    /// The whole numbers a capture or argument read by `value` may be for `field` to get every
    /// value it can take: the scale's input range, or without one the field's own range.
    private static func inputs(of value: OSCMappingValue, field: OSCMappingField) -> ClosedRange<Int> {
        guard let scale = value.scale else { return field.range }
        let low = min(scale.inputFrom, scale.inputTo).rounded(.up)
        let high = max(scale.inputFrom, scale.inputTo).rounded(.down)
        guard low <= high, low > -1e9, high < 1e9 else { return field.range }
        return Int(low)...Int(high)
    }

    /// A rule's type tags and ranges: the `args` it names, or one number per argument it reads
    /// (`f` when scaled, as faders send, otherwise `i`).
    private static func method(of rule: OSCMappingRule, number: Int, outputNames: [String]) -> Method {
        let fields = OSCMappingRule.fields(for: rule.kind)
        var read: [Int: (scaled: Bool, range: ClosedRange<Double>)] = [:]
        for (field, value) in zip(fields, rule.values) {
            guard let value, case .argument(let index) = value.source else { continue }
            let range: ClosedRange<Double> =
                if let scale = value.scale {
                    min(scale.inputFrom, scale.inputTo)...max(scale.inputFrom, scale.inputTo)
                } else {
                    Double(field.range.lowerBound)...Double(field.range.upperBound)
                }
            read[index] = (value.scale != nil, read[index].map { $0.range.clamped(to: range) } ?? range)
        }
        var tags: [UInt8]
        if let given = rule.argumentTypes {
            tags = given
        } else {
            let count = (read.keys.max() ?? -1) + 1
            tags = (0..<count).map { read[$0]?.scaled == true ? UInt8(ascii: "f") : UInt8(ascii: "i") }
        }
        let ranges = tags.indices.map { read[$0]?.range }
        let target: String =
            switch rule.output {
            case .all: "every output"
            case .port(let index): index < outputNames.count ? "output '\(outputNames[index])'" : "output \(index)"
            }
        let kind = rule.kind.description.replacing("_", with: " ")
        return Method(
            types: String(decoding: tags, as: UTF8.self), ranges: ranges,
            description: "mapping \(number) (\(rule.address)): \(kind) to \(target)")
    }
}
