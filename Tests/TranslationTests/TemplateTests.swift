import MIDI
import MIDIToOSC
import OSCMapping
import OSCToMIDI
import Testing

@Suite struct TemplateTests {
    static let known = "{port}, {id}, {channel}, {channel0}, {type}, {note}, {controller}"

    // Not inline in `@Test(arguments:)`: Swift 6.0's compiler crashes on string interpolation there.
    static let parseErrorCases: [(String, String)] = [
        ("", "address template '' must start with '/'"),
        ("midi/{port}", "address template 'midi/{port}' must start with '/'"),
        ("/midi/{port", "address template '/midi/{port': '{' at offset 6 is never closed"),
        ("/midi/port}", "address template '/midi/port}': '}' at offset 10 has no matching '{'"),
        ("/midi/{chanel}", "address template '/midi/{chanel}': unknown placeholder '{chanel}'; known: \(known)"),
        ("/midi/{}", "address template '/midi/{}': unknown placeholder '{}'; known: \(known)"),
        ("/midi/{{port}}", "address template '/midi/{{port}}': unknown placeholder '{{port}'; known: \(known)"),
        ("/midi/note on", "address template '/midi/note on': a space is not allowed in an OSC address"),
        ("/midi/*", "address template '/midi/*': '*' is not allowed in an OSC address"),
        ("/midi/#1", "address template '/midi/#1': '#' is not allowed in an OSC address"),
        ("/a,b", "address template '/a,b': ',' is not allowed in an OSC address"),
        ("/a\tb", "address template '/a\tb': control character U+9 is not allowed in an OSC address"),
    ]

    @Test(arguments: parseErrorCases)
    func parseErrorsSayWhatIsWrong(_ template: String, _ message: String) {
        #expect(throws: OSCTemplateError.self) { try OSCAddressTemplate(template) }
        do {
            _ = try OSCAddressTemplate(template)
        } catch {
            #expect(error.description == message)
        }
    }

    @Test func parsesLiteralsAndPlaceholdersInOrder() throws {
        let template = try OSCAddressTemplate("/synth/{channel}/cc/{controller}")
        #expect(
            template.segments == [
                .literal(Array("/synth/".utf8)), .placeholder(.channel), .literal(Array("/cc/".utf8)),
                .placeholder(.controller),
            ])
    }

    @Test(arguments: [
        ("VirMIDI 0-0", "VirMIDI_0-0", "virmidi_0-0"),
        ("  Padded  ", "Padded", "padded"),
        ("a#b*c,d/e?f[g]h{i}j", "a_b_c_d_e_f_g_h_i_j", "a_b_c_d_e_f_g_h_i_j"),
        ("Client:Port 1", "Client:Port_1", "client:port_1"),
        ("Tab\there", "Tab_here", "tab_here"),
        ("Grüße", "Grüße", "grüße"),
        ("", "_", "_"),
        ("   ", "_", "_"),
        ("My Synth: #*,/?[]{}X", "My_Synth:__________X", "my_synth:__________x"),
    ])
    func portNamesAreSanitised(_ name: String, _ osc: String, _ osmid: String) {
        #expect(OSCPortNameStyle.osc.sanitise(name) == osc)
        #expect(OSCPortNameStyle.osmid.sanitise(name) == osmid)
    }

    @Test func everyPlaceholderRenders() throws {
        let scheme = try OSCScheme([
            "control_change": ("/{port}/{id}/{channel}/{channel0}/{type}/{controller}", [], .int),
            "note_on": ("/n/{note}", [], .int),
        ])
        let formatter = OSCEventFormatter(scheme: scheme, portNames: ["A", "Key Step"])
        var cc = MIDIEvent.controlChange(channel: 15, controller: 74, value: 1)
        cc.port = 1
        #expect(formatted(cc, formatter) == libloBytes("/Key_Step/1/16/15/control_change/74", []))
        #expect(formatted(.noteOn(channel: 0, note: 127, velocity: 1), formatter) == libloBytes("/n/127", []))
        #expect(formatted(.noteOff(channel: 0, note: 1), formatter) == nil)
    }
}

