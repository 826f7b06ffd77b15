import JSON
import OSC
import OSCMapping
import OSCQuery
import Synchronization
import Testing

/// A value source for tests: CC methods are readable, `/midi/synth_a/1/cc` has a value.
final class FakeValues: OSCQueryValueSource {
    let stored = Mutex<[String: [OSCArgument]]>(["/midi/synth_a/1/cc": [.int32(7), .int32(100)]])

    func value(at path: String) -> [OSCArgument]? { stored.withLock { $0[path] } }
    func isReadable(_ path: String) -> Bool { path.hasSuffix("/cc") }
    func takeChanges(_ body: (String) -> Void) {}
}

@Suite struct OSCQueryValueTests {
    static let namespace = OSCQueryNamespace(
        outputNames: ["Synth A"], families: [.default], mappings: [], sysex: false)
    static let hostInfo = OSCQueryHostInfo(name: "Studio", oscAddress: nil, oscPort: 57200, oscTransport: "UDP")

    static func answer(_ path: String, _ attributes: [String] = [], values: FakeValues? = FakeValues())
        -> OSCQueryAnswer
    {
        namespace.answer(path: path, attributes: attributes, hostInfo: hostInfo, values: values)
    }

    @Test func aReadableMethodIsAccess3WithItsValueAndOthersStay2() throws {
        #expect(Self.answer("/midi/synth_a/1/cc", ["ACCESS"]).body == #"{"ACCESS":3}"#)
        #expect(Self.answer("/midi/synth_a/1/note_on", ["ACCESS"]).body == #"{"ACCESS":2}"#)
        #expect(
            Self.answer("/midi/synth_a/1/cc", ["VALUE"]) == OSCQueryAnswer(status: 200, body: #"{"VALUE":[7,100]}"#))
        // Readable with no value yet: an empty object, not 204.
        #expect(Self.answer("/midi/synth_a/2/cc", ["VALUE"]) == OSCQueryAnswer(status: 200, body: "{}"))
        #expect(Self.answer("/midi/synth_a/1/note_on", ["VALUE"]).status == 204)
        #expect(Self.answer("/midi/synth_a/1/cc", ["VALUE"], values: nil).status == 204)
        let node = try JSON5Reader.parse(Self.answer("/midi/synth_a/1/cc").body)
        guard case .object(let fields) = node else {
            Issue.record("not an object")
            return
        }
        #expect(fields["VALUE"] == .array([.number(7), .number(100)]) && fields["ACCESS"] == .number(3))
        // Below a container too, unless left out (the kept root).
        let channel = Self.namespace.root.node(at: ["midi", "synth_a", "1"])!
        guard case .object(let contents)? = channel.attributes(values: FakeValues())["CONTENTS"],
            case .object(let cc)? = contents["cc"]
        else {
            Issue.record("no CONTENTS")
            return
        }
        #expect(cc["VALUE"] == .array([.number(7), .number(100)]))
        guard case .object(let bare)? = channel.attributes(values: FakeValues(), withValues: false)["CONTENTS"],
            case .object(let bareCC)? = bare["cc"]
        else { return }
        #expect(bareCC["VALUE"] == nil && bareCC["ACCESS"] == .number(3))
    }

    @Test func valuesAreJSONAsTheProposalsTypeTableSays() {
        #expect(
            OSCQueryNode.json([
                .int32(1), .float32(0.5), .string("a"), .true, .blob([1]),
                .midi(port: 0, status: 1, data1: 2, data2: 3),
            ])
                == .array([.number(1), .number(0.5), .string("a"), .bool(true), .null, .null]))
    }

    @Test func hostInfoListsExactlyWhatTheServerGives() throws {
        guard case .object(let info) = try JSON5Reader.parse(Self.answer("/", ["HOST_INFO"]).body),
            case .object(let extensions)? = info["EXTENSIONS"]
        else {
            Issue.record("no EXTENSIONS")
            return
        }
        let on = extensions.filter { $0.value == .bool(true) }.keys.sorted()
        #expect(on == ["ACCESS", "DESCRIPTION", "RANGE", "VALUE"])
        #expect(info["WS_PORT"] == nil && info["WS_IP"] == nil)
        let webSocket = OSCQueryHostInfo.extensions(values: true, webSocket: true).filter(\.value).keys.sorted()
        #expect(
            webSocket == [
                "ACCESS", "DESCRIPTION", "IGNORE", "LISTEN", "PATH_ADDED", "PATH_CHANGED", "PATH_REMOVED", "RANGE",
                "VALUE",
            ])
        #expect(OSCQueryHostInfo.extensions(values: false, webSocket: false)["VALUE"] == false)
    }

    @Test func aNamespaceChangeIsToldAsPathsOrContainersRemovedAndAddedOrOnePathChangedPastTheLimit() {
        let before = Self.namespace.root.methodPaths
        #expect(before.count == 170 && before.contains("/midi/synth_a/1/cc") && !before.contains("/midi"))
        let fewer: Set<String> = before.subtracting(["/midi/synth_a/1/cc"]).union(["/midi/new"])
        #expect(
            OSCQueryPathChange.changes(from: before, to: fewer) == [
                .removed("/midi/synth_a/1/cc"), .added("/midi/new"),
            ])
        // An output replaced by another: its container goes, the other's comes, one change each.
        let other = OSCQueryNamespace(outputNames: ["Piano"], families: [.default], mappings: [], sysex: false)
        #expect(
            OSCQueryPathChange.changes(from: before, to: other.root.methodPaths) == [
                .removed("/midi/synth_a"), .added("/midi/piano"),
            ])
        // 33 methods gone from containers that stay: past the limit.
        let scattered = Set((1...16).flatMap { ["/midi/synth_a/\($0)/cc", "/midi/synth_a/\($0)/program"] })
            .union(["/midi/synth_a/1/note_on"])
        #expect(OSCQueryPathChange.changes(from: before, to: before.subtracting(scattered)) == [.changed("/")])
        #expect(OSCQueryPathChange.changes(from: before, to: before).isEmpty)
        #expect(OSCQueryPathChange.removed("/a").text == #"{"COMMAND":"PATH_REMOVED","DATA":"/a"}"#)
    }

    @Test(
        arguments: [
            (#"{"COMMAND":"LISTEN","DATA":"/midi/a/1/cc"}"#, OSCQueryCommand.listen("/midi/a/1/cc")),
            (#"{"COMMAND":"IGNORE","DATA":"/x"}"#, .ignore("/x")),
            (#"{"COMMAND":"STATUS"}"#, .status), (#"{"COMMAND":"MONITOR"}"#, .monitor),
            (#"{"COMMAND":"PAUSE"}"#, .pause), (#"{"COMMAND":"pause"}"#, nil),
            ("LISTEN /x", nil), (#"{"COMMAND":"LISTEN","DATA":7}"#, nil), (#"{"COMMAND":"LISTEN","DATA":"x"}"#, nil),
            (#"["LISTEN","/x"]"#, nil), (#"{"COMMAND":"START_OSC_STREAMING","DATA":"/x"}"#, nil),
            (#"{"COMMAND":"LISTEN","DATA":"/"# + String(repeating: "a", count: 1100) + #""}"#, nil),
        ] as [(String, OSCQueryCommand?)])
    func listenAndIgnoreAreReadAndAnythingElseRefused(text: String, command: OSCQueryCommand?) {
        #expect(OSCQueryCommand(text) == command)
    }
}
