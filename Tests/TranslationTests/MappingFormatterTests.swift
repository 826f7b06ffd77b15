import MIDI
import MIDIToOSC
import OSCMapping
import OSCToMIDI
import OSC
import Testing

private func rule(
    _ address: String, args: String? = "f", _ kind: MIDIEventKind, _ values: [OSCMappingValue?]
) throws -> OSCMappingRule {
    OSCMappingRule(
        address: try OSCMappingAddress(address), argumentTypes: args.map { Array($0.utf8) }, output: .port(0),
        kind: kind, values: values)
}

private func scaled(_ source: OSCMappingValue.Source, _ input: (Double, Double), _ output: (Double, Double))
    -> OSCMappingValue
{
    OSCMappingValue(source, scale: OSCLinearScale(input: input, output: output))
}

/// `/fader/{n} ,f`: CC n on channel 1, the argument 0..1 as 0..127.
private let fader = try! rule(
    "/fader/{n}", .controlChange, [nil, OSCMappingValue(.capture(0)), scaled(.argument(0), (0, 1), (0, 127))])

/// What a formatter with only `rules` (and a scheme that sends nothing) writes for `event`.
private func sent(_ event: MIDIEvent, _ rules: [OSCMappingRule], scheme: OSCScheme = .none) -> [UInt8]? {
    formatted(event, OSCEventFormatter(scheme: scheme, portNames: ["keys"], mappings: rules))
}

private func cc(_ controller: UInt8, _ value: UInt8, channel: UInt8 = 0) -> MIDIEvent {
    .controlChange(channel: channel, controller: controller, value: value)
}

/// The way back of a linear scale: clamped into the output range, then mapped onto the input.
@Suite struct InverseScaleTests {
    // Typed, outside the attribute: Swift 6.0 cannot type-check the literal inside `@Test` in time.
    static let inversionCases: [((Double, Double), (Double, Double), Double, Double)] = [
        // (input, output, MIDI value, expected OSC value)
        ((0.0, 1.0), (0.0, 127.0), 0.0, 0.0),
        ((0.0, 1.0), (0.0, 127.0), 127.0, 1.0),
        ((0.0, 1.0), (0.0, 127.0), 64.0, 64.0 / 127.0),
        // Outside the output range: clamped to its ends.
        ((0.0, 1.0), (0.0, 127.0), 200.0, 1.0),
        ((0.0, 1.0), (0.0, 127.0), -5.0, 0.0),
        // Inverted input or output ranges run the other way.
        ((1.0, 0.0), (0.0, 127.0), 0.0, 1.0),
        ((1.0, 0.0), (0.0, 127.0), 127.0, 0.0),
        ((0.0, 1.0), (127.0, 0.0), 127.0, 0.0),
        ((0.0, 1.0), (127.0, 0.0), 300.0, 0.0),
        ((127.0, 0.0), (-8192.0, 8191.0), -8192.0, 127.0),
        ((127.0, 0.0), (-8192.0, 8191.0), 8191.0, 0.0),
        ((-1.0, 1.0), (-8192.0, 8191.0), 0.0, -1.0 + 8192.0 / 16383.0 * 2),
        // A wider output than MIDI has: 127 is not the top of it.
        ((0.0, 1.0), (0.0, 254.0), 127.0, 0.5),
        // Both output ends equal: the input's start.
        ((0.0, 1.0), (64.0, 64.0), 12.0, 0.0),
    ]

    @Test(arguments: inversionCases)
    func invertMapsBackAndClamps(
        _ input: (Double, Double), _ output: (Double, Double), _ value: Double, _ expected: Double
    ) {
        let scale = OSCLinearScale(input: input, output: output)
        #expect(abs(scale.invert(value) - expected) < 1e-12, "\(input) <- \(output) at \(value)")
    }

    @Test func invertUndoesApplyInsideTheRanges() {
        let scale = OSCLinearScale(input: (0.25, -3), output: (100, -20))
        var x = -3.0
        while x <= 0.25 {
            #expect(abs(scale.invert(scale.apply(x)) - x) < 1e-12)
            x += 0.01
        }
    }
}

