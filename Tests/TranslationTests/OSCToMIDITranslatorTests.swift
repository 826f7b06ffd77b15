import MIDI
import OSC
import Testing

@testable import MIDIToOSC
@testable import OSCMapping
@testable import OSCToMIDI

/// Translates one message for the outputs "Synth A" (0) and "thru" (1), returning the outcome
/// and each event as `port:bytes` (`"0:90 3C 64"`), SysEx from the store.
func translate(
    _ address: String, _ arguments: [OSCArgument] = [], rules: [OSCMappingRule] = [], sysex: Bool = true,
    families: Set<OSCToMIDITranslator.Family> = Set(OSCToMIDITranslator.Family.allCases)
) throws -> (OSCToMIDITranslator.Outcome, [String]) {
    let store = SysExStore(slots: 40, capacity: 256)
    let translator = OSCToMIDITranslator(
        outputNames: ["Synth A", "thru"], rules: rules, families: families, sysex: sysex ? store : nil)
    let bytes = try OSCMessage(address, arguments).serialize()
    func run(generally: Bool) throws -> (OSCToMIDITranslator.Outcome, [String]) {
        var events: [String] = []
        let outcome = try bytes.withUnsafeBytes { raw in
            let message = try OSCMessageView(raw)
            let sink = { (event: MIDIEvent) in
                var encoder = MIDIByteEncoder(store: store)
                let hex = encoder.encode(event).map { hex2($0) }.joined(separator: " ")
                events.append("\(event.port):\(hex)")
                if event.kind == .sysex { store.release(event.sysex) }
            }
            guard generally else { return translator.translate(message, into: sink) }
            return translator.perform(translator.resolve(message.address), message, 0, sink)
        }
        return (outcome, events)
    }
    let translated = try run(generally: false)
    // The address table and the general resolution are two resolvers of the same address:
    // every case must come out the same either way.
    #expect(try run(generally: true) == translated, "resolved the general way")
    return translated
}

private func hex2(_ byte: UInt8) -> String {
    let digits = String(byte, radix: 16, uppercase: true)
    return byte < 16 ? "0" + digits : digits
}

private func ints(_ values: Int32...) -> [OSCArgument] { values.map { .int32($0) } }
private func floats(_ values: Float...) -> [OSCArgument] { values.map { .float32($0) } }

/// The default scheme's addresses come back as the MIDI they were made from.
@Suite struct DefaultSchemeMirrorTests {
    static let cases: [(String, [OSCArgument], String)] = [
        ("/midi/synth_a/1/note_on", ints(60, 100), "0:90 3C 64"),
        ("/midi/synth_a/16/note_off", ints(60, 64), "0:8F 3C 40"),
        ("/midi/thru/3/poly_pressure", ints(60, 34), "1:A2 3C 22"),
        ("/midi/thru/3/cc", ints(7, 101), "1:B2 07 65"),
        ("/midi/thru/3/program", ints(5), "1:C2 05"),
        ("/midi/thru/3/pressure", ints(51), "1:D2 33"),
        ("/midi/thru/3/pitch_bend", ints(-8192), "1:E2 00 00"),
        ("/midi/thru/3/pitch_bend", ints(0), "1:E2 00 40"),
        ("/midi/thru/3/pitch_bend", ints(8191), "1:E2 7F 7F"),
        ("/midi/thru/3/cc14", ints(7, 1000), "1:B2 07 07 B2 27 68"),
        ("/midi/thru/3/rpn", ints(0, 8192), "1:B2 65 00 B2 64 00 B2 06 40 B2 26 00"),
        ("/midi/thru/3/nrpn", ints(1000, 300), "1:B2 63 07 B2 62 68 B2 06 02 B2 26 2C"),
        ("/midi/thru/mtc_quarter_frame", ints(0x23), "1:F1 23"),
        ("/midi/thru/song_position", ints(0x1010), "1:F2 10 20"),
        ("/midi/thru/song_select", ints(5), "1:F3 05"),
        ("/midi/thru/tune_request", [], "1:F6"),
        ("/midi/thru/clock", [], "1:F8"),
        ("/midi/thru/start", [], "1:FA"),
        ("/midi/thru/continue", [], "1:FB"),
        ("/midi/thru/stop", [], "1:FC"),
        ("/midi/thru/active_sensing", [], "1:FE"),
        ("/midi/thru/reset", [], "1:FF"),
        ("/midi/thru/sysex", [.blob([0xF0, 0x7E, 0x7F, 0x06, 0x01, 0xF7])], "1:F0 7E 7F 06 01 F7"),
    ]

