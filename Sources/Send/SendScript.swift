import Glibc
import MIDI
import Platform

/// One thing `aseqosc send` does, in order.
package enum SendStep: Hashable, Sendable {
    /// A MIDI event other than SysEx.
    case event(MIDIEvent)
    /// A complete SysEx message, `F0` ... `F7`.
    case sysex([UInt8])
    /// Waits this long before the next step (`+SS.MIL`, `+HH:MM:SS.MIL`).
    case delay(milliseconds: Int)
    /// Waits until this much time has passed since the previous timestamp (`HH:MM:SS.MIL`), as
    /// SendMIDI does with ReceiveMIDI's timestamps; the first one waits for nothing.
    case timestamp(millisecondOfDay: Int)
    /// MIDI clock at `bpm`, 24 per beat: `ticks` of them, or until the process is stopped.
    case clock(bpm: Double, ticks: Int?)
}

/// A word of a send script, and where it came from.
package struct SendWord: Hashable, Sendable {
    package var text: String
    /// `file:line` for a word read from a file, nil for a command-line argument.
    package var location: String?

    package init(_ text: String, location: String? = nil) {
        self.text = text
        self.location = location
    }
}

/// A command `aseqosc send` cannot perform, with the words the user wrote.
package struct SendScriptError: Error, Hashable, Sendable, CustomStringConvertible {
    /// `file:line` of the command in a file, nil on the command line.
    var location: String?
    /// The command's words as written (`on C4`), or the stray word.
    var command: String
    /// What is wrong.
    var problem: String

    package var description: String {
        (location.map { $0 + ": " } ?? "") + "'\(command)': \(problem)"
    }
}

/// Why a file of commands or SysEx could not be read.
package struct SendFileError: Error, Hashable, Sendable, CustomStringConvertible {
    var path: String
    var error: Errno

    package init(path: String, _ error: Errno) {
        self.path = path
        self.error = error
    }

    package var description: String { "cannot read '\(path)': \(error)" }
}

