import MIDI
import Send
import Testing

/// The commands of a script as wire bytes (no running status), so expectations read like a
/// MIDI monitor's output.
private func wire(_ steps: [SendStep]) -> String {
    var encoder = MIDIByteEncoder()
    var bytes: [UInt8] = []
    for step in steps {
        switch step {
        case .event(let event): bytes += encoder.encode(event)
        case .sysex(let message): bytes += message
        default: Issue.record("not an event: \(step)")
        }
    }
    return bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16, uppercase: true) }.joined(separator: " ")
}

private func script(_ line: String, middleC: Int = 4, files: [String: [UInt8]] = [:]) -> SendScript {
    var script = SendScript(middleCOctave: middleC) { (path) throws(SendFileError) in
        guard let bytes = files[path] else { throw SendFileError(path: path, .noSuchFile) }
        return bytes
    }
    script.add(arguments: line.split(separator: " ").map(String.init))
    return script
}

/// The steps of a script that must have no errors.
private func steps(_ line: String, middleC: Int = 4, files: [String: [UInt8]] = [:]) -> [SendStep] {
    let parsed = script(line, middleC: middleC, files: files)
    #expect(parsed.errors.map(\.description) == [])
    return parsed.steps
}

/// What each command sends, byte for byte.
@Suite struct SendCommandBytesTests {
    static let cases: [(String, String)] = [
        ("on C4 100", "90 3C 64"),
        ("note-on 60 1", "90 3C 01"),
        ("off C4", "80 3C 00"),
        ("off C4 64", "80 3C 40"),
        ("pp C4 33", "A0 3C 21"),
        ("cc 7 100", "B0 07 64"),
        ("CONTROL-CHANGE 74 0", "B0 4A 00"),
        ("cc14 1 9000", "B0 01 46 B0 21 28"),
        ("cc14 31 16383", "B0 1F 7F B0 3F 7F"),
        ("pc 5", "C0 05"),
        ("cp 48", "D0 30"),
        ("pb 8192", "E0 00 40"),
        ("pb 0", "E0 00 00"),
        ("pb 16383", "E0 7F 7F"),
        ("pb -2/2", "E0 00 00"),
        ("pb -1/2", "E0 00 20"),
        ("pb 0/12", "E0 00 40"),
        ("pb 1/2", "E0 7F 5F"),
        ("pb 2/2", "E0 7F 7F"),
        ("nrpn 300 500", "B0 63 02 B0 62 2C B0 06 03 B0 26 74 B0 65 7F B0 64 7F"),
        ("rpn 0 2", "B0 65 00 B0 64 00 B0 06 00 B0 26 02 B0 65 7F B0 64 7F"),
        ("mc", "F8"),
        ("start", "FA"),
        ("stop", "FC"),
        ("cont", "FB"),
        ("continue", "FB"),
        ("as", "FE"),
        ("rst", "FF"),
        ("tun", "F6"),
        ("spp 272", "F2 10 02"),
        ("ss 7", "F3 07"),
        ("tc 2 3", "F1 23"),
        ("syx 43 10 5E", "F0 43 10 5E F7"),
        ("syx F0 43 10 5E F7", "F0 43 10 5E F7"),
        ("syx 7E 127M 0x01 0AH", "F0 7E 7F 01 0A F7"),
        ("raw 90 3C 64", "90 3C 64"),
        ("raw 90 3C 64 3E 00", "90 3C 64 90 3E 00"),
        ("raw 90 3C F8 64", "F8 90 3C 64"),
        ("raw F0 7E 7F 06 01 F7 C0 05", "F0 7E 7F 06 01 F7 C0 05"),
        ("raw F6 FE", "F6 FE"),
    ]

    @Test(arguments: cases)
    func commandSendsTheseBytes(_ command: String, _ bytes: String) {
        #expect(wire(steps(command)) == bytes, "\(command)")
    }

    @Test func everyPerformedCommandHasACase() {
        let covered = Set(Self.cases.compactMap { SendVerb(named: String($0.0.split(separator: " ")[0])) })
        let uncovered = SendVerb.performed.filter { !covered.contains($0) }
        // These are tested on their own below.
        #expect(uncovered.map(\.name).sorted() == ["ch", "clock", "dec", "file", "hex", "omc", "panic", "syf"])
    }