    @Test(arguments: cases)
    func intArgumentsBecomeTheirMIDI(_ address: String, _ arguments: [OSCArgument], _ expected: String) throws {
        let (outcome, events) = try translate(address, arguments)
        #expect(outcome == .translated)
        #expect(events == [expected])
    }

    @Test(arguments: cases)
    func floatArgumentsAreTheSameNumbers(_ address: String, _ arguments: [OSCArgument], _ expected: String) throws {
        let asFloats = arguments.map { argument -> OSCArgument in
            if case .int32(let value) = argument { return .float32(Float(value)) }
            return argument
        }
        let (outcome, events) = try translate(address, asFloats)
        #expect(outcome == .translated)
        #expect(events == [expected])
    }

    @Test func portNamesCompareSanitisedAndCaseBlindAndAsPatterns() throws {
        #expect(try translate("/midi/Synth_A/1/note_on", ints(60, 1)).1 == ["0:90 3C 01"])
        #expect(try translate("/midi/*/1/note_on", ints(60, 1)).1 == ["0:90 3C 01", "1:90 3C 01"])
        #expect(try translate("/midi/t?ru/1/note_on", ints(60, 1)).1 == ["1:90 3C 01"])
        #expect(try translate("/midi/piano/1/note_on", ints(60, 1)).0 == .unknownAddress)
    }

    @Test func argumentsThatDoNotFitAreMalformed() throws {
        #expect(try translate("/midi/thru/1/note_on", ints(60)).0 == .malformed)
        #expect(try translate("/midi/thru/1/note_on", ints(60, 128)).0 == .malformed)
        #expect(try translate("/midi/thru/1/note_on", [.int32(60), .string("loud")]).0 == .malformed)
        #expect(try translate("/midi/thru/17/note_on", ints(60, 100)).0 == .malformed)
        #expect(try translate("/midi/thru/3/pitch_bend", ints(8192)).0 == .malformed)
        #expect(try translate("/midi/thru/sysex", [.blob([0xF0, 0x7E, 0x80, 0xF7])]).0 == .malformed)
        #expect(try translate("/midi/thru/sysex", [.blob([0x7E, 0xF7])]).0 == .malformed)
        #expect(try translate("/midi/thru/1/glissando", ints(1)).0 == .unknownAddress)
        #expect(try translate("/midi/thru/x/note_on", ints(60, 100)).0 == .unknownAddress)
    }

    @Test func sysexIsRefusedWhenDisabled() throws {
        let (outcome, events) = try translate(
            "/midi/thru/sysex", [.blob([0xF0, 0x7E, 0x7F, 0x06, 0x01, 0xF7])], sysex: false)
        #expect(outcome == .sysexDisabled)
        #expect(events.isEmpty)
    }
}

