/// The commands `aseqosc send` understands: SendMIDI's vocabulary, short and long names.
package enum SendVerb: CaseIterable, Sendable {
    case channel, octaveMiddleC, hexadecimal, decimal
    case noteOn, noteOff, polyPressure, controlChange, controlChange14, programChange, channelPressure
    case pitchBend, rpn, nrpn
    case clock, midiClock, start, stop, `continue`, activeSensing, reset
    case sysex, sysexFile, timeCode, songPosition, songSelect, tuneRequest, raw
    case panic, file
    // SendMIDI's port commands; aseqosc names its port with --to and lists ports elsewhere.
    case device, virtual, list

    /// The short name (`on`).
    package var name: String { entry.name }
    /// SendMIDI's long name (`note-on`), or nil when it has none.
    var longName: String? { entry.longName }
    /// The arguments' names, in order, as the help and error messages call them.
    var arguments: [String] { entry.arguments }
    /// How many of ``arguments`` must be there; the rest are optional.
    var requiredArguments: Int { entry.required }
    /// Whether the last argument repeats (byte lists).
    var isVariadic: Bool { entry.variadic }
    /// One line for the help.
    var summary: String { entry.summary }

    /// The verb called `word` (short or long name, any case), as SendMIDI matches them.
    package init?(named word: String) {
        let lowered = word.lowercased()
        guard let named = Self.names.first(where: { $0.name == lowered || $0.longName == lowered }) else {
            return nil
        }
        self = named.verb
    }

    /// Every verb's names, made once: each word of a script is looked up, and an ``entry`` is
    /// made whole (its arrays too) each time it is asked for.
    private static let names = allCases.map { (name: $0.name, longName: $0.longName, verb: $0) }

    private struct Entry {
        var name: String
        var longName: String?
        var arguments: [String]
        var required: Int
        var variadic = false
        var summary: String

        init(
            _ name: String, _ longName: String?, _ arguments: [String], _ required: Int, variadic: Bool = false,
            _ summary: String
        ) {
            self.name = name
            self.longName = longName
            self.arguments = arguments
            self.required = required
            self.variadic = variadic
            self.summary = summary
        }
    }

    private var entry: Entry {
        switch self {
        case .channel:
            Entry(
                "ch", "channel", ["number"], 1,
                "MIDI channel for the commands that follow (1-16), 1 at first")
        case .octaveMiddleC:
            Entry(
                "omc", "octave-middle-c", ["number"], 1,
                "octave of middle C in note names (3-5), as --middle-c")
        case .hexadecimal:
            Entry(
                "hex", "hexadecimal", [], 0,
                "read the numbers that follow as hexadecimal")
        case .decimal:
            Entry(
                "dec", "decimal", [], 0,
                "read the numbers that follow as decimal (the default)")
        case .noteOn:
            Entry(
                "on", "note-on", ["note", "velocity"], 2,
                "Note On: note (C4, F#3, Bb2 or 0-127), velocity (0-127)")
        case .noteOff:
            Entry(
                "off", "note-off", ["note", "velocity"], 1,
                "Note Off: note, velocity (0-127, 0 when left out)")
        case .polyPressure:
            Entry(
                "pp", "poly-pressure", ["note", "value"], 2,
                "Poly Pressure: note, value (0-127)")
        case .controlChange:
            Entry(
                "cc", "control-change", ["number", "value"], 2,
                "Control Change: number (0-127), value (0-127)")
        case .controlChange14:
            Entry(
                "cc14", "control-change-14", ["number", "value"], 2,
                "14-bit CC: number (0-31), value (0-16383); CC number then number+32")
        case .programChange:
            Entry(
                "pc", "program-change", ["number"], 1,
                "Program Change: number (0-127)")
        case .channelPressure:
            Entry(
                "cp", "channel-pressure", ["value"], 1,
                "Channel Pressure: value (0-127)")
        case .pitchBend:
            Entry(
                "pb", "pitch-bend", ["value"], 1,
                "Pitch Bend: value (0-16383, 8192 centre) or bend/range (-1/2, 0.5/12)")
        case .rpn:
            Entry(
                "rpn", nil, ["number", "value"], 2,
                "RPN: number (0-16383), value (0-16383); CC 101 100 6 38, then RPN null")
        case .nrpn:
            Entry(
                "nrpn", nil, ["number", "value"], 2,
                "NRPN: number (0-16383), value (0-16383); CC 99 98 6 38, then RPN null")
        case .clock:
            Entry(
                "clock", nil, ["bpm", "beats"], 1,
                "MIDI clock at bpm (1-999) for beats (2 when left out; 0: until stopped)")
        case .midiClock:
            Entry(
                "mc", "midi-clock", [], 0,
                "one MIDI Timing Clock")
        case .start:
            Entry(
                "start", nil, [], 0,
                "Start")
        case .stop:
            Entry(
                "stop", nil, [], 0,
                "Stop")
        case .continue:
            Entry(
                "cont", "continue", [], 0,
                "Continue")
        case .activeSensing:
            Entry(
                "as", "active-sensing", [], 0,
                "Active Sensing")
        case .reset:
            Entry(
                "rst", "reset", [], 0,
                "System Reset")
        case .sysex:
            Entry(
                "syx", "system-exclusive", ["bytes"], 1, variadic: true,
                "SysEx from hex bytes; F0 and F7 are added when left out")
        case .sysexFile:
            Entry(
                "syf", "system-exclusive-file", ["path"], 1,
                "the MIDI messages in a .syx file")
        case .timeCode:
            Entry(
                "tc", "time-code", ["type", "value"], 2,
                "MTC Quarter Frame: type (0-7), value (0-15)")
        case .songPosition:
            Entry(
                "spp", "song-position", ["beats"], 1,
                "Song Position Pointer: beats (0-16383)")
        case .songSelect:
            Entry(
                "ss", "song-select", ["number"], 1,
                "Song Select: number (0-127)")
        case .tuneRequest:
            Entry(
                "tun", "tune-request", [], 0,
                "Tune Request")
        case .raw:
            Entry(
                "raw", "raw-midi", ["bytes"], 1, variadic: true,
                "any MIDI messages as hex wire bytes, running status included")
        case .panic:
            Entry(
                "panic", nil, [], 0,
                "all 16 channels: CC 64, 120, 121, 123 = 0, bend centre, all Note Offs")
        case .file:
            Entry(
                "file", nil, ["path"], 1,
                "the commands in a text file, here")
        case .device:
            Entry(
                "dev", "device", ["name"], 0,
                "")
        case .virtual:
            Entry(
                "virt", "virtual", ["name"], 0,
                "")
        case .list:
            Entry(
                "list", nil, [], 0,
                "")
        }
    }

    /// The verbs `aseqosc send` performs (not SendMIDI's port commands), in help order.
    package static var performed: [SendVerb] { allCases.filter { !$0.summary.isEmpty } }

    /// The command table of `aseqosc send --help`.
    package static var helpTable: String {
        let usages = performed.map { verb in
            ([verb.name]
                + verb.arguments.enumerated().map { index, argument in
                    let shown = verb.isVariadic ? argument + "..." : argument
                    return index < verb.requiredArguments ? shown : "[\(shown)]"
                }).joined(separator: " ")
        }
        let width = usages.map(\.count).max() ?? 0
        return zip(performed, usages).map { verb, usage in
            "  " + usage + String(repeating: " ", count: width - usage.count) + "  " + verb.summary
        }.joined(separator: "\n")
    }
}
