import MIDI
import Testing

@Suite struct NoteNameTests {
    static let standardNames: [(String, UInt8)] = [
        ("C-1", 0), ("C#-1", 1), ("Db-1", 1), ("A0", 21), ("Bb2", 46), ("F#3", 54), ("C4", 60),
        ("c4", 60), ("A4", 69), ("bb2", 46), ("f#3", 54), ("E#4", 65), ("Cb4", 59), ("F♯3", 54),
        ("B♭2", 46), ("G9", 127), ("60", 60), ("0", 0), ("127", 127),
    ]

    static let yamahaNames: [(String, UInt8)] = [
        ("C-2", 0), ("C3", 60), ("A3", 69), ("F#2", 54), ("G8", 127),
    ]

    static let formatted: [(UInt8, String, String)] = [
        (0, "C-1", "C-2"), (1, "C#-1", "C#-2"), (59, "B3", "B2"), (60, "C4", "C3"),
        (61, "C#4", "C#3"), (69, "A4", "A3"), (127, "G9", "G8"),
    ]

    static let rejected = [
        "", "H4", "C", "C#", "#4", "4C", "C4x", "C 4", "C##4", "C10", "G#9", "A9", "Cb-1", "C-2",
        "128", "1000", "-1", "C--1", "+60", "60.0",
    ]

    @Test(arguments: standardNames)
    func namesParseWithMiddleCAsC4(_ name: String, _ note: UInt8) {
        #expect(NoteName.parse(name) == note)
    }

    @Test(arguments: yamahaNames)
    func namesParseWithMiddleCAsC3(_ name: String, _ note: UInt8) {
        #expect(NoteName.parse(name, middleCOctave: NoteName.yamahaMiddleCOctave) == note)
    }

    @Test(arguments: formatted)
    func notesFormatInBothConventions(_ note: UInt8, _ standard: String, _ yamaha: String) {
        #expect(NoteName.format(note) == standard)
        #expect(NoteName.format(note, middleCOctave: NoteName.yamahaMiddleCOctave) == yamaha)
    }

    @Test(arguments: rejected)
    func malformedOrOutOfRangeNamesAreRejected(_ name: String) {
        #expect(NoteName.parse(name) == nil)
    }

    @Test func yamahaRejectsNamesPastG8() {
        #expect(NoteName.parse("G#8", middleCOctave: NoteName.yamahaMiddleCOctave) == nil)
        #expect(NoteName.parse("B-3", middleCOctave: NoteName.yamahaMiddleCOctave) == nil)
    }

    @Test(arguments: [NoteName.standardMiddleCOctave, NoteName.yamahaMiddleCOctave])
    func everyNoteFormatsToANameThatParsesBack(_ middleCOctave: Int) {
        var mismatches: [UInt8] = []
        var note: UInt8 = 0
        while note < 128 {
            let name = NoteName.format(note, middleCOctave: middleCOctave)
            if NoteName.parse(name, middleCOctave: middleCOctave) != note {
                mismatches.append(note)
            }
            note += 1
        }
        #expect(mismatches.isEmpty)
    }
}