/// Rule messages byte for byte as liblo's `lo_message_serialise` builds them.
@Suite struct MappingFormatterBytesTests {
    static let faderValues: [(UInt8, Float)] = [(0, 0), (64, Float(64.0 / 127.0)), (127, 1), (1, Float(1.0 / 127.0))]

    @Test(arguments: faderValues)
    func faderControllerIsTheCaptureAndTheValueScaledBack(_ value: UInt8, _ expected: Float) {
        #expect(sent(cc(7, value), [fader]) == libloBytes("/fader/7", [.f(expected)]))
        #expect(sent(cc(123, value), [fader]) == libloBytes("/fader/123", [.f(expected)]))
    }

    @Test func ccSixtyFourIsHalfAStepAboveHalf() throws {
        let bytes = try #require(sent(cc(7, 64), [fader]))
        let message = try bytes.withUnsafeBytes { OSCMessage(try OSCMessageView($0)) }
        #expect(message.address == "/fader/7")
        guard case .float32(let value) = message.arguments.first else {
            Issue.record("not a float: \(message)")
            return
        }
        #expect(abs(value - 0.503937) < 1e-6)
    }

    @Test func anAddressWithoutCapturesIsSentAsWritten() throws {
        let volume = try rule(
            "/synth/volume", args: "f", .controlChange,
            [OSCMappingValue(.constant(2)), OSCMappingValue(.constant(7)), scaled(.argument(0), (0, 1), (0, 127))])
        #expect(sent(cc(7, 127, channel: 1), [volume]) == libloBytes("/synth/volume", [.f(1)]))
        // Lengths around the 4-byte padding.
        for address in ["/a", "/ab", "/abc", "/abcd", "/abcde"] {
            let rule = try rule(address, args: "i", .programChange, [nil, OSCMappingValue(.argument(0))])
            #expect(sent(MIDIEvent(.programChange, data1: 5), [rule]) == libloBytes(address, [.i(5)]))
        }
    }

    @Test func intArgumentsAreRoundedHalvesAwayFromZero() throws {
        // 0..2 onto 0..1: the MIDI value 1 is 0.5, which rounds up; -1..0 gives -0.5, rounded down.
        let up = try rule("/up", args: "i", .programChange, [nil, scaled(.argument(0), (0, 1), (0, 2))])
        let down = try rule("/down", args: "i", .programChange, [nil, scaled(.argument(0), (-1, 0), (0, 2))])
        #expect(sent(MIDIEvent(.programChange, data1: 1), [up]) == libloBytes("/up", [.i(1)]))
        #expect(sent(MIDIEvent(.programChange, data1: 1), [down]) == libloBytes("/down", [.i(-1)]))
        #expect(sent(MIDIEvent(.programChange, data1: 0), [down]) == libloBytes("/down", [.i(-1)]))
        #expect(sent(MIDIEvent(.programChange, data1: 2), [down]) == libloBytes("/down", [.i(0)]))
    }