    @Test func channelAppliesToTheCommandsAfterIt() {
        #expect(
            wire(steps("on 60 1 ch 16 on 60 1 cc 1 2 ch 3 pb 8192 start ch 1 pc 0"))
                == "90 3C 01 9F 3C 01 BF 01 02 E2 00 40 FA C0 00")
    }

    @Test func panicIsSendMIDIsPanicOnEveryChannel() {
        let events = steps("panic")
        #expect(events.count == 16 * (5 + 128))
        #expect(wire(Array(events.prefix(7))) == "B0 40 00 B0 78 00 B0 79 00 B0 7B 00 E0 00 40 80 00 00 80 01 00")
        #expect(wire([events[132], events[133]]) == "80 7F 00 B1 40 00")
        #expect(wire([events.last!]) == "8F 7F 00")
    }

    @Test func clockRunsForTwoBeatsUnlessTold() {
        #expect(steps("clock 120") == [.clock(bpm: 120, ticks: 48)])
        #expect(steps("clock 90.5 4") == [.clock(bpm: 90.5, ticks: 96)])
        #expect(steps("clock 60 0") == [.clock(bpm: 60, ticks: nil)])
    }

    @Test func timestampsBetweenCommandsWait() {
        #expect(
            steps("+01.500 on C4 1 +00:01:02.003 08:10:17.056 off C4")
                == [
                    .delay(milliseconds: 1500), .event(.noteOn(channel: 0, note: 60, velocity: 1)),
                    .delay(milliseconds: 62_003), .timestamp(millisecondOfDay: 29_417_056),
                    .event(.noteOff(channel: 0, note: 60)),
                ])
    }

    @Test func hexAndSuffixesChangeHowNumbersRead() {
        #expect(wire(steps("hex cc 7F 40 on 3C 7F dec cc 10 20")) == "B0 7F 40 90 3C 7F B0 0A 14")
        #expect(wire(steps("cc 7FH 100M pc 0x10")) == "B0 7F 64 C0 10")
        // A note name still wins over a hexadecimal reading.
        #expect(wire(steps("hex on C4 64")) == "90 3C 64")
    }

    @Test func offsVelocityIsOptionalBeforeTheNextCommand() {
        #expect(wire(steps("on C4 100 off C4 on D4 90 off D4 5")) == "90 3C 64 80 3C 00 90 3E 5A 80 3E 05")
    }
}

/// Note names as SendMIDI reads them, with middle C where the user puts it.
@Suite struct SendNoteNameTests {
    static let cases: [(String, Int, UInt8)] = [
        ("C4", 4, 60), ("c4", 4, 60), ("F#3", 4, 54), ("Bb2", 4, 46), ("C-1", 4, 0), ("G9", 4, 127),
        ("60", 4, 60), ("0", 4, 0), ("127", 4, 127), ("C3", 3, 60), ("C-2", 3, 0), ("G8", 3, 127),
        ("C5", 5, 60), ("A4", 4, 69), ("E♭4", 4, 63),
    ]

    @Test(arguments: cases)
    func noteNameIsThisNumber(_ name: String, _ middleC: Int, _ number: UInt8) {
        #expect(steps("on \(name) 1", middleC: middleC) == [.event(.noteOn(channel: 0, note: number, velocity: 1))])
    }

    @Test func omcChangesTheOctaveForTheCommandsAfterIt() {
        #expect(wire(steps("on C4 1 omc 3 on C4 1 omc 5 on C4 1")) == "90 3C 01 90 48 01 90 30 01")
    }
}

