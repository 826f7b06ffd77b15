import ALSASequencer
import Endpoints
import Testing

@Suite struct PortResolutionTests {
    static let forms = PortSpecParseError.acceptedForms
    static let listed = "ports are listed by `aseqosc ports`"
    static let virtuals =
        "16:0 Virtual Raw MIDI 0-0:VirMIDI 0-0, 17:0 Virtual Raw MIDI 0-1:VirMIDI 0-1, "
        + "18:0 Virtual Raw MIDI 0-2:VirMIDI 0-2, 19:0 Virtual Raw MIDI 0-3:VirMIDI 0-3"
    static let launchkeys =
        "28:0 Launchkey MK3:Launchkey MK3 LKMK3 MIDI In, 28:1 Launchkey MK3:Launchkey MK3 LKMK3 DAW In, "
        + "32:0 Launchkey MK3 (2):Launchkey MK3 LKMK3 MIDI In, 32:1 Launchkey MK3 (2):Launchkey MK3 LKMK3 DAW In"
    static let pedal = "36:0 USB MIDI Pedal:USB MIDI Pedal MIDI 1"
    static let ownClient = "is aseqosc's own client; name another client's port, as listed by `aseqosc ports`"

    static func none(_ text: String) -> String {
        "no ALSA port matches '\(text)'; \(listed)"
    }

    static func notASource(_ text: String, _ ports: String) -> String {
        "'\(text)' is not a source: aseqosc cannot read from \(ports); \(listed)"
    }

    static func notADestination(_ text: String, _ ports: String) -> String {
        "'\(text)' is not a destination: aseqosc cannot write to \(ports); \(listed)"
    }

    static func ambiguous(_ text: String, _ candidates: String) -> String {
        "'\(text)' is ambiguous: \(candidates); write more of the name or use client:port"
    }