/// What Debian's o2m 0.8.0 does with each message (seen at amidi in the ALSA VM), aseqosc does.
@Suite struct OsmidO2MTests {
    static let cases: [(String, [OSCArgument], [String])] = [
        ("/Synth A/note_on", ints(1, 60, 100), ["0:90 3C 64"]),
        ("/synth_a/note_on", ints(2, 61, 101), ["0:91 3D 65"]),
        ("/SYNTH A/note_off", ints(3, 60, 64), ["0:82 3C 40"]),
        ("/*/control_change", ints(4, 7, 101), ["0:B3 07 65", "1:B3 07 65"]),
        ("/thru/pitch_bend", ints(5, 8192), ["1:E4 00 40"]),
        ("/thru/pitch_bend", ints(5, 0), ["1:E4 00 00"]),
        ("/thru/pitch_bend", ints(5, 16383), ["1:E4 7F 7F"]),
        ("/thru/pitch_bend", ints(5, 20000), ["1:E4 20 1C"]),
        ("/thru/pitch_bend", ints(1, -1), ["1:E0 7F 7F"]),
        ("/thru/channel_pressure", ints(6, 51), ["1:D5 33"]),
        ("/thru/poly_pressure", ints(7, 60, 34), ["1:A6 3C 22"]),
        ("/thru/program_change", ints(8, 5), ["1:C7 05"]),
        ("/thru/program_change", ints(1, 200), ["1:C0 48"]),
        ("/thru/note_on", ints(17, 60, 100), ["1:9F 3C 64"]),
        ("/thru/note_on", ints(1, 200, 100), ["1:90 48 64"]),
        ("/thru/note_on", ints(1, 60, 200), ["1:90 3C 7F"]),
        ("/thru/note_on", ints(1, 60, 300), ["1:90 3C 2C"]),
        ("/thru/control_change", ints(1, 7, 200), ["1:B0 07 48"]),
        ("/thru/clock", [], ["1:F8"]),
        ("/thru/clock", ints(5), ["1:F8"]),
        ("/thru/start", [], ["1:FA"]),
        ("/thru/continue", [], ["1:FB"]),
        ("/thru/stop", [], ["1:FC"]),
        ("/thru/active_sensing", [], ["1:FE"]),
        ("/thru/raw", ints(144, 60, 100), ["1:90 3C 64"]),
        ("/thru/raw", ints(400, 60, 100), ["1:90 3C 64"]),
        ("/thru/raw", [.int32(144), .string("x"), .int32(60), .int32(1)], ["1:90 3C 01"]),
        ("/thru/raw", ints(240, 126, 127, 6, 1, 247), ["1:F0 7E 7F 06 01 F7"]),
        ("/thru/raw", [.blob([0x92, 0x3C, 0x64, 0xC1, 0x05])], ["1:92 3C 64", "1:C1 05"]),
        ("/thru/sysex", [.blob([0xF0, 0x7E, 0x7F, 0x06, 0x01, 0xF7])], ["1:F0 7E 7F 06 01 F7"]),
    ]

    @Test(arguments: cases)
    func intArgumentsAsO2MDoes(_ address: String, _ arguments: [OSCArgument], _ expected: [String]) throws {
        let (outcome, events) = try translate(address, arguments)
        #expect(outcome == .translated)
        #expect(events == expected)
    }

    @Test func floatArgumentsAreRoundedWhereO2MRefusesThem() throws {
        #expect(try translate("/thru/note_on", floats(1, 60, 99.6)).1 == ["1:90 3C 64"])
        #expect(try translate("/thru/pitch_bend", [.int32(1), .double(8192)]).1 == ["1:E0 00 40"])
        #expect(try translate("/thru/raw", floats(144, 60, 100)).1 == ["1:90 3C 64"])
    }

    @Test func channelZeroOrLessSendsOnEverySixteenChannels() throws {
        let (outcome, events) = try translate("/thru/note_on", ints(0, 63, 10))
        #expect(outcome == .translated)
        #expect(events == (0..<16).map { "1:\(hex2(0x90 + UInt8($0))) 3F 0A" })
        #expect(try translate("/thru/note_on", ints(-1, 66, 10)).1.count == 16)
    }