/// Every mistake is reported with the command as written, before anything is sent.
@Suite struct SendScriptErrorTests {
    static let cases: [(String, String)] = [
        ("on C4", "'on C4': missing velocity"),
        ("on", "'on': missing note"),
        ("on C4 off C4", "'on C4': missing velocity"),
        ("on C4 128", "'on C4 128': velocity 128 is out of range (0-127)"),
        ("on H4 1", "'on H4 1': note 'H4' is not a note: use a name from C-1 to G9 or a number 0-127"),
        ("on C10 1", "'on C10 1': note 'C10' is not a note: use a name from C-1 to G9 or a number 0-127"),
        ("on 128 1", "'on 128 1': note 128 is out of range (0-127)"),
        ("ch 0", "'ch 0': channel 0 is out of range (1-16)"),
        ("ch 17", "'ch 17': channel 17 is out of range (1-16)"),
        ("ch two", "'ch two': channel 'two' is not a number"),
        ("cc 128 1", "'cc 128 1': number 128 is out of range (0-127)"),
        ("cc 7 loud", "'cc 7 loud': value 'loud' is not a number"),
        ("cc 7 -1", "'cc 7 -1': value -1 is out of range (0-127)"),
        ("cc14 32 1", "'cc14 32 1': number 32 is out of range (0-31)"),
        ("cc14 1 16384", "'cc14 1 16384': value 16384 is out of range (0-16383)"),
        ("nrpn 16384 0", "'nrpn 16384 0': number 16384 is out of range (0-16383)"),
        ("rpn 0", "'rpn 0': missing value"),
        ("pb 16384", "'pb 16384': value 16384 is out of range (0-16383)"),
        ("pb 3/2", "'pb 3/2': the bend in '3/2' is larger than its range"),
        ("pb 1/0", "'pb 1/0': the range in '1/0' must be above 0"),
        ("pb up/2", "'pb up/2': 'up/2' is not a bend/range such as -1/2 or 0.5/12"),
        ("pc 1000", "'pc 1000': number 1000 is out of range (0-127)"),
        ("tc 8 0", "'tc 8 0': type 8 is out of range (0-7)"),
        ("tc 0 16", "'tc 0 16': value 16 is out of range (0-15)"),
        ("spp 16384", "'spp 16384': beats 16384 is out of range (0-16383)"),
        ("clock 0", "'clock 0': bpm 0 is out of range (1-999)"),
        ("clock fast", "'clock fast': bpm 'fast' is not a number"),
        ("omc 6", "'omc 6': octave 6 is out of range (3-5)"),
        ("syx 43 90", "'syx 43 90': '90' is not a SysEx data byte (00-7F)"),
        ("syx 43 1G", "'syx 43 1G': byte 2 '1G' is not a byte (hex 00-FF, or decimal with M: 127M)"),
        ("syx 100", "'syx 100': byte 1 '100' is not a byte (hex 00-FF, or decimal with M: 127M)"),
        ("syx", "'syx': missing bytes"),
        ("raw 90 3C", "'raw 90 3C': the last message is incomplete"),
        ("raw 90 3C 64 3E", "'raw 90 3C 64 3E': the last message is incomplete"),
        ("raw F0 01 02", "'raw F0 01 02': the last message is incomplete"),
        ("raw 3C 64", "'raw 3C 64': byte 1 (3C) is a data byte with no status byte before it"),
        ("raw F4", "'raw F4': byte 1 (F4) is not a defined MIDI status byte"),
        ("raw 01 F7", "'raw 01 F7': byte 1 (01) is a data byte with no status byte before it"),
        ("raw F7", "'raw F7': byte 1 (F7) ends a SysEx that was never started"),
        ("raw F0 01 90 3C 64", "'raw F0 01 90 3C 64': byte 3 (90) interrupts a SysEx before its F7"),
        ("blah", "'blah': unknown command; `aseqosc send --help` lists the commands"),
        ("on C4 100 100", "'100': unknown command; `aseqosc send --help` lists the commands"),
        (
            "dev KeyStep",
            "'dev KeyStep': aseqosc names the port with --to PORTSPEC; ports are listed by `aseqosc ports`"
        ),
        ("list", "'list': ports are listed by `aseqosc ports`"),
        ("file nowhere.txt", "'file nowhere.txt': cannot read 'nowhere.txt': No such file or directory"),
        ("syf nowhere.syx", "'syf nowhere.syx': cannot read 'nowhere.syx': No such file or directory"),
    ]

    @Test(arguments: cases)
    func mistakeIsReportedAsExpected(_ command: String, _ message: String) {
        #expect(script(command).errors.map(\.description) == [message])
    }

    @Test func thereAreAtLeastFifteenMistakesCovered() {
        #expect(Self.cases.count >= 15)
    }

    @Test func everyMistakeIsReportedNotJustTheFirst() {
        let parsed = script("on C4 cc 7 ch 2 pb 99999 blah 1 2 on C4 100 cc 200 1")
        #expect(
            parsed.errors.map(\.description) == [
                "'on C4': missing velocity",
                "'cc 7': missing value",
                "'pb 99999': value 99999 is out of range (0-16383)",
                "'blah': unknown command; `aseqosc send --help` lists the commands",
                "'cc 200 1': number 200 is out of range (0-127)",
            ])
    }
}