    // Not inline in `@Test(arguments:)`: Swift 6.0's compiler crashes on string interpolation there.
    static let studioCases: [(String, PortSpec.Direction, String)] = [
        // Numbers resolve by number only; a client number gives its first port of the direction.
        ("24:0", PortSpec.Direction.source, "24:0"),
        ("24:1", .destination, "24:1"),
        ("024:01", .source, "24:1"),
        ("24", .source, "24:0"),
        ("130", .source, "130:1"),
        ("130", .destination, "130:0"),
        ("0:1", .source, "0:1"),
        ("0:1", .destination, notADestination("0:1", "0:1 System:Announce")),
        ("130:0", .source, notASource("130:0", "130:0 SuperCollider:in")),
        ("20", .source, none("20")),
        ("24:5", .source, none("24:5")),
        ("128:1", .source, "'128:1' \(ownClient)"),
        ("128", .destination, "'128' \(ownClient)"),

        // Exact names: a client name (its first port), client:port names, client:port number.
        ("KeyStep Pro", .source, "24:0"),
        ("KeyStep Pro:KeyStep Pro MIDI 2", .source, "24:1"),
        ("KeyStep Pro:1", .destination, "24:1"),
        ("Midi Through", .destination, "14:0"),
        ("Midi Through:Midi Through Port-0", .source, "14:0"),
        ("Midi Through:0", .source, "14:0"),
        ("Virtual Raw MIDI 0-2", .destination, "18:0"),
        ("SuperCollider", .source, "130:1"),
        ("SuperCollider", .destination, "130:0"),
        ("SuperCollider:out", .source, "130:1"),
        ("SuperCollider:in", .source, notASource("SuperCollider:in", "130:0 SuperCollider:in")),
        ("SuperCollider:1", .destination, notADestination("SuperCollider:1", "130:1 SuperCollider:out")),

        // A ':' inside a client name.
        ("Foo:Bar", .source, "129:0"),
        ("Foo:Bar:Baz", .source, "129:0"),
        ("Foo:Bar:0", .destination, "129:0"),
        ("Foo:Bar:1", .source, none("Foo:Bar:1")),

        // Prefixes, case-sensitive, when nothing matches exactly.
        ("KeyStep", .source, "24:0"),
        ("KeyStep Pro:KeyStep Pro MIDI", .source, "24:0"),
        ("Midi", .destination, "14:0"),
        ("Super", .destination, "130:0"),
        ("Foo", .source, "129:0"),
        ("Foo:B", .source, "129:0"),
        ("USB", .source, "36:0"),
        ("USB", .destination, notADestination("USB", pedal)),
        ("keystep", .source, none("keystep")),
        ("KeyStep Pro:3", .source, none("KeyStep Pro:3")),
        ("VirMIDI 0-0", .source, none("VirMIDI 0-0")),
        ("KeyStep.*", .source, none("KeyStep.*")),

        // Ambiguous prefixes: ports of more than one client.
        ("Virtual", .source, ambiguous("Virtual", virtuals)),
        ("Virtual Raw MIDI 0-", .destination, ambiguous("Virtual Raw MIDI 0-", virtuals)),
        ("Launchkey", .source, ambiguous("Launchkey", launchkeys)),

        // Identical clients: the first keeps the bare name, the second is "(2)"; exact beats prefix.
        ("Launchkey MK3", .source, "28:0"),
        ("Launchkey MK3:Launchkey MK3 LKMK3 DAW In", .source, "28:1"),
        ("Launchkey MK3:1", .destination, "28:1"),
        ("Launchkey MK3 (2)", .source, "32:0"),
        ("Launchkey MK3 (2):1", .source, "32:1"),
        ("Launchkey MK3 (2):Launchkey MK3 LKMK3 DAW In", .destination, "32:1"),
        ("Launchkey MK3 (", .source, "32:0"),
        ("Launchkey MK3 (3)", .source, none("Launchkey MK3 (3)")),

        // The System client and our own client are never matched by name, regex or *.
        ("System", .source, none("System")),
        ("System:Announce", .source, none("System:Announce")),
        ("aseqosc", .source, none("aseqosc")),
        ("aseqosc:midi out", .source, none("aseqosc:midi out")),
        ("/Timer|Announce/", .source, none("/Timer|Announce/")),
        ("/aseqosc/", .destination, none("/aseqosc/")),

        // Regular expressions: every match, in address order, against real or unique names.
        ("/KeyStep.*/", .source, "24:0 24:1"),
        ("/Launchkey/", .source, "28:0 28:1 32:0 32:1"),
        ("/^Launchkey MK3:/", .source, "28:0 28:1 32:0 32:1"),
        (#"/Launchkey MK3 \(2\)/"#, .source, "32:0 32:1"),
        ("/DAW In$/", .destination, "28:1 32:1"),
        ("/Virtual Raw MIDI 0-[13]/", .destination, "17:0 19:0"),
        ("/(?i)keystep pro:keystep pro midi 2/", .source, "24:1"),
        ("/Foo:Bar/", .source, "129:0"),
        ("/^SuperCollider:in$/", .source, notASource("/^SuperCollider:in$/", "130:0 SuperCollider:in")),
        ("/Pedal/", .destination, notADestination("/Pedal/", pedal)),
        ("/Nord/", .source, none("/Nord/")),

        // * is every hardware port of the direction: not Midi Through, not applications.
        ("*", .source, "16:0 17:0 18:0 19:0 24:0 24:1 28:0 28:1 32:0 32:1 36:0"),
        ("*", .destination, "16:0 17:0 18:0 19:0 24:0 24:1 28:0 28:1 32:0 32:1"),

        // Invalid syntax fails before resolution.
        ("", .source, "empty port spec; \(forms)"),
        ("300:0", .source, "'300:0': 300 is not a client or port number (0-255); \(forms)"),
        ("/KeyStep", .source, "'/KeyStep' starts a regular expression but does not end with '/'; \(forms)"),
        (
            "/[/", .source,
            "'/[/' is not a valid regular expression: expected custom character class members; \(forms)"
        ),
    ]

    @Test(arguments: studioCases)
    func specResolvesInTheStudio(text: String, direction: PortSpec.Direction, expected: String) {
        #expect(FakeStudio.outcome(text, direction) == expected)
    }

    @Test(arguments: ["KeyStep", "Launchkey MK3 (2):1", "/Launchkey/", "*", "Virtual", "130"])
    func resolutionDoesNotDependOnTheOrderPortsAreListedIn(text: String) {
        let shuffled = FakeStudio.ports.reversed() + []
        #expect(FakeStudio.outcome(text, .source, in: shuffled) == FakeStudio.outcome(text, .source))
    }

    @Test func withoutAnOwnClientEveryClientCanBeNamed() throws {
        let found = try PortSpec(parsing: "aseqosc").resolve(
            in: FakeStudio.ports, direction: .source, excludingClient: nil)
        #expect(found.map(\.address) == [PortAddress(client: 128, port: 1)])
    }

    @Test func aClientNameAndAClientPortNameThatAreEqualAreAmbiguous() {
        let ports = [
            FakeStudio.port(40, 0, "Foo", "Bar"),
            FakeStudio.port(41, 0, "Foo:Bar", "x"),
        ]
        #expect(
            FakeStudio.outcome("Foo:Bar", .source, in: ports)
                == "'Foo:Bar' is ambiguous: 40:0 Foo:Bar, 41:0 Foo:Bar:x; write more of the name or use client:port")
        #expect(FakeStudio.outcome("Foo:Bar:x", .source, in: ports) == "41:0")
        #expect(FakeStudio.outcome("Foo:0", .source, in: ports) == "40:0")
    }

    @Test func anExactMatchInTheDirectionBeatsAPrefixMatch() {
        let ports = [
            FakeStudio.port(40, 0, "Synth Pro", "in"),
            FakeStudio.port(41, 0, "Synth", "in"),
        ]
        #expect(FakeStudio.outcome("Synth", .destination, in: ports) == "41:0")
        #expect(FakeStudio.outcome("Synth ", .destination, in: ports) == "40:0")
    }

    @Test func aResolutionErrorKeepsTheCandidates() throws {
        let spec = try PortSpec(parsing: "Virtual")
        #expect(throws: PortResolutionError.self) {
            try spec.resolve(in: FakeStudio.ports, direction: .source, excludingClient: nil)
        }
        do {
            _ = try spec.resolve(in: FakeStudio.ports, direction: .source, excludingClient: nil)
        } catch {
            guard case .ambiguous(let thrownSpec, let candidates) = error else {
                Issue.record("expected .ambiguous, got \(error)")
                return
            }
            #expect(thrownSpec == spec)
            #expect(candidates.map(\.address.client) == [16, 17, 18, 19])
        }
    }
}
