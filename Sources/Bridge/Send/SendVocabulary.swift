/// The commands `aseqosc send` understands: SendMIDI's vocabulary, short and long names.
public enum SendVerb: CaseIterable, Sendable {
    case channel, octaveMiddleC, hexadecimal, decimal
    case noteOn, noteOff, polyPressure, controlChange, controlChange14, programChange, channelPressure
    case pitchBend, rpn, nrpn
    case clock, midiClock, start, stop, `continue`, activeSensing, reset
    case sysex, sysexFile, timeCode, songPosition, songSelect, tuneRequest, raw
    case panic, file
    // SendMIDI's port commands; aseqosc names its port with --to and lists ports elsewhere.
    case device, virtual, list

    /// The short name (`on`).
    public var name: String { entry.name }
    /// SendMIDI's long name (`note-on`), or nil when it has none.
    public var longName: String? { entry.longName }
    /// The arguments' names, in order, as the help and error messages call them.
    public var arguments: [String] { entry.arguments }
    /// How many of ``arguments`` must be there; the rest are optional.
    public var requiredArguments: Int { entry.required }
    /// Whether the last argument repeats (byte lists).
    public var isVariadic: Bool { entry.variadic }
    /// One line for the help.
    public var summary: String { entry.summary }

    /// The verb called `word` (short or long name, any case), as SendMIDI matches them.
    public init?(named word: String) {
        let lowered = word.lowercased()
        guard let verb = Self.allCases.first(where: { $0.name == lowered || $0.longName == lowered }) else {
            return nil
        }
        self = verb
    }

    private struct Entry {
        var name: String
        var longName: String?
        var arguments: [String]
        var required: Int
        var variadic = false
        var summary: String
    }

    private var entry: Entry {
        switch self {
        case .channel: Entry(name: "ch", longName: "channel", arguments: ["number"], required: 1, summary: "MIDI channel for the commands that follow (1-16), 1 at first")
        case .octaveMiddleC: Entry(name: "omc", longName: "octave-middle-c", arguments: ["number"], required: 1, summary: "octave of middle C in note names (3-5), as --middle-c")
        case .hexadecimal: Entry(name: "hex", longName: "hexadecimal", arguments: [], required: 0, summary: "read the numbers that follow as hexadecimal")
        case .decimal: Entry(name: "dec", longName: "decimal", arguments: [], required: 0, summary: "read the numbers that follow as decimal (the default)")
        case .noteOn: Entry(name: "on", longName: "note-on", arguments: ["note", "velocity"], required: 2, summary: "Note On: note (C4, F#3, Bb2 or 0-127), velocity (0-127)")
        case .noteOff: Entry(name: "off", longName: "note-off", arguments: ["note", "velocity"], required: 1, summary: "Note Off: note, velocity (0-127, 0 when left out)")
        case .polyPressure: Entry(name: "pp", longName: "poly-pressure", arguments: ["note", "value"], required: 2, summary: "Poly Pressure: note, value (0-127)")
        case .controlChange: Entry(name: "cc", longName: "control-change", arguments: ["number", "value"], required: 2, summary: "Control Change: number (0-127), value (0-127)")
        case .controlChange14: Entry(name: "cc14", longName: "control-change-14", arguments: ["number", "value"], required: 2, summary: "14-bit CC: number (0-31), value (0-16383); CC number then number+32")
        case .programChange: Entry(name: "pc", longName: "program-change", arguments: ["number"], required: 1, summary: "Program Change: number (0-127)")
        case .channelPressure: Entry(name: "cp", longName: "channel-pressure", arguments: ["value"], required: 1, summary: "Channel Pressure: value (0-127)")
        case .pitchBend: Entry(name: "pb", longName: "pitch-bend", arguments: ["value"], required: 1, summary: "Pitch Bend: value (0-16383, 8192 centre) or bend/range (-1/2, 0.5/12)")
        case .rpn: Entry(name: "rpn", longName: nil, arguments: ["number", "value"], required: 2, summary: "RPN: number (0-16383), value (0-16383); CC 101 100 6 38, then RPN null")
        case .nrpn: Entry(name: "nrpn", longName: nil, arguments: ["number", "value"], required: 2, summary: "NRPN: number (0-16383), value (0-16383); CC 99 98 6 38, then RPN null")
        case .clock: Entry(name: "clock", longName: nil, arguments: ["bpm", "beats"], required: 1, summary: "MIDI clock at bpm (1-999) for beats (2 when left out; 0: until stopped)")
        case .midiClock: Entry(name: "mc", longName: "midi-clock", arguments: [], required: 0, summary: "one MIDI Timing Clock")
        case .start: Entry(name: "start", longName: nil, arguments: [], required: 0, summary: "Start")
        case .stop: Entry(name: "stop", longName: nil, arguments: [], required: 0, summary: "Stop")
        case .continue: Entry(name: "cont", longName: "continue", arguments: [], required: 0, summary: "Continue")
        case .activeSensing: Entry(name: "as", longName: "active-sensing", arguments: [], required: 0, summary: "Active Sensing")
        case .reset: Entry(name: "rst", longName: "reset", arguments: [], required: 0, summary: "System Reset")
        case .sysex: Entry(name: "syx", longName: "system-exclusive", arguments: ["bytes"], required: 1, variadic: true, summary: "SysEx from hex bytes; F0 and F7 are added when left out")
        case .sysexFile: Entry(name: "syf", longName: "system-exclusive-file", arguments: ["path"], required: 1, summary: "the MIDI messages in a .syx file")
        case .timeCode: Entry(name: "tc", longName: "time-code", arguments: ["type", "value"], required: 2, summary: "MTC Quarter Frame: type (0-7), value (0-15)")
        case .songPosition: Entry(name: "spp", longName: "song-position", arguments: ["beats"], required: 1, summary: "Song Position Pointer: beats (0-16383)")
        case .songSelect: Entry(name: "ss", longName: "song-select", arguments: ["number"], required: 1, summary: "Song Select: number (0-127)")
        case .tuneRequest: Entry(name: "tun", longName: "tune-request", arguments: [], required: 0, summary: "Tune Request")
        case .raw: Entry(name: "raw", longName: "raw-midi", arguments: ["bytes"], required: 1, variadic: true, summary: "any MIDI messages as hex wire bytes, running status included")
        case .panic: Entry(name: "panic", longName: nil, arguments: [], required: 0, summary: "on all 16 channels: CC 64, 120, 121, 123 to 0, bend centred, every Note Off")
        case .file: Entry(name: "file", longName: nil, arguments: ["path"], required: 1, summary: "the commands in a text file, here")
        case .device: Entry(name: "dev", longName: "device", arguments: ["name"], required: 0, summary: "")
        case .virtual: Entry(name: "virt", longName: "virtual", arguments: ["name"], required: 0, summary: "")
        case .list: Entry(name: "list", longName: nil, arguments: [], required: 0, summary: "")
        }
    }

    /// The verbs `aseqosc send` performs (not SendMIDI's port commands), in help order.
    public static var performed: [SendVerb] { allCases.filter { !$0.summary.isEmpty } }

    /// The command table of `aseqosc send --help`.
    public static var helpTable: String {
        let usages = performed.map { verb in
            ([verb.name] + verb.arguments.enumerated().map { index, argument in
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
