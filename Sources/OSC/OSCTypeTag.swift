/// The type tag characters this module reads and writes, as UTF-8 bytes.
///
/// OSC 1.0 gives a decoder no way to skip an argument whose tag it does not know, so
/// anything outside this list is an error rather than something to pass over.
public enum OSCTypeTag {
    public static let int32 = UInt8(ascii: "i")
    public static let float32 = UInt8(ascii: "f")
    public static let string = UInt8(ascii: "s")
    public static let blob = UInt8(ascii: "b")
    public static let int64 = UInt8(ascii: "h")
    public static let double = UInt8(ascii: "d")
    public static let timeTag = UInt8(ascii: "t")
    public static let `true` = UInt8(ascii: "T")
    public static let `false` = UInt8(ascii: "F")
    public static let `nil` = UInt8(ascii: "N")
    public static let impulse = UInt8(ascii: "I")
    public static let midi = UInt8(ascii: "m")

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