    @Test func everyNumberTypeAndTheDatalessTagsAreWritten() throws {
        let wide = try rule(
            "/w/{ch}", args: "ThFdNI", .noteOn,
            [OSCMappingValue(.capture(0)), OSCMappingValue(.argument(1)), scaled(.argument(3), (-1, 1), (0, 127))])
        #expect(
            sent(.noteOn(channel: 15, note: 100, velocity: 127), [wide])
                == libloBytes("/w/16", [.tag("T"), .h(100), .tag("F"), .d(1), .tag("N"), .tag("I")]))
        #expect(
            sent(.noteOn(channel: 0, note: 0, velocity: 0), [wide])
                == libloBytes("/w/1", [.tag("T"), .h(0), .tag("F"), .d(-1), .tag("N"), .tag("I")]))
        let narrow = try rule(
            "/if", args: "if", .noteOn, [nil, OSCMappingValue(.argument(0)), scaled(.argument(1), (0, 1), (0, 127))])
        #expect(sent(.noteOn(channel: 0, note: 60, velocity: 127), [narrow]) == libloBytes("/if", [.i(60), .f(1)]))
    }

    @Test func capturesAreWrittenInDecimalNegativeToo() throws {
        let offset = try rule(
            "/offset/ch{c}/v{v}x", args: "", .pitchBend, [OSCMappingValue(.capture(0)), OSCMappingValue(.capture(1))])
        #expect(sent(.pitchBend(channel: 4, bend: -100), [offset]) == libloBytes("/offset/ch5/v-100x", []))
        #expect(sent(.pitchBend(channel: 15, bend: 8191), [offset]) == libloBytes("/offset/ch16/v8191x", []))
        #expect(sent(.pitchBend(channel: 0, bend: 0), [offset]) == libloBytes("/offset/ch1/v0x", []))
        #expect(sent(.pitchBend(channel: 0, bend: -8192), [offset]) == libloBytes("/offset/ch1/v-8192x", []))
    }

    @Test func fourteenBitKindsSendTheirParameterAndValue() throws {
        let nrpn = try rule(
            "/nrpn/{p}", args: "f", .nrpn,
            [nil, OSCMappingValue(.capture(0)), scaled(.argument(0), (0, 1), (0, 16383))])
        #expect(
            sent(MIDIEvent(.nrpn, value: 16383, parameter: 1000), [nrpn]) == libloBytes("/nrpn/1000", [.f(1)]))
        let position = try rule("/pos", args: "i", .songPosition, [OSCMappingValue(.argument(0))])
        #expect(sent(MIDIEvent(.songPosition, value: 4112), [position]) == libloBytes("/pos", [.i(4112)]))
        let start = try rule("/transport/play", args: "T", .start, [])
        #expect(sent(MIDIEvent(.start), [start]) == libloBytes("/transport/play", [.tag("T")]))
    }

    @Test func theWriterAndTheBufferPathsWriteTheSameBytes() throws {
        let formatter = OSCEventFormatter(scheme: .none, portNames: ["keys"], mappings: [fader])
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64, alignment: 4)
        defer { buffer.deallocate() }
        let size = formatter.write(cc(9, 100), into: buffer)
        #expect(Array(buffer.prefix(size)) == formatted(cc(9, 100), formatter))
        // Too small: nothing, and no fallback to the scheme.
        let small = UnsafeMutableRawBufferPointer(rebasing: buffer[..<12])
        #expect(formatter.write(cc(9, 100), into: small) == 0)
    }
}

/// Which events a rule takes, and what happens to the rest.
@Suite struct MappingFormatterMatchTests {
    static let channelTen = try! rule(
        "/drum/{n}", args: "f", .noteOn,
        [
            OSCMappingValue(.constant(10)), OSCMappingValue(.capture(0)),
            scaled(.argument(0), (0, 1), (0, 127)),
        ])

