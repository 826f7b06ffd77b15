/// Note names as people type them (`C4`, `F#3`, `Bb2`, `60`), as SendMIDI reads them.
///
/// The octave of middle C (note 60) differs between makers, so it is a parameter: 4 by default
/// (C4 = 60, so names run `C-1`...`G9`), 3 for the Yamaha convention (C3 = 60, `C-2`...`G8`).
package enum NoteName {
    /// The default octave number of middle C: C4 = 60.
    package static let standardMiddleCOctave = 4
    /// The Yamaha octave number of middle C: C3 = 60.
    package static let yamahaMiddleCOctave = 3

    private static let sharpNames = [
        "C", "C#", "D", "D#", "E", "F", "F#", "G", "G#", "A", "A#", "B",
    ]

    /// The note number of `text`, or `nil` when it is not a note name or lies outside 0...127.
    ///
    /// Accepts a letter in either case, at most one sharp (`#`, `♯`) or flat (`b`, `♭`) and a
    /// signed octave (`C-1`, `f#3`, `Bb2`), or a plain number (`60`).
    package static func parse(
        _ text: some StringProtocol, middleCOctave: Int = standardMiddleCOctave
    ) -> UInt8? {
        let scalars = Array(text.unicodeScalars)
        guard let first = scalars.first else { return nil }
        if digit(first) != nil {
            guard scalars.count <= 3, let number = Int(String(text)), number <= 127 else {
                return nil
            }
            return UInt8(number)
        }
        guard var pitch = pitchClass(first) else { return nil }
        var i = 1
        if i < scalars.count {
            switch scalars[i] {
            case "#", "♯":
                pitch += 1
                i += 1
            case "b", "♭":
                pitch -= 1
                i += 1
            default: break
            }
        }
        let isNegative = i < scalars.count && scalars[i] == "-"
        if isNegative { i += 1 }
        // Two digits at most: no real octave needs more, and it keeps the arithmetic small.
        let digits = scalars.count - i
        guard digits == 1 || digits == 2 else { return nil }
        var octave = 0
        while i < scalars.count {
            guard let digit = digit(scalars[i]) else { return nil }
            octave = octave * 10 + digit
            i += 1
        }
        if isNegative { octave = -octave }
        let note = (octave - middleCOctave + 5) * 12 + pitch
        guard note >= 0 && note <= 127 else { return nil }
        return UInt8(note)
    }

    /// The name of `note`, spelt with sharps: `format(60)` is `"C4"`, `format(61)` is `"C#4"`.
    package static func format(_ note: UInt8, middleCOctave: Int = standardMiddleCOctave) -> String {
        let octave = Int(note) / 12 - 5 + middleCOctave
        return sharpNames[Int(note) % 12] + String(octave)
    }

    private static func digit(_ scalar: Unicode.Scalar) -> Int? {
        scalar >= "0" && scalar <= "9" ? Int(scalar.value - 48) : nil
    }

    private static func pitchClass(_ letter: Unicode.Scalar) -> Int? {
        switch letter {
        case "C", "c": 0
        case "D", "d": 2
        case "E", "e": 4
        case "F", "f": 5
        case "G", "g": 7
        case "A", "a": 9
        case "B", "b": 11
        default: nil
        }
    }
}