/// Turns SendMIDI-style commands (`ch 2 on C4 100 cc 7 100`) into ``SendStep``s, collecting
/// every error instead of stopping at the first, so nothing is sent when anything is wrong.
///
/// Words are read as SendMIDI reads them: a command name (short or long, any case) starts a
/// command and is never taken as an argument, so a missing argument is noticed at the next
/// command. Numbers are decimal unless `hex` was given or they end in `H` (`7FH`); `M` forces
/// decimal (`127M`). The byte lists of `syx` and `raw` are hexadecimal always, as SysEx is
/// documented everywhere (`127M` for a decimal byte), which differs from SendMIDI.
package struct SendScript {
    /// What to do, in order.
    package private(set) var steps: [SendStep] = []
    /// Every command that could not be read.
    package private(set) var errors: [SendScriptError] = []
    /// The channel for the next channel message, 0-15.
    package private(set) var channel: UInt8 = 0
    /// The octave number of middle C (note 60) in note names.
    private(set) var middleCOctave: Int
    private var hexadecimal = false
    private var fileDepth = 0
    private let loadFile: (String) throws(SendFileError) -> [UInt8]

    /// The octaves of middle C that `--middle-c` and `omc` accept.
    package static let middleCOctaves = 3...5
    /// How deep `file` commands may include one another (a file including itself stops here).
    static let maximumFileDepth = 8

    /// A script whose note names put middle C in `middleCOctave`, reading `file` and `syf`
    /// paths with `loadFile`.
    package init(
        middleCOctave: Int = NoteName.standardMiddleCOctave,
        loadFile: @escaping (String) throws(SendFileError) -> [UInt8] = SendScript.readFile
    ) {
        self.middleCOctave = middleCOctave
        self.loadFile = loadFile
    }

    /// Adds the commands of command-line arguments, one word each.
    package mutating func add(arguments: [String]) {
        add(arguments.map { SendWord($0) })
    }

    /// Adds the commands of a text: words separated by blanks or line ends, `"quoted words"`,
    /// and `#` starting a comment to the end of the line. `source` names it in errors.
    package mutating func add(text: String, source: String) {
        add(Self.words(in: text, source: source))
    }

    /// Splits a text into words, each with its `source:line`.
    package static func words(in text: String, source: String) -> [SendWord] {
        var words: [SendWord] = []
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let location = "\(source):\(index + 1)"
            var current = ""
            var inWord = false
            var quoted = false
            for character in line {
                if quoted {
                    if character == "\"" { quoted = false } else { current.append(character) }
                } else if character == "\"" {
                    quoted = true
                    inWord = true
                } else if character.isWhitespace {
                    if inWord { words.append(SendWord(current, location: location)) }
                    current = ""
                    inWord = false
                } else if character == "#" && !inWord {
                    break
                } else {
                    current.append(character)
                    inWord = true
                }
            }
            if inWord { words.append(SendWord(current, location: location)) }
        }
        return words
    }

    /// Reads a whole file (`-`: standard input), so errors are the system's own words.
    package static func readFile(_ path: String) throws(SendFileError) -> [UInt8] {
        do {
            return path == "-" ? try FileSystem.contents(of: STDIN_FILENO) : try FileSystem.contents(of: path)
        } catch {
            throw SendFileError(path: path, error)
        }
    }

    // MARK: Reading commands

    private mutating func add(_ words: [SendWord]) {
        var i = 0
        while i < words.count {
            let word = words[i]
            i += 1
            if let step = Self.timestamp(word.text) {
                steps.append(step)
                continue
            }
            guard let verb = SendVerb(named: word.text) else {
                fail(word, word.text, "unknown command; `aseqosc send --help` lists the commands")
                // Its arguments, if that is what follows, are not commands either.
                while i < words.count && !Self.startsCommand(words[i].text) { i += 1 }
                continue
            }
            var arguments: [String] = []
            let most = verb.isVariadic ? Int.max : verb.arguments.count
            while arguments.count < most && i < words.count && !Self.startsCommand(words[i].text) {
                arguments.append(words[i].text)
                i += 1
            }
            // The command as written, for a message only.
            var command: String { ([word.text] + arguments).joined(separator: " ") }
            if arguments.count < verb.requiredArguments {
                fail(word, command, "missing \(verb.arguments[arguments.count])")
                continue
            }
            do {
                try perform(verb, arguments, at: word)
            } catch {
                fail(word, command, error.message)
            }
        }
    }

    private mutating func fail(_ word: SendWord, _ command: String, _ problem: String) {
        errors.append(SendScriptError(location: word.location, command: command, problem: problem))
    }

    /// Whether a word begins a new command rather than being an argument.
    private static func startsCommand(_ word: String) -> Bool {
        SendVerb(named: word) != nil || timestamp(word) != nil
    }

    private struct Problem: Error {
        package var message: String
        package init(_ message: String) { self.message = message }
    }

    private mutating func perform(_ verb: SendVerb, _ arguments: [String], at word: SendWord) throws(Problem) {
        func argument(_ index: Int) -> String { arguments[index] }
        func seven(_ index: Int) throws(Problem) -> UInt8 {
            UInt8(try number(arguments[index], verb.arguments[index], 0...127))
        }
        func fourteen(_ index: Int) throws(Problem) -> Int {
            try number(arguments[index], verb.arguments[index], 0...16383)
        }
        func note(_ index: Int) throws(Problem) -> UInt8 { try self.note(arguments[index]) }
        func send(_ kind: MIDIEventKind, _ data1: UInt8 = 0, _ data2: UInt8 = 0, value: Int32 = 0) {
            let channel = kind.isChannelMessage ? channel : 0
            steps.append(.event(MIDIEvent(kind, channel: channel, data1: data1, data2: data2, value: value)))
        }

        switch verb {
        case .channel:
            channel = UInt8(try number(argument(0), "channel", 1...16) - 1)
        case .octaveMiddleC:
            middleCOctave = try number(argument(0), "octave", Self.middleCOctaves, allowNegative: true)
        case .hexadecimal: hexadecimal = true
        case .decimal: hexadecimal = false
        case .noteOn: send(.noteOn, try note(0), try seven(1))
        case .noteOff: send(.noteOff, try note(0), arguments.count > 1 ? try seven(1) : 0)
        case .polyPressure: send(.polyPressure, try note(0), try seven(1))
        case .controlChange: send(.controlChange, try seven(0), try seven(1))
        case .controlChange14:
            let controller = UInt16(try number(argument(0), "number", 0...31))
            let value = Int32(try fourteen(1))
            MIDIEvent(.controlChange14, channel: channel, value: value, parameter: controller)
                .forEachControlChange { steps.append(.event($0)) }
        case .programChange: send(.programChange, try seven(0))
        case .channelPressure: send(.channelPressure, try seven(0))
        case .pitchBend: send(.pitchBend, value: Int32(try pitchBend(argument(0)) - 8192))
        case .rpn, .nrpn:
            let number = UInt16(try fourteen(0))
            let value = Int32(try fourteen(1))
            MIDIEvent(verb == .rpn ? .rpn : .nrpn, channel: channel, value: value, parameter: number)
                .forEachControlChange { steps.append(.event($0)) }
            // The RPN null, as SendMIDI sends: later data entry changes nothing by accident.
            send(.controlChange, 101, 127)
            send(.controlChange, 100, 127)
        case .clock:
            let bpm = try beatsPerMinute(argument(0))
            let beats = arguments.count > 1 ? try number(argument(1), "beats", 0...1_000_000) : 2
            steps.append(.clock(bpm: bpm, ticks: beats == 0 ? nil : beats * 24))
        case .midiClock: send(.clock)
        case .start: send(.start)
        case .stop: send(.stop)
        case .continue: send(.continue)
        case .activeSensing: send(.activeSensing)
        case .reset: send(.reset)
        case .sysex:
            try sysex(arguments)
        case .sysexFile:
            let bytes: [UInt8]
            do {
                bytes = try loadFile(argument(0))
            } catch {
                throw Problem(error.description)
            }
            if bytes.isEmpty { throw Problem("'\(argument(0))' is empty") }
            steps += try Self.messages(in: bytes)
        case .timeCode:
            let type = try number(argument(0), "type", 0...7)
            let value = try number(argument(1), "value", 0...15)
            send(.mtcQuarterFrame, UInt8(type << 4 | value))
        case .songPosition: send(.songPosition, value: Int32(try fourteen(0)))
        case .songSelect: send(.songSelect, try seven(0))
        case .tuneRequest: send(.tuneRequest)
        case .raw:
            steps += try Self.messages(
                in: try arguments.enumerated().map { index, text throws(Problem) in
                    try Self.byte(text, position: index + 1)
                })
        case .panic:
            // SendMIDI's panic, message for message.
            for channel: UInt8 in 0...15 {
                for controller: UInt8 in [64, 120, 121, 123] {
                    steps.append(.event(.controlChange(channel: channel, controller: controller, value: 0)))
                }
                steps.append(.event(.pitchBend(channel: channel, bend: 0)))
                for note: UInt8 in 0...127 {
                    steps.append(.event(.noteOff(channel: channel, note: note, velocity: 0)))
                }
            }
        case .file:
            guard fileDepth < Self.maximumFileDepth else {
                throw Problem("files include one another more than \(Self.maximumFileDepth) deep")
            }
            let bytes: [UInt8]
            do {
                bytes = try loadFile(argument(0))
            } catch {
                throw Problem(error.description)
            }
            fileDepth += 1
            add(text: String(decoding: bytes, as: UTF8.self), source: argument(0))
            fileDepth -= 1
        case .device, .virtual:
            throw Problem("aseqosc names the port with --to PORTSPEC; ports are listed by `aseqosc ports`")
        case .list:
            throw Problem("ports are listed by `aseqosc ports`")
        }
    }

    // MARK: Arguments

    /// A number as SendMIDI reads it: decimal, or hex after `hex`; an `H` suffix or `0x` prefix
    /// makes it hex, an `M` suffix decimal.
    private func integer(_ text: String) -> Int? {
        var digits = Substring(text)
        var radix = hexadecimal ? 16 : 10
        if digits.lowercased().hasPrefix("0x") {
            digits = digits.dropFirst(2)
            radix = 16
        } else if let last = digits.last, last == "H" || last == "h" {
            digits = digits.dropLast()
            radix = 16
        } else if let last = digits.last, last == "M" || last == "m" {
            digits = digits.dropLast()
            radix = 10
        }
        let negative = digits.hasPrefix("-")
        if negative { digits = digits.dropFirst() }
        // Int(_:radix:) would also take a "+" and overflow quietly into nil on long input.
        guard !digits.isEmpty, digits.count <= 9, digits.allSatisfy({ $0.isHexDigit }),
            let value = Int(digits, radix: radix)
        else { return nil }
        return negative ? -value : value
    }

    private func number(
        _ text: String, _ what: String, _ range: ClosedRange<Int>, allowNegative: Bool = false
    ) throws(Problem) -> Int {
        guard let value = integer(text) else { throw Problem("\(what) '\(text)' is not a number") }
        guard range.contains(value) else {
            throw Problem("\(what) \(text) is out of range (\(range.lowerBound)-\(range.upperBound))")
        }
        return value
    }

    private func note(_ text: String) throws(Problem) -> UInt8 {
        let startsWithLetter = text.first?.isLetter ?? false
        if startsWithLetter, let note = NoteName.parse(text, middleCOctave: middleCOctave) { return note }
        if !startsWithLetter, let value = integer(text) {
            guard (0...127).contains(value) else { throw Problem("note \(text) is out of range (0-127)") }
            return UInt8(value)
        }
        let lowest = NoteName.format(0, middleCOctave: middleCOctave)
        let highest = NoteName.format(127, middleCOctave: middleCOctave)
        throw Problem("note '\(text)' is not a note: use a name from \(lowest) to \(highest) or a number 0-127")
    }

    /// The 14-bit wheel position of `value` (0-16383) or `bend/range` in semitones, mapped as
    /// SendMIDI (JUCE) maps it: -range is 0, 0 is 8192, +range is 16383.
    private func pitchBend(_ text: String) throws(Problem) -> Int {
        guard let slash = text.firstIndex(of: "/") else { return try number(text, "value", 0...16383) }
        guard let bend = Double(text[..<slash]), let range = Double(text[text.index(after: slash)...]),
            bend.isFinite, range.isFinite
        else { throw Problem("'\(text)' is not a bend/range such as -1/2 or 0.5/12") }
        guard range > 0 else { throw Problem("the range in '\(text)' must be above 0") }
        guard abs(bend) <= range else { throw Problem("the bend in '\(text)' is larger than its range") }
        return bend > 0 ? 8192 + Int(bend / range * 8191) : 8192 + Int(bend / range * 8192)
    }

    private func beatsPerMinute(_ text: String) throws(Problem) -> Double {
        guard let bpm = Double(text), bpm.isFinite else { throw Problem("bpm '\(text)' is not a number") }
        guard bpm >= 1 && bpm <= 999 else { throw Problem("bpm \(text) is out of range (1-999)") }
        return bpm
    }

    /// A byte of `syx` or `raw`: hexadecimal (`F0`, `0xF0`, `F0H`), or decimal with `M`.
    private static func byte(_ text: String, position: Int) throws(Problem) -> UInt8 {
        var digits = Substring(text)
        var radix = 16
        if digits.lowercased().hasPrefix("0x") {
            digits = digits.dropFirst(2)
        } else if let last = digits.last, last == "H" || last == "h" {
            digits = digits.dropLast()
        } else if let last = digits.last, last == "M" || last == "m" {
            digits = digits.dropLast()
            radix = 10
        }
        guard !digits.isEmpty, digits.count <= 3, digits.allSatisfy({ $0.isHexDigit }),
            let value = Int(digits, radix: radix), value <= 255
        else { throw Problem("byte \(position) '\(text)' is not a byte (hex 00-FF, or decimal with M: 127M)") }
        return UInt8(value)
    }

    private mutating func sysex(_ arguments: [String]) throws(Problem) {
        var bytes: [(text: String, value: UInt8)] = []
        for (index, text) in arguments.enumerated() {
            bytes.append((text, try Self.byte(text, position: index + 1)))
        }
        // SendMIDI wants the bytes between F0 and F7; the whole message is accepted too.
        if bytes.first?.value == 0xF0 { bytes.removeFirst() }
        if bytes.last?.value == 0xF7 { bytes.removeLast() }
        if let bad = bytes.first(where: { $0.value > 0x7F }) {
            throw Problem("'\(bad.text)' is not a SysEx data byte (00-7F)")
        }
        steps.append(.sysex([0xF0] + bytes.map(\.value) + [0xF7]))
    }

    /// The messages in wire bytes, read by ``MIDIByteParser`` so any message works, running
    /// status included; the bytes must hold complete messages and nothing the parser ignores.
    private static func messages(in bytes: [UInt8]) throws(Problem) -> [SendStep] {
        let store = SysExStore(slots: 1, capacity: max(bytes.count, 2))
        var parser = MIDIByteParser(store: store)
        var steps: [SendStep] = []
        // A message is incomplete when a non-realtime byte comes after the last one that
        // completed a message (realtime bytes may sit inside other messages).
        var lastCompleting = -1
        var lastNonRealtime = -1
        for (index, byte) in bytes.enumerated() {
            let before = parser.counters
            if byte < 0xF8 { lastNonRealtime = index }
            parser.parse(byte) { event in
                if !event.kind.isRealtime { lastCompleting = index }
                if event.kind == .sysex {
                    steps.append(.sysex(store.withBytes(event.sysex) { Array($0) }))
                    store.release(event.sysex)
                } else {
                    steps.append(.event(event))
                }
            }
            let after = parser.counters
            let shown = hex(byte)
            if after.strayDataBytes > before.strayDataBytes {
                throw Problem("byte \(index + 1) (\(shown)) is a data byte with no status byte before it")
            }
            if after.undefinedStatusBytes > before.undefinedStatusBytes {
                throw Problem(
                    byte == 0xF7
                        ? "byte \(index + 1) (F7) ends a SysEx that was never started"
                        : "byte \(index + 1) (\(shown)) is not a defined MIDI status byte")
            }
            if after.interruptedSysEx > before.interruptedSysEx {
                throw Problem("byte \(index + 1) (\(shown)) interrupts a SysEx before its F7")
            }
        }
        if lastNonRealtime > lastCompleting { throw Problem("the last message is incomplete") }
        return steps
    }

    private static func hex(_ byte: UInt8) -> String {
        let digits = String(byte, radix: 16, uppercase: true)
        return byte < 16 ? "0" + digits : digits
    }

    /// A SendMIDI timestamp: `HH:MM:SS.MIL` (absolute), `+HH:MM:SS.MIL` or `+SS.MIL` (relative).
    static func timestamp(_ text: String) -> SendStep? {
        let characters = Array(text.utf8)
        func digits(_ range: Range<Int>) -> Int? {
            var value = 0
            for index in range {
                let character = characters[index]
                guard character >= UInt8(ascii: "0") && character <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int(character - UInt8(ascii: "0"))
            }
            return value
        }
        func clock(from start: Int) -> Int? {
            guard characters[start + 2] == UInt8(ascii: ":"), characters[start + 5] == UInt8(ascii: ":"),
                characters[start + 8] == UInt8(ascii: "."), let hours = digits(start..<start + 2),
                let minutes = digits(start + 3..<start + 5), let seconds = digits(start + 6..<start + 8),
                let millis = digits(start + 9..<start + 12)
            else { return nil }
            return ((hours * 60 + minutes) * 60 + seconds) * 1000 + millis
        }
        switch characters.count {
        case 12:
            return clock(from: 0).map { .timestamp(millisecondOfDay: $0) }
        case 13 where characters[0] == UInt8(ascii: "+"):
            return clock(from: 1).map { .delay(milliseconds: $0) }
        case 7 where characters[0] == UInt8(ascii: "+") && characters[3] == UInt8(ascii: "."):
            guard let seconds = digits(1..<3), let millis = digits(4..<7) else { return nil }
            return .delay(milliseconds: seconds * 1000 + millis)
        default:
            return nil
        }
    }
}