    @Test func constantsAndTheDefaultChannelMustMatch() {
        // fader names no channel: channel 1 only.
        #expect(sent(cc(7, 64, channel: 1), [fader]) == nil)
        #expect(
            sent(.noteOn(channel: 9, note: 36, velocity: 127), [Self.channelTen]) == libloBytes("/drum/36", [.f(1)]))
        #expect(sent(.noteOn(channel: 0, note: 36, velocity: 127), [Self.channelTen]) == nil)
        // Other kinds never match.
        #expect(sent(.noteOn(channel: 0, note: 7, velocity: 64), [fader]) == nil)
    }

    @Test func aNoteOffIsANoteOnWithVelocityZeroUnlessANoteOffRuleTakesIt() throws {
        let off = MIDIEvent.noteOff(channel: 9, note: 36, velocity: 64)
        #expect(sent(off, [Self.channelTen]) == libloBytes("/drum/36", [.f(0)]))
        // A note_off rule comes first, and a velocity it does not set is not compared.
        let release = try rule(
            "/release/{n}", args: "", .noteOff, [OSCMappingValue(.constant(10)), OSCMappingValue(.capture(0)), nil])
        #expect(sent(off, [Self.channelTen, release]) == libloBytes("/release/36", []))
    }

    @Test func aScaledCaptureOutsideItsRangeMatchesNothing() throws {
        let push = try rule(
            "/2/push{n}", args: "f", .noteOn,
            [
                OSCMappingValue(.constant(10)), scaled(.capture(0), (1, 16), (36, 51)),
                scaled(.argument(0), (0, 1), (0, 127)),
            ])
        #expect(sent(.noteOn(channel: 9, note: 36, velocity: 127), [push]) == libloBytes("/2/push1", [.f(1)]))
        #expect(sent(.noteOn(channel: 9, note: 51, velocity: 127), [push]) == libloBytes("/2/push16", [.f(1)]))
        #expect(sent(.noteOn(channel: 9, note: 52, velocity: 127), [push]) == nil)
        #expect(sent(.noteOn(channel: 9, note: 35, velocity: 127), [push]) == nil)
    }

    @Test func theFirstMatchingRuleWins() throws {
        let seven = try rule(
            "/volume", args: "i", .controlChange, [nil, OSCMappingValue(.constant(7)), OSCMappingValue(.argument(0))])
        #expect(sent(cc(7, 5), [seven, fader]) == libloBytes("/volume", [.i(5)]))
        #expect(sent(cc(7, 5), [fader, seven]) == libloBytes("/fader/7", [.f(Float(5.0 / 127.0))]))
        #expect(sent(cc(8, 5), [seven, fader]) == libloBytes("/fader/8", [.f(Float(5.0 / 127.0))]))
    }

    @Test func aValueUsedTwiceMustAgree() throws {
        // /same/{n}: controller n with value n.
        let same = try rule(
            "/same/{n}", args: "", .controlChange, [nil, OSCMappingValue(.capture(0)), OSCMappingValue(.capture(0))])
        #expect(sent(cc(5, 5), [same]) == libloBytes("/same/5", []))
        #expect(sent(cc(5, 6), [same]) == nil)
    }

    @Test func unmatchedEventsFallBackToTheSchemeOrAreDropped() {
        let withScheme = OSCEventFormatter(scheme: .default, portNames: ["keys"], mappings: [fader])
        #expect(formatted(cc(7, 64), withScheme) == libloBytes("/fader/7", [.f(Float(64.0 / 127.0))]))
        #expect(formatted(cc(7, 64, channel: 1), withScheme) == libloBytes("/midi/keys/2/cc", [.i(7), .i(64)]))
        #expect(formatted(MIDIEvent(.clock), withScheme) == libloBytes("/midi/keys/clock", []))
        let only = OSCEventFormatter(scheme: .none, portNames: ["keys"], mappings: [fader])
        #expect(formatted(cc(7, 64, channel: 1), only) == nil)
        #expect(formatted(MIDIEvent(.clock), only) == nil)
    }

    @Test(arguments: [
        ("/a/*", "f", OSCMappingReverseError.wildcard(address: "/a/*")),
        ("/a/{n}/{m}", "f", .captureNotSet(address: "/a/{n}/{m}", name: "m")),
        ("/a/{n}", "fs", .argumentNotNumeric(index: 1, tag: UInt8(ascii: "s"))),
        ("/a/{n}", "ff", .argumentNotSet(index: 1, tag: UInt8(ascii: "f"))),
        ("/a/{n}", String(repeating: "T", count: 17), .tooManyArguments(17)),
        ("/a/{n}", "", .argumentNotListed(index: 0)),
        ("/a", "f", .captureNotInAddress(address: "/a", index: 0)),
    ])
    func rulesThatCannotBeSentAreRefused(_ address: String, _ args: String, _ error: OSCMappingReverseError) throws {
        let rule = try rule(
            address, args: args, .controlChange, [nil, OSCMappingValue(.capture(0)), OSCMappingValue(.argument(0))])
        #expect(throws: error) { try rule.checkSendable() }
        // The formatter leaves it out rather than failing.
        #expect(OSCEventFormatter(scheme: .none, portNames: [], mappings: [rule]).mappings.isEmpty)
    }

    @Test func aRuleWithoutArgumentTypesIsRefused() throws {
        let untyped = try rule("/a/{n}", args: nil, .programChange, [nil, OSCMappingValue(.capture(0))])
        #expect(throws: OSCMappingReverseError.argumentTypesMissing) { try untyped.checkSendable() }
    }
}

