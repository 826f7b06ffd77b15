/// The type tag characters this module reads and writes, as UTF-8 bytes.
///
/// OSC 1.0 gives a decoder no way to skip an argument whose tag it does not know, so
/// anything outside this list is an error rather than something to pass over.
///
/// Inlinable constants rather than stored `let`s, which other modules would reach through an
/// accessor call on every use (the hot path switches over them per argument).
package enum OSCTypeTag {
    @inlinable public static var int32: UInt8 { UInt8(ascii: "i") }
    @inlinable public static var float32: UInt8 { UInt8(ascii: "f") }
    @inlinable public static var string: UInt8 { UInt8(ascii: "s") }
    @inlinable public static var blob: UInt8 { UInt8(ascii: "b") }
    @inlinable public static var int64: UInt8 { UInt8(ascii: "h") }
    @inlinable public static var double: UInt8 { UInt8(ascii: "d") }
    @inlinable public static var timeTag: UInt8 { UInt8(ascii: "t") }
    @inlinable public static var `true`: UInt8 { UInt8(ascii: "T") }
    @inlinable public static var `false`: UInt8 { UInt8(ascii: "F") }
    @inlinable public static var `nil`: UInt8 { UInt8(ascii: "N") }
    @inlinable public static var impulse: UInt8 { UInt8(ascii: "I") }
    @inlinable public static var midi: UInt8 { UInt8(ascii: "m") }

    /// Whether `tag` is one this module understands.
    @inlinable
    public static func isKnown(_ tag: UInt8) -> Bool {
        switch tag {
        case int32, float32, string, blob, int64, double, timeTag, `true`, `false`, `nil`, impulse,
            midi:
            true
        default:
            false
        }
    }
}