/// Commands from files and stdin: words across lines, quotes, comments, nested files.
@Suite struct SendFileSyntaxTests {
    @Test func wordsSplitAtBlanksAndLinesAndCommentsAreSkipped() {
        let text = """
            # a comment line
            ch 2   # the rest is a comment
            on C4
              100
            \tcc 7 100#not a comment inside a word
            on F#3 1 # F#3 keeps its sharp
            """
        let words = SendScript.words(in: text, source: "cmds.txt")
        #expect(
            words.map(\.text) == [
                "ch", "2", "on", "C4", "100", "cc", "7", "100#not", "a", "comment", "inside", "a", "word", "on",
                "F#3", "1",
            ])
        #expect(words.first?.location == "cmds.txt:2")
        #expect(words[4].location == "cmds.txt:4")
    }

    @Test func quotedWordsKeepTheirBlanks() {
        #expect(
            SendScript.words(in: #"file "my cmds.txt" on C4 1"#, source: "x").map(\.text) == [
                "file", "my cmds.txt", "on", "C4", "1",
            ])
    }

    @Test func fileCommandsAddToTheScriptAndKeepItsChannel() {
        var parsed = SendScript()
        parsed.add(arguments: ["ch", "3"])
        parsed.add(text: "# notes\non C4 100\n+00.250\noff C4\n", source: "stdin")
        #expect(parsed.errors == [])
        #expect(
            parsed.steps == [
                .event(.noteOn(channel: 2, note: 60, velocity: 100)), .delay(milliseconds: 250),
                .event(.noteOff(channel: 2, note: 60)),
            ])
        #expect(parsed.channel == 2)
    }

    @Test func errorsInAFileNameTheFileAndLine() {
        var parsed = SendScript()
        parsed.add(text: "on C4 100\n\ncc 7\n# fine\non C4\n  bad\n", source: "stdin")
        #expect(
            parsed.errors.map(\.description) == [
                "stdin:3: 'cc 7': missing value",
                "stdin:5: 'on C4 bad': velocity 'bad' is not a number",
            ])
    }

    @Test func theFileCommandReadsAnotherFileInPlace() {
        let files = ["setup.txt": Array("ch 10 # drums\ncc 7 90\n".utf8), "bad.txt": Array("pc 999\n".utf8)]
        #expect(wire(steps("on C4 1 file setup.txt on C1 100", files: files)) == "90 3C 01 B9 07 5A 99 18 64")
        #expect(
            script("file bad.txt", files: files).errors.map(\.description) == [
                "bad.txt:1: 'pc 999': number 999 is out of range (0-127)"
            ])
    }

    @Test func aFileIncludingItselfStops() {
        let errors = script("file loop.txt", files: ["loop.txt": Array("file loop.txt".utf8)]).errors.map(\.description)
        #expect(errors == ["loop.txt:1: 'file loop.txt': files include one another more than 8 deep"])
    }

    @Test func syfSendsEveryMessageInTheFile() {
        let files: [String: [UInt8]] = ["patch.syx": [0xF0, 0x43, 0x10, 0xF7, 0xF0, 0x7E, 0xF7]]
        #expect(wire(steps("syf patch.syx", files: files)) == "F0 43 10 F7 F0 7E F7")
    }
}

/// Bursts to a hardware port are spaced as the 31250 baud wire drains them.
@Suite struct WirePacerTests {
    @Test func aBurstGoesOutAtOnceThenTheWireSetsThePace() {
        var pacer = WirePacer(burst: 30)
        let start: UInt64 = 1_000_000_000
        // Ten 3-byte messages fill the burst without waiting.
        for _ in 0..<10 { #expect(pacer.time(toWrite: 3, now: start) == start) }
        // The eleventh waits until three bytes have left the wire.
        #expect(pacer.time(toWrite: 3, now: start) == start + 3 * WirePacer.nanosecondsPerByte)
        #expect(pacer.time(toWrite: 3, now: start) == start + 6 * WirePacer.nanosecondsPerByte)
    }

    @Test func anIdleWireGivesTheWholeBurstBack() {
        var pacer = WirePacer(burst: 30)
        _ = pacer.time(toWrite: 30, now: 0)
        let later: UInt64 = 30 * WirePacer.nanosecondsPerByte
        #expect(pacer.time(toWrite: 30, now: later) == later)
    }

    @Test func aMessageLargerThanTheBurstWaitsForAnEmptyBuffer() {
        var pacer = WirePacer(burst: 10)
        _ = pacer.time(toWrite: 5, now: 0)
        #expect(pacer.time(toWrite: 20, now: 0) == 5 * WirePacer.nanosecondsPerByte)
    }
}