@Suite struct CustomSchemeTests {
    @Test func floatStyleNormalisesValuesAndKeepsIdentifiers() throws {
        let scheme = try OSCScheme([
            "note_on": ("/synth/{channel}/on", [.note, .velocity], .float),
            "pitch_bend": ("/synth/bend", [.channel, .bend], .float),
            "control_change14": ("/synth/cc14", [.controller, .value], .float),
        ])
        let formatter = OSCEventFormatter(scheme: scheme, portNames: [])
        #expect(
            formatted(.noteOn(channel: 9, note: 60, velocity: 127), formatter)
                == libloBytes("/synth/10/on", [.f(60), .f(1)]))
        for (bend, expected) in [(8191, Float(1)), (-8192, -1), (0, 0), (4096, Float(4096) / 8191)] {
            #expect(
                formatted(.pitchBend(channel: 0, bend: Int32(bend)), formatter)
                    == libloBytes("/synth/bend", [.f(1), .f(expected)]), "bend \(bend)")
        }
        let cc14 = MIDIEvent(.controlChange14, value: 16383, parameter: 1)
        #expect(formatted(cc14, formatter) == libloBytes("/synth/cc14", [.f(1), .f(1)]))
    }

    @Test func channelCanBeAnArgument() throws {
        let scheme = try OSCScheme.default.overriding([
            "note_on": ("/note", [.channel, .note, .velocity], .int),
            "note_off": nil,
        ])
        let formatter = OSCEventFormatter(scheme: scheme, portNames: [])
        #expect(
            formatted(.noteOn(channel: 0, note: 60, velocity: 1), formatter)
                == libloBytes("/note", [.i(1), .i(60), .i(1)]))
        #expect(formatted(.noteOff(channel: 0, note: 60), formatter) == nil)
        #expect(formatted(MIDIEvent(.clock), formatter) == libloBytes("/midi/0/clock", []))
    }

    @Test func midiAndBlobStylesCarryTheMessage() throws {
        let scheme = try OSCScheme([
            "note_on": ("/m", [], .midi),
            "control_change14": ("/b", [], .blob),
        ])
        let formatter = OSCEventFormatter(scheme: scheme, portNames: [])
        var note = MIDIEvent.noteOn(channel: 1, note: 60, velocity: 100)
        note.port = 3
        #expect(formatted(note, formatter) == libloBytes("/m", [.m(3, 0x91, 60, 100)]))
        let cc14 = MIDIEvent(.controlChange14, channel: 1, value: 1000, parameter: 7)
        #expect(formatted(cc14, formatter) == libloBytes("/b", [.b([0xB1, 7, 7, 0xB1, 39, 104])]))
    }

    @Test(arguments: [
        (
            ["note_in": ("/x", [OSCArgumentField](), OSCArgumentStyle.int)],
            "unknown event type 'note_in'; known: note_off, note_on, poly_pressure, control_change, program_change, "
                + "channel_pressure, pitch_bend, control_change14, rpn, nrpn, mtc_quarter_frame, song_position, "
                + "song_select, tune_request, clock, start, continue, stop, active_sensing, reset, sysex"
        ),
        (
            ["program_change": ("/p/{note}", [], .int)],
            "program_change: placeholder '{note}' has no value for program_change events"
        ),
        (
            ["clock": ("/clock/{channel}", [], .int)],
            "clock: placeholder '{channel}' has no value for clock events"
        ),
        (
            ["program_change": ("/p", [.velocity], .int)],
            "program_change: argument 'velocity' has no value for program_change events"
        ),
        (
            ["note_on": ("/n/{velocity}", [], .int)],
            "note_on: address template '/n/{velocity}': unknown placeholder '{velocity}'; known: "
                + TemplateTests.known
        ),
    ])
    func configurationErrorsNameTheEventType(
        _ entries: [String: (address: String, arguments: [OSCArgumentField], style: OSCArgumentStyle)],
        _ message: String
    ) {
        do {
            _ = try OSCScheme(entries)
            Issue.record("no error")
        } catch {
            #expect(error.description == message)
        }
    }
}
