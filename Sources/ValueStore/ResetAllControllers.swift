/// What Reset All Controllers (CC 121) does to a channel's controllers, after the MIDI
/// Association's RP-015 ("Response to Reset All Controllers"), as the receiver on the other end
/// is expected to do it, so that the store keeps showing what the receiver now has.
///
/// RP-015 resets modulation (1) to 0, expression (11) to 127, the pedals (64-67) to 0, the
/// RPN/NRPN selection to null, pitch bend to centre, channel pressure and every note's poly
/// pressure to 0; it leaves bank select (0, 32), volume (7), pan (10), the sound controllers
/// (70-79), the effects depths (91-95), the channel mode messages (120-127), the program and
/// the RPN and NRPN values alone. It does not name the other controllers (breath, foot, general
/// purpose, ...): they go to 0 here, as in FluidSynth, since most receivers treat an unnamed
/// controller like modulation. The LSB of a pair (32-63) follows its MSB.
enum ResetAllControllers {
    /// Whether Reset All Controllers sets `controller` (0...127) back to its default.
    static func resets(_ controller: UInt8) -> Bool {
        let msb = controller >= 32 && controller < 64 ? controller - 32 : controller
        switch msb {
        case 0, 7, 10, 70...79, 91...95, 120...127: return false
        default: return true
        }
    }

    /// The 7-bit value `controller` goes back to: 127 for expression's MSB, 0 for the others
    /// (expression's LSB too, so the 14-bit expression is 127 << 7).
    static func defaultValue(of controller: UInt8) -> Int32 { controller == 11 ? 127 : 0 }

    /// The 14-bit value the pair `controller`/`controller + 32` (0...31) goes back to.
    static func defaultValue14(of controller: UInt8) -> Int32 { controller == 11 ? 127 << 7 : 0 }

    /// Pitch bend's centre, as stored (the signed bend plus 8192).
    static let pitchBendCentre: Int32 = 8192
}