/// OSC -> MIDI -> OSC through the same rule gives the value back within one MIDI step.
@Suite struct MappingRoundTripTests {
    struct Case: CustomStringConvertible, Sendable {
        var args: String
        var kind: MIDIEventKind
        var input: (Double, Double)
        var output: (Double, Double)
        var description: String { "\(args) \(kind) \(input) -> \(output)" }
    }

    static let cases: [Case] = [
        Case(args: "f", kind: .controlChange, input: (0, 1), output: (0, 127)),
        Case(args: "f", kind: .controlChange, input: (1, 0), output: (0, 127)),
        Case(args: "f", kind: .controlChange, input: (0, 1), output: (127, 0)),
        Case(args: "d", kind: .controlChange, input: (-10, 10), output: (20, 100)),
        Case(args: "i", kind: .controlChange, input: (0, 1000), output: (0, 127)),
        Case(args: "i", kind: .controlChange, input: (0, 10), output: (0, 127)),
        Case(args: "f", kind: .pitchBend, input: (-1, 1), output: (-8192, 8191)),
        Case(args: "h", kind: .pitchBend, input: (127, 0), output: (-8192, 8191)),
        Case(args: "f", kind: .nrpn, input: (0, 1), output: (0, 16383)),
    ]

    @Test(arguments: cases)
    func oscToMIDIToOSCGivesTheValueBackWithinOneStep(_ test: Case) throws {
        let valueField = OSCMappingRule.fields(for: test.kind).count - 1
        var values: [OSCMappingValue?] = Array(repeating: nil, count: valueField + 1)
        values[valueField] = scaled(.argument(0), test.input, test.output)
        if test.kind != .pitchBend { values[1] = OSCMappingValue(.capture(0)) }
        let address = test.kind == .pitchBend ? "/bend" : "/ctl/{n}"
        let mapping = try rule(address, args: test.args, test.kind, values)
        try mapping.checkSendable()
        let translator = OSCToMIDITranslator(outputNames: ["synth"], rules: [mapping])
        let formatter = OSCEventFormatter(scheme: .none, portNames: ["keys"], mappings: [mapping])
        let step = abs(test.input.1 - test.input.0) / abs(test.output.1 - test.output.0)
        let low = min(test.input.0, test.input.1)
        let high = max(test.input.0, test.input.1)
        let isInt = test.args == "i" || test.args == "h"
        var checked = 0
        // From a bit below the range to a bit above, in 2000 steps (clamped at both ends).
        for i in 0...2000 {
            var x = low - (high - low) * 0.1 + (high - low) * 1.2 * Double(i) / 2000
            if isInt { x = x.rounded() }
            let sentAddress = test.kind == .pitchBend ? "/bend" : "/ctl/\(i % 128)"
            let argument: OSCArgument =
                switch test.args {
                case "f": .float32(Float(x))
                case "d": .double(x)
                case "h": .int64(Int64(x))
                default: .int32(Int32(x))
                }
            let bytes = try OSCMessage(sentAddress, [argument]).serialize()
            var events: [MIDIEvent] = []
            let outcome = try bytes.withUnsafeBytes { raw in
                try translator.translate(OSCMessageView(raw)) { events.append($0) }
            }
            #expect(outcome == .translated)
            let event = try #require(events.first)
            let back = try #require(formatted(event, formatter), "\(event)")
            let message = try back.withUnsafeBytes { OSCMessage(try OSCMessageView($0)) }
            #expect(message.address == sentAddress)
            let returned: Double =
                switch message.arguments.first {
                case .float32(let value): Double(value)
                case .double(let value): value
                case .int32(let value): Double(value)
                case .int64(let value): Double(value)
                default: .nan
                }
            let clamped = min(max(test.args == "f" ? Double(Float(x)) : x, low), high)
            let error = abs(returned - clamped)
            let epsilon = 1e-6 * (high - low)
            #expect(error <= step + epsilon, "x \(x) -> \(event) -> \(returned): more than one step")
            // To the nearest MIDI value and back loses at most half a step (an int rounds once more).
            if !isInt { #expect(error <= step / 2 + epsilon, "x \(x) -> \(event) -> \(returned)") }
            checked += 1
        }
        #expect(checked == 2001)
    }
}
