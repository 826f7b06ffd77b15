import OSCQuery
import Testing

/// The input ports' methods with a value: listed read-only (ACCESS 1) under the `default`
/// scheme's addresses, case kept as that scheme sends them; an output's method at the same
/// address stays the output's.
@Suite struct InputValuesNamespaceTests {
    static let hostInfo = OSCQueryHostInfo(name: "Studio", oscAddress: nil, oscPort: 57200, oscTransport: "UDP")

    @Test func anInputsValueMethodsAreReadOnlyAndAnOutputKeepsItsOwn() {
        let namespace = OSCQueryNamespace(
            outputNames: ["synth"], families: [.default], mappings: [], sysex: false, inputNames: ["Keys", "synth"])
        func access(_ path: String) -> String {
            namespace.answer(path: path, attributes: ["ACCESS"], hostInfo: Self.hostInfo, values: FakeValues()).body
        }
        #expect(access("/midi/Keys/1/cc") == #"{"ACCESS":1}"#)
        #expect(access("/midi/Keys/16/pitch_bend") == #"{"ACCESS":1}"#)
        #expect(namespace.answer(path: "/midi/Keys/1/note_on", attributes: [], hostInfo: Self.hostInfo).status == 404)
        // The output "synth" took /midi/synth/1/cc: it can be set (and read, FakeValues says).
        #expect(access("/midi/synth/1/cc") == #"{"ACCESS":3}"#)
        #expect(
            namespace.root.methodCount
                == OSCQueryNamespace(outputNames: ["synth"], families: [.default], mappings: [], sysex: false).root
                .methodCount + 16 * 8)
    }
}
