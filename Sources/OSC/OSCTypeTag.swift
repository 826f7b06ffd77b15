/// The type tag characters this module reads and writes, as UTF-8 bytes.
///
/// OSC 1.0 gives a decoder no way to skip an argument whose tag it does not know, so
/// anything outside this list is an error rather than something to pass over.
///
/// Inlinable constants rather than stored `let`s, which other modules would reach through an
/// accessor call on every use (the hot path switches over them per argument).
package enum OSCTypeTag {
    @inlinable package static var int32: UInt8 { UInt8(ascii: "i") }
    @inlinable package static var float32: UInt8 { UInt8(ascii: "f") }
    @inlinable package static var string: UInt8 { UInt8(ascii: "s") }
    @inlinable package static var blob: UInt8 { UInt8(ascii: "b") }
    @inlinable package static var int64: UInt8 { UInt8(ascii: "h") }
    @inlinable package static var double: UInt8 { UInt8(ascii: "d") }
    @inlinable package static var timeTag: UInt8 { UInt8(ascii: "t") }
    @inlinable package static var `true`: UInt8 { UInt8(ascii: "T") }
    @inlinable package static var `false`: UInt8 { UInt8(ascii: "F") }
    @inlinable package static var `nil`: UInt8 { UInt8(ascii: "N") }
    @inlinable package static var impulse: UInt8 { UInt8(ascii: "I") }
    @inlinable package static var midi: UInt8 { UInt8(ascii: "m") }

    /// Whether `tag` is one this module understands.
    @inlinable
    package static func isKnown(_ tag: UInt8) -> Bool {
        switch tag {
        case int32, float32, string, blob, int64, double, timeTag, `true`, `false`, `nil`, impulse,
            midi:
            true
        default:
            false
        }
    }
}
