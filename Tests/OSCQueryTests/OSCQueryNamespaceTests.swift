import JSON
import MIDI
import OSCMapping
import OSCQuery
import Testing

@Suite struct OSCQueryNamespaceTests {
    static let hostInfo = OSCQueryHostInfo(name: "Studio", oscAddress: nil, oscPort: 57200, oscTransport: "UDP")

    static func namespace(
        families: Set<OSCAddressFamily> = Set(OSCAddressFamily.allCases),
        mappings: [OSCMappingRule] = [], sysex: Bool = false
    ) -> OSCQueryNamespace {
        OSCQueryNamespace(outputNames: ["Synth A", "thru"], families: families, mappings: mappings, sysex: sysex)
    }

    static func attributes(_ namespace: OSCQueryNamespace, _ path: String) -> [String: JSONValue]? {
        namespace.root.node(at: path.split(separator: "/"))?.attributes()
    }

    static func range(_ low: Double, _ high: Double) -> JSONValue {
        .object(["MIN": .number(low), "MAX": .number(high)])
    }

    @Test func everyDefaultSchemeAddressOfEveryOutputAndChannelIsAWriteOnlyMethodWithItsTypesAndRanges() throws {
        let namespace = Self.namespace()
        let noteOn = try #require(Self.attributes(namespace, "/midi/synth_a/1/note_on"))
        #expect(noteOn["TYPE"] == .string("ii"))
        #expect(noteOn["ACCESS"] == .number(2))
        #expect(noteOn["RANGE"] == .array([Self.range(0, 127), Self.range(0, 127)]))
        #expect(noteOn["FULL_PATH"] == .string("/midi/synth_a/1/note_on"))
        #expect(noteOn["CONTENTS"] == nil)
        let bend = try #require(Self.attributes(namespace, "/midi/thru/16/pitch_bend"))
        #expect(bend["RANGE"] == .array([Self.range(-8192, 8191)]))
        #expect(
            Self.attributes(namespace, "/midi/thru/16/cc14")?["RANGE"]
                == .array([Self.range(0, 31), Self.range(0, 16383)]))
        #expect(Self.attributes(namespace, "/midi/thru/17/note_on") == nil)
        let clock = try #require(Self.attributes(namespace, "/midi/synth_a/clock"))
        #expect(clock["TYPE"] == nil && clock["ACCESS"] == .number(2) && clock["CONTENTS"] == nil)
        // 10 channel messages x 16 channels + 10 system messages per output, o2m's 13 per
        // output, TouchOSC's /midi.
        #expect(namespace.root.methodCount == 2 * (160 + 10) + 2 * 13 + 1)
    }

    @Test func sysExAddressesAreListedOnlyWhenTheInputTakesSysEx() {
        #expect(Self.attributes(Self.namespace(), "/midi/synth_a/sysex") == nil)
        #expect(Self.attributes(Self.namespace(), "/sysex") == nil)
        let on = Self.namespace(sysex: true)
        #expect(Self.attributes(on, "/midi/synth_a/sysex")?["TYPE"] == .string("b"))
        #expect(Self.attributes(on, "/midi/synth_a/sysex")?["RANGE"] == .array([.null]))
        #expect(Self.attributes(on, "/sysex")?["TYPE"] == .string("b"))
    }

    @Test func touchOSCsMidiIsAMethodAndTheDefaultSchemesContainerAtOnce() throws {
        let midi = try #require(Self.attributes(Self.namespace(), "/midi"))
        #expect(midi["TYPE"] == .string("m"))
        guard case .object(let contents) = midi["CONTENTS"] else {
            Issue.record("no CONTENTS")
            return
        }
        #expect(Set(contents.keys) == ["synth_a", "thru"])
    }

    @Test func onlyTheAcceptedFamiliesAreListed() {
        let osmid = Self.namespace(families: [.osmid])
        #expect(Self.attributes(osmid, "/midi") == nil)
        #expect(Self.attributes(osmid, "/synth_a/note_on")?["TYPE"] == .string("iii"))
        #expect(
            Self.attributes(osmid, "/synth_a/note_on")?["RANGE"]
                == .array([Self.range(1, 16), Self.range(0, 127), Self.range(0, 127)]))
        #expect(
            Self.attributes(osmid, "/thru/pitch_bend")?["RANGE"] == .array([Self.range(1, 16), Self.range(0, 16383)]))
        let none = Self.namespace(families: [])
        #expect(none.root.methodCount == 0)
    }

    static func rule(_ address: String, args: String? = nil, kind: MIDIEventKind, _ values: [OSCMappingValue?])
        throws -> OSCMappingRule
    {
        try OSCMappingRule(
            address: OSCMappingAddress(address), argumentTypes: args.map { Array($0.utf8) }, output: .port(0),
            kind: kind,
            values: values)
    }

    @Test func aMappingsCapturesAreListedOverTheValuesTheirFieldTakesAndItsArgumentsOverTheirScale() throws {
        let faders = try Self.rule(
            "/1/fader{n}", kind: .controlChange,
            [
                nil, OSCMappingValue(.capture(0), scale: OSCLinearScale(input: (1, 8), output: (20, 27))),
                OSCMappingValue(.argument(0), scale: OSCLinearScale(input: (0, 1), output: (0, 127))),
            ])
        let namespace = Self.namespace(families: [], mappings: [faders])
        #expect(namespace.root.methodCount == 8)
        #expect(namespace.unlistedMappings.isEmpty)
        let fader = try #require(Self.attributes(namespace, "/1/fader8"))
        #expect(fader["TYPE"] == .string("f"))
        #expect(fader["RANGE"] == .array([Self.range(0, 1)]))
        #expect(fader["DESCRIPTION"] == .string("mapping 1 (/1/fader{n}): control change to output 'Synth A'"))
        #expect(Self.attributes(namespace, "/1/fader9") == nil)
        #expect(Self.attributes(namespace, "/1/fader0") == nil)
    }

    @Test func aMappingWithArgsKeepsThemAndAChannelCaptureGivesSixteenAddresses() throws {
        let notes = try Self.rule(
            "/keys/{ch}/note", args: "iis", kind: .noteOn,
            [OSCMappingValue(.capture(0)), OSCMappingValue(.argument(0)), OSCMappingValue(.argument(1))])
        let namespace = Self.namespace(families: [], mappings: [notes])
        #expect(namespace.root.methodCount == 16)
        let note = try #require(Self.attributes(namespace, "/keys/16/note"))
        #expect(note["TYPE"] == .string("iis"))
        #expect(note["RANGE"] == .array([Self.range(0, 127), Self.range(0, 127), .null]))
    }

    @Test func mappingsWhoseAddressesCannotBeListedAreCountedAndLeftOut() throws {
        let any = try Self.rule(
            "/mixer/*/level", kind: .controlChange, [nil, OSCMappingValue(.constant(7)), OSCMappingValue(.argument(0))])
        let unread = try Self.rule("/pad{n}", kind: .start, [])
        let tooMany = try Self.rule(
            "/grid/{x}/{y}", kind: .rpn, [nil, OSCMappingValue(.capture(0)), OSCMappingValue(.capture(1))])
        let listed = try Self.rule("/go", kind: .start, [])
        let namespace = Self.namespace(families: [], mappings: [any, unread, tooMany, listed])
        #expect(namespace.unlistedMappings == [0, 1, 2])
        #expect(namespace.root.methodCount == 1)
        #expect(Self.attributes(namespace, "/go")?["TYPE"] == nil)
    }

    @Test func theFirstMethodAtAnAddressKeepsItAsTheInputTriesMappingsFirst() throws {
        let mapped = try Self.rule(
            "/midi/synth_a/1/note_on", args: "f", kind: .noteOn,
            [
                nil, OSCMappingValue(.constant(60)),
                OSCMappingValue(.argument(0), scale: OSCLinearScale(input: (0, 1), output: (0, 127))),
            ])
        let namespace = Self.namespace(mappings: [mapped])
        #expect(Self.attributes(namespace, "/midi/synth_a/1/note_on")?["TYPE"] == .string("f"))
        #expect(Self.attributes(namespace, "/midi/synth_a/2/note_on")?["TYPE"] == .string("ii"))
    }

    @Test func answersFollowTheProposal() throws {
        let namespace = Self.namespace()
        let root = namespace.answer(path: "/", attributes: [], hostInfo: Self.hostInfo)
        #expect(root.status == 200 && root.isJSON)
        let parsed = try JSON5Reader.parse(root.body)
        guard case .object(let fields) = parsed else {
            Issue.record("not an object")
            return
        }
        #expect(fields["FULL_PATH"] == .string("/"))
        #expect(fields["ACCESS"] == .number(0))
        let type = namespace.answer(path: "/midi/synth_a/1/note_on", attributes: ["TYPE"], hostInfo: Self.hostInfo)
        #expect(type == OSCQueryAnswer(status: 200, body: #"{"TYPE":"ii"}"#))
        let slash = namespace.answer(path: "/midi/synth_a/1/note_on/", attributes: ["ACCESS"], hostInfo: Self.hostInfo)
        #expect(slash == OSCQueryAnswer(status: 200, body: #"{"ACCESS":2}"#))
        #expect(
            namespace.answer(path: "/midi/synth_a/1/note_on", attributes: ["VALUE"], hostInfo: Self.hostInfo).status
                == 204)
        #expect(namespace.answer(path: "/midi/synth_a", attributes: ["TYPE"], hostInfo: Self.hostInfo).status == 204)
        #expect(namespace.answer(path: "/nowhere", attributes: [], hostInfo: Self.hostInfo).status == 404)
        #expect(namespace.answer(path: "/nowhere", attributes: ["TYPE"], hostInfo: Self.hostInfo).status == 404)
        #expect(namespace.answer(path: "/", attributes: ["GABBAGABBAHEY"], hostInfo: Self.hostInfo).status == 400)
        #expect(namespace.answer(path: "/", attributes: ["TYPE", "RANGE"], hostInfo: Self.hostInfo).status == 400)
        let info = namespace.answer(path: "/nowhere", attributes: ["HOST_INFO"], hostInfo: Self.hostInfo)
        #expect(info.status == 200)
        guard case .object(let host) = try JSON5Reader.parse(info.body) else {
            Issue.record("HOST_INFO is not an object")
            return
        }
        #expect(host["NAME"] == .string("Studio"))
        #expect(host["OSC_PORT"] == .number(57200))
        #expect(host["OSC_TRANSPORT"] == .string("UDP"))
        #expect(host["OSC_IP"] == nil)
        guard case .object(let extensions) = host["EXTENSIONS"] else {
            Issue.record("no EXTENSIONS")
            return
        }
        #expect(extensions["RANGE"] == .bool(true) && extensions["VALUE"] == .bool(false))
    }
}