    @Test func wrongArgumentCountsAndUnknownCommandsAreCounted() throws {
        #expect(try translate("/thru/note_on", ints(1, 65)).0 == .malformed)
        #expect(try translate("/thru/note_on", ints(1, 66, 100, 5)).0 == .malformed)
        #expect(try translate("/thru/note_on", [.int32(1), .int32(60), .string("x")]).0 == .malformed)
        #expect(try translate("/thru/raw").0 == .malformed)
        #expect(try translate("/thru/raw", ints(144, 60)).0 == .malformed)
        #expect(try translate("/thru/active_sense").0 == .unknownAddress)
        #expect(try translate("/thru/CONTROL_CHANGE", ints(1, 7, 64)).0 == .unknownAddress)
        #expect(try translate("/piano/note_on", ints(1, 60, 100)).0 == .unknownAddress)
        #expect(try translate("/thru/raw", ints(240, 126, 247), sysex: false).0 == .sysexDisabled)
    }

    @Test func aFamilyThatIsSwitchedOffIsUnknown() throws {
        #expect(try translate("/thru/note_on", ints(1, 60, 100), families: [.default]).0 == .unknownAddress)
        #expect(try translate("/midi/thru/1/note_on", ints(60, 100), families: [.osmid]).0 == .unknownAddress)
    }
}

/// TouchOSC Bridge's `/midi ,m`, in its byte order or OSC 1.0's, and `/sysex ,b`.
@Suite struct TouchOSCInputTests {
    @Test func midiArgumentsInEitherByteOrder() throws {
        // TouchOSC: port, data 2, data 1, status.
        #expect(try translate("/midi", [.midi(port: 0, status: 0x64, data1: 0x3C, data2: 0x90)]).1 == ["0:90 3C 64"])
        // OSC 1.0: port, status, data 1, data 2.
        #expect(try translate("/midi", [.midi(port: 1, status: 0xB0, data1: 0x07, data2: 0x40)]).1 == ["1:B0 07 40"])
        #expect(try translate("/midi", [.midi(port: 0, status: 0, data1: 0x05, data2: 0xC2)]).1 == ["0:C2 05"])
        #expect(try translate("/midi", [.midi(port: 0, status: 0, data1: 0, data2: 0xF8)]).1 == ["0:F8"])
    }

    @Test func badMIDIArgumentsAreMalformedAndUnknownPortsUnknown() throws {
        #expect(try translate("/midi", [.midi(port: 0, status: 1, data1: 2, data2: 3)]).0 == .malformed)
        #expect(try translate("/midi", [.midi(port: 0, status: 0, data1: 0, data2: 0xF0)]).0 == .malformed)
        #expect(try translate("/midi", ints(144)).0 == .malformed)
        #expect(try translate("/midi", [.midi(port: 9, status: 0x64, data1: 0x3C, data2: 0x90)]).0 == .unknownAddress)
    }

    @Test func sysexBlobGoesToTheFirstOutputWhenEnabled() throws {
        let blob = OSCArgument.blob([0xF0, 0x43, 0x10, 0x4C, 0x00, 0x00, 0x7E, 0x00, 0xF7])
        #expect(try translate("/sysex", [blob]) == (.translated, ["0:F0 43 10 4C 00 00 7E 00 F7"]))
        #expect(try translate("/sysex", [blob], sysex: false) == (.sysexDisabled, []))
    }
}

/// Mapping rules: captures, scaling both ways, clamping, and what does not match.
@Suite struct MappingRuleTests {
    static func rule(
        _ address: String, args: String? = "f", output: OSCMappingOutput = .port(0), _ kind: MIDIEventKind,
        _ values: [OSCMappingValue?]
    ) throws -> OSCMappingRule {
        OSCMappingRule(
            address: try OSCMappingAddress(address), argumentTypes: args.map { Array($0.utf8) }, output: output,
            kind: kind, values: values)
    }

    static let fader = try! rule(
        "/1/fader{n}", .controlChange,
        [
            OSCMappingValue(.constant(2)), OSCMappingValue(.capture(0)),
            OSCMappingValue(.argument(0), scale: OSCLinearScale(input: (0, 1), output: (0, 127))),
        ])

    @Test(arguments: [(Float(0), "B1 05 00"), (0.5, "B1 05 40"), (1, "B1 05 7F"), (2.5, "B1 05 7F"), (-1, "B1 05 00")])
    func faderScalesAndClamps(_ value: Float, _ expected: String) throws {
        #expect(try translate("/1/fader5", floats(value), rules: [Self.fader]).1 == ["0:" + expected])
    }

    @Test func anIntArgumentFitsAFloatType() throws {
        #expect(try translate("/1/fader5", ints(1), rules: [Self.fader]).1 == ["0:B1 05 7F"])
    }

    @Test func invertedRangesScaleDownwards() throws {
        let knob = try Self.rule(
            "/knob/{k}", args: "i", output: .all, .pitchBend,
            [
                OSCMappingValue(.capture(0)),
                OSCMappingValue(.argument(0), scale: OSCLinearScale(input: (127, 0), output: (-8192, 8191))),
            ])
        #expect(try translate("/knob/3", ints(127), rules: [knob]).1 == ["0:E2 00 00", "1:E2 00 00"])
        #expect(try translate("/knob/3", ints(0), rules: [knob]).1 == ["0:E2 7F 7F", "1:E2 7F 7F"])
        // Channel 20 from the address is clamped to 16.
        #expect(try translate("/knob/20", ints(0), rules: [knob]).1 == ["0:EF 7F 7F", "1:EF 7F 7F"])
    }

    @Test func capturesNeedNumbersAndArgumentsMustMatch() throws {
        #expect(try translate("/1/faderX", floats(1), rules: [Self.fader]).0 == .unknownAddress)
        #expect(try translate("/1/fader5", [.string("x")], rules: [Self.fader]).0 == .malformed)
        #expect(try translate("/1/fader5", floats(1, 2), rules: [Self.fader]).0 == .malformed)
        #expect(try translate("/1/fader5/z", floats(1), rules: [Self.fader]).0 == .unknownAddress)
    }

    @Test func rulesComeBeforeTheBuiltInAddresses() throws {
        let override = try Self.rule(
            "/midi/thru/1/note_on", args: nil, .programChange, [nil, OSCMappingValue(.constant(9))])
        #expect(try translate("/midi/thru/1/note_on", ints(60, 100), rules: [override]).1 == ["0:C0 09"])
    }

    @Test func wildcardPartsAndSuffixesMatch() throws {
        let pad = try Self.rule(
            "/*/pad{n}x", args: nil, output: .port(1), .noteOn,
            [OSCMappingValue(.constant(10)), OSCMappingValue(.capture(0)), OSCMappingValue(.constant(127))])
        #expect(try translate("/page2/pad36x", rules: [pad]).1 == ["1:99 24 7F"])
        #expect(try translate("/page2/pad-3x", rules: [pad]).1 == ["1:99 00 7F"])
    }

    @Test(arguments: [
        ("fader", "address 'fader' must start with '/'"),
        ("/a/{n", "address '/a/{n': '{' is never closed"),
        ("/a/{1x}", "address '/a/{1x}': '{1x}' is not a capture name (letters, digits and _, not first a digit)"),
        ("/a/{n}{m}", "address '/a/{n}{m}': one capture per part of the address"),
        ("/a/{n}/{n}", "address '/a/{n}/{n}': the capture {n} is used twice"),
        ("/a/{n}5", "address '/a/{n}5': a capture cannot be followed by a digit"),
        ("/a b", "address '/a b': ' ' is not allowed (use {name} to capture a number, * for any one part)"),
    ])
    func badAddressesAreExplained(_ text: String, _ message: String) {
        #expect(throws: OSCMappingError.self) { try OSCMappingAddress(text) }
        do {
            _ = try OSCMappingAddress(text)
        } catch {
            #expect("\(error)" == message)
        }
    }
}
